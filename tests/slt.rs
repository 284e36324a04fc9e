//! Runs every `tests/slt/**/*.slt` file, each in a fresh session.
//!
//! A file is a sequence of records separated by blank lines:
//!
//! ```text
//! statement ok
//! CREATE VIEW v AS SELECT 1 AS a;
//!
//! statement error <text the error must contain>
//! SELECT nosuch;
//!
//! query
//! DESC v;
//! ----
//! <the exact output the client prints>
//!
//! file ${TMP}/dir
//! ----
//! <the exact contents of the directory's files, concatenated in name order; those of each
//!  subdirectory after a line `-- <subdirectory>/`>
//! ```
//!
//! The expected output of `query` ends at the first blank line; that of `query until end`
//! (for output with blank lines, such as EXPLAIN's) at a line `end`. `query rowsort` compares
//! a table's rows (the `|` lines after its header) as a sorted list: for streaming results
//! whose order Flink leaves open (windows firing together, parallel instances).
//!
//! `${TMP}` stands for a fresh directory per file. A `file` record also fails when the
//! directory holds hidden (in-progress) files. Lines starting with `#` outside records are
//! comments. `SLT=<text>` in the environment runs only the files whose path contains it.

use std::path::{Path, PathBuf};

use tideline::client::Session;
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

fn slt_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/slt exists")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            slt_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "slt") {
            out.push(path);
        }
    }
}

/// Runs `sql` (one or more statements), returning printed output or the first error.
fn run(session: &mut Session, sql: &str) -> Result<String, String> {
    let mut out = Vec::new();
    let (stmts, _) = split_statements(sql);
    for stmt in &stmts {
        let parsed = parse_statement(stmt).map_err(|e| e.render(sql))?;
        tideline::client::execute(session, &parsed, &mut out)
            .map_err(|e| tideline::client::render_error(&e, sql))?;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The contents of the files in `dir`, in name order, or an error naming hidden files. Files
/// in subdirectories (a partitioned table's `k=v/`) follow those of `dir`, each directory's
/// under a line `-- <directory below dir>/`.
fn directory_contents(dir: &Path) -> Result<String, String> {
    fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) =
            entries.into_iter().partition(|p| p.is_dir());
        for path in files.iter().chain(&dirs) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('.') {
                let shown = path.strip_prefix(root).unwrap_or(path);
                return Err(format!("hidden file left behind: {}", shown.display()));
            }
        }
        out.extend(files);
        for d in dirs {
            collect(root, &d, out)?;
        }
        Ok(())
    }
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    let mut all = String::new();
    let mut current = PathBuf::new();
    for file in files {
        let relative = file.strip_prefix(dir).unwrap_or(&file);
        let parent = relative.parent().unwrap_or(Path::new("")).to_path_buf();
        if parent != current {
            all.push_str(&format!("-- {}/\n", parent.display()));
            current = parent;
        }
        all.push_str(&std::fs::read_to_string(&file).map_err(|e| e.to_string())?);
    }
    Ok(all)
}

/// Sorts the rows of each table in `lines` in place: the `|` lines after the table's first
/// (its header), up to the line that ends the table.
fn sort_rows(lines: &mut [&str]) {
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('|') {
            i += 1;
            continue;
        }
        // `i` is a header; its rows start after the border below it.
        let start = i + 2;
        let mut end = start;
        while end < lines.len() && lines[end].starts_with('|') {
            end += 1;
        }
        if start < end {
            lines[start..end].sort_unstable();
        }
        i = end.max(i + 1);
    }
}

fn run_file(path: &Path) -> Vec<String> {
    let tmp = std::env::temp_dir().join(format!(
        "tideline-slt-{}-{}",
        std::process::id(),
        path.file_stem().unwrap_or_default().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let text = std::fs::read_to_string(path)
        .expect("readable slt file")
        .replace("${TMP}", &tmp.display().to_string());
    let mut session = Session::new(tideline::clock::ManualClock::new(1_600_000_000_000_000_000));
    let mut failures = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.is_empty() || line.starts_with('#') {
            i += 1;
            continue;
        }
        let start = i + 1;
        let header = line.to_string();
        i += 1;
        let mut sql = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i] != "----" {
            sql.push(lines[i]);
            i += 1;
        }
        let sql = sql.join("\n");
        let mut expected = Vec::new();
        let until_end = header == "query until end";
        let rowsort = header == "query rowsort";
        if i < lines.len() && lines[i] == "----" {
            i += 1;
            while i < lines.len()
                && (if until_end {
                    lines[i] != "end"
                } else {
                    !lines[i].is_empty()
                })
            {
                expected.push(lines[i]);
                i += 1;
            }
            if until_end {
                i += 1;
            }
        }
        let at = format!("{}:{start}", path.display());
        if let Some(dir) = header.strip_prefix("file ") {
            let actual = directory_contents(Path::new(dir.trim()));
            match actual {
                Ok(actual) if actual.lines().collect::<Vec<_>>() == expected => {}
                Ok(actual) => failures.push(format!(
                    "{at}: files differ\n--- expected\n{}\n--- actual\n{actual}",
                    expected.join("\n")
                )),
                Err(e) => failures.push(format!("{at}: {e}")),
            }
            continue;
        }
        let result = run(&mut session, &sql);
        if header == "statement ok" {
            if let Err(e) = result {
                failures.push(format!("{at}: expected success, got {e}"));
            }
        } else if let Some(needle) = header.strip_prefix("statement error") {
            match result {
                Ok(_) => failures.push(format!("{at}: expected an error")),
                Err(e) if !e.contains(needle.trim()) => failures.push(format!(
                    "{at}: error does not contain '{}':\n{e}",
                    needle.trim()
                )),
                Err(_) => {}
            }
        } else if header == "query" || until_end || rowsort {
            match result {
                Ok(actual) => {
                    let mut actual: Vec<&str> = actual.lines().collect();
                    if rowsort {
                        sort_rows(&mut actual);
                        sort_rows(&mut expected);
                    }
                    if actual != expected {
                        failures.push(format!(
                            "{at}: output differs\n--- expected\n{}\n--- actual\n{}",
                            expected.join("\n"),
                            actual.join("\n")
                        ));
                    }
                }
                Err(e) => failures.push(format!("{at}: {e}")),
            }
        } else {
            failures.push(format!("{at}: unknown record '{header}'"));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    failures
}

#[test]
fn sqllogictests() {
    let mut files = Vec::new();
    slt_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt"),
        &mut files,
    );
    assert!(!files.is_empty(), "no .slt files found");
    // `SLT=window` runs only the files whose path contains "window" (a quick loop while
    // working on one feature; CI runs them all).
    if let Ok(only) = std::env::var("SLT") {
        files.retain(|f| f.to_string_lossy().contains(&only));
    }
    let mut failures = Vec::new();
    for f in &files {
        failures.extend(run_file(f));
    }
    println!("{} slt files", files.len());
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

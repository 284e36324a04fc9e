//! The `tideline` binary's command line, run as a user runs it: scripts, arguments and their
//! errors (exit codes, messages on stderr, never a panic).

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output};

fn tideline(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tideline"))
        .args(args)
        .env("TZ", "UTC")
        .output()
        .expect("the binary runs")
}

fn script(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tideline-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_second_script_is_refused_not_dropped() {
    let a = script("a.sql", b"SELECT 'a' AS x;\n");
    let b = script("b.sql", b"SELECT 'b' AS x;\n");
    let out = tideline(&["-f".as_ref(), a.as_os_str(), "-f".as_ref(), b.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("only one script"));
    assert!(out.stdout.is_empty());
    let out = tideline(&[
        "-f".as_ref(),
        a.as_os_str(),
        "-e".as_ref(),
        "SELECT 1;".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn version_is_printed() {
    let out = tideline(&["--version".as_ref()]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout).trim(),
        format!("Tideline {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn invalid_utf8_in_an_argument_is_an_error_with_its_offset() {
    let sql = std::ffi::OsStr::from_bytes(b"SELECT '\xff';");
    let out = tideline(&["-e".as_ref(), sql]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("not valid UTF-8: at line 1, column 9 (byte 8)"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn invalid_utf8_in_a_script_names_line_and_column() {
    let path = script("bad.sql", b"SELECT 1;\nSELECT '\xc3\x28';\n");
    let out = tideline(&["-f".as_ref(), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("invalid UTF-8 at line 2, column 9 (byte 18)"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing runs from a script that cannot be read"
    );
}

#[test]
fn a_byte_order_mark_starts_a_script_like_nothing() {
    let path = script("bom.sql", b"\xEF\xBB\xBFSELECT 'ok' AS x;\n");
    let out = tideline(&["-f".as_ref(), path.as_os_str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ok"));
}

#[test]
fn ctrl_c_ends_a_script_query_cleanly_with_a_non_zero_code() {
    use std::io::Read;
    let path = script(
        "endless.sql",
        b"CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');\n\
          SELECT a FROM g;\nSELECT 'not reached' AS x;\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_tideline"))
        .args(["-f".as_ref(), path.as_os_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first rows, then interrupt as a terminal's Ctrl-C does.
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !text(&seen).contains("| +I |") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the query printed no rows: {}", text(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    stdout.read_to_end(&mut seen).unwrap();
    let status = child.wait().unwrap();
    let out = text(&seen);
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(
        out.contains("Query terminated, received a total of "),
        "{out}"
    );
    assert!(!out.contains("not reached"), "{out}");
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
}

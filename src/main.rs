//! `tideline`: the SQL client binary.
//!
//!     tideline                 interactive, "Tideline SQL>" prompt
//!     tideline -f job.sql      run a script and exit (non-zero on the first error)
//!     tideline -i init.sql     run an init script, then the REPL (or -f / -e)
//!     tideline -e "SELECT 1"   run one statement

use std::io::Write;
use std::process::ExitCode;

use tideline::client::{Session, run_script};

const USAGE: &str = "usage: tideline [-i init.sql] [-f script.sql | -e 'statement;']\n\
  -f FILE   run the statements of FILE and exit\n\
  -i FILE   run FILE first (e.g. DDL), then continue\n\
  -e SQL    run SQL and exit\n\
  -h        this help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut init = Vec::new();
    let mut script: Option<(String, String)> = None;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1);
        match (args[i].as_str(), value) {
            ("-h" | "--help", _) => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            ("-i" | "--init", Some(file)) => init.push(file.clone()),
            ("-f" | "--file", Some(file)) => match std::fs::read_to_string(file) {
                Ok(text) => script = Some((file.clone(), text)),
                Err(e) => {
                    eprintln!("[ERROR] cannot read {file}: {e}");
                    return ExitCode::FAILURE;
                }
            },
            ("-e" | "--execute", Some(sql)) => script = Some(("-e".into(), sql.clone())),
            (other, _) => {
                eprintln!("[ERROR] unknown or incomplete argument '{other}'\n{USAGE}");
                return ExitCode::from(2);
            }
        }
        i += 2;
    }
    let mut session = Session::default();
    let stdout = std::io::stdout();
    for file in &init {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("[ERROR] cannot read {file}: {e}");
                return ExitCode::FAILURE;
            }
        };
        if !run_script(&mut session, &text, &mut stdout.lock()) {
            return ExitCode::FAILURE;
        }
    }
    match script {
        Some((_, text)) => {
            if run_script(&mut session, &text, &mut stdout.lock()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        None => repl(&mut session),
    }
}

fn repl(session: &mut Session) -> ExitCode {
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("[ERROR] cannot start the terminal: {e}");
            return ExitCode::FAILURE;
        }
    };
    let history =
        std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".tideline_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!(
        "Tideline: Flink SQL in one binary. Statements end with ';'. Type QUIT; or Ctrl-D to leave."
    );
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            "Tideline SQL> "
        } else {
            "> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                buffer.push_str(&line);
                buffer.push('\n');
                let (_, complete) = tideline::sql::split::split_statements(&buffer);
                if !complete {
                    continue;
                }
                let text = std::mem::take(&mut buffer);
                let trimmed = text.trim().trim_end_matches(';').trim();
                if trimmed.is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(text.trim());
                if trimmed.eq_ignore_ascii_case("quit") || trimmed.eq_ignore_ascii_case("exit") {
                    break;
                }
                run_script(session, &text, &mut std::io::stdout().lock());
                let _ = std::io::stdout().flush();
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buffer.clear(),
            Err(_) => break,
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    println!("Goodbye!");
    ExitCode::SUCCESS
}

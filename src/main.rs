//! `tideline`: the SQL client binary.
//!
//!     tideline                 interactive, "Tideline SQL>" prompt
//!     tideline -f job.sql      run a script and exit (non-zero on the first error)
//!     tideline -i init.sql     run an init script, then the REPL (or -f / -e)
//!     tideline -e "SELECT 1"   run one statement
//!     tideline --version       print the version
//!     tideline -f job.sql --resume   restart its INSERTs from their newest checkpoints

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tideline::client::background::{self, Emit};
use tideline::client::{Session, decode_script, run_script};

/// mimalloc for batches, the C library for large state (runtime::allocator).
#[global_allocator]
static ALLOCATOR: tideline::runtime::allocator::Allocator = tideline::runtime::allocator::Allocator;

const USAGE: &str = "usage: tideline [-i init.sql] [-f script.sql | -e 'statement;'] [--resume]\n\
  -f FILE   run the statements of FILE and exit\n\
  -i FILE   run FILE first (e.g. DDL), then continue\n\
  -e SQL    run SQL and exit\n\
  --resume  INSERTs with checkpoints go on from the newest checkpoint of their job name\n\
  -h        this help\n\
  --version the version";

/// What the command line asks for.
enum Command {
    Run {
        init: Vec<String>,
        /// `-f FILE` or `-e SQL`: at most one (a second would silently replace the first).
        script: Option<(String, String)>,
        resume: bool,
    },
    Exit(ExitCode),
}

fn parse_args(args: Vec<std::ffi::OsString>) -> Command {
    let mut init = Vec::new();
    let mut script: Option<(String, String)> = None;
    let mut resume = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = match text_argument(arg, "an argument") {
            Ok(a) => a,
            Err(e) => return fail(&e, 2),
        };
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Command::Exit(ExitCode::SUCCESS);
            }
            "--resume" => resume = true,
            "-v" | "--version" => {
                println!("Tideline {}", env!("CARGO_PKG_VERSION"));
                return Command::Exit(ExitCode::SUCCESS);
            }
            "-i" | "--init" | "-f" | "--file" | "-e" | "--execute" => {
                let Some(value) = args.next() else {
                    return fail(&format!("option '{arg}' needs a value\n{USAGE}"), 2);
                };
                let is_init = matches!(arg.as_str(), "-i" | "--init");
                if !is_init && script.is_some() {
                    return fail(
                        &format!(
                            "only one script may be given: -f and -e take one value, once\n{USAGE}"
                        ),
                        2,
                    );
                }
                if matches!(arg.as_str(), "-e" | "--execute") {
                    match text_argument(value, "the statement of -e") {
                        Ok(sql) => script = Some(("-e".into(), sql)),
                        Err(e) => return fail(&e, 2),
                    }
                    continue;
                }
                let file = match text_argument(value, &format!("the file name of '{arg}'")) {
                    Ok(f) => f,
                    Err(e) => return fail(&e, 2),
                };
                if is_init {
                    init.push(file);
                } else {
                    match read_script(&file) {
                        Ok(text) => script = Some((file, text)),
                        Err(e) => return fail(&e, 1),
                    }
                }
            }
            other => return fail(&format!("unknown argument '{other}'\n{USAGE}"), 2),
        }
    }
    Command::Run {
        init,
        script,
        resume,
    }
}

fn fail(message: &str, code: u8) -> Command {
    eprintln!("[ERROR] {message}");
    Command::Exit(ExitCode::from(code))
}

/// An argument as text; invalid UTF-8 is named with the position of the first bad byte.
fn text_argument(arg: std::ffi::OsString, what: &str) -> Result<String, String> {
    use std::os::unix::ffi::OsStringExt;
    decode_script(arg.into_vec()).map_err(|e| format!("{what} is not valid UTF-8: {e}"))
}

fn read_script(file: &str) -> Result<String, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    decode_script(bytes).map_err(|e| format!("cannot read {file}: invalid UTF-8 {e}"))
}

fn main() -> ExitCode {
    let (init, script, resume) = match parse_args(std::env::args_os().skip(1).collect()) {
        Command::Run {
            init,
            script,
            resume,
        } => (init, script, resume),
        Command::Exit(code) => return code,
    };
    let mut session = Session::default();
    session.resume = resume;
    handle_interrupts(session.cancel.clone());
    // INSERTs run in the background (Flink's `table.dml-sync` false); a script's
    // statements see what its earlier INSERTs wrote, and it waits for its jobs at its end.
    session.background = Some(background::background(
        background::stdout(),
        script.is_some(),
    ));
    // Rows of background jobs and of queries go to stdout a call at a time, not under one
    // lock held through a statement.
    let mut stdout = std::io::stdout();
    for file in &init {
        let text = match read_script(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("[ERROR] {e}");
                return ExitCode::FAILURE;
            }
        };
        if !run_script(&mut session, &text, &mut stdout) {
            return finish_script(&mut session, false);
        }
    }
    match script {
        Some((_, text)) => {
            let succeeded = run_script(&mut session, &text, &mut stdout);
            finish_script(&mut session, succeeded)
        }
        None => repl(&mut session),
    }
}

/// A script's end: it waits for the jobs it started (Ctrl-C or SIGTERM stops them, each
/// with a final checkpoint when it takes them); non-zero if a statement or a job failed.
fn finish_script(session: &mut Session, succeeded: bool) -> ExitCode {
    let failed_jobs = session.wait_for_jobs();
    let _ = std::io::stdout().flush();
    if session.cancel.load(Ordering::Relaxed) {
        ExitCode::from(130)
    } else if !succeeded || !failed_jobs.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Ctrl-C cancels the running statement (its job ends, the REPL keeps its prompt, tables and
/// settings; a script stops). At the REPL's prompt the line editor reads Ctrl-C as a key and
/// no signal arrives. A second Ctrl-C before the first was honoured leaves at once.
fn handle_interrupts(cancel: Arc<AtomicBool>) {
    let installed = ctrlc::set_handler(move || {
        if cancel.swap(true, Ordering::Relaxed) {
            let _ = std::io::stdout().flush();
            std::process::exit(130);
        }
    });
    if let Err(e) = installed {
        eprintln!("[WARNING] Ctrl-C will end the client: {e}");
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
    // Background jobs print above the prompt.
    match editor.create_external_printer() {
        Ok(printer) => {
            let printer = std::sync::Mutex::new(printer);
            let emit: Emit = Arc::new(move |bytes| {
                use rustyline::ExternalPrinter;
                let text = String::from_utf8_lossy(bytes).into_owned();
                let mut printer = printer
                    .lock()
                    .map_err(|_| std::io::Error::other("the terminal's printer failed"))?;
                printer.print(text).map_err(std::io::Error::other)
            });
            session.background = Some(background::background(emit, false));
        }
        Err(e) => eprintln!("[WARNING] background jobs print straight to the terminal: {e}"),
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
                // A Ctrl-C of an earlier statement is spent.
                session.cancel.store(false, Ordering::Relaxed);
                run_script(session, &text, &mut std::io::stdout());
                let _ = std::io::stdout().flush();
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buffer.clear(),
            Err(_) => break,
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    if session.has_running_jobs() {
        println!("[INFO] Stopping the session's running jobs...");
        session.stop_all_jobs();
    }
    println!("Goodbye!");
    ExitCode::SUCCESS
}

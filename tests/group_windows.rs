//! Group windows where a process, a socket or a clock is involved: the late-row count the
//! binary prints on stderr, idle timeouts on a multi-split source whose second split (a
//! socket) stays silent, and processing-time windows firing on the session's clock. Window
//! results over files are in tests/slt/windows/.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use tideline::client::Session;
use tideline::clock::ManualClock;
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory for one test's files.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tideline-gw-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Seed 000's TUMBLE over its TIMESTAMP rowtime, run by the binary: Erin (20:08:00) comes
/// after the watermark passed 20:10 and is dropped. Flink 2.3 prints the same three rows
/// (tests/slt/windows/seed000_event_time.slt); the warning is ours, Flink drops silently.
#[test]
fn the_binary_counts_late_rows_on_stderr_and_prints_flinks_rows() {
    let dir = temp_dir("late");
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::write(
        dir.join("in/part-0.csv"),
        "Alice,click,2020-04-15 20:01:00\nBob,view,2020-04-15 20:03:30\n\
         Alice,buy,2020-04-15 20:07:10\nCarol,click,2020-04-15 20:10:03\n\
         Dave,view,2020-04-15 20:09:59\nCarol,buy,2020-04-15 20:12:00\n\
         Erin,click,2020-04-15 20:08:00\nBob,click,2020-04-15 20:14:59\n\
         Alice,view,2020-04-15 20:25:00\n",
    )
    .unwrap();
    let script = dir.join("late.sql");
    std::fs::write(
        &script,
        format!(
            "CREATE TABLE user_actions (user_name STRING, data STRING, \
             user_action_time TIMESTAMP(3), \
             WATERMARK FOR user_action_time AS user_action_time - INTERVAL '5' SECOND) \
             WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
             SELECT TUMBLE_START(user_action_time, INTERVAL '10' MINUTE), \
             COUNT(DISTINCT user_name) FROM user_actions \
             GROUP BY TUMBLE(user_action_time, INTERVAL '10' MINUTE);\n",
            dir.join("in").display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tideline"))
        .arg("-f")
        .arg(&script)
        .env("TZ", "UTC")
        .output()
        .expect("the binary runs");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let rows = "\
+----+-------------------------+----------------------+
| op |                  EXPR$0 |               EXPR$1 |
+----+-------------------------+----------------------+
| +I | 2020-04-15 20:00:00.000 |                    3 |
| +I | 2020-04-15 20:10:00.000 |                    2 |
| +I | 2020-04-15 20:20:00.000 |                    1 |
+----+-------------------------+----------------------+
Received a total of 3 rows
";
    assert!(stdout.contains(rows), "{stdout}");
    assert!(
        stderr
            .lines()
            .any(|l| l == "[WARNING] 1 late row(s) dropped by GroupWindowAggregate"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the session prints, as it prints it.
struct Forward(Sender<String>);

impl Write for Forward {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.send(String::from_utf8_lossy(buf).into_owned());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A script running in a session on its own thread: what it prints, its result when it
/// ends, and the session's cancel flag.
struct Running {
    out: Receiver<String>,
    seen: String,
    done: Receiver<Result<(), String>>,
    cancel: Arc<AtomicBool>,
}

fn start_script(mut session: Session, script: String) -> Running {
    let cancel = session.cancel.clone();
    let (out_tx, out) = channel();
    let (done_tx, done) = channel();
    std::thread::spawn(move || {
        let mut sink = Forward(out_tx);
        let (stmts, _) = split_statements(&script);
        let mut result = Ok(());
        for stmt in &stmts {
            let parsed = parse_statement(stmt).unwrap();
            if let Err(e) = tideline::client::execute(&mut session, &parsed, &mut sink) {
                result = Err(tideline::client::render_error(&e, &script));
                break;
            }
        }
        let _ = done_tx.send(result);
    });
    Running {
        out,
        seen: String::new(),
        done,
        cancel,
    }
}

impl Running {
    /// Waits until the output contains `text`, for at most `limit`; whether it did.
    fn wait_for(&mut self, text: &str, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while !self.seen.contains(text) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self.out.recv_timeout(left) {
                Ok(s) => self.seen.push_str(&s),
                Err(_) => return false,
            }
        }
        true
    }

    /// Cancels the job (the client's Ctrl-C) and waits for it to end.
    fn cancel(self) -> String {
        self.cancel.store(true, Ordering::Relaxed);
        let result = self
            .done
            .recv_timeout(Duration::from_secs(20))
            .expect("a cancelled job ends");
        assert!(result.is_err(), "a cancelled job reports it");
        self.seen
    }
}

/// Listens on a fresh port; the session connects when its job starts.
fn listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn accept(listener: &TcpListener) -> TcpStream {
    listener.accept().unwrap().0
}

/// Two socket tables under a UNION ALL feeding a 1-second TUMBLE; `settings` go before, the
/// tables get `options`, the second table is read with `hint`. Rows go to the first socket
/// only: its watermark passes the window's end, the second split never has a row.
fn idle_job(settings: &str, options: &str, hint: &str) -> (Running, TcpStream, TcpStream) {
    let (l1, p1) = listener();
    let (l2, p2) = listener();
    let table = |name: &str, port: u16| {
        format!(
            "CREATE TABLE {name} (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH \
             ('connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '{port}', \
             'format' = 'csv'{options});\n"
        )
    };
    let script = format!(
        "{settings}{}{}SELECT TUMBLE_START(ts, INTERVAL '1' SECOND) AS ws, COUNT(*) AS c \
         FROM (SELECT * FROM s1 UNION ALL SELECT * FROM s2 {hint}) \
         GROUP BY TUMBLE(ts, INTERVAL '1' SECOND);",
        table("s1", p1),
        table("s2", p2)
    );
    let running = start_script(Session::default(), script);
    let mut first = accept(&l1);
    let second = accept(&l2);
    first
        .write_all(
            b"1,2021-01-01 00:00:00.100\n2,2021-01-01 00:00:00.200\n3,2021-01-01 00:00:05.000\n",
        )
        .unwrap();
    (running, first, second)
}

const FIRED: &str = "| +I | 2021-01-01 00:00:00.000 |                    2 |";

/// The silent socket holds the valve's minimum back: the window never fires while it runs.
/// The wait is bounded: a window that fires late would fire within it (the idle timeouts of
/// the tests below are 200 ms).
#[test]
fn without_an_idle_timeout_a_silent_split_holds_the_window() {
    let (mut job, _first, _second) = idle_job("", "", "");
    assert!(
        !job.wait_for("| +I |", Duration::from_secs(2)),
        "{}",
        job.seen
    );
    job.cancel();
}

#[test]
fn the_sessions_idle_timeout_lets_the_window_fire() {
    let settings = "SET 'table.exec.source.idle-timeout' = '200 ms';\n";
    let (mut job, _first, _second) = idle_job(settings, "", "");
    assert!(job.wait_for(FIRED, Duration::from_secs(20)), "{}", job.seen);
    job.cancel();
}

#[test]
fn the_tables_idle_timeout_lets_the_window_fire() {
    let options = ", 'scan.watermark.idle-timeout' = '200 ms'";
    let (mut job, _first, _second) = idle_job("", options, "");
    assert!(job.wait_for(FIRED, Duration::from_secs(20)), "{}", job.seen);
    job.cancel();
}

/// The table option wins over the session's setting: an hour-long one holds the window.
#[test]
fn the_tables_idle_timeout_overrides_the_sessions() {
    let settings = "SET 'table.exec.source.idle-timeout' = '200 ms';\n";
    let options = ", 'scan.watermark.idle-timeout' = '1 h'";
    let (mut job, _first, _second) = idle_job(settings, options, "");
    assert!(
        !job.wait_for("| +I |", Duration::from_secs(2)),
        "{}",
        job.seen
    );
    job.cancel();
}

/// An OPTIONS hint wins over the table's longer option.
#[test]
fn an_options_hint_overrides_the_tables_idle_timeout() {
    let options = ", 'scan.watermark.idle-timeout' = '1 h'";
    let hint = "/*+ OPTIONS('scan.watermark.idle-timeout' = '200 ms') */";
    let (mut job, _first, _second) = idle_job("", options, hint);
    assert!(job.wait_for(FIRED, Duration::from_secs(20)), "{}", job.seen);
    job.cancel();
}

/// Seed 001's MyView3: a 10-minute TUMBLE over a PROCTIME() attribute of a socket table, on
/// a manual clock. The rows come at 14:01 (session zone `zone`); the window fires when the
/// clock passes its end, and TUMBLE_PROCTIME is the time it fired, as in the document's
/// output (`14:10:00.005`).
fn proctime_window(zone: &str, start: &str, end: &str, fired: &str) {
    // 2021-04-15 14:01:00 UTC.
    let clock = ManualClock::new(1_618_495_260_000_000_000);
    let (l, port) = listener();
    let script = format!(
        "SET 'table.local-time-zone' = '{zone}';\n\
         CREATE TABLE MyTable1 (item STRING, price DOUBLE, proctime AS PROCTIME()) WITH \
         ('connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '{port}', 'format' = 'csv');\n\
         CREATE VIEW MyView3 AS SELECT \
         TUMBLE_START(proctime, INTERVAL '10' MINUTES) AS window_start, \
         TUMBLE_END(proctime, INTERVAL '10' MINUTES) AS window_end, \
         TUMBLE_PROCTIME(proctime, INTERVAL '10' MINUTES) AS window_proctime, \
         item, MAX(price) AS max_price \
         FROM MyTable1 GROUP BY TUMBLE(proctime, INTERVAL '10' MINUTES), item;\n\
         SELECT * FROM MyView3;"
    );
    let mut job = start_script(Session::new(clock.clone()), script);
    let mut peer = accept(&l);
    peer.write_all(b"A,1.1\nB,1.2\nA,1.8\nB,2.5\nC,3.8\n")
        .unwrap();
    // Nothing fires while the clock stands inside the window.
    assert!(
        !job.wait_for("| +I |", Duration::from_secs(1)),
        "{}",
        job.seen
    );
    // 14:10:00.005: the window [14:00, 14:10) has closed.
    clock.set(1_618_495_800_005_000_000);
    for (item, max) in [("A", "1.8"), ("B", "2.5"), ("C", "3.8")] {
        let row = format!("| +I | {start} | {end} | {fired} | {item:>30} | {max:>30} |");
        assert!(
            job.wait_for(&row, Duration::from_secs(20)),
            "{row}\n{}",
            job.seen
        );
    }
    job.cancel();
}

#[test]
fn a_proctime_window_fires_on_the_clock_in_utc() {
    proctime_window(
        "UTC",
        "2021-04-15 14:00:00.000",
        "2021-04-15 14:10:00.000",
        "2021-04-15 14:10:00.005",
    );
}

/// In Asia/Shanghai the window's start and end are Shanghai's wall clock (the document:
/// "different window start, window end and window proctime than in UTC").
#[test]
fn a_proctime_window_follows_the_session_zone() {
    proctime_window(
        "Asia/Shanghai",
        "2021-04-15 22:00:00.000",
        "2021-04-15 22:10:00.000",
        "2021-04-15 22:10:00.005",
    );
}

//! The `socket` source against a real TCP peer (the seeds' `nc -lk 9999`): rows reach the
//! printer while the connection stays open, a malformed line fails the job only after the
//! valid lines before it, and a cancel ends a job whose peer is silent.

use std::io::Write;
use std::net::TcpListener;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, atomic::AtomicBool, atomic::Ordering};
use std::time::Duration;

use tideline::client::Session;
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

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

/// A running `SELECT * FROM s`: the peer's end of the connection, what the session prints,
/// the statement's result when it ends, and the session's cancel flag.
type Query = (
    std::net::TcpStream,
    Receiver<String>,
    Receiver<Result<(), String>>,
    Arc<AtomicBool>,
);

/// Starts `SELECT * FROM s` over a socket table on a fresh port.
fn start_query() -> Query {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut session = Session::default();
    let cancel = session.cancel.clone();
    let (out_tx, out_rx) = channel();
    let (done_tx, done_rx) = channel();
    std::thread::spawn(move || {
        let script = format!(
            "CREATE TABLE s (a INT, b STRING) WITH ('connector' = 'socket', \
             'hostname' = '127.0.0.1', 'port' = '{port}', 'format' = 'csv');\n\
             SELECT * FROM s;"
        );
        let mut out = Forward(out_tx);
        let (stmts, _) = split_statements(&script);
        let mut result = Ok(());
        for stmt in &stmts {
            let parsed = parse_statement(stmt).unwrap();
            if let Err(e) = tideline::client::execute(&mut session, &parsed, &mut out) {
                result = Err(tideline::client::render_error(&e, &script));
                break;
            }
        }
        let _ = done_tx.send(result);
    });
    let (peer, _) = listener.accept().unwrap();
    (peer, out_rx, done_rx, cancel)
}

/// Waits until the printed output contains `text` (or fails after a generous 20 s).
fn wait_for(out: &Receiver<String>, seen: &mut String, text: &str) {
    while !seen.contains(text) {
        match out.recv_timeout(Duration::from_secs(20)) {
            Ok(s) => seen.push_str(&s),
            Err(_) => panic!("never printed {text:?}; printed so far:\n{seen}"),
        }
    }
}

#[test]
fn a_line_reaches_the_printer_while_the_connection_is_open() {
    let (mut peer, out, done, cancel) = start_query();
    let mut seen = String::new();
    peer.write_all(b"1,first\n").unwrap();
    wait_for(&out, &mut seen, "first");
    peer.write_all(b"2,second\n").unwrap();
    wait_for(&out, &mut seen, "second");
    // A quiet peer does not hold the job open against a cancel (the client's Ctrl-C).
    cancel.store(true, Ordering::Relaxed);
    let result = done
        .recv_timeout(Duration::from_secs(20))
        .expect("the job ends");
    assert!(result.is_err(), "a cancelled job reports it");
    drop(peer);
}

#[test]
fn a_malformed_line_fails_the_job_after_the_valid_lines_before_it() {
    let (mut peer, out, done, _cancel) = start_query();
    // One write: the valid lines and the bad one arrive in one read, one batch.
    peer.write_all(b"1,kept\n2,also kept\nnot a number,x\n3,never\n")
        .unwrap();
    let result = done
        .recv_timeout(Duration::from_secs(20))
        .expect("the job ends");
    let err = result.expect_err("the bad line fails the job");
    assert!(err.contains("line 3"), "{err}");
    let seen: String = out.try_iter().collect();
    assert!(
        seen.contains("kept") && seen.contains("also kept"),
        "{seen}"
    );
    assert!(!seen.contains("never"), "{seen}");
}

#[test]
fn the_last_line_needs_no_newline_when_the_peer_closes() {
    let (mut peer, out, done, _cancel) = start_query();
    // A CRLF line (a Windows peer) is the same row as an LF one.
    peer.write_all(b"1,crlf\r\n2,b").unwrap();
    drop(peer);
    done.recv_timeout(Duration::from_secs(20))
        .expect("the job ends")
        .unwrap();
    let seen: String = out.try_iter().collect();
    assert!(seen.contains("Received a total of 2 rows"), "{seen}");
    assert!(seen.contains(" crlf |"), "{seen:?}");
}

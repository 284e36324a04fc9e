//! The `socket` source: connects to `hostname`:`port` and reads lines until the peer closes
//! the connection (the documents' `nc -lk 9999` examples).
//!
//! A reader thread moves bytes from the connection into a small channel as they arrive; the
//! split turns whatever has arrived into one batch, so a line typed into `nc` reaches the
//! operators at once rather than after 8,192 lines. While nothing arrives the split returns an
//! empty batch every [`QUIET_WAIT`], so the job can be cancelled while its peer is silent.
//! The split is unbounded: the peer closing the connection ends it, as in Flink's example.

use std::io::Read;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::time::Duration;

use arrow_array::RecordBatch;

use super::super::{BatchLimit, ConnectorError, Decoded, LineDecoder};
use crate::catalog::TableDef;
use crate::connector::format::new_decoder;
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::connector::source::split::Pipeline;
use crate::connector::source::split::SourceSplit;
use crate::exec::error::ExecError;
use crate::function::EvalContext;

/// Lines per batch at most, when they arrive faster than they are taken.
const BATCH_LINES: usize = 8192;
/// Text bytes per column per batch: an Arrow string column addresses `i32::MAX` bytes.
const BATCH_BYTES: usize = i32::MAX as usize;
/// How long `next_batch` waits for the first bytes of a batch.
const QUIET_WAIT: Duration = Duration::from_millis(100);
/// Reads in flight between the reader thread and the split (backpressure on the peer).
const READS_IN_FLIGHT: usize = 16;
const READ_SIZE: usize = 64 * 1024;

/// Makes a fresh decoder for the table's format (see [`SocketSplit::salvage`]).
pub type DecoderFactory = Box<dyn Fn() -> Result<Box<dyn LineDecoder>, String> + Send>;

pub struct SocketSplit {
    name: String,
    /// A second handle on the connection, to shut it down (and so end the reader thread) when
    /// the split is dropped.
    stream: TcpStream,
    reads: Receiver<std::io::Result<Vec<u8>>>,
    new_decoder: DecoderFactory,
    decoder: Box<dyn LineDecoder>,
    /// Bytes after the last complete line.
    partial: Vec<u8>,
    /// The lines of the batch being built (each with its `\n`), kept to salvage the valid rows
    /// if one is bad.
    lines: Vec<(u64, String)>,
    line_number: u64,
    closed: bool,
    /// An error met after some valid rows: reported by the next call, after those rows.
    failed: Option<ExecError>,
}

pub fn connect(
    options: &[(String, String)],
    new_decoder: DecoderFactory,
) -> Result<SocketSplit, ConnectorError> {
    let get = |k: &str| {
        options
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let host = get("hostname").ok_or_else(|| {
        ConnectorError("option 'hostname' is required for connector 'socket'".into())
    })?;
    let port: u16 = get("port")
        .ok_or_else(|| ConnectorError("option 'port' is required for connector 'socket'".into()))?
        .parse()
        .map_err(|_| ConnectorError("invalid value for option 'port'".into()))?;
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| ConnectorError(format!("cannot resolve {host}:{port}: {e}")))?
        .next()
        .ok_or_else(|| ConnectorError(format!("cannot resolve {host}:{port}")))?;
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|e| ConnectorError(format!("cannot connect to socket {host}:{port}: {e}")))?;
    let reader = stream
        .try_clone()
        .map_err(|e| ConnectorError(format!("socket {host}:{port}: {e}")))?;
    let (tx, reads) = sync_channel(READS_IN_FLIGHT);
    std::thread::spawn(move || read_connection(reader, tx));
    let decoder = new_decoder().map_err(ConnectorError)?;
    Ok(SocketSplit {
        name: format!("socket {host}:{port}"),
        stream,
        reads,
        new_decoder,
        decoder,
        partial: Vec::new(),
        lines: Vec::new(),
        line_number: 0,
        closed: false,
        failed: None,
    })
}

/// The reader thread: bytes as they arrive, until the peer closes, an error, or the split is
/// gone (its receiver dropped, or the connection shut down under the read).
fn read_connection(mut stream: TcpStream, tx: SyncSender<std::io::Result<Vec<u8>>>) {
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx.send(Ok(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

impl SocketSplit {
    /// Moves the complete lines of `self.partial` into the decoder (and into `self.lines`),
    /// until the batch is full: the rest waits for the next batch.
    fn take_lines(&mut self, at_end: bool) -> Result<(), ExecError> {
        let mut start = 0;
        let result = loop {
            let end = match memchr::memchr(b'\n', &self.partial[start..]) {
                Some(pos) => start + pos,
                // The last line needs no newline.
                None if at_end && start < self.partial.len() => self.partial.len(),
                None => break Ok(()),
            };
            if self.full() {
                break Ok(());
            }
            match self.push_line(start, end) {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
            start = (end + 1).min(self.partial.len());
        };
        self.partial.drain(..start);
        if at_end && self.partial.is_empty() && result.is_ok() {
            self.decoder
                .end_of_input()
                .map_err(|e| self.error(e.to_string()))?;
        }
        result
    }

    /// Whether the batch has its lines.
    fn full(&self) -> bool {
        self.lines.len() >= BATCH_LINES
    }

    /// Decodes the line `self.partial[start..end]`; false when it must wait for the next batch
    /// (it could take a column past [`BATCH_BYTES`]).
    fn push_line(&mut self, start: usize, end: usize) -> Result<bool, ExecError> {
        let number = self.line_number + 1;
        // The line goes with its `\n` (an empty line is a CSV row), and a `\r` before it stays:
        // the format drops it (inside a quoted CSV field the CRLF is kept).
        let bytes = &self.partial[start..(end + 1).min(self.partial.len())];
        let line = match std::str::from_utf8(bytes) {
            Ok(line) => line.to_string(),
            Err(e) => {
                self.line_number = number;
                let at = e.valid_up_to();
                return Err(self.error(format!("line {number}: invalid UTF-8 at byte {at}")));
            }
        };
        let limit = BatchLimit {
            started: !self.lines.is_empty(),
            ..one_line()
        };
        let pushed = self.decoder.decode(&line, number, limit);
        if matches!(pushed, Ok(Decoded { lines: 0, .. })) {
            return Ok(false);
        }
        self.line_number = number;
        self.lines.push((number, line));
        pushed.map(|_| true).map_err(|e| self.error(e.to_string()))
    }

    fn error(&self, message: String) -> ExecError {
        ExecError::Source(format!("{}, {message}", self.name))
    }

    /// The batch of the lines taken so far.
    fn flush(&mut self) -> Result<RecordBatch, ExecError> {
        let batch = self
            .decoder
            .flush()
            .map_err(|e| ExecError::Source(format!("{}: {e}", self.name)))?;
        self.lines.clear();
        Ok(batch)
    }

    /// After `error` in the current batch: the rows of the lines before the bad one, decoded
    /// again one at a time by a fresh decoder (a decoder's state after an error is not
    /// defined), with the error kept for the next call.
    fn salvage(&mut self, error: ExecError) -> Result<RecordBatch, ExecError> {
        let lines = std::mem::take(&mut self.lines);
        self.failed = Some(error);
        let mut good = (self.new_decoder)().map_err(|e| self.error(e))?;
        let mut probe = (self.new_decoder)().map_err(|e| self.error(e))?;
        for (number, line) in &lines {
            // A line is good when it decodes and converts on its own.
            let ok = probe.decode(line, *number, one_line()).is_ok() && probe.flush().is_ok();
            if !ok {
                break;
            }
            if good.decode(line, *number, one_line()).is_err() {
                break;
            }
        }
        let batch = good.flush().map_err(|e| self.error(e))?;
        self.decoder = (self.new_decoder)().map_err(|e| self.error(e))?;
        Ok(batch)
    }

    fn receive(&mut self, read: std::io::Result<Vec<u8>>) -> Result<(), ExecError> {
        match read {
            Ok(bytes) => {
                self.partial.extend_from_slice(&bytes);
                self.take_lines(false)
            }
            Err(e) => Err(self.error(format!("read failed after line {}: {e}", self.line_number))),
        }
    }
}

/// One line, whatever the batch holds (the byte limit applies only to a started batch).
fn one_line() -> BatchLimit {
    BatchLimit {
        lines: 1,
        bytes: BATCH_BYTES,
        started: false,
    }
}

impl SourceSplit for SocketSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.closed && self.partial.is_empty() {
            return Ok(None);
        }
        if self.closed {
            // Lines held back when the last batch was full.
            return match self.take_lines(true).and_then(|()| self.flush()) {
                Ok(batch) => Ok(Some(batch)),
                Err(e) => self.salvage(e).map(Some),
            };
        }
        // Lines held back by a full batch go first; else wait a little for the first bytes.
        // Then take what has arrived since, up to a batch.
        let mut step = if self.partial.contains(&b'\n') {
            self.take_lines(false)
        } else {
            match self.reads.recv_timeout(QUIET_WAIT) {
                Ok(read) => self.receive(read),
                Err(RecvTimeoutError::Timeout) => return self.flush().map(Some),
                Err(RecvTimeoutError::Disconnected) => {
                    self.closed = true;
                    self.take_lines(true)
                }
            }
        };
        while step.is_ok() && !self.closed && !self.full() && self.partial.len() < BATCH_BYTES {
            step = match self.reads.try_recv() {
                Ok(read) => self.receive(read),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.closed = true;
                    self.take_lines(true)
                }
            };
        }
        let batch = step.and_then(|()| self.flush());
        if self.closed && self.decoder.rows_skipped() > 0 {
            eprintln!(
                "[WARNING] {}: skipped {} malformed row(s) (ignore-parse-errors)",
                self.name,
                self.decoder.rows_skipped()
            );
        }
        match batch {
            Ok(batch) => Ok(Some(batch)),
            Err(e) => self.salvage(e).map(Some),
        }
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn is_bounded(&self) -> bool {
        false
    }
}

impl Drop for SocketSplit {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// The `socket` connector's source: one split reading `hostname:port`, never ending.
pub struct SocketFactory;

impl SourceFactory for SocketFactory {
    fn identifier(&self) -> &'static str {
        "socket"
    }

    fn is_bounded(&self, _table: &TableDef) -> bool {
        false
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        let table = scan.table;
        let (options, physical, zone) = (
            table.options.clone(),
            scan.physical.clone(),
            ctx.zone.clone(),
        );
        let new_decoder: DecoderFactory =
            Box::new(move || new_decoder(&options, &physical, &zone).map_err(|e| e.0));
        Ok(vec![Pipeline {
            branches: Vec::new(),
            split: Box::new(connect(&table.options, new_decoder)?),
            operators: vec![],
        }])
    }
}

//! Where the client's background jobs print (the print connector): whole lines, handed to
//! the terminal one batch at a time, so that two jobs' rows, or a job's rows and the REPL's
//! prompt, never cut each other's lines.

use std::io::Write;
use std::sync::Arc;

use crate::session::Background;

/// How a batch of whole lines reaches the terminal.
pub type Emit = Arc<dyn Fn(&[u8]) -> std::io::Result<()> + Send + Sync>;

/// Background jobs printing whole lines through `emit`; `in_order` for a script (its
/// statements wait for the jobs writing the tables they read).
pub fn background(emit: Emit, in_order: bool) -> Background {
    Background {
        output: Arc::new(move || {
            Box::new(WholeLines {
                pending: Vec::new(),
                emit: emit.clone(),
            })
        }),
        in_order,
    }
}

/// The process's stdout, a batch of lines under its lock.
pub fn stdout() -> Emit {
    Arc::new(|bytes| {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()
    })
}

/// A writer that passes on what it is given up to the last line end, keeping the rest
/// until the line is whole (or the writer is flushed).
struct WholeLines {
    pending: Vec<u8>,
    emit: Emit,
}

impl Write for WholeLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') {
            (self.emit)(&self.pending[..=end])?;
            self.pending.drain(..=end);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            (self.emit)(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }
}

impl Drop for WholeLines {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn only_whole_lines_pass_until_a_flush() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = seen.clone();
        let emit: Emit = Arc::new(move |bytes| {
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(bytes).into_owned());
            Ok(())
        });
        let mut out = (background(emit, false).output)();
        out.write_all(b"+I[1, a]\n+I[2,").unwrap();
        out.write_all(b" b]\n+I[3").unwrap();
        out.write_all(b", c]").unwrap();
        assert_eq!(*seen.lock().unwrap(), ["+I[1, a]\n", "+I[2, b]\n"]);
        out.flush().unwrap();
        assert_eq!(seen.lock().unwrap()[2], "+I[3, c]");
    }
}

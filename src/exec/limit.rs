//! `LimitOperator`: `LIMIT n [OFFSET m]` without ORDER BY over an insert-only stream: the
//! rows after the first `m` to arrive, `n` of them, then nothing (a single instance sees
//! every row). Its count of rows seen is instance state in a checkpoint.

use crate::exec::aggregate::{StateReader, put_i64};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::types::chunk::StreamChunk;

pub struct LimitOperator {
    offset: u64,
    fetch: Option<u64>,
    /// Rows seen so far.
    seen: u64,
}

impl LimitOperator {
    pub fn new(offset: u64, fetch: Option<u64>) -> Self {
        LimitOperator {
            offset,
            fetch,
            seen: 0,
        }
    }
}

impl Operator for LimitOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal("a LIMIT takes inserts only".into()));
        }
        let n = chunk.num_rows() as u64;
        let end = self
            .fetch
            .map_or(u64::MAX, |f| self.offset.saturating_add(f));
        // The chunk's rows are `seen..seen + n`; those in `offset..end` pass.
        let from = self.offset.max(self.seen).min(self.seen + n);
        let to = end.min(self.seen + n).max(from);
        let (start, len) = ((from - self.seen) as usize, (to - from) as usize);
        self.seen += n;
        if len == 0 {
            return Ok(());
        }
        out.emit(chunk.slice(start, len))
    }

    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        put_i64(&mut out, self.seen as i64);
        Some(out)
    }

    /// The rows seen by every instance of the snapshot (there is one: a LIMIT reads a
    /// single exchange).
    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        self.seen = 0;
        for part in parts {
            let mut input = StateReader::new(part);
            self.seen = self.seen.saturating_add(input.i64()? as u64);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::test_harness::{run_script, schema};
    use crate::types::TypeKind;

    #[test]
    fn rows_after_the_offset_up_to_the_fetch_across_chunks() {
        let s = schema(&[("v", TypeKind::Int)]);
        let script = "+I 1\n+I 2\n--\n+I 3\n+I 4\n+I 5\n--\n+I 6";
        let mut op = LimitOperator::new(1, Some(3));
        assert_eq!(
            run_script(&mut op, &s, &s, script).unwrap(),
            "+I 2\n+I 3\n+I 4"
        );
        let mut op = LimitOperator::new(4, None);
        assert_eq!(run_script(&mut op, &s, &s, script).unwrap(), "+I 5\n+I 6");
    }

    #[test]
    fn restored_equals_uninterrupted() {
        let s = schema(&[("v", TypeKind::Int)]);
        let (first, second) = ("+I 1\n+I 2", "+I 3\n+I 4\n--\n+I 5\n+I 6");
        let mut whole = LimitOperator::new(1, Some(3));
        assert_eq!(run_script(&mut whole, &s, &s, first).unwrap(), "+I 2");
        let part = whole.snapshot_instance().unwrap();
        let expected = run_script(&mut whole, &s, &s, second).unwrap();
        assert_eq!(expected, "+I 3\n+I 4");
        let mut restored = LimitOperator::new(1, Some(3));
        restored.restore_instance(&[&part]).unwrap();
        assert_eq!(run_script(&mut restored, &s, &s, second).unwrap(), expected);
        // A part cut short is an error, not a guess.
        assert!(restored.restore_instance(&[&part[..3]]).is_err());
    }
}

//! Flink's NOT NULL enforcer in front of a sink (`table.exec.sink.not-null-enforcer`): a NULL
//! in a NOT NULL sink column fails the job (ERROR, the default) or drops its row (DROP). Rows
//! before the offending one still reach the sink, as they do in Flink.

use arrow_array::{Array, BooleanArray};
use arrow_select::filter::filter_record_batch;

use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::types::chunk::StreamChunk;

pub struct NotNullEnforcer {
    /// The NOT NULL columns: position and name.
    columns: Vec<(usize, String)>,
    drop: bool,
}

impl NotNullEnforcer {
    pub fn new(columns: Vec<(usize, String)>, drop: bool) -> Self {
        NotNullEnforcer { columns, drop }
    }
}

impl Operator for NotNullEnforcer {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let nulls: Vec<&(usize, String)> = self
            .columns
            .iter()
            .filter(|(i, _)| chunk.batch.column(*i).null_count() > 0)
            .collect();
        if nulls.is_empty() {
            return out.emit(chunk);
        }
        let valid = |row: usize| {
            nulls
                .iter()
                .all(|(i, _)| chunk.batch.column(*i).is_valid(row))
        };
        if self.drop {
            let keep: BooleanArray = (0..chunk.num_rows()).map(|r| Some(valid(r))).collect();
            let batch = filter_record_batch(&chunk.batch, &keep)?;
            let kinds = chunk.kinds.as_ref().map(|k| {
                k.iter()
                    .zip(keep.values().iter())
                    .filter(|(_, keep)| *keep)
                    .map(|(k, _)| *k)
                    .collect()
            });
            return out.emit(StreamChunk { batch, kinds });
        }
        let first = (0..chunk.num_rows())
            .find(|&r| !valid(r))
            .unwrap_or(chunk.num_rows());
        if first > 0 {
            out.emit(StreamChunk {
                batch: chunk.batch.slice(0, first),
                kinds: chunk.kinds.as_ref().map(|k| k[..first].to_vec()),
            })?;
        }
        let name = nulls
            .iter()
            .find(|(i, _)| chunk.batch.column(*i).is_null(first))
            .map_or("", |(_, n)| n.as_str());
        Err(ExecError::Sink(format!(
            "Column '{name}' is NOT NULL, however, a null value is being written into it. You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and drop such records silently."
        )))
    }
}

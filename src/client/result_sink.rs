//! The client's result sinks: the materialized table of batch and `table` mode, and the
//! streaming tableau that prints each change as it arrives.

use std::io::Write;

use super::tableau::{NULL_TEXT, border, row_line, widths_by_type};
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::types::Schema;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::text::format_value;
use crate::types::time::SessionZone;

/// Cells of every row, as printed.
fn cells(chunk: &StreamChunk, row: usize, schema: &Schema, zone: &SessionZone) -> Vec<String> {
    chunk
        .batch
        .columns()
        .iter()
        .zip(&schema.fields)
        .map(|(c, f)| {
            format_value(c, row, &f.data_type, zone).unwrap_or_else(|| NULL_TEXT.to_string())
        })
        .collect()
}

/// The result as a table: inserts add a row, retractions (-U, -D) remove the latest equal
/// one, as Flink's materialized result view does. A removal leaves a hole that
/// [`Self::rows`] skips, and the holes are compacted away once they are the majority. An
/// index from a row's hash to its places is built at the first retraction, so an insert-only
/// result pays nothing for it, and a retraction costs a hash lookup. With a `limit`, the
/// oldest rows give way to new ones past it, as in Flink's table view.
pub(super) struct MaterializeSink {
    schema: Schema,
    zone: SessionZone,
    slots: Vec<Option<Vec<String>>>,
    holes: usize,
    positions: Option<std::collections::HashMap<u64, Vec<usize>>>,
    pub(super) limit: Option<usize>,
    /// No row lives before this slot.
    oldest: usize,
}

fn row_hash(row: &[String]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    row.hash(&mut h);
    h.finish()
}

impl MaterializeSink {
    pub(super) fn new(schema: Schema, zone: SessionZone) -> Self {
        MaterializeSink {
            schema,
            zone,
            slots: Vec::new(),
            holes: 0,
            positions: None,
            limit: None,
            oldest: 0,
        }
    }

    /// Removes the row in slot `at` (which holds one).
    fn remove(&mut self, at: usize) {
        if let (Some(positions), Some(row)) = (&mut self.positions, &self.slots[at])
            && let Some(places) = positions.get_mut(&row_hash(row))
        {
            places.retain(|&p| p != at);
        }
        self.slots[at] = None;
        self.holes += 1;
        if self.holes > 1024 && self.holes * 2 > self.slots.len() {
            self.slots.retain(Option::is_some);
            self.holes = 0;
            self.oldest = 0;
            if self.positions.is_some() {
                self.positions = Some(Self::index(&self.slots));
            }
        }
    }

    /// Drops the oldest rows while more than `limit` live.
    fn enforce_limit(&mut self) {
        let Some(limit) = self.limit else { return };
        while self.slots.len() - self.holes > limit {
            while self.slots[self.oldest].is_none() {
                self.oldest += 1;
            }
            let at = self.oldest;
            self.remove(at);
        }
    }

    /// The rows still in the table, in arrival order.
    pub(super) fn rows(self) -> Vec<Vec<String>> {
        self.slots.into_iter().flatten().collect()
    }

    fn index(slots: &[Option<Vec<String>>]) -> std::collections::HashMap<u64, Vec<usize>> {
        let mut index = std::collections::HashMap::<u64, Vec<usize>>::new();
        for (at, row) in slots.iter().enumerate() {
            if let Some(row) = row {
                index.entry(row_hash(row)).or_default().push(at);
            }
        }
        index
    }

    fn retract(&mut self, values: &[String]) {
        let slots = &self.slots;
        let positions = self.positions.get_or_insert_with(|| Self::index(slots));
        let Some(places) = positions.get_mut(&row_hash(values)) else {
            return;
        };
        let Some(i) = places
            .iter()
            .rposition(|&at| self.slots[at].as_deref() == Some(values))
        else {
            return;
        };
        let at = places[i];
        self.remove(at);
    }
}

impl Sink for MaterializeSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        for row in 0..chunk.num_rows() {
            let values = cells(&chunk, row, &self.schema, &self.zone);
            match chunk.kind(row) {
                RowKind::Insert | RowKind::UpdateAfter => {
                    if let Some(positions) = &mut self.positions {
                        positions
                            .entry(row_hash(&values))
                            .or_default()
                            .push(self.slots.len());
                    }
                    self.slots.push(Some(values));
                    self.enforce_limit();
                }
                RowKind::UpdateBefore | RowKind::Delete => self.retract(&values),
            }
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

/// Streaming tableau: header first, each row as it arrives with its `op`, then the count.
pub(super) struct StreamingTableauSink<'a> {
    schema: Schema,
    zone: SessionZone,
    widths: Vec<usize>,
    out: &'a mut dyn Write,
    pub(super) rows: u64,
}

impl<'a> StreamingTableauSink<'a> {
    pub(super) fn new(
        schema: Schema,
        zone: SessionZone,
        max_width: usize,
        out: &'a mut dyn Write,
    ) -> Self {
        let mut names = vec!["op".to_string()];
        names.extend(schema.fields.iter().map(|f| f.name.clone()));
        let mut types = vec![crate::types::DataType::not_null(
            crate::types::TypeKind::Char(2),
        )];
        types.extend(schema.fields.iter().map(|f| f.data_type.clone()));
        let mut widths = widths_by_type(&names, &types, max_width);
        widths[0] = 2;
        let _ = writeln!(out, "{}", border(&widths));
        let _ = writeln!(out, "{}", row_line(&widths, &names));
        let _ = writeln!(out, "{}", border(&widths));
        let _ = out.flush();
        StreamingTableauSink {
            schema,
            zone,
            widths,
            out,
            rows: 0,
        }
    }
}

impl Sink for StreamingTableauSink<'_> {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        for row in 0..chunk.num_rows() {
            let mut line = vec![chunk.kind(row).short_string().to_string()];
            line.extend(cells(&chunk, row, &self.schema, &self.zone));
            writeln!(self.out, "{}", row_line(&self.widths, &line))
                .map_err(|e| ExecError::Sink(e.to_string()))?;
            self.rows += 1;
        }
        self.out.flush().map_err(|e| ExecError::Sink(e.to_string()))
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        let w = |e: std::io::Error| ExecError::Sink(e.to_string());
        if self.rows > 0 {
            writeln!(self.out, "{}", border(&self.widths)).map_err(w)?;
        }
        let unit = if self.rows > 1 { "rows" } else { "row" };
        writeln!(self.out, "Received a total of {} {unit}", self.rows).map_err(w)?;
        self.out.flush().map_err(w)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, RecordBatch};

    use super::*;
    use crate::types::{DataType, Field, TypeKind};

    #[test]
    fn table_mode_applies_retractions() {
        let schema = Schema::new(vec![Field::new("v", DataType::nullable(TypeKind::Int))]);
        let batch = RecordBatch::try_new(
            crate::types::chunk::runtime_schema(&schema),
            vec![Arc::new(Int32Array::from(vec![1, 2, 1, 3, 2, 9]))],
        )
        .unwrap();
        use RowKind::*;
        let chunk = StreamChunk {
            batch,
            kinds: Some(vec![
                Insert,
                Insert,
                UpdateBefore,
                UpdateAfter,
                Delete,
                Delete,
            ]),
        };
        let mut sink = MaterializeSink::new(schema.clone(), SessionZone::utc());
        let first = StreamChunk::inserts(chunk.batch.slice(0, 2));
        let rest = StreamChunk {
            batch: chunk.batch.slice(2, 4),
            kinds: chunk.kinds.as_ref().map(|k| k[2..].to_vec()),
        };
        sink.write(first).unwrap();
        sink.write(rest).unwrap();
        assert_eq!(sink.rows(), vec![vec!["3".to_string()]]);
        let mut whole = MaterializeSink::new(schema, SessionZone::utc());
        whole.write(chunk).unwrap();
        assert_eq!(whole.rows(), vec![vec!["3".to_string()]]);
    }
}

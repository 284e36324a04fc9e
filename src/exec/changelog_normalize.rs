//! `ChangelogNormalizeOperator`: a changelog source's rows made a proper changelog by key, as
//! Flink's `ChangelogNormalize` (its keep-last-row deduplication on a changelog) runs it where
//! `table.exec.source.cdc-events-duplicate` says the source may repeat events:
//!
//! - `+I`/`+U`: the first row of a key is `+I`; a row equal to the key's current one changes
//!   nothing (a repeated event, dropped unless a state TTL is set, as in Flink); any other
//!   replaces it, `-U` of the old (when the consumer asks for it) and `+U` of the new;
//! - `-U`/`-D`: the key's current row is deleted (`-D` of the kept row, which has every
//!   column), and a delete of a key that has no row is dropped.
//! - A filter taken in from above decides what the consumer sees: a row that stops passing
//!   it is a `-D` of the old, one that starts passing a `+I`, one that never passes
//!   nothing (its key's row is still kept).
//!
//! Each key keeps its current row, as `arrow-row` bytes of all its columns. State is
//! snapshotted per key group.

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes};
use super::eval::evaluate;
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_group::GroupBuffers;
use super::state::keyed::Keyed;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::{RowKind, StreamChunk, chunk_of_rows};

/// A key's current row and whether it passes the filter.
#[derive(Default)]
struct Current {
    row: Box<[u8]>,
    passes: bool,
}

pub struct ChangelogNormalizeOperator {
    schema: SchemaRef,
    update_before: bool,
    /// A state TTL is set: repeated rows are emitted again (Flink's, so that consumers'
    /// state does not expire too early).
    emit_repeats: bool,
    encoder: Option<KeyEncoder>,
    rows: RowConverter,
    condition: Option<ScalarExpr>,
    ctx: EvalContext,
    keyed: Keyed<Current>,
}

impl ChangelogNormalizeOperator {
    /// Normalization of rows of `schema` by `keys` (the primary key); `update_before`: a
    /// replaced row is retracted first; `emit_repeats`: a state TTL is set; `condition`: the
    /// filter taken in.
    pub fn new(
        schema: SchemaRef,
        keys: Vec<usize>,
        update_before: bool,
        emit_repeats: bool,
        condition: Option<ScalarExpr>,
        ctx: EvalContext,
    ) -> Result<Self, ExecError> {
        Ok(ChangelogNormalizeOperator {
            encoder: optional_encoder(&schema, keys)?,
            rows: whole_row_converter(&schema)?,
            schema,
            update_before,
            emit_repeats,
            condition,
            ctx,
            keyed: Keyed::new(),
        })
    }
}

impl Operator for ChangelogNormalizeOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keyed.open(ctx);
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let batch: &RecordBatch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let rows = self.rows.convert_columns(batch.columns())?;
        let passed = match &self.condition {
            Some(c) => Some(evaluate(c, batch, &self.ctx)?),
            None => None,
        };
        let passes = |i: usize| {
            passed.as_ref().is_none_or(|p| {
                let p = p.as_boolean();
                p.is_valid(i) && p.value(i)
            })
        };
        let mut emitted: Vec<(RowKind, Box<[u8]>)> = Vec::new();
        for i in 0..batch.num_rows() {
            let bytes = key_bytes(keys.as_ref(), i);
            match chunk.kind(i) {
                RowKind::Insert | RowKind::UpdateAfter => {
                    let row = rows.row(i);
                    let now = passes(i);
                    let (key, new) = self.keyed.keys.intern(bytes);
                    let current = self.keyed.keys.value_mut(key);
                    if !new && !self.emit_repeats && current.row.as_ref() == row.as_ref() {
                        continue;
                    }
                    let before = !new && current.passes;
                    let old = std::mem::replace(
                        current,
                        Current {
                            row: row.as_ref().into(),
                            passes: now,
                        },
                    );
                    match (before, now) {
                        (false, true) => emitted.push((RowKind::Insert, row.as_ref().into())),
                        (true, true) => {
                            if self.update_before {
                                emitted.push((RowKind::UpdateBefore, old.row));
                            }
                            emitted.push((RowKind::UpdateAfter, row.as_ref().into()));
                        }
                        (true, false) => emitted.push((RowKind::Delete, old.row)),
                        (false, false) => {}
                    }
                }
                RowKind::UpdateBefore | RowKind::Delete => {
                    if let Some(key) = self.keyed.keys.find(bytes) {
                        let old = std::mem::take(self.keyed.keys.value_mut(key));
                        self.keyed.keys.remove(key);
                        if old.passes {
                            emitted.push((RowKind::Delete, old.row));
                        }
                    }
                }
            }
        }
        match chunk_of_rows(&self.rows, self.schema.clone(), emitted)? {
            Some(chunk) => out.emit(chunk),
            None => Ok(()),
        }
    }

    /// Per key group: each key's bytes and current row.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (_, key) in self.keyed.keys.iter() {
            let out = groups.group(key.key_group());
            put_bytes(out, key.bytes);
            put_bytes(out, &key.value.row);
            out.push(u8::from(key.value.passes));
        }
        groups.into_snapshot()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.keyed.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let (key, _) = self.keyed.keys.intern(input.bytes()?);
            let row = input.bytes()?.into();
            let passes = input.u8()? != 0;
            *self.keyed.keys.value_mut(key) = Current { row, passes };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::test_harness::{run_script, schema};
    use crate::types::TypeKind;

    fn rows() -> crate::types::Schema {
        schema(&[
            ("id", TypeKind::Int),
            ("name", TypeKind::VarChar(5)),
            ("w", TypeKind::Double),
        ])
    }

    fn run(update_before: bool, emit_repeats: bool, script: &str) -> String {
        run_with(update_before, emit_repeats, None, script)
    }

    fn run_with(
        update_before: bool,
        emit_repeats: bool,
        condition: Option<ScalarExpr>,
        script: &str,
    ) -> String {
        let mut op = ChangelogNormalizeOperator::new(
            crate::types::chunk::runtime_schema(&rows()),
            vec![0],
            update_before,
            emit_repeats,
            condition,
            EvalContext::for_tests(0),
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        run_script(&mut op, &rows(), &rows(), script).unwrap()
    }

    /// The oracle's changelog for these Debezium events (`/tmp/oracle/norm.out`, Flink
    /// 2.3): the repeated insert, the unknown delete and the repeated delete vanish.
    const EVENTS: &str = "
        +I 1 | a | 1.0
        +I 1 | a | 1.0
        +U 1 | a | 2.0
        -D 2 | b | 5.0
        -D 1 | a | 2.0
        -D 1 | a | 2.0";

    #[test]
    fn repeated_and_unknown_events_vanish() {
        assert_eq!(
            run(true, false, EVENTS),
            "+I 1 | a | 1.0\n-U 1 | a | 1.0\n+U 1 | a | 2.0\n-D 1 | a | 2.0"
        );
        assert_eq!(
            run(false, false, EVENTS),
            "+I 1 | a | 1.0\n+U 1 | a | 2.0\n-D 1 | a | 2.0"
        );
    }

    #[test]
    fn with_a_state_ttl_repeats_are_emitted_again() {
        assert_eq!(
            run(false, true, EVENTS),
            "+I 1 | a | 1.0\n+U 1 | a | 1.0\n+U 1 | a | 2.0\n-D 1 | a | 2.0"
        );
    }

    #[test]
    fn a_delete_emits_the_kept_row_and_an_update_before_deletes() {
        assert_eq!(
            run(
                true,
                false,
                "+I 1 | a | 1.0\n-U 1 | NULL | NULL\n+U 1 | b | 3.0"
            ),
            "+I 1 | a | 1.0\n-D 1 | a | 1.0\n+I 1 | b | 3.0"
        );
    }

    /// `WHERE w > 1` taken in: the oracle printed `+I 1 | a` (the row of 2.0), then `-D`.
    #[test]
    fn a_filter_taken_in_turns_rows_entering_and_leaving_it_into_inserts_and_deletes() {
        use crate::types::{DataType, TypeKind, value::Value};
        let w = ScalarExpr::Column {
            index: 2,
            data_type: DataType::nullable(TypeKind::Double),
        };
        let one = ScalarExpr::Literal {
            value: Value::Float(1.0),
            data_type: DataType::not_null(TypeKind::Double),
        };
        let greater = ScalarExpr::Call {
            function: crate::function::lookup(">").unwrap(),
            args: vec![w, one],
            data_type: DataType::nullable(TypeKind::Boolean),
        };
        assert_eq!(
            run_with(true, false, Some(greater.clone()), EVENTS),
            "+I 1 | a | 2.0\n-D 1 | a | 2.0"
        );
        assert_eq!(
            run_with(
                true,
                false,
                Some(greater),
                "+I 3 | c | 5.0\n+U 3 | c | 0.5\n+U 3 | c | 7.0"
            ),
            "+I 3 | c | 5.0\n-D 3 | c | 5.0\n+I 3 | c | 7.0"
        );
    }
}

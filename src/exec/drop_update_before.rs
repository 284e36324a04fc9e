//! `DropUpdateBeforeOperator`: drops the `-U` rows of a chunk (its consumer takes updates as
//! upserts); every other row passes unchanged.

use arrow_array::BooleanArray;

use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::types::chunk::{RowKind, StreamChunk};

pub struct DropUpdateBeforeOperator;

impl Operator for DropUpdateBeforeOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let Some(kinds) = &chunk.kinds else {
            return out.emit(chunk);
        };
        if !kinds.contains(&RowKind::UpdateBefore) {
            return out.emit(chunk);
        }
        let keep: BooleanArray = kinds
            .iter()
            .map(|k| Some(*k != RowKind::UpdateBefore))
            .collect();
        let batch = arrow_select::filter::filter_record_batch(&chunk.batch, &keep)?;
        let kinds = kinds
            .iter()
            .copied()
            .filter(|k| *k != RowKind::UpdateBefore)
            .collect();
        out.emit(StreamChunk {
            batch,
            kinds: Some(kinds),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::test_harness::{run_script, schema};
    use crate::types::TypeKind;

    #[test]
    fn update_befores_go_and_the_rest_passes() {
        let rows = schema(&[("id", TypeKind::Int), ("v", TypeKind::VarChar(3))]);
        assert_eq!(
            run_script(
                &mut DropUpdateBeforeOperator,
                &rows,
                &rows,
                "+I 1 | a\n-U 1 | a\n+U 1 | b\n-D 1 | b\n--\n+I 2 | c"
            )
            .unwrap(),
            "+I 1 | a\n+U 1 | b\n-D 1 | b\n+I 2 | c"
        );
    }
}

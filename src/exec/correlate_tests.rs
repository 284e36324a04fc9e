//! Operator tests: an UNNEST's rows for empty, NULL and long collections, inner and left,
//! with the input rows' kinds and the ordinality.
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder};
use arrow_array::{Int32Array, RecordBatch};

use super::*;
use crate::exec::test_harness::Chunks;
use crate::types::chunk::runtime_schema;
use crate::types::{DataType, Field, Schema, TypeKind};

fn input_schema() -> Schema {
    Schema::new(vec![
        Field::new("k", DataType::nullable(TypeKind::Int)),
        Field::new(
            "xs",
            DataType::nullable(TypeKind::Array(Box::new(DataType::nullable(TypeKind::Int)))),
        ),
    ])
}

/// `k`, `xs`, the element and its ordinality (nullable, a left correlate pads).
fn operator(keeps_empty: bool) -> CorrelateOperator {
    let mut fields = input_schema().fields;
    fields.push(Field::new("x", DataType::nullable(TypeKind::Int)));
    fields.push(Field::new("n", DataType::nullable(TypeKind::Int)));
    let collection = ScalarExpr::Column {
        index: 1,
        data_type: input_schema().fields[1].data_type.clone(),
    };
    CorrelateOperator::new(
        crate::plan::logical::Generator::Unnest(collection),
        true,
        keeps_empty,
        None,
        runtime_schema(&Schema::new(fields)),
        vec![true, false],
        EvalContext::for_tests(0),
    )
}

/// Rows of `(k, xs)` with their kinds.
fn chunk(rows: &[(i32, Option<Vec<i32>>)], kinds: Vec<RowKind>) -> StreamChunk {
    let mut lists = ListBuilder::new(Int32Builder::new()).with_field(Arc::new(
        arrow_schema::Field::new("element", ArrowType::Int32, true),
    ));
    for (_, xs) in rows {
        match xs {
            Some(xs) => {
                lists.values().append_slice(xs);
                lists.append(true);
            }
            None => lists.append(false),
        }
    }
    let batch = RecordBatch::try_new(
        runtime_schema(&input_schema()),
        vec![
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(lists.finish()),
        ],
    )
    .unwrap();
    StreamChunk {
        batch,
        kinds: Some(kinds),
    }
}

/// What `operator` emits for `input`: `(kind, k, x, n)` per row, and each chunk's size.
#[allow(clippy::type_complexity)]
fn run(
    mut operator: CorrelateOperator,
    input: StreamChunk,
) -> (Vec<(RowKind, i32, Option<i32>, Option<i32>)>, Vec<usize>) {
    let mut out = Chunks::default();
    operator.process(0, input, &mut out).unwrap();
    let mut rows = Vec::new();
    for chunk in &out.0 {
        let b = &chunk.batch;
        let int = |c: usize| {
            b.column(c)
                .as_primitive::<arrow_array::types::Int32Type>()
                .clone()
        };
        let (k, x, n) = (int(0), int(2), int(3));
        for r in 0..b.num_rows() {
            let value = |a: &Int32Array| a.is_valid(r).then(|| a.value(r));
            rows.push((chunk.kind(r), k.value(r), value(&x), value(&n)));
        }
    }
    (rows, out.sizes())
}

#[test]
fn elements_carry_their_rows_kind_and_a_left_correlate_pads_empty_collections() {
    use RowKind::*;
    let input = || {
        chunk(
            &[
                (1, Some(vec![10, 20])),
                (2, None),
                (3, Some(vec![])),
                (4, Some(vec![40])),
            ],
            vec![Insert, UpdateBefore, UpdateAfter, Delete],
        )
    };
    let (inner, _) = run(operator(false), input());
    assert_eq!(
        inner,
        [
            (Insert, 1, Some(10), Some(1)),
            (Insert, 1, Some(20), Some(2)),
            (Delete, 4, Some(40), Some(1)),
        ]
    );
    let (left, _) = run(operator(true), input());
    assert_eq!(
        left,
        [
            (Insert, 1, Some(10), Some(1)),
            (Insert, 1, Some(20), Some(2)),
            (UpdateBefore, 2, None, None),
            (UpdateAfter, 3, None, None),
            (Delete, 4, Some(40), Some(1)),
        ]
    );
}

/// A collection longer than a chunk holds leaves in pieces, every element once, in order.
#[test]
fn a_long_collection_leaves_in_pieces() {
    let n = PIECE_ROWS * 2 + 5;
    let xs: Vec<i32> = (0..n as i32).collect();
    let (rows, chunks) = run(
        operator(false),
        chunk(
            &[(7, Some(xs)), (8, Some(vec![1]))],
            vec![RowKind::Insert; 2],
        ),
    );
    assert_eq!(chunks, [PIECE_ROWS, PIECE_ROWS, 6]);
    assert_eq!(rows.len(), n + 1);
    assert!(
        rows[..n]
            .iter()
            .enumerate()
            .all(|(i, r)| r.1 == 7 && r.2 == Some(i as i32) && r.3 == Some(i as i32 + 1))
    );
    assert_eq!(rows[n], (RowKind::Insert, 8, Some(1), Some(1)));
}

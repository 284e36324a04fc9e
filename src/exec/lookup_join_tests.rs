//! Operator tests: a lookup join's pairs, row kinds passed through, NULL keys, a left
//! join's padding, and the residual deciding pairs.

use super::*;
use crate::exec::test_harness::{chunk, run_script, schema};
use crate::types::chunk::runtime_schema;
use crate::types::{DataType, Schema, TypeKind};

fn input() -> Schema {
    schema(&[("k", TypeKind::BigInt), ("v", TypeKind::VarChar(10))])
}

fn table() -> Schema {
    schema(&[("key", TypeKind::BigInt), ("value", TypeKind::VarChar(10))])
}

fn output() -> Schema {
    let mut fields = input().fields;
    fields.extend(table().fields);
    Schema::new(fields)
}

fn operator(keeps_unmatched: bool, residual: Option<ScalarExpr>) -> LookupJoinOperator {
    let rows = chunk(
        &table(),
        "+I 1 | one\n+I 2 | two\n+I 2 | deux\n+I NULL | none",
    )
    .batch;
    let table = Arc::new(LookupTable::new(rows, &[0]).unwrap());
    LookupJoinOperator::new(
        table,
        vec![0],
        keeps_unmatched,
        residual,
        runtime_schema(&output()),
        EvalContext::for_tests(0),
    )
    .unwrap()
}

#[test]
fn each_row_joins_the_rows_of_its_key_with_its_own_kind() {
    let got = run_script(
        &mut operator(false, None),
        &input(),
        &output(),
        "+I 2 | a\n-U 1 | b\n+U 3 | c\n+I NULL | d",
    )
    .unwrap();
    assert_eq!(
        got,
        "+I 2 | a | 2 | two\n+I 2 | a | 2 | deux\n-U 1 | b | 1 | one"
    );
}

#[test]
fn a_left_join_pads_rows_without_a_match_and_the_residual_decides_pairs() {
    // value <> 'one': key 2's rows pass; key 1's one row fails, so its row is unmatched.
    let residual = ScalarExpr::Call {
        function: crate::function::lookup("<>").unwrap(),
        args: vec![
            ScalarExpr::Column {
                index: 3,
                data_type: DataType::nullable(TypeKind::VarChar(10)),
            },
            ScalarExpr::Literal {
                value: crate::types::value::Value::String("one".into()),
                data_type: DataType::not_null(TypeKind::VarChar(10)),
            },
        ],
        data_type: DataType::nullable(TypeKind::Boolean),
    };
    let got = run_script(
        &mut operator(true, Some(residual)),
        &input(),
        &output(),
        "+I 2 | a\n+I 1 | b\n+I 3 | c\n+I NULL | d",
    )
    .unwrap();
    assert_eq!(
        got,
        "+I 2 | a | 2 | two\n+I 2 | a | 2 | deux\n+I 1 | b | NULL | NULL\n+I 3 | c | NULL | NULL\n+I NULL | d | NULL | NULL"
    );
}

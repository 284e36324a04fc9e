//! Scalar and table functions written in Rust and registered through the embedded API
//! (issue 23 items 6 and 7): typed by their own signature with the binder's casts, computed a
//! batch at a time, shown in plans by their lower-case name; `CREATE FUNCTION … AS '<java
//! class>'` refused unless the program registered the name; wrong results fail the job by
//! name. A table function is joined with its rows by `LATERAL TABLE`; an aggregate function
//! is called as any aggregate, its state checkpointed through its own bytes.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array};
use tideline::api::{
    ScalarFunction, Signature, StreamTableEnvironment, TableFunction, TableRows, TableSignature,
    UserAccumulator, UserAggregateFunction,
};
use tideline::types::{DataType, Field, TypeKind};

/// Nexmark's `count_char(text, char)`: how many times the character occurs in the text.
struct CountChar;

impl ScalarFunction for CountChar {
    fn signature(&self, args: &[DataType]) -> Result<Signature, String> {
        if args.len() != 2 || !args.iter().all(|a| a.kind.is_string()) {
            return Err("count_char takes two strings".into());
        }
        Ok(Signature::new(
            vec![DataType::string(), DataType::string()],
            DataType::nullable(TypeKind::BigInt),
        ))
    }

    fn eval(&self, args: &[ArrayRef], _rows: usize) -> Result<ArrayRef, String> {
        let (text, needle) = (args[0].as_string::<i32>(), args[1].as_string::<i32>());
        let counts: Int64Array = text
            .iter()
            .zip(needle.iter())
            .map(|(t, n)| {
                let c = n?.chars().next()?;
                Some(t?.chars().filter(|&x| x == c).count() as i64)
            })
            .collect();
        Ok(Arc::new(counts))
    }
}

/// Returns an INT column where it promised BIGINT.
struct Liar;

impl ScalarFunction for Liar {
    fn signature(&self, _args: &[DataType]) -> Result<Signature, String> {
        Ok(Signature::new(vec![], DataType::nullable(TypeKind::BigInt)))
    }

    fn eval(&self, _args: &[ArrayRef], rows: usize) -> Result<ArrayRef, String> {
        Ok(Arc::new(arrow_array::Int32Array::from(vec![1; rows])))
    }
}

/// Fails on a negative argument with its own message.
struct Checked;

impl ScalarFunction for Checked {
    fn signature(&self, args: &[DataType]) -> Result<Signature, String> {
        let nullable = args.iter().any(|a| a.nullable);
        Ok(Signature::new(
            vec![DataType {
                kind: TypeKind::BigInt,
                nullable,
            }],
            DataType {
                kind: TypeKind::BigInt,
                nullable,
            },
        ))
    }

    fn eval(&self, args: &[ArrayRef], _rows: usize) -> Result<ArrayRef, String> {
        let values = args[0].as_primitive::<arrow_array::types::Int64Type>();
        if values.iter().flatten().any(|v| v < 0) {
            return Err("negative input".into());
        }
        Ok(args[0].clone())
    }
}

fn env() -> StreamTableEnvironment {
    let mut env = StreamTableEnvironment::new();
    env.create_temporary_function("count_char", CountChar)
        .unwrap();
    env.execute_sql(
        "SET 'sql-client.execution.result-mode' = 'tableau';
         SET 'execution.runtime-mode' = 'batch';
         CREATE TEMPORARY VIEW t(s, n) AS VALUES ('abcabc', 1), ('xyz', -2), (CAST(NULL AS STRING), 3);",
    )
    .unwrap();
    env
}

#[test]
fn a_registered_function_is_called_by_name_in_any_case() {
    let mut env = env();
    let out = env
        .execute_sql("SELECT s, count_char(s, 'c') AS c, COUNT_CHAR(s, 'x') AS x FROM t;")
        .unwrap();
    assert_eq!(
        out,
        "\
+--------+--------+--------+
|      s |      c |      x |
+--------+--------+--------+
| abcabc |      2 |      0 |
|    xyz |      0 |      1 |
| <NULL> | <NULL> | <NULL> |
+--------+--------+--------+
3 rows in set
"
    );
}

#[test]
fn a_flink_scripts_create_function_leaves_the_registered_one_in_place() {
    let mut env = env();
    env.execute_sql("CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar';")
        .unwrap();
    let out = env
        .execute_sql("SELECT SUM(count_char(s, 'a')) FROM t;")
        .unwrap();
    assert!(out.contains("|      2 |"), "{out}");
    // Without a registered implementation, the class cannot run here: a clear refusal.
    let err = env
        .execute_sql("CREATE FUNCTION other AS 'com.example.Other' LANGUAGE SCALA;")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot create function 'other' from the SCALA class 'com.example.Other'")
            && err.contains("create_temporary_function"),
        "{err}"
    );
    let err = env
        .execute_sql("CREATE TEMPORARY SYSTEM FUNCTION count_char AS 'x.Y';")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("A function named 'count_char' does already exist."),
        "{err}"
    );
}

#[test]
fn calls_are_typed_by_the_functions_signature() {
    let mut env = env();
    env.create_temporary_function("checked", Checked).unwrap();
    // An INT argument is cast to the BIGINT the signature asks for.
    let out = env
        .execute_sql("SELECT checked(n) FROM t WHERE n > 0;")
        .unwrap();
    assert!(
        out.contains("|      1 |") && out.contains("|      3 |"),
        "{out}"
    );
    let err = env
        .execute_sql("SELECT count_char(n, 'c') FROM t;")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Cannot apply 'count_char'") && err.contains("count_char takes two strings"),
        "{err}"
    );
    let plan = env
        .execute_sql("EXPLAIN SELECT count_char(s, 'c') FROM t;")
        .unwrap();
    assert!(plan.contains("count_char(s, 'c')"), "{plan}");
    let listed = env.execute_sql("SHOW USER FUNCTIONS;").unwrap();
    assert!(
        listed.contains(" checked |")
            && listed.contains(" count_char |")
            && !listed.contains(" upper |"),
        "{listed}"
    );
}

#[test]
fn a_wrong_result_or_a_failure_fails_the_job_naming_the_function() {
    let mut env = env();
    env.create_temporary_function("liar", Liar).unwrap();
    env.create_temporary_function("checked", Checked).unwrap();
    let err = env
        .execute_sql("SELECT liar() FROM t;")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("function liar returned 3 values of Arrow type Int32"),
        "{err}"
    );
    let err = env
        .execute_sql("SELECT checked(n) FROM t;")
        .unwrap_err()
        .to_string();
    assert!(err.contains("checked: negative input"), "{err}");
    let err = env
        .create_temporary_function("count_char", CountChar)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does already exist"), "{err}");
    assert!(env.create_temporary_function("1abc", Liar).is_err());
}

#[test]
fn a_registered_function_runs_in_a_streaming_job_at_parallelism_two() {
    let mut env = env();
    let out = env
        .execute_sql(
            "SET 'execution.runtime-mode' = 'streaming';
             SET 'parallelism.default' = '2';
             CREATE TABLE gen (s STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '50000', 'fields.s.length' = '20');
             SELECT COUNT(*) AS n, SUM(count_char(s, 'a')) >= 0 AS ok FROM gen;",
        )
        .unwrap();
    let last = out
        .lines()
        .rev()
        .find(|l| l.contains("| +U") || l.contains("| +I"))
        .unwrap_or("");
    assert!(last.contains("50000") && last.contains("TRUE"), "{out}");
}

/// `split(text, separator)`: one row per piece, `(word STRING, len INT)`; none for a NULL
/// text.
struct Split;

impl TableFunction for Split {
    fn signature(&self, args: &[DataType]) -> Result<TableSignature, String> {
        if args.len() != 2 || !args.iter().all(|a| a.kind.is_string()) {
            return Err("split takes a text and a separator".into());
        }
        Ok(TableSignature {
            args: vec![DataType::string(), DataType::string()],
            columns: vec![
                Field::new("word", DataType::string()),
                Field::new("len", DataType::nullable(TypeKind::Int)),
            ],
        })
    }

    fn eval(&self, args: &[ArrayRef], rows: usize) -> Result<TableRows, String> {
        let (text, separator) = (args[0].as_string::<i32>(), args[1].as_string::<i32>());
        let (mut input_rows, mut words, mut lens) = (Vec::new(), Vec::new(), Vec::new());
        for row in 0..rows {
            if text.is_null(row) || separator.is_null(row) {
                continue;
            }
            for word in text.value(row).split(separator.value(row)) {
                input_rows.push(row as u32);
                words.push(word.to_string());
                lens.push(word.chars().count() as i32);
            }
        }
        Ok(TableRows {
            input_rows,
            columns: vec![
                Arc::new(arrow_array::StringArray::from(words)),
                Arc::new(arrow_array::Int32Array::from(lens)),
            ],
        })
    }
}

/// Gives its rows out of input order.
struct Backwards;

impl TableFunction for Backwards {
    fn signature(&self, _args: &[DataType]) -> Result<TableSignature, String> {
        Ok(TableSignature {
            args: vec![DataType::nullable(TypeKind::Int)],
            columns: vec![Field::new("x", DataType::nullable(TypeKind::Int))],
        })
    }

    fn eval(&self, _args: &[ArrayRef], rows: usize) -> Result<TableRows, String> {
        let input_rows: Vec<u32> = (0..rows as u32).rev().collect();
        Ok(TableRows {
            columns: vec![Arc::new(arrow_array::Int32Array::from(vec![1; rows]))],
            input_rows,
        })
    }
}

fn split_env() -> StreamTableEnvironment {
    let mut env = env();
    env.create_temporary_table_function("split", Split).unwrap();
    env.execute_sql(
        "CREATE TEMPORARY VIEW lines(id, line) AS VALUES (1, 'a bb ccc'), (2, ''), (3, CAST(NULL AS STRING)), (4, 'dd');",
    )
    .unwrap();
    env
}

#[test]
fn lateral_table_joins_each_row_with_the_functions_rows() {
    let mut env = split_env();
    let out = env
        .execute_sql(
            "SELECT id, word, len FROM lines, LATERAL TABLE(split(line, ' ')) AS t(word, len);",
        )
        .unwrap();
    assert_eq!(
        out,
        "\
+----+------+-----+
| id | word | len |
+----+------+-----+
|  1 |    a |   1 |
|  1 |   bb |   2 |
|  1 |  ccc |   3 |
|  2 |      |   0 |
|  4 |   dd |   2 |
+----+------+-----+
5 rows in set
"
    );
    // LEFT JOIN … ON TRUE keeps a row without results once; the function's own names
    // stand without an alias list; a WHERE on its columns filters the pairs.
    let out = env
        .execute_sql(
            "SELECT id, w.word, w.len FROM lines LEFT JOIN LATERAL TABLE(split(line, ' ')) AS w ON TRUE WHERE id > 2;",
        )
        .unwrap();
    assert_eq!(
        out,
        "\
+----+--------+--------+
| id |   word |    len |
+----+--------+--------+
|  3 | <NULL> | <NULL> |
|  4 |     dd |      2 |
+----+--------+--------+
2 rows in set
"
    );
    let out = env
        .execute_sql(
            "SELECT id, word FROM lines CROSS JOIN LATERAL TABLE(split(line, ' ')) AS t(word, len) WHERE len > 1;",
        )
        .unwrap();
    assert!(
        out.contains("|  1 |   bb |") && out.contains("|  4 |   dd |") && out.contains("3 rows"),
        "{out}"
    );
    let plan = env
        .execute_sql(
            "EXPLAIN SELECT id, word FROM lines, LATERAL TABLE(split(line, ' ')) AS t(word, len);",
        )
        .unwrap();
    assert!(
        plan.contains("LogicalTableFunctionScan(invocation=[split($cor")
            && plan.contains("Correlate(invocation=[split(")
            && plan.contains("joinType=[INNER]"),
        "{plan}"
    );
}

#[test]
fn lateral_table_calls_are_checked_and_broken_results_fail_by_name() {
    let mut env = split_env();
    env.create_temporary_table_function("backwards", Backwards)
        .unwrap();
    let err = env
        .execute_sql("SELECT * FROM lines, LATERAL TABLE(split(id, ' '));")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Cannot apply 'split'") && err.contains("split takes a text and a separator"),
        "{err}"
    );
    let err = env
        .execute_sql("SELECT * FROM lines, LATERAL TABLE(nosuch(line));")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("No match found for function signature nosuch(<CHARACTER>)"),
        "{err}"
    );
    let err = env
        .execute_sql("SELECT * FROM lines, LATERAL TABLE(split(line, ' ')) AS t(only_one);")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("List of column aliases must have same degree"),
        "{err}"
    );
    let err = env
        .execute_sql("SELECT * FROM lines, LATERAL TABLE(backwards(id));")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("table function backwards returned input row") && err.contains("input order"),
        "{err}"
    );
    let err = env
        .create_temporary_table_function("count_char", Split)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does already exist"), "{err}");
}

#[test]
fn a_table_function_runs_in_a_streaming_job_at_parallelism_two() {
    let mut env = split_env();
    let out = env
        .execute_sql(
            "SET 'execution.runtime-mode' = 'streaming';
             SET 'parallelism.default' = '2';
             CREATE TABLE gen (id BIGINT, s STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '20000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000', 'fields.s.length' = '3');
             SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids FROM gen, LATERAL TABLE(split(CONCAT(s, ',', s), ','));",
        )
        .unwrap();
    let last = out
        .lines()
        .rev()
        .find(|l| l.contains("| +U") || l.contains("| +I"))
        .unwrap_or("");
    assert!(last.contains("40000") && last.contains("20000"), "{out}");
}

/// `sum_sq(x)`: the sum of the squares of a BIGINT, NULLs skipped; NULL for a group without
/// values. Takes retractions.
struct SumOfSquares;

#[derive(Default)]
struct SumOfSquaresState {
    sums: Vec<i64>,
    counts: Vec<i64>,
}

impl UserAggregateFunction for SumOfSquares {
    fn signature(&self, args: &[DataType]) -> Result<Signature, String> {
        if args.len() != 1 || !args[0].kind.is_integer() {
            return Err("sum_sq takes one integer".into());
        }
        Ok(Signature::new(
            vec![DataType::nullable(TypeKind::BigInt)],
            DataType::nullable(TypeKind::BigInt),
        ))
    }

    fn accumulator(&self) -> Box<dyn UserAccumulator> {
        Box::new(SumOfSquaresState::default())
    }

    fn takes_retractions(&self) -> bool {
        true
    }
}

impl SumOfSquaresState {
    fn add(&mut self, args: &[ArrayRef], rows: &[u32], groups: &[u32], sign: i64) {
        let x = args[0].as_primitive::<arrow_array::types::Int64Type>();
        for (&row, &group) in rows.iter().zip(groups) {
            if x.is_valid(row as usize) {
                let v = x.value(row as usize);
                self.sums[group as usize] += sign * v * v;
                self.counts[group as usize] += sign;
            }
        }
    }
}

impl UserAccumulator for SumOfSquaresState {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, args: &[ArrayRef], rows: &[u32], groups: &[u32]) -> Result<(), String> {
        self.add(args, rows, groups, 1);
        Ok(())
    }
    fn retract(&mut self, args: &[ArrayRef], rows: &[u32], groups: &[u32]) -> Result<(), String> {
        self.add(args, rows, groups, -1);
        Ok(())
    }
    fn merge(&mut self, into: u32, from: u32) {
        self.sums[into as usize] += self.sums[from as usize];
        self.counts[into as usize] += self.counts[from as usize];
    }
    fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef, String> {
        Ok(Arc::new(Int64Array::from_iter(groups.iter().map(|&g| {
            (self.counts[g as usize] > 0).then_some(self.sums[g as usize])
        }))))
    }
    fn free(&mut self, group: u32) {
        self.sums[group as usize] = 0;
        self.counts[group as usize] = 0;
    }
    fn save(&self, group: u32) -> Vec<u8> {
        let mut out = self.sums[group as usize].to_le_bytes().to_vec();
        out.extend(self.counts[group as usize].to_le_bytes());
        out
    }
    fn load(&mut self, group: u32, state: &[u8]) -> Result<(), String> {
        let bytes: [u8; 16] = state.try_into().map_err(|_| "not 16 bytes".to_string())?;
        self.sums[group as usize] = i64::from_le_bytes(bytes[..8].try_into().unwrap());
        self.counts[group as usize] = i64::from_le_bytes(bytes[8..].try_into().unwrap());
        Ok(())
    }
}

fn aggregate_env() -> StreamTableEnvironment {
    let mut env = env();
    env.create_temporary_aggregate_function("sum_sq", SumOfSquares)
        .unwrap();
    env.execute_sql(
        "CREATE TEMPORARY VIEW v(k, x) AS VALUES ('a', 1), ('a', 2), ('b', 3), ('b', CAST(NULL AS INT)), ('c', CAST(NULL AS INT)), ('a', 2);",
    )
    .unwrap();
    env
}

#[test]
fn an_aggregate_function_groups_filters_and_counts_distinct_values() {
    let mut env = aggregate_env();
    let out = env
        .execute_sql(
            "SELECT k, sum_sq(x) AS s, SUM_SQ(DISTINCT x) AS d, sum_sq(x) FILTER (WHERE x > 1) AS f FROM v GROUP BY k;",
        )
        .unwrap();
    assert_eq!(
        out,
        "\
+---+--------+--------+--------+
| k |      s |      d |      f |
+---+--------+--------+--------+
| a |      9 |      5 |      8 |
| b |      9 |      9 |      9 |
| c | <NULL> | <NULL> | <NULL> |
+---+--------+--------+--------+
3 rows in set
"
    );
    let plan = env
        .execute_sql("EXPLAIN SELECT k, sum_sq(x) FROM v GROUP BY k;")
        .unwrap();
    assert!(
        plan.contains("sum_sq($1)") || plan.contains("sum_sq(x)"),
        "{plan}"
    );
    let err = env
        .execute_sql("SELECT sum_sq(k) FROM v;")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Cannot apply 'sum_sq'") && err.contains("sum_sq takes one integer"),
        "{err}"
    );
}

#[test]
fn an_aggregate_function_takes_updates_back_and_runs_in_windows() {
    let mut env = aggregate_env();
    // Over an updating input (a GROUP BY's results): each update retracts the old value.
    let out = env
        .execute_sql(
            "SET 'execution.runtime-mode' = 'streaming';
             SET 'parallelism.default' = '2';
             SELECT sum_sq(c) AS s FROM (SELECT k, COUNT(*) AS c FROM v GROUP BY k);",
        )
        .unwrap();
    let last = out
        .lines()
        .rev()
        .find(|l| l.contains("| +U") || l.contains("| +I"))
        .unwrap_or("");
    // Final counts a=3, b=2, c=1: 9 + 4 + 1.
    assert!(last.contains(" 14 |"), "{out}");
    let out = env
        .execute_sql(
            "CREATE TABLE gen (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
             SELECT TUMBLE_START(ts, INTERVAL '1' SECOND) AS w, sum_sq(MOD(id, 10)) AS s, COUNT(*) AS n FROM gen GROUP BY TUMBLE(ts, INTERVAL '1' SECOND);",
        )
        .unwrap();
    // Each full second holds 1,000 ids: 100 of each last digit, 100 * (0 + 1 + … + 81).
    let full = out.lines().filter(|l| l.contains(" 28500 |")).count();
    assert_eq!(full, 3, "{out}");
}

#[test]
fn an_aggregate_function_runs_over_bounded_and_unbounded_over_windows() {
    let mut env = aggregate_env();
    let out = env
        .execute_sql(
            "SET 'execution.runtime-mode' = 'streaming';
             SET 'pipeline.auto-watermark-interval' = '0 ms';
             CREATE TABLE seq (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '5', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5');
             SELECT id, sum_sq(id) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS two, sum_sq(id) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS again FROM seq;",
        )
        .unwrap();
    // The last two ids' squares: 1, 1 + 4, 4 + 9, 9 + 16, 16 + 25.
    for (id, two) in [(1, 1), (2, 5), (3, 13), (4, 25), (5, 41)] {
        let row = format!("| +I | {id:>20} | {two:>20} | {two:>20} |");
        assert!(out.contains(&row), "{row}\n{out}");
    }
    let out = env
        .execute_sql("SELECT id, sum_sq(id) OVER (ORDER BY ts) AS running FROM seq;")
        .unwrap();
    assert!(
        out.contains("|                    5 |                   55 |"),
        "{out}"
    );
}

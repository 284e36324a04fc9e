//! Where errors point, as the client prints them: Flink 2.3's messages and positions (line
//! and column, the column counted in UTF-16 units as Java counts them), and a caret line
//! that copies the source line's tabs and has one space per other character, so that it
//! stands under the character whatever the terminal's tab width or the bytes of `é`.
//! Expected texts are Flink's answers (docs/flink-2.3-oracle-findings.md, "Binder and
//! evaluation").

use tideline::client::{Session, render_error};
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

/// The error of the script's last statement (the earlier ones must succeed), as printed.
fn error_of(script: &str) -> String {
    let mut session = Session::default();
    let (statements, _) = split_statements(script);
    let mut out = Vec::new();
    for (i, stmt) in statements.iter().enumerate() {
        let result = parse_statement(stmt)
            .map_err(Into::into)
            .and_then(|parsed| tideline::client::execute(&mut session, &parsed, &mut out));
        match result {
            Ok(()) if i + 1 < statements.len() => {}
            Ok(()) => panic!("the last statement succeeded: {script}"),
            Err(e) => {
                assert_eq!(i + 1, statements.len(), "statement {i} failed: {script}");
                let text = render_error(&e, script);
                return text
                    .strip_prefix("[ERROR] Could not execute SQL statement. Reason:\n")
                    .unwrap_or(&text)
                    .to_string();
            }
        }
    }
    panic!("no statement in {script}")
}

fn assert_error(script: &str, expected: &str) {
    assert_eq!(error_of(script), expected, "for {script}");
}

#[test]
fn odd_binary_literal() {
    assert_error(
        "SELECT X'4';",
        "Binary literal string must contain an even number of hexits\n  at line 1, column 8:\n  SELECT X'4';\n         ^",
    );
    assert_error(
        "SELECT\n  1,\n  x'123';",
        "Binary literal string must contain an even number of hexits\n  at line 3, column 3:\n    x'123';\n    ^",
    );
}

#[test]
fn carets_count_characters_and_keep_tabs() {
    assert_error(
        "SELECT 'é', nosuch;",
        "Column 'nosuch' not found in any table\n  at line 1, column 13:\n  SELECT 'é', nosuch;\n              ^",
    );
    assert_error(
        "SELECT 'ééé',\n 'é', nosuch;",
        "Column 'nosuch' not found in any table\n  at line 2, column 7:\n   'é', nosuch;\n        ^",
    );
    assert_error(
        "SELECT\t\t'a',\tnosuch;",
        "Column 'nosuch' not found in any table\n  at line 1, column 14:\n  SELECT\t\t'a',\tnosuch;\n        \t\t    \t^",
    );
    // Java counts the emoji as two columns; the caret stays under the character.
    assert_error(
        "SELECT '😀', nosuch;",
        "Column 'nosuch' not found in any table\n  at line 1, column 14:\n  SELECT '😀', nosuch;\n              ^",
    );
}

#[test]
fn errors_at_the_end_of_the_input_point_at_its_last_character() {
    assert_error(
        "SELECT 1 +;",
        "syntax error: expected: an expression, found: EOF\n  at line 1, column 10:\n  SELECT 1 +;\n           ^",
    );
    assert_error(
        "SELECT 1 FROM t WHERE  ;",
        "syntax error: expected: an expression, found: EOF\n  at line 1, column 21:\n  SELECT 1 FROM t WHERE  ;\n                      ^",
    );
    assert_error(
        "SELECT (1",
        "syntax error: expected: ), found: EOF\n  at line 1, column 9:\n  SELECT (1\n          ^",
    );
}

#[test]
fn nesting_past_the_parser_limit_has_a_position() {
    let sql = format!("SELECT {}1{};", "(".repeat(3_000), ")".repeat(3_000));
    let err = error_of(&sql);
    assert!(
        err.starts_with("syntax error: statement is nested too deeply\n  at line 1, column "),
        "{err}"
    );
}

#[test]
fn empty_array_constructor() {
    assert_error(
        "SELECT 1, ARRAY[] AS e;",
        "Require at least 1 argument\n  at line 1, column 11:\n  SELECT 1, ARRAY[] AS e;\n            ^",
    );
}

#[test]
fn primary_key_columns() {
    assert_error(
        "CREATE TABLE pk (a INT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'datagen');",
        "Primary key column 'b' is not defined in the schema\n  at line 1, column 38:\n  CREATE TABLE pk (a INT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'datagen');\n                                       ^",
    );
    assert_error(
        "CREATE TABLE pk (a INT, b AS a + 1, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'datagen');",
        "Could not create a PRIMARY KEY with column 'b'\n  at line 1, column 50:\n  CREATE TABLE pk (a INT, b AS a + 1, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'datagen');\n                                                   ^",
    );
    let err = error_of(
        "CREATE TABLE pk (a INT, PRIMARY KEY (a, a) NOT ENFORCED) WITH ('connector' = 'datagen');",
    );
    assert!(
        err.starts_with("Invalid primary key 'PK_a_a'. A primary key must not contain duplicate columns. Found: [a]\n"),
        "{err}"
    );
    let err = error_of(
        "CREATE TABLE pk (a INT PRIMARY KEY NOT ENFORCED, b INT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'datagen');",
    );
    assert!(err.contains("duplicate primary key definition"), "{err}");
}

#[test]
fn empty_options_hint() {
    assert_error(
        "CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\nSELECT * FROM t /*+ OPTIONS() */;",
        "Hint [OPTIONS] only support non empty key value options\n  at line 2, column 17:\n  SELECT * FROM t /*+ OPTIONS() */;\n                  ^",
    );
}

#[test]
fn numeric_literals_out_of_range() {
    for (literal, shown) in [
        ("9223372036854775808", "9223372036854775808"),
        ("99999999999999999999", "99999999999999999999"),
        ("1234567890123456789.5", "1234567890123456789.5"),
        ("92233720368547758.08", "92233720368547758.08"),
        ("1e400", "1E400"),
    ] {
        let err = error_of(&format!("SELECT 1, {literal};"));
        assert_eq!(
            err.lines().take(2).collect::<Vec<_>>(),
            [
                format!("Numeric literal '{shown}' out of range").as_str(),
                "  at line 1, column 11:"
            ],
            "{literal}"
        );
    }
    let err = error_of("SELECT -9223372036854775809;");
    assert!(
        err.starts_with("Numeric literal '-9223372036854775809' out of range\n"),
        "{err}"
    );
}

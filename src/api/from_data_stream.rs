//! A stream's schema declaration resolved into a table, by the rules of Flink's
//! `FieldInfoUtils` (the legacy `fromDataStream(stream, Expression...)` path), messages
//! included:
//!
//! - **By position** when no plain reference names a field of the stream: the i-th
//!   expression renames the i-th field; a rowtime attribute at a field's position replaces it
//!   (the field must be BIGINT or a time type), one past the fields appends a new column; a
//!   proctime attribute can only come after the stream's fields.
//! - **By name** otherwise: references pick (and order) fields; a rowtime attribute replaces
//!   the field of its name or adds a column where it stands; a proctime attribute must not
//!   name an existing field.
//!
//! At most one rowtime and one proctime attribute. A rowtime column holds the rows' event
//! timestamps, `TIMESTAMP(3)` (a DataStream has no time zone); a proctime column is
//! `TIMESTAMP_LTZ(3)`, computed by PROCTIME() when read.

use sqlparser::parser::Parser;

use super::ApiError;
use super::expression::{Expression, ExpressionKind};
use crate::catalog::{ColumnSource, TableColumn};
use crate::connector::source::stream::StreamColumn;
use crate::sql::dialect::FlinkDialect;
use crate::types::{DataType, Schema, TimeAttribute, TypeKind};

/// The table's columns, and where each physical one comes from.
pub(super) fn resolve(
    stream: &Schema,
    exprs: &[Expression],
) -> Result<(Vec<TableColumn>, Vec<StreamColumn>), ApiError> {
    let names: Vec<&str> = stream.fields.iter().map(|f| f.name.as_str()).collect();
    let by_position = exprs
        .iter()
        .all(|e| e.kind != ExpressionKind::Reference || !names.contains(&e.name.as_str()));
    let mut columns = Vec::with_capacity(exprs.len());
    let mut sources = Vec::new();
    for (index, expr) in exprs.iter().enumerate() {
        let existing = if by_position {
            (index < names.len()).then_some(index)
        } else {
            names.iter().position(|n| *n == expr.name)
        };
        let column = match expr.kind {
            ExpressionKind::Reference => {
                let Some(field) = existing else {
                    return Err(ApiError::Validation(if by_position {
                        format!(
                            "Number of expressions does not match number of input fields.\nAvailable fields: [{}]\nCould not map: {expr}",
                            names.join(", ")
                        )
                    } else {
                        format!(
                            "{} is not a field of type {}. Expected: {}}}",
                            expr.name,
                            java_row_type(stream),
                            names.join(", ")
                        )
                    }));
                };
                sources.push(StreamColumn::Field(field));
                physical(&expr.name, stream.fields[field].data_type.clone(), None)
            }
            ExpressionKind::Rowtime => {
                if let Some(field) = existing {
                    check_rowtime_type(&stream.fields[field].data_type)?;
                }
                sources.push(StreamColumn::Rowtime);
                physical(
                    &expr.name,
                    DataType::nullable(TypeKind::Timestamp(3)),
                    Some(TimeAttribute::Rowtime),
                )
            }
            ExpressionKind::Proctime => {
                if existing.is_some() {
                    return Err(ApiError::Validation(if by_position {
                        format!(
                            "The proctime attribute can only be appended to the table schema and not replace an existing field. Please move '{expr}' to the end of the schema."
                        )
                    } else {
                        format!(
                            "The proctime attribute '{}' must not replace an existing field.",
                            expr.name
                        )
                    }));
                }
                proctime(&expr.name)
            }
        };
        columns.push(column);
    }
    for (attribute, word) in [
        (TimeAttribute::Rowtime, "rowtime"),
        (TimeAttribute::Proctime, "proctime"),
    ] {
        let named: Vec<&str> = columns
            .iter()
            .filter(|c| c.time_attribute == Some(attribute))
            .map(|c| c.name.as_str())
            .collect();
        if named.len() > 1 {
            // Flink lists its internal field objects here; the names say more.
            return Err(ApiError::Validation(format!(
                "The {word} attribute can only be defined once in a table schema. Duplicated {word} attributes: [{}]",
                named.join(", ")
            )));
        }
    }
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].iter().any(|o| o.name == c.name) {
            return Err(ApiError::Validation(format!(
                "Field names must be unique. Duplicate field: '{}'",
                c.name
            )));
        }
    }
    Ok((columns, sources))
}

fn physical(name: &str, data_type: DataType, time_attribute: Option<TimeAttribute>) -> TableColumn {
    TableColumn {
        name: name.to_string(),
        data_type,
        source: ColumnSource::Physical,
        time_attribute,
        comment: None,
    }
}

/// A proctime column: PROCTIME() evaluated as the row is read, nullable as Flink types the
/// attribute of a converted stream.
fn proctime(name: &str) -> TableColumn {
    let expr = Parser::new(&FlinkDialect)
        .try_with_sql("PROCTIME()")
        .and_then(|mut p| p.parse_expr())
        .expect("PROCTIME() parses");
    TableColumn {
        name: name.to_string(),
        data_type: DataType::nullable(TypeKind::TimestampLtz(3)),
        source: ColumnSource::Computed {
            expr,
            text: "PROCTIME()".into(),
        },
        time_attribute: Some(TimeAttribute::Proctime),
        comment: None,
    }
}

/// Flink's `checkRowtimeType`: a replaced field must be a `Long` or a SQL time type.
fn check_rowtime_type(data_type: &DataType) -> Result<(), ApiError> {
    match data_type.kind {
        TypeKind::BigInt | TypeKind::Date | TypeKind::Time(_) | TypeKind::Timestamp(_) => Ok(()),
        _ => Err(ApiError::Validation(format!(
            "The rowtime attribute can only replace a field with a valid time type, such as Timestamp or Long. But was: {}",
            java_type_name(data_type)
        ))),
    }
}

/// The stream's type as Flink's `RowTypeInfo` prints it: `Row(user_name: String, ts: Long)`.
fn java_row_type(schema: &Schema) -> String {
    let fields: Vec<String> = schema
        .fields
        .iter()
        .map(|f| format!("{}: {}", f.name, java_type_name(&f.data_type)))
        .collect();
    format!("Row({})", fields.join(", "))
}

/// The name Flink's legacy type information prints for a field's type.
fn java_type_name(data_type: &DataType) -> String {
    match &data_type.kind {
        TypeKind::Boolean => "Boolean".into(),
        TypeKind::TinyInt => "Byte".into(),
        TypeKind::SmallInt => "Short".into(),
        TypeKind::Int => "Integer".into(),
        TypeKind::BigInt => "Long".into(),
        TypeKind::Float => "Float".into(),
        TypeKind::Double => "Double".into(),
        TypeKind::Decimal { .. } => "BigDecimal".into(),
        TypeKind::Char(_) | TypeKind::VarChar(_) => "String".into(),
        TypeKind::Date => "Date".into(),
        TypeKind::Time(_) => "Time".into(),
        TypeKind::Timestamp(_) => "Timestamp".into(),
        TypeKind::TimestampLtz(_) => "Instant".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::col;
    use crate::types::Field;

    fn stream(fields: &[(&str, TypeKind)]) -> Schema {
        Schema::new(
            fields
                .iter()
                .map(|(n, k)| Field::new(*n, DataType::nullable(k.clone())))
                .collect(),
        )
    }

    fn described(columns: &[TableColumn]) -> Vec<String> {
        columns
            .iter()
            .map(|c| {
                let field = Field {
                    name: c.name.clone(),
                    data_type: c.data_type.clone(),
                    time_attribute: c.time_attribute,
                };
                format!("{} {}", c.name, field.describe_type())
            })
            .collect()
    }

    fn error(stream: &Schema, exprs: &[Expression]) -> String {
        resolve(stream, exprs).unwrap_err().to_string()
    }

    /// Flink 2.3's schemas for seed 000's two options and their by-name forms.
    #[test]
    fn rowtime_is_appended_or_replaces_a_field() {
        let pair = stream(&[
            ("f0", TypeKind::VarChar(crate::types::MAX_LENGTH)),
            ("f1", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ]);
        let (columns, sources) = resolve(
            &pair,
            &[
                col("user_name"),
                col("data"),
                col("user_action_time").rowtime(),
            ],
        )
        .unwrap();
        assert_eq!(
            described(&columns),
            [
                "user_name STRING",
                "data STRING",
                "user_action_time TIMESTAMP(3) *ROWTIME*"
            ]
        );
        assert_eq!(
            sources,
            [
                StreamColumn::Field(0),
                StreamColumn::Field(1),
                StreamColumn::Rowtime
            ]
        );
        let triple = stream(&[
            ("ts", TypeKind::BigInt),
            ("user_name", TypeKind::VarChar(crate::types::MAX_LENGTH)),
            ("data", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ]);
        // By position: the first field (a BIGINT) is replaced.
        let (columns, sources) = resolve(
            &triple,
            &[col("user_action_time").rowtime(), col("a"), col("b")],
        )
        .unwrap();
        assert_eq!(
            described(&columns),
            [
                "user_action_time TIMESTAMP(3) *ROWTIME*",
                "a STRING",
                "b STRING"
            ]
        );
        assert_eq!(
            sources,
            [
                StreamColumn::Rowtime,
                StreamColumn::Field(1),
                StreamColumn::Field(2)
            ]
        );
        // By name: `ts` replaced where it is named; unnamed fields are dropped.
        let (columns, _) = resolve(&triple, &[col("ts").rowtime(), col("data")]).unwrap();
        assert_eq!(
            described(&columns),
            ["ts TIMESTAMP(3) *ROWTIME*", "data STRING"]
        );
        // By name, a new rowtime column where it stands.
        let (columns, _) =
            resolve(&triple, &[col("ts"), col("rt").rowtime(), col("user_name")]).unwrap();
        assert_eq!(
            described(&columns),
            ["ts BIGINT", "rt TIMESTAMP(3) *ROWTIME*", "user_name STRING"]
        );
    }

    #[test]
    fn proctime_is_appended() {
        let pair = stream(&[
            ("f0", TypeKind::VarChar(crate::types::MAX_LENGTH)),
            ("f1", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ]);
        let (columns, sources) =
            resolve(&pair, &[col("a"), col("b"), col("pt").proctime()]).unwrap();
        assert_eq!(
            described(&columns),
            ["a STRING", "b STRING", "pt TIMESTAMP_LTZ(3) *PROCTIME*"]
        );
        // The proctime column is computed, not read from the stream.
        assert_eq!(sources, [StreamColumn::Field(0), StreamColumn::Field(1)]);
        assert!(matches!(columns[2].source, ColumnSource::Computed { .. }));
    }

    /// Flink 2.3's messages (PyFlink's `from_data_stream` over a `Tuple2<String, String>`).
    #[test]
    fn flink_refuses_what_it_refuses() {
        let pair = stream(&[
            ("f0", TypeKind::VarChar(crate::types::MAX_LENGTH)),
            ("f1", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ]);
        let moved = "The proctime attribute can only be appended to the table schema and not replace an existing field. Please move 'proctime(pt)' to the end of the schema.";
        assert_eq!(
            error(&pair, &[col("a"), col("pt").proctime(), col("b")]),
            moved
        );
        assert_eq!(
            error(&pair, &[col("pt").proctime(), col("a"), col("b")]),
            moved
        );
        assert_eq!(
            error(&pair, &[col("f0"), col("f1").proctime()]),
            "The proctime attribute 'f1' must not replace an existing field."
        );
        assert_eq!(
            error(&pair, &[col("a"), col("b"), col("extra")]),
            "Number of expressions does not match number of input fields.\nAvailable fields: [f0, f1]\nCould not map: extra"
        );
        assert_eq!(
            error(&pair, &[col("x"), col("rt").rowtime()]),
            "The rowtime attribute can only replace a field with a valid time type, such as Timestamp or Long. But was: String"
        );
        assert_eq!(
            error(&pair, &[col("f0"), col("nope")]),
            "nope is not a field of type Row(f0: String, f1: String). Expected: f0, f1}"
        );
        assert!(
            error(
                &pair,
                &[col("a"), col("b"), col("r1").rowtime(), col("r2").rowtime()]
            )
            .starts_with("The rowtime attribute can only be defined once in a table schema.")
        );
    }

    /// Name-based, as Flink 2.3 takes it: a proctime column named by no field may stand
    /// anywhere.
    #[test]
    fn a_new_proctime_column_by_name_may_stand_anywhere() {
        let pair = stream(&[
            ("f0", TypeKind::VarChar(crate::types::MAX_LENGTH)),
            ("f1", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ]);
        let (columns, _) = resolve(&pair, &[col("f0"), col("pt").proctime(), col("f1")]).unwrap();
        assert_eq!(
            described(&columns),
            ["f0 STRING", "pt TIMESTAMP_LTZ(3) *PROCTIME*", "f1 STRING"]
        );
    }
}

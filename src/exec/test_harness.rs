//! Operators tested alone with text: chunks written as lines (`+I 1 2024-01-01 00:00:01`,
//! one line a row, fields separated by `|` when a value holds spaces), and what an operator
//! emits recorded as the same lines plus `WM <ms>` for watermarks, in order.

use arrow_array::{ArrayRef, RecordBatch, StringArray};

use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output, WatermarkStatus};
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::text::{format_value, parse_column};
use crate::types::time::SessionZone;
use crate::types::{DataType, Schema};

/// A chunk of `schema`'s columns from lines `<kind> v1 | v2 | …` (`+I`, `-U`, `+U`, `-D`);
/// `NULL` is a null.
pub fn chunk(schema: &Schema, text: &str) -> StreamChunk {
    let zone = SessionZone::new("UTC").expect("UTC");
    let mut kinds = Vec::new();
    let mut fields: Vec<Vec<Option<String>>> = vec![Vec::new(); schema.len()];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        kinds.push(match kind {
            "+I" => RowKind::Insert,
            "-U" => RowKind::UpdateBefore,
            "+U" => RowKind::UpdateAfter,
            "-D" => RowKind::Delete,
            other => panic!("unknown row kind {other}"),
        });
        let values: Vec<&str> = rest.split('|').map(str::trim).collect();
        assert_eq!(values.len(), schema.len(), "fields of {line}");
        for (column, value) in fields.iter_mut().zip(values) {
            column.push((value != "NULL").then(|| value.to_string()));
        }
    }
    let columns: Vec<ArrayRef> = fields
        .into_iter()
        .zip(&schema.fields)
        .map(|(values, field)| {
            let (array, errors) = parse_column(&StringArray::from(values), &field.data_type, &zone);
            assert!(errors.is_empty(), "{errors:?}");
            array
        })
        .collect();
    let batch =
        RecordBatch::try_new(crate::types::chunk::runtime_schema(schema), columns).expect("batch");
    let inserts_only = kinds.iter().all(|k| *k == RowKind::Insert);
    StreamChunk {
        batch,
        kinds: (!inserts_only).then_some(kinds),
    }
}

/// Records what an operator emits as text lines.
pub struct Recorder {
    types: Vec<DataType>,
    pub lines: Vec<String>,
}

impl Recorder {
    pub fn new(schema: &Schema) -> Self {
        Recorder {
            types: schema.fields.iter().map(|f| f.data_type.clone()).collect(),
            lines: Vec::new(),
        }
    }

    /// Everything recorded, one line each, and forgets it.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.lines).join("\n")
    }
}

impl Output for Recorder {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        let zone = SessionZone::new("UTC").expect("UTC");
        for row in 0..chunk.num_rows() {
            let values: Vec<String> = (0..chunk.batch.num_columns())
                .map(|c| {
                    let column: &ArrayRef = chunk.batch.column(c);
                    format_value(column, row, &self.types[c], &zone)
                        .unwrap_or_else(|| "NULL".into())
                })
                .collect();
            self.lines.push(format!(
                "{} {}",
                chunk.kind(row).short_string(),
                values.join(" | ")
            ));
        }
        Ok(())
    }

    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
        self.lines.push(format!("WM {watermark}"));
        Ok(())
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), ExecError> {
        self.lines.push(format!("{status:?}").to_uppercase());
        Ok(())
    }
}

/// A schema from `name TYPE` pairs (`id INT, ts TIMESTAMP(3)`).
pub fn schema(fields: &[(&str, crate::types::TypeKind)]) -> Schema {
    Schema::new(
        fields
            .iter()
            .map(|(name, kind)| crate::types::Field::new(*name, DataType::nullable(kind.clone())))
            .collect(),
    )
}

/// Runs `operator` over a script and returns what it emitted: lines of rows (`+I …`, in
/// `input`'s columns) gather into one chunk until a line of another kind; `--` ends a chunk;
/// `WM <t>` is a watermark and `PT <t>` a processing time reached (`<t>` in milliseconds,
/// a timestamp such as `2020-04-15 20:10:00`, or `MAX`); `END` finishes the input.
pub fn run_script(
    operator: &mut dyn Operator,
    input: &Schema,
    output: &Schema,
    script: &str,
) -> Result<String, ExecError> {
    run_script_on(operator, &[input], output, script)
}

/// [`run_script`] for an operator of several inputs: a line `@<n>` sends the rows after it
/// to input `n` (0 at first).
pub fn run_script_on(
    operator: &mut dyn Operator,
    inputs: &[&Schema],
    output: &Schema,
    script: &str,
) -> Result<String, ExecError> {
    let mut out = Recorder::new(output);
    let mut rows = String::new();
    let mut input = 0;
    let flush =
        |rows: &mut String, operator: &mut dyn Operator, out: &mut Recorder, input: usize| {
            if rows.is_empty() {
                return Ok(());
            }
            let result = operator.process(input, chunk(inputs[input], rows), out);
            rows.clear();
            result
        };
    for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(n) = line.strip_prefix('@') {
            flush(&mut rows, operator, &mut out, input)?;
            input = n.trim().parse().expect("an input number");
        } else if let Some(t) = line.strip_prefix("WM ") {
            flush(&mut rows, operator, &mut out, input)?;
            operator.on_watermark(script_time(t), &mut out)?;
        } else if let Some(t) = line.strip_prefix("PT ") {
            flush(&mut rows, operator, &mut out, input)?;
            operator.on_processing_time(script_time(t), &mut out)?;
        } else if line == "--" {
            flush(&mut rows, operator, &mut out, input)?;
        } else if line == "END" {
            flush(&mut rows, operator, &mut out, input)?;
            operator.finish(&mut out)?;
        } else {
            rows.push_str(line);
            rows.push('\n');
        }
    }
    flush(&mut rows, operator, &mut out, input)?;
    Ok(out.take())
}

/// A script's time: milliseconds, a timestamp (UTC), or `MAX`.
pub fn script_time(text: &str) -> i64 {
    let text = text.trim();
    if text == "MAX" {
        return i64::MAX;
    }
    text.parse().unwrap_or_else(|_| {
        crate::types::time::parse_timestamp(text)
            .unwrap_or_else(|| panic!("a time: {text}"))
            .div_euclid(1_000_000)
    })
}

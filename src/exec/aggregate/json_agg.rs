//! JSON_ARRAYAGG and JSON_OBJECTAGG, as Flink's `JsonArrayAggFunction` and
//! `JsonObjectAggFunction` compute them. Each value arrives as its JSON text: the parser
//! wraps the argument in JSON_STRING (Flink's `WrapJsonAggFunctionArgumentsRule`), so a NULL
//! value is a NULL text and a nested JSON_OBJECT is its raw JSON.
//!
//! JSON_ARRAYAGG keeps each slot's texts in arrival order (`null` for a NULL with NULL ON
//! NULL, nothing with ABSENT ON NULL, its default); a retraction takes out the first equal
//! text (Flink's `ListView.remove`). JSON_OBJECTAGG keeps key → text (`None`: a NULL value
//! with NULL ON NULL, its default); a key already there fails the job with Flink's message,
//! and a retraction removes its key. Results are `[…]` and `{…}` with the keys in Java
//! `String` order, as Flink's object nodes write them.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};

use super::{GroupsAccumulator, StateReader, filter_column, grow, passes, put_bytes, put_u32};
use crate::exec::error::ExecError;
use crate::types::json_text::write_json_string;

/// The string column `column` of `batch`.
fn strings(batch: &RecordBatch, column: usize) -> Result<&arrow_array::StringArray, ExecError> {
    batch
        .column(column)
        .as_string_opt::<i32>()
        .ok_or_else(|| ExecError::Internal("a JSON aggregate's argument is not a string".into()))
}

fn put_optional(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(t) => {
            out.push(1);
            put_bytes(out, t.as_bytes());
        }
        None => out.push(0),
    }
}

fn read_optional(input: &mut StateReader<'_>) -> Result<Option<Box<str>>, ExecError> {
    Ok(match input.u8()? {
        0 => None,
        _ => Some(text_of(input.bytes()?)?),
    })
}

fn text_of(bytes: &[u8]) -> Result<Box<str>, ExecError> {
    std::str::from_utf8(bytes)
        .map(Into::into)
        .map_err(|_| ExecError::Checkpoint("a JSON aggregate's state is not UTF-8".into()))
}

pub struct JsonArrayAggAccumulator {
    column: usize,
    filter: Option<usize>,
    null_on_null: bool,
    values: Vec<Vec<Box<str>>>,
}

impl JsonArrayAggAccumulator {
    pub fn new(column: usize, filter: Option<usize>, null_on_null: bool) -> Self {
        JsonArrayAggAccumulator {
            column,
            filter,
            null_on_null,
            values: Vec::new(),
        }
    }

    /// The (slot, text) each pair the FILTER lets through adds: its value's JSON text, or
    /// `null` for a NULL with NULL ON NULL.
    fn texts(
        &self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<Vec<(usize, Box<str>)>, ExecError> {
        let values = strings(batch, self.column)?;
        let filter = filter_column(batch, self.filter)?;
        let mut out = Vec::with_capacity(rows.len());
        for (&row, &slot) in rows.iter().zip(slots) {
            let row = row as usize;
            if !passes(filter, row) {
                continue;
            }
            if values.is_valid(row) {
                out.push((slot as usize, values.value(row).into()));
            } else if self.null_on_null {
                out.push((slot as usize, "null".into()));
            }
        }
        Ok(out)
    }
}

impl GroupsAccumulator for JsonArrayAggAccumulator {
    fn resize(&mut self, slots: usize) {
        grow(&mut self.values, slots, Vec::new());
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for (slot, text) in self.texts(batch, rows, slots)? {
            self.values[slot].push(text);
        }
        Ok(())
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for (slot, text) in self.texts(batch, rows, slots)? {
            let kept = &mut self.values[slot];
            if let Some(at) = kept.iter().position(|v| *v == text) {
                kept.remove(at);
            }
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.values[from as usize].clone();
        self.values[into as usize].extend(from);
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let texts = slots.iter().map(|&s| {
            let mut out = String::from("[");
            for (i, v) in self.values[s as usize].iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(v);
            }
            out.push(']');
            Some(out)
        });
        Ok(Arc::new(StringArray::from_iter(texts)))
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = Vec::new();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let kept = &self.values[slot as usize];
        put_u32(out, kept.len() as u32);
        for v in kept {
            put_bytes(out, v.as_bytes());
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let n = input.u32()?;
        let mut kept = Vec::with_capacity(n.min(1 << 16) as usize);
        for _ in 0..n {
            kept.push(text_of(input.bytes()?)?);
        }
        self.values[slot as usize] = kept;
        Ok(())
    }
}

pub struct JsonObjectAggAccumulator {
    key: usize,
    value: usize,
    filter: Option<usize>,
    null_on_null: bool,
    entries: Vec<BTreeMap<Box<str>, Option<Box<str>>>>,
}

impl JsonObjectAggAccumulator {
    pub fn new(key: usize, value: usize, filter: Option<usize>, null_on_null: bool) -> Self {
        JsonObjectAggAccumulator {
            key,
            value,
            filter,
            null_on_null,
            entries: Vec::new(),
        }
    }
}

fn duplicate(key: &str) -> ExecError {
    ExecError::Eval(crate::function::EvalError::Invalid(format!(
        "Key '{key}' is already present. Duplicate keys are not allowed in JSON_OBJECTAGG. Please ensure that keys are unique."
    )))
}

impl GroupsAccumulator for JsonObjectAggAccumulator {
    fn resize(&mut self, slots: usize) {
        grow(&mut self.entries, slots, BTreeMap::new());
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let (keys, values) = (strings(batch, self.key)?, strings(batch, self.value)?);
        let filter = filter_column(batch, self.filter)?;
        for (&row, &slot) in rows.iter().zip(slots) {
            let row = row as usize;
            if !passes(filter, row) {
                continue;
            }
            if keys.is_null(row) {
                return Err(ExecError::Eval(crate::function::EvalError::Invalid(
                    "JSON_OBJECTAGG: a key must not be NULL".into(),
                )));
            }
            let key = keys.value(row);
            let entries = &mut self.entries[slot as usize];
            if entries.contains_key(key) {
                return Err(duplicate(key));
            }
            if values.is_valid(row) {
                entries.insert(key.into(), Some(values.value(row).into()));
            } else if self.null_on_null {
                entries.insert(key.into(), None);
            }
        }
        Ok(())
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let keys = strings(batch, self.key)?;
        let filter = filter_column(batch, self.filter)?;
        for (&row, &slot) in rows.iter().zip(slots) {
            let row = row as usize;
            if passes(filter, row) && keys.is_valid(row) {
                self.entries[slot as usize].remove(keys.value(row));
            }
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        // Flink fails a merge that meets a key twice; merges (sessions) are not planned for
        // it, so the later value wins here.
        let from = self.entries[from as usize].clone();
        self.entries[into as usize].extend(from);
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let mut texts = Vec::with_capacity(slots.len());
        for &slot in slots {
            let mut entries: Vec<(&Box<str>, &Option<Box<str>>)> =
                self.entries[slot as usize].iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            let mut out = String::from("{");
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(&mut out, key);
                out.push(':');
                out.push_str(value.as_deref().unwrap_or("null"));
            }
            out.push('}');
            texts.push(Some(out));
        }
        Ok(Arc::new(StringArray::from_iter(texts)))
    }

    fn free(&mut self, slot: u32) {
        self.entries[slot as usize] = BTreeMap::new();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let entries = &self.entries[slot as usize];
        put_u32(out, entries.len() as u32);
        for (key, value) in entries {
            put_bytes(out, key.as_bytes());
            put_optional(out, value.as_deref());
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let n = input.u32()?;
        let mut entries = BTreeMap::new();
        for _ in 0..n {
            let key = text_of(input.bytes()?)?;
            entries.insert(key, read_optional(input)?);
        }
        self.entries[slot as usize] = entries;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType as ArrowType, Field, Schema};

    fn batch(keys: &[Option<&str>], values: &[Option<&str>]) -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("k", ArrowType::Utf8, true),
            Field::new("v", ArrowType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(keys.to_vec())),
                Arc::new(StringArray::from(values.to_vec())),
            ],
        )
        .unwrap()
    }

    fn texts(a: &ArrayRef) -> Vec<String> {
        let a = a.as_string::<i32>();
        (0..a.len()).map(|i| a.value(i).to_string()).collect()
    }

    #[test]
    fn arrays_keep_arrival_order_retract_the_first_equal_and_round_trip() {
        let b = batch(
            &[None; 5],
            &[Some("1"), None, Some("\"x\""), Some("1"), Some("2")],
        );
        for (null_on_null, expected) in [(false, "[\"x\",1]"), (true, "[null,\"x\",1]")] {
            let mut acc = JsonArrayAggAccumulator::new(1, None, null_on_null);
            acc.resize(2);
            acc.update(&b, &[0, 1, 2, 3, 4], &[0, 0, 0, 0, 1]).unwrap();
            acc.retract(&b, &[0], &[0]).unwrap();
            assert_eq!(texts(&acc.evaluate(&[0, 1]).unwrap()), [expected, "[2]"]);
            let mut state = Vec::new();
            acc.write_slot(0, &mut state);
            let mut restored = JsonArrayAggAccumulator::new(1, None, null_on_null);
            restored.resize(1);
            restored
                .read_slot(0, &mut StateReader::new(&state))
                .unwrap();
            assert_eq!(texts(&restored.evaluate(&[0]).unwrap()), [expected]);
        }
    }

    #[test]
    fn objects_sort_keys_refuse_a_repeated_key_and_retract_by_key() {
        let b = batch(
            &[Some("zz"), Some("a\"q"), Some("m"), Some("zz")],
            &[Some("1"), None, Some("{\"n\":2}"), Some("3")],
        );
        let mut acc = JsonObjectAggAccumulator::new(0, 1, None, true);
        acc.resize(1);
        acc.update(&b, &[0, 1, 2], &[0, 0, 0]).unwrap();
        assert_eq!(
            texts(&acc.evaluate(&[0]).unwrap()),
            ["{\"a\\\"q\":null,\"m\":{\"n\":2},\"zz\":1}"]
        );
        let err = acc.update(&b, &[3], &[0]).unwrap_err();
        assert!(
            err.to_string().contains("Key 'zz' is already present"),
            "{err}"
        );
        acc.retract(&b, &[0], &[0]).unwrap();
        acc.update(&b, &[3], &[0]).unwrap();
        let mut state = Vec::new();
        acc.write_slot(0, &mut state);
        let mut restored = JsonObjectAggAccumulator::new(0, 1, None, false);
        restored.resize(1);
        restored
            .read_slot(0, &mut StateReader::new(&state))
            .unwrap();
        assert_eq!(
            texts(&restored.evaluate(&[0]).unwrap()),
            ["{\"a\\\"q\":null,\"m\":{\"n\":2},\"zz\":3}"]
        );
    }
}

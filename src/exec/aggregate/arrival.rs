//! FIRST_VALUE(x), LAST_VALUE(x) and LISTAGG(x [, separator]): aggregates of the values in
//! the order they arrived, NULLs skipped, as Flink's `FirstValueAggFunction`,
//! `LastValueAggFunction` and `ListAggFunction` (with `WsWithRetract` variants) compute them:
//! the first, the last, or all of them joined by the separator (`,` by default; the last
//! row's separator when it is a column).
//!
//! Over an insert-only input FIRST_VALUE keeps one value and LAST_VALUE replaces its one;
//! LISTAGG, and every one of them over a retracting input, keeps each slot's values in
//! arrival order, and a retraction takes out the earliest equal value (Flink's retract
//! functions keep the list as well). Values are `arrow-row` bytes of the argument, with an
//! arrival number so that merged session windows keep their order.

use super::encoded::EncodedArguments;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_row::SortField;
use arrow_schema::DataType as ArrowType;

use super::count::for_each_counted;
use super::{GroupsAccumulator, StateReader, grow, put_bytes, put_i64, put_u32};
use crate::exec::error::ExecError;

/// Which aggregate of the arrived values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    First,
    Last,
    ListAgg,
}

pub struct ArrivalAccumulator {
    kind: Arrival,
    column: usize,
    /// LISTAGG's separator column, when written.
    separator: Option<usize>,
    filter: Option<usize>,
    /// Whether every value is kept (LISTAGG, or a retracting input).
    keep_all: bool,
    encoded: EncodedArguments,
    /// Per slot, its values with their arrival numbers, in arrival order.
    values: Vec<Vec<(u64, Box<[u8]>)>>,
    /// Per slot, LISTAGG's separator (the last one seen).
    separators: Vec<Option<Box<str>>>,
    arrivals: u64,
}

impl ArrivalAccumulator {
    pub fn new(
        kind: Arrival,
        column: usize,
        arg_type: &ArrowType,
        separator: Option<usize>,
        filter: Option<usize>,
        retracts: bool,
    ) -> Result<Self, ExecError> {
        Ok(ArrivalAccumulator {
            kind,
            column,
            separator,
            filter,
            keep_all: retracts || kind == Arrival::ListAgg,
            encoded: EncodedArguments::new(vec![SortField::new(arg_type.clone())])?,
            values: Vec::new(),
            separators: Vec::new(),
            arrivals: 0,
        })
    }

    /// The (row, slot) pairs the FILTER lets through whose value is not NULL (the rows a
    /// COUNT of the argument would count).
    fn picked(
        &self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<Vec<(usize, usize)>, ExecError> {
        let column = batch.column(self.column).clone();
        let mut picked = Vec::new();
        for_each_counted(batch, self.filter, &[column], rows, slots, |row, slot| {
            picked.push((row, slot))
        })?;
        Ok(picked)
    }
}

impl GroupsAccumulator for ArrivalAccumulator {
    fn resize(&mut self, slots: usize) {
        grow(&mut self.values, slots, Vec::new());
        grow(&mut self.separators, slots, None);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let picked = self.picked(batch, rows, slots)?;
        let encoded = self
            .encoded
            .encode(std::slice::from_ref(batch.column(self.column)))?;
        let separators =
            match self.separator {
                Some(c) => Some(batch.column(c).as_string_opt::<i32>().cloned().ok_or_else(
                    || ExecError::Internal("LISTAGG's separator is not a string".into()),
                )?),
                None => None,
            };
        for (row, slot) in picked {
            self.arrivals += 1;
            let value = (self.arrivals, encoded.row(row).as_ref().into());
            let kept = &mut self.values[slot];
            match (self.keep_all, self.kind) {
                (false, Arrival::First) if !kept.is_empty() => {}
                (false, Arrival::Last) => {
                    kept.clear();
                    kept.push(value);
                }
                _ => kept.push(value),
            }
            if let Some(separators) = &separators {
                self.separators[slot] = separators
                    .is_valid(row)
                    .then(|| separators.value(row).into());
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
        let picked = self.picked(batch, rows, slots)?;
        let encoded = self
            .encoded
            .encode(std::slice::from_ref(batch.column(self.column)))?;
        for (row, slot) in picked {
            let value = encoded.row(row);
            let kept = &mut self.values[slot];
            if let Some(at) = kept.iter().position(|(_, v)| **v == *value.as_ref()) {
                kept.remove(at);
            }
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.values[from as usize].clone();
        let into = &mut self.values[into as usize];
        into.extend(from);
        into.sort_by_key(|(n, _)| *n);
        if !self.keep_all && !into.is_empty() {
            let keep = match self.kind {
                Arrival::Last => into.len() - 1,
                _ => 0,
            };
            let one = into.swap_remove(keep);
            into.clear();
            into.push(one);
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let converter = self.encoded.converter();
        let parser = converter.parser();
        if self.kind == Arrival::ListAgg {
            let mut texts: Vec<Option<String>> = Vec::with_capacity(slots.len());
            for &slot in slots {
                let kept = &self.values[slot as usize];
                if kept.is_empty() {
                    texts.push(None);
                    continue;
                }
                let decoded = converter.convert_rows(kept.iter().map(|(_, v)| parser.parse(v)))?;
                let strings = decoded[0]
                    .as_string_opt::<i32>()
                    .ok_or_else(|| ExecError::Internal("LISTAGG of a non-string".into()))?;
                let separator = self.separators[slot as usize].as_deref().unwrap_or(",");
                let parts: Vec<&str> = (0..strings.len()).map(|i| strings.value(i)).collect();
                texts.push(Some(parts.join(separator)));
            }
            return Ok(Arc::new(StringArray::from(texts)));
        }
        // One value per slot (a NULL for an empty one): decode the present ones, then place.
        let picked: Vec<Option<&[u8]>> = slots
            .iter()
            .map(|&s| {
                let kept = &self.values[s as usize];
                match self.kind {
                    Arrival::First => kept.first(),
                    _ => kept.last(),
                }
                .map(|(_, v)| &v[..])
            })
            .collect();
        self.encoded.decode_each(&picked)
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = Vec::new();
        self.separators[slot as usize] = None;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let kept = &self.values[slot as usize];
        put_u32(out, kept.len() as u32);
        for (n, v) in kept {
            put_i64(out, *n as i64);
            put_bytes(out, v);
        }
        match &self.separators[slot as usize] {
            Some(s) => {
                out.push(1);
                put_bytes(out, s.as_bytes());
            }
            None => out.push(0),
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let n = input.u32()?;
        let mut kept = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let arrival = input.i64()? as u64;
            self.arrivals = self.arrivals.max(arrival);
            kept.push((arrival, input.bytes()?.into()));
        }
        self.values[slot as usize] = kept;
        self.separators[slot as usize] = match input.u8()? {
            1 => Some(
                String::from_utf8_lossy(input.bytes()?)
                    .into_owned()
                    .into_boxed_str(),
            ),
            _ => None,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray};
    use arrow_schema::{Field, Schema};

    fn batch(values: &[Option<&str>]) -> RecordBatch {
        let schema = Schema::new(vec![Field::new("v", ArrowType::Utf8, true)]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(StringArray::from(values.to_vec()))],
        )
        .unwrap()
    }

    fn texts(a: &ArrayRef) -> Vec<Option<String>> {
        let a = a.as_string::<i32>();
        (0..a.len())
            .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
            .collect()
    }

    #[test]
    fn retractions_take_the_earliest_equal_value_and_state_round_trips() {
        let mut acc =
            ArrivalAccumulator::new(Arrival::ListAgg, 0, &ArrowType::Utf8, None, None, true)
                .unwrap();
        acc.resize(2);
        let b = batch(&[Some("a"), None, Some("b"), Some("a"), Some("c")]);
        acc.update(&b, &[0, 1, 2, 3, 4], &[0, 0, 0, 0, 1]).unwrap();
        acc.retract(&b, &[0], &[0]).unwrap();
        assert_eq!(
            texts(&acc.evaluate(&[0, 1]).unwrap()),
            [Some("b,a".into()), Some("c".into())]
        );
        // Merged session windows keep arrival order.
        acc.merge(1, 0);
        assert_eq!(texts(&acc.evaluate(&[1]).unwrap()), [Some("b,a,c".into())]);
        let mut state = Vec::new();
        acc.write_slot(1, &mut state);
        let mut restored =
            ArrivalAccumulator::new(Arrival::ListAgg, 0, &ArrowType::Utf8, None, None, true)
                .unwrap();
        restored.resize(1);
        restored
            .read_slot(0, &mut StateReader::new(&state))
            .unwrap();
        assert_eq!(
            texts(&restored.evaluate(&[0]).unwrap()),
            [Some("b,a,c".into())]
        );
    }

    #[test]
    fn first_and_last_over_inserts_keep_one_value() {
        let schema = Schema::new(vec![Field::new("n", ArrowType::Int32, true)]);
        let b = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int32Array::from(vec![None, Some(1), Some(2)]))],
        )
        .unwrap();
        for (kind, expected) in [(Arrival::First, 1), (Arrival::Last, 2)] {
            let mut acc =
                ArrivalAccumulator::new(kind, 0, &ArrowType::Int32, None, None, false).unwrap();
            acc.resize(2);
            acc.update(&b, &[0, 1, 2], &[0, 0, 0]).unwrap();
            assert_eq!(acc.values[0].len(), 1);
            let out = acc.evaluate(&[0, 1]).unwrap();
            let out = out.as_primitive::<arrow_array::types::Int32Type>();
            assert_eq!((out.value(0), out.is_null(1)), (expected, true));
        }
    }
}

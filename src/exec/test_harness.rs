//! Operators tested alone with text: chunks written as lines (`+I 1 2024-01-01 00:00:01`,
//! one line a row, fields separated by `|` when a value holds spaces), and what an operator
//! emits recorded as the same lines plus `WM <ms>` for watermarks, in order.

use arrow_array::{ArrayRef, RecordBatch, StringArray};

use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, Output, WatermarkStatus};
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

/// Keeps the chunks an operator emits, as they are (watermarks left out): for tests of
/// chunk sizes or of values text does not show.
#[derive(Default)]
pub struct Chunks(pub Vec<StreamChunk>);

impl Chunks {
    /// Each chunk's row count.
    pub fn sizes(&self) -> Vec<usize> {
        self.0.iter().map(StreamChunk::num_rows).collect()
    }
}

impl Output for Chunks {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        self.0.push(chunk);
        Ok(())
    }

    fn emit_watermark(&mut self, _: i64) -> Result<(), ExecError> {
        Ok(())
    }

    fn emit_watermark_status(&mut self, _: WatermarkStatus) -> Result<(), ExecError> {
        Ok(())
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

/// The check that restoring from a snapshot continues a run as if it had never stopped
/// (docs/design/0008 §2): for every cut of a script, the rest of the script through
/// operators restored from a snapshot taken at the cut gives what it gives through the
/// operators that took it, at 1 → 1, 1 → 2, 2 → 1 and 2 → 2 instances for a keyed operator
/// (rows routed to the instance owning their key's group, as the keyed exchange routes them),
/// at 1 → 1 for one that runs on a single instance.
///
/// A restored instance is opened, given its key groups (`restore`) and every old instance's
/// part (`restore_instance`, in old instance order), then the last watermark before the cut,
/// as the runtime replays it: that must emit no row. What the instances emit is compared
/// between watermarks (and statuses), as a multiset: instances run side by side, and the
/// order of rows leaving at one watermark may follow key ids, which a restore renumbers.
/// `exact_order` compares a lone instance's output line for line as well. The late-row
/// totals must be equal too.
pub struct RestoreCheck<'a> {
    /// A fresh operator (the check opens it).
    pub build: &'a dyn Fn() -> Box<dyn Operator>,
    pub inputs: &'a [&'a Schema],
    pub output: &'a Schema,
    /// Per input, the key columns its rows are routed by; `None`: a single-instance
    /// operator.
    pub keys: Option<&'a [Vec<usize>]>,
    pub exact_order: bool,
}

/// Instances of one operator side by side, and what each emitted.
struct Instances {
    ops: Vec<Box<dyn Operator>>,
    outputs: Vec<String>,
}

impl RestoreCheck<'_> {
    /// Checks every cut of `script` (lines as [`run_script_on`] reads them); panics with the
    /// cut and parallelisms that differ.
    pub fn check(&self, script: &str) {
        let lines: Vec<&str> = script
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let parallelisms: &[(u32, u32)] = if self.keys.is_some() {
            &[(1, 1), (1, 2), (2, 1), (2, 2)]
        } else {
            &[(1, 1)]
        };
        let mut with_state = 0;
        for cut in 1..lines.len() {
            let (head, tail) = lines.split_at(cut);
            for &(from, to) in parallelisms {
                let context = format!("cut before line {cut} ({:?}), {from} -> {to}", tail[0]);
                with_state += usize::from(self.check_cut(head, tail, from, to, &context));
            }
        }
        assert!(with_state > 0, "no cut left any state to restore");
    }

    /// One cut: returns whether the snapshot held any state.
    fn check_cut(&self, head: &[&str], tail: &[&str], from: u32, to: u32, context: &str) -> bool {
        let input_at_cut = head
            .iter()
            .rev()
            .find_map(|l| l.strip_prefix('@'))
            .map_or(0, |n| n.trim().parse::<usize>().expect("an input number"));
        let tail_script = format!("@{input_at_cut}\n{}", tail.join("\n"));
        let head_script = head.join("\n");

        let mut whole = self.start(from);
        self.run(&mut whole, &head_script);
        whole.outputs.iter_mut().for_each(String::clear);
        self.run(&mut whole, &tail_script);

        let mut before = self.start(from);
        self.run(&mut before, &head_script);
        // State kept in pages is frozen at the cut, and the operators go on with the rest of
        // the input, as after a barrier: the frozen views must still give the cut's state.
        type AtCut = Result<Box<dyn FrozenState>, Vec<(u32, Vec<u8>)>>;
        let cut: Vec<AtCut> = before
            .ops
            .iter()
            .map(|op| op.freeze().ok_or_else(|| op.snapshot()))
            .collect();
        let parts: Vec<Vec<u8>> = before
            .ops
            .iter()
            .filter_map(|op| op.snapshot_instance())
            .collect();
        self.run(&mut before, &tail_script);
        let keyed: Vec<(u32, Vec<u8>)> = cut
            .into_iter()
            .flat_map(|state| match state {
                Ok(frozen) => frozen.to_snapshot().expect("a frozen view writes"),
                Err(keyed) => keyed,
            })
            .collect();
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let mut after = self.start(to);
        for (index, op) in after.ops.iter_mut().enumerate() {
            let ctx = instance(index as u32, to);
            let owned: Vec<&(u32, Vec<u8>)> = keyed
                .iter()
                .filter(|(group, _)| ctx.key_groups.contains(*group))
                .collect();
            op.restoring(owned.iter().map(|(_, state)| state.len()).sum());
            for (group, state) in owned {
                op.restore(*group, state)
                    .unwrap_or_else(|e| panic!("{context}: restore: {e}"));
            }
            op.restored()
                .unwrap_or_else(|e| panic!("{context}: restored: {e}"));
            op.restore_instance(&parts)
                .unwrap_or_else(|e| panic!("{context}: restore_instance: {e}"));
        }
        if let Some(watermark) = head.iter().rev().find_map(|l| l.strip_prefix("WM ")) {
            for op in &mut after.ops {
                let mut out = Recorder::new(self.output);
                op.on_watermark(script_time(watermark), &mut out).unwrap();
                assert!(
                    out.lines.iter().all(|l| !is_row(l)),
                    "{context}: the replayed watermark fired again: {:?}",
                    out.lines
                );
            }
        }
        self.run(&mut after, &tail_script);

        assert_eq!(
            by_watermark(&after.outputs, context),
            by_watermark(&whole.outputs, context),
            "{context}"
        );
        if self.exact_order && from == 1 && to == 1 {
            assert_eq!(after.outputs, whole.outputs, "{context}");
        }
        let late = |i: &Instances| i.ops.iter().map(|op| op.late_rows()).sum::<u64>();
        assert_eq!(late(&after), late(&whole), "{context}: late rows");
        !keyed.is_empty() || !parts.is_empty()
    }

    /// `parallelism` fresh instances, opened.
    fn start(&self, parallelism: u32) -> Instances {
        let ops = (0..parallelism)
            .map(|index| {
                let mut op = (self.build)();
                op.open(&instance(index, parallelism)).expect("open");
                op
            })
            .collect();
        Instances {
            ops,
            outputs: vec![String::new(); parallelism as usize],
        }
    }

    /// Runs `script` through every instance, each given the rows of the key groups it owns
    /// and every other line.
    fn run(&self, instances: &mut Instances, script: &str) {
        let parallelism = instances.ops.len() as u32;
        for (index, op) in instances.ops.iter_mut().enumerate() {
            let mut input = 0;
            let mut own = String::new();
            for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if let Some(n) = line.strip_prefix('@') {
                    input = n.trim().parse().expect("an input number");
                }
                if is_row(line) && self.instance_of(input, line, parallelism) != index as u32 {
                    continue;
                }
                own.push_str(line);
                own.push('\n');
            }
            let emitted = run_script_on(op.as_mut(), self.inputs, self.output, &own)
                .unwrap_or_else(|e| panic!("instance {index} of {parallelism}: {e}"));
            let output = &mut instances.outputs[index];
            if !output.is_empty() && !emitted.is_empty() {
                output.push('\n');
            }
            output.push_str(&emitted);
        }
    }

    /// The instance of `parallelism` a row line of input `input` goes to.
    fn instance_of(&self, input: usize, line: &str, parallelism: u32) -> u32 {
        let Some(keys) = self.keys else {
            return 0;
        };
        use crate::exec::state::key::{key_bytes, optional_encoder};
        use crate::exec::state::key_group::{DEFAULT_MAX_PARALLELISM, instance_of, key_group_of};
        let batch = chunk(self.inputs[input], line).batch;
        let encoder = optional_encoder(&batch.schema(), keys[input].clone()).expect("keys");
        let encoded = encoder.map(|e| e.encode(&batch).expect("a key"));
        let group = key_group_of(key_bytes(encoded.as_ref(), 0), DEFAULT_MAX_PARALLELISM);
        instance_of(group, DEFAULT_MAX_PARALLELISM, parallelism)
    }
}

/// Instance `index` of `parallelism`, on a clock standing still.
fn instance(index: u32, parallelism: u32) -> crate::exec::operator::OperatorContext {
    use crate::exec::state::key_group::DEFAULT_MAX_PARALLELISM;
    let clock = crate::clock::ManualClock::new(1_700_000_000_000_000_000);
    crate::exec::operator::OperatorContext::instance(
        index,
        parallelism,
        DEFAULT_MAX_PARALLELISM,
        clock,
    )
}

fn is_row(line: &str) -> bool {
    ["+I ", "-U ", "+U ", "-D "]
        .iter()
        .any(|kind| line.starts_with(kind))
}

/// The instances' outputs as one sequence of (rows, sorted, then the watermark or status
/// line after them); every instance must have emitted the same watermarks and statuses.
fn by_watermark(outputs: &[String], context: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut merged: Vec<(Vec<String>, Option<String>)> = Vec::new();
    for (index, output) in outputs.iter().enumerate() {
        let mut segment = 0;
        let mut rows = Vec::new();
        let lines = output.lines().map(|l| l.to_string());
        for line in lines.map(Some).chain([None]) {
            if let Some(row) = line.as_ref().filter(|l| is_row(l)) {
                rows.push(row.clone());
                continue;
            }
            if merged.len() == segment {
                merged.push((Vec::new(), line.clone()));
            }
            let (all, after) = &mut merged[segment];
            assert_eq!(
                *after, line,
                "{context}: instance {index} emitted other watermarks"
            );
            all.append(&mut rows);
            segment += 1;
        }
    }
    for (rows, _) in &mut merged {
        rows.sort();
    }
    merged
}

/// That corrupt state is refused with an error, never a panic nor a guess: every prefix of
/// each key group and instance part is restored into a fresh operator (a prefix cut inside a
/// field must fail; one ending between records may be a smaller valid state), and so are a
/// few byte patterns no snapshot writes.
pub fn check_corrupt_state_fails(
    build: &dyn Fn() -> Box<dyn Operator>,
    keyed: &[(u32, Vec<u8>)],
    part: Option<&[u8]>,
) {
    let fresh = || {
        let mut op = build();
        op.open(&instance(0, 1)).expect("open");
        op
    };
    let garbage: [&[u8]; 4] = [
        &[0xff; 3],
        &[0xff; 64],
        &[7, 0, 0, 0, 1],
        &[0, 0, 0, 0, 0xee],
    ];
    // An empty key, then counts of 1 (none to two), then times at `i64`'s ends: a window
    // bound or time where a layout has one.
    let extremes: Vec<Vec<u8>> = (0..3)
        .flat_map(|counts| {
            [[i64::MIN, i64::MAX], [i64::MAX, i64::MIN]].map(|times| {
                let mut bytes = vec![0u8; 4];
                (0..counts).for_each(|_| bytes.extend([1, 0, 0, 0]));
                for _ in 0..2 {
                    times.iter().for_each(|t| bytes.extend(t.to_le_bytes()));
                }
                bytes
            })
        })
        .collect();
    for (group, state) in keyed {
        for extreme in &extremes {
            for len in 4..=extreme.len() {
                let _ = fresh().restore(*group, &extreme[..len]);
                let _ = fresh().restore(*group, &[&extreme[..len], &state[..]].concat());
            }
        }
        assert!(
            fresh().restore(*group, state).is_ok(),
            "the snapshot itself"
        );
        assert!(
            fresh().restore(*group, &state[..state.len() - 1]).is_err(),
            "key group {group} one byte short"
        );
        for len in 0..state.len() {
            let _ = fresh().restore(*group, &state[..len]);
        }
        for bytes in garbage {
            let _ = fresh().restore(*group, bytes);
        }
    }
    if let Some(part) = part {
        assert!(fresh().restore_instance(&[part]).is_ok(), "the part itself");
        for len in 0..part.len() {
            assert!(
                fresh().restore_instance(&[&part[..len]]).is_err(),
                "an instance part of {len} of {} bytes",
                part.len()
            );
        }
        let longer = [part, &[0][..]].concat();
        assert!(fresh().restore_instance(&[&longer]).is_err(), "a byte more");
        for bytes in garbage {
            assert!(fresh().restore_instance(&[bytes]).is_err(), "{bytes:?}");
        }
    }
}

/// The seeded generator of the random test scripts (a 64-bit LCG): `next(n)` is in `0..n`.
pub struct ScriptRng(u64);

impl ScriptRng {
    pub fn new(seed: u64) -> Self {
        ScriptRng(seed)
    }

    pub fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `seconds` after `first_hour` o'clock of `day`, as a script writes times
/// (`2024-01-01 10:02:03`).
pub fn clock_text(day: &str, first_hour: u64, seconds: u64) -> String {
    format!(
        "{day} {:02}:{:02}:{:02}",
        first_hour + seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

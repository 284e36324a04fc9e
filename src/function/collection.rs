//! Value constructors and collection functions: `ARRAY[…]`, `MAP[…]`, `ROW(…)`, element
//! access (`a[i]`, `m[k]`, as ITEM), ELEMENT, CARDINALITY, MAP_KEYS, MAP_VALUES,
//! ARRAY_CONTAINS, ARRAY_JOIN. Constructors build their nested column from whole argument
//! columns (one interleave for the elements), never row by row; lookups gather with one
//! `take` after finding positions with a comparator built once per batch.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Int32Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, StructArray, UInt32Array};
use arrow_buffer::OffsetBuffer;
use arrow_schema::SortOptions;

use super::{
    EvalContext, EvalError, FunctionDef, Signature, any_nullable, internal_error, string_type,
};
use crate::function::string::java_regex::JavaRegex;
use crate::types::coercion::common_type_of;
use crate::types::java_hash::{hash_map_order, java_string_hash};
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("ARRAY", resolve_array, array),
    def!("ROW", resolve_row, row),
    def!("CARDINALITY", resolve_cardinality, cardinality),
    def!("MAP", resolve_map, map),
    def!("MAP_UNION", resolve_map_union, map_union),
    def!("MAP_FROM_ARRAYS", resolve_map_from_arrays, map_from_arrays),
    def!("STR_TO_MAP", resolve_str_to_map, str_to_map),
    def!("ITEM", resolve_item, item),
    def!("ELEMENT", resolve_element, element),
    def!("MAP_KEYS", resolve_map_keys, map_keys),
    def!("MAP_VALUES", resolve_map_values, map_values),
    def!("ARRAY_CONTAINS", resolve_array_contains, array_contains),
    def!("ARRAY_JOIN", resolve_array_join, array_join),
];

/// Row-major positions `(argument, row)` over `width` arguments: the element order of a
/// constructor's output.
fn row_major(width: usize, rows: usize) -> Vec<(usize, usize)> {
    (0..rows)
        .flat_map(|row| (0..width).map(move |k| (k, row)))
        .collect()
}

/// `ARRAY[a, b, …]`: the elements' common type; the array itself is never NULL.
fn resolve_array(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("ARRAY needs at least one element".into());
    }
    let element = common_type_of(args).ok_or_else(|| {
        let shown: Vec<String> = args.iter().map(|a| a.kind.to_string()).collect();
        format!("ARRAY elements have no common type: {}", shown.join(", "))
    })?;
    Ok(Signature::new(
        vec![element.clone(); args.len()],
        DataType::not_null(TypeKind::Array(Box::new(element))),
    ))
}

fn array(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let TypeKind::Array(element) = &t.kind else {
        return Err(EvalError::Internal(format!("ARRAY typed as {}", t.kind)));
    };
    let width = args.len();
    let columns: Vec<&dyn Array> = args.iter().map(|a| a.as_ref()).collect();
    let values = arrow_select::interleave::interleave(&columns, &row_major(width, ctx.num_rows))
        .map_err(internal_error)?;
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(width, ctx.num_rows));
    let list = ListArray::try_new(
        Arc::new(element.to_arrow_field("element")),
        offsets,
        values,
        None,
    )
    .map_err(|e| EvalError::Invalid(format!("ARRAY: {e}")))?;
    Ok(Arc::new(list))
}

/// `ROW(a, b, …)`: fields named `EXPR$0`, `EXPR$1`, … as Flink names them.
fn resolve_row(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("ROW needs at least one field".into());
    }
    let fields = args
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("EXPR${i}"), a.clone()))
        .collect();
    Ok(Signature::new(
        args.to_vec(),
        DataType::not_null(TypeKind::Row(fields)),
    ))
}

fn row(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let TypeKind::Row(fields) = &t.kind else {
        return Err(EvalError::Internal(format!("ROW typed as {}", t.kind)));
    };
    let arrow_fields: Vec<_> = fields
        .iter()
        .map(|(name, ty)| ty.to_arrow_field(name))
        .collect();
    let row = StructArray::try_new(arrow_fields.into(), args.to_vec(), None)
        .map_err(|e| EvalError::Invalid(format!("ROW: {e}")))?;
    Ok(Arc::new(row))
}

fn resolve_cardinality(args: &[DataType]) -> Result<Signature, String> {
    let [value] = args else {
        return Err("CARDINALITY expects one argument".into());
    };
    if !matches!(value.kind, TypeKind::Array(_) | TypeKind::Map(..)) {
        return Err(format!(
            "CARDINALITY expects an ARRAY or a MAP, got {}",
            value.kind
        ));
    }
    Ok(Signature::new(
        args.to_vec(),
        DataType {
            kind: TypeKind::Int,
            nullable: value.nullable,
        },
    ))
}

/// CARDINALITY(array | map): the number of elements or entries.
fn cardinality(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let value = &args[0];
    let mut b = Int32Builder::with_capacity(value.len());
    let lengths: Box<dyn Fn(usize) -> i32> = match value.data_type() {
        arrow_schema::DataType::Map(..) => {
            let map = value.as_map();
            Box::new(move |i| map.value_length(i))
        }
        _ => {
            let list = value.as_list::<i32>();
            Box::new(move |i| list.value_length(i))
        }
    };
    for i in 0..value.len() {
        if value.is_null(i) {
            b.append_null();
        } else {
            b.append_value(lengths(i));
        }
    }
    Ok(Arc::new(b.finish()))
}

/// `MAP[k1, v1, k2, v2, …]`: the keys' and the values' common types.
fn resolve_map(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() || !args.len().is_multiple_of(2) {
        return Err("MAP expects an even, non-zero number of arguments (key, value, …)".into());
    }
    let keys: Vec<DataType> = args.iter().step_by(2).cloned().collect();
    let values: Vec<DataType> = args.iter().skip(1).step_by(2).cloned().collect();
    let key = common_type_of(&keys).ok_or("MAP keys have no common type")?;
    let value = common_type_of(&values).ok_or("MAP values have no common type")?;
    let sig = args
        .iter()
        .enumerate()
        .map(|(i, _)| {
            if i % 2 == 0 {
                key.clone()
            } else {
                value.clone()
            }
        })
        .collect();
    Ok(Signature::new(
        sig,
        DataType::not_null(TypeKind::Map(Box::new(key), Box::new(value))),
    ))
}

fn map(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let pairs = args.len() / 2;
    let positions = row_major(pairs, ctx.num_rows);
    let keys: Vec<&dyn Array> = args.iter().step_by(2).map(|a| a.as_ref()).collect();
    let keys = arrow_select::interleave::interleave(&keys, &positions).map_err(internal_error)?;
    let values: Vec<&dyn Array> = args.iter().skip(1).step_by(2).map(|a| a.as_ref()).collect();
    let values =
        arrow_select::interleave::interleave(&values, &positions).map_err(internal_error)?;
    let lengths = vec![pairs; ctx.num_rows];
    build_map(t, keys, values, &lengths, None)
}

/// A map column of type `t` from entry columns and per-row entry counts (`nulls`: the NULL
/// rows, which have no entries), a repeated key keeping its first place and its last value.
fn build_map(
    t: &DataType,
    keys: ArrayRef,
    values: ArrayRef,
    lengths: &[usize],
    nulls: Option<arrow_buffer::NullBuffer>,
) -> Result<ArrayRef, EvalError> {
    let arrow_schema::DataType::Map(entries, sorted) = t.to_arrow() else {
        return Err(EvalError::Internal(format!("MAP typed as {}", t.kind)));
    };
    let arrow_schema::DataType::Struct(fields) = entries.data_type() else {
        return Err(EvalError::Internal("MAP entries are not a struct".into()));
    };
    if keys.null_count() > 0 {
        return Err(EvalError::Invalid(
            "MAP keys must not be NULL (Tideline's maps cannot hold a NULL key)".into(),
        ));
    }
    let (keys, values, offsets) = distinct_entries(&keys, &values, lengths)?;
    let entries_array = StructArray::try_new(fields.clone(), vec![keys, values], None)
        .map_err(|e| EvalError::Invalid(format!("MAP: {e}")))?;
    let map = MapArray::try_new(entries, offsets, entries_array, nulls, sorted)
        .map_err(|e| EvalError::Invalid(format!("MAP: {e}")))?;
    Ok(Arc::new(map))
}

/// A key given twice keeps its first place and takes its last value, as a map filled from
/// left to right does (`MAP['a', 1, 'a', 2]` is `{a=2}`). Row `r` has `lengths[r]` entries.
fn distinct_entries(
    keys: &ArrayRef,
    values: &ArrayRef,
    lengths: &[usize],
) -> Result<(ArrayRef, ArrayRef, OffsetBuffer<i32>), EvalError> {
    let same =
        arrow_ord::ord::make_comparator(keys.as_ref(), keys.as_ref(), SortOptions::default())
            .map_err(internal_error)?;
    let mut key_positions = Vec::with_capacity(keys.len());
    let mut value_positions = Vec::with_capacity(keys.len());
    let mut kept = Vec::with_capacity(lengths.len());
    // String keys of long rows are matched through a hash map; others by scanning.
    let strings = keys.as_string_opt::<i32>();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut entry = 0;
    for &length in lengths {
        let first = key_positions.len();
        seen.clear();
        for e in entry..entry + length {
            let earlier = match strings {
                Some(s) if length > 16 => seen.get(s.value(e)).copied(),
                _ => key_positions[first..]
                    .iter()
                    .position(|&k| same(k as usize, e).is_eq()),
            };
            match earlier {
                Some(at) => value_positions[first + at] = e as u32,
                None => {
                    if let Some(s) = strings.filter(|_| length > 16) {
                        seen.insert(s.value(e), key_positions.len() - first);
                    }
                    key_positions.push(e as u32);
                    value_positions.push(e as u32);
                }
            }
        }
        entry += length;
        kept.push(key_positions.len() - first);
    }
    let take = |array: &ArrayRef, positions: Vec<u32>| {
        arrow_select::take::take(array.as_ref(), &UInt32Array::from(positions), None)
            .map_err(internal_error)
    };
    Ok((
        take(keys, key_positions)?,
        take(values, value_positions)?,
        OffsetBuffer::from_lengths(kept),
    ))
}

/// MAP_UNION(m1, m2, …): the maps merged left to right, a later value winning; NULL when any
/// map is NULL.
fn resolve_map_union(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() || args.iter().any(|a| !matches!(a.kind, TypeKind::Map(..))) {
        return Err("MAP_UNION expects one or more MAPs".into());
    }
    let common = common_type_of(args).ok_or("MAP_UNION's maps have no common type")?;
    Ok(Signature::new(
        args.iter()
            .map(|a| common.with_nullable(a.nullable))
            .collect(),
        common.with_nullable(any_nullable(args)),
    ))
}

fn map_union(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let maps: Vec<&MapArray> = args.iter().map(|a| a.as_map()).collect();
    let key_columns: Vec<&dyn Array> = maps.iter().map(|m| m.keys().as_ref()).collect();
    let value_columns: Vec<&dyn Array> = maps.iter().map(|m| m.values().as_ref()).collect();
    let mut positions = Vec::new();
    let mut lengths = Vec::with_capacity(ctx.num_rows);
    let mut valid = Vec::with_capacity(ctx.num_rows);
    for row in 0..ctx.num_rows {
        let present = maps.iter().all(|m| m.is_valid(row));
        valid.push(present);
        let before = positions.len();
        if present {
            for (k, m) in maps.iter().enumerate() {
                let offsets = m.value_offsets();
                for at in offsets[row] as usize..offsets[row + 1] as usize {
                    positions.push((k, at));
                }
            }
        }
        lengths.push(positions.len() - before);
    }
    let keys =
        arrow_select::interleave::interleave(&key_columns, &positions).map_err(internal_error)?;
    let values =
        arrow_select::interleave::interleave(&value_columns, &positions).map_err(internal_error)?;
    let nulls = arrow_buffer::NullBuffer::from(valid);
    build_map(
        t,
        keys,
        values,
        &lengths,
        (nulls.null_count() > 0).then_some(nulls),
    )
}

/// MAP_FROM_ARRAYS(keys, values): entries pairing the arrays' elements; the arrays must be as
/// long as each other; NULL when either is NULL.
fn resolve_map_from_arrays(args: &[DataType]) -> Result<Signature, String> {
    let [keys, values] = args else {
        return Err("MAP_FROM_ARRAYS expects (keys, values)".into());
    };
    let (TypeKind::Array(k), TypeKind::Array(v)) = (&keys.kind, &values.kind) else {
        return Err("MAP_FROM_ARRAYS expects two ARRAYs".into());
    };
    Ok(Signature::new(
        args.to_vec(),
        DataType {
            kind: TypeKind::Map(k.clone(), v.clone()),
            nullable: keys.nullable || values.nullable,
        },
    ))
}

fn map_from_arrays(
    args: &[ArrayRef],
    ctx: &EvalContext,
    t: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (keys, values) = (args[0].as_list::<i32>(), args[1].as_list::<i32>());
    let mut key_positions: Vec<u32> = Vec::new();
    let mut value_positions: Vec<u32> = Vec::new();
    let mut lengths = Vec::with_capacity(ctx.num_rows);
    let mut valid = Vec::with_capacity(ctx.num_rows);
    for row in 0..ctx.num_rows {
        let present = keys.is_valid(row) && values.is_valid(row);
        valid.push(present);
        if !present {
            lengths.push(0);
            continue;
        }
        let (ko, vo) = (keys.value_offsets(), values.value_offsets());
        let (k_len, v_len) = (ko[row + 1] - ko[row], vo[row + 1] - vo[row]);
        if k_len != v_len {
            return Err(EvalError::Invalid(format!(
                "Invalid function MAP_FROM_ARRAYS call: The length of the keys array {k_len} is not equal to the length of the values array {v_len}"
            )));
        }
        key_positions.extend(ko[row] as u32..ko[row + 1] as u32);
        value_positions.extend(vo[row] as u32..vo[row + 1] as u32);
        lengths.push(k_len as usize);
    }
    let take = |array: &ArrayRef, positions: Vec<u32>| {
        arrow_select::take::take(array.as_ref(), &UInt32Array::from(positions), None)
            .map_err(internal_error)
    };
    let nulls = arrow_buffer::NullBuffer::from(valid);
    build_map(
        t,
        take(keys.values(), key_positions)?,
        take(values.values(), value_positions)?,
        &lengths,
        (nulls.null_count() > 0).then_some(nulls),
    )
}

/// STR_TO_MAP(text [, list_delimiter [, key_value_delimiter]]): Java's `split` with the
/// delimiters as regular expressions (defaults `,` and `=`), a key without a value mapping
/// to NULL, the entries in the order of Java's `HashMap`, as Flink builds it.
fn resolve_str_to_map(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() || args.len() > 3 {
        return Err("STR_TO_MAP expects (text [, list_delimiter [, key_value_delimiter]])".into());
    }
    super::string::expect_strings("STR_TO_MAP", args)?;
    Ok(Signature::new(
        args.iter().map(|a| string_type(a.nullable)).collect(),
        DataType {
            kind: TypeKind::Map(Box::new(string_type(false)), Box::new(string_type(true))),
            nullable: true,
        },
    ))
}

fn str_to_map(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let texts = args[0].as_string::<i32>();
    let list = args.get(1).map(|a| a.as_string::<i32>());
    let pair = args.get(2).map(|a| a.as_string::<i32>());
    let mut keys = arrow_array::builder::StringBuilder::new();
    let mut values = arrow_array::builder::StringBuilder::new();
    let mut lengths = Vec::with_capacity(ctx.num_rows);
    let mut valid = Vec::with_capacity(ctx.num_rows);
    let mut cache: Option<(String, String, JavaRegex, JavaRegex)> = None;
    for row in 0..ctx.num_rows {
        let delimiter = |a: Option<&arrow_array::StringArray>, default: &'static str| match a {
            None => Some(default.to_string()),
            Some(a) if a.is_null(row) => None,
            Some(a) => Some(a.value(row).to_string()),
        };
        let (Some(ld), Some(kd)) = (delimiter(list, ","), delimiter(pair, "=")) else {
            valid.push(false);
            lengths.push(0);
            continue;
        };
        if texts.is_null(row) {
            valid.push(false);
            lengths.push(0);
            continue;
        }
        if !matches!(&cache, Some((l, k, _, _)) if *l == ld && *k == kd) {
            let compile = |p: &str| {
                JavaRegex::new(p).map_err(|e| {
                    EvalError::Invalid(format!("STR_TO_MAP: invalid delimiter '{p}': {e}"))
                })
            };
            cache = Some((ld.clone(), kd.clone(), compile(&ld)?, compile(&kd)?));
        }
        let (_, _, list_re, pair_re) = cache.as_ref().expect("compiled above");
        let text = texts.value(row);
        let mut entries: Vec<(String, Option<String>)> = Vec::new();
        let mut pairs = 0;
        if !text.is_empty() {
            let items = java_split(list_re, text, 0)?;
            pairs = items.len();
            for item in items {
                let kv = java_split(pair_re, item, 2)?;
                let (k, v) = match kv.as_slice() {
                    [k, v] => (k.to_string(), Some(v.to_string())),
                    _ => (item.to_string(), None),
                };
                match entries.iter_mut().find(|(ek, _)| *ek == k) {
                    Some(e) => e.1 = v,
                    None => entries.push((k, v)),
                }
            }
        }
        let hashes: Vec<i32> = entries.iter().map(|(k, _)| java_string_hash(k)).collect();
        // Flink's map is a HashMap sized for the pairs (before duplicates merge), keyed by
        // Java strings.
        for at in hash_map_order(&hashes, pairs) {
            keys.append_value(&entries[at].0);
            values.append_option(entries[at].1.as_deref());
        }
        valid.push(true);
        lengths.push(entries.len());
    }
    let nulls = arrow_buffer::NullBuffer::from(valid);
    build_map(
        t,
        Arc::new(keys.finish()),
        Arc::new(values.finish()),
        &lengths,
        (nulls.null_count() > 0).then_some(nulls),
    )
}

/// Java's `String.split(regex, limit)`: with limit 0 trailing empty pieces go; a zero-width
/// match at the start makes no leading empty piece; with limit n at most n pieces.
fn java_split<'a>(re: &JavaRegex, text: &'a str, limit: usize) -> Result<Vec<&'a str>, EvalError> {
    let mut pieces = Vec::new();
    let mut last = 0;
    re.for_each_match(text, |start, end| {
        if limit > 0 && pieces.len() + 1 == limit {
            return false;
        }
        if end == 0 {
            return true;
        }
        if start == end && start >= text.len() {
            return false;
        }
        pieces.push(&text[last..start]);
        last = end;
        true
    })?;
    pieces.push(&text[last..]);
    if limit == 0 {
        while pieces.len() > 1 && pieces.last() == Some(&"") {
            pieces.pop();
        }
        if pieces == [""] && !text.is_empty() {
            pieces.clear();
        }
    }
    Ok(pieces)
}

/// `a[i]` (1-based) and `m[k]`: the element type, NULL when absent.
fn resolve_item(args: &[DataType]) -> Result<Signature, String> {
    let [collection, key] = args else {
        return Err("element access expects a collection and an index or key".into());
    };
    match &collection.kind {
        TypeKind::Array(element) => {
            if !key.kind.is_integer() {
                return Err(format!(
                    "an ARRAY index must be an integer, got {}",
                    key.kind
                ));
            }
            Ok(Signature::new(
                vec![
                    collection.clone(),
                    DataType {
                        kind: TypeKind::Int,
                        nullable: key.nullable,
                    },
                ],
                element.with_nullable(true),
            ))
        }
        TypeKind::Map(k, v) => {
            // Strings compare as strings whatever their lengths; other keys are looked up
            // by the needle cast to the key's type.
            let key_type = if k.kind.is_string() && key.kind.is_string() {
                key.clone()
            } else if crate::function::cast::can_cast(&key.kind, &k.kind) {
                k.with_nullable(key.nullable)
            } else {
                return Err(format!(
                    "a MAP<{}, …> cannot be looked up by {}",
                    k.kind, key.kind
                ));
            };
            Ok(Signature::new(
                vec![collection.clone(), key_type],
                v.with_nullable(true),
            ))
        }
        other => Err(format!("{other} has no elements to access")),
    }
}

fn item(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (collection, key) = (&args[0], &args[1]);
    let positions: UInt32Array = match collection.data_type() {
        arrow_schema::DataType::Map(..) => {
            let map = collection.as_map();
            let keys = map.keys();
            let equal = arrow_ord::ord::make_comparator(
                keys.as_ref(),
                key.as_ref(),
                SortOptions::default(),
            )
            .map_err(internal_error)?;
            (0..map.len())
                .map(|row| {
                    if map.is_null(row) || key.is_null(row) {
                        return None;
                    }
                    let offsets = map.value_offsets();
                    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                    // The last equal key wins, as in a map built from left to right.
                    (start..end)
                        .rev()
                        .find(|&at| equal(at, row).is_eq())
                        .map(|at| at as u32)
                })
                .collect()
        }
        _ => {
            let list = collection.as_list::<i32>();
            let index = key.as_primitive::<Int32Type>();
            (0..list.len())
                .map(|row| {
                    if list.is_null(row) || index.is_null(row) {
                        return None;
                    }
                    let offsets = list.value_offsets();
                    let (start, len) = (
                        offsets[row] as i64,
                        (offsets[row + 1] - offsets[row]) as i64,
                    );
                    let i = index.value(row) as i64;
                    (1..=len).contains(&i).then(|| (start + i - 1) as u32)
                })
                .collect()
        }
    };
    let values: ArrayRef = match collection.data_type() {
        arrow_schema::DataType::Map(..) => collection.as_map().values().clone(),
        _ => collection.as_list::<i32>().values().clone(),
    };
    arrow_select::take::take(values.as_ref(), &positions, None).map_err(internal_error)
}

/// ELEMENT(array): the only element, NULL for an empty array, an error for more.
fn resolve_element(args: &[DataType]) -> Result<Signature, String> {
    let [array] = args else {
        return Err("ELEMENT expects one ARRAY".into());
    };
    let TypeKind::Array(element) = &array.kind else {
        return Err(format!("ELEMENT expects an ARRAY, got {}", array.kind));
    };
    Ok(Signature::new(
        args.to_vec(),
        element.with_nullable(element.nullable || array.nullable),
    ))
}

fn element(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let mut positions = Vec::with_capacity(list.len());
    for row in 0..list.len() {
        let offsets = list.value_offsets();
        let (start, len) = (offsets[row], offsets[row + 1] - offsets[row]);
        positions.push(match (list.is_null(row), len) {
            (true, _) | (false, 0) => None,
            (false, 1) => Some(start as u32),
            _ => {
                return Err(EvalError::Invalid(
                    "Array has more than one element.".into(),
                ));
            }
        });
    }
    let positions = UInt32Array::from(positions);
    arrow_select::take::take(list.values().as_ref(), &positions, None).map_err(internal_error)
}

/// MAP_KEYS / MAP_VALUES: an ARRAY of the map's keys or values, in entry order.
fn map_types(args: &[DataType]) -> Result<(&DataType, &DataType), String> {
    match args {
        [
            DataType {
                kind: TypeKind::Map(k, v),
                ..
            },
        ] => Ok((k, v)),
        [other] => Err(format!("expects a MAP, got {}", other.kind)),
        _ => Err("expects one MAP".into()),
    }
}

fn resolve_map_keys(args: &[DataType]) -> Result<Signature, String> {
    let (k, _) = map_types(args)?;
    Ok(Signature::new(
        args.to_vec(),
        DataType {
            kind: TypeKind::Array(Box::new(k.clone())),
            nullable: args[0].nullable,
        },
    ))
}

fn resolve_map_values(args: &[DataType]) -> Result<Signature, String> {
    let (_, v) = map_types(args)?;
    Ok(Signature::new(
        args.to_vec(),
        DataType {
            kind: TypeKind::Array(Box::new(v.clone())),
            nullable: args[0].nullable,
        },
    ))
}

fn map_part(args: &[ArrayRef], keys: bool, t: &DataType) -> Result<ArrayRef, EvalError> {
    let TypeKind::Array(element) = &t.kind else {
        return Err(EvalError::Internal(format!("MAP part typed as {}", t.kind)));
    };
    let map = args[0].as_map();
    let part = if keys { map.keys() } else { map.values() };
    let field = Arc::new(element.to_arrow_field("element"));
    let list = ListArray::try_new(
        field,
        map.offsets().clone(),
        part.clone(),
        map.nulls().cloned(),
    )
    .map_err(|e| EvalError::Invalid(format!("MAP: {e}")))?;
    Ok(Arc::new(list))
}

fn map_keys(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    map_part(args, true, t)
}

fn map_values(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    map_part(args, false, t)
}

/// ARRAY_CONTAINS(array, needle): BOOLEAN; a NULL needle finds a NULL element.
fn resolve_array_contains(args: &[DataType]) -> Result<Signature, String> {
    let [array, needle] = args else {
        return Err("ARRAY_CONTAINS expects (array, element)".into());
    };
    let TypeKind::Array(element) = &array.kind else {
        return Err(format!(
            "ARRAY_CONTAINS expects an ARRAY, got {}",
            array.kind
        ));
    };
    // Strings of any length compare; otherwise the needle must have the element's kind.
    let common = if element.kind.is_string() && needle.kind.is_string() {
        needle.clone()
    } else {
        common_type_of(&[element.as_ref().clone(), needle.clone()])
            .filter(|c| c.kind == element.kind)
            .ok_or_else(|| format!("ARRAY<{}> cannot contain {}", element.kind, needle.kind))?
    };
    Ok(Signature::new(
        vec![array.clone(), common.with_nullable(needle.nullable)],
        DataType {
            kind: TypeKind::Boolean,
            nullable: array.nullable,
        },
    ))
}

fn array_contains(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let needle = &args[1];
    let values = list.values();
    let equal =
        arrow_ord::ord::make_comparator(values.as_ref(), needle.as_ref(), SortOptions::default())
            .map_err(internal_error)?;
    let mut b = BooleanBuilder::with_capacity(list.len());
    for row in 0..list.len() {
        if list.is_null(row) {
            b.append_null();
            continue;
        }
        let offsets = list.value_offsets();
        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
        b.append_value((start..end).any(|at| equal(at, row).is_eq()));
    }
    Ok(Arc::new(b.finish()))
}

/// ARRAY_JOIN(array, delimiter [, null_replacement]): STRING; NULL elements are skipped
/// unless a replacement is given.
fn resolve_array_join(args: &[DataType]) -> Result<Signature, String> {
    let (array, rest) = args
        .split_first()
        .ok_or("ARRAY_JOIN expects (array, delimiter [, null_replacement])")?;
    if rest.is_empty() || rest.len() > 2 {
        return Err("ARRAY_JOIN expects (array, delimiter [, null_replacement])".into());
    }
    let TypeKind::Array(element) = &array.kind else {
        return Err(format!("ARRAY_JOIN expects an ARRAY, got {}", array.kind));
    };
    if !element.kind.is_string() {
        return Err(format!(
            "ARRAY_JOIN expects an ARRAY of strings, got ARRAY<{}>",
            element.kind
        ));
    }
    super::string::expect_strings("ARRAY_JOIN", rest)?;
    let string = string_type;
    let mut sig = vec![array.clone()];
    sig.extend(rest.iter().map(|r| string(r.nullable)));
    Ok(Signature::new(sig, string(any_nullable(args))))
}

fn array_join(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let values = list.values().as_string::<i32>();
    let delimiters = args[1].as_string::<i32>();
    let replacements = args.get(2).map(|a| a.as_string::<i32>());
    let mut b = StringBuilder::with_capacity(list.len(), 0);
    let mut buf = String::new();
    for row in 0..list.len() {
        if list.is_null(row)
            || delimiters.is_null(row)
            || replacements.is_some_and(|r| r.is_null(row))
        {
            b.append_null();
            continue;
        }
        let replacement = replacements.map(|r| r.value(row));
        buf.clear();
        let offsets = list.value_offsets();
        let mut first = true;
        for at in offsets[row] as usize..offsets[row + 1] as usize {
            let text = if values.is_null(at) {
                match replacement {
                    Some(r) => r,
                    None => continue,
                }
            } else {
                values.value(at)
            };
            if !first {
                buf.push_str(delimiters.value(row));
            }
            first = false;
            buf.push_str(text);
        }
        b.append_value(&buf);
    }
    Ok(Arc::new(b.finish()))
}

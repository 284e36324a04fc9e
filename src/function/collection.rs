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
use crate::types::coercion::common_type_of;
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("ARRAY", resolve_array, array),
    def!("ROW", resolve_row, row),
    def!("CARDINALITY", resolve_cardinality, cardinality),
    def!("MAP", resolve_map, map),
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
    let arrow_schema::DataType::Map(entries, sorted) = t.to_arrow() else {
        return Err(EvalError::Internal(format!("MAP typed as {}", t.kind)));
    };
    let arrow_schema::DataType::Struct(fields) = entries.data_type() else {
        return Err(EvalError::Internal("MAP entries are not a struct".into()));
    };
    let pairs = args.len() / 2;
    let positions = row_major(pairs, ctx.num_rows);
    let keys: Vec<&dyn Array> = args.iter().step_by(2).map(|a| a.as_ref()).collect();
    let keys = arrow_select::interleave::interleave(&keys, &positions).map_err(internal_error)?;
    if keys.null_count() > 0 {
        return Err(EvalError::Invalid(
            "MAP keys must not be NULL (Tideline's maps cannot hold a NULL key)".into(),
        ));
    }
    let values: Vec<&dyn Array> = args.iter().skip(1).step_by(2).map(|a| a.as_ref()).collect();
    let values =
        arrow_select::interleave::interleave(&values, &positions).map_err(internal_error)?;
    let (keys, values, offsets) = if pairs > 1 {
        distinct_entries(&keys, &values, pairs)?
    } else {
        let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(pairs, ctx.num_rows));
        (keys, values, offsets)
    };
    let entries_array = StructArray::try_new(fields.clone(), vec![keys, values], None)
        .map_err(|e| EvalError::Invalid(format!("MAP: {e}")))?;
    let map = MapArray::try_new(entries, offsets, entries_array, None, sorted)
        .map_err(|e| EvalError::Invalid(format!("MAP: {e}")))?;
    Ok(Arc::new(map))
}

/// A key given twice keeps its first place and takes its last value, as a map filled from
/// left to right does (`MAP['a', 1, 'a', 2]` is `{a=2}`). Entries come `pairs` per row.
fn distinct_entries(
    keys: &ArrayRef,
    values: &ArrayRef,
    pairs: usize,
) -> Result<(ArrayRef, ArrayRef, OffsetBuffer<i32>), EvalError> {
    let same =
        arrow_ord::ord::make_comparator(keys.as_ref(), keys.as_ref(), SortOptions::default())
            .map_err(internal_error)?;
    let rows = keys.len() / pairs;
    let mut key_positions = Vec::with_capacity(keys.len());
    let mut value_positions = Vec::with_capacity(keys.len());
    let mut lengths = Vec::with_capacity(rows);
    for row in 0..rows {
        let first = key_positions.len();
        for entry in row * pairs..(row + 1) * pairs {
            match key_positions[first..]
                .iter()
                .position(|&k| same(k as usize, entry).is_eq())
            {
                Some(at) => value_positions[first + at] = entry as u32,
                None => {
                    key_positions.push(entry as u32);
                    value_positions.push(entry as u32);
                }
            }
        }
        lengths.push(key_positions.len() - first);
    }
    let take = |array: &ArrayRef, positions: Vec<u32>| {
        arrow_select::take::take(array.as_ref(), &UInt32Array::from(positions), None)
            .map_err(internal_error)
    };
    Ok((
        take(keys, key_positions)?,
        take(values, value_positions)?,
        OffsetBuffer::from_lengths(lengths),
    ))
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

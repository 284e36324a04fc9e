//! The ARRAY_* functions and MAP_ENTRIES. Each works on the arrays' value columns: it picks
//! element positions per row (comparing elements with one comparator built per batch, where a
//! NULL equals a NULL) and gathers them with a single `take` into the result list.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::builder::Int32Builder;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, UInt32Array};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::SortOptions;

use super::{EvalContext, EvalError, FunctionDef, Signature, any_nullable, internal_error};
use crate::types::coercion::common_type_of;
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("ARRAY_DISTINCT", resolve_same_array, array_distinct),
    def!("ARRAY_REVERSE", resolve_same_array, array_reverse),
    def!("ARRAY_SORT", resolve_sort, array_sort),
    def!("ARRAY_SLICE", resolve_slice, array_slice),
    def!("ARRAY_POSITION", resolve_position, array_position),
    def!("ARRAY_REMOVE", resolve_with_element, array_remove),
    def!("ARRAY_APPEND", resolve_with_element, array_append),
    def!("ARRAY_PREPEND", resolve_with_element, array_prepend),
    def!("ARRAY_CONCAT", resolve_arrays, array_concat),
    def!("ARRAY_UNION", resolve_arrays, array_union),
    def!("ARRAY_INTERSECT", resolve_arrays, array_intersect),
    def!("ARRAY_EXCEPT", resolve_arrays, array_except),
    def!("ARRAY_MAX", resolve_extreme, array_max),
    def!("ARRAY_MIN", resolve_extreme, array_min),
    def!("MAP_ENTRIES", resolve_map_entries, map_entries),
];

fn element_of(t: &DataType) -> Result<&DataType, String> {
    match &t.kind {
        TypeKind::Array(e) => Ok(e),
        other => Err(format!("expects an ARRAY, got {other}")),
    }
}

fn array_type(element: DataType, nullable: bool) -> DataType {
    DataType {
        kind: TypeKind::Array(Box::new(element)),
        nullable,
    }
}

/// Row `row`'s element positions in the list's value column.
fn span(list: &ListArray, row: usize) -> std::ops::Range<usize> {
    let offsets = list.value_offsets();
    offsets[row] as usize..offsets[row + 1] as usize
}

/// A list of type `t` gathering `values` at the positions chosen per row (`None`: NULL row).
fn gather(
    values: &ArrayRef,
    rows: Vec<Option<Vec<u32>>>,
    t: &DataType,
) -> Result<ArrayRef, EvalError> {
    let element = element_of(t).map_err(EvalError::Internal)?;
    let nulls: NullBuffer = rows.iter().map(Option::is_some).collect();
    let lengths = rows.iter().map(|r| r.as_ref().map_or(0, Vec::len));
    let offsets = OffsetBuffer::from_lengths(lengths);
    let positions: UInt32Array = rows.into_iter().flatten().flatten().map(Some).collect();
    let taken =
        arrow_select::take::take(values.as_ref(), &positions, None).map_err(internal_error)?;
    let list = ListArray::try_new(
        Arc::new(element.to_arrow_field("element")),
        offsets,
        taken,
        (nulls.null_count() > 0).then_some(nulls),
    )
    .map_err(|e| EvalError::Invalid(e.to_string()))?;
    Ok(Arc::new(list))
}

/// Compares values by position, NULLs equal to each other and first.
fn comparator(
    left: &dyn Array,
    right: &dyn Array,
) -> Result<arrow_ord::ord::DynComparator, EvalError> {
    arrow_ord::ord::make_comparator(left, right, SortOptions::default()).map_err(internal_error)
}

// ---------------------------------------------------------------------------------------------
// One array in, one array out
// ---------------------------------------------------------------------------------------------

fn resolve_same_array(args: &[DataType]) -> Result<Signature, String> {
    let [array] = args else {
        return Err("expects one ARRAY".into());
    };
    element_of(array)?;
    Ok(Signature::new(args.to_vec(), array.clone()))
}

/// ARRAY_DISTINCT: the first occurrence of each element, NULL counted once.
fn array_distinct(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let same = comparator(list.values().as_ref(), list.values().as_ref())?;
    let equal = |a: usize, b: usize| same(a, b).is_eq();
    let rows = (0..list.len())
        .map(|row| {
            (!list.is_null(row)).then(|| {
                distinct(span(list, row), &equal)
                    .into_iter()
                    .map(|at| at as u32)
                    .collect()
            })
        })
        .collect();
    gather(list.values(), rows, t)
}

fn array_reverse(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let rows = (0..list.len())
        .map(|row| (!list.is_null(row)).then(|| span(list, row).rev().map(|p| p as u32).collect()))
        .collect();
    gather(list.values(), rows, t)
}

fn resolve_sort(args: &[DataType]) -> Result<Signature, String> {
    let (array, flags) = args.split_first().ok_or("ARRAY_SORT expects an ARRAY")?;
    element_of(array)?;
    if flags.len() > 2 || flags.iter().any(|f| f.kind != TypeKind::Boolean) {
        return Err("ARRAY_SORT expects (array [, ascending [, nulls_first]])".into());
    }
    Ok(Signature::new(
        args.to_vec(),
        DataType {
            nullable: any_nullable(args),
            ..array.clone()
        },
    ))
}

/// ARRAY_SORT(array [, ascending [, nulls_first]]): ascending with NULLs first by default,
/// NULLs last when descending unless told otherwise.
fn array_sort(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let flag = |i: usize, row: usize| {
        args.get(i).map(|a| {
            let b = a.as_boolean();
            (!b.is_null(row)).then(|| b.value(row))
        })
    };
    let values = list.values();
    let order = comparator(values.as_ref(), values.as_ref())?;
    let mut rows = Vec::with_capacity(list.len());
    for row in 0..list.len() {
        let ascending = flag(1, row);
        let nulls_first = flag(2, row);
        if list.is_null(row) || matches!(ascending, Some(None)) || matches!(nulls_first, Some(None))
        {
            rows.push(None);
            continue;
        }
        let ascending = ascending.flatten().unwrap_or(true);
        let nulls_first = nulls_first.flatten().unwrap_or(ascending);
        let mut positions: Vec<u32> = span(list, row).map(|p| p as u32).collect();
        positions.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            match (values.is_null(a), values.is_null(b)) {
                (true, true) => Ordering::Equal,
                (true, false) if nulls_first => Ordering::Less,
                (true, false) => Ordering::Greater,
                (false, true) if nulls_first => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) if ascending => order(a, b),
                (false, false) => order(b, a),
            }
        });
        rows.push(Some(positions));
    }
    gather(values, rows, t)
}

fn resolve_slice(args: &[DataType]) -> Result<Signature, String> {
    let (array, bounds) = args.split_first().ok_or("ARRAY_SLICE expects an ARRAY")?;
    element_of(array)?;
    if bounds.is_empty() || bounds.len() > 2 || bounds.iter().any(|b| !b.kind.is_integer()) {
        return Err("ARRAY_SLICE expects (array, start [, end]) with integer bounds".into());
    }
    let mut sig = vec![array.clone()];
    sig.extend(bounds.iter().map(|b| DataType {
        kind: TypeKind::Int,
        nullable: b.nullable,
    }));
    Ok(Signature::new(
        sig,
        DataType {
            nullable: any_nullable(args),
            ..array.clone()
        },
    ))
}

/// ARRAY_SLICE(array, start [, end]): 1-based and inclusive; 0 is 1, negatives count from
/// the end, the end defaults to the last element.
fn array_slice(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let starts = args[1].as_primitive::<arrow_array::types::Int32Type>();
    let ends = args
        .get(2)
        .map(|e| e.as_primitive::<arrow_array::types::Int32Type>());
    let rows = (0..list.len())
        .map(|row| {
            if list.is_null(row) || starts.is_null(row) || ends.is_some_and(|e| e.is_null(row)) {
                return None;
            }
            let items = span(list, row);
            let len = items.len() as i64;
            let position = |p: i64| if p < 0 { len + p + 1 } else { p.max(1) };
            let from = position(starts.value(row) as i64).max(1);
            let to = ends.map_or(len, |e| position(e.value(row) as i64)).min(len);
            Some(
                (from..=to)
                    .map(|p| (items.start as i64 + p - 1) as u32)
                    .collect(),
            )
        })
        .collect();
    gather(list.values(), rows, t)
}

// ---------------------------------------------------------------------------------------------
// An array and an element
// ---------------------------------------------------------------------------------------------

/// The element type an array and an extra element share.
fn with_element(array: &DataType, element: &DataType) -> Result<DataType, String> {
    let own = element_of(array)?;
    common_type_of(&[own.clone(), element.clone()])
        .ok_or_else(|| format!("ARRAY<{}> cannot hold {}", own.kind, element.kind))
}

fn resolve_position(args: &[DataType]) -> Result<Signature, String> {
    let [array, needle] = args else {
        return Err("ARRAY_POSITION expects (array, element)".into());
    };
    let common = with_element(array, needle)?;
    Ok(Signature::new(
        vec![
            array_type(common.clone(), array.nullable),
            common.with_nullable(needle.nullable),
        ],
        DataType {
            kind: TypeKind::Int,
            nullable: array.nullable || needle.nullable,
        },
    ))
}

/// ARRAY_POSITION: the 1-based place of the first equal element, 0 if none, NULL for a NULL
/// needle.
fn array_position(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let needle = &args[1];
    let equal = comparator(list.values().as_ref(), needle.as_ref())?;
    let mut b = Int32Builder::with_capacity(list.len());
    for row in 0..list.len() {
        if list.is_null(row) || needle.is_null(row) {
            b.append_null();
            continue;
        }
        let items = span(list, row);
        let start = items.start;
        let found = items.clone().find(|&at| equal(at, row).is_eq());
        b.append_value(found.map_or(0, |at| (at - start + 1) as i32));
    }
    Ok(Arc::new(b.finish()))
}

fn resolve_with_element(args: &[DataType]) -> Result<Signature, String> {
    let [array, element] = args else {
        return Err("expects (array, element)".into());
    };
    let common = with_element(array, element)?;
    Ok(Signature::new(
        vec![
            array_type(common.clone(), array.nullable),
            common.with_nullable(element.nullable),
        ],
        array_type(common, array.nullable),
    ))
}

/// ARRAY_REMOVE: every element equal to the needle left out (a NULL needle removes NULLs).
fn array_remove(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let needle = &args[1];
    let equal = comparator(list.values().as_ref(), needle.as_ref())?;
    let rows = (0..list.len())
        .map(|row| {
            (!list.is_null(row)).then(|| {
                span(list, row)
                    .filter(|&at| !equal(at, row).is_eq())
                    .map(|at| at as u32)
                    .collect()
            })
        })
        .collect();
    gather(list.values(), rows, t)
}

/// The list's values followed by the element column, for APPEND and PREPEND.
fn values_and(list: &ListArray, element: &ArrayRef) -> Result<ArrayRef, EvalError> {
    arrow_select::concat::concat(&[list.values().as_ref(), element.as_ref()])
        .map_err(internal_error)
}

fn array_append(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let values = values_and(list, &args[1])?;
    let base = list.values().len();
    let rows = (0..list.len())
        .map(|row| {
            (!list.is_null(row)).then(|| {
                let mut p: Vec<u32> = span(list, row).map(|at| at as u32).collect();
                p.push((base + row) as u32);
                p
            })
        })
        .collect();
    gather(&values, rows, t)
}

fn array_prepend(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let values = values_and(list, &args[1])?;
    let base = list.values().len();
    let rows = (0..list.len())
        .map(|row| {
            (!list.is_null(row)).then(|| {
                let mut p = vec![(base + row) as u32];
                p.extend(span(list, row).map(|at| at as u32));
                p
            })
        })
        .collect();
    gather(&values, rows, t)
}

// ---------------------------------------------------------------------------------------------
// Several arrays
// ---------------------------------------------------------------------------------------------

fn resolve_arrays(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("expects at least one ARRAY".into());
    }
    let elements = args
        .iter()
        .map(|a| element_of(a).cloned())
        .collect::<Result<Vec<_>, _>>()?;
    let common = common_type_of(&elements).ok_or("the arrays' elements have no common type")?;
    Ok(Signature::new(
        args.iter()
            .map(|a| array_type(common.clone(), a.nullable))
            .collect(),
        array_type(common, any_nullable(args)),
    ))
}

/// The arrays' value columns one after another, and where each array's values start.
fn all_values(args: &[ArrayRef]) -> Result<(ArrayRef, Vec<usize>), EvalError> {
    let lists: Vec<&ListArray> = args.iter().map(|a| a.as_list::<i32>()).collect();
    let mut bases = Vec::with_capacity(lists.len());
    let mut total = 0;
    for l in &lists {
        bases.push(total);
        total += l.values().len();
    }
    let columns: Vec<&dyn Array> = lists.iter().map(|l| l.values().as_ref()).collect();
    Ok((
        arrow_select::concat::concat(&columns).map_err(internal_error)?,
        bases,
    ))
}

/// Positions in [`all_values`] of array `k`'s elements in row `row`; `None` for a NULL array.
fn positions(args: &[ArrayRef], bases: &[usize], k: usize, row: usize) -> Option<Vec<usize>> {
    let list = args[k].as_list::<i32>();
    (!list.is_null(row)).then(|| span(list, row).map(|at| bases[k] + at).collect())
}

/// Runs `combine` on each row's per-array positions; NULL when any array is NULL.
fn combine_arrays(
    args: &[ArrayRef],
    t: &DataType,
    combine: impl Fn(&[Vec<usize>], &dyn Fn(usize, usize) -> bool) -> Vec<usize>,
) -> Result<ArrayRef, EvalError> {
    let (values, bases) = all_values(args)?;
    let same = comparator(values.as_ref(), values.as_ref())?;
    let equal = |a: usize, b: usize| same(a, b).is_eq();
    let rows = (0..args[0].len())
        .map(|row| {
            let per_array: Option<Vec<Vec<usize>>> = (0..args.len())
                .map(|k| positions(args, &bases, k, row))
                .collect();
            per_array.map(|p| {
                combine(&p, &equal)
                    .into_iter()
                    .map(|at| at as u32)
                    .collect()
            })
        })
        .collect();
    gather(&values, rows, t)
}

fn distinct(
    items: impl IntoIterator<Item = usize>,
    equal: &dyn Fn(usize, usize) -> bool,
) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for at in items {
        if !kept.iter().any(|&k| equal(k, at)) {
            kept.push(at);
        }
    }
    kept
}

/// ARRAY_CONCAT: all elements in order.
fn array_concat(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    combine_arrays(args, t, |p, _| p.concat())
}

/// ARRAY_UNION: the distinct elements of all the arrays, in order of first appearance.
fn array_union(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    combine_arrays(args, t, |p, equal| distinct(p.concat(), equal))
}

/// ARRAY_INTERSECT: the distinct elements of the first array found in every other one.
fn array_intersect(
    args: &[ArrayRef],
    _: &EvalContext,
    t: &DataType,
) -> Result<ArrayRef, EvalError> {
    combine_arrays(args, t, |p, equal| {
        let found = p[0].iter().copied().filter(|&a| {
            p[1..]
                .iter()
                .all(|other| other.iter().any(|&b| equal(a, b)))
        });
        distinct(found, equal)
    })
}

/// ARRAY_EXCEPT: the distinct elements of the first array found in none of the others.
fn array_except(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    combine_arrays(args, t, |p, equal| {
        let kept = p[0].iter().copied().filter(|&a| {
            !p[1..]
                .iter()
                .any(|other| other.iter().any(|&b| equal(a, b)))
        });
        distinct(kept, equal)
    })
}

// ---------------------------------------------------------------------------------------------
// ARRAY_MAX, ARRAY_MIN, MAP_ENTRIES
// ---------------------------------------------------------------------------------------------

fn resolve_extreme(args: &[DataType]) -> Result<Signature, String> {
    let [array] = args else {
        return Err("expects one ARRAY".into());
    };
    let element = element_of(array)?;
    if matches!(
        element.kind,
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
    ) {
        return Err(format!("cannot order ARRAY<{}>", element.kind));
    }
    Ok(Signature::new(args.to_vec(), element.with_nullable(true)))
}

/// The greatest (or least) non-NULL element; NULL for an empty or all-NULL array.
fn extreme(args: &[ArrayRef], greatest: bool) -> Result<ArrayRef, EvalError> {
    let list = args[0].as_list::<i32>();
    let values = list.values();
    let order = comparator(values.as_ref(), values.as_ref())?;
    let positions: UInt32Array = (0..list.len())
        .map(|row| {
            if list.is_null(row) {
                return None;
            }
            span(list, row)
                .filter(|&at| values.is_valid(at))
                .reduce(|best, at| {
                    let better = if greatest {
                        order(at, best).is_gt()
                    } else {
                        order(at, best).is_lt()
                    };
                    if better { at } else { best }
                })
                .map(|at| at as u32)
        })
        .collect();
    arrow_select::take::take(values.as_ref(), &positions, None).map_err(internal_error)
}

fn array_max(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    extreme(args, true)
}

fn array_min(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    extreme(args, false)
}

fn resolve_map_entries(args: &[DataType]) -> Result<Signature, String> {
    let [map] = args else {
        return Err("MAP_ENTRIES expects one MAP".into());
    };
    let TypeKind::Map(k, v) = &map.kind else {
        return Err(format!("MAP_ENTRIES expects a MAP, got {}", map.kind));
    };
    let entry = DataType::nullable(TypeKind::Row(vec![
        ("key".into(), k.as_ref().clone()),
        ("value".into(), v.as_ref().clone()),
    ]));
    Ok(Signature::new(
        args.to_vec(),
        array_type(entry, map.nullable),
    ))
}

/// MAP_ENTRIES: the map's entries as an array of `ROW<key, value>`.
fn map_entries(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let map = args[0].as_map();
    let element = element_of(t).map_err(EvalError::Internal)?;
    let arrow_schema::DataType::Struct(fields) = element.to_arrow() else {
        return Err(EvalError::Internal(
            "MAP_ENTRIES element is not a row".into(),
        ));
    };
    let entries = arrow_array::StructArray::try_new(
        fields,
        vec![map.keys().clone(), map.values().clone()],
        None,
    )
    .map_err(|e| EvalError::Invalid(e.to_string()))?;
    let list = ListArray::try_new(
        Arc::new(element.to_arrow_field("element")),
        map.offsets().clone(),
        Arc::new(entries),
        map.nulls().cloned(),
    )
    .map_err(|e| EvalError::Invalid(e.to_string()))?;
    Ok(Arc::new(list))
}

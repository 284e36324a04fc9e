//! Bound scalar expressions: typed, with columns resolved to input positions.

use crate::function::FunctionDef;
use crate::types::value::Value;
use crate::types::{DataType, TimeAttribute};

#[derive(Debug, Clone)]
pub enum ScalarExpr {
    /// The input column at `index`.
    Column {
        index: usize,
        data_type: DataType,
    },
    Literal {
        value: Value,
        data_type: DataType,
    },
    Call {
        function: &'static FunctionDef,
        args: Vec<ScalarExpr>,
        data_type: DataType,
    },
    Cast {
        expr: Box<ScalarExpr>,
        data_type: DataType,
        try_cast: bool,
        /// Inserted by the binder to widen a numeric operand of arithmetic or a comparison
        /// to its partner's type: Calcite has no cast there, so plans do not show it.
        implicit: bool,
    },
    /// Field `index` (named `name`) of a ROW value; NULL where the row is NULL.
    Field {
        expr: Box<ScalarExpr>,
        index: usize,
        name: String,
        data_type: DataType,
    },
    /// `expr IN (c1, c2, …)` over constant items (literals, or casts of them) already of
    /// `expr`'s type: TRUE when one equals it, else NULL when `expr` or an item is NULL, else
    /// FALSE.
    InList {
        expr: Box<ScalarExpr>,
        list: Vec<ScalarExpr>,
        data_type: DataType,
    },
    /// `CASE WHEN c1 THEN r1 … ELSE e END`; a missing ELSE is NULL. `written_as_if`: the
    /// query's `IF(c, r, e)`, which Flink's plans print as IF.
    Case {
        branches: Vec<(ScalarExpr, ScalarExpr)>,
        otherwise: Option<Box<ScalarExpr>>,
        data_type: DataType,
        written_as_if: bool,
    },
}

impl ScalarExpr {
    pub fn data_type(&self) -> &DataType {
        match self {
            ScalarExpr::Column { data_type, .. }
            | ScalarExpr::Literal { data_type, .. }
            | ScalarExpr::Call { data_type, .. }
            | ScalarExpr::Cast { data_type, .. }
            | ScalarExpr::Field { data_type, .. }
            | ScalarExpr::InList { data_type, .. }
            | ScalarExpr::Case { data_type, .. } => data_type,
        }
    }

    /// The operands, in order.
    pub fn children(&self) -> Vec<&ScalarExpr> {
        match self {
            ScalarExpr::Column { .. } | ScalarExpr::Literal { .. } => Vec::new(),
            ScalarExpr::Call { args, .. } => args.iter().collect(),
            ScalarExpr::Cast { expr, .. } | ScalarExpr::Field { expr, .. } => vec![expr],
            ScalarExpr::InList { expr, list, .. } => {
                std::iter::once(expr.as_ref()).chain(list).collect()
            }
            ScalarExpr::Case {
                branches,
                otherwise,
                ..
            } => branches
                .iter()
                .flat_map(|(c, r)| [c, r])
                .chain(otherwise.as_deref())
                .collect(),
        }
    }

    /// Levels of nesting (a column or literal is 1), counted without recursion so that it
    /// can measure expressions too deep to recurse over.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1)];
        while let Some((e, level)) = stack.pop() {
            deepest = deepest.max(level);
            stack.extend(e.children().into_iter().map(|c| (c, level + 1)));
        }
        deepest
    }

    /// A literal, or a cast of a constant: the same value on every row.
    pub fn is_constant(&self) -> bool {
        match self {
            ScalarExpr::Literal { .. } => true,
            ScalarExpr::Cast { expr, .. } => expr.is_constant(),
            _ => false,
        }
    }

    /// The time attribute this expression forwards unchanged, if any: a plain column
    /// reference keeps it, a PROCTIME() call creates one, anything computed materializes it.
    pub fn time_attribute(&self, input: &[Option<TimeAttribute>]) -> Option<TimeAttribute> {
        match self {
            ScalarExpr::Column { index, .. } => input.get(*index).copied().flatten(),
            ScalarExpr::Call { function, .. } if function.name == "PROCTIME" => {
                Some(TimeAttribute::Proctime)
            }
            _ => None,
        }
    }

    /// Marks in `used` the input columns the expression reads.
    pub fn mark_columns(&self, used: &mut [bool]) {
        self.for_each_column(&mut |i| used[i] = true);
    }

    /// Calls `f` with the index of every input column reference, once per reference.
    pub fn for_each_column(&self, f: &mut dyn FnMut(usize)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            if let ScalarExpr::Column { index, .. } = e {
                f(*index);
            }
            stack.extend(e.children());
        }
    }

    /// The expression with each input column `i` replaced by `f(i, its type)`.
    pub fn map_columns(&self, f: &mut dyn FnMut(usize, &DataType) -> ScalarExpr) -> ScalarExpr {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.map_columns_nested(f))
    }

    fn map_columns_nested(&self, f: &mut dyn FnMut(usize, &DataType) -> ScalarExpr) -> ScalarExpr {
        let boxed = |e: &ScalarExpr, f: &mut dyn FnMut(usize, &DataType) -> ScalarExpr| {
            Box::new(e.map_columns(f))
        };
        match self {
            ScalarExpr::Column { index, data_type } => f(*index, data_type),
            ScalarExpr::Literal { .. } => self.clone(),
            ScalarExpr::Call {
                function,
                args,
                data_type,
            } => ScalarExpr::Call {
                function,
                args: args.iter().map(|a| a.map_columns(f)).collect(),
                data_type: data_type.clone(),
            },
            ScalarExpr::Cast {
                expr,
                data_type,
                try_cast,
                implicit,
            } => ScalarExpr::Cast {
                expr: boxed(expr, f),
                data_type: data_type.clone(),
                try_cast: *try_cast,
                implicit: *implicit,
            },
            ScalarExpr::Field {
                expr,
                index,
                name,
                data_type,
            } => ScalarExpr::Field {
                expr: boxed(expr, f),
                index: *index,
                name: name.clone(),
                data_type: data_type.clone(),
            },
            ScalarExpr::InList {
                expr,
                list,
                data_type,
            } => ScalarExpr::InList {
                expr: boxed(expr, f),
                list: list.iter().map(|e| e.map_columns(f)).collect(),
                data_type: data_type.clone(),
            },
            ScalarExpr::Case {
                branches,
                otherwise,
                data_type,
                written_as_if,
            } => ScalarExpr::Case {
                branches: branches
                    .iter()
                    .map(|(c, r)| (c.map_columns(f), r.map_columns(f)))
                    .collect(),
                otherwise: otherwise.as_ref().map(|e| boxed(e, f)),
                data_type: data_type.clone(),
                written_as_if: *written_as_if,
            },
        }
    }

    /// The expression with each subexpression `f` replaces (tried top-down: a replaced
    /// subexpression is not looked into) replaced.
    pub fn rewrite(&self, f: &mut dyn FnMut(&ScalarExpr) -> Option<ScalarExpr>) -> ScalarExpr {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.rewrite_nested(f))
    }

    fn rewrite_nested(&self, f: &mut dyn FnMut(&ScalarExpr) -> Option<ScalarExpr>) -> ScalarExpr {
        if let Some(replaced) = f(self) {
            return replaced;
        }
        let mut boxed = |e: &ScalarExpr| Box::new(e.rewrite(f));
        match self {
            ScalarExpr::Column { .. } | ScalarExpr::Literal { .. } => self.clone(),
            ScalarExpr::Call {
                function,
                args,
                data_type,
            } => ScalarExpr::Call {
                function,
                args: args.iter().map(|a| *boxed(a)).collect(),
                data_type: data_type.clone(),
            },
            ScalarExpr::Cast {
                expr,
                data_type,
                try_cast,
                implicit,
            } => ScalarExpr::Cast {
                expr: boxed(expr),
                data_type: data_type.clone(),
                try_cast: *try_cast,
                implicit: *implicit,
            },
            ScalarExpr::Field {
                expr,
                index,
                name,
                data_type,
            } => ScalarExpr::Field {
                expr: boxed(expr),
                index: *index,
                name: name.clone(),
                data_type: data_type.clone(),
            },
            ScalarExpr::InList {
                expr,
                list,
                data_type,
            } => ScalarExpr::InList {
                expr: boxed(expr),
                list: list.iter().map(|e| *boxed(e)).collect(),
                data_type: data_type.clone(),
            },
            ScalarExpr::Case {
                branches,
                otherwise,
                data_type,
                written_as_if,
            } => ScalarExpr::Case {
                branches: branches
                    .iter()
                    .map(|(c, r)| (*boxed(c), *boxed(r)))
                    .collect(),
                otherwise: otherwise.as_ref().map(|e| boxed(e)),
                data_type: data_type.clone(),
                written_as_if: *written_as_if,
            },
        }
    }

    pub fn is_literal_null(&self) -> bool {
        matches!(
            self,
            ScalarExpr::Literal {
                value: Value::Null,
                ..
            }
        )
    }
}

/// When less than this much stack is left, a recursion step continues on a new segment ...
pub const STACK_RED_ZONE: usize = 256 * 1024;
/// ... of this size, allocated on the heap.
pub const STACK_SEGMENT: usize = 4 * 1024 * 1024;

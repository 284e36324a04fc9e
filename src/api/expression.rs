//! The expressions of a schema declaration: Flink's `$("name")`, `.rowtime()`, `.proctime()`.

use std::fmt;

/// A field of a schema declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expression {
    pub(super) name: String,
    pub(super) kind: ExpressionKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ExpressionKind {
    Reference,
    Rowtime,
    Proctime,
}

/// A reference to a field of the stream (by name, or naming the field at its position).
pub fn col(name: impl Into<String>) -> Expression {
    Expression {
        name: name.into(),
        kind: ExpressionKind::Reference,
    }
}

impl Expression {
    /// An event-time attribute holding the rows' event timestamps, `TIMESTAMP(3)`: a new
    /// field, or replacing the stream's field of the name (or position).
    pub fn rowtime(self) -> Expression {
        Expression {
            kind: ExpressionKind::Rowtime,
            ..self
        }
    }

    /// A processing-time attribute, `TIMESTAMP_LTZ(3)`: a new field only.
    pub fn proctime(self) -> Expression {
        Expression {
            kind: ExpressionKind::Proctime,
            ..self
        }
    }
}

/// As Flink prints an unresolved expression in its messages (`proctime(pt)`).
impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ExpressionKind::Reference => write!(f, "{}", self.name),
            ExpressionKind::Rowtime => write!(f, "rowtime({})", self.name),
            ExpressionKind::Proctime => write!(f, "proctime({})", self.name),
        }
    }
}

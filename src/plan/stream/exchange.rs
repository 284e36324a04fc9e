//! `Exchange`: where rows change hands between parallel instances, by the hash of key
//! columns or all to one instance (docs/design/0003 §2: an exchange becomes a `Hash` or
//! `Global` edge of the job graph). Rows pass unchanged.

use super::StreamPlan;
use crate::types::Schema;

/// How a node's output is spread over the instances of the node above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distribution {
    /// Wherever the rows are: no exchange needed.
    Any,
    /// By the hash of these columns: rows with equal keys meet in one instance.
    Hash(Vec<usize>),
    /// Every row to one instance.
    Single,
}

#[derive(Debug, Clone)]
pub struct StreamExchange {
    pub input: Box<StreamPlan>,
    /// [`Distribution::Hash`] or [`Distribution::Single`].
    pub distribution: Distribution,
    pub schema: Schema,
}

impl StreamExchange {
    /// `Exchange(distribution=[hash[name]])`, `Exchange(distribution=[single])`.
    pub fn explain(&self) -> String {
        let distribution = match &self.distribution {
            Distribution::Hash(keys) => {
                let names: Vec<&str> = keys
                    .iter()
                    .map(|&k| self.schema.fields[k].name.as_str())
                    .collect();
                format!("hash[{}]", names.join(", "))
            }
            Distribution::Single => "single".to_string(),
            Distribution::Any => "any".to_string(),
        };
        format!("Exchange(distribution=[{distribution}])")
    }
}

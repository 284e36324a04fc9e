//! `Union`: UNION ALL, its inputs' rows in any interleaving.

use super::StreamPlan;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamUnion {
    pub inputs: Vec<StreamPlan>,
    pub schema: Schema,
}

impl StreamUnion {
    pub fn explain(&self) -> String {
        format!("Union(all=[true], union=[{}])", super::names(&self.schema))
    }
}

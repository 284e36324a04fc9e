//! `DropUpdateBefore`: a changelog source's `-U` rows dropped where its consumer takes
//! updates as upserts (Flink's `StreamPhysicalDropUpdateBefore`, which its changelog pass
//! puts over a source that produces `-U` when only `+U` is asked for: below a
//! ChangelogNormalize, a temporal join's versioned side, a join input unique by its key, an
//! explained query's root). Stateless (`exec/drop_update_before.rs`).

use super::{ChangelogMode, StreamPlan};
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamDropUpdateBefore {
    pub input: Box<StreamPlan>,
    pub schema: Schema,
}

impl StreamDropUpdateBefore {
    pub fn over(input: StreamPlan) -> Self {
        StreamDropUpdateBefore {
            schema: input.schema().clone(),
            input: Box::new(input),
        }
    }

    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode {
            update_before: false,
            ..self.input.changelog_mode()
        }
    }

    pub fn explain(&self) -> String {
        "DropUpdateBefore".into()
    }
}

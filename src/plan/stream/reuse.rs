//! Sub-plans that occur more than once in a plan, as Flink's sub-plan reuse finds them: two
//! nodes are the same sub-plan when their EXPLAIN lines, output types and inputs are the
//! same (and, for scans, the table's options, which a hint may change without changing the
//! line). The builder reads such a sub-plan once and feeds every consumer from it.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use super::StreamPlan;
use crate::plan::explain::Spelling;

/// A sub-plan's digest.
pub type SubPlan = [u8; 32];

/// The digest of every node of a plan, and which sub-plans are reused.
#[derive(Debug, Default)]
pub struct Reuse {
    digests: HashMap<*const StreamPlan, SubPlan>,
    /// Sub-plans that occur more than once, and not only inside a larger sub-plan that
    /// does (Flink's reused node: the highest one of a repeated subtree).
    reused: HashSet<SubPlan>,
}

impl Reuse {
    /// The reused sub-plans of `plans` (one per sink of a job), within and across them.
    pub fn of(plans: &[&StreamPlan]) -> Reuse {
        let mut digests = HashMap::new();
        let mut parents: Vec<(SubPlan, Option<SubPlan>)> = Vec::new();
        for plan in plans {
            digest(plan, &mut digests, &mut parents);
        }
        let mut counts: HashMap<SubPlan, usize> = HashMap::new();
        for (node, _) in &parents {
            *counts.entry(*node).or_insert(0) += 1;
        }
        let mut reused = HashSet::new();
        for (node, parent) in &parents {
            let count = counts[node];
            // Reused at this node when some occurrence's parent is not itself repeated as
            // often (then the repetition starts here).
            if count > 1 && parent.is_none_or(|p| counts[&p] < count) {
                reused.insert(*node);
            }
        }
        Reuse { digests, reused }
    }

    /// The sub-plan `node` is, when it is a reused one.
    pub fn reused(&self, node: &StreamPlan) -> Option<SubPlan> {
        let digest = self.digests.get(&(node as *const StreamPlan))?;
        self.reused.contains(digest).then_some(*digest)
    }
}

/// The digest of `node`, after its inputs' (each node's entry in `parents` is pushed when
/// its digest is known, with its parent's patched in by the parent).
fn digest(
    node: &StreamPlan,
    digests: &mut HashMap<*const StreamPlan, SubPlan>,
    parents: &mut Vec<(SubPlan, Option<SubPlan>)>,
) -> SubPlan {
    let mut hash = Sha256::new();
    field(&mut hash, node.line(Spelling::Physical, None).as_bytes());
    for f in &node.schema().fields {
        field(&mut hash, f.describe_type().as_bytes());
    }
    if let StreamPlan::TableSourceScan(scan) = node {
        for (key, value) in &scan.table.options {
            field(&mut hash, key.as_bytes());
            field(&mut hash, value.as_bytes());
        }
    }
    let mut children = Vec::new();
    for input in node.inputs() {
        field(&mut hash, &digest(input, digests, parents));
        children.push(parents.len() - 1);
    }
    let own: SubPlan = hash.finalize().into();
    for at in children {
        parents[at].1 = Some(own);
    }
    digests.insert(node as *const StreamPlan, own);
    parents.push((own, None));
    own
}

/// A length-prefixed part of a digest, so that no two sequences of parts hash alike.
fn field(hash: &mut Sha256, bytes: &[u8]) {
    hash.update((bytes.len() as u64).to_le_bytes());
    hash.update(bytes);
}

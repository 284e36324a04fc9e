//! Stable operator ids (docs/design/0008-checkpoints.md, section 3): what a checkpoint's state
//! is matched by when a job restores, as Flink matches operators by their uids.
//!
//! A node's uid is the first 16 bytes of SHA-256 over its EXPLAIN line in the physical
//! spelling (without changelog modes), its output column types, its inputs' uids in order, and
//! its occurrence number among the nodes that hash alike before it in a walk from the root,
//! inputs first and left to right (two scans of one table under a UNION differ by it). So the
//! same SQL over the same catalog gets the same uids in any session and at any parallelism
//! (table options, session options and TTL are in no line), and a change at or below a node
//! changes its uid while a change above it does not.

use std::collections::HashMap;
use std::fmt;

use sha2::{Digest, Sha256};

use super::StreamPlan;
use crate::plan::explain::Spelling;

/// A node's uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperatorUid(pub [u8; 16]);

impl fmt::Display for OperatorUid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A node of a plan with its uid, and the line a refusal names it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeUid {
    pub uid: OperatorUid,
    pub line: String,
}

impl NodeUid {
    /// The uid of an operator no plan node made (a graph built by hand, in tests).
    pub fn unnamed() -> Self {
        NodeUid {
            uid: OperatorUid([0; 16]),
            line: String::new(),
        }
    }
}

/// The uids of every node of `plan`, inputs before the nodes reading them, left to right.
pub fn operator_uids(plan: &StreamPlan) -> Vec<NodeUid> {
    let mut out = Vec::new();
    walk(plan, &mut HashMap::new(), &mut |_, uid| out.push(uid));
    out
}

/// The uid of every node of `plans` (one per sink of a job), by the node's address: the
/// builder gives the operators it makes for a node the node's uid. The plans are walked in
/// turn as one, so that two INSERTs of a statement set scanning one table give their scans
/// two uids; the first plan's uids are those it has alone.
pub fn uids_by_node(plans: &[&StreamPlan]) -> HashMap<*const StreamPlan, NodeUid> {
    let mut out = HashMap::new();
    let mut seen = HashMap::new();
    for plan in plans {
        walk(plan, &mut seen, &mut |node, uid| {
            out.insert(node as *const StreamPlan, uid);
        });
    }
    out
}

fn walk(
    node: &StreamPlan,
    seen: &mut HashMap<[u8; 32], u64>,
    out: &mut dyn FnMut(&StreamPlan, NodeUid),
) -> OperatorUid {
    let inputs: Vec<OperatorUid> = node
        .inputs()
        .into_iter()
        .map(|input| walk(input, seen, out))
        .collect();
    let line = node.line(Spelling::Physical, None);
    let mut hash = Sha256::new();
    field(&mut hash, line.as_bytes());
    for f in &node.schema().fields {
        field(&mut hash, f.describe_type().as_bytes());
    }
    for input in &inputs {
        field(&mut hash, &input.0);
    }
    let base: [u8; 32] = hash.finalize().into();
    let occurrence = seen.entry(base).or_insert(0);
    let mut hash = Sha256::new();
    hash.update(base);
    hash.update(occurrence.to_le_bytes());
    *occurrence += 1;
    let full: [u8; 32] = hash.finalize().into();
    let mut uid = [0u8; 16];
    uid.copy_from_slice(&full[..16]);
    let uid = OperatorUid(uid);
    out(node, NodeUid { uid, line });
    uid
}

/// A length-prefixed part of a digest, so that no two sequences of parts hash alike.
fn field(hash: &mut Sha256, bytes: &[u8]) {
    hash.update((bytes.len() as u64).to_le_bytes());
    hash.update(bytes);
}

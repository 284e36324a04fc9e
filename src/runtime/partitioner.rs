//! How an edge of the job graph spreads a sender's chunks over the receiving instances:
//! `Forward` (instance i to instance i), `Hash` (each row to the instance owning its key's
//! key group), `Global` (everything to instance 0), `Broadcast` (everything to every
//! instance), `Rebalance` (whole chunks round robin).

use arrow_array::UInt32Array;
use arrow_select::take::take_record_batch;

use crate::exec::error::ExecError;
use crate::exec::state::key::KeyEncoder;
use crate::exec::state::key_group::{instance_of, key_group_of};
use crate::types::chunk::StreamChunk;

pub enum Partitioner {
    Forward,
    Hash {
        keys: KeyEncoder,
        max_parallelism: u32,
    },
    Global,
    Broadcast,
    /// The next receiver.
    Rebalance(usize),
}

impl Partitioner {
    /// Where the rows of `chunk`, sent by instance `sender`, go among `receivers`
    /// instances: one chunk per receiving instance that gets rows, rows in their order.
    pub fn partition(
        &mut self,
        chunk: StreamChunk,
        sender: usize,
        receivers: usize,
    ) -> Result<Vec<(usize, StreamChunk)>, ExecError> {
        match self {
            Partitioner::Forward => Ok(vec![(sender, chunk)]),
            Partitioner::Global => Ok(vec![(0, chunk)]),
            Partitioner::Broadcast => Ok((0..receivers).map(|r| (r, chunk.clone())).collect()),
            Partitioner::Rebalance(next) => {
                let to = *next % receivers;
                *next = (to + 1) % receivers;
                Ok(vec![(to, chunk)])
            }
            Partitioner::Hash {
                keys,
                max_parallelism,
            } => {
                if receivers == 1 {
                    return Ok(vec![(0, chunk)]);
                }
                let rows = keys.encode(&chunk.batch)?;
                let mut indices: Vec<Vec<u32>> = vec![Vec::new(); receivers];
                for (i, row) in rows.iter().enumerate() {
                    let group = key_group_of(row.as_ref(), *max_parallelism);
                    let to = instance_of(group, *max_parallelism, receivers as u32) as usize;
                    indices[to].push(i as u32);
                }
                let mut out = Vec::new();
                for (to, rows) in indices.into_iter().enumerate() {
                    if rows.is_empty() {
                        continue;
                    }
                    let kinds = chunk
                        .kinds
                        .as_ref()
                        .map(|k| rows.iter().map(|&i| k[i as usize]).collect());
                    let batch = take_record_batch(&chunk.batch, &UInt32Array::from(rows))?;
                    out.push((to, StreamChunk { batch, kinds }));
                }
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::operator::Output;
    use crate::exec::state::key_group::{DEFAULT_MAX_PARALLELISM, KeyGroupRange};
    use crate::exec::test_harness::{Recorder, chunk, schema};
    use crate::types::TypeKind;

    fn table() -> crate::types::Schema {
        schema(&[("user", TypeKind::VarChar(10)), ("n", TypeKind::Int)])
    }

    fn hash() -> Partitioner {
        let arrow = crate::types::chunk::runtime_schema(&table());
        Partitioner::Hash {
            keys: KeyEncoder::new(&arrow, vec![0]).unwrap(),
            max_parallelism: DEFAULT_MAX_PARALLELISM,
        }
    }

    /// Each row goes to one instance, the same for the same key in every chunk, and that
    /// instance owns the key's key group; row kinds travel with their rows.
    #[test]
    fn hash_sends_a_key_to_the_instance_owning_its_key_group() {
        let mut p = hash();
        let text = "+I Mary | 1\n+I Bob | 2\n-U Mary | 1\n+U Mary | 3\n+I Liz | 4\n+I Bob | 5";
        let first = p.partition(chunk(&table(), text), 0, 3).unwrap();
        let again = p.partition(chunk(&table(), text), 2, 3).unwrap();
        let show = |parts: &[(usize, StreamChunk)]| {
            let mut lines = Vec::new();
            for (to, c) in parts {
                let mut r = Recorder::new(&table());
                r.emit(c.clone()).unwrap();
                lines.push(format!("{to}: {}", r.take().replace('\n', ", ")));
            }
            lines
        };
        assert_eq!(show(&first), show(&again));
        let total: usize = first.iter().map(|(_, c)| c.num_rows()).sum();
        assert_eq!(total, 6);
        // Where each key went, from the key groups themselves.
        let arrow = crate::types::chunk::runtime_schema(&table());
        let keys = KeyEncoder::new(&arrow, vec![0]).unwrap();
        for (to, c) in &first {
            let rows = keys.encode(&c.batch).unwrap();
            for row in rows.iter() {
                let group = key_group_of(row.as_ref(), DEFAULT_MAX_PARALLELISM);
                assert!(
                    KeyGroupRange::of_instance(DEFAULT_MAX_PARALLELISM, 3, *to as u32)
                        .contains(group)
                );
            }
        }
        // A key's rows stay together and in order.
        let with_mary: Vec<String> = show(&first)
            .into_iter()
            .filter(|l| l.contains("Mary"))
            .collect();
        assert_eq!(with_mary.len(), 1, "{with_mary:?}");
        assert!(
            with_mary[0].contains("+I Mary | 1, -U Mary | 1, +U Mary | 3"),
            "{with_mary:?}"
        );
    }

    #[test]
    fn the_other_partitioners() {
        let c = || chunk(&table(), "+I a | 1");
        assert_eq!(Partitioner::Forward.partition(c(), 2, 4).unwrap()[0].0, 2);
        assert_eq!(Partitioner::Global.partition(c(), 2, 4).unwrap()[0].0, 0);
        let to: Vec<usize> = Partitioner::Broadcast
            .partition(c(), 1, 3)
            .unwrap()
            .iter()
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(to, [0, 1, 2]);
        let mut r = Partitioner::Rebalance(0);
        let to: Vec<usize> = (0..5)
            .map(|_| r.partition(c(), 0, 3).unwrap()[0].0)
            .collect();
        assert_eq!(to, [0, 1, 2, 0, 1]);
    }
}

//! Key groups, as Flink's `KeyGroupRangeAssignment` has them: a key belongs to one of
//! `max_parallelism` key groups, and the instances of an operator own contiguous ranges of
//! them, so state can be snapshotted per key group and restored at another parallelism.
//!
//! A key's group comes from a hash of its encoded bytes (the `arrow-row` form of its key
//! columns). The hash is Tideline's own, not Java's `hashCode`: results never depend on it,
//! snapshots do, so it must never change.

/// Flink's default `pipeline.max-parallelism` for a job that does not set one.
pub const DEFAULT_MAX_PARALLELISM: u32 = 128;

/// The key groups `start..=end` one operator instance owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyGroupRange {
    pub start: u32,
    pub end: u32,
}

impl KeyGroupRange {
    /// The range of instance `index` of `parallelism` (Flink's
    /// `computeKeyGroupRangeForOperatorIndex`).
    pub fn of_instance(max_parallelism: u32, parallelism: u32, index: u32) -> Self {
        let (max, p, i) = (
            u64::from(max_parallelism),
            u64::from(parallelism),
            u64::from(index),
        );
        KeyGroupRange {
            start: ((i * max).div_ceil(p)) as u32,
            end: (((i + 1) * max - 1) / p) as u32,
        }
    }

    pub fn contains(&self, key_group: u32) -> bool {
        (self.start..=self.end).contains(&key_group)
    }

    /// That a restored key group is this instance's, or the error saying it is not.
    pub fn check_owned(&self, key_group: u32) -> Result<(), crate::exec::error::ExecError> {
        if self.contains(key_group) {
            return Ok(());
        }
        Err(crate::exec::error::ExecError::Internal(format!(
            "key group {key_group} is not in this instance's range {self:?}"
        )))
    }

    pub fn len(&self) -> usize {
        (self.end + 1 - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.end < self.start
    }
}

/// The instance of `parallelism` that owns `key_group` (Flink's
/// `computeOperatorIndexForKeyGroup`).
pub fn instance_of(key_group: u32, max_parallelism: u32, parallelism: u32) -> u32 {
    (u64::from(key_group) * u64::from(parallelism) / u64::from(max_parallelism)) as u32
}

/// The key group of a key's encoded bytes.
pub fn key_group_of(key: &[u8], max_parallelism: u32) -> u32 {
    (hash(key) % u64::from(max_parallelism)) as u32
}

/// A 64-bit hash of bytes: eight at a time through a multiply-and-rotate step, the rest
/// byte by byte, the length mixed in, and MurmurHash3's 64-bit finalizer so every input bit
/// reaches the low bits the modulo reads.
pub fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (bytes.len() as u64 ^ K).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        h = (h ^ w.wrapping_mul(K)).rotate_left(27).wrapping_mul(K);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K).rotate_left(31);
    }
    fmix64(h)
}

fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flink's ranges for 128 key groups over 3 instances.
    #[test]
    fn ranges_are_flinks() {
        assert_eq!(
            KeyGroupRange::of_instance(128, 3, 0),
            KeyGroupRange { start: 0, end: 42 }
        );
        assert_eq!(
            KeyGroupRange::of_instance(128, 3, 1),
            KeyGroupRange { start: 43, end: 85 }
        );
        assert_eq!(
            KeyGroupRange::of_instance(128, 3, 2),
            KeyGroupRange {
                start: 86,
                end: 127
            }
        );
        assert_eq!(instance_of(42, 128, 3), 0);
        assert_eq!(instance_of(43, 128, 3), 1);
        assert_eq!(instance_of(127, 128, 3), 2);
    }

    /// Every key group belongs to exactly the instance whose range holds it, and the ranges
    /// cover the groups in order without gaps, for every parallelism up to the maximum.
    #[test]
    fn ranges_partition_the_key_groups_and_agree_with_the_owner() {
        for max in [1u32, 2, 7, 128, 300, 32_768] {
            for p in (1..=max.min(64)).chain([max]) {
                let mut next = 0;
                for i in 0..p {
                    let range = KeyGroupRange::of_instance(max, p, i);
                    assert_eq!(range.start, next, "max {max}, p {p}, instance {i}");
                    for kg in [range.start, range.end] {
                        assert_eq!(instance_of(kg, max, p), i, "max {max}, p {p}, kg {kg}");
                    }
                    next = range.end + 1;
                }
                assert_eq!(next, max);
            }
        }
    }

    /// The hash is part of every snapshot's layout: these values must never change.
    #[test]
    fn the_hash_is_fixed() {
        let fixed: Vec<u64> = [&b""[..], b"a", b"Mary", b"12345678", b"123456789"]
            .iter()
            .map(|k| hash(k))
            .collect();
        assert_eq!(fixed, FIXED_HASHES);
    }

    const FIXED_HASHES: [u64; 5] = [
        4_050_689_244_607_654_210,
        10_628_719_393_238_326_602,
        7_477_904_528_272_416_019,
        11_224_458_250_861_034_706,
        11_143_231_839_420_780_839,
    ];

    /// Keys spread evenly: 100,000 keys over 128 groups, none more than 15% off the mean.
    #[test]
    fn keys_spread_over_the_groups() {
        let mut counts = [0u32; 128];
        for i in 0..100_000u32 {
            counts[key_group_of(format!("user_{i}").as_bytes(), 128) as usize] += 1;
        }
        let mean = 100_000.0 / 128.0;
        for c in counts {
            assert!((f64::from(c) - mean).abs() < mean * 0.15, "{counts:?}");
        }
    }
}

/// The bytes a keyed snapshot writes, per key group: a key's group is an index, not a map
/// lookup (a snapshot of millions of keys makes one per key).
#[derive(Debug, Default)]
pub struct GroupBuffers(Vec<Vec<u8>>);

impl GroupBuffers {
    /// The buffer of `key_group`.
    pub fn group(&mut self, key_group: u32) -> &mut Vec<u8> {
        let g = key_group as usize;
        if g >= self.0.len() {
            self.0.resize_with(g + 1, Vec::new);
        }
        &mut self.0[g]
    }

    /// The non-empty groups in ascending order, as `Operator::snapshot` returns them.
    pub fn into_snapshot(self) -> Vec<(u32, Vec<u8>)> {
        self.0
            .into_iter()
            .enumerate()
            .filter(|(_, bytes)| !bytes.is_empty())
            .map(|(g, bytes)| (g as u32, bytes))
            .collect()
    }
}

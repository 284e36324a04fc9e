//! The iteration order of Java's `HashMap`, which decides the order Flink prints a MAP in
//! when it built the map itself (from JSON, with STR_TO_MAP): entries go by hash bucket, and
//! by insertion within a bucket. The hashes are the ones Flink's keys have: Java's
//! `String.hashCode` for a `java.lang.String` key, Flink's Murmur3 of the UTF-8 bytes (seed
//! 42) for a `StringData` key, the value for an `Integer`.

/// Java's `String.hashCode`: UTF-16 units, `h = 31 * h + unit`.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

const C1: i32 = 0xcc9e_2d51_u32 as i32;
const C2: i32 = 0x1b87_3593;

fn mix_k1(k: i32) -> i32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn mix_h1(h: i32, k: i32) -> i32 {
    (h ^ k)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64_u32 as i32)
}

fn fmix(mut h: i32, length: usize) -> i32 {
    h ^= length as i32;
    h ^= ((h as u32) >> 16) as i32;
    h = h.wrapping_mul(0x85eb_ca6b_u32 as i32);
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(0xc2b2_ae35_u32 as i32);
    h ^ ((h as u32) >> 16) as i32
}

/// Flink's `BinaryStringData.hashCode`: `MurmurHashUtil.hashBytes` over the UTF-8 bytes with
/// seed 42 — whole little-endian words first, then the remaining bytes one at a time.
pub fn flink_string_hash(s: &str) -> i32 {
    let bytes = s.as_bytes();
    let aligned = bytes.len() - bytes.len() % 4;
    let mut h = 42i32;
    for word in bytes[..aligned].chunks_exact(4) {
        h = mix_h1(
            h,
            mix_k1(i32::from_le_bytes([word[0], word[1], word[2], word[3]])),
        );
    }
    for &b in &bytes[aligned..] {
        h = mix_h1(h, mix_k1(b as i8 as i32));
    }
    fmix(h, bytes.len())
}

/// The order in which a Java `HashMap` created with `initial_capacity` iterates keys with
/// these hashes, inserted in the given order (duplicates already merged).
pub fn hash_map_order(hashes: &[i32], initial_capacity: usize) -> Vec<usize> {
    let mut table = initial_capacity.max(1).next_power_of_two();
    // Java resizes when the size exceeds three quarters of the table.
    while hashes.len() * 4 > table * 3 {
        table *= 2;
    }
    let bucket = |h: i32| (((h ^ ((h as u32) >> 16) as i32) as u32) as usize) & (table - 1);
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    order.sort_by_key(|&i| (bucket(hashes[i]), i));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hashes() {
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("é"), 233);
    }

    #[test]
    fn buckets_then_insertion() {
        // 97, 98, 99 fall in buckets 1, 2, 3 of a 16-slot table whatever the order of insertion.
        assert_eq!(hash_map_order(&[99, 97, 98], 16), vec![1, 2, 0]);
        // 1 and 17 share bucket 1 of 16: insertion order decides.
        assert_eq!(hash_map_order(&[17, 1], 16), vec![0, 1]);
    }
}

//! A column's cells written as text: the fast paths the CSV and JSON writers share (integers
//! without `write!`'s machinery, strings and doubles without a downcast per cell).

/// One column of a batch being encoded, resolved once per batch so that the row loop writes
/// the common types without a downcast per cell.
pub enum CellWriter<'a> {
    Int32(&'a arrow_array::Int32Array),
    Int64(&'a arrow_array::Int64Array),
    Float64(&'a arrow_array::Float64Array),
    Text(&'a arrow_array::StringArray),
    /// Any other type: the format's general path.
    Other,
}

impl<'a> CellWriter<'a> {
    pub fn new(array: &'a dyn arrow_array::Array, ty: &crate::types::DataType) -> Self {
        use crate::types::TypeKind;
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Float64Type, Int32Type, Int64Type};
        let resolved = match ty.kind {
            TypeKind::Int => array.as_primitive_opt::<Int32Type>().map(CellWriter::Int32),
            TypeKind::BigInt => array.as_primitive_opt::<Int64Type>().map(CellWriter::Int64),
            TypeKind::Double => array
                .as_primitive_opt::<Float64Type>()
                .map(CellWriter::Float64),
            TypeKind::Char(_) | TypeKind::VarChar(_) => {
                array.as_string_opt::<i32>().map(CellWriter::Text)
            }
            _ => None,
        };
        resolved.unwrap_or(CellWriter::Other)
    }
}

/// The two-digit numbers 00 to 99, written out: an integer is printed two digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// Puts the two digits of `pair` (below 100) at `buf[at..at + 2]`.
#[inline(always)]
fn put_pair(buf: &mut [u8; 20], at: usize, pair: u32) {
    let p = 2 * pair as usize;
    buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[p..p + 2]);
}

/// Puts the eight digits of `x` (below 10^8, leading zeros kept) at `buf[at..at + 8]`: four
/// pairs from two halves, independent of each other, where a loop of divisions by 100 would
/// make each wait for the one before.
#[inline(always)]
fn put_eight(buf: &mut [u8; 20], at: usize, x: u32) {
    let (high, low) = (x / 10_000, x % 10_000);
    put_pair(buf, at, high / 100);
    put_pair(buf, at + 2, high % 100);
    put_pair(buf, at + 4, low / 100);
    put_pair(buf, at + 6, low % 100);
}

/// Puts the digits of `x` (below 10^8, no leading zeros) to end at `buf[end]`; returns where
/// they start.
#[inline(always)]
fn put_short(buf: &mut [u8; 20], mut end: usize, mut x: u32) -> usize {
    while x >= 100 {
        end -= 2;
        put_pair(buf, end, x % 100);
        x /= 100;
    }
    if x >= 10 {
        end -= 2;
        put_pair(buf, end, x);
    } else {
        end -= 1;
        buf[end] = b'0' + x as u8;
    }
    end
}

/// Appends an integer's decimal digits (what `write!` prints, without its machinery).
pub fn push_integer(out: &mut Vec<u8>, v: i64) {
    const E8: u64 = 100_000_000;
    // `i64::MIN` is a sign and 19 digits.
    let mut buf = [0u8; 20];
    let n = v.unsigned_abs();
    let mut start = if n < E8 {
        put_short(&mut buf, 20, n as u32)
    } else if n < E8 * E8 {
        put_eight(&mut buf, 12, (n % E8) as u32);
        put_short(&mut buf, 12, (n / E8) as u32)
    } else {
        put_eight(&mut buf, 12, (n % E8) as u32);
        put_eight(&mut buf, 4, (n / E8 % E8) as u32);
        put_short(&mut buf, 4, (n / (E8 * E8)) as u32)
    };
    if v < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    out.extend_from_slice(&buf[start..]);
}

#[cfg(test)]
mod tests {
    #[test]
    fn integers_print_as_write_does() {
        let mut values = vec![0, 7, -7, 10, 1234567890, i64::MIN, i64::MAX, -1];
        // Every digit count, at and next to each power of ten (where a pair starts).
        for p in 0..19 {
            let t = 10i64.pow(p);
            values.extend([t - 1, t, t + 1, -t, 9 * t + t / 10]);
        }
        for v in values {
            let mut s = Vec::new();
            super::push_integer(&mut s, v);
            assert_eq!(String::from_utf8(s).unwrap(), v.to_string());
        }
    }
}

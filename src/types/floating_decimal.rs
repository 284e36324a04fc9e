//! Java 17's `Double.toString` and `Float.toString`: the digit generation of
//! `jdk.internal.math.FloatingDecimal` (JDK 8 to 18), which Flink 2.3 prints its doubles with.
//!
//! It is not the shortest round-trip text (Ryu, Rust's `{}`, Java 19+): integers below 2^63
//! keep every digit down to the type's precision (`4.4360688109845382E17`), and elsewhere the
//! digit loop stops on a symmetric half-ULP test whose two tie rules differ between its
//! machine-integer and big-integer paths, so some values get one digit too many
//! (`1.5776999999999999E21` for `1.5777E21`) or a last digit off by one. The paths and their
//! integer widths are reproduced exactly, overflow included, because the output depends on
//! them.

use std::cmp::Ordering;

use super::text::TextOut;

/// The text of a double as Java 17's `Double.toString` writes it.
pub fn double_to_string(out: &mut impl TextOut, v: f64) {
    write_double(out, v, true);
}

/// [`double_to_string`], with or without the shortest-text shortcut (the tests compare both).
fn write_double(out: &mut impl TextOut, v: f64, shortcut: bool) {
    if v.is_nan() {
        out.push_text("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_text(if v > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    let bits = v.to_bits();
    write_finite(
        out,
        bits >> 63 != 0,
        ((bits >> 52) & 0x7ff) as i32,
        bits & ((1 << 52) - 1),
        Format::DOUBLE,
        shortcut.then_some(Magnitude::Double(v.abs())),
    );
}

/// The text of a float as Java 17's `Float.toString` writes it (the same digit loop, with a
/// float's 24 significant bits).
pub fn float_to_string(out: &mut impl TextOut, v: f32) {
    write_float(out, v, true);
}

fn write_float(out: &mut impl TextOut, v: f32, shortcut: bool) {
    if v.is_nan() {
        out.push_text("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_text(if v > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    let bits = v.to_bits();
    write_finite(
        out,
        bits >> 31 != 0,
        ((bits >> 23) & 0xff) as i32,
        u64::from(bits & ((1 << 23) - 1)),
        Format::FLOAT,
        shortcut.then_some(Magnitude::Float(v.abs())),
    );
}

/// An IEEE binary format: bits of the stored mantissa, and the exponent's bias.
#[derive(Clone, Copy)]
struct Format {
    mantissa_bits: i32,
    bias: i32,
}

impl Format {
    const DOUBLE: Format = Format {
        mantissa_bits: 52,
        bias: 1023,
    };
    const FLOAT: Format = Format {
        mantissa_bits: 23,
        bias: 127,
    };
}

/// A finite value from its stored fields: zero, or the digit loop over the mantissa with its
/// high-order bit made explicit (a subnormal's normalized), at bit 52 as the loop reads it.
fn write_finite(
    out: &mut impl TextOut,
    negative: bool,
    stored_exp: i32,
    stored_fract: u64,
    format: Format,
    magnitude: Option<Magnitude>,
) {
    if stored_exp == 0 && stored_fract == 0 {
        out.push_text(if negative { "-0.0" } else { "0.0" });
        return;
    }
    let (fract, bin_exp, significant_bits) = if stored_exp == 0 {
        // Subnormal: normalize so the high-order bit sits at bit `mantissa_bits`.
        let leading = stored_fract.leading_zeros() as i32;
        let shift = leading - (63 - format.mantissa_bits);
        (stored_fract << shift, 1 - shift, 64 - leading)
    } else {
        (
            stored_fract | 1 << format.mantissa_bits,
            stored_exp,
            format.mantissa_bits + 1,
        )
    };
    dtoa(
        out,
        negative,
        bin_exp - format.bias,
        fract << (52 - format.mantissa_bits),
        significant_bits,
        magnitude,
    );
}

/// Decimal digits and the exponent of the point: the value is `0.d1d2… × 10^exponent`.
/// Java never writes more than 17 significant digits for a double (9 for a float), and the
/// digit loop stops by then; the array leaves room for the digit a carry may add.
struct Digits {
    digits: [u8; MAX_DIGITS],
    len: usize,
    exponent: i32,
}

const MAX_DIGITS: usize = 24;

impl Digits {
    fn new() -> Digits {
        Digits {
            digits: [0; MAX_DIGITS],
            len: 0,
            exponent: 0,
        }
    }

    fn push(&mut self, digit: u8) {
        self.digits[self.len] = digit;
        self.len += 1;
    }

    fn last(&self) -> Option<u8> {
        self.len.checked_sub(1).map(|i| self.digits[i])
    }

    /// `BinaryToASCIIBuffer.getChars`: plain for 10^-3 ≤ |v| < 10^7, otherwise `d.dddE±n`,
    /// always a digit after the point.
    fn write(&self, out: &mut impl TextOut, negative: bool) {
        // Written into a buffer and appended at once: the longest text, `-d.dddddddddddddddddE-324`
        // or `-0.00ddddddddddddddddd`, fits in 32 bytes.
        let mut text = [0u8; 40];
        let mut n = 0;
        let mut put = |b: u8| {
            text[n] = b;
            n += 1;
        };
        if negative {
            put(b'-');
        }
        let digits = &self.digits[..self.len];
        let len = self.len as i32;
        let e = self.exponent;
        if e > 0 && e < 8 {
            let int_len = len.min(e) as usize;
            for &d in &digits[..int_len] {
                put(b'0' + d);
            }
            if (int_len as i32) < e {
                for _ in int_len as i32..e {
                    put(b'0');
                }
                put(b'.');
                put(b'0');
            } else {
                put(b'.');
                if int_len < digits.len() {
                    for &d in &digits[int_len..] {
                        put(b'0' + d);
                    }
                } else {
                    put(b'0');
                }
            }
        } else if e <= 0 && e > -3 {
            put(b'0');
            put(b'.');
            for _ in e..0 {
                put(b'0');
            }
            for &d in digits {
                put(b'0' + d);
            }
        } else {
            put(b'0' + digits[0]);
            put(b'.');
            if digits.len() > 1 {
                for &d in &digits[1..] {
                    put(b'0' + d);
                }
            } else {
                put(b'0');
            }
            put(b'E');
            let mut exponent = if e <= 0 {
                put(b'-');
                (-e + 1) as u32
            } else {
                (e - 1) as u32
            };
            let mut reversed = [0u8; 4];
            let mut k = 0;
            loop {
                reversed[k] = b'0' + (exponent % 10) as u8;
                exponent /= 10;
                k += 1;
                if exponent == 0 {
                    break;
                }
            }
            for &b in reversed[..k].iter().rev() {
                put(b);
            }
        }
        out.push_ascii(&text[..n]);
    }

    /// Adds one to the last digit, carrying; a carry out of the first digit makes `1` with a
    /// larger exponent (the other digits stay as they were, as in Java, which keeps the count).
    fn round_up(&mut self) {
        let mut i = self.len - 1;
        let mut q = self.digits[i];
        if q == 9 {
            while q == 9 && i > 0 {
                self.digits[i] = 0;
                i -= 1;
                q = self.digits[i];
            }
            if q == 9 {
                self.exponent += 1;
                self.digits[0] = 1;
                return;
            }
        }
        self.digits[i] = q + 1;
    }
}

/// ceil(log2(5^i)), approximately, as `FloatingDecimal.N_5_BITS` has it.
const N_5_BITS: [i32; 27] = [
    0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56,
    59, 61,
];

/// The decimal digits dropped from an integer value with `p2` binary digits below its
/// precision (`insignificantDigits(1L << p2)`).
const INSIGNIFICANT_DIGITS: [i32; 64] = [
    0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9,
    9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16,
    16, 17, 17, 17, 18, 18, 18, 19,
];

fn pow5_u64(n: i32) -> u64 {
    5u64.pow(n as u32)
}

/// Binary exponents from which on (and up to which) the digit loop always needs big
/// integers: from 2^87 up the estimated decimal exponent is at least 26, so `10·S` holds
/// 5^27 (more than 64 bits); below 2^-87 it is at most -27 and `B` holds 5^27.
const FAR_ABOVE: i32 = 87;
const FAR_BELOW: i32 = -88;

/// The digit loop's scaled integers `B = fract·2^b2·5^b5`, `S = 2^s2·5^s5` and
/// `M = 2^m2·5^m5` (half an ULP), with the estimated decimal exponent and the bits `B` and
/// `10·S` may need, which choose the loop's integer width.
struct LoopSetup {
    dec_exp: i32,
    b5: i32,
    b2: i32,
    s5: i32,
    s2: i32,
    m5: i32,
    m2: i32,
    b_bits: i32,
    ten_s_bits: i32,
}

#[inline(always)]
fn loop_setup(bin_exp: i32, fract: u64, significant_bits: i32) -> LoopSetup {
    let tail_zeros = fract.trailing_zeros() as i32;
    let n_fract_bits = 53 - tail_zeros;
    let n_tiny_bits = (n_fract_bits - bin_exp - 1).max(0);
    let dec_exp = estimate_dec_exp(fract, bin_exp);
    let b5 = (-dec_exp).max(0);
    let mut b2 = b5 + n_tiny_bits + bin_exp;
    let s5 = dec_exp.max(0);
    let mut s2 = s5 + n_tiny_bits;
    let m5 = b5;
    let mut m2 = b2 - significant_bits;

    b2 -= n_fract_bits - 1;
    let common2 = b2.min(s2);
    b2 -= common2;
    s2 -= common2;
    m2 -= common2;
    // Below a power of two the next smaller value is half as far away.
    if n_fract_bits == 1 {
        m2 -= 1;
    }
    if m2 < 0 {
        b2 -= m2;
        s2 -= m2;
        m2 = 0;
    }

    let b_bits = n_fract_bits
        + b2
        + if (b5 as usize) < N_5_BITS.len() {
            N_5_BITS[b5 as usize]
        } else {
            b5 * 3
        };
    let ten_s_bits = s2
        + 1
        + if ((s5 + 1) as usize) < N_5_BITS.len() {
            N_5_BITS[(s5 + 1) as usize]
        } else {
            (s5 + 1) * 3
        };

    LoopSetup {
        dec_exp,
        b5,
        b2,
        s5,
        s2,
        m5,
        m2,
        b_bits,
        ten_s_bits,
    }
}

/// `FloatingDecimal.BinaryToASCIIBuffer.dtoa` for `fract × 2^(bin_exp - 52)`, `fract` with
/// its high-order bit at bit 52.
/// `magnitude`, when given, lets the big-integer path take the shortest-text shortcut.
/// Writes the result to `out` (with a `-` before it when `negative`).
fn dtoa(
    out: &mut impl TextOut,
    negative: bool,
    bin_exp: i32,
    fract: u64,
    significant_bits: i32,
    magnitude: Option<Magnitude>,
) {
    let tail_zeros = fract.trailing_zeros() as i32;
    let n_fract_bits = 53 - tail_zeros;
    let n_tiny_bits = (n_fract_bits - bin_exp - 1).max(0);
    // An integer below 2^63: its digits, the ones below the precision rounded away.
    if (-21..=62).contains(&bin_exp)
        && n_tiny_bits < 27
        && n_fract_bits + N_5_BITS[n_tiny_bits as usize] < 64
        && n_tiny_bits == 0
    {
        let insignificant = if bin_exp > significant_bits {
            let p2 = bin_exp - significant_bits - 1;
            if p2 > 1 && (p2 as usize) < INSIGNIFICANT_DIGITS.len() {
                INSIGNIFICANT_DIGITS[p2 as usize]
            } else {
                0
            }
        } else {
            0
        };
        let value = if bin_exp >= 52 {
            fract << (bin_exp - 52)
        } else {
            fract >> (52 - bin_exp)
        };
        return long_digits(value, insignificant).write(out, negative);
    }

    // Far from 1 the loop always takes its big-integer path
    // (`far_values_take_the_big_integer_path`): the shortcut goes first, before the loop's
    // set-up, and is not tried again there.
    let far = !(FAR_BELOW + 1..FAR_ABOVE).contains(&bin_exp);
    let magnitude = match magnitude {
        Some(magnitude) if far && n_fract_bits > 1 => {
            let units = fract >> (53 - significant_bits);
            if shortest_where_java_agrees(
                out,
                negative,
                magnitude,
                units,
                bin_exp - significant_bits,
            ) {
                return;
            }
            None
        }
        other => other,
    };

    let LoopSetup {
        mut dec_exp,
        b5,
        b2,
        s5,
        s2,
        m5,
        m2,
        b_bits,
        ten_s_bits,
    } = loop_setup(bin_exp, fract, significant_bits);
    let fract = fract >> tail_zeros;

    let mut digits = Digits::new();
    // (low, high, 2·B compared with 10·S)
    let (low, high, low_digit_difference);
    // Java's E-form needs two digits, so the first one never stops the loop there.
    let e_form = |dec_exp: i32| !(-3..8).contains(&dec_exp);
    if b_bits < 64 && ten_s_bits < 64 {
        if b_bits < 32 && ten_s_bits < 32 {
            // The int path, with Java's 32-bit wrap-around.
            let mut b = (fract as i32)
                .wrapping_mul(pow5_u64(b5) as i32)
                .wrapping_shl(b2 as u32);
            let s = (pow5_u64(s5) as i32).wrapping_shl(s2 as u32);
            let mut m = (pow5_u64(m5) as i32).wrapping_shl(m2 as u32);
            let tens = s.wrapping_mul(10);
            let q = b / s;
            b = (b % s).wrapping_mul(10);
            m = m.wrapping_mul(10);
            let mut lo = b < m;
            let mut hi = b.wrapping_add(m) > tens;
            if q == 0 && !hi {
                dec_exp -= 1;
            } else {
                digits.push(q as u8);
            }
            if e_form(dec_exp) {
                lo = false;
                hi = false;
            }
            while !lo && !hi {
                let q = b / s;
                b = (b % s).wrapping_mul(10);
                m = m.wrapping_mul(10);
                if m > 0 {
                    lo = b < m;
                    hi = b.wrapping_add(m) > tens;
                } else {
                    lo = true;
                    hi = true;
                }
                digits.push(q as u8);
            }
            low = lo;
            high = hi;
            low_digit_difference = i64::from((b << 1).wrapping_sub(tens)).signum();
        } else {
            // The long path, with Java's 64-bit wrap-around.
            let mut b = (fract as i64)
                .wrapping_mul(pow5_u64(b5) as i64)
                .wrapping_shl(b2 as u32);
            let s = (pow5_u64(s5) as i64).wrapping_shl(s2 as u32);
            let mut m = (pow5_u64(m5) as i64).wrapping_shl(m2 as u32);
            let tens = s.wrapping_mul(10);
            let q = b / s;
            b = (b % s).wrapping_mul(10);
            m = m.wrapping_mul(10);
            let mut lo = b < m;
            let mut hi = b.wrapping_add(m) > tens;
            if q == 0 && !hi {
                dec_exp -= 1;
            } else {
                digits.push(q as u8);
            }
            if e_form(dec_exp) {
                lo = false;
                hi = false;
            }
            while !lo && !hi {
                let q = b / s;
                b = (b % s).wrapping_mul(10);
                m = m.wrapping_mul(10);
                if m > 0 {
                    lo = b < m;
                    hi = b.wrapping_add(m) > tens;
                } else {
                    lo = true;
                    hi = true;
                }
                digits.push(q as u8);
            }
            low = lo;
            high = hi;
            low_digit_difference = (b << 1).wrapping_sub(tens).signum();
        }
    } else {
        if let Some(magnitude) = magnitude.filter(|_| n_fract_bits > 1) {
            // (`fract` lost its trailing zeros above)
            let units = (fract << tail_zeros) >> (53 - significant_bits);
            if shortest_where_java_agrees(
                out,
                negative,
                magnitude,
                units,
                bin_exp - significant_bits,
            ) {
                return;
            }
        }
        // The big-integer path: here the high test includes equality (`B + M >= 10·S`).
        let s = Big::pow52(s5, s2);
        let mut b = Big::from_u64(fract).mul_pow52(b5, b2);
        let mut m = Big::pow52(m5 + 1, m2 + 1);
        let ten_s = Big::pow52(s5 + 1, s2 + 1);
        let q = b.quo_rem_times10(&s);
        let mut sum = Big::from_u64(0);
        let mut lo = b.cmp(&m) == Ordering::Less;
        sum.set_sum(&b, &m);
        let mut hi = sum.cmp(&ten_s) != Ordering::Less;
        if q == 0 && !hi {
            dec_exp -= 1;
        } else {
            digits.push(q);
        }
        if e_form(dec_exp) {
            lo = false;
            hi = false;
        }
        while !lo && !hi {
            let q = b.quo_rem_times10(&s);
            m.mul_small_assign(10);
            lo = b.cmp(&m) == Ordering::Less;
            sum.set_sum(&b, &m);
            hi = sum.cmp(&ten_s) != Ordering::Less;
            digits.push(q);
        }
        low = lo;
        high = hi;
        low_digit_difference = if high && low {
            match b.mul_small(2).cmp(&ten_s) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }
        } else {
            0
        };
    }

    let mut result = digits;
    result.exponent = dec_exp + 1;
    if high {
        if low {
            if low_digit_difference == 0 {
                // A tie: round to an even last digit.
                if result.last().is_some_and(|d| d & 1 != 0) {
                    result.round_up();
                }
            } else if low_digit_difference > 0 {
                result.round_up();
            }
        } else {
            result.round_up();
        }
    }
    result.write(out, negative);
}

/// The value being printed, for the shortest-text shortcut of the big-integer path.
#[derive(Clone, Copy)]
enum Magnitude {
    Double(f64),
    Float(f32),
}

/// The big-integer digit loop's result, found from the shortest round-trip text where that
/// is provably the same. The value is `units × 2^(half_ulp_exp + 1)`.
///
/// The loop stops at the first length where the truncated digits, or the truncation plus one
/// unit in its last place, lies within `δ = 2^half_ulp_exp` (half an ULP) of the value, and
/// then takes the nearer of the two. Away from a power of two the shortest round-trip text
/// (here Żmij's, shortest and then nearest) answers the same question over the same interval
/// `v ± δ`; the two part only on a candidate lying exactly on an end of the interval (Java's
/// tests are one strict and one not, the shortest text's depend on the parity of `units`)
/// and on Java's E-form, which never stops at one digit. The loop's candidates are multiples
/// of `10^n`, `n` the exponent of the text's last digit or more, so an end
/// `(2·units ± 1) × 2^E` is one only if it is such a multiple: `n ≤ E` and, for `n ≥ 0`,
/// `5^n` divides `2·units ± 1`. Those values, and texts of one digit, take the loop.
/// Returns whether it wrote the answer to `out`.
fn shortest_where_java_agrees(
    out: &mut impl TextOut,
    negative: bool,
    magnitude: Magnitude,
    units: u64,
    half_ulp_exp: i32,
) -> bool {
    let mut buffer = zmij::Buffer::new();
    let text = match magnitude {
        Magnitude::Double(v) => buffer.format_finite(v),
        Magnitude::Float(v) => buffer.format_finite(v),
    };
    // The text is ASCII: digits, at most one point, an optional `e` and a signed exponent of
    // at most three digits, so an `e` is among the last five bytes (looked for from the end:
    // a scan from the start costs as much as the rest of the shortcut).
    let bytes = text.as_bytes();
    let i = bytes
        .iter()
        .rev()
        .take(5)
        .position(|&b| b == b'e' || b == b'E')
        .map_or(bytes.len(), |from_end| bytes.len() - 1 - from_end);
    let mantissa = &bytes[..i];
    if let Some(written) = java_e_form(out, negative, text, i, units, half_ulp_exp) {
        return written;
    }
    if mantissa.len() > MAX_DIGITS + 1 {
        return false;
    }
    // In locals, not in the result: a length kept in memory makes each digit wait for the
    // store of the one before.
    let mut digits = [0u8; MAX_DIGITS];
    let mut len = 0usize;
    let mut point = None;
    for &b in mantissa {
        if b == b'.' {
            point = Some(len as i32);
        } else {
            let d = b.wrapping_sub(b'0');
            if d > 9 || len == MAX_DIGITS {
                return false;
            }
            digits[len] = d;
            len += 1;
        }
    }
    let mut point = point.unwrap_or(len as i32);
    // Leading zeros move the point left instead of being digits.
    let zeros = digits[..len].iter().take_while(|&&d| d == 0).count();
    if zeros > 0 {
        digits.copy_within(zeros..len, 0);
        len -= zeros;
        point -= zeros as i32;
    }
    while len > 0 && digits[len - 1] == 0 {
        len -= 1;
    }
    let mut result = Digits {
        digits,
        len,
        exponent: 0,
    };
    let mut exp10 = 0i32;
    if i < bytes.len() {
        let mut j = i + 1;
        let minus = bytes.get(j) == Some(&b'-');
        if minus || bytes.get(j) == Some(&b'+') {
            j += 1;
        }
        if j == bytes.len() || bytes.len() - j > 4 {
            return false;
        }
        for &b in &bytes[j..] {
            if !b.is_ascii_digit() {
                return false;
            }
            exp10 = exp10 * 10 + i32::from(b - b'0');
        }
        if minus {
            exp10 = -exp10;
        }
    }
    if result.len < 2 {
        return false;
    }
    result.exponent = point + exp10;
    let last = result.exponent - result.len as i32;
    if an_end_is_a_candidate(last, units, half_ulp_exp) {
        return false;
    }
    result.write(out, negative);
    true
}

/// Whether an end of the half-ULP interval, `(2·units ± 1) × 2^half_ulp_exp`, is a multiple
/// of `10^last` (see [`shortest_where_java_agrees`]).
fn an_end_is_a_candidate(last: i32, units: u64, half_ulp_exp: i32) -> bool {
    last <= half_ulp_exp
        && (last < 0
            || divisible_by_power_of_five(2 * units - 1, last as u32)
            || divisible_by_power_of_five(2 * units + 1, last as u32))
}

/// The answer straight from a shortest text in scientific form (`d.ddd…e±x`) whose exponent
/// Java also writes in E-form (`x ≥ 7` or `x < -3`): the same digits, `E` for `e`, no `+`.
/// `None` when the text is in another form (the caller reads its digits); `Some(written)`
/// otherwise, `false` when an end of the interval is a candidate and the loop must decide.
fn java_e_form(
    out: &mut impl TextOut,
    negative: bool,
    text: &str,
    e_at: usize,
    units: u64,
    half_ulp_exp: i32,
) -> Option<bool> {
    let bytes = text.as_bytes();
    let mantissa = &bytes[..e_at];
    if e_at == bytes.len()
        || mantissa.len() < 3
        || mantissa.len() > 19
        || mantissa[1] != b'.'
        || mantissa[0] == b'0'
        || mantissa[mantissa.len() - 1] == b'0'
    {
        return None;
    }
    let mut start = e_at + 1;
    let minus = bytes.get(start) == Some(&b'-');
    if minus || bytes.get(start) == Some(&b'+') {
        start += 1;
    }
    let exponent_text = &bytes[start..];
    if exponent_text.is_empty() || exponent_text.len() > 3 || exponent_text[0] == b'0' {
        return None;
    }
    let mut exponent = 0i32;
    for &b in exponent_text {
        if !b.is_ascii_digit() {
            return None;
        }
        exponent = exponent * 10 + i32::from(b - b'0');
    }
    if minus {
        exponent = -exponent;
    }
    if (-3..7).contains(&exponent) {
        return None;
    }
    // Digits after the point: the last one is at 10^(exponent - that many).
    let last = exponent - (mantissa.len() as i32 - 2);
    if an_end_is_a_candidate(last, units, half_ulp_exp) {
        return Some(false);
    }
    if negative {
        out.push_byte(b'-');
    }
    out.push_text(&text[..e_at]);
    out.push_byte(b'E');
    if minus {
        out.push_byte(b'-');
    }
    for &b in exponent_text {
        out.push_byte(b);
    }
    Some(true)
}

/// Whether `5^n` divides `x`, a five at a time: a division by a constant is a multiply, and
/// most numbers fail at the first five (a division by the power itself costs more than the
/// whole shortest text).
fn divisible_by_power_of_five(mut x: u64, n: u32) -> bool {
    for _ in 0..n {
        if !x.is_multiple_of(5) {
            return false;
        }
        x /= 5;
    }
    true
}

/// `developLongDigits`: the digits of an integer, `insignificant` low digits rounded away
/// (half up), trailing zeros dropped.
fn long_digits(mut value: u64, insignificant: i32) -> Digits {
    let mut exponent = 0;
    if insignificant != 0 {
        let pow10 = 10u64.pow(insignificant as u32);
        let residue = value % pow10;
        value /= pow10;
        exponent += insignificant;
        if residue >= pow10 >> 1 {
            value += 1;
        }
    }
    let mut result = Digits::new();
    let mut reversed = [0u8; 20];
    let mut count = 0;
    loop {
        reversed[count] = (value % 10) as u8;
        value /= 10;
        count += 1;
        if value == 0 {
            break;
        }
    }
    let zeros = reversed[..count].iter().take_while(|&&d| d == 0).count();
    for &d in reversed[zeros..count].iter().rev() {
        result.push(d);
    }
    result.exponent = exponent + count as i32;
    result
}

/// `estimateDecExp`: floor(log10(v)) from a linear approximation of log10 of the mantissa,
/// sometimes one too high (the digit loop then drops a leading zero).
// Java's own literal, which is not the nearest double to log10(2): replacing it with
// `LOG10_2` could change the estimate.
#[allow(clippy::approx_constant)]
fn estimate_dec_exp(fract: u64, bin_exp: i32) -> i32 {
    let d2 = f64::from_bits((1023u64 << 52) | (fract & ((1 << 52) - 1)));
    let d = (d2 - 1.5) * 0.289529654 + 0.176091259 + f64::from(bin_exp) * 0.301029995663981;
    // `floor` without its library call (|d| < 330): truncation, one less below a negative
    // non-integer.
    let truncated = d as i32;
    truncated - i32::from(f64::from(truncated) > d)
}

/// Powers of five kept ready: the digit loop asks up to 5^~345 (the smallest subnormal).
const POW5_TABLE: usize = 350;

/// Words a [`Big`] holds: the digit loop's largest value, `10·S` for the smallest subnormal
/// (5^~340 · 2^~1100, under 2,000 bits), fits with room to spare.
const BIG_WORDS: usize = 96;

/// The few unsigned big-integer operations the digit loop needs, little-endian 32-bit words
/// in a fixed array: the loop runs per printed double, and a heap vector per operation made
/// allocation most of its cost.
#[derive(Clone, Copy)]
struct Big {
    words: [u32; BIG_WORDS],
    len: usize,
}

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut big = Big {
            words: [0; BIG_WORDS],
            len: 2,
        };
        big.words[0] = v as u32;
        big.words[1] = (v >> 32) as u32;
        big.trimmed()
    }

    fn used(&self) -> &[u32] {
        &self.words[..self.len]
    }

    /// 5^p5 × 2^p2, the power of five from a table made once.
    fn pow52(p5: i32, p2: i32) -> Big {
        static POWERS_OF_FIVE: std::sync::OnceLock<Vec<Big>> = std::sync::OnceLock::new();
        let table = POWERS_OF_FIVE.get_or_init(|| {
            let mut powers = vec![Big::from_u64(1)];
            for _ in 0..POW5_TABLE {
                let next = powers[powers.len() - 1].mul_small(5);
                powers.push(next);
            }
            powers
        });
        match table.get(p5.max(0) as usize) {
            Some(power) => power.shl(p2 as u32),
            None => Big::from_u64(1).mul_pow52(p5, p2),
        }
    }

    fn mul_pow52(mut self, p5: i32, p2: i32) -> Big {
        let mut left = p5;
        while left > 0 {
            // 5^13 is the largest power of five below 2^32.
            let step = left.min(13);
            self.mul_small_assign(5u32.pow(step as u32));
            left -= step;
        }
        self.shl(p2 as u32)
    }

    fn trimmed(mut self) -> Big {
        self.trim();
        self
    }

    fn trim(&mut self) {
        while self.len > 0 && self.words[self.len - 1] == 0 {
            self.len -= 1;
        }
    }

    fn mul_small(&self, k: u32) -> Big {
        let mut out = *self;
        out.mul_small_assign(k);
        out
    }

    /// `self *= k`, in place (the words past `len` are zero, as after every operation).
    fn mul_small_assign(&mut self, k: u32) {
        let mut carry = 0u64;
        for w in &mut self.words[..self.len] {
            let p = u64::from(*w) * u64::from(k) + carry;
            *w = p as u32;
            carry = p >> 32;
        }
        if carry > 0 {
            self.words[self.len] = carry as u32;
            self.len += 1;
        }
        self.trim();
    }

    /// `self = a + b`, reusing `self`'s words (those past the new length are cleared).
    fn set_sum(&mut self, a: &Big, b: &Big) {
        let n = a.len.max(b.len);
        let old = self.len;
        let mut carry = 0u64;
        for i in 0..n {
            let s = u64::from(a.words[i]) + u64::from(b.words[i]) + carry;
            self.words[i] = s as u32;
            carry = s >> 32;
        }
        self.words[n] = carry as u32;
        if old > n + 1 {
            self.words[n + 1..old].fill(0);
        }
        self.len = n + 1;
        self.trim();
    }

    fn shl(mut self, bits: u32) -> Big {
        let words = (bits / 32) as usize;
        let bits = bits % 32;
        if bits > 0 {
            let mut carry = 0u32;
            for w in &mut self.words[..self.len] {
                let next = *w >> (32 - bits);
                *w = (*w << bits) | carry;
                carry = next;
            }
            self.words[self.len] = carry;
            self.len += 1;
        }
        if words > 0 {
            self.words.copy_within(..self.len, words);
            self.words[..words].fill(0);
            self.len += words;
        }
        self.trimmed()
    }

    /// `self -= other`, `other <= self`.
    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.len {
            let d = i64::from(self.words[i]) - i64::from(other.words[i]) - borrow;
            if d < 0 {
                self.words[i] = (d + (1 << 32)) as u32;
                borrow = 1;
            } else {
                self.words[i] = d as u32;
                borrow = 0;
            }
        }
        self.trim();
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.len
            .cmp(&other.len)
            .then_with(|| self.used().iter().rev().cmp(other.used().iter().rev()))
    }

    /// `quoRemIteration`: returns `self / s` (a digit) and leaves `10 × (self % s)`.
    /// The digit is first estimated from the top two words of both (never above the true
    /// quotient: the divisor's part is rounded up) and taken off in one pass; the remaining
    /// zero to two subtractions make it exact.
    fn quo_rem_times10(&mut self, s: &Big) -> u8 {
        let mut q = 0;
        if self.len >= s.len && self.len > 0 {
            let top = |b: &Big| {
                (0..2).fold(0u64, |acc, k| {
                    let i = self.len as isize - 1 - k;
                    let w = if i >= 0 { b.words[i as usize] } else { 0 };
                    (acc << 32) | u64::from(w)
                })
            };
            let estimate = (top(self) / top(s).saturating_add(1)).min(9) as u32;
            if estimate > 0 {
                self.sub_mul_assign(s, estimate);
                q = estimate as u8;
            }
        }
        while self.cmp(s) != Ordering::Less {
            self.sub_assign(s);
            q += 1;
        }
        self.mul_small_assign(10);
        q
    }

    /// `self -= k × s`, `k × s <= self`.
    fn sub_mul_assign(&mut self, s: &Big, k: u32) {
        let (mut carry, mut borrow) = (0u64, 0u64);
        for i in 0..self.len {
            let p = u64::from(s.words[i]) * u64::from(k) + carry;
            carry = p >> 32;
            let take = (p & 0xffff_ffff) + borrow;
            let w = u64::from(self.words[i]);
            if w >= take {
                self.words[i] = (w - take) as u32;
                borrow = 0;
            } else {
                self.words[i] = (w + (1 << 32) - take) as u32;
                borrow = 1;
            }
        }
        self.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(v: f64) -> String {
        let mut s = String::new();
        double_to_string(&mut s, v);
        s
    }

    fn f(v: f32) -> String {
        let mut s = String::new();
        float_to_string(&mut s, v);
        s
    }

    #[test]
    fn plain_and_scientific_forms() {
        assert_eq!(d(1.0), "1.0");
        assert_eq!(d(0.1), "0.1");
        assert_eq!(d(1.0e7), "1.0E7");
        assert_eq!(d(1234567.0), "1234567.0");
        assert_eq!(d(0.001), "0.001");
        assert_eq!(d(0.0001), "1.0E-4");
        assert_eq!(d(-0.0), "-0.0");
        assert_eq!(d(f64::MIN_POSITIVE), "2.2250738585072014E-308");
        assert_eq!(d(f64::MAX), "1.7976931348623157E308");
        assert_eq!(d(4.9e-324), "4.9E-324");
        assert_eq!(f(1.0e10), "1.0E10");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1.4e-45), "1.4E-45");
    }

    /// Doubles whose Java 17 text is not the shortest round-trip one, printed by Java 17.
    const JAVA17_DOUBLES: &[(u64, &str)] = &[
        (0x0000000000000001, "4.9E-324"),
        (0x000000000000000a, "4.9E-323"),
        (0x000000000000000e, "6.9E-323"),
        (0x0000000000000020, "1.58E-322"),
        (0x0000000000000800, "1.0118E-320"),
        (0x0000000000020000, "6.47582E-319"),
        (0x0000000000200000, "1.0361308E-317"),
        (0x0000000020000000, "2.652494739E-315"),
        (0x0000020000000000, "1.0864618449742E-311"),
        (0x0000100000000000, "8.6916947597938E-311"),
        (0x0060000000000000, "7.1202363472230444E-307"),
        (0x0070000000000000, "1.4240472694446089E-306"),
        (0x0080000000000000, "2.8480945388892178E-306"),
        (0x00f0000000000000, "3.6455610097781987E-304"),
        (0x0420000000000000, "8.2090736025967525E-289"),
        (0x0470000000000000, "2.6269035528309608E-287"),
        (0x0480000000000000, "5.2538071056619216E-287"),
        (0x0630000000000000, "7.0515405307219905E-279"),
        (0x0660000000000000, "5.6412324245775924E-278"),
        (0x0700000000000000, "5.7766220027674546E-275"),
        (0x0710000000000000, "1.1553244005534909E-274"),
        (0x0720000000000000, "2.3106488011069819E-274"),
        (0x0730000000000000, "4.6212976022139637E-274"),
        (0x07a0000000000000, "5.9152609308338736E-272"),
        (0x0950000000000000, "7.9393288266368765E-264"),
        (0x0a90000000000000, "8.324989663719589E-258"),
        (0x0ab0000000000000, "3.3299958654878358E-257"),
        (0x0d40000000000000, "7.3227383490997605E-245"),
        (0x0e80000000000000, "7.6784476871456305E-239"),
        (0x0ec0000000000000, "1.2285516299433009E-237"),
        (0x0ed0000000000000, "2.4571032598866018E-237"),
        (0x0ee0000000000000, "4.9142065197732035E-237"),
        (0x0f50000000000000, "6.2901843453097005E-235"),
        (0x0fe0000000000000, "3.2205743847985667E-232"),
        (0x1020000000000000, "5.1529190156777066E-231"),
        (0x10c0000000000000, "5.2765890720539716E-228"),
        (0x1190000000000000, "4.3225817678266135E-224"),
        (0x1310000000000000, "7.2520887996488946E-217"),
        (0x1340000000000000, "5.8016710397191157E-216"),
        (0x1370000000000000, "4.6413368317752925E-215"),
        (0x13e0000000000000, "5.9409111446723744E-213"),
        (0x1400000000000000, "2.3763644578689498E-212"),
        (0x1410000000000000, "4.7527289157378996E-212"),
        (0x1420000000000000, "9.505457831475799E-212"),
        (0x1440000000000000, "3.8021831325903196E-211"),
        (0x1450000000000000, "7.604366265180639E-211"),
        (0x1470000000000000, "3.0417465060722557E-210"),
        (0x1480000000000000, "6.0834930121445114E-210"),
        (0x15f0000000000000, "5.1032038149619546E-203"),
        (0x1610000000000000, "2.0412815259847818E-202"),
        (0x1780000000000000, "1.7123510539128149E-195"),
        (0x1790000000000000, "3.4247021078256297E-195"),
        (0x17b0000000000000, "1.3698808431302519E-194"),
        (0x17d0000000000000, "5.4795233725210076E-194"),
        (0x1ab0000000000000, "3.8558717841646146E-180"),
        (0x1ac0000000000000, "7.711743568329229E-180"),
        (0x1ad0000000000000, "1.5423487136658458E-179"),
        (0x1ae0000000000000, "3.0846974273316917E-179"),
        (0x1bc0000000000000, "5.0539682649402436E-175"),
        (0x1c60000000000000, "5.1752635032988095E-172"),
        (0x1c80000000000000, "2.0701054013195238E-171"),
        (0x1d30000000000000, "4.2395758619023847E-168"),
        (0x1d50000000000000, "1.6958303447609539E-167"),
        (0x1d70000000000000, "6.7833213790438156E-167"),
        (0x1da0000000000000, "5.4266571032350524E-166"),
        (0x1f10000000000000, "4.5522099189454387E-159"),
        (0x1f70000000000000, "2.9134143481250808E-157"),
        (0x1f80000000000000, "5.8268286962501615E-157"),
        (0x2020000000000000, "5.9666725849601654E-154"),
        (0x20c0000000000000, "6.1098727269992094E-151"),
        (0x20d0000000000000, "1.2219745453998419E-150"),
        (0x20e0000000000000, "2.4439490907996837E-150"),
        (0x20f0000000000000, "4.8878981815993675E-150"),
        (0x2260000000000000, "4.1002661789349907E-143"),
        (0x2620000000000000, "4.7272850523062967E-125"),
        (0x2800000000000000, "5.0758836746312984E-116"),
        (0x2840000000000000, "8.1214138794100775E-115"),
        (0x28a0000000000000, "5.1977048828224496E-113"),
        (0x28b0000000000000, "1.0395409765644899E-112"),
        (0x28c0000000000000, "2.0790819531289798E-112"),
        (0x28d0000000000000, "4.1581639062579597E-112"),
        (0x28f0000000000000, "1.6632655625031839E-111"),
        (0x2900000000000000, "3.3265311250063677E-111"),
        (0x2d30000000000000, "4.9090934652977266E-91"),
        (0x2df0000000000000, "2.0107646833859488E-87"),
        (0x2e00000000000000, "4.0215293667718976E-87"),
        (0x2f10000000000000, "5.2710989716152616E-82"),
        (0x3060000000000000, "1.1054295750520889E-75"),
        (0x3070000000000000, "2.2108591501041778E-75"),
        (0x33d0000000000000, "3.9827297778311307E-59"),
        (0x34b0000000000000, "6.5253044679985245E-55"),
        (0x34c0000000000000, "1.3050608935997049E-54"),
        (0x34d0000000000000, "2.6101217871994098E-54"),
        (0x34f0000000000000, "1.0440487148797639E-53"),
        (0x3500000000000000, "2.0880974297595278E-53"),
        (0x3620000000000000, "5.4738221262688167E-48"),
        (0x3680000000000000, "3.5032461608120427E-46"),
        (0x3700000000000000, "8.968310171678829E-44"),
        (0x3720000000000000, "3.5873240686715317E-43"),
        (0x3730000000000000, "7.1746481373430634E-43"),
        (0x3800000000000000, "5.8774717541114375E-39"),
        (0x38c0000000000000, "2.4074124304840448E-35"),
        (0x38e0000000000000, "9.629649721936179E-35"),
        (0x38f0000000000000, "1.9259299443872359E-34"),
        (0x39e0000000000000, "6.3108872417680944E-30"),
        (0x3a00000000000000, "2.5243548967072378E-29"),
        (0x3b10000000000000, "3.3087224502121107E-24"),
        (0x3b20000000000000, "6.6174449004242214E-24"),
        (0x3b80000000000000, "4.2351647362715017E-22"),
        (0x3c10000000000000, "2.1684043449710089E-19"),
        (0x3c20000000000000, "4.3368086899420177E-19"),
        (0x3d20000000000000, "2.8421709430404007E-14"),
        (0x3d30000000000000, "5.6843418860808015E-14"),
        (0x3e70000000000000, "5.9604644775390625E-8"),
        (0x43567810ba608a54, "2.5297850917333328E16"),
        (0x435b62bea9e21f16, "3.0833581618658392E16"),
        (0x43734a76924a7242, "8.6878362855220256E16"),
        (0x4385c79084803db6, "1.96172736740439744E17"),
        (0x438bcaee0b7e3d51, "2.50334339681200672E17"),
        (0x439a1f3bae95fb11, "4.7057219757269101E17"),
        (0x43a0004030533c82, "5.7649604045296461E17"),
        (0x43a6bfc6747e20c4, "8.1962349651036621E17"),
        (0x43ca89990edc5cd3, "3.8244556118022979E18"),
        (0x43eb901de8b57f84, "1.5888962567880319E19"),
        (0x4443b45e21ac86dc, "7.269699999999999E20"),
        (0x4448d34377341242, "9.158899999999999E20"),
        (0x44798126f7d10de8, "7.527600000000001E21"),
        (0x448dd5fcca7cff9e, "1.7612000000000001E22"),
        (0x449033b94cfe0ce0, "1.9128000000000002E22"),
        (0x4490c570cb5c6a7a, "1.9800000000000002E22"),
        (0x449e565b647acbfa, "3.5815999999999998E22"),
        (0x44c1c9a62d04ed0c, "1.6799999999999998E23"),
        (0x44c8e71bd8a07f12, "2.3520000000000002E23"),
        (0x44d301e63bcf2356, "3.5903999999999997E23"),
        (0x44e3c0b80bf560f6, "7.462400000000001E23"),
        (0x44f52d02c7e14af6, "1.5999999999999999E24"),
        (0x44f631382989cd8a, "1.6768000000000001E24"),
        (0x45152d02c7e14af6, "6.399999999999999E24"),
        (0x45252d02c7e14af6, "1.2799999999999999E25"),
        (0x452da56a4b0835c0, "1.7920000000000001E25"),
        (0x454a420db02bd7d6, "6.3488000000000004E25"),
        (0x4650000000000000, "5.0706024009129176E30"),
        (0x46d0000000000000, "1.2980742146337069E33"),
        (0x4750000000000000, "3.3230699894622897E35"),
        (0x4790000000000000, "5.3169119831396635E36"),
        (0x47f0000000000000, "3.4028236692093846E38"),
        (0x4800000000000000, "6.805647338418769E38"),
        (0x4930000000000000, "3.5681192317648997E44"),
        (0x4940000000000000, "7.1362384635297994E44"),
        (0x4960000000000000, "2.8544953854119198E45"),
        (0x4970000000000000, "5.7089907708238395E45"),
        (0x4980000000000000, "1.1417981541647679E46"),
        (0x4990000000000000, "2.2835963083295358E46"),
        (0x49e0000000000000, "7.3075081866545146E47"),
        (0x4a00000000000000, "2.9230032746618058E48"),
        (0x4a10000000000000, "5.8460065493236117E48"),
        (0x4b30000000000000, "1.5324955408658889E54"),
        (0x4b50000000000000, "6.1299821634635554E54"),
        (0x4c20000000000000, "5.0216813883093446E58"),
        (0x4c30000000000000, "1.0043362776618689E59"),
        (0x4c50000000000000, "4.0173451106474757E59"),
        (0x4f00000000000000, "3.5336941295567687E72"),
        (0x5050000000000000, "7.4106937111882365E78"),
        (0x5100000000000000, "1.5177100720513508E82"),
        (0x5110000000000000, "3.0354201441027017E82"),
        (0x5150000000000000, "4.8566722305643227E83"),
        (0x52f0000000000000, "3.2592575621351777E91"),
        (0x5300000000000000, "6.5185151242703555E91"),
        (0x5580000000000000, "7.1671831749689735E103"),
        (0x5790000000000000, "6.1565634681866374E113"),
        (0x5890000000000000, "4.0347654345107947E118"),
        (0x58c0000000000000, "3.2278123476086357E119"),
        (0x5940000000000000, "8.2631996098781075E121"),
        (0x5c90000000000000, "7.4428285367870146E137"),
        (0x5ca0000000000000, "1.4885657073574029E138"),
        (0x5cb0000000000000, "2.9771314147148058E138"),
        (0x5e10000000000000, "1.2486994201263969E145"),
        (0x5e20000000000000, "2.4973988402527938E145"),
        (0x5e30000000000000, "4.9947976805055876E145"),
        (0x5ec0000000000000, "2.5573364124188608E148"),
        (0x5ed0000000000000, "5.1146728248377217E148"),
        (0x5fe0000000000000, "6.7039039649712985E153"),
        (0x61d0000000000000, "1.4396524142538228E163"),
        (0x61e0000000000000, "2.8793048285076457E163"),
        (0x6290000000000000, "5.8968162887836584E166"),
        (0x62c0000000000000, "4.7174530310269267E167"),
        (0x63c0000000000000, "3.0916300184138067E172"),
        (0x63d0000000000000, "6.1832600368276134E172"),
        (0x6400000000000000, "4.9466080294620907E173"),
        (0x64d0000000000000, "4.0522612977353447E177"),
        (0x64e0000000000000, "8.104522595470689E177"),
        (0x64f0000000000000, "1.6209045190941379E178"),
        (0x6500000000000000, "3.2418090381882757E178"),
        (0x6960000000000000, "3.8272525864510488E199"),
        (0x6970000000000000, "7.6545051729020976E199"),
        (0x6a70000000000000, "5.0164565101131187E204"),
        (0x6b00000000000000, "2.5684257331779168E207"),
        (0x6bb0000000000000, "5.2601359015483735E210"),
        (0x6c80000000000000, "4.3091033305484276E214"),
        (0x6e20000000000000, "2.8917902937172147E222"),
        (0x6e30000000000000, "5.7835805874344294E222"),
        (0x6e40000000000000, "1.1567161174868859E223"),
        (0x6e50000000000000, "2.3134322349737718E223"),
        (0x6f20000000000000, "1.8951636868905138E227"),
        (0x6f30000000000000, "3.7903273737810277E227"),
        (0x7040000000000000, "4.9680578953622686E232"),
        (0x7220000000000000, "5.3344115463038834E241"),
        (0x7250000000000000, "4.2675292370431067E242"),
        (0x72c0000000000000, "5.4624374234151766E244"),
        (0x7390000000000000, "4.4748287372617127E248"),
        (0x74d0000000000000, "4.6921980180029376E254"),
        (0x75e0000000000000, "6.1501577861568104E259"),
        (0x7640000000000000, "3.9361009831403587E261"),
        (0x7790000000000000, "8.2546020489947695E267"),
        (0x77c0000000000000, "6.6036816391958156E268"),
        (0x78e0000000000000, "1.7311155196253479E274"),
        (0x7900000000000000, "6.9244620785013915E274"),
        (0x7960000000000000, "4.4316557302408906E276"),
        (0x7ac0000000000000, "1.8587711355972288E283"),
        (0x7b70000000000000, "3.8067632857031246E286"),
        (0x7b80000000000000, "7.613526571406249E286"),
        (0x7bc0000000000000, "1.2181642514249999E288"),
        (0x7bd0000000000000, "2.4363285028499998E288"),
        (0x7be0000000000000, "4.8726570056999995E288"),
        (0x7c00000000000000, "1.9490628022799998E289"),
        (0x7c10000000000000, "3.8981256045599996E289"),
        (0x7c20000000000000, "7.796251209119999E289"),
        (0x7c40000000000000, "3.1185004836479997E290"),
        (0x7c60000000000000, "1.2474001934591999E291"),
        (0x7c70000000000000, "2.4948003869183998E291"),
        (0x7cb0000000000000, "3.9916806190694396E292"),
        (0x7cc0000000000000, "7.983361238138879E292"),
        (0x7ce0000000000000, "3.1933444952555517E293"),
        (0x7cf0000000000000, "6.3866889905111034E293"),
        (0x7df0000000000000, "4.1855804968213567E298"),
        (0x7f00000000000000, "5.4861240687936887E303"),
        (0x7f60000000000000, "3.5111194040279608E305"),
        (0x7f70000000000000, "7.0222388080559215E305"),
        (0xc3dae93fe8349b91, "-7.7566055244291287E18"),
        (0xc53da90f3706fc45, "-3.5857209370724216E25"),
    ];

    /// Floats whose Java 17 text is not the shortest round-trip one, printed by Java 17.
    const JAVA17_FLOATS: &[(u32, &str)] = &[
        (0x00000001, "1.4E-45"),
        (0x00000004, "5.6E-45"),
        (0x00000006, "8.4E-45"),
        (0x00000007, "9.8E-45"),
        (0x00000015, "2.9E-44"),
        (0x0000001d, "4.1E-44"),
        (0x00000080, "1.794E-43"),
        (0x00000200, "7.175E-43"),
        (0x00010000, "9.18355E-41"),
        (0x00800000, "1.17549435E-38"),
        (0x0f800000, "1.26217745E-29"),
        (0x11000000, "1.00974196E-28"),
        (0x11800000, "2.0194839E-28"),
        (0x12000000, "4.0389678E-28"),
        (0x12800000, "8.0779357E-28"),
        (0x15800000, "5.1698788E-26"),
        (0x2c800000, "3.6379788E-12"),
        (0x4c01a2de, "3.3983352E7"),
        (0x4c27133e, "4.3797752E7"),
        (0x4c596d1a, "5.6996968E7"),
        (0x4c61bc54, "5.9175248E7"),
        (0x4c91fcc5, "7.6539432E7"),
        (0x4cb6b556, "9.5791792E7"),
        (0x4d1a0569, "1.61502864E8"),
        (0x4d250d71, "1.73070096E8"),
        (0x4d93327e, "3.08694976E8"),
        (0x4dd52a16, "4.47038144E8"),
        (0x4f692c7d, "3.91200691E9"),
        (0x4fc679f4, "6.6597622E9"),
        (0x4ff7059a, "8.2886789E9"),
        (0x50854c48, "1.78909512E10"),
        (0x50d59c82, "2.86704312E10"),
        (0x5137d4ba, "4.9346748E10"),
        (0x5193335e, "7.9027749E10"),
        (0x51d76e60, "1.15658719E11"),
        (0x524818eb, "2.14852878E11"),
        (0x52b7a247, "3.94350789E11"),
        (0x52c25773, "4.17345405E11"),
        (0x52e73bef, "4.96571482E11"),
        (0x53159376, "6.4242411E11"),
        (0x53aa9dfb, "1.46558983E12"),
        (0x53c2cc4e, "1.67330264E12"),
        (0x542d0c83, "2.97295702E12"),
        (0x5446306c, "3.40486364E12"),
        (0x54532ce8, "3.62796601E12"),
        (0x568251b0, "7.1643678E13"),
        (0x571bec0d, "1.71438133E14"),
        (0x57755b67, "2.69772919E14"),
        (0x5783e071, "2.89999983E14"),
        (0x57b89721, "4.05918466E14"),
        (0x58cc0b34, "1.79478791E15"),
        (0x5945e08c, "3.48109139E15"),
        (0x59f9c4db, "8.7879643E15"),
        (0x5a2e78bb, "1.22773476E16"),
        (0x5a4e65f2, "1.45239838E16"),
        (0x5ac2c616, "2.74119716E16"),
        (0x5ad51726, "2.9989811E16"),
        (0x5c5ba732, "2.47307412E17"),
        (0x5c8bab60, "3.14507605E17"),
        (0x5d00f678, "5.8079668E17"),
        (0x5d3c80ee, "8.4894488E17"),
        (0x5d919b86, "1.31151589E18"),
        (0x5da44860, "1.47972715E18"),
        (0x5dac4a51, "1.55185305E18"),
        (0x5de378c1, "2.04888288E18"),
        (0x5df49621, "2.20303881E18"),
        (0x60000000, "3.6893488E19"),
        (0x60800000, "7.3786976E19"),
        (0x6a33f509, "5.4388716E25"),
        (0x6a7657a6, "7.4452414E25"),
        (0x6b000000, "1.54742505E26"),
        (0x70000000, "1.58456325E29"),
        (0xcd46076f, "-2.07648496E8"),
        (0xcf6bc482, "-3.9555241E9"),
        (0xd59d90c8, "-2.16556445E13"),
        (0xdbf77d44, "-1.39324101E17"),
        (0xdc2b8f58, "-1.93159317E17"),
        (0xde78ab46, "-4.47962313E18"),
        (0xe8ff0d59, "-9.6355973E24"),
        (0xea1ce146, "-4.7414062E25"),
    ];

    /// Sampled, per decimal exponent, from 3.4 million doubles and floats (random bits, random
    /// decimals, integers, powers of two and their neighbours, subnormals) that Java 17 printed
    /// and that all agree with this module; these are the ones where Java's text is not the
    /// shortest round-trip text.
    #[test]
    fn every_binary_exponent_fits_the_big_integers_and_round_trips() {
        // The largest and smallest magnitudes drive the big-integer path hardest.
        for bits in [0x000f_ffff_ffff_ffffu64, 0x0008_0000_0000_0001, 1] {
            for exp in 0..2047u64 {
                let v = f64::from_bits((exp << 52) | bits);
                if !v.is_finite() {
                    continue;
                }
                let text = d(v);
                assert_eq!(text.parse::<f64>().ok(), Some(v), "{text}");
            }
        }
    }

    #[test]
    fn java17_fixtures() {
        for (bits, java) in JAVA17_DOUBLES {
            assert_eq!(d(f64::from_bits(*bits)), *java, "double {bits:#x}");
        }
        for (bits, java) in JAVA17_FLOATS {
            assert_eq!(f(f32::from_bits(*bits)), *java, "float {bits:#x}");
        }
    }

    /// The shortcut is tried before the loop's set-up where the set-up would always choose
    /// big integers: every binary exponent at or beyond the bounds, with mantissas of every
    /// length (the estimate and the shifts depend on them), doubles, floats and subnormals.
    #[test]
    fn far_values_take_the_big_integer_path() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut mantissas = vec![1u64 << 52, (1 << 53) - 1, (1 << 52) | 1];
        for zeros in 0..53 {
            for _ in 0..4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                mantissas.push(((state | 1 << 63) >> 11) >> zeros << zeros | 1 << 52);
            }
        }
        for bin_exp in (-1100..=FAR_BELOW).chain(FAR_ABOVE..=1100) {
            for &fract in &mantissas {
                for significant_bits in [53, 24, 1, 12, 40] {
                    let setup = loop_setup(bin_exp, fract, significant_bits);
                    assert!(
                        setup.b_bits >= 64 || setup.ten_s_bits >= 64,
                        "2^{bin_exp} × {fract:#x} ({significant_bits} bits)"
                    );
                }
            }
        }
        // Closer to 1 some values take the machine-integer paths, so the bounds matter.
        let near = |bin_exp, fract| {
            let setup = loop_setup(bin_exp, fract, 53);
            setup.b_bits < 64 && setup.ten_s_bits < 64
        };
        assert!(near(60, (1 << 53) - 1) && near(-5, 1 << 52));
    }

    // Java's literal, as in `estimate_dec_exp`.
    #[allow(clippy::approx_constant)]
    #[test]
    fn the_decimal_exponent_estimate_floors_as_java_does() {
        for bin_exp in -1100..=1100 {
            for fract in [
                1u64 << 52,
                (1 << 53) - 1,
                0x1_8000_0000_0000,
                0x1_2345_6789_abcd,
            ] {
                let d2 = f64::from_bits((1023u64 << 52) | (fract & ((1 << 52) - 1)));
                let d =
                    (d2 - 1.5) * 0.289529654 + 0.176091259 + f64::from(bin_exp) * 0.301029995663981;
                assert_eq!(
                    estimate_dec_exp(fract, bin_exp),
                    d.floor() as i32,
                    "{bin_exp}"
                );
            }
        }
    }

    /// The shortcut through the shortest text never changes a digit: random bit patterns
    /// (mostly far from 1, where it applies), decimals near the powers of ten where Java's
    /// text and the shortest one part, and their neighbours.
    #[test]
    fn the_shortest_text_shortcut_equals_the_digit_loop() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut doubles: Vec<f64> = (0..300_000).map(|_| f64::from_bits(next())).collect();
        for e in -325..=308 {
            for m in [
                "1",
                "1.5777",
                "2",
                "4.4360688109845382",
                "9.999999999999999",
                "5",
            ] {
                let v: f64 = format!("{m}e{e}").parse().unwrap();
                for ulps in -3i64..=3 {
                    doubles.push(f64::from_bits((v.to_bits() as i64 + ulps) as u64));
                }
            }
        }
        // The doubles either side of a short decimal `o·5^n·2^(n+j)` (`o·5^n` odd, 54 bits)
        // that lies exactly halfway between them: the cases the shortcut must leave alone.
        for n in 0..=23u32 {
            let low = (1u64 << 53).div_ceil(5u64.pow(n));
            let high = (1u64 << 54) / 5u64.pow(n);
            for i in 0..40i32 {
                let o = (low + next() % (high - low).max(1)) | 1;
                let odd = o * 5u64.pow(n);
                if !(1u64 << 53..1u64 << 54).contains(&odd) {
                    continue;
                }
                // From the long path's end (2^86) on, where the loop uses big integers.
                let j = (32 - n as i32).max(0) + i % 12;
                let scale = 2f64.powi(n as i32 + j + 1);
                doubles.push(((odd - 1) / 2) as f64 * scale);
                doubles.push(odd.div_ceil(2) as f64 * scale);
            }
        }
        for v in doubles.into_iter().filter(|v| v.is_finite()) {
            let (mut fast, mut exact) = (String::new(), String::new());
            write_double(&mut fast, v, true);
            write_double(&mut exact, v, false);
            assert_eq!(fast, exact, "double {:#x}", v.to_bits());
        }
        for _ in 0..300_000 {
            let v = f32::from_bits(next() as u32);
            if v.is_finite() {
                let (mut fast, mut exact) = (String::new(), String::new());
                write_float(&mut fast, v, true);
                write_float(&mut exact, v, false);
                assert_eq!(fast, exact, "float {:#x}", v.to_bits());
            }
        }
    }

    /// Values where Java 17 differs from the shortest text, printed by Java 17 itself.
    #[test]
    fn java17_is_not_shortest() {
        assert_eq!(d(2.0e23), "1.9999999999999998E23");
        assert_eq!(d(1.0e23), "9.999999999999999E22");
        assert_eq!(
            d(f64::from_bits(0x445561bf17bf2d72)),
            "1.5776999999999999E21"
        );
        assert_eq!(
            d(f64::from_bits(0x4398a0086e9f2b4d)),
            "4.4360688109845382E17"
        );
        assert_eq!(
            d(f64::from_bits(0xc534698e0ffe101f)),
            "-2.4676985463028642E25"
        );
        assert_eq!(
            d(f64::from_bits(0x43e0e5ef4b14f2f6)),
            "9.741139040213119E18"
        );
    }
}

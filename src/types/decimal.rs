//! Arithmetic on unscaled DECIMAL values (`i128` digits at a given scale), shared by casts,
//! the arithmetic operators and the math functions: powers of ten, rescaling with Java's
//! HALF_UP rounding, and the remainder both MOD and `%` compute.

/// 10^n, or `None` past what an `i128` holds (n > 38).
pub fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// 10^n for n ≤ 38, the precisions DECIMAL allows; saturates beyond.
pub fn pow10_saturating(n: u32) -> i128 {
    pow10(n).unwrap_or(i128::MAX)
}

/// `v` at scale `from` moved to scale `to`, rounding HALF_UP (away from zero at .5) when
/// digits are dropped; `None` on overflow.
pub fn rescale(v: i128, from: i32, to: i32) -> Option<i128> {
    if to >= from {
        return v.checked_mul(pow10((to - from) as u32)?);
    }
    let Some(d) = pow10((from - to) as u32) else {
        // Dropping more than 38 digits leaves nothing of any i128.
        return Some(0);
    };
    let (q, r) = (v / d, v % d);
    Some(if r.unsigned_abs() * 2 >= d.unsigned_abs() {
        q + v.signum()
    } else {
        q
    })
}

/// `x % y` of decimals at scales `sx` and `sy`, as a value at `scale`; the sign follows `x`,
/// as Java's `BigDecimal.remainder`. `None` on overflow; the caller handles `y == 0`.
pub fn remainder(x: i128, sx: i32, y: i128, sy: i32, scale: i32) -> Option<i128> {
    let common = sx.max(sy);
    let (x, y) = (rescale(x, sx, common)?, rescale(y, sy, common)?);
    rescale(x.checked_rem(y)?, common, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_up_rescaling_and_remainders() {
        assert_eq!(rescale(3145, 3, 2), Some(315));
        assert_eq!(rescale(-3145, 3, 2), Some(-315));
        assert_eq!(rescale(3144, 3, 2), Some(314));
        assert_eq!(rescale(12, 0, 2), Some(1200));
        assert_eq!(rescale(i128::MAX, 0, 1), None);
        assert_eq!(rescale(5, 0, -40), Some(0));
        // 7.5 % 2 = 1.5; -7.5 % 2 = -1.5.
        assert_eq!(remainder(75, 1, 2, 0, 1), Some(15));
        assert_eq!(remainder(-75, 1, 2, 0, 1), Some(-15));
    }
}

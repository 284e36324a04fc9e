//! Interval literals as Flink (Calcite's `SqlIntervalQualifier`) reads them: the text of
//! `INTERVAL '1 10:30' DAY TO MINUTE` must have exactly the fields its qualifier names, the
//! fields after the first stay in their natural range (months 0–11, hours 0–23, minutes and
//! seconds 0–59) and the first field fits its precision (two digits unless written, as in
//! `DAY(3)`). The binder turns the value into a literal; errors carry Calcite's wording.

/// The units of an interval qualifier, in order.
const UNITS: [&str; 6] = ["YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"];

/// Milliseconds per unit of the day-time units (DAY, HOUR, MINUTE, SECOND).
const MILLIS: [i64; 4] = [86_400_000, 3_600_000, 60_000, 1000];

/// An interval qualifier: `YEAR`, `DAY(3) TO SECOND`, … (`from` ≤ `to`, indexes into the
/// units; YEAR and MONTH never mix with the day-time units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalQualifier {
    from: usize,
    to: usize,
    /// The leading field's precision when written.
    precision: Option<u64>,
}

/// The value of an interval literal: months or milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalValue {
    Months(i32),
    Millis(i64),
}

impl IntervalQualifier {
    /// The qualifier `leading [TO last]`; units may be written in the plural (`MINUTES`).
    pub fn new(leading: &str, last: Option<&str>, precision: Option<u64>) -> Result<Self, String> {
        let position = |unit: &str| {
            let unit = unit.to_ascii_uppercase();
            let unit = unit.strip_suffix('S').unwrap_or(&unit).to_string();
            UNITS
                .iter()
                .position(|u| *u == unit)
                .ok_or_else(|| format!("unsupported interval unit {unit}"))
        };
        let from = position(leading)?;
        let to = match last {
            Some(l) => position(l)?,
            None => from,
        };
        if to < from || (from < 2 && to >= 2) {
            return Err(format!(
                "unsupported interval qualifier {} TO {}",
                UNITS[from], UNITS[to]
            ));
        }
        Ok(IntervalQualifier {
            from,
            to,
            precision,
        })
    }

    pub fn is_year_month(&self) -> bool {
        self.from < 2
    }

    /// Whether the qualifier names a single unit (`DAY`, not `DAY TO HOUR`).
    pub fn is_single_unit(&self) -> bool {
        self.from == self.to
    }

    /// Months or milliseconds in one unit of a single-unit qualifier.
    pub fn unit_size(&self) -> i64 {
        match self.from {
            0 => 12,
            1 => 1,
            u => MILLIS[u - 2],
        }
    }

    /// Calcite's text of the qualifier (`INTERVAL DAY TO SECOND`, `INTERVAL DAY(3)`).
    pub fn sql(&self) -> String {
        let leading = match self.precision {
            Some(p) => format!("{}({p})", UNITS[self.from]),
            None => UNITS[self.from].to_string(),
        };
        if self.from == self.to {
            format!("INTERVAL {leading}")
        } else {
            format!("INTERVAL {leading} TO {}", UNITS[self.to])
        }
    }

    /// Reads the literal text, as `INTERVAL '<text>' <qualifier>`.
    pub fn evaluate(&self, text: &str) -> Result<IntervalValue, String> {
        let illegal = || {
            format!(
                "Illegal interval literal format '{text}' for {}",
                self.sql()
            )
        };
        let trimmed = text.trim();
        let (negative, body) = match trimmed.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
        };
        let fields = self.split_fields(body).ok_or_else(illegal)?;
        let (whole, fraction) = fields;
        // Only the first field may have any number of digits; the others have one or two.
        if whole
            .iter()
            .any(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()))
            || whole[1..].iter().any(|f| f.len() > 2)
        {
            return Err(illegal());
        }
        let values: Vec<u64> = whole
            .iter()
            .map(|f| f.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| illegal())?;
        let precision = self.precision.unwrap_or(2);
        let limit = 10u64.checked_pow(precision as u32).unwrap_or(u64::MAX);
        if values[0] >= limit {
            return Err(format!(
                "Interval field value {} exceeds precision of {}({precision}) field",
                crate::types::java_text::group_thousands(&values[0].to_string()),
                UNITS[self.from]
            ));
        }
        let in_range = values[1..].iter().zip(self.from + 1..).all(|(v, unit)| {
            let max = match UNITS[unit] {
                "MONTH" => 11,
                "HOUR" => 23,
                _ => 59,
            };
            *v <= max
        });
        if !in_range {
            return Err(illegal());
        }
        let sign: i64 = if negative { -1 } else { 1 };
        if self.is_year_month() {
            let months: i64 = values
                .iter()
                .zip(self.from..)
                .map(|(v, unit)| *v as i64 * if unit == 0 { 12 } else { 1 })
                .sum();
            return i32::try_from(sign * months)
                .map(IntervalValue::Months)
                .map_err(|_| illegal());
        }
        let mut millis: i64 = 0;
        for (v, unit) in values.iter().zip(self.from..) {
            millis = i64::try_from(*v)
                .ok()
                .and_then(|v| v.checked_mul(MILLIS[unit - 2]))
                .and_then(|m| millis.checked_add(m))
                .ok_or_else(illegal)?;
        }
        if let Some(fraction) = fraction {
            if fraction.is_empty()
                || fraction.len() > 9
                || !fraction.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(illegal());
            }
            // Milliseconds: the first three digits; Flink keeps no finer part.
            let digits = format!("{fraction:0<3}");
            millis += digits[..3].parse::<i64>().map_err(|_| illegal())?;
        }
        Ok(IntervalValue::Millis(sign * millis))
    }

    /// The whole-number fields and the fraction of seconds, split by the separators the
    /// qualifier's shape has (`-` between YEAR and MONTH, a space after DAY, `:` between
    /// the time fields, `.` before a fraction, which only a trailing SECOND may have).
    fn split_fields<'t>(&self, body: &'t str) -> Option<(Vec<&'t str>, Option<&'t str>)> {
        let (body, fraction) = if self.to == 5 {
            match body.split_once('.') {
                Some((b, f)) => (b, Some(f)),
                None => (body, None),
            }
        } else {
            (body, None)
        };
        let mut fields = Vec::new();
        let mut rest = body;
        for unit in &UNITS[self.from..self.to] {
            let separator = match *unit {
                "YEAR" => '-',
                "DAY" => ' ',
                _ => ':',
            };
            let (field, tail) = rest.split_once(separator)?;
            fields.push(field);
            rest = tail;
        }
        fields.push(rest);
        Some((fields, fraction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, leading: &str, last: Option<&str>) -> Result<IntervalValue, String> {
        IntervalQualifier::new(leading, last, None)
            .unwrap()
            .evaluate(text)
    }

    #[test]
    fn fields_in_range() {
        assert_eq!(
            eval("1-11", "YEAR", Some("MONTH")),
            Ok(IntervalValue::Months(23))
        );
        assert_eq!(
            eval("-1-11", "YEAR", Some("MONTH")),
            Ok(IntervalValue::Months(-23))
        );
        assert_eq!(eval("13", "MONTH", None), Ok(IntervalValue::Months(13)));
        assert_eq!(
            eval("61", "SECOND", None),
            Ok(IntervalValue::Millis(61_000))
        );
        assert_eq!(eval("1.5", "SECOND", None), Ok(IntervalValue::Millis(1500)));
        assert_eq!(
            eval("1 23:59:59.999", "DAY", Some("SECOND")),
            Ok(IntervalValue::Millis(86_400_000 * 2 - 1))
        );
    }

    #[test]
    fn calcite_refusals() {
        let illegal = |t: &str, q: &str| format!("Illegal interval literal format '{t}' for {q}");
        assert_eq!(
            eval("1-13", "YEAR", Some("MONTH")),
            Err(illegal("1-13", "INTERVAL YEAR TO MONTH"))
        );
        assert_eq!(
            eval("1 24", "DAY", Some("HOUR")),
            Err(illegal("1 24", "INTERVAL DAY TO HOUR"))
        );
        assert_eq!(
            eval("1.5", "MINUTE", None),
            Err(illegal("1.5", "INTERVAL MINUTE"))
        );
        assert_eq!(
            eval("1-2", "YEAR", None),
            Err(illegal("1-2", "INTERVAL YEAR"))
        );
        assert_eq!(
            eval("1000", "DAY", None),
            Err("Interval field value 1,000 exceeds precision of DAY(2) field".into())
        );
        assert_eq!(
            IntervalQualifier::new("YEAR", None, Some(4))
                .unwrap()
                .evaluate("10000"),
            Err("Interval field value 10,000 exceeds precision of YEAR(4) field".into())
        );
    }
}

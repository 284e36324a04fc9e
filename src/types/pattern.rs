//! Java's two date-time pattern languages, which Flink's functions expose unchanged.
//!
//! Flink formats and parses with two different Java classes depending on the function:
//! `java.time.format.DateTimeFormatter` ([`PatternStyle::Modern`]: DATE_FORMAT of a
//! timestamp, TO_TIMESTAMP with a format) and `java.text.SimpleDateFormat`
//! ([`PatternStyle::Legacy`]: FROM_UNIXTIME, UNIX_TIMESTAMP, TO_DATE with a format,
//! CONVERT_TZ, DATE_FORMAT of a string). The letters mostly agree, but not entirely: `S` is a
//! fraction of the second in the modern language and a count of milliseconds in the legacy
//! one, `u` is the year in one and the day of the week in the other, the modern parser is
//! strict and the legacy one lenient. A pattern is compiled once into [`DateTimePattern`] and
//! then formats or parses many values without allocating per value (beyond the output text).

use std::fmt::Write;

use super::NANOS_PER_SECOND;
use super::time::{CivilDateTime, days_from_civil, days_in_month};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternStyle {
    /// `java.text.SimpleDateFormat`: lenient parsing, `S` = milliseconds.
    Legacy,
    /// `java.time.format.DateTimeFormatter`: strict parsing, `S` = fraction of second.
    Modern,
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    Text(String),
    Field(char, usize),
    /// `[…]` in the modern language: parsed if present.
    Optional(Vec<Item>),
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct DateTimePattern {
    style: PatternStyle,
    items: Vec<Item>,
    /// Whether the pattern prints a zone name (`z`, `v`, `V`), which costs a lookup.
    pub uses_zone_name: bool,
}

/// The zone a formatted value was observed in (for the zone letters).
#[derive(Debug, Clone, Copy)]
pub struct ZoneInfo<'a> {
    pub offset_seconds: i64,
    pub abbreviation: &'a str,
}

/// The fields a parse found; absent ones take Flink's defaults (1970-01-01 00:00:00).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Parsed {
    pub year: Option<i64>,
    pub month: Option<i64>,
    pub day: Option<i64>,
    pub day_of_year: Option<i64>,
    pub hour: Option<i64>,
    pub hour_of_ampm: Option<i64>,
    pub pm: Option<bool>,
    pub minute: Option<i64>,
    pub second: Option<i64>,
    pub nano: Option<i64>,
    /// A parsed zone offset, in seconds east of UTC.
    pub offset_seconds: Option<i64>,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

impl DateTimePattern {
    /// Compiles `pattern`; an unknown letter or an unbalanced quote or bracket is an error
    /// worded as Java words it.
    pub fn compile(pattern: &str, style: PatternStyle) -> Result<Self, String> {
        let mut stack: Vec<Vec<Item>> = vec![Vec::new()];
        let chars: Vec<char> = pattern.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let current = stack.last_mut().expect("stack is never empty");
            if c.is_ascii_alphabetic() {
                let mut count = 1;
                while i + count < chars.len() && chars[i + count] == c {
                    count += 1;
                }
                check_letter(c, count, style)?;
                current.push(Item::Field(c, count));
                i += count;
            } else if c == '\'' {
                let mut text = String::new();
                let mut j = i + 1;
                if chars.get(j) == Some(&'\'') {
                    push_text(current, "'");
                    i += 2;
                    continue;
                }
                loop {
                    match chars.get(j) {
                        None => {
                            return Err(match style {
                                PatternStyle::Legacy => "Unterminated quote".to_string(),
                                PatternStyle::Modern => {
                                    format!(
                                        "Pattern ends with an incomplete string literal: {pattern}"
                                    )
                                }
                            });
                        }
                        Some('\'') if chars.get(j + 1) == Some(&'\'') => {
                            text.push('\'');
                            j += 2;
                        }
                        Some('\'') => break,
                        Some(&other) => {
                            text.push(other);
                            j += 1;
                        }
                    }
                }
                push_text(current, &text);
                i = j + 1;
            } else if style == PatternStyle::Modern && c == '[' {
                stack.push(Vec::new());
                i += 1;
            } else if style == PatternStyle::Modern && c == ']' {
                if stack.len() == 1 {
                    return Err(format!(
                        "Pattern invalid as it contains ] without previous [: {pattern}"
                    ));
                }
                let section = stack.pop().expect("checked above");
                stack
                    .last_mut()
                    .expect("stack is never empty")
                    .push(Item::Optional(section));
                i += 1;
            } else if style == PatternStyle::Modern && matches!(c, '{' | '}' | '#') {
                return Err(format!("Pattern includes reserved character: '{c}'"));
            } else {
                let mut buf = [0u8; 4];
                push_text(current, c.encode_utf8(&mut buf));
                i += 1;
            }
        }
        // Java closes sections left open at the end.
        while stack.len() > 1 {
            let section = stack.pop().expect("len > 1");
            stack
                .last_mut()
                .expect("stack is never empty")
                .push(Item::Optional(section));
        }
        fn names_zone(items: &[Item]) -> bool {
            items.iter().any(|i| match i {
                Item::Field(c, _) => matches!(c, 'z' | 'v' | 'V'),
                Item::Optional(section) => names_zone(section),
                Item::Text(_) => false,
            })
        }
        let items = stack.pop().expect("stack is never empty");
        Ok(DateTimePattern {
            style,
            uses_zone_name: names_zone(&items),
            items,
        })
    }

    /// Appends `wall` formatted by this pattern. Zone letters need `zone`; without one they
    /// fail as Java fails on a `LocalDateTime`.
    pub fn format(
        &self,
        out: &mut String,
        wall: &CivilDateTime,
        zone: Option<ZoneInfo<'_>>,
    ) -> Result<(), String> {
        format_items(&self.items, self.style, out, wall, zone)
    }

    /// Parses `text`. The modern language must consume all of it; the legacy one stops at
    /// the end of the pattern and ignores the rest, as `SimpleDateFormat.parse` does.
    /// `pivot_year` is the current year, for two-digit legacy years.
    pub fn parse(&self, text: &str, pivot_year: i64) -> Option<Parsed> {
        let mut parser = Parser {
            text: text.as_bytes(),
            pos: 0,
            style: self.style,
            pivot_year,
            parsed: Parsed::default(),
        };
        parser.items(&self.items)?;
        if self.style == PatternStyle::Modern && parser.pos != parser.text.len() {
            return None;
        }
        Some(parser.parsed)
    }
}

fn push_text(items: &mut Vec<Item>, text: &str) {
    if let Some(Item::Text(t)) = items.last_mut() {
        t.push_str(text);
    } else {
        items.push(Item::Text(text.to_string()));
    }
}

fn check_letter(c: char, count: usize, style: PatternStyle) -> Result<(), String> {
    match style {
        PatternStyle::Legacy => {
            if !"GyYMLwWDdFEuaHkKhmsSzZX".contains(c) {
                return Err(format!("Illegal pattern character '{c}'"));
            }
            if c == 'X' && count > 3 {
                return Err(format!("invalid ISO 8601 format: length={count}"));
            }
            Ok(())
        }
        PatternStyle::Modern => {
            let max = match c {
                'G' | 'M' | 'L' | 'Q' | 'q' | 'E' | 'X' | 'x' | 'Z' => 5,
                'e' | 'c' => 4,
                'd' | 'h' | 'H' | 'k' | 'K' | 'm' | 's' | 'W' | 'F' | 'w' => 2,
                'D' => 3,
                'a' => 1,
                'z' | 'O' | 'V' | 'v' => 4,
                'y' | 'u' | 'Y' | 'S' | 'n' | 'N' | 'A' => 19,
                _ => return Err(format!("Unknown pattern letter: {c}")),
            };
            if count > max || (c == 'O' && count != 1 && count != 4) || (c == 'V' && count != 2) {
                return Err(format!("Too many pattern letters: {c}"));
            }
            Ok(())
        }
    }
}

fn format_items(
    items: &[Item],
    style: PatternStyle,
    out: &mut String,
    wall: &CivilDateTime,
    zone: Option<ZoneInfo<'_>>,
) -> Result<(), String> {
    for item in items {
        match item {
            Item::Text(t) => out.push_str(t),
            Item::Optional(section) => format_items(section, style, out, wall, zone)?,
            Item::Field(c, n) => format_field(*c, *n, style, out, wall, zone)?,
        }
    }
    Ok(())
}

/// Day of the week with Sunday = 0 (the US week, which is Java's default locale here).
fn sunday_based_dow(days: i64) -> i64 {
    (days + 4).rem_euclid(7)
}

/// Week of the year and its week-based year in the US convention (weeks start on Sunday; the
/// week holding January 1st is week 1).
fn us_week_of_year(wall: &CivilDateTime) -> (i64, i64) {
    let days = days_from_civil(wall.year, wall.month, wall.day);
    let week_start = days - sunday_based_dow(days);
    let next_jan1 = days_from_civil(wall.year + 1, 1, 1);
    if week_start + 6 >= next_jan1 {
        return (1, wall.year + 1);
    }
    let jan1 = days_from_civil(wall.year, 1, 1);
    let first_week_start = jan1 - sunday_based_dow(jan1);
    ((days - first_week_start) / 7 + 1, wall.year)
}

fn us_week_of_month(wall: &CivilDateTime) -> i64 {
    let first = days_from_civil(wall.year, wall.month, 1);
    (wall.day as i64 + sunday_based_dow(first) - 1) / 7 + 1
}

fn pad(out: &mut String, value: i64, width: usize) {
    if value < 0 {
        let _ = write!(out, "-{:0width$}", -value);
    } else {
        let _ = write!(out, "{value:0width$}");
    }
}

/// A month or day name: legacy patterns use the full name from four letters on; modern ones
/// use it at exactly four and the one-letter narrow form at five.
fn text_form(out: &mut String, full: &str, count: usize, legacy: bool) {
    match count {
        4.. if legacy => out.push_str(full),
        4 => out.push_str(full),
        5 => out.push_str(&full[..1]),
        _ => out.push_str(&full[..3]),
    }
}

fn write_offset(out: &mut String, offset: i64, colon: bool, minutes: MinuteStyle) {
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.abs();
    let (h, m) = (abs / 3600, abs / 60 % 60);
    let _ = write!(out, "{sign}{h:02}");
    if minutes == MinuteStyle::Always || (minutes == MinuteStyle::IfNonZero && m != 0) {
        if colon {
            out.push(':');
        }
        let _ = write!(out, "{m:02}");
    }
}

#[derive(PartialEq)]
enum MinuteStyle {
    Always,
    IfNonZero,
}

fn format_field(
    c: char,
    n: usize,
    style: PatternStyle,
    out: &mut String,
    wall: &CivilDateTime,
    zone: Option<ZoneInfo<'_>>,
) -> Result<(), String> {
    let legacy = style == PatternStyle::Legacy;
    let days = days_from_civil(wall.year, wall.month, wall.day);
    let hour = wall.hour as i64;
    // Modern one- and two-letter numbers: `d` unpadded, `dd` two digits.
    let number = |out: &mut String, v: i64| pad(out, v, if legacy { n } else { n.min(2) });
    match c {
        'G' => {
            let era = if wall.year > 0 { "AD" } else { "BC" };
            if !legacy && n == 4 {
                out.push_str(if wall.year > 0 {
                    "Anno Domini"
                } else {
                    "Before Christ"
                });
            } else if !legacy && n == 5 {
                out.push_str(&era[..1]);
            } else {
                out.push_str(era);
            }
        }
        'y' | 'u' | 'Y' if !(legacy && c == 'u') => {
            let year = match c {
                'Y' => us_week_of_year(wall).1,
                _ => wall.year,
            };
            // Year of era for `y` (and legacy `Y`), proleptic year for modern `u`.
            let year = if c == 'u' || year > 0 { year } else { 1 - year };
            if n == 2 {
                pad(out, year.rem_euclid(100), 2);
            } else if !legacy && n >= 4 && year > 9999 {
                let _ = write!(out, "+{year:0n$}");
            } else {
                pad(out, year, n);
            }
        }
        'u' => pad(out, wall.day_of_week_iso() as i64, n),
        'M' | 'L' => {
            let m = wall.month as i64;
            if n >= 3 {
                text_form(out, MONTHS[m as usize - 1], n, legacy);
            } else {
                number(out, m);
            }
        }
        'Q' | 'q' => {
            let q = (wall.month as i64 - 1) / 3 + 1;
            match n {
                1 | 2 => pad(out, q, n),
                3 => {
                    let _ = write!(out, "Q{q}");
                }
                4 => out.push_str(
                    ["1st quarter", "2nd quarter", "3rd quarter", "4th quarter"][q as usize - 1],
                ),
                _ => pad(out, q, 1),
            }
        }
        'd' => number(out, wall.day as i64),
        'D' => pad(out, wall.day_of_year() as i64, n),
        'E' => text_form(out, DAYS[wall.day_of_week_iso() as usize - 1], n, legacy),
        'e' | 'c' => {
            if n >= 3 {
                text_form(out, DAYS[wall.day_of_week_iso() as usize - 1], n, legacy);
            } else {
                pad(out, sunday_based_dow(days) + 1, n);
            }
        }
        'F' => {
            // Legacy: the n-th such weekday of the month; modern: aligned day of the week.
            let v = if legacy {
                (wall.day as i64 - 1) / 7 + 1
            } else {
                (wall.day as i64 - 1) % 7 + 1
            };
            pad(out, v, n);
        }
        'w' => number(out, us_week_of_year(wall).0),
        'W' => pad(out, us_week_of_month(wall), n),
        'a' => out.push_str(if hour < 12 { "AM" } else { "PM" }),
        'H' => number(out, hour),
        'k' => number(out, if hour == 0 { 24 } else { hour }),
        'K' => number(out, hour % 12),
        'h' => number(out, if hour % 12 == 0 { 12 } else { hour % 12 }),
        'm' => number(out, wall.minute as i64),
        's' => number(out, wall.second as i64),
        'S' if legacy => pad(out, wall.nano as i64 / 1_000_000, n),
        'S' => {
            // The first n digits of the nine-digit fraction, truncated.
            let shown = n.min(9);
            pad(out, wall.nano as i64 / 10i64.pow(9 - shown as u32), shown);
            out.extend(std::iter::repeat_n('0', n - shown));
        }
        'A' => pad(
            out,
            (hour * 3600 + wall.minute as i64 * 60 + wall.second as i64) * 1000
                + wall.nano as i64 / 1_000_000,
            n,
        ),
        'n' => pad(out, wall.nano as i64, n),
        'N' => pad(
            out,
            (hour * 3600 + wall.minute as i64 * 60 + wall.second as i64) * NANOS_PER_SECOND
                + wall.nano as i64,
            n,
        ),
        _ => {
            // Zone letters.
            let Some(zone) = zone else {
                return Err(match c {
                    'z' | 'V' | 'v' => format!(
                        "Unable to extract ZoneId from temporal {}",
                        java_local_date_time(wall)
                    ),
                    _ => "Unsupported field: OffsetSeconds".to_string(),
                });
            };
            let offset = zone.offset_seconds;
            match (c, legacy) {
                ('z' | 'v' | 'V', _) => out.push_str(zone.abbreviation),
                ('Z', true) => write_offset(out, offset, false, MinuteStyle::Always),
                ('X', true) if offset == 0 => out.push('Z'),
                ('X', true) => write_offset(
                    out,
                    offset,
                    n == 3,
                    if n == 1 {
                        MinuteStyle::IfNonZero
                    } else {
                        MinuteStyle::Always
                    },
                ),
                ('Z', false) if n == 4 => gmt_offset(out, offset, true),
                ('Z', false) if n == 5 && offset == 0 => out.push('Z'),
                ('Z', false) => write_offset(out, offset, n == 5, MinuteStyle::Always),
                ('O', false) => gmt_offset(out, offset, n == 4),
                ('X', false) if offset == 0 => out.push('Z'),
                ('X' | 'x', false) => write_offset(
                    out,
                    offset,
                    n % 2 == 1 && n > 1,
                    if n == 1 {
                        MinuteStyle::IfNonZero
                    } else {
                        MinuteStyle::Always
                    },
                ),
                _ => return Err(format!("Unsupported pattern letter: {c}")),
            }
        }
    }
    Ok(())
}

fn gmt_offset(out: &mut String, offset: i64, long: bool) {
    out.push_str("GMT");
    if offset == 0 {
        return;
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.abs();
    if long {
        let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60);
    } else if abs % 3600 == 0 {
        let _ = write!(out, "{sign}{}", abs / 3600);
    } else {
        let _ = write!(out, "{sign}{}:{:02}", abs / 3600, abs / 60 % 60);
    }
}

/// `LocalDateTime.toString()`, for Java's error messages.
fn java_local_date_time(w: &CivilDateTime) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        w.year, w.month, w.day, w.hour, w.minute
    );
    if w.second != 0 || w.nano != 0 {
        let _ = write!(s, ":{:02}", w.second);
        if w.nano != 0 {
            let _ = write!(s, ".{}", format!("{:09}", w.nano).trim_end_matches("000"));
        }
    }
    s
}

struct Parser<'t> {
    text: &'t [u8],
    pos: usize,
    style: PatternStyle,
    pivot_year: i64,
    parsed: Parsed,
}

/// The fixed width of a numeric field when it is parsed next to another number, or `None`
/// for text fields.
fn numeric_width(c: char, n: usize, style: PatternStyle) -> Option<usize> {
    match c {
        'M' | 'L' | 'E' | 'a' | 'G' | 'z' | 'Z' | 'X' | 'x' | 'O' | 'V' | 'v' if n >= 3 => None,
        'E' | 'a' | 'G' | 'z' | 'Z' | 'X' | 'x' | 'O' | 'V' | 'v' => None,
        'Q' | 'q' | 'e' | 'c' if n >= 3 => None,
        _ if style == PatternStyle::Modern && n == 1 => Some(0),
        _ => Some(n),
    }
}

impl Parser<'_> {
    fn items(&mut self, items: &[Item]) -> Option<()> {
        for (i, item) in items.iter().enumerate() {
            match item {
                Item::Text(t) => self.literal(t)?,
                Item::Optional(section) => {
                    let (pos, parsed) = (self.pos, self.parsed);
                    if self.items(section).is_none() {
                        self.pos = pos;
                        self.parsed = parsed;
                    }
                }
                Item::Field(c, n) => {
                    // Digits the following abutting numeric fields need (adjacent value parsing).
                    let mut reserved = 0;
                    for next in &items[i + 1..] {
                        match next {
                            Item::Field(nc, nn) => match numeric_width(*nc, *nn, self.style) {
                                Some(w) if w > 0 => reserved += w,
                                _ => break,
                            },
                            _ => break,
                        }
                    }
                    let abutting = matches!(items.get(i + 1), Some(Item::Field(nc, nn))
                        if numeric_width(*nc, *nn, self.style).is_some());
                    self.field(*c, *n, reserved, abutting)?;
                }
            }
        }
        Some(())
    }

    fn literal(&mut self, t: &str) -> Option<()> {
        for &b in t.as_bytes() {
            match self.text.get(self.pos) {
                Some(&x) if x == b => self.pos += 1,
                // SimpleDateFormat lets a pattern space match any run of whitespace.
                _ if self.style == PatternStyle::Legacy && b == b' ' => {
                    while self
                        .text
                        .get(self.pos)
                        .is_some_and(|x| x.is_ascii_whitespace())
                    {
                        self.pos += 1;
                    }
                }
                _ => return None,
            }
        }
        Some(())
    }

    /// Reads a run of digits, at most `max`, at least `min`.
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let start = self.pos;
        let mut value: i64 = 0;
        while self.pos - start < max {
            match self.text.get(self.pos) {
                Some(b) if b.is_ascii_digit() => {
                    value = value.checked_mul(10)?.checked_add((b - b'0') as i64)?;
                    self.pos += 1;
                }
                _ => break,
            }
        }
        (self.pos - start >= min).then_some(value)
    }

    fn available_digits(&self) -> usize {
        self.text[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    }

    /// A number for field `c` with `n` pattern letters.
    fn number(&mut self, n: usize, reserved: usize, abutting: bool) -> Option<i64> {
        match self.style {
            PatternStyle::Legacy => {
                while self
                    .text
                    .get(self.pos)
                    .is_some_and(|b| b.is_ascii_whitespace())
                {
                    self.pos += 1;
                }
                let negative = self.text.get(self.pos) == Some(&b'-');
                if negative {
                    self.pos += 1;
                }
                let max = if abutting { n } else { 19 };
                let v = self.digits(1, max)?;
                Some(if negative { -v } else { v })
            }
            PatternStyle::Modern => {
                if n >= 2 {
                    self.digits(n, n)
                } else {
                    let take = self.available_digits().saturating_sub(reserved).max(1);
                    self.digits(1, take.min(19))
                }
            }
        }
    }

    fn year(&mut self, n: usize, reserved: usize, abutting: bool) -> Option<i64> {
        if self.style == PatternStyle::Legacy {
            while self
                .text
                .get(self.pos)
                .is_some_and(|b| b.is_ascii_whitespace())
            {
                self.pos += 1;
            }
        }
        // Only two digits, without a sign, make a two-digit year.
        let start = self.pos;
        let v = match self.style {
            PatternStyle::Modern if n == 2 => return Some(2000 + self.digits(2, 2)?),
            PatternStyle::Modern if n >= 3 => {
                let take = self.available_digits().saturating_sub(reserved);
                self.digits(n, take.max(n).min(19))?
            }
            _ => self.number(n, reserved, abutting)?,
        };
        let len = self.pos - start;
        if self.style == PatternStyle::Legacy
            && n <= 2
            && len == 2
            && self.text.get(start) != Some(&b'-')
        {
            // SimpleDateFormat's window: 80 years back, 20 years ahead of now.
            let low = self.pivot_year - 80;
            let century = low - low.rem_euclid(100);
            let year = century + v;
            return Some(if year < low { year + 100 } else { year });
        }
        Some(v)
    }

    fn text_choice(&mut self, names: &[&str], count: usize) -> Option<i64> {
        let rest = &self.text[self.pos..];
        let legacy = self.style == PatternStyle::Legacy;
        let matches = |candidate: &str| {
            rest.len() >= candidate.len()
                && if legacy {
                    rest[..candidate.len()].eq_ignore_ascii_case(candidate.as_bytes())
                } else {
                    &rest[..candidate.len()] == candidate.as_bytes()
                }
        };
        // Legacy tries full names, then short ones; modern takes the form the count asks for.
        let full = legacy || count == 4;
        let short = legacy || count <= 3;
        for (i, name) in names.iter().enumerate() {
            if full && matches(name) {
                self.pos += name.len();
                return Some(i as i64);
            }
        }
        for (i, name) in names.iter().enumerate() {
            let abbreviation = &name[..name.len().min(3)];
            if short && matches(abbreviation) {
                self.pos += abbreviation.len();
                return Some(i as i64);
            }
        }
        None
    }

    fn offset(&mut self) -> Option<i64> {
        let rest = &self.text[self.pos..];
        if rest.first() == Some(&b'Z') {
            self.pos += 1;
            return Some(0);
        }
        for prefix in ["GMT", "UTC"] {
            if rest.starts_with(prefix.as_bytes()) {
                self.pos += 3;
                if !matches!(self.text.get(self.pos), Some(b'+' | b'-')) {
                    return Some(0);
                }
            }
        }
        let sign = match self.text.get(self.pos)? {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        self.pos += 1;
        let h = self.digits(1, 2)?;
        let m = if self.text.get(self.pos) == Some(&b':') {
            self.pos += 1;
            self.digits(2, 2)?
        } else {
            self.digits(0, 2).unwrap_or(0)
        };
        Some(sign * (h * 3600 + m * 60))
    }

    fn field(&mut self, c: char, n: usize, reserved: usize, abutting: bool) -> Option<()> {
        let legacy = self.style == PatternStyle::Legacy;
        match c {
            'y' | 'Y' => {
                let v = self.year(n, reserved, abutting)?;
                self.parsed.year = Some(v);
            }
            'u' if !legacy => {
                let v = self.year(n, reserved, abutting)?;
                self.parsed.year = Some(v);
            }
            'M' | 'L' if n >= 3 => {
                let v = self.text_choice(&MONTHS, n)?;
                self.parsed.month = Some(v + 1);
            }
            'M' | 'L' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.month = Some(v);
            }
            'd' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.day = Some(v);
            }
            'D' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.day_of_year = Some(v);
            }
            'H' | 'k' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.hour = Some(if c == 'k' && v == 24 { 0 } else { v });
            }
            'h' | 'K' => {
                let v = self.number(n, reserved, abutting)?;
                // The strict parser takes only 1–12 for `h` and 0–11 for `K`.
                let valid = if c == 'h' { 1..=12 } else { 0..=11 };
                if !legacy && !valid.contains(&v) {
                    return None;
                }
                self.parsed.hour_of_ampm = Some(if c == 'h' && v == 12 { 0 } else { v });
            }
            'm' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.minute = Some(v);
            }
            's' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.second = Some(v);
            }
            'S' if legacy => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.nano = Some(v.checked_mul(1_000_000)?);
            }
            'S' => {
                let width = n.min(9);
                let v = self.digits(n, n)?;
                let scaled = if n > 9 {
                    v / 10i64.pow((n - 9) as u32)
                } else {
                    v * 10i64.pow((9 - width) as u32)
                };
                self.parsed.nano = Some(scaled);
            }
            'n' => {
                let v = self.number(n, reserved, abutting)?;
                self.parsed.nano = Some(v);
            }
            'a' => {
                let v = self.text_choice(&["AM", "PM"], 1)?;
                self.parsed.pm = Some(v == 1);
            }
            'E' => {
                self.text_choice(&DAYS, n)?;
            }
            'G' => {
                self.text_choice(&["AD", "BC"], 1)?;
            }
            'X' | 'x' | 'Z' | 'O' => {
                let v = self.offset()?;
                self.parsed.offset_seconds = Some(v);
            }
            'z' if legacy => {
                let v = self.offset()?;
                self.parsed.offset_seconds = Some(v);
            }
            _ => {
                // Week fields, quarters and zone names are accepted but carry nothing Flink reads.
                self.number(n, reserved, abutting)?;
            }
        }
        Some(())
    }
}

/// Years beyond this cannot be a timestamp here (and would overflow the day arithmetic).
const MAX_YEAR: i64 = 1_000_000_000;

impl Parsed {
    fn hour_of_day(&self) -> Option<i64> {
        match (self.hour, self.hour_of_ampm, self.pm) {
            (Some(h), _, _) => Some(h),
            (None, Some(h), pm) => h.checked_add(if pm == Some(true) { 12 } else { 0 }),
            (None, None, Some(true)) => Some(12),
            _ => Some(0),
        }
    }

    /// Resolves the fields strictly, as `DateTimeFormatter` (SMART) and Flink do: out-of-range
    /// fields fail, a day past the month's end is clamped to it, absent fields default to
    /// 1970-01-01 00:00:00. Returns the wall clock in nanoseconds since the epoch.
    pub fn resolve_strict(&self) -> Option<i64> {
        let year = self.year.unwrap_or(1970);
        if year.abs() > MAX_YEAR {
            return None;
        }
        let hour = self.hour_of_day()?;
        let (minute, second) = (self.minute.unwrap_or(0), self.second.unwrap_or(0));
        if !(0..NANOS_PER_SECOND).contains(&self.nano.unwrap_or(0)) {
            return None;
        }
        if !(0..=23).contains(&hour) || !(0..=59).contains(&minute) || !(0..=59).contains(&second) {
            return None;
        }
        let days = match self.day_of_year {
            Some(doy) if self.month.is_none() && self.day.is_none() => {
                let len = if super::time::is_leap_year(year) {
                    366
                } else {
                    365
                };
                if !(1..=len).contains(&doy) {
                    return None;
                }
                days_from_civil(year, 1, 1) + doy - 1
            }
            _ => {
                let month = self.month.unwrap_or(1);
                let day = self.day.unwrap_or(1);
                if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
                    return None;
                }
                let day = (day as u32).min(days_in_month(year, month as u32));
                days_from_civil(year, month as u32, day)
            }
        };
        let secs = days
            .checked_mul(86_400)?
            .checked_add(hour * 3600 + minute * 60 + second)?;
        secs.checked_mul(NANOS_PER_SECOND)?
            .checked_add(self.nano.unwrap_or(0))
    }

    /// Resolves the fields leniently, as `SimpleDateFormat` does: out-of-range values roll
    /// over into the next unit (month 13 is January of the next year). Returns the wall clock
    /// in nanoseconds since the epoch.
    pub fn resolve_lenient(&self) -> Option<i64> {
        let year = self.year.unwrap_or(1970);
        if year.abs() > MAX_YEAR {
            return None;
        }
        let days = match (self.day_of_year, self.month, self.day) {
            (Some(doy), None, None) => {
                days_from_civil(year, 1, 1).checked_add(doy.checked_sub(1)?)?
            }
            _ => {
                let months = year
                    .checked_mul(12)?
                    .checked_add(self.month.unwrap_or(1).checked_sub(1)?)?;
                let (y, m) = (months.div_euclid(12), months.rem_euclid(12) + 1);
                if y.abs() > MAX_YEAR {
                    return None;
                }
                days_from_civil(y, m as u32, 1)
                    .checked_add(self.day.unwrap_or(1).checked_sub(1)?)?
            }
        };
        let secs = days.checked_mul(86_400)?.checked_add(
            self.hour_of_day()?
                .checked_mul(3600)?
                .checked_add(self.minute.unwrap_or(0).checked_mul(60)?)?
                .checked_add(self.second.unwrap_or(0))?,
        )?;
        secs.checked_mul(NANOS_PER_SECOND)?
            .checked_add(self.nano.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::time::parse_timestamp;

    fn wall(s: &str) -> CivilDateTime {
        CivilDateTime::from_nanos(parse_timestamp(s).unwrap())
    }

    fn fmt(pattern: &str, style: PatternStyle, s: &str) -> String {
        let p = DateTimePattern::compile(pattern, style).unwrap();
        let mut out = String::new();
        let zone = ZoneInfo {
            offset_seconds: -8 * 3600,
            abbreviation: "PST",
        };
        p.format(&mut out, &wall(s), Some(zone)).unwrap();
        out
    }

    #[test]
    fn modern_letters_format_as_date_time_formatter() {
        let m = PatternStyle::Modern;
        let ts = "2021-03-07 05:04:09.012345";
        assert_eq!(fmt("yyyy-MM-dd HH:mm:ss", m, ts), "2021-03-07 05:04:09");
        assert_eq!(fmt("yy/M/d H:m:s", m, ts), "21/3/7 5:4:9");
        assert_eq!(fmt("SSS|S|SSSSSS", m, ts), "012|0|012345");
        assert_eq!(
            fmt("MMM MMMM EEE EEEE a hh", m, ts),
            "Mar March Sun Sunday AM 05"
        );
        assert_eq!(fmt("D DDD 'T' ''", m, ts), "66 066 T '");
        assert_eq!(fmt("Q QQQ QQQQ", m, ts), "1 Q1 1st quarter");
        assert_eq!(fmt("w W e", m, ts), "11 2 1");
    }

    #[test]
    fn legacy_letters_format_as_simple_date_format() {
        let l = PatternStyle::Legacy;
        let ts = "2021-03-07 15:04:09.012";
        assert_eq!(fmt("SSS S SSSSSS", l, ts), "012 12 000012");
        assert_eq!(
            fmt("u E h a z Z X XXX", l, ts),
            "7 Sun 3 PM PST -0800 -08 -08:00"
        );
        assert_eq!(fmt("yyyyy", l, ts), "02021");
    }

    #[test]
    fn unknown_letters_are_errors_in_each_language() {
        assert_eq!(
            DateTimePattern::compile("yyyy-bb", PatternStyle::Modern).unwrap_err(),
            "Unknown pattern letter: b"
        );
        assert_eq!(
            DateTimePattern::compile("qq", PatternStyle::Legacy).unwrap_err(),
            "Illegal pattern character 'q'"
        );
        assert_eq!(
            DateTimePattern::compile("HHH", PatternStyle::Modern).unwrap_err(),
            "Too many pattern letters: H"
        );
    }

    #[test]
    fn modern_zone_letters_fail_without_a_zone() {
        let p = DateTimePattern::compile("yyyy z", PatternStyle::Modern).unwrap();
        let err = p.format(&mut String::new(), &wall("2021-01-01 01:02:03"), None);
        assert_eq!(
            err.unwrap_err(),
            "Unable to extract ZoneId from temporal 2021-01-01T01:02:03"
        );
    }

    fn parse(pattern: &str, style: PatternStyle, text: &str) -> Option<String> {
        let p = DateTimePattern::compile(pattern, style).unwrap();
        let parsed = p.parse(text, 2026)?;
        let nanos = match style {
            PatternStyle::Modern => parsed.resolve_strict()?,
            PatternStyle::Legacy => parsed.resolve_lenient()?,
        };
        Some(crate::types::time::format_timestamp(nanos, 3))
    }

    #[test]
    fn modern_parsing_is_strict_and_whole() {
        let m = PatternStyle::Modern;
        let p = |pat, text| parse(pat, m, text);
        assert_eq!(
            p("yyyy-MM-dd HH:mm:ss", "2021-03-07 05:04:09").as_deref(),
            Some("2021-03-07 05:04:09.000")
        );
        assert_eq!(p("yyyy-MM-dd", "2021-3-07"), None);
        assert_eq!(p("yyyy-MM-dd", "2021-03-07 "), None);
        assert_eq!(p("yyyy-MM-dd", "2021-13-07"), None);
        assert_eq!(
            p("yyyyMMddHHmm", "202103070504").as_deref(),
            Some("2021-03-07 05:04:00.000")
        );
        assert_eq!(
            p("dd/MMM/yyyy:HH:mm:ss.SSS", "07/Mar/2021:05:04:09.120").as_deref(),
            Some("2021-03-07 05:04:09.120")
        );
        assert_eq!(
            p("yyyy-MM-dd[ HH:mm]", "2021-02-30").as_deref(),
            Some("2021-02-28 00:00:00.000")
        );
        assert_eq!(
            p("h:mm a", "1:30 PM").as_deref(),
            Some("1970-01-01 13:30:00.000")
        );
    }

    #[test]
    fn strict_parsing_rejects_out_of_range_clock_hours_and_fractions() {
        let m = PatternStyle::Modern;
        assert_eq!(parse("h:mm a", m, "0:30 AM"), None);
        assert_eq!(parse("K:mm a", m, "12:30 AM"), None);
        assert_eq!(
            parse("h:mm a", m, "12:30 AM").as_deref(),
            Some("1970-01-01 00:30:00.000")
        );
        assert_eq!(parse("ss.n", m, "01.1500000000"), None);
    }

    #[test]
    fn legacy_two_digit_years_need_two_digits() {
        let l = PatternStyle::Legacy;
        assert_eq!(
            parse("yy-MM", l, " 99-01").as_deref(),
            Some("1999-01-01 00:00:00.000")
        );
        let p = DateTimePattern::compile("yy-MM", l).unwrap();
        assert_eq!(p.parse("-5-01", 2026).unwrap().year, Some(-5));
        assert_eq!(p.parse("05-01", 2026).unwrap().year, Some(2005));
    }

    #[test]
    fn legacy_parsing_is_lenient_and_ignores_trailing_text() {
        let l = PatternStyle::Legacy;
        let p = |pat, text| parse(pat, l, text);
        assert_eq!(
            p("yyyy-MM-dd HH:mm:ss", "2021-3-7 5:4:9.999 junk").as_deref(),
            Some("2021-03-07 05:04:09.000")
        );
        assert_eq!(
            p("yyyy-MM-dd", "2021-13-32").as_deref(),
            Some("2022-02-01 00:00:00.000")
        );
        assert_eq!(p("yyyy-MM-dd HH:mm:ss", "2021-03-07"), None);
        assert_eq!(
            p("yyyyMMdd", "20210307").as_deref(),
            Some("2021-03-07 00:00:00.000")
        );
        assert_eq!(
            p("dd/MM/yy", "07/03/99").as_deref(),
            Some("1999-03-07 00:00:00.000")
        );
        assert_eq!(
            p("dd MMM yyyy", "07 march 2021").as_deref(),
            Some("2021-03-07 00:00:00.000")
        );
    }

    proptest::proptest! {
        /// Formatting with a numeric pattern and parsing the text back with it gives the
        /// value again, down to the pattern's finest field.
        #[test]
        fn modern_format_then_parse_round_trips(
            nanos in -2_208_988_800_000_000_000i64..4_102_444_800_000_000_000i64,
            which in 0usize..4,
        ) {
            let (pattern, unit) = [
                ("yyyy-MM-dd HH:mm:ss.SSS", 1_000_000i64),
                ("yyyyMMddHHmmss", 1_000_000_000),
                ("dd/MM/yyyy HH:mm", 60_000_000_000),
                ("yyyy-MM-dd'T'HH:mm:ss.SSSSSS", 1_000),
            ][which];
            let p = DateTimePattern::compile(pattern, PatternStyle::Modern).unwrap();
            let mut text = String::new();
            p.format(&mut text, &CivilDateTime::from_nanos(nanos), None).unwrap();
            let back = p.parse(&text, 2026).and_then(|f| f.resolve_strict());
            proptest::prop_assert_eq!(back, Some(nanos - nanos.rem_euclid(unit)), "{}", text);
        }
    }
}

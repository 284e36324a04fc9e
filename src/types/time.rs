//! Calendar arithmetic and the session time zone.
//!
//! Values arrive here as plain integers (days since the epoch for DATE, nanoseconds of the day
//! for TIME, nanoseconds since the epoch for TIMESTAMP and TIMESTAMP_LTZ) and leave as civil
//! fields or text in Flink's forms. The civil conversions are our own integer arithmetic
//! (proleptic Gregorian, as Java's `LocalDate`), so hot loops never allocate; only the mapping
//! between an instant and a zone's wall clock goes to the bundled tz database through `jiff`.

use std::fmt::Write;

use super::{NANOS_PER_DAY, NANOS_PER_SECOND};

/// Year, month (1–12), day (1–31) of a day number counted from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Day number (from 1970-01-01) of a civil date; the inverse of [`civil_from_days`].
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn is_leap_year(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap_year(y) => 29,
        _ => 28,
    }
}

/// The civil fields of a timestamp given in nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilDateTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nano: u32,
}

impl CivilDateTime {
    pub fn from_nanos(nanos: i64) -> Self {
        Self::from_seconds(
            nanos.div_euclid(NANOS_PER_SECOND),
            nanos.rem_euclid(NANOS_PER_SECOND) as u32,
        )
    }

    /// The fields of a wall clock given as seconds since the epoch plus a fraction.
    pub fn from_seconds(seconds: i64, nano: u32) -> Self {
        let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
        let secs = seconds.rem_euclid(86_400);
        CivilDateTime {
            year,
            month,
            day,
            hour: (secs / 3600) as u32,
            minute: (secs / 60 % 60) as u32,
            second: (secs % 60) as u32,
            nano,
        }
    }

    /// Nanoseconds since the epoch; `None` when out of the i64 range (years ~1677–2262).
    pub fn to_nanos(&self) -> Option<i64> {
        let days = days_from_civil(self.year, self.month, self.day);
        let secs = days
            .checked_mul(86_400)?
            .checked_add((self.hour * 3600 + self.minute * 60 + self.second) as i64)?;
        secs.checked_mul(NANOS_PER_SECOND)?
            .checked_add(self.nano as i64)
    }

    pub fn day_of_week_iso(&self) -> u32 {
        // 1970-01-01 was a Thursday (ISO 4).
        let days = days_from_civil(self.year, self.month, self.day);
        ((days + 3).rem_euclid(7) + 1) as u32
    }

    pub fn day_of_year(&self) -> u32 {
        (days_from_civil(self.year, self.month, self.day) - days_from_civil(self.year, 1, 1) + 1)
            as u32
    }
}

/// Appends `yyyy-MM-dd`.
pub fn write_date(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    write_year(out, y);
    let _ = write!(out, "-{m:02}-{d:02}");
}

fn write_year(out: &mut String, y: i64) {
    if y < 0 {
        let _ = write!(out, "-{:04}", -y);
    } else {
        let _ = write!(out, "{y:04}");
    }
}

/// Appends `HH:mm:ss` and, for precision > 0, exactly `precision` fraction digits.
pub fn write_time(out: &mut String, nanos_of_day: i64, precision: u8) {
    let secs = nanos_of_day / NANOS_PER_SECOND;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    write_fraction(out, (nanos_of_day % NANOS_PER_SECOND) as u32, precision);
}

fn write_fraction(out: &mut String, nano: u32, precision: u8) {
    if precision > 0 {
        let digits = format!("{nano:09}");
        out.push('.');
        out.push_str(&digits[..precision.min(9) as usize]);
    }
}

/// Appends `yyyy-MM-dd HH:mm:ss[.fff…]`, Flink's rendering of TIMESTAMP(p).
pub fn write_timestamp(out: &mut String, nanos: i64, precision: u8) {
    let days = nanos.div_euclid(NANOS_PER_DAY);
    write_date(out, days);
    out.push(' ');
    write_time(out, nanos.rem_euclid(NANOS_PER_DAY), precision);
}

/// `yyyy-MM-dd HH:mm:ss[.f…]` with the fraction's trailing zeros dropped (java.time's ISO
/// local time), `sep` between date and time.
pub fn write_iso_timestamp(out: &mut String, nanos: i64, sep: char) {
    write_date(out, nanos.div_euclid(NANOS_PER_DAY));
    out.push(sep);
    write_time_trimmed(out, nanos.rem_euclid(NANOS_PER_DAY));
}

/// `HH:mm:ss[.f…]` with the fraction's trailing zeros dropped, as the formats write TIME.
pub fn write_time_trimmed(out: &mut String, in_day: i64) {
    write_time(out, in_day - in_day % NANOS_PER_SECOND, 0);
    let frac = in_day % NANOS_PER_SECOND;
    if frac != 0 {
        let digits = format!("{frac:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

pub fn format_timestamp(nanos: i64, precision: u8) -> String {
    let mut s = String::with_capacity(29);
    write_timestamp(&mut s, nanos, precision);
    s
}

/// Parses Flink's date forms `yyyy-[m]m-[d]d`.
pub fn parse_date(s: &str) -> Option<i64> {
    let s = s.trim();
    let mut parts = s.splitn(3, '-');
    let y: i64 = parse_digits(parts.next()?, 1, 4)?;
    let m: u32 = parse_digits(parts.next()?, 1, 2)? as u32;
    let d: u32 = parse_digits(parts.next()?, 1, 2)? as u32;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// A run of `min`–`max` ASCII digits as a number.
pub fn parse_digits(s: &str, min: usize, max: usize) -> Option<i64> {
    if s.len() < min || s.len() > max || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `HH:mm[:ss[.f…]]` into nanoseconds of the day.
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    let (hms, frac) = match s.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let mut parts = hms.split(':');
    let h = parse_digits(parts.next()?, 1, 2)?;
    let m = parse_digits(parts.next()?, 1, 2)?;
    let sec = match parts.next() {
        Some(p) => parse_digits(p, 1, 2)?,
        None => 0,
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let nanos = match frac {
        Some(f) => parse_fraction(f)?,
        None => 0,
    };
    Some(((h * 60 + m) * 60 + sec) * NANOS_PER_SECOND + nanos)
}

/// One to nine fraction digits as nanoseconds (`5` is half a second).
pub fn parse_fraction(f: &str) -> Option<i64> {
    if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i64 = f.parse().ok()?;
    Some(v * 10i64.pow(9 - f.len() as u32))
}

/// Parses the timestamp forms Flink's CAST accepts: `yyyy-MM-dd`, `yyyy-MM-dd HH:mm[:ss[.f…]]`
/// and the same with `T` between date and time. Returns nanoseconds since the epoch of the
/// wall-clock value.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim_start())),
        None => (s, None),
    };
    let days = parse_date(date)?;
    let nanos = match time {
        Some(t) => parse_time(t)?,
        None => 0,
    };
    days.checked_mul(NANOS_PER_DAY)?.checked_add(nanos)
}

/// Rounds nanoseconds down to the given fractional-second precision (Flink truncates).
pub fn truncate_to_precision(nanos: i64, precision: u8) -> i64 {
    if precision >= 9 {
        return nanos;
    }
    let unit = 10i64.pow(9 - precision as u32);
    nanos - nanos.rem_euclid(unit)
}

/// The session time zone (`table.local-time-zone`), resolved against the bundled tz database.
#[derive(Debug, Clone)]
pub struct SessionZone {
    name: String,
    zone: jiff::tz::TimeZone,
}

impl SessionZone {
    /// Resolves a zone id as Flink accepts it: an IANA name, `UTC`, or a fixed offset such as
    /// `GMT+08:00` / `+08:00`.
    pub fn new(name: &str) -> Result<Self, String> {
        let zone = if let Some(offset) = name.strip_prefix("GMT").or(name.strip_prefix("UTC")) {
            if offset.is_empty() {
                jiff::tz::TimeZone::UTC
            } else {
                fixed_offset(offset).ok_or_else(|| invalid_zone(name))?
            }
        } else if name.starts_with('+') || name.starts_with('-') {
            fixed_offset(name).ok_or_else(|| invalid_zone(name))?
        } else {
            jiff::tz::TimeZone::get(name).map_err(|_| invalid_zone(name))?
        };
        Ok(SessionZone {
            name: name.to_string(),
            zone,
        })
    }

    pub fn utc() -> Self {
        SessionZone {
            name: "UTC".into(),
            zone: jiff::tz::TimeZone::UTC,
        }
    }

    /// The host's zone, Flink's default for `table.local-time-zone`.
    pub fn system() -> Self {
        let zone = jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC);
        let name = zone.iana_name().unwrap_or("UTC").to_string();
        SessionZone { name, zone }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Offset from UTC, in nanoseconds, at the given instant.
    pub fn offset_nanos_at(&self, instant_nanos: i64) -> i64 {
        self.offset_seconds_at(instant_nanos.div_euclid(NANOS_PER_SECOND)) * NANOS_PER_SECOND
    }

    /// Offset from UTC, in seconds, at an instant given in seconds since the epoch.
    pub fn offset_seconds_at(&self, seconds: i64) -> i64 {
        self.zone.to_offset(zone_instant(seconds)).seconds() as i64
    }

    /// The wall clock in this zone at an instant (both as nanoseconds since the epoch).
    pub fn to_local(&self, instant_nanos: i64) -> i64 {
        instant_nanos.saturating_add(self.offset_nanos_at(instant_nanos))
    }

    /// The instant at which this zone's wall clock shows `local_nanos`. A time inside a gap is
    /// moved forward by the gap's length and a time in a fold takes the earlier offset, as
    /// Flink's `CAST(TIMESTAMP AS TIMESTAMP_LTZ)` does (java.time's `ZonedDateTime.of`).
    pub fn from_local(&self, local_nanos: i64) -> i64 {
        let secs = local_nanos.div_euclid(NANOS_PER_SECOND);
        let sub = local_nanos.rem_euclid(NANOS_PER_SECOND);
        let c = CivilDateTime::from_nanos(secs * NANOS_PER_SECOND);
        let dt = jiff::civil::DateTime::new(
            c.year as i16,
            c.month as i8,
            c.day as i8,
            c.hour as i8,
            c.minute as i8,
            c.second as i8,
            0,
        );
        match dt {
            Ok(dt) => match self.zone.to_ambiguous_timestamp(dt).compatible() {
                Ok(ts) => ts
                    .as_second()
                    .saturating_mul(NANOS_PER_SECOND)
                    .saturating_add(sub),
                Err(_) => local_nanos,
            },
            Err(_) => local_nanos.saturating_sub(self.offset_nanos_at(local_nanos)),
        }
    }

    /// Like [`Self::from_local`] but a time in a fold takes the later offset, as Flink's
    /// `UNIX_TIMESTAMP(string)` does.
    pub fn from_local_later(&self, local_nanos: i64) -> i64 {
        let earlier = self.from_local(local_nanos);
        let shifted = local_nanos.saturating_sub(
            self.offset_nanos_at(earlier.saturating_add(3 * 3600 * NANOS_PER_SECOND)),
        );
        if self.to_local(shifted) == local_nanos {
            shifted.max(earlier)
        } else {
            earlier
        }
    }

    /// A zone id read as `java.util.TimeZone.getTimeZone` reads it (CONVERT_TZ): tz database
    /// names, Java's old three-letter ids, custom `GMT±h[h][[:]mm]` ids, and GMT for anything
    /// else.
    pub fn java_legacy(name: &str) -> Self {
        let named = |zone: jiff::tz::TimeZone| SessionZone {
            name: name.to_string(),
            zone,
        };
        if let Some(offset) = name.strip_prefix("GMT").filter(|o| !o.is_empty()) {
            if !offset.is_ascii() {
                return named(jiff::tz::TimeZone::UTC);
            }
            let custom = match offset.split_once(':') {
                Some(_) => fixed_offset(offset),
                None if offset.len() > 3 => {
                    let (h, m) = offset.split_at(offset.len() - 2);
                    fixed_offset(&format!("{h}:{m}"))
                }
                None => fixed_offset(offset),
            };
            return named(custom.unwrap_or(jiff::tz::TimeZone::UTC));
        }
        let old_id = JAVA_OLD_IDS
            .iter()
            .find(|(id, _)| *id == name)
            .map(|(_, iana)| *iana);
        match jiff::tz::TimeZone::get(old_id.unwrap_or(name)) {
            Ok(zone) => named(zone),
            Err(_) => named(jiff::tz::TimeZone::UTC),
        }
    }

    /// The zone's abbreviation at an instant (seconds since the epoch) as Java prints it (`PST`, `CST`, `UTC`), or
    /// `GMT±hh:mm` where the tz database has only a numeric one.
    pub fn abbreviation_at(&self, seconds: i64) -> String {
        let info = self.zone.to_offset_info(zone_instant(seconds));
        let abbreviation = info.abbreviation();
        if abbreviation.starts_with(['+', '-']) || abbreviation.is_empty() {
            let offset = info.offset().seconds();
            let sign = if offset < 0 { '-' } else { '+' };
            let abs = offset.abs();
            format!("GMT{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60)
        } else {
            abbreviation.to_string()
        }
    }
}

/// `java.util.TimeZone`'s three-letter ids that the tz database does not have.
const JAVA_OLD_IDS: &[(&str, &str)] = &[
    ("ACT", "Australia/Darwin"),
    ("AET", "Australia/Sydney"),
    ("AGT", "America/Argentina/Buenos_Aires"),
    ("ART", "Africa/Cairo"),
    ("AST", "America/Anchorage"),
    ("BET", "America/Sao_Paulo"),
    ("BST", "Asia/Dhaka"),
    ("CAT", "Africa/Harare"),
    ("CNT", "America/St_Johns"),
    ("CST", "America/Chicago"),
    ("CTT", "Asia/Shanghai"),
    ("EAT", "Africa/Addis_Ababa"),
    ("ECT", "Europe/Paris"),
    ("IET", "America/Indiana/Indianapolis"),
    ("IST", "Asia/Kolkata"),
    ("JST", "Asia/Tokyo"),
    ("MIT", "Pacific/Apia"),
    ("NET", "Asia/Yerevan"),
    ("NST", "Pacific/Auckland"),
    ("PLT", "Asia/Karachi"),
    ("PNT", "America/Phoenix"),
    ("PRT", "America/Puerto_Rico"),
    ("PST", "America/Los_Angeles"),
    ("SST", "Pacific/Guadalcanal"),
    ("VST", "Asia/Ho_Chi_Minh"),
];

/// An instant for zone lookups; beyond the tz database's range (years -9999–9999) the zone's
/// rules at the nearest end apply.
fn zone_instant(seconds: i64) -> jiff::Timestamp {
    let min = jiff::Timestamp::MIN.as_second();
    let max = jiff::Timestamp::MAX.as_second();
    jiff::Timestamp::from_second(seconds.clamp(min, max)).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

fn invalid_zone(name: &str) -> String {
    format!("invalid time zone '{name}'")
}

fn fixed_offset(text: &str) -> Option<jiff::tz::TimeZone> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?),
        None => (rest.parse::<i32>().ok()?, 0),
    };
    if h > 18 || m > 59 {
        return None;
    }
    let offset = jiff::tz::Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()?;
    Some(jiff::tz::TimeZone::fixed(offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for days in [-800_000, -1, 0, 1, 59, 365, 18_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(
            format_timestamp(18_367 * NANOS_PER_DAY, 0),
            "2020-04-15 00:00:00"
        );
    }

    #[test]
    fn timestamp_text() {
        let ts = parse_timestamp("1970-01-01 00:00:04.001").unwrap();
        assert_eq!(ts, 4_001_000_000);
        assert_eq!(format_timestamp(ts, 3), "1970-01-01 00:00:04.001");
        assert_eq!(format_timestamp(ts, 0), "1970-01-01 00:00:04");
        assert_eq!(
            parse_timestamp("2020-04-15T08:05"),
            parse_timestamp("2020-04-15 08:05:00")
        );
        assert_eq!(parse_timestamp("2020-02-30 00:00:00"), None);
        assert_eq!(format_timestamp(-1, 3), "1969-12-31 23:59:59.999");
    }

    #[test]
    fn zone_gap_and_fold() {
        let la = SessionZone::new("America/Los_Angeles").unwrap();
        let gap = parse_timestamp("2021-03-14 02:30:00").unwrap();
        let instant = la.from_local(gap);
        assert_eq!(
            format_timestamp(la.to_local(instant), 0),
            "2021-03-14 03:30:00"
        );
        let fold = parse_timestamp("2021-11-07 01:30:00").unwrap();
        let earlier = la.from_local(fold);
        let later = la.from_local_later(fold);
        assert_eq!(later - earlier, 3600 * NANOS_PER_SECOND);
        let shanghai = SessionZone::new("Asia/Shanghai").unwrap();
        assert_eq!(shanghai.to_local(0), 8 * 3600 * NANOS_PER_SECOND);
        assert!(SessionZone::new("Mars/Olympus").is_err());
        assert_eq!(
            SessionZone::new("GMT+08:00").unwrap().to_local(0),
            8 * 3600 * NANOS_PER_SECOND
        );
    }
}

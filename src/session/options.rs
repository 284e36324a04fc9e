//! The session's options: their keys, the values `SET` refuses, and the time zone ids Flink
//! takes.

use super::{StatementError, position_error};
use crate::sql::ast::ParsedStatement;

pub const LOCAL_TIME_ZONE: &str = "table.local-time-zone";
pub const NOT_NULL_ENFORCER: &str = "table.exec.sink.not-null-enforcer";
pub const RUNTIME_MODE: &str = "execution.runtime-mode";
pub const AUTO_WATERMARK_INTERVAL: &str = "pipeline.auto-watermark-interval";
pub const PARALLELISM: &str = "parallelism.default";
pub const IDLE_TIMEOUT: &str = "table.exec.source.idle-timeout";
/// Idle state retention of the operators that keep state per key (0: for ever).
pub const STATE_TTL: &str = "table.exec.state.ttl";
pub const CDC_EVENTS_DUPLICATE: &str = "table.exec.source.cdc-events-duplicate";
/// Early and late firing of group windows (Flink's emit strategy), their delays, and how
/// late a row may be for a fired window.
pub const EARLY_FIRE: &str = "table.exec.emit.early-fire.enabled";
pub const EARLY_FIRE_DELAY: &str = "table.exec.emit.early-fire.delay";
pub const LATE_FIRE: &str = "table.exec.emit.late-fire.enabled";
pub const LATE_FIRE_DELAY: &str = "table.exec.emit.late-fire.delay";
pub const ALLOW_LATENESS: &str = "table.exec.emit.allow-lateness";
pub const MAX_PARALLELISM: &str = "pipeline.max-parallelism";
pub const RESULT_MODE: &str = "sql-client.execution.result-mode";
/// The SQL client's column cap.
pub const MAX_COLUMN_WIDTH: &str = "table.display.max-column-width";
/// Its old name, which Flink's SQL client still honours when the new one is not set (the
/// option's fallback key; the Table API's print does not read it).
pub const DEPRECATED_MAX_COLUMN_WIDTH: &str = "sql-client.display.max-column-width";
/// Rows a `table`-mode result keeps (Flink's default 1,000,000; 0 or less: no bound).
pub const MAX_TABLE_RESULT_ROWS: &str = "sql-client.execution.max-table-result.rows";

/// Whether Flink takes a `table.local-time-zone` value. Flink wants an id that
/// `java.util.TimeZone` and `java.time.ZoneId` read alike: a tz database name spelled as the
/// database spells it (but not EST, MST or HST, which `TimeZone` turns into fixed offsets),
/// `UTC`, `GMT`, or `GMT` with an offset `±h`, `±hh`, `±hhmm` or `±hh:mm` of at most 18 hours.
/// `UTC+8`, `+08:00`, `Z`, `PST` and `utc` are refused.
pub(super) fn flink_session_zone_id(name: &str) -> bool {
    if name == "UTC" || name == "GMT" {
        return true;
    }
    if let Some(offset) = name.strip_prefix("GMT") {
        let Some(digits) = offset.strip_prefix(['+', '-']) else {
            return false;
        };
        let (hours, minutes) = match digits.split_once(':') {
            Some((h, m)) if h.len() == 2 && m.len() == 2 => (h, m),
            Some(_) => return false,
            None if digits.len() == 4 => digits.split_at(2),
            None if (1..=2).contains(&digits.len()) => (digits, "0"),
            None => return false,
        };
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        return match (hours.parse::<u32>(), minutes.parse::<u32>()) {
            (Ok(h), Ok(m)) if all_digits(hours) && all_digits(minutes) => {
                m < 60 && h * 60 + m <= 18 * 60
            }
            _ => false,
        };
    }
    if matches!(name, "EST" | "MST" | "HST") {
        return false;
    }
    jiff::tz::TimeZone::get(name).is_ok_and(|zone| zone.iana_name() == Some(name))
}

/// Rejects values Flink would reject for the options Tideline reads.
pub(super) fn validate_option(
    key: &str,
    value: &str,
    parsed: &ParsedStatement,
) -> Result<(), StatementError> {
    let bad = |what: &str| {
        position_error(
            parsed,
            format!("invalid value '{value}' for option '{key}': {what}"),
        )
    };
    match key {
        RUNTIME_MODE
            if !["streaming", "batch", "automatic"]
                .contains(&value.to_ascii_lowercase().as_str()) =>
        {
            return Err(bad("expected 'streaming', 'batch' or 'automatic'"));
        }
        RESULT_MODE
            if !["table", "tableau", "changelog"]
                .contains(&value.to_ascii_lowercase().as_str()) =>
        {
            return Err(bad("expected 'table', 'tableau' or 'changelog'"));
        }
        "parallelism.default" if value.parse::<u32>().map_or(true, |p| p == 0) => {
            return Err(bad("expected a positive integer"));
        }
        MAX_TABLE_RESULT_ROWS if value.parse::<i32>().is_err() => {
            return Err(bad("expected an integer"));
        }
        _ => {}
    }
    Ok(())
}

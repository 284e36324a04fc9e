//! The value syntaxes of Flink's typed connector options that are not plain numbers:
//! durations (`TimeUtils.parseDuration`) and memory sizes (`MemorySize.parse`). Connectors
//! and the session's options read their values as text and ask here; an option's own error
//! names its key.

/// A Flink duration (`5000`, `5 s`, `1 min`, `2 h`, `1 d`; milliseconds without a unit) in
/// nanoseconds.
pub fn parse_duration(text: &str) -> Option<i64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let number: i64 = text[..digits].parse().ok()?;
    let unit: i64 = match text[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1_000_000,
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => 1,
        "µs" | "micro" | "micros" | "microsecond" | "microseconds" => 1_000,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
        "min" | "m" | "minute" | "minutes" => 60_000_000_000,
        "h" | "hour" | "hours" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        _ => return None,
    };
    number.checked_mul(unit)
}

/// Flink's memory sizes: a number with an optional unit (`b`, `kb`/`k`, `mb`/`m`, `gb`/`g`,
/// `tb`/`t`, also spelled `bytes`, `kibibytes`, …), case-insensitive.
pub fn parse_memory_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let number: u64 = text[..digits].parse().ok()?;
    let unit = text[digits..].trim().to_ascii_lowercase();
    let shift = match unit.as_str() {
        "" | "b" | "bytes" => 0,
        "k" | "kb" | "kibibytes" => 10,
        "m" | "mb" | "mebibytes" => 20,
        "g" | "gb" | "gibibytes" => 30,
        "t" | "tb" | "tebibytes" => 40,
        _ => return None,
    };
    number.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory_size("128MB"), Some(128 << 20));
        assert_eq!(parse_memory_size("1 kb"), Some(1024));
        assert_eq!(parse_memory_size("10"), Some(10));
        assert_eq!(parse_memory_size("ten"), None);
        assert_eq!(parse_memory_size("1 parsec"), None);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30 min"), Some(1_800_000_000_000));
        assert_eq!(parse_duration("500"), Some(500_000_000));
        assert_eq!(parse_duration("1 s"), Some(1_000_000_000));
        assert_eq!(parse_duration("abc"), None);
        assert_eq!(parse_duration("99999999999 d"), None);
    }
}

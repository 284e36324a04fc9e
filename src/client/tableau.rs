//! Printing results as Flink's SQL client does (its `TableauStyle`): right-aligned cells, NULL
//! as `<NULL>`, long values cut to `…...`, with widths from the column types while rows stream
//! in, or from the content once all rows are known. Cells are printed raw: Flink escapes no
//! control character.
//!
//! Widths are Flink's, which are not terminal columns: a text is as wide as its UTF-16 length
//! plus one for each East Asian wide or full-width code point, so `中` takes 2 and an emoji
//! (two UTF-16 units, wide) takes 3; a column name counts only its UTF-16 length when the
//! width comes from the type.

use crate::types::{DataType, TypeKind};

/// `table.display.max-column-width`'s default.
pub const MAX_COLUMN_WIDTH: usize = 30;
pub const NULL_TEXT: &str = "<NULL>";

/// Flink's `PrintStyle` width for a column of this type; `max` for the types without a fixed
/// text width (strings, binaries, FLOAT/DOUBLE, intervals, collections).
pub fn type_width(data_type: &DataType, max: usize) -> usize {
    match &data_type.kind {
        TypeKind::Boolean => 5,
        TypeKind::TinyInt => 4,
        TypeKind::SmallInt => 6,
        TypeKind::Int => 11,
        TypeKind::BigInt => 20,
        TypeKind::Decimal { precision, .. } => *precision as usize + 2,
        TypeKind::Date => 10,
        TypeKind::Time(0) => 8,
        TypeKind::Time(p) => *p as usize + 9,
        TypeKind::Timestamp(p) | TypeKind::TimestampLtz(p) => timestamp_width(*p),
        _ => max,
    }
}

/// `TableauStyle.timestampTypeColumnWidth`: the seconds' fraction is sized in steps of
/// milli-, micro- and nanoseconds, whatever the precision within the step.
fn timestamp_width(precision: u8) -> usize {
    match precision {
        0 => 19,
        1..=3 => 23,
        4..=6 => 26,
        _ => 29,
    }
}

/// Widths for streaming output: the name's length, the type's width and `<NULL>`'s; never
/// capped.
pub fn widths_by_type(names: &[String], types: &[DataType], max: usize) -> Vec<usize> {
    names
        .iter()
        .zip(types)
        .map(|(n, t)| {
            n.encode_utf16()
                .count()
                .max(type_width(t, max))
                .max(NULL_TEXT.len())
        })
        .collect()
}

/// Widths for materialized output: the widest of header and cells, capped at `cap`.
pub fn widths_by_content(names: &[String], rows: &[Vec<String>], cap: Option<usize>) -> Vec<usize> {
    let mut widths: Vec<usize> = names.iter().map(|n| display_width(n)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            // The whole text, newlines included, as Flink measures it: a multi-line cell (SHOW
            // CREATE TABLE) is printed raw in a column as wide as its full length.
            *w = (*w).max(display_width(cell));
        }
    }
    if let Some(cap) = cap {
        for w in &mut widths {
            *w = (*w).min(cap);
        }
    }
    widths
}

pub fn border(widths: &[usize]) -> String {
    let mut s = String::from("+");
    for w in widths {
        s.push_str(&"-".repeat(w + 2));
        s.push('+');
    }
    s
}

/// One line of cells, each right-aligned in its width (cut with `...` when longer).
pub fn row_line(widths: &[usize], cells: &[String]) -> String {
    let mut s = String::from("|");
    for (w, cell) in widths.iter().zip(cells) {
        s.push(' ');
        let width = display_width(cell);
        if width <= *w {
            s.push_str(&" ".repeat(w - width));
            s.push_str(cell);
        } else {
            s.push_str(&truncate(cell, *w as i64 - 3));
            s.push_str("...");
        }
        s.push_str(" |");
    }
    s
}

/// The text's width as Flink computes it (`TableauStyle.getStringDisplayWidth`).
pub fn display_width(s: &str) -> usize {
    s.encode_utf16().count() + s.chars().filter(|c| is_full_width(*c as u32)).count()
}

/// `TableauStyle.truncateString`: the longest prefix of UTF-16 units whose width (two for a
/// unit starting a wide code point, one for any other unit) stays within `limit`, padded on
/// the left to `limit`. The cut can fall inside a surrogate pair; the lone half is printed as
/// `?`, as Java's UTF-8 encoder prints it.
fn truncate(cell: &str, limit: i64) -> String {
    let units: Vec<u16> = cell.encode_utf16().collect();
    let mut used = 0i64;
    let mut end = 0;
    while end < units.len() {
        let cp = char::decode_utf16(units[end..].iter().copied())
            .next()
            .and_then(Result::ok)
            .map_or(u32::from(units[end]), u32::from);
        // A low surrogate on its own is a narrow code unit.
        let is_low = (0xDC00..=0xDFFF).contains(&units[end]);
        used += if !is_low && is_full_width(cp) { 2 } else { 1 };
        if used > limit {
            break;
        }
        end += 1;
    }
    let prefix: String = char::decode_utf16(units[..end].iter().copied())
        .map(|r| r.unwrap_or('?'))
        .collect();
    let width = prefix.encode_utf16().count()
        + prefix
            .chars()
            .filter(|c| *c != '?' && is_full_width(*c as u32))
            .count();
    let pad = limit - width as i64;
    if pad > 0 {
        format!("{}{prefix}", " ".repeat(pad as usize))
    } else {
        prefix
    }
}

/// A whole table (header, rows, borders), cells as given; used for DESC, SHOW and batch
/// results.
pub fn table(names: &[String], rows: &[Vec<String>], cap: Option<usize>) -> String {
    let widths = widths_by_content(names, rows, cap);
    let mut out = String::new();
    out.push_str(&border(&widths));
    out.push('\n');
    out.push_str(&row_line(&widths, names));
    out.push('\n');
    out.push_str(&border(&widths));
    out.push('\n');
    for row in rows {
        out.push_str(&row_line(&widths, row));
        out.push('\n');
    }
    out.push_str(&border(&widths));
    out.push('\n');
    out
}

/// Whether the code point's East Asian Width is Wide or Fullwidth, as the ICU 67 Flink ships
/// (shaded in flink-table) answers; the ranges were dumped from that ICU.
fn is_full_width(cp: u32) -> bool {
    FULL_WIDTH
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

const FULL_WIDTH: &[(u32, u32)] = &[
    (0x1100, 0x115F),
    (0x231A, 0x231B),
    (0x2329, 0x232A),
    (0x23E9, 0x23EC),
    (0x23F0, 0x23F0),
    (0x23F3, 0x23F3),
    (0x25FD, 0x25FE),
    (0x2614, 0x2615),
    (0x2648, 0x2653),
    (0x267F, 0x267F),
    (0x2693, 0x2693),
    (0x26A1, 0x26A1),
    (0x26AA, 0x26AB),
    (0x26BD, 0x26BE),
    (0x26C4, 0x26C5),
    (0x26CE, 0x26CE),
    (0x26D4, 0x26D4),
    (0x26EA, 0x26EA),
    (0x26F2, 0x26F3),
    (0x26F5, 0x26F5),
    (0x26FA, 0x26FA),
    (0x26FD, 0x26FD),
    (0x2705, 0x2705),
    (0x270A, 0x270B),
    (0x2728, 0x2728),
    (0x274C, 0x274C),
    (0x274E, 0x274E),
    (0x2753, 0x2755),
    (0x2757, 0x2757),
    (0x2795, 0x2797),
    (0x27B0, 0x27B0),
    (0x27BF, 0x27BF),
    (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50),
    (0x2B55, 0x2B55),
    (0x2E80, 0x2E99),
    (0x2E9B, 0x2EF3),
    (0x2F00, 0x2FD5),
    (0x2FF0, 0x2FFB),
    (0x3000, 0x303E),
    (0x3041, 0x3096),
    (0x3099, 0x30FF),
    (0x3105, 0x312F),
    (0x3131, 0x318E),
    (0x3190, 0x31E3),
    (0x31F0, 0x321E),
    (0x3220, 0x3247),
    (0x3250, 0x4DBF),
    (0x4E00, 0xA48C),
    (0xA490, 0xA4C6),
    (0xA960, 0xA97C),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE19),
    (0xFE30, 0xFE52),
    (0xFE54, 0xFE66),
    (0xFE68, 0xFE6B),
    (0xFF01, 0xFF60),
    (0xFFE0, 0xFFE6),
    (0x16FE0, 0x16FE4),
    (0x16FF0, 0x16FF1),
    (0x17000, 0x187F7),
    (0x18800, 0x18CD5),
    (0x18D00, 0x18D08),
    (0x1B000, 0x1B11E),
    (0x1B150, 0x1B152),
    (0x1B164, 0x1B167),
    (0x1B170, 0x1B2FB),
    (0x1F004, 0x1F004),
    (0x1F0CF, 0x1F0CF),
    (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A),
    (0x1F200, 0x1F202),
    (0x1F210, 0x1F23B),
    (0x1F240, 0x1F248),
    (0x1F250, 0x1F251),
    (0x1F260, 0x1F265),
    (0x1F300, 0x1F320),
    (0x1F32D, 0x1F335),
    (0x1F337, 0x1F37C),
    (0x1F37E, 0x1F393),
    (0x1F3A0, 0x1F3CA),
    (0x1F3CF, 0x1F3D3),
    (0x1F3E0, 0x1F3F0),
    (0x1F3F4, 0x1F3F4),
    (0x1F3F8, 0x1F43E),
    (0x1F440, 0x1F440),
    (0x1F442, 0x1F4FC),
    (0x1F4FF, 0x1F53D),
    (0x1F54B, 0x1F54E),
    (0x1F550, 0x1F567),
    (0x1F57A, 0x1F57A),
    (0x1F595, 0x1F596),
    (0x1F5A4, 0x1F5A4),
    (0x1F5FB, 0x1F64F),
    (0x1F680, 0x1F6C5),
    (0x1F6CC, 0x1F6CC),
    (0x1F6D0, 0x1F6D2),
    (0x1F6D5, 0x1F6D7),
    (0x1F6EB, 0x1F6EC),
    (0x1F6F4, 0x1F6FC),
    (0x1F7E0, 0x1F7EB),
    (0x1F90C, 0x1F93A),
    (0x1F93C, 0x1F945),
    (0x1F947, 0x1F978),
    (0x1F97A, 0x1F9CB),
    (0x1F9CD, 0x1F9FF),
    (0x1FA70, 0x1FA74),
    (0x1FA78, 0x1FA7A),
    (0x1FA80, 0x1FA86),
    (0x1FA90, 0x1FAA8),
    (0x1FAB0, 0x1FAB6),
    (0x1FAC0, 0x1FAC2),
    (0x1FAD0, 0x1FAD6),
    (0x20000, 0x2FFFD),
    (0x30000, 0x3FFFD),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_count_utf16_units_and_wide_code_points() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("中文"), 4);
        assert_eq!(display_width("😀x"), 4);
        assert_eq!(display_width("ｱ"), 1);
        assert_eq!(display_width("Ａ"), 2);
    }

    #[test]
    fn truncation_can_split_a_surrogate_pair() {
        // Limit 8: two emoji take 6 units of width, the next high surrogate 2 more, its low
        // half would exceed.
        assert_eq!(truncate("😀😀😀😀", 8), " 😀😀?");
        assert_eq!(truncate("😀😀😀😀", 7), " 😀😀");
        assert_eq!(truncate("abcdef", -1), "");
    }
}

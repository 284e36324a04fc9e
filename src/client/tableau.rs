//! Printing results as Flink's SQL client does: the tableau table (right-aligned cells, NULL
//! as `<NULL>`, long values cut to `…...`), with widths from the column types while rows
//! stream in, or from the content once all rows are known.

use unicode_width_lite::display_width;

use crate::types::{DataType, TypeKind};

/// `sql-client.display.max-column-width`'s default.
pub const MAX_COLUMN_WIDTH: usize = 30;
pub const NULL_TEXT: &str = "<NULL>";

/// Flink's `PrintStyle` width for a column of this type.
pub fn type_width(data_type: &DataType) -> usize {
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
        TypeKind::Timestamp(p) | TypeKind::TimestampLtz(p) => {
            if *p == 0 {
                19
            } else {
                20 + *p as usize
            }
        }
        _ => MAX_COLUMN_WIDTH,
    }
}

/// Widths for streaming output: name, type and `<NULL>` decide; no cap on names.
pub fn widths_by_type(names: &[String], types: &[DataType]) -> Vec<usize> {
    names
        .iter()
        .zip(types)
        .map(|(n, t)| display_width(n).max(type_width(t)).max(NULL_TEXT.len()))
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
        let text = fit(cell, *w);
        let pad = w.saturating_sub(display_width(&text));
        s.push(' ');
        s.push_str(&" ".repeat(pad));
        s.push_str(&text);
        s.push_str(" |");
    }
    s
}

fn fit(cell: &str, width: usize) -> String {
    if display_width(cell) <= width {
        return cell.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in cell.chars() {
        let cw = display_width(c.encode_utf8(&mut [0; 4]));
        if used + cw > width.saturating_sub(3) {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push_str("...");
    out
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

/// Display width: East Asian wide and full-width characters take two columns.
mod unicode_width_lite {
    pub fn display_width(s: &str) -> usize {
        s.chars().map(char_width).sum()
    }

    fn char_width(c: char) -> usize {
        let cp = c as u32;
        let wide = matches!(cp,
            0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
            | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60
            | 0xFFE0..=0xFFE6 | 0x1F300..=0x1F64F | 0x1F900..=0x1F9FF | 0x20000..=0x3FFFD);
        if wide { 2 } else { 1 }
    }
}

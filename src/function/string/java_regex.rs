//! Java's regular expressions (`java.util.regex.Pattern`, which Flink's REGEXP functions use),
//! translated to fancy-regex syntax.
//!
//! What differs between the two, and how it is bridged:
//! - `\d`, `\w`, `\s` and the POSIX names `\p{Alpha}` … are ASCII in Java (unless `(?U)`), and
//!   Unicode in Rust: they become explicit ASCII classes.
//! - `.` excludes every Java line terminator (`\n`, `\r`, U+0085, U+2028, U+2029), not only `\n`;
//!   `$` and `\Z` also match before a line terminator that ends the text. A text that does not
//!   end with one takes a plain `\z`, so the common case stays on the fast automaton; the exact,
//!   look-ahead form is compiled once for the texts that do.
//! - `(?U)` is Unicode classes in Java but "swap greed" in Rust; `(?u)`, `(?d)` and `(?c)` have no
//!   Rust counterpart. The translator keeps a flag stack and applies them itself.
//! - `(?i)` folds only ASCII letters unless `(?u)` is set: other literal letters stay exact.
//! - `\Q…\E` quoting, octal `\0nn`, `\cX`, `\e`, `\uhhhh`, `\h`, `\v`, `\R` are rewritten;
//!   backreferences, look-around, atomic groups and possessive quantifiers are fancy-regex's.
//! - Inside a class, `[:alpha:]` is a nested class of characters in Java, not a POSIX class, and
//!   `~~`/`--` are not operators: those characters are escaped.
//!
//! Left as Rust has it: `\b` (Unicode word characters) and `^`/`$` under `(?m)` only treat
//! `\n` … as the line ends listed above, ignoring Java's rule about `\r\n` pairs.

use fancy_regex::{Regex, RegexBuilder};

use crate::function::EvalError;

/// Java's line terminators, as the members of a class.
const TERMINATORS: &str = r"\n\r\x{85}\x{2028}\x{2029}";

/// A compiled Java pattern.
pub struct JavaRegex {
    /// For texts that do not end with a line terminator (`$` is `\z` there).
    plain: Regex,
    /// The exact translation, when `$` or `\Z` make a trailing terminator matter.
    terminated: Option<Regex>,
}

impl JavaRegex {
    pub fn new(pattern: &str) -> Result<Self, String> {
        let plain = Translator::run(pattern, false)?;
        let exact = Translator::run(pattern, true)?;
        let terminated = if exact == plain {
            None
        } else {
            Some(build(exact)?)
        };
        Ok(JavaRegex {
            plain: build(plain)?,
            terminated,
        })
    }

    /// The compiled form that is exact for `text`.
    pub fn for_text(&self, text: &str) -> &Regex {
        match &self.terminated {
            Some(exact) if text.ends_with(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) => exact,
            _ => &self.plain,
        }
    }

    /// The number of groups, the whole match included.
    pub fn captures_len(&self) -> usize {
        self.plain.captures_len()
    }

    pub fn is_match(&self, text: &str) -> Result<bool, EvalError> {
        self.for_text(text).is_match(text).map_err(failed)
    }

    /// The byte range of the first match.
    pub fn find(&self, text: &str) -> Result<Option<(usize, usize)>, EvalError> {
        match self.for_text(text).find(text) {
            Ok(m) => Ok(m.map(|m| (m.start(), m.end()))),
            Err(e) => Err(failed(e)),
        }
    }

    /// Calls `f` with the byte range of every non-overlapping match, in order.
    pub fn for_each_match(
        &self,
        text: &str,
        mut f: impl FnMut(usize, usize) -> bool,
    ) -> Result<(), EvalError> {
        for m in self.for_text(text).find_iter(text) {
            let m = m.map_err(failed)?;
            if !f(m.start(), m.end()) {
                break;
            }
        }
        Ok(())
    }

    /// The byte range of group `g` in the first match: `None` for no match or a group that
    /// did not take part in it.
    pub fn first_group(&self, text: &str, g: usize) -> Result<Option<(usize, usize)>, EvalError> {
        let captures = self.for_text(text).captures(text).map_err(failed)?;
        Ok(captures
            .and_then(|c| c.get(g))
            .map(|m| (m.start(), m.end())))
    }

    /// Calls `f` with group `g` of every non-overlapping match, in order.
    pub fn for_each_group(
        &self,
        text: &str,
        g: usize,
        mut f: impl FnMut(Option<(usize, usize)>),
    ) -> Result<(), EvalError> {
        for captures in self.for_text(text).captures_iter(text) {
            let captures = captures.map_err(failed)?;
            f(captures.get(g).map(|m| (m.start(), m.end())));
        }
        Ok(())
    }
}

fn build(pattern: String) -> Result<Regex, String> {
    RegexBuilder::new(&pattern)
        .build()
        .map_err(|e| e.to_string())
}

/// A match that gave up (fancy-regex bounds backtracking; Java would run on).
pub fn failed(e: fancy_regex::Error) -> EvalError {
    EvalError::Invalid(format!("regular expression could not be evaluated: {e}"))
}

#[derive(Clone, Copy, Default)]
struct Flags {
    case_insensitive: bool,
    unicode_case: bool,
    dot_all: bool,
    multiline: bool,
    unix_lines: bool,
    comments: bool,
    unicode_classes: bool,
}

struct Translator<'p> {
    chars: std::iter::Peekable<std::str::CharIndices<'p>>,
    out: String,
    flags: Flags,
    /// Flags to restore at each open group's `)`.
    groups: Vec<Flags>,
    captures: usize,
    /// Whether `$`/`\Z` take the exact, look-ahead form.
    exact: bool,
}

impl<'p> Translator<'p> {
    fn run(pattern: &'p str, exact: bool) -> Result<String, String> {
        let mut t = Translator {
            chars: pattern.char_indices().peekable(),
            out: String::with_capacity(pattern.len() + 16),
            flags: Flags::default(),
            groups: Vec::new(),
            captures: 0,
            exact,
        };
        while let Some((at, c)) = t.chars.next() {
            t.outside(at, c)?;
        }
        Ok(t.out)
    }

    fn next_is(&mut self, c: char) -> bool {
        self.chars.next_if(|&(_, n)| n == c).is_some()
    }

    fn outside(&mut self, at: usize, c: char) -> Result<(), String> {
        match c {
            '\\' => {
                let (_, e) = self
                    .chars
                    .next()
                    .ok_or_else(|| format!("unexpected end of pattern after '\\' at {at}"))?;
                self.escape(at, e, false)?;
            }
            '[' => self.class(at)?,
            '(' => self.group()?,
            ')' => {
                self.flags = self.groups.pop().unwrap_or(self.flags);
                self.out.push(')');
            }
            '.' => self.dot(),
            '$' => self.dollar(),
            '^' => self.caret(),
            '#' if self.flags.comments => {
                self.out.push('#');
                while let Some((_, n)) = self.chars.next_if(|&(_, n)| n != '\n') {
                    self.out.push(n);
                }
            }
            c if c.is_whitespace() && self.flags.comments => self.out.push(c),
            '*' | '+' | '?' | '{' | '}' | '|' => self.out.push(c),
            c => self.literal(c),
        }
        Ok(())
    }

    /// A literal character outside a class.
    fn literal(&mut self, c: char) {
        let exact_case = self.flags.case_insensitive
            && !self.flags.unicode_case
            && !c.is_ascii()
            && c.to_lowercase().ne(c.to_uppercase());
        if exact_case {
            self.out.push_str("(?-i:");
            push_char(&mut self.out, c);
            self.out.push(')');
        } else {
            push_char(&mut self.out, c);
        }
    }

    fn dot(&mut self) {
        if self.flags.dot_all {
            self.out.push_str("(?s:.)");
        } else if self.flags.unix_lines {
            self.out.push_str(r"[^\n]");
        } else {
            self.out.push_str("[^");
            self.out.push_str(TERMINATORS);
            self.out.push(']');
        }
    }

    fn dollar(&mut self) {
        if self.flags.multiline {
            if self.flags.unix_lines {
                self.out.push_str(r"(?m:$)");
            } else {
                self.out.push_str(&format!("(?=[{TERMINATORS}]|\\z)"));
            }
        } else {
            self.end_before_terminator();
        }
    }

    /// `$` without `(?m)`, and `\Z`: the end, or before a line terminator that ends the text.
    fn end_before_terminator(&mut self) {
        if !self.exact {
            self.out.push_str(r"\z");
        } else if self.flags.unix_lines {
            self.out.push_str(r"(?=\n?\z)");
        } else {
            self.out
                .push_str(&format!(r"(?=(?:\r\n|[{TERMINATORS}])?\z)"));
        }
    }

    fn caret(&mut self) {
        if !self.flags.multiline {
            self.out.push('^');
        } else if self.flags.unix_lines {
            self.out.push_str(r"(?:\A|(?<=\n)(?!\z))");
        } else {
            // After a terminator, except at the end and between `\r` and `\n`.
            self.out
                .push_str(r"(?:\A|(?<=[\n\x{85}\x{2028}\x{2029}])(?!\z)|(?<=\r)(?![\n]|\z))");
        }
    }

    fn group(&mut self) -> Result<(), String> {
        self.groups.push(self.flags);
        if !self.next_is('?') {
            self.captures += 1;
            self.out.push('(');
            return Ok(());
        }
        match self.chars.peek().map(|&(_, c)| c) {
            Some(':' | '=' | '!' | '>') => {
                let (_, c) = self.chars.next().expect("peeked");
                self.out.push_str("(?");
                self.out.push(c);
            }
            Some('<') => {
                self.chars.next();
                match self.chars.peek().map(|&(_, c)| c) {
                    Some('=' | '!') => {
                        let (_, c) = self.chars.next().expect("peeked");
                        self.out.push_str("(?<");
                        self.out.push(c);
                    }
                    _ => {
                        self.captures += 1;
                        self.out.push_str("(?<");
                        loop {
                            match self.chars.next() {
                                Some((_, '>')) => break,
                                Some((_, c)) if c.is_ascii_alphanumeric() => self.out.push(c),
                                _ => return Err("named capturing group is not closed".into()),
                            }
                        }
                        self.out.push('>');
                    }
                }
            }
            _ => self.flag_group()?,
        }
        Ok(())
    }

    /// `(?idmsuxU-idmsuxU)` or `(?idmsuxU-idmsuxU:` (the `(?` already read).
    fn flag_group(&mut self) -> Result<(), String> {
        let mut on = true;
        let mut rust = String::new();
        loop {
            let (at, c) = self
                .chars
                .next()
                .ok_or_else(|| "unclosed group in pattern".to_string())?;
            let flags = &mut self.flags;
            match c {
                '-' => {
                    on = false;
                    rust.push('-');
                }
                'i' => {
                    flags.case_insensitive = on;
                    rust.push('i');
                }
                'x' => {
                    flags.comments = on;
                    rust.push('x');
                }
                'u' => flags.unicode_case = on,
                's' => flags.dot_all = on,
                'm' => flags.multiline = on,
                'd' => flags.unix_lines = on,
                'U' => flags.unicode_classes = on,
                'c' => {}
                ')' | ':' => {
                    let rust = rust.trim_end_matches('-');
                    if c == ')' {
                        // Not a group: the flags apply to the rest of the enclosing one.
                        self.groups.pop();
                        if !rust.is_empty() {
                            self.out.push_str(&format!("(?{rust})"));
                        }
                    } else {
                        self.out.push_str(&format!("(?{rust}:"));
                    }
                    return Ok(());
                }
                other => return Err(format!("unknown inline flag '{other}' at {at}")),
            }
        }
    }

    /// A class, `[` already read; classes nest, and `&&` intersects (as in Rust).
    fn class(&mut self, at: usize) -> Result<(), String> {
        self.class_body(at, false)
    }

    /// The members of a class up to its `]`; a nested class that is a plain union is written
    /// without its brackets (fancy-regex would read `[[\x{3A}alpha\x{3A}]]` as a POSIX class).
    fn class_body(&mut self, at: usize, nested: bool) -> Result<(), String> {
        let negated = self.next_is('^');
        let brackets = !nested || negated;
        if brackets {
            self.out.push('[');
        }
        if negated {
            self.out.push('^');
        }
        let mut first = true;
        loop {
            let (pos, c) = self
                .chars
                .next()
                .ok_or_else(|| format!("unclosed character class at {at}"))?;
            match c {
                ']' if !first => {
                    if brackets {
                        self.out.push(']');
                    }
                    return Ok(());
                }
                '[' => self.class_body(pos, true)?,
                '\\' => {
                    let (_, e) = self
                        .chars
                        .next()
                        .ok_or_else(|| format!("unclosed character class at {at}"))?;
                    self.escape(pos, e, true)?;
                }
                '&' if self.chars.peek().is_some_and(|&(_, n)| n == '&') => {
                    self.chars.next();
                    self.out.push_str("&&");
                }
                '-' => {
                    self.out.push('-');
                    if self.chars.peek().is_some_and(|&(_, n)| n == '-') {
                        // `--` is a Rust operator; Java reads a literal `-`.
                        self.chars.next();
                        push_escaped(&mut self.out, '-');
                    }
                }
                c if c.is_whitespace() && self.flags.comments => {}
                c if c.is_alphanumeric() || !c.is_ascii() => self.out.push(c),
                c => push_escaped(&mut self.out, c),
            }
            first = false;
        }
    }

    /// The escape `\e` (backslash already read), in a class or outside one.
    fn escape(&mut self, at: usize, e: char, in_class: bool) -> Result<(), String> {
        let unicode = self.flags.unicode_classes;
        let class = |s: &str| format!("[{s}]");
        let text = match e {
            'd' if unicode => r"\d".into(),
            'D' if unicode => r"\D".into(),
            'w' if unicode => r"\w".into(),
            'W' if unicode => r"\W".into(),
            's' if unicode => r"\s".into(),
            'S' if unicode => r"\S".into(),
            'd' => class("0-9"),
            'D' => class("^0-9"),
            'w' => class("a-zA-Z_0-9"),
            'W' => class("^a-zA-Z_0-9"),
            's' => class(r"\x{20}\t\n\x{B}\x{C}\r"),
            'S' => class(r"^\x{20}\t\n\x{B}\x{C}\r"),
            'h' => class(HORIZONTAL),
            'H' => class(&format!("^{HORIZONTAL}")),
            'v' => class(VERTICAL),
            'V' => class(&format!("^{VERTICAL}")),
            'R' if !in_class => format!(r"(?>\r\n|[{VERTICAL}])"),
            'p' | 'P' => property(self.property_name(at)?, e == 'P', unicode)?,
            'A' | 'z' | 'b' | 'B' | 'G' if !in_class => format!("\\{e}"),
            'Z' if !in_class => {
                self.end_before_terminator();
                return Ok(());
            }
            'Q' => {
                // Literal up to `\E` (or the end).
                while let Some((_, c)) = self.chars.next() {
                    if c == '\\' && self.next_is('E') {
                        break;
                    }
                    if in_class {
                        push_escaped(&mut self.out, c);
                    } else {
                        self.literal(c);
                    }
                }
                return Ok(());
            }
            'k' if !in_class => {
                if !self.next_is('<') {
                    return Err(format!(
                        "\\k is not followed by '<' for a group name at {at}"
                    ));
                }
                let mut name = String::new();
                loop {
                    match self.chars.next() {
                        Some((_, '>')) => break,
                        Some((_, c)) if c.is_ascii_alphanumeric() => name.push(c),
                        _ => return Err(format!("named group reference is not closed at {at}")),
                    }
                }
                format!(r"\k<{name}>")
            }
            '1'..='9' if !in_class => {
                let mut group = e.to_digit(10).expect("a digit") as usize;
                while let Some(&(_, n)) = self.chars.peek() {
                    let Some(d) = n.to_digit(10) else { break };
                    let longer = group * 10 + d as usize;
                    if longer > self.captures {
                        break;
                    }
                    group = longer;
                    self.chars.next();
                }
                if group > self.captures {
                    // A reference to a group that does not exist (yet) never matches.
                    NEVER.into()
                } else {
                    format!(r"(?:\{group})")
                }
            }
            '0' => {
                let mut value = 0u32;
                let mut digits = 0;
                while digits < 3 {
                    let Some(&(_, n)) = self.chars.peek() else {
                        break;
                    };
                    let Some(d) = n.to_digit(8) else { break };
                    if value * 8 + d > 0o377 {
                        break;
                    }
                    value = value * 8 + d;
                    digits += 1;
                    self.chars.next();
                }
                if digits == 0 {
                    return Err(format!("illegal octal escape sequence at {at}"));
                }
                hex(value)
            }
            'x' => {
                let value = if self.next_is('{') {
                    let mut v = 0u32;
                    loop {
                        match self.chars.next() {
                            Some((_, '}')) => break,
                            Some((_, c)) if c.is_ascii_hexdigit() && v <= 0x10FFFF => {
                                v = v * 16 + c.to_digit(16).expect("a hex digit");
                            }
                            _ => return Err(format!("illegal hexadecimal escape at {at}")),
                        }
                    }
                    v
                } else {
                    self.hex_digits(at, 2)?
                };
                hex(value)
            }
            'u' => hex(self.hex_digits(at, 4)?),
            't' => hex(0x09),
            'n' => hex(0x0A),
            'r' => hex(0x0D),
            'f' => hex(0x0C),
            'a' => hex(0x07),
            'e' => hex(0x1B),
            'c' => {
                let (_, c) = self
                    .chars
                    .next()
                    .ok_or_else(|| format!("illegal control escape sequence at {at}"))?;
                hex(c as u32 ^ 64)
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(format!(
                    "illegal/unsupported escape sequence '\\{c}' at {at}"
                ));
            }
            c => {
                // Any other character stands for itself.
                let mut s = String::new();
                push_escaped(&mut s, c);
                s
            }
        };
        self.out.push_str(&text);
        Ok(())
    }

    fn hex_digits(&mut self, at: usize, n: usize) -> Result<u32, String> {
        let mut v = 0;
        for _ in 0..n {
            match self.chars.next() {
                Some((_, c)) if c.is_ascii_hexdigit() => {
                    v = v * 16 + c.to_digit(16).expect("a hex digit");
                }
                _ => return Err(format!("illegal hexadecimal escape at {at}")),
            }
        }
        Ok(v)
    }

    /// The name after `\p`: one letter, or `{…}`.
    fn property_name(&mut self, at: usize) -> Result<String, String> {
        match self.chars.next() {
            Some((_, '{')) => {
                let mut name = String::new();
                loop {
                    match self.chars.next() {
                        Some((_, '}')) => return Ok(name),
                        Some((_, c)) => name.push(c),
                        None => return Err(format!("unclosed character family at {at}")),
                    }
                }
            }
            Some((_, c)) => Ok(c.to_string()),
            None => Err(format!("illegal character family at {at}")),
        }
    }
}

/// `\h`: Java's horizontal whitespace.
const HORIZONTAL: &str = r"\x{20}\t\x{A0}\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}";
/// `\v`: Java's vertical whitespace.
const VERTICAL: &str = r"\n\x{B}\x{C}\r\x{85}\x{2028}\x{2029}";
/// A class no character is in.
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

/// Java's `\p{name}` (negated for `\P`): POSIX names are ASCII classes unless `(?U)`.
fn property(name: String, negated: bool, unicode: bool) -> Result<String, String> {
    let posix = match name.as_str() {
        "Lower" if !unicode => Some("a-z"),
        "Upper" if !unicode => Some("A-Z"),
        "ASCII" => Some(r"\x{0}-\x{7F}"),
        "Alpha" if !unicode => Some("a-zA-Z"),
        "Digit" if !unicode => Some("0-9"),
        "Alnum" if !unicode => Some("a-zA-Z0-9"),
        "Punct" if !unicode => Some(r"\x{21}-\x{2F}\x{3A}-\x{40}\x{5B}-\x{60}\x{7B}-\x{7E}"),
        "Graph" if !unicode => Some(r"\x{21}-\x{7E}"),
        "Print" if !unicode => Some(r"\x{20}-\x{7E}"),
        "Blank" if !unicode => Some(r"\x{20}\t"),
        "Cntrl" if !unicode => Some(r"\x{0}-\x{1F}\x{7F}"),
        "XDigit" if !unicode => Some("0-9a-fA-F"),
        "Space" if !unicode => Some(r"\x{20}\t\n\x{B}\x{C}\r"),
        _ => None,
    };
    let caret = if negated { "^" } else { "" };
    if let Some(members) = posix {
        return Ok(format!("[{caret}{members}]"));
    }
    let p = if negated { 'P' } else { 'p' };
    let rust = match name.as_str() {
        "Lower" | "javaLowerCase" => "Lowercase",
        "Upper" | "javaUpperCase" => "Uppercase",
        "Alpha" | "javaAlphabetic" => "Alphabetic",
        "Digit" | "javaDigit" => "Nd",
        "Space" | "javaWhitespace" => "White_Space",
        "Alnum" => return Ok(format!(r"[{caret}\p{{Alphabetic}}\p{{Nd}}]")),
        "javaLetter" => "L",
        "javaLetterOrDigit" => return Ok(format!(r"[{caret}\p{{L}}\p{{Nd}}]")),
        "Punct" => "P",
        "Cntrl" => "Cc",
        "XDigit" => "Hex_Digit",
        "Blank" => return Ok(format!(r"[{caret}\p{{Zs}}\t]")),
        other if other.starts_with("In") => {
            return Err(format!("Unicode blocks are not supported: \\p{{{other}}}"));
        }
        other => other
            .strip_prefix("Is")
            .or_else(|| other.strip_prefix("general_category="))
            .or_else(|| other.strip_prefix("gc="))
            .or_else(|| other.strip_prefix("script="))
            .or_else(|| other.strip_prefix("sc="))
            .unwrap_or(other),
    };
    Ok(format!("\\{p}{{{rust}}}"))
}

fn hex(value: u32) -> String {
    format!(r"\x{{{value:X}}}")
}

/// `c` as a literal, escaped when it is not a letter or digit.
fn push_escaped(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&hex(c as u32));
    }
}

/// `c` as a literal outside a class.
fn push_char(out: &mut String, c: char) {
    if c.is_alphanumeric() || matches!(c, '_' | ',' | '=' | '\'' | '"' | ';' | '/' | '@' | '%') {
        out.push(c);
    } else {
        out.push_str(&hex(c as u32));
    }
}

#[cfg(test)]
mod tests {
    use super::JavaRegex;

    fn matches(pattern: &str, text: &str) -> bool {
        JavaRegex::new(pattern).unwrap().is_match(text).unwrap()
    }

    fn first(pattern: &str, text: &str) -> Option<String> {
        let re = JavaRegex::new(pattern).unwrap();
        re.find(text).unwrap().map(|(s, e)| text[s..e].to_string())
    }

    #[test]
    fn classes_are_ascii_unless_unicode_flag() {
        assert!(!matches(r"^\d$", "٣"));
        assert!(matches(r"(?U)^\d$", "٣"));
        assert!(!matches(r"^\w+$", "é"));
        assert!(!matches(r"^\s$", "\u{A0}"));
        assert!(matches(r"^\p{Alpha}+$", "abc"));
        assert!(!matches(r"^\p{Alpha}$", "é"));
        assert!(matches(r"^\p{L}$", "é"));
        assert!(matches(r"^\p{IsLatin}$", "é"));
        assert!(matches(r"^[\p{Punct}]+$", "!?."));
        assert!(!matches(r"^\P{Digit}$", "5"));
    }

    #[test]
    fn dot_and_dollar_follow_java_line_terminators() {
        assert!(!matches("^a.b$", "a\rb"));
        assert!(matches("(?s)^a.b$", "a\rb"));
        assert!(matches("abc$", "abc\n"));
        assert!(matches("abc$", "abc\r\n"));
        assert!(!matches("abc$", "abc\n\n"));
        assert!(matches(r"abc\Z", "abc\u{2028}"));
        assert!(!matches(r"abc\z", "abc\n"));
        assert!(matches("(?m)^b$", "a\nb\nc"));
        assert!(!matches("(?d)abc$", "abc\r"));
    }

    #[test]
    fn fancy_features() {
        assert_eq!(first(r"(\w)\1", "abccd").as_deref(), Some("cc"));
        assert_eq!(first(r"(?<=id=)\d+", "x id=42&y").as_deref(), Some("42"));
        assert_eq!(first(r"\d+(?!px)", "12px").as_deref(), Some("1"));
        assert!(!matches(r"^a*+a$", "aaa"));
        assert!(!matches(r"^(?>ab|a)b$", "ab"));
        assert_eq!(
            first(r"(?<y>\d{4})-\k<y>", "2020-2020").as_deref(),
            Some("2020-2020")
        );
        // `\2` before a second group exists never matches; `\11` with one group is `\1` `1`.
        assert!(!matches(r"(a)\2", "aa"));
        assert!(matches(r"^(a)\11$", "aa1"));
    }

    #[test]
    fn escapes_and_quoting() {
        assert!(matches(r"^\Q.*\E$", ".*"));
        assert!(!matches(r"^\Q.*\E$", "ab"));
        assert!(matches(r"^\x41\u0042\0103\x{44}\t$", "ABCD\t"));
        assert!(matches(r"^\cA$", "\u{1}"));
        assert!(matches(r"^a\<b\>$", "a<b>"));
        assert!(matches(r"^\h\v$", " \n"));
        assert!(matches(r"^[[:alpha:]]+$", "::aa"));
        assert!(!matches(r"^[[:alpha:]]+$", "b"));
        assert!(matches(r"^[a~]+$", "~a"));
        assert!(matches(r"^[a-z&&[^aeiou]]+$", "xyz"));
        assert!(!matches(r"^[a-z&&[^aeiou]]+$", "xaz"));
        assert!(JavaRegex::new(r"\y").is_err());
        assert!(JavaRegex::new(r"[abc").is_err());
        assert!(JavaRegex::new(r"\p{InGreek}").is_err());
    }

    #[test]
    fn inline_flags() {
        assert!(matches("(?i)abc", "ABC"));
        // Java folds only ASCII unless (?u) is also set.
        assert!(!matches("(?i)é", "É"));
        assert!(matches("(?iu)é", "É"));
        assert!(matches("a(?i:b)c", "aBc"));
        assert!(!matches("a(?i:b)c", "aBC"));
        assert!(matches("(?x) a b # comment (\n c", "abc"));
        // Java's (?U) is Unicode classes, not Rust's swap-greed.
        assert_eq!(first("(?U)a+", "aaa").as_deref(), Some("aaa"));
    }

    proptest::proptest! {
        /// Any pattern text compiles or is refused, and matching never panics.
        #[test]
        fn arbitrary_patterns_do_not_panic(
            pattern in r"[\\()\[\]{}?*+|^$.:<>=!&\-a-zA-Z0-9pPQEkuxc# \n]{0,24}",
            text in r"[a-z0-9:\n\r]{0,12}",
        ) {
            if let Ok(re) = JavaRegex::new(&pattern) {
                let _ = re.is_match(&text);
                let _ = re.for_each_group(&text, 0, |_| {});
            }
        }
    }
}

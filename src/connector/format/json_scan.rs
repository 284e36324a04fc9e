//! The `json` format's reader of JSON text: a scanner over one line's bytes.
//!
//! The decoder walks a line's top-level object with [`Scanner`] and keeps only the byte span
//! of each value it needs; a scalar then goes straight into its column's text without a tree,
//! and only nested values (arrays, objects) become a [`Node`] tree. Numbers are never
//! converted on the way: a [`Node::Number`] is the literal text as written, so the column's
//! type reads it exactly (DECIMAL from its digits, STRING gets the text, as Flink's Jackson
//! parser hands them over). The grammar is strict RFC 8259, as serde_json and Jackson's
//! defaults are: no comments, no trailing commas, no raw control characters in strings, no
//! lone surrogates.

use crate::types::json_text::write_json_string;
use std::borrow::Cow;
use std::fmt;

use crate::types::text::java_double_to_string;

/// Nesting deeper than this is an error rather than a deep recursion (serde_json's limit).
const MAX_DEPTH: usize = 128;

/// An object with more members than this finds repeated names through a hash map instead of
/// a scan of the members so far.
const LINEAR_DEDUP_LIMIT: usize = 32;

/// The first position from `at` holding a byte that stops a string's plain run: `"`, `\\` or a
/// control character (or the end of `bytes`). Eight bytes are tested at a time: a byte `b`
/// of the word is flagged when `b ^ '"'`, `b ^ '\\'` or `b` itself is below `0x01`/`0x20`,
/// by the carry trick (flags above the first true one may be spurious; the first is exact).
fn string_stop(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([0x20; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let quote = word ^ QUOTES;
        let backslash = word ^ BACKSLASHES;
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(SPACES) & !word);
        let flags = flags & HIGH;
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

/// A JSON value borrowing from the line where it can.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// The number's text, as written.
    Number(Cow<'a, str>),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Members in the order their names first appear; a repeated name keeps its first place
    /// and its last value, as Jackson's `ObjectNode` (a `LinkedHashMap`) does.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

/// What a value is, for messages and for the decoder's choice of path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// The kind with its article, as messages name it (`an array`).
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

impl Node<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Node::Null => Kind::Null,
            Node::Bool(_) => Kind::Bool,
            Node::Number(_) => Kind::Number,
            Node::String(_) => Kind::String,
            Node::Array(_) => Kind::Array,
            Node::Object(_) => Kind::Object,
        }
    }

    /// The same value, owning its text (kept past the line it came from).
    pub fn into_owned(self) -> Node<'static> {
        match self {
            Node::Null => Node::Null,
            Node::Bool(b) => Node::Bool(b),
            Node::Number(n) => Node::Number(Cow::Owned(n.into_owned())),
            Node::String(s) => Node::String(Cow::Owned(s.into_owned())),
            Node::Array(items) => Node::Array(items.into_iter().map(Node::into_owned).collect()),
            Node::Object(members) => Node::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// The member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Node<'_>> {
        match self {
            Node::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Compact JSON text as Jackson's tree writes it, which is what Flink gives a STRING
    /// column for a nested value: integers as written (`-0` is `0`), other numbers as Java's
    /// `Double.toString` prints them (`1E+2` is `100.0`), no spaces.
    pub fn write_compact(&self, out: &mut String) {
        match self {
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Number(n) => write_tree_number(out, n),
            Node::String(s) => write_json_string(out, s),
            Node::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            Node::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(out, k);
                    out.push(':');
                    v.write_compact(out);
                }
                out.push('}');
            }
        }
    }
}

/// Whether a (valid) JSON number has a fraction or an exponent, which Jackson reads as a
/// double rather than an integer.
pub fn is_floating(number: &str) -> bool {
    number.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// A number as Jackson's tree prints it: an integer node keeps its digits (`-0` is the int 0),
/// a floating one is a `DoubleNode`.
fn write_tree_number(out: &mut String, number: &str) {
    if is_floating(number) {
        out.push_str(&java_double_to_string(number.parse().unwrap_or(f64::NAN)));
    } else if number.bytes().all(|b| b == b'-' || b == b'0') {
        out.push('0');
    } else {
        out.push_str(number);
    }
}

/// Text that is not JSON: what was expected and the 1-based character column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: &'static str,
    pub column: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.message, self.column)
    }
}

/// Reads JSON values from a text, front to back.
pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    /// The byte offset of the next character.
    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn error(&self, message: &'static str) -> SyntaxError {
        let at = self.pos.min(self.text.len());
        // Back to a character boundary: an error may stop inside a multi-byte character.
        let at = (0..=at)
            .rev()
            .find(|&i| self.text.is_char_boundary(i))
            .unwrap_or(0);
        SyntaxError {
            message,
            column: self.text[..at].chars().count() + 1,
        }
    }

    /// Skips JSON whitespace.
    #[inline]
    pub fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte, not consumed.
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Consumes `byte` after optional whitespace, or fails with `message`.
    #[inline]
    pub fn expect(&mut self, byte: u8, message: &'static str) -> Result<(), SyntaxError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(message))
        }
    }

    /// Consumes the next byte if it is `byte`.
    #[inline]
    pub fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// After the last value: only whitespace may remain.
    pub fn expect_end(&mut self) -> Result<(), SyntaxError> {
        self.skip_whitespace();
        if self.pos < self.bytes.len() {
            return Err(self.error("trailing characters"));
        }
        Ok(())
    }

    /// Checks the value at the cursor and moves past it, building nothing. `depth` counts the enclosing arrays and objects.
    pub fn skip_value(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'{') => {
                self.nested(depth)?;
                self.pos += 1;
                self.skip_whitespace();
                if self.eat(b'}') {
                    return Ok(Kind::Object);
                }
                loop {
                    self.skip_whitespace();
                    if self.peek() != Some(b'"') {
                        return Err(self.error("expected a member name"));
                    }
                    self.skip_string()?;
                    self.expect(b':', "expected `:`")?;
                    self.skip_value(depth + 1)?;
                    self.skip_whitespace();
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b'}') {
                        return Ok(Kind::Object);
                    }
                    return Err(self.error("expected `,` or `}`"));
                }
            }
            Some(b'[') => {
                self.nested(depth)?;
                self.pos += 1;
                self.skip_whitespace();
                if self.eat(b']') {
                    return Ok(Kind::Array);
                }
                loop {
                    self.skip_value(depth + 1)?;
                    self.skip_whitespace();
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b']') {
                        return Ok(Kind::Array);
                    }
                    return Err(self.error("expected `,` or `]`"));
                }
            }
            Some(b'"') => self.skip_string().map(|_| Kind::String),
            Some(b'n') => self.word(b"null").map(|()| Kind::Null),
            Some(b't') => self.word(b"true").map(|()| Kind::Bool),
            Some(b'f') => self.word(b"false").map(|()| Kind::Bool),
            _ => self.number().map(|_| Kind::Number),
        }
    }

    /// Consumes `word` (`null`, `true`, `false`), or fails.
    fn word(&mut self, word: &[u8]) -> Result<(), SyntaxError> {
        if !self.bytes[self.pos..].starts_with(word) {
            return Err(self.error("expected a value"));
        }
        self.pos += word.len();
        Ok(())
    }

    /// Reads the value at the cursor as a tree.
    pub fn parse_value(&mut self, depth: usize) -> Result<Node<'a>, SyntaxError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'{') => {
                self.nested(depth)?;
                self.pos += 1;
                let mut members: Vec<(Cow<'a, str>, Node<'a>)> = Vec::new();
                let mut index: Option<std::collections::HashMap<Cow<'a, str>, usize>> = None;
                self.skip_whitespace();
                if self.eat(b'}') {
                    return Ok(Node::Object(members));
                }
                loop {
                    self.skip_whitespace();
                    if self.peek() != Some(b'"') {
                        return Err(self.error("expected a member name"));
                    }
                    let name = self.string()?;
                    self.expect(b':', "expected `:`")?;
                    let value = self.parse_value(depth + 1)?;
                    insert_member(&mut members, &mut index, name, value);
                    self.skip_whitespace();
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b'}') {
                        return Ok(Node::Object(members));
                    }
                    return Err(self.error("expected `,` or `}`"));
                }
            }
            Some(b'[') => {
                self.nested(depth)?;
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_whitespace();
                if self.eat(b']') {
                    return Ok(Node::Array(items));
                }
                loop {
                    items.push(self.parse_value(depth + 1)?);
                    self.skip_whitespace();
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b']') {
                        return Ok(Node::Array(items));
                    }
                    return Err(self.error("expected `,` or `]`"));
                }
            }
            Some(b'"') => self.string().map(Node::String),
            _ => self.scalar(),
        }
    }

    pub fn nested(&self, depth: usize) -> Result<(), SyntaxError> {
        if depth >= MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        Ok(())
    }

    /// `null`, `true`, `false` or a number.
    fn scalar(&mut self) -> Result<Node<'a>, SyntaxError> {
        let (word, node): (&[u8], Node<'a>) = match self.peek() {
            Some(b'n') => (b"null", Node::Null),
            Some(b't') => (b"true", Node::Bool(true)),
            Some(b'f') => (b"false", Node::Bool(false)),
            _ => return self.number().map(|n| Node::Number(Cow::Borrowed(n))),
        };
        self.word(word).map(|()| node)
    }

    /// A number by RFC 8259's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<&'a str, SyntaxError> {
        let start = self.pos;
        self.eat(b'-');
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a value")),
        }
        if self.eat(b'.') {
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("expected a digit after `.`"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        Ok(&self.text[start..self.pos])
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    /// A string literal at the cursor (on its `"`): borrowed when it holds no escape.
    /// The string at `self.pos` when it has no escape (its text is its bytes), else `None`
    /// with nothing taken: the common case without building a `Cow` (whose return through
    /// memory cost more than the scan of a short member name).
    #[inline]
    pub fn plain_string(&mut self) -> Option<&'a str> {
        let start = self.pos + 1;
        let at = string_stop(self.bytes, start);
        if self.bytes.get(at) != Some(&b'"') {
            return None;
        }
        let s = self.text.get(start..at)?;
        self.pos = at + 1;
        Some(s)
    }

    /// Consumes `"name"` when the string at the cursor is exactly `name` without escapes.
    pub fn eat_quoted(&mut self, name: &[u8]) -> bool {
        let end = self.pos + 1 + name.len();
        // Compared byte by byte in line: member names are short, and a `memcmp` call per
        // member cost more than the comparison.
        if self.bytes.get(self.pos) == Some(&b'"')
            && self
                .bytes
                .get(self.pos + 1..end)
                .is_some_and(|raw| raw.iter().zip(name).all(|(a, b)| a == b))
            && self.bytes.get(end) == Some(&b'"')
        {
            self.pos = end + 1;
            return true;
        }
        false
    }

    pub fn string(&mut self) -> Result<Cow<'a, str>, SyntaxError> {
        self.pos += 1;
        let start = self.pos;
        // The common case: no escape before the closing quote.
        self.pos = string_stop(self.bytes, start);
        if self.bytes.get(self.pos) == Some(&b'"') {
            let s = &self.text[start..self.pos];
            self.pos += 1;
            return Ok(Cow::Borrowed(s));
        }
        self.escaped_string(start)
    }

    /// The rest of a string from `self.pos`, where an escape, a control character or the
    /// end of the text stopped [`Scanner::string`].
    #[cold]
    fn escaped_string(&mut self, start: usize) -> Result<Cow<'a, str>, SyntaxError> {
        let mut out = String::with_capacity(self.pos - start + 16);
        out.push_str(&self.text[start..self.pos]);
        self.unescape(&mut out)?;
        Ok(Cow::Owned(out))
    }

    /// Checks the string at the cursor and moves past it; whether it holds an escape (then
    /// its text is not its bytes between the quotes). Builds nothing.
    #[inline]
    pub fn skip_string(&mut self) -> Result<bool, SyntaxError> {
        self.pos += 1;
        self.pos = string_stop(self.bytes, self.pos);
        if self.bytes.get(self.pos) == Some(&b'"') {
            self.pos += 1;
            return Ok(false);
        }
        self.skip_escaped()
    }

    /// The rest of a string that [`Scanner::skip_string`] found an escape (or an error) in.
    #[cold]
    fn skip_escaped(&mut self) -> Result<bool, SyntaxError> {
        self.unescape(&mut ())?;
        Ok(true)
    }

    /// Appends the text of the string at the cursor to `out`, moving past it.
    pub fn string_into(&mut self, out: &mut String) -> Result<(), SyntaxError> {
        self.pos += 1;
        self.unescape(out)
    }

    /// Reads the rest of a string from the cursor (inside the quotes) up to and past its
    /// closing quote, appending its text to `out`.
    fn unescape(&mut self, out: &mut impl Unescaped) -> Result<(), SyntaxError> {
        loop {
            let run = self.pos;
            self.pos = string_stop(self.bytes, self.pos);
            out.push_str(&self.text[run..self.pos]);
            match self.bytes.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(&e) = self.bytes.get(self.pos) else {
                        return Err(self.error("unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.unicode_escape()?),
                        _ => {
                            self.pos -= 1;
                            return Err(self.error("invalid escape"));
                        }
                    }
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    /// The character of a `\uXXXX` escape (after the `u`), a surrogate pair taking two.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !(self.eat(b'\\') && self.eat(b'u')) {
                    return Err(self.error("lone leading surrogate"));
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone leading surrogate"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone trailing surrogate")),
            c => c,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid escape"))
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let Some(digits) = self.bytes.get(self.pos..self.pos + 4) else {
            return Err(self.error("invalid escape"));
        };
        let mut v = 0;
        for &d in digits {
            let Some(x) = (d as char).to_digit(16) else {
                return Err(self.error("invalid escape"));
            };
            v = v * 16 + x;
        }
        self.pos += 4;
        Ok(v)
    }
}

/// Where [`Scanner::unescape`] puts a string's text: a `String`, or nowhere (`()`, to check
/// a string without building it).
trait Unescaped {
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
}

impl Unescaped for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }

    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

impl Unescaped for () {
    fn push_str(&mut self, _: &str) {}

    fn push(&mut self, _: char) {}
}

/// Adds a member; a repeated name replaces the value where the name first appeared.
fn insert_member<'a>(
    members: &mut Vec<(Cow<'a, str>, Node<'a>)>,
    index: &mut Option<std::collections::HashMap<Cow<'a, str>, usize>>,
    name: Cow<'a, str>,
    value: Node<'a>,
) {
    if members.len() >= LINEAR_DEDUP_LIMIT && index.is_none() {
        *index = Some(
            members
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect(),
        );
    }
    let existing = match index {
        Some(map) => map.get(&name).copied(),
        None => members.iter().position(|(k, _)| *k == name),
    };
    match existing {
        Some(i) => members[i].1 = value,
        None => {
            if let Some(map) = index {
                map.insert(name.clone(), members.len());
            }
            members.push((name, value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Node<'_>, SyntaxError> {
        let mut s = Scanner::new(text);
        let v = s.parse_value(0)?;
        s.expect_end()?;
        Ok(v)
    }

    fn compact(text: &str) -> String {
        let mut out = String::new();
        parse(text).unwrap().write_compact(&mut out);
        out
    }

    #[test]
    fn numbers_keep_their_text() {
        assert_eq!(
            parse("12345678901234567890.123456789").unwrap(),
            Node::Number("12345678901234567890.123456789".into())
        );
        assert_eq!(parse(" -0 ").unwrap(), Node::Number("-0".into()));
        for bad in ["01", "1.", ".5", "1e", "-", "+1", "1e+", "NaN", "0x10"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn compact_text_is_jacksons() {
        assert_eq!(
            compact(
                r#"{ "a" : [1.0, 1E+2, -0, 12345678901234567890123, 1e300], "b": "x\"\u0001\n" }"#
            ),
            r#"{"a":[1.0,100.0,0,12345678901234567890123,1.0E300],"b":"x\"\u0001\n"}"#
        );
        // A repeated name keeps its first place and its last value.
        assert_eq!(compact(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        let many: Vec<String> = (0..100).map(|i| format!("\"k{}\":{i}", i % 40)).collect();
        let text = format!("{{{}}}", many.join(","));
        let Node::Object(members) = parse(&text).unwrap() else {
            panic!()
        };
        assert_eq!(members.len(), 40);
        assert_eq!(members[0], ("k0".into(), Node::Number("80".into())));
    }

    #[test]
    fn strings_unescape() {
        assert_eq!(
            parse(r#""a\u00e9\ud83d\ude00\/\t""#).unwrap(),
            Node::String("aé😀/\t".into())
        );
        for bad in [
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\x""#,
            "\"a\u{1}\"",
            r#""open"#,
            r#""\u12""#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_and_limits() {
        let e = parse(r#"{"a": 1,}"#).unwrap_err();
        assert_eq!(e.to_string(), "expected a member name at column 9");
        assert!(parse("[1] x").is_err());
        assert!(parse(&"[".repeat(200)).is_err());
        assert!(parse(&format!("{}{}", "[".repeat(100), "]".repeat(100))).is_ok());
        let mut s = Scanner::new(r#"{"x": [1, {"y": "z\n"}], "n": null} "#);
        assert_eq!(s.skip_value(0).unwrap(), Kind::Object);
        s.expect_end().unwrap();
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_serde_json(text in "[\\[\\]{}\":,0-9a-z.eE+\\- \\\\]{0,24}") {
            // serde_json rejects a double that overflows; Jackson (and this scanner) read it.
            let long_exponent = text.as_bytes().windows(4).any(|w| {
                matches!(w[0], b'e' | b'E') && w[1..].iter().all(|b| b.is_ascii_digit() || *b == b'+' || *b == b'-')
            });
            proptest::prop_assume!(!long_exponent);
            let ours = parse(&text).is_ok();
            let serde = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            proptest::prop_assert_eq!(ours, serde, "{}", text);
            let mut s = Scanner::new(&text);
            let skipped = s.skip_value(0).and_then(|_| s.expect_end()).is_ok();
            proptest::prop_assert_eq!(skipped, serde, "{}", text);
        }
    }
}

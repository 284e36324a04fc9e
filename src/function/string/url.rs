//! URL and address functions as Flink runs them: URL_ENCODE and URL_DECODE
//! (`java.net.URLEncoder`/`URLDecoder` with UTF-8, so a space is `+`), PARSE_URL (the parts
//! `java.net.URL` reports), INET_ATON and INET_NTOA (IPv4 text ↔ number, MySQL's short forms
//! included). Malformed input gives NULL.

use arrow_array::{Array, ArrayRef};

use super::{build_strings, resolve_params, strs};
use crate::function::{EvalContext, EvalError, FunctionDef, Signature, string_type};
use crate::types::DataType;

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("URL_ENCODE", |a| resolve_one("URL_ENCODE", a), url_encode),
    def!("URL_DECODE", |a| resolve_one("URL_DECODE", a), url_decode),
    def!("PARSE_URL", resolve_parse_url, parse_url),
    def!("INET_ATON", resolve_inet_aton, inet_aton),
    def!("INET_NTOA", resolve_inet_ntoa, inet_ntoa),
];

fn resolve_one(name: &str, args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params(name, args, "s", 1)?;
    Ok(Signature::new(params, string_type(true)))
}

/// `URLEncoder.encode(s, UTF-8)`: letters, digits and `.-*_` stay, a space becomes `+`, every
/// other byte of the UTF-8 form becomes `%XX`.
fn url_encode(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    build_strings(args, ctx.num_rows, |i, out| {
        for &b in s.value(i).as_bytes() {
            match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    out.push('%');
                    out.push(HEX[(b >> 4) as usize] as char);
                    out.push(HEX[(b & 15) as usize] as char);
                }
            }
        }
        Ok(true)
    })
}

/// `URLDecoder.decode(s, UTF-8)`: `+` is a space, `%XX` a byte; NULL for a broken escape or
/// bytes that are not UTF-8.
fn url_decode(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let mut bytes = Vec::new();
    build_strings(args, ctx.num_rows, |i, out| {
        bytes.clear();
        let text = s.value(i).as_bytes();
        let mut at = 0;
        while at < text.len() {
            match text[at] {
                b'+' => bytes.push(b' '),
                b'%' => {
                    let hex = |b: u8| (b as char).to_digit(16);
                    let (Some(hi), Some(lo)) = (
                        text.get(at + 1).copied().and_then(hex),
                        text.get(at + 2).copied().and_then(hex),
                    ) else {
                        return Ok(false);
                    };
                    bytes.push((hi * 16 + lo) as u8);
                    at += 2;
                }
                b => bytes.push(b),
            }
            at += 1;
        }
        match std::str::from_utf8(&bytes) {
            Ok(decoded) => {
                out.push_str(decoded);
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    })
}

fn resolve_parse_url(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("PARSE_URL", args, "sss", 2)?;
    Ok(Signature::new(params, string_type(true)))
}

/// The parts of `scheme://[userinfo@]host[:port]/path?query#ref` that `java.net.URL` names.
struct Url<'a> {
    protocol: &'a str,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    reference: Option<&'a str>,
}

/// The schemes `java.net.URL` has handlers for; any other is a MalformedURLException.
const PROTOCOLS: &[&str] = &["http", "https", "ftp", "file", "jar", "mailto"];

fn split_url(url: &str) -> Option<Url<'_>> {
    let (rest, reference) = match url.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (url, None),
    };
    let (protocol, rest) = rest.split_once(':')?;
    if !PROTOCOLS.iter().any(|p| p.eq_ignore_ascii_case(protocol)) {
        return None;
    }
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(slash) => (Some(&after[..slash]), &after[slash..]),
            None => (Some(after), ""),
        },
        None => (None, rest),
    };
    Some(Url {
        protocol,
        authority,
        path,
        query,
        reference,
    })
}

/// PARSE_URL(url, part [, key]): HOST, PATH, QUERY (or one query parameter's value), REF,
/// PROTOCOL, FILE, AUTHORITY or USERINFO; NULL when the URL is malformed or lacks the part.
fn parse_url(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (urls, parts) = (strs(&args[0]), strs(&args[1]));
    let keys = args.get(2).map(strs);
    build_strings(args, ctx.num_rows, |i, out| {
        let Some(url) = split_url(urls.value(i)) else {
            return Ok(false);
        };
        let userinfo = url
            .authority
            .and_then(|a| a.rsplit_once('@').map(|(u, _)| u));
        let host = url.authority.map(|a| {
            let host_port = a.rsplit_once('@').map_or(a, |(_, h)| h);
            match host_port.rsplit_once(':') {
                Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
                _ => host_port,
            }
        });
        let part = parts.value(i);
        if keys.is_some() && part != "QUERY" {
            // A key only makes sense for QUERY.
            return Ok(false);
        }
        let value = match part {
            "HOST" => Some(host.unwrap_or("")),
            "PATH" => Some(url.path),
            "QUERY" => match keys {
                None => url.query,
                Some(k) => {
                    let key = k.value(i);
                    url.query.and_then(|q| {
                        q.split('&')
                            .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
                    })
                }
            },
            "REF" => url.reference,
            "PROTOCOL" => {
                // java.net.URL reports the scheme in lower case.
                out.push_str(&url.protocol.to_ascii_lowercase());
                return Ok(true);
            }
            "AUTHORITY" => url.authority,
            "USERINFO" => userinfo,
            "FILE" => {
                out.push_str(url.path);
                if let Some(q) = url.query {
                    out.push('?');
                    out.push_str(q);
                }
                return Ok(true);
            }
            _ => None,
        };
        match value {
            Some(v) => {
                out.push_str(v);
                Ok(true)
            }
            None => Ok(false),
        }
    })
}

fn resolve_inet_aton(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("INET_ATON", args, "s", 1)?;
    Ok(Signature::new(
        params,
        DataType::nullable(crate::types::TypeKind::BigInt),
    ))
}

/// INET_ATON: `a.b.c.d` as a number; `a.b` is `a.0.0.b` and `a.b.c` is `a.b.0.c`, as in
/// MySQL; anything else (spaces, parts past 255) is NULL.
fn inet_aton(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let value = |text: &str| -> Option<i64> {
        let parts: Vec<i64> = text
            .split('.')
            .map(|p| {
                (!p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse::<i64>().ok())
                    .flatten()
                    .filter(|v| *v <= 255)
            })
            .collect::<Option<_>>()?;
        let [a, b, c, d] = match parts.as_slice() {
            [d] => [0, 0, 0, *d],
            [a, d] => [*a, 0, 0, *d],
            [a, b, d] => [*a, *b, 0, *d],
            [a, b, c, d] => [*a, *b, *c, *d],
            _ => return None,
        };
        Some((a << 24) | (b << 16) | (c << 8) | d)
    };
    let out: arrow_array::Int64Array = (0..s.len())
        .map(|i| (!s.is_null(i)).then(|| value(s.value(i))).flatten())
        .collect();
    Ok(std::sync::Arc::new(out))
}

fn resolve_inet_ntoa(args: &[DataType]) -> Result<Signature, String> {
    let [n] = args else {
        return Err("INET_NTOA expects one integer".into());
    };
    if !n.kind.is_integer() {
        return Err(format!("INET_NTOA expects an integer, got {}", n.kind));
    }
    Ok(Signature::new(
        vec![DataType {
            kind: crate::types::TypeKind::BigInt,
            nullable: n.nullable,
        }],
        string_type(true),
    ))
}

/// INET_NTOA: a number from 0 to 2^32 - 1 as `a.b.c.d`, NULL outside that range.
fn inet_ntoa(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    use arrow_array::cast::AsArray;
    let n = args[0].as_primitive::<arrow_array::types::Int64Type>();
    build_strings(args, ctx.num_rows, |i, out| {
        let Ok(v) = u32::try_from(n.value(i)) else {
            return Ok(false);
        };
        let [a, b, c, d] = v.to_be_bytes();
        out.push_str(&format!("{a}.{b}.{c}.{d}"));
        Ok(true)
    })
}

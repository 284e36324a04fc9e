//! Tests of the string functions.

use super::*;
use arrow_array::{BooleanArray, Int32Array};

fn ctx(n: usize) -> EvalContext {
    EvalContext::for_tests(n)
}

fn s(values: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

/// A literal string argument: the same value on every row.
fn lit(v: &str, n: usize) -> ArrayRef {
    Arc::new(StringArray::from(vec![Some(v); n]))
}

fn i(values: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

fn run(name: &str, args: &[ArrayRef]) -> Result<ArrayRef, EvalError> {
    let f = crate::function::lookup(name).expect("function registered");
    let n = args.first().map_or(1, |a| a.len());
    (f.kernel)(args, &ctx(n), &DataType::string())
}

fn strings(a: &ArrayRef) -> Vec<Option<String>> {
    a.as_string::<i32>()
        .iter()
        .map(|v| v.map(str::to_string))
        .collect()
}

fn call_s(name: &str, args: &[ArrayRef]) -> Vec<Option<String>> {
    strings(&run(name, args).unwrap())
}

fn call_i(name: &str, args: &[ArrayRef]) -> Vec<Option<i32>> {
    let out = run(name, args).unwrap();
    out.as_any()
        .downcast_ref::<Int32Array>()
        .unwrap()
        .iter()
        .collect()
}

fn call_b(name: &str, args: &[ArrayRef]) -> Vec<Option<bool>> {
    let out = run(name, args).unwrap();
    out.as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap()
        .iter()
        .collect()
}

fn o(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn trims() {
    let input = s(&[Some("  ab  "), Some(""), None, Some("xxaxx")]);
    assert_eq!(
        call_s("TRIM", std::slice::from_ref(&input)),
        vec![o("ab"), o(""), None, o("xxaxx")]
    );
    assert_eq!(
        call_s("LTRIM", std::slice::from_ref(&input)),
        vec![o("ab  "), o(""), None, o("xxaxx")]
    );
    assert_eq!(
        call_s("RTRIM", std::slice::from_ref(&input)),
        vec![o("  ab"), o(""), None, o("xxaxx")]
    );
    assert_eq!(
        call_s("TRIM", &[input.clone(), lit("x ", 4)]),
        vec![o("ab"), o(""), None, o("a")]
    );
    assert_eq!(
        call_s("BTRIM", &[s(&[Some("éaé")]), lit("é", 1)]),
        vec![o("a")]
    );
    let sig = resolve_trim(&[DataType::not_null(TypeKind::Char(5))]).unwrap();
    assert_eq!(sig.return_type, DataType::not_null(TypeKind::VarChar(5)));
}

#[test]
fn substrings() {
    let v = s(&[
        Some("Hello"),
        Some("Hello"),
        Some("Hello"),
        Some("Hello"),
        Some("héllo"),
        Some(""),
        None,
    ]);
    let start = i(&[
        Some(2),
        Some(0),
        Some(-3),
        Some(10),
        Some(2),
        Some(1),
        Some(1),
    ]);
    assert_eq!(
        call_s("SUBSTRING", &[v.clone(), start.clone()]),
        vec![
            o("ello"),
            o("Hello"),
            o("llo"),
            o(""),
            o("éllo"),
            o(""),
            None
        ]
    );
    let len = i(&[
        Some(2),
        Some(2),
        Some(-1),
        Some(1),
        Some(1),
        Some(3),
        Some(1),
    ]);
    assert_eq!(
        call_s("SUBSTR", &[v, start, len]),
        vec![o("el"), o("He"), None, o(""), o("é"), o(""), None]
    );
    assert_eq!(
        call_s("SUBSTRING", &[s(&[Some("abc")]), i(&[Some(-5)])]),
        vec![o("")]
    );
    let sig = resolve_substring(&[
        DataType::not_null(TypeKind::VarChar(10)),
        DataType::not_null(TypeKind::Int),
    ])
    .unwrap();
    assert_eq!(sig.return_type, DataType::nullable(TypeKind::VarChar(10)));
}

#[test]
fn left_right() {
    let v = s(&[Some("héllo"), Some("héllo"), Some("ab"), None]);
    let n = i(&[Some(2), Some(-1), Some(5), Some(1)]);
    assert_eq!(
        call_s("LEFT", &[v.clone(), n.clone()]),
        vec![o("hé"), o(""), o("ab"), None]
    );
    assert_eq!(
        call_s("RIGHT", &[v, n]),
        vec![o("lo"), o(""), o("ab"), None]
    );
}

#[test]
fn concat_ws_skips_nulls() {
    let sep = s(&[Some(","), None, Some("-")]);
    let a = s(&[Some("a"), Some("a"), None]);
    let b = s(&[None, Some("b"), None]);
    let c = s(&[Some("c"), Some("c"), Some("")]);
    assert_eq!(
        call_s("CONCAT_WS", &[sep, a, b, c]),
        vec![o("a,c"), None, o("")]
    );
}

#[test]
fn replace_repeat_reverse() {
    let v = s(&[Some("hello world"), Some("abc"), None]);
    assert_eq!(
        call_s("REPLACE", &[v.clone(), lit("o", 3), lit("0", 3)]),
        vec![o("hell0 w0rld"), o("abc"), None]
    );
    assert_eq!(
        call_s("REPLACE", &[s(&[Some("abc")]), lit("", 1), lit("-", 1)]),
        vec![o("-a-b-c-")]
    );
    assert_eq!(
        call_s(
            "REPEAT",
            &[
                s(&[Some("ab"), Some("ab"), Some("")]),
                i(&[Some(3), Some(-1), Some(5)])
            ]
        ),
        vec![o("ababab"), o(""), o("")]
    );
    assert!(run("REPEAT", &[s(&[Some("ab")]), i(&[Some(i64::MAX)])]).is_err());
    assert_eq!(
        call_s("REVERSE", &[s(&[Some("héllo"), Some(""), None])]),
        vec![o("olléh"), o(""), None]
    );
}

#[test]
fn pads() {
    let v = s(&[
        Some("hi"),
        Some("hi"),
        Some("hi"),
        Some("hello"),
        Some("hi"),
    ]);
    let n = i(&[Some(4), Some(5), Some(-1), Some(3), Some(0)]);
    let p = s(&[Some("??"), Some("ab"), Some("x"), Some("x"), Some("x")]);
    assert_eq!(
        call_s("LPAD", &[v.clone(), n.clone(), p.clone()]),
        vec![o("??hi"), o("abahi"), None, o("hel"), o("")]
    );
    assert_eq!(
        call_s("RPAD", &[v, n, p]),
        vec![o("hi??"), o("hiaba"), None, o("hel"), o("")]
    );
    assert_eq!(
        call_s("LPAD", &[s(&[Some("a")]), i(&[Some(3)]), s(&[Some("")])]),
        vec![None]
    );
    assert_eq!(
        call_s("RPAD", &[s(&[Some("é")]), i(&[Some(3)]), s(&[Some("ü")])]),
        vec![o("éüü")]
    );
}

#[test]
fn initcap_words() {
    assert_eq!(
        call_s(
            "INITCAP",
            &[s(&[
                Some("hello wORLD-foo 1st"),
                Some(""),
                None,
                Some("éa bé")
            ])]
        ),
        vec![o("Hello World-Foo 1st"), o(""), None, o("éA Bé")]
    );
}

#[test]
fn split_index_tokens() {
    let v = s(&[
        Some("a,b,,c"),
        Some("a,b,,c"),
        Some("a,b,,c"),
        Some("a,b"),
        Some(""),
        Some("a b"),
    ]);
    let sep = s(&[
        Some(","),
        Some(","),
        Some(","),
        Some(","),
        Some(","),
        Some(""),
    ]);
    let idx = i(&[Some(1), Some(2), Some(4), Some(-1), Some(0), Some(1)]);
    assert_eq!(
        call_s("SPLIT_INDEX", &[v, sep, idx]),
        vec![o("b"), o(""), None, None, None, o("b")]
    );
    assert_eq!(
        call_s(
            "SPLIT_INDEX",
            &[s(&[Some("a|b")]), i(&[Some(124)]), i(&[Some(1)])]
        ),
        vec![o("b")]
    );
}

#[test]
fn positions() {
    let hay = s(&[Some("héllo"), Some("abc"), Some("abc"), None, Some("")]);
    let needle = s(&[Some("l"), Some("x"), Some(""), Some("a"), Some("")]);
    assert_eq!(
        call_i("POSITION", &[needle.clone(), hay.clone()]),
        vec![Some(3), Some(0), Some(1), None, Some(1)]
    );
    let from = i(&[Some(4), Some(1), Some(3), Some(1), Some(1)]);
    assert_eq!(
        call_i("LOCATE", &[needle, hay, from]),
        vec![Some(4), Some(0), Some(1), None, Some(1)]
    );
    assert_eq!(
        call_i("LOCATE", &[lit("a", 1), lit("abc", 1), i(&[Some(-3)])]),
        vec![Some(1)]
    );
    assert_eq!(
        call_i("INSTR", &[lit("abcabc", 1), lit("bc", 1)]),
        vec![Some(2)]
    );
    assert_eq!(
        call_i(
            "INSTR",
            &[lit("abcabc", 1), lit("bc", 1), i(&[Some(1)]), i(&[Some(2)])]
        ),
        vec![Some(5)]
    );
    assert_eq!(
        call_i(
            "INSTR",
            &[
                lit("abcabc", 1),
                lit("bc", 1),
                i(&[Some(-1)]),
                i(&[Some(1)])
            ]
        ),
        vec![Some(5)]
    );
    assert_eq!(
        call_i(
            "INSTR",
            &[
                lit("abcabc", 1),
                lit("bc", 1),
                i(&[Some(-1)]),
                i(&[Some(2)])
            ]
        ),
        vec![Some(2)]
    );
    assert_eq!(
        call_i("INSTR", &[lit("abc", 1), lit("b", 1), i(&[Some(0)])]),
        vec![Some(0)]
    );
    assert!(
        run(
            "INSTR",
            &[lit("abc", 1), lit("b", 1), i(&[Some(1)]), i(&[Some(0)])]
        )
        .is_err()
    );
}

#[test]
fn ascii_and_chr() {
    assert_eq!(
        call_i("ASCII", &[s(&[Some("abc"), Some(""), None, Some("é")])]),
        vec![Some(97), Some(0), None, Some(-61)]
    );
    assert_eq!(
        call_s(
            "CHR",
            &[i(&[Some(65), Some(-1), None, Some(256 + 97), Some(233)])]
        ),
        vec![o("A"), o(""), None, o("a"), o("é")]
    );
}

#[test]
fn regexps() {
    let v = s(&[Some("foothebar"), Some("xyz"), None, Some("foothebar")]);
    let p = s(&[
        Some("foo(.*?)(bar)"),
        Some("foo(.*?)(bar)"),
        Some("a"),
        Some("("),
    ]);
    assert_eq!(
        call_b("REGEXP", &[v.clone(), p.clone()]),
        vec![Some(true), Some(false), None, Some(false)]
    );
    assert_eq!(
        call_b("REGEXP", &[lit("abc", 1), lit("", 1)]),
        vec![Some(false)]
    );
    assert_eq!(
        call_s("REGEXP_EXTRACT", &[v.clone(), p.clone()]),
        vec![o("foothebar"), None, None, None]
    );
    let g = i(&[Some(2), Some(1), Some(1), Some(1)]);
    assert_eq!(
        call_s("REGEXP_EXTRACT", &[v.clone(), p.clone(), g]),
        vec![o("bar"), None, None, None]
    );
    let g = i(&[Some(3), Some(1), Some(1), Some(-1)]);
    assert_eq!(
        call_s("REGEXP_EXTRACT", &[v.clone(), p, g]),
        vec![None, None, None, None]
    );
    let r = lit("$1", 4);
    assert_eq!(
        call_s(
            "REGEXP_REPLACE",
            &[v, s(&[Some("o+"), Some("y"), Some("a"), Some("[")]), r]
        ),
        vec![o("f$1thebar"), o("x$1z"), None, None]
    );
    assert_eq!(
        call_s(
            "REGEXP_REPLACE",
            &[lit("abc", 1), lit("x*", 1), lit("-", 1)]
        ),
        vec![o("-a-b-c-")]
    );
}

#[test]
fn like_patterns() {
    let v = s(&[
        Some("abc"),
        Some("abc"),
        Some("a_c"),
        Some("abc"),
        None,
        Some("a\nc"),
        Some("a\nc"),
    ]);
    let p = s(&[
        Some("a%"),
        Some("_b_"),
        Some("a\\_c"),
        Some("A%"),
        Some("%"),
        Some("a%c"),
        Some("a_c"),
    ]);
    assert_eq!(
        call_b("LIKE", &[v.clone(), p.clone()]),
        vec![
            Some(true),
            Some(true),
            Some(false),
            Some(false),
            None,
            Some(true),
            Some(false)
        ]
    );
    let esc = lit("\\", 7);
    assert_eq!(
        call_b("LIKE", &[v, p, esc]),
        vec![
            Some(true),
            Some(true),
            Some(true),
            Some(false),
            None,
            Some(true),
            Some(false)
        ]
    );
    assert_eq!(
        call_b("LIKE", &[lit("a.c", 1), lit("a.c", 1)]),
        vec![Some(true)]
    );
    assert_eq!(
        call_b("LIKE", &[lit("abc", 1), lit("a.c", 1)]),
        vec![Some(false)]
    );
    assert!(run("LIKE", &[lit("abc", 1), lit("a!", 1), lit("!", 1)]).is_err());
    assert!(run("LIKE", &[lit("abc", 1), lit("a!b", 1), lit("!", 1)]).is_err());
    assert!(run("LIKE", &[lit("abc", 1), lit("a", 1), lit("!!", 1)]).is_err());
    assert_eq!(
        call_b("LIKE", &[lit("ü%", 1), lit("ü!%", 1), lit("!", 1)]),
        vec![Some(true)]
    );
}

#[test]
fn similar_to_patterns() {
    let v = lit("abc", 1);
    let t = |p: &str| call_b("SIMILAR TO", &[v.clone(), lit(p, 1)])[0];
    assert_eq!(t("abc"), Some(true));
    assert_eq!(t("a%"), Some(true));
    assert_eq!(t("(abc|xyz)"), Some(true));
    assert_eq!(t("a[a-c]+"), Some(true));
    assert_eq!(t("a[^b]c"), Some(false));
    assert_eq!(t("ab"), Some(false));
    // `.` is a wildcard in Flink (Calcite passes it to the Java regex).
    assert_eq!(t("a.c"), Some(true));
    assert_eq!(t("_b_"), Some(true));
    assert!(run("SIMILAR TO", &[v, lit("a[bc", 1)]).is_err());
}

#[test]
fn hashes() {
    let v = s(&[Some(""), Some("abc"), None]);
    assert_eq!(
        call_s("MD5", std::slice::from_ref(&v)),
        vec![
            o("d41d8cd98f00b204e9800998ecf8427e"),
            o("900150983cd24fb0d6963f7d28e17f72"),
            None
        ]
    );
    assert_eq!(
        call_s("SHA1", std::slice::from_ref(&v))[1],
        o("a9993e364706816aba3e25717850c26c9cd0d89d")
    );
    assert_eq!(
        call_s("SHA256", std::slice::from_ref(&v))[1],
        o("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
    assert_eq!(
        call_s("SHA2", &[v.clone(), i(&[Some(256), Some(256), Some(256)])]),
        call_s("SHA256", std::slice::from_ref(&v))
    );
    assert_eq!(
        call_s("SHA2", &[v, i(&[Some(1), Some(224), Some(1)])])[0],
        None
    );
    let bin: ArrayRef = Arc::new(BinaryArray::from(vec![Some(&b"abc"[..])]));
    assert_eq!(
        call_s("MD5", &[bin]),
        vec![o("900150983cd24fb0d6963f7d28e17f72")]
    );
    let sig = resolve_md5(&[DataType::not_null(TypeKind::VarChar(3))]).unwrap();
    assert_eq!(sig.return_type, DataType::not_null(TypeKind::Char(32)));
}

#[test]
fn base64() {
    let v = s(&[
        Some(""),
        Some("f"),
        Some("fo"),
        Some("foo"),
        Some("héllo"),
        None,
    ]);
    let enc = call_s("TO_BASE64", &[v]);
    assert_eq!(
        enc,
        vec![o(""), o("Zg=="), o("Zm8="), o("Zm9v"), o("aMOpbGxv"), None]
    );
    let back = run("FROM_BASE64", &[Arc::new(StringArray::from(enc))]).unwrap();
    assert_eq!(
        strings(&back),
        vec![o(""), o("f"), o("fo"), o("foo"), o("héllo"), None]
    );
    assert_eq!(call_s("FROM_BASE64", &[lit("Zm8", 1)]), vec![o("fo")]);
    assert!(run("FROM_BASE64", &[lit("Z", 1)]).is_err());
    assert!(run("FROM_BASE64", &[lit("Zm9v!", 1)]).is_err());
    assert!(run("FROM_BASE64", &[lit("Zg=", 1)]).is_err());
    assert!(run("FROM_BASE64", &[lit("Zg==Zg==", 1)]).is_err());
}

#[test]
fn regex_cache_reuses_and_switches() {
    let v = s(&[Some("a1"), Some("b2"), Some("c3")]);
    let p = s(&[Some("[0-9]"), Some("[0-9]"), Some("[a-z]")]);
    assert_eq!(
        call_s("REGEXP_EXTRACT", &[v, p]),
        vec![o("1"), o("2"), o("c")]
    );
}

#[test]
fn resolvers_reject_bad_arguments() {
    assert!(resolve_substring(&[DataType::string()]).is_err());
    assert!(resolve_substring(&[DataType::string(), DataType::string()]).is_err());
    assert!(resolve_like(&[DataType::string(), DataType::nullable(TypeKind::Int)]).is_err());
    let sig = resolve_like(&[
        DataType::not_null(TypeKind::VarChar(3)),
        DataType::not_null(TypeKind::Char(2)),
    ])
    .unwrap();
    assert_eq!(sig.return_type, DataType::not_null(TypeKind::Boolean));
}

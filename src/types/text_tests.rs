//! Tests of the text parser and writers: every type read and written as Flink does.

use super::*;
use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{Int32Array, StructArray};

#[test]
fn iso_dates_read_in_place_agree_with_the_general_parser() {
    for s in [
        "2024-01-31",
        "2024-02-29",
        "2023-02-29",
        "2023-04-31",
        "2023-13-01",
        "2023-00-10",
        "2023-01-00",
        "0000-01-01",
        "9999-12-31",
        "1970-01-01",
    ] {
        assert_eq!(parse_iso_date(s), parse_date(s), "{s}");
    }
    assert_eq!(parse_iso_date("1970-01-02"), Some(1));
    for s in [
        "2023-1-01",
        "2023-01-1",
        "2023/01/01",
        "+023-01-01",
        "2023-01-01 ",
    ] {
        assert_eq!(parse_iso_date(s), None, "{s}");
    }
}

fn dt(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

fn utc() -> SessionZone {
    SessionZone::utc()
}

fn fmt_one(array: ArrayRef, kind: TypeKind) -> Vec<Option<String>> {
    let out = format_column(&array, &dt(kind), &utc());
    out.iter().map(|s| s.map(str::to_string)).collect()
}

#[test]
fn java_doubles() {
    let cases: &[(f64, &str)] = &[
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1.0e10, "1.0E10"),
        (1.234e-5, "1.234E-5"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (9999999.0, "9999999.0"),
        (10000000.0, "1.0E7"),
        (1.0e-3, "0.001"),
        (1.0e-4, "1.0E-4"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (100.0, "100.0"),
        (123.456, "123.456"),
        (1.0 / 3.0, "0.3333333333333333"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (1.6362738e12, "1.6362738E12"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
        (-12345.6, "-12345.6"),
    ];
    for (v, want) in cases {
        assert_eq!(java_double_to_string(*v), *want, "{v}");
    }
    assert_eq!(java_float_to_string(1.5), "1.5");
    assert_eq!(java_float_to_string(0.1), "0.1");
    assert_eq!(java_float_to_string(1.0e10), "1.0E10");
    assert_eq!(java_float_to_string(3.4e38), "3.4E38");
    assert_eq!(java_float_to_string(1636273800000.0), "1.63627375E12");
    assert_eq!(java_float_to_string(1.0 / 3.0), "0.33333334");
    assert_eq!(java_float_to_string(12345680.0), "1.234568E7");
    assert_eq!(java_float_to_string(0.3333333), "0.3333333");
    assert_eq!(java_float_to_string(-2.5), "-2.5");
    assert_eq!(java_double_to_string(1636273800000.0), "1.6362738E12");
    assert_eq!(java_double_to_string(-9.0e18), "-9.0E18");
    assert_eq!(java_double_to_string(1.0e20), "1.0E20");
}

#[test]
fn scalars_to_text() {
    let a: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)]));
    assert_eq!(
        fmt_one(a, TypeKind::Boolean),
        vec![Some("TRUE".into()), None, Some("FALSE".into())]
    );
    let d: ArrayRef = Arc::new(
        PrimitiveArray::<Decimal128Type>::from(vec![1234, -9999999999, 1, 0, -5])
            .with_precision_and_scale(10, 2)
            .unwrap(),
    );
    assert_eq!(
        fmt_one(
            d,
            TypeKind::Decimal {
                precision: 10,
                scale: 2
            }
        ),
        ["12.34", "-99999999.99", "0.01", "0.00", "-0.05"].map(|s| Some(s.to_string()))
    );
    let t: ArrayRef = Arc::new(PrimitiveArray::<Time64NanosecondType>::from(vec![
        3_723_100_000_000,
        0,
        3_723_010_000_000,
        3_723_456_000_000,
    ]));
    assert_eq!(
        fmt_one(t.clone(), TypeKind::Time(3)),
        ["01:02:03.1", "00:00:00.0", "01:02:03.01", "01:02:03.456"].map(|s| Some(s.to_string()))
    );
    assert_eq!(
        fmt_one(t, TypeKind::Time(0))[1],
        Some("00:00:00".to_string())
    );
    let ts: ArrayRef = Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(vec![
        1_609_462_923_123_456_789,
    ]));
    assert_eq!(
        fmt_one(ts.clone(), TypeKind::Timestamp(3))[0].as_deref(),
        Some("2021-01-01 01:02:03.123")
    );
    assert_eq!(
        fmt_one(ts.clone(), TypeKind::Timestamp(0))[0].as_deref(),
        Some("2021-01-01 01:02:03")
    );
    assert_eq!(
        fmt_one(ts, TypeKind::Timestamp(9))[0].as_deref(),
        Some("2021-01-01 01:02:03.123456789")
    );
    let ltz: ArrayRef =
        Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(vec![0]).with_timezone("UTC"));
    let la = SessionZone::new("America/Los_Angeles").unwrap();
    let s = format_column(&ltz, &dt(TypeKind::TimestampLtz(3)), &la);
    assert_eq!(s.value(0), "1969-12-31 16:00:00.000");
    let iv: ArrayRef = Arc::new(PrimitiveArray::<DurationMillisecondType>::from(vec![
        93_780_000,
        -(100 * MILLIS_PER_DAY + 500),
        1,
    ]));
    assert_eq!(
        fmt_one(iv, TypeKind::IntervalDayTime),
        ["+1 02:03:00.000", "-100 00:00:00.500", "+0 00:00:00.001"].map(|s| Some(s.to_string()))
    );
    let ym: ArrayRef = Arc::new(PrimitiveArray::<IntervalYearMonthType>::from(vec![
        14, -131, 7, 24,
    ]));
    assert_eq!(
        fmt_one(ym, TypeKind::IntervalYearMonth),
        ["+1-02", "-10-11", "+0-07", "+2-00"].map(|s| Some(s.to_string()))
    );
    let b: ArrayRef = Arc::new(BinaryArray::from(vec![&[1u8, 2, 0xff][..], &b""[..]]));
    let ty = dt(TypeKind::VarBinary(super::super::MAX_LENGTH));
    assert_eq!(
        format_value(&b, 0, &ty, &utc()).as_deref(),
        Some("x'0102ff'")
    );
    assert_eq!(format_value(&b, 1, &ty, &utc()).as_deref(), Some("x''"));
    let hello: ArrayRef = Arc::new(BinaryArray::from(vec![&b"h\xc3\xa9llo"[..]]));
    assert_eq!(format_column(&hello, &ty, &utc()).value(0), "héllo");
}

#[test]
fn nested_to_text() {
    let mut lb = ListBuilder::new(Int32Builder::new());
    lb.values().append_value(1);
    lb.values().append_value(2);
    lb.append(true);
    lb.values().append_null();
    lb.values().append_value(3);
    lb.append(true);
    lb.append(false);
    let list: ArrayRef = Arc::new(lb.finish());
    let ty = dt(TypeKind::Array(Box::new(dt(TypeKind::Int))));
    let out: Vec<_> = (0..3)
        .map(|i| format_value(&list, i, &ty, &utc()))
        .collect();
    assert_eq!(
        out,
        vec![Some("[1, 2]".into()), Some("[NULL, 3]".into()), None]
    );

    let mut mb = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    mb.keys().append_value("a");
    mb.values().append_value(1);
    mb.keys().append_value("b");
    mb.values().append_null();
    mb.append(true).unwrap();
    let map: ArrayRef = Arc::new(mb.finish());
    let ty = dt(TypeKind::Map(
        Box::new(DataType::string()),
        Box::new(dt(TypeKind::Int)),
    ));
    assert_eq!(
        format_value(&map, 0, &ty, &utc()).as_deref(),
        Some("{a=1, b=NULL}")
    );

    let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
    let strs: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), None]));
    let row_ty = dt(TypeKind::Row(vec![
        ("a".into(), dt(TypeKind::Int)),
        ("b".into(), DataType::string()),
    ]));
    let st = StructArray::try_new(
        match row_ty.to_arrow() {
            arrow_schema::DataType::Struct(f) => f,
            _ => unreachable!(),
        },
        vec![ints, strs],
        None,
    )
    .unwrap();
    let st: ArrayRef = Arc::new(st);
    assert_eq!(
        format_value(&st, 0, &row_ty, &utc()).as_deref(),
        Some("(1, x)")
    );
    assert_eq!(
        format_value(&st, 1, &row_ty, &utc()).as_deref(),
        Some("(NULL, NULL)")
    );
}

fn parse(strings: &[Option<&str>], kind: TypeKind) -> (ArrayRef, Vec<(usize, String)>) {
    parse_column(&StringArray::from(strings.to_vec()), &dt(kind), &utc())
}

#[test]
fn text_to_numbers() {
    let (a, e) = parse(
        &[
            Some(" 12 "),
            Some("1.5"),
            Some("abc"),
            None,
            Some("-2147483648"),
            Some("2147483648"),
        ],
        TypeKind::Int,
    );
    let a = a.as_primitive::<Int32Type>();
    assert_eq!(a.value(0), 12);
    assert_eq!(a.value(1), 1);
    assert!(a.is_null(2) && a.is_null(3) && a.is_null(5));
    assert_eq!(a.value(4), i32::MIN);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].0, 2);
    assert!(e[0].1.contains("cannot cast 'abc' to INT"), "{}", e[0].1);
    assert!(e[1].1.contains("overflow"));
    let (a, e) = parse(&[Some("300"), Some("-128")], TypeKind::TinyInt);
    assert!(a.is_null(0));
    assert_eq!(a.as_primitive::<Int8Type>().value(1), -128);
    assert_eq!(e.len(), 1);
    let (a, e) = parse(
        &[
            Some("9223372036854775807"),
            Some("-9223372036854775808"),
            Some("9223372036854775808"),
        ],
        TypeKind::BigInt,
    );
    let a = a.as_primitive::<Int64Type>();
    assert_eq!((a.value(0), a.value(1)), (i64::MAX, i64::MIN));
    assert_eq!(e.len(), 1);

    let (a, e) = parse(
        &[
            Some("NaN"),
            Some("-Infinity"),
            Some("1.5e3"),
            Some("inf"),
            Some(" 2d "),
        ],
        TypeKind::Double,
    );
    let a = a.as_primitive::<Float64Type>();
    assert!(a.value(0).is_nan());
    assert_eq!(a.value(1), f64::NEG_INFINITY);
    assert_eq!(a.value(2), 1500.0);
    assert!(a.is_null(3));
    assert_eq!(a.value(4), 2.0);
    assert_eq!(e.len(), 1);
}

proptest::proptest! {
    /// The plain-digits fast path agrees with the general one (which an exponent forces).
    #[test]
    fn plain_decimals_parse_as_the_general_path(
        text in "-?[0-9]{0,40}(\\.[0-9]{0,12})?",
        precision in 1u8..=38,
        scale in 0u8..=12,
    ) {
        let scale = scale.min(precision);
        let fast = parse_decimal(&text, precision, scale).ok();
        let general = parse_decimal(&format!("{text}e0"), precision, scale).ok();
        proptest::prop_assert_eq!(fast, general, "{}", text);
    }
}

#[test]
fn text_to_decimal() {
    let dec = |s: &str| parse_decimal(s, 5, 2);
    assert_eq!(dec("3.14159"), Ok(314));
    assert_eq!(dec("3.145"), Ok(315));
    assert_eq!(dec("-3.145"), Ok(-315));
    assert_eq!(dec("1.0"), Ok(100));
    assert_eq!(dec("999.994"), Ok(99999));
    assert_eq!(dec("999.995"), Err(DecimalError::Overflow));
    assert_eq!(dec("12345.6"), Err(DecimalError::Overflow));
    assert_eq!(dec("NaN"), Err(DecimalError::Invalid));
    assert_eq!(dec("1.5e2"), Ok(15000));
    assert_eq!(dec("15e-3"), Ok(2));
    assert_eq!(dec("0.0000000001"), Ok(0));
    assert_eq!(dec(".5"), Ok(50));
    assert_eq!(dec("1e999999999999"), Err(DecimalError::Overflow));
    assert_eq!(dec("0e999999999999"), Ok(0));
    assert_eq!(
        parse_decimal("99999999999999999999999999999999999999", 38, 0).map(|v| v > 0),
        Ok(true)
    );
    assert_eq!(
        parse_decimal("999999999999999999999999999999999999999", 38, 0),
        Err(DecimalError::Overflow)
    );
    let (_, e) = parse(
        &[Some("12345.6")],
        TypeKind::Decimal {
            precision: 5,
            scale: 2,
        },
    );
    assert_eq!(e.len(), 1);
    let (a, e) = parse_column_as(
        &StringArray::from(vec!["12345.6"]),
        &dt(TypeKind::Decimal {
            precision: 5,
            scale: 2,
        }),
        &utc(),
        TextDialect::Format(TemporalText::Csv),
    );
    assert!(a.is_null(0) && e.is_empty());
    assert_eq!(format_decimal(-1, 5), "-0.00001");
}

#[test]
fn text_to_time_values() {
    let (a, e) = parse(
        &[
            Some("2021-03-14"),
            Some("2021-03-14 01:02:03.123456"),
            Some("2021-03-14T01:02:03"),
            Some("2021-13-01"),
        ],
        TypeKind::Timestamp(3),
    );
    let a = a.as_primitive::<TimestampNanosecondType>();
    assert_eq!(
        super::super::time::format_timestamp(a.value(0), 3),
        "2021-03-14 00:00:00.000"
    );
    assert_eq!(
        super::super::time::format_timestamp(a.value(1), 6),
        "2021-03-14 01:02:03.123000"
    );
    assert!(a.is_null(2) && a.is_null(3));
    assert_eq!(e.len(), 2);
    let la = SessionZone::new("America/Los_Angeles").unwrap();
    let (a, _) = parse_column(
        &StringArray::from(vec!["2021-03-14 02:30:00"]),
        &dt(TypeKind::TimestampLtz(3)),
        &la,
    );
    let s = format_column(&a, &dt(TypeKind::TimestampLtz(3)), &la);
    assert_eq!(s.value(0), "2021-03-14 03:30:00.000");
    let (a, e) = parse(
        &[
            Some("2021-1-5"),
            Some("2021-02-29"),
            Some(" 2020-02-29 10:00 "),
        ],
        TypeKind::Date,
    );
    assert_eq!(
        format_column(&a, &dt(TypeKind::Date), &utc()).value(0),
        "2021-01-05"
    );
    // A leading space keeps the time in the day part, which is then not a number.
    assert!(a.is_null(2));
    assert_eq!(e.len(), 2);
    let (a, e) = parse(
        &[Some("01:02:03.123456"), Some("25:00:00"), Some("1:2")],
        TypeKind::Time(6),
    );
    assert_eq!(
        format_column(&a, &dt(TypeKind::Time(6)), &utc()).value(0),
        "01:02:03.123"
    );
    assert_eq!(
        format_column(&a, &dt(TypeKind::Time(6)), &utc()).value(2),
        "01:02:00.0"
    );
    assert_eq!(e.len(), 1);
}

#[test]
fn text_to_strings_and_others() {
    let (a, e) = parse(&[Some("ab"), Some("abcdef"), Some("é")], TypeKind::Char(3));
    let a = a.as_string::<i32>();
    assert_eq!((a.value(0), a.value(1), a.value(2)), ("ab ", "abc", "é  "));
    assert!(e.is_empty());
    let (a, _) = parse(&[Some("abcdef")], TypeKind::VarChar(5));
    assert_eq!(a.as_string::<i32>().value(0), "abcde");
    let (a, e) = parse(
        &[
            Some("TRUE"),
            Some("yes"),
            Some("0"),
            Some("maybe"),
            Some(" true"),
        ],
        TypeKind::Boolean,
    );
    let a = a.as_boolean();
    assert!(a.value(0) && a.value(1) && !a.value(2) && a.is_null(3) && a.is_null(4));
    assert_eq!(e.len(), 2);
    assert_eq!(
        parse_bool("maybe", TextDialect::Format(TemporalText::Csv)),
        Some(false)
    );
    let (a, _) = parse(
        &[Some("héllo")],
        TypeKind::VarBinary(super::super::MAX_LENGTH),
    );
    assert_eq!(a.as_binary::<i32>().value(0), b"h\xc3\xa9llo");
    let (a, e) = parse(
        &[Some("+1 02:03:00.000"), Some("-100 00:00:00.5")],
        TypeKind::IntervalDayTime,
    );
    let s = format_column(&a, &dt(TypeKind::IntervalDayTime), &utc());
    assert_eq!(
        (s.value(0), s.value(1)),
        ("+1 02:03:00.000", "-100 00:00:00.500")
    );
    assert!(e.is_empty());
    let (a, _) = parse(&[Some("-10-11")], TypeKind::IntervalYearMonth);
    assert_eq!(
        format_column(&a, &dt(TypeKind::IntervalYearMonth), &utc()).value(0),
        "-10-11"
    );
}

#[test]
fn base64_round_trip() {
    for len in 0..10 {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 250) as u8).collect();
        assert_eq!(base64_decode(&base64_encode(&bytes)), Some(bytes));
    }
    assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
    assert_eq!(base64_decode("a=b"), None);
}

proptest::proptest! {
    #[test]
    fn parsing_never_panics(s in "\\PC{0,40}") {
        let strings = StringArray::from(vec![s.as_str()]);
        for kind in [
            TypeKind::Boolean, TypeKind::TinyInt, TypeKind::Int, TypeKind::BigInt,
            TypeKind::Float, TypeKind::Double, TypeKind::Decimal { precision: 38, scale: 10 },
            TypeKind::Decimal { precision: 5, scale: 2 }, TypeKind::Char(3), TypeKind::VarChar(2),
            TypeKind::Binary(2), TypeKind::Date, TypeKind::Time(3), TypeKind::Timestamp(9),
            TypeKind::TimestampLtz(3), TypeKind::IntervalDayTime, TypeKind::IntervalYearMonth,
        ] {
            for dialect in [
                TextDialect::Cast,
                TextDialect::Format(TemporalText::Csv),
                TextDialect::Format(TemporalText::JsonIso),
            ] {
                let (a, _) = parse_column_as(&strings, &dt(kind.clone()), &utc(), dialect);
                let _ = format_column(&a, &dt(kind.clone()), &utc());
            }
        }
        let _ = base64_decode(&s);
    }

    #[test]
    fn doubles_round_trip(v in proptest::num::f64::ANY) {
        let s = java_double_to_string(v);
        let back = parse_java_float::<f64>(&s).unwrap();
        proptest::prop_assert!(back == v || (v.is_nan() && back.is_nan()), "{} -> {}", v, s);
    }
}

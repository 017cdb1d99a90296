//! The operation tables: every row built by its name gives Rust's
//! arithmetic on the clear backend, for every pair of 4-digit inputs (the
//! integer rows), of bytes (the word rows, `u8` and `i8`) or of bits (the
//! boolean rows), and rows keep their places in program files.

use hearth::api::ops::{BoolOp, IntOp, Op, ValueId, WordOp};
use hearth::api::table::{Arg, Kind};
use hearth::{Comparison, Program, Shape, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
use num_bigint::BigInt;

/// The variants in their program-file order: a new row goes last.
const ORDER: &[&str] = &[
    "Const",
    "Add",
    "Sub",
    "Mul",
    "Neg",
    "AddConst",
    "ScalarMul",
    "Shl",
    "Max",
    "Min",
    "Abs",
    "Relu",
    "Square",
    "Signum",
    "Round",
    "Compare",
    "ToBits",
    "Wrap",
    "WrappingAdd",
    "WrappingMul",
    "ShrFloor",
    "Widen",
    "Sum",
    "FusedSum",
    "ToWord",
    "AbsDiff",
    "Pow",
];

/// The clear arguments the test gives each kind of field.
fn arg(row: &str, field: &str, kind: Kind, x: ValueId, y: ValueId) -> Arg {
    match (kind, field) {
        (Kind::Value, "x") => Arg::Value(x),
        (Kind::Value, _) => Arg::Value(y),
        (Kind::Values, _) => Arg::Values(vec![x, y, x]),
        (Kind::Int, _) => Arg::Int(BigInt::from(if row == "scalar_mul" { -3 } else { 5 })),
        (Kind::Count, _) => Arg::Int(BigInt::from(3)),
        (Kind::Comparison, _) => Arg::Comparison(Comparison::Lt),
        (Kind::Bool, _) => Arg::Bool(true),
        (Kind::Gate | Kind::Terms | Kind::Ints | Kind::Choice(_) | Kind::AnyWidth, _) => {
            unreachable!("no integer row takes {kind:?}")
        }
    }
}

/// `v` modulo `2^n`, in `[-2^(n-1), 2^(n-1))`.
fn wrap(v: i64, n: u32) -> i64 {
    let m = 1i64 << n;
    let r = v.rem_euclid(m);
    if r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// Rust's answer for row `name` on `x`, `y` with the arguments of [`arg`].
fn expected(name: &str, x: i64, y: i64) -> i64 {
    match name {
        "constant" => 5,
        "add" => x + y,
        "sub" => x - y,
        "mul" => x * y,
        "neg" => -x,
        "add_const" => x + 5,
        "scalar_mul" => x * -3,
        "shl" => x << 3,
        "max" => x.max(y),
        "min" => x.min(y),
        "abs" => x.abs(),
        "relu" => x.max(0),
        "square" => x * x,
        "signum" => x.signum(),
        "round" => (x + 4).div_euclid(8) * 8,
        "compare" => (x < y) as i64,
        // 4 digits: 5 bits.
        "to_bits" => x.rem_euclid(32),
        "wrap" => wrap(x, 3),
        "wrapping_add" => wrap(x + y, 3),
        "wrapping_mul" => wrap(x * y, 3),
        "shr_floor" => x.div_euclid(8),
        "widen" => x,
        "sum" => x + y + x,
        "to_word" => wrap(x, 3),
        "abs_diff" => (x - y).abs(),
        "pow" => x.pow(3),
        other => panic!("no reference for {other}"),
    }
}

#[test]
fn every_row_built_by_name_gives_rust_arithmetic() {
    let mut tried = 0;
    for row in IntOp::ROWS {
        if row.fields.iter().any(|(_, k)| *k == Kind::Terms) {
            continue;
        }
        let p = Program::new(&INSECURE_TEST_DIGITS);
        let x = p.push(Op::Input(Shape::Int { digits: 4 })).unwrap()[0];
        let y = p.push(Op::Input(Shape::Int { digits: 4 })).unwrap()[0];
        let args: Vec<Arg> = row
            .fields
            .iter()
            .map(|(f, k)| arg(row.name, f, *k, x, y))
            .collect();
        let op = IntOp::from_name(row.name, &args).unwrap();
        assert_eq!(op.name(), row.name);
        assert!(format!("{op:?}").starts_with(row.variant), "{op:?}");
        let out = p.push(op).unwrap()[0];
        p.output_value(out).unwrap();
        let prog = p.build().unwrap();
        for a in -15i64..=15 {
            for b in -15i64..=15 {
                let got = prog
                    .run_clear(&[vec![BigInt::from(a)], vec![BigInt::from(b)]])
                    .unwrap();
                let want = BigInt::from(expected(row.name, a, b));
                assert_eq!(got, vec![vec![want]], "{}({a}, {b})", row.name);
            }
        }
        tried += 1;
    }
    assert_eq!(tried, IntOp::ROWS.len() - 1, "every row but the fused sum");
}

#[test]
fn rows_keep_their_places_in_program_files() {
    let variants: Vec<&str> = IntOp::ROWS.iter().map(|r| r.variant).collect();
    assert_eq!(variants, ORDER);
    let (x, y) = (ValueId(0), ValueId(1));
    for (i, row) in IntOp::ROWS.iter().enumerate() {
        let op = if row.fields.iter().any(|(_, k)| *k == Kind::Terms) {
            IntOp::FusedSum(vec![(x, y)], vec![], BigInt::from(0))
        } else {
            let args: Vec<Arg> = row
                .fields
                .iter()
                .map(|(f, k)| arg(row.name, f, *k, x, y))
                .collect();
            IntOp::from_name(row.name, &args).unwrap()
        };
        // bincode names a variant by its index, a little-endian u32.
        let bytes = bincode::serialize(&op).unwrap();
        assert_eq!(bytes[..4], (i as u32).to_le_bytes(), "{}", row.variant);
    }
}

#[test]
fn bad_names_and_arguments_are_typed_errors() {
    let (x, y) = (ValueId(0), ValueId(1));
    for (name, args) in [
        ("no_such_op", vec![]),
        ("add", vec![Arg::Value(x)]),
        ("add", vec![Arg::Value(x), Arg::Value(y), Arg::Value(x)]),
        ("add", vec![Arg::Value(x), Arg::Int(BigInt::from(1))]),
        ("shl", vec![Arg::Value(x), Arg::Int(BigInt::from(-1))]),
        (
            "fused_sum",
            vec![Arg::Values(vec![]), Arg::Values(vec![]), Arg::Int(1.into())],
        ),
    ] {
        assert!(
            matches!(IntOp::from_name(name, &args), Err(hearth::Error::Config(_))),
            "{name} {args:?}"
        );
    }
    // Operands of another family or of no value are refused when built.
    let p = Program::new(&INSECURE_TEST_DIGITS);
    assert!(p
        .push(IntOp::from_name("abs_diff", &[Arg::Value(x), Arg::Value(ValueId(7))]).unwrap())
        .is_err());
}

/// The boolean family's rows, in program-file order.
const BOOL_ORDER: &[&str] = &["Gate", "Not", "Select", "ToWord"];

#[test]
fn every_boolean_row_built_by_name_gives_rusts_answer() {
    use hearth::bits::gates::Gate;
    let variants: Vec<&str> = BoolOp::ROWS.iter().map(|r| r.variant).collect();
    assert_eq!(variants, BOOL_ORDER);
    type Rust = fn(bool, bool) -> bool;
    let gates: [(Gate, Rust); 6] = [
        (Gate::And, |a, b| a & b),
        (Gate::Or, |a, b| a | b),
        (Gate::Xor, |a, b| a ^ b),
        (Gate::Nand, |a, b| !(a & b)),
        (Gate::Nor, |a, b| !(a | b)),
        (Gate::Xnor, |a, b| !(a ^ b)),
    ];
    let byte = Shape::Word {
        bits: 8,
        signed: false,
    };
    let bit = Shape::Word {
        bits: 1,
        signed: false,
    };
    for (g, f) in gates {
        let p = Program::new(&INSECURE_TEST_BITS);
        let x = p.push(Op::Input(bit)).unwrap()[0];
        let y = p.push(Op::Input(bit)).unwrap()[0];
        let args = [Arg::Gate(g), Arg::Value(x), Arg::Value(y)];
        let out = p.push(BoolOp::from_name("gate", &args).unwrap()).unwrap()[0];
        p.output_value(out).unwrap();
        let prog = p.build().unwrap();
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            let got = prog
                .run_clear(&[vec![BigInt::from(a as u8)], vec![BigInt::from(b as u8)]])
                .unwrap();
            assert_eq!(got, vec![vec![BigInt::from(f(a, b) as u8)]], "{g:?}");
        }
    }
    // not, select and to_word in one program.
    let p = Program::new(&INSECURE_TEST_BITS);
    let c = p.push(Op::Input(bit)).unwrap()[0];
    let x = p.push(Op::Input(byte)).unwrap()[0];
    let y = p.push(Op::Input(byte)).unwrap()[0];
    for (name, args) in [
        ("not", vec![Arg::Value(c)]),
        ("select", vec![Arg::Value(c), Arg::Value(x), Arg::Value(y)]),
        ("to_word", vec![Arg::Value(c), Arg::Int(BigInt::from(8))]),
    ] {
        let out = p.push(BoolOp::from_name(name, &args).unwrap()).unwrap()[0];
        p.output_value(out).unwrap();
    }
    let prog = p.build().unwrap();
    for c in [0u8, 1] {
        for (x, y) in [(0u8, 255u8), (17, 200), (255, 3)] {
            let got = prog
                .run_clear(&[
                    vec![BigInt::from(c)],
                    vec![BigInt::from(x)],
                    vec![BigInt::from(y)],
                ])
                .unwrap();
            let want = [1 - c, if c == 1 { x } else { y }, c];
            let want: Vec<Vec<BigInt>> = want.iter().map(|&v| vec![BigInt::from(v)]).collect();
            assert_eq!(got, want, "c {c} x {x} y {y}");
        }
    }
    // A word where a boolean must be: refused when built.
    let p = Program::new(&INSECURE_TEST_BITS);
    let x = p.push(Op::Input(byte)).unwrap()[0];
    let args = [Arg::Value(x)];
    assert!(p.push(BoolOp::from_name("not", &args).unwrap()).is_err());
}

/// The word family's rows, in program-file order.
const WORD_ORDER: &[&str] = &[
    "Const",
    "Arith",
    "Not",
    "Neg",
    "Shift",
    "ShiftBy",
    "Overflowing",
    "DivRem",
    "CheckedDiv",
    "Compare",
    "Max",
    "Min",
    "FusedSum",
    "Polynomial",
    "CountOnes",
    "LeadingZeros",
    "ReverseBits",
    "SwapBytes",
    "Bit",
    "Cast",
    "ToInt",
    "AesKeySchedule",
    "AesCtr",
    "Kreyvium",
];

/// Rows whose operands are keys and ciphertexts of fixed widths, not
/// bytes: checked against the clear ciphers in `transcipher.rs`.
const TRANSCIPHER_ROWS: &[&str] = &["aes_key_schedule", "aes_ctr", "kreyvium"];

/// The word operands of the test programs: `x` and `y` of the type under
/// test, `amount` an unsigned byte (`y`'s bits).
struct WordArgs {
    x: ValueId,
    y: ValueId,
    amount: ValueId,
    signed: bool,
}

/// Every argument the test gives a field of a word row (the rows are
/// built for each combination).
fn word_args(row: &str, field: &str, kind: Kind, v: &WordArgs) -> Vec<Arg> {
    let ints = |ks: &[i64]| ks.iter().map(|&k| Arg::Int(BigInt::from(k))).collect();
    match (kind, row, field) {
        (Kind::Value, _, "x") => vec![Arg::Value(v.x)],
        (Kind::Value, _, "y") => vec![Arg::Value(v.y)],
        (Kind::Value, "shift_by", "amount") => vec![Arg::Value(v.amount)],
        (Kind::Value | Kind::AnyWidth, _, "key" | "iv" | "counter" | "round_keys" | "sealed") => {
            vec![Arg::Value(v.x)]
        }
        (Kind::Choice(names), _, _) => names.iter().map(|n| Arg::Choice(n.to_string())).collect(),
        (Kind::Comparison, _, _) => Comparison::ALL.map(Arg::Comparison).to_vec(),
        (Kind::Count, "cast", "bits") => ints(&[4, 16]),
        (Kind::Count, _, "bits") => ints(&[8]),
        (Kind::Count, "shift", "amount") => ints(&[3, 9]),
        (Kind::Count, "bit", "i") => ints(&[0, 3, 7]),
        (Kind::Bool, "cast", "signed") => vec![Arg::Bool(false), Arg::Bool(true)],
        (Kind::Bool, _, "signed") => vec![Arg::Bool(v.signed)],
        (Kind::Int, "constant", "value") => ints(&[456]),
        (Kind::Ints, "polynomial", "coefficients") => {
            vec![Arg::Ints([3, -5, 7, 2].map(BigInt::from).to_vec())]
        }
        _ => panic!("no test argument for {row}({field}: {kind:?})"),
    }
}

/// Every combination of the options of each field.
fn combinations(options: &[Vec<Arg>]) -> Vec<Vec<Arg>> {
    options.iter().fold(vec![vec![]], |acc, opts| {
        acc.iter()
            .flat_map(|a| {
                opts.iter().map(move |o| {
                    let mut a = a.clone();
                    a.push(o.clone());
                    a
                })
            })
            .collect()
    })
}

/// The clear ints of `args`, in order.
fn counts(args: &[Arg]) -> Vec<i64> {
    args.iter()
        .filter_map(|a| match a {
            Arg::Int(k) => Some(i64::try_from(k).unwrap()),
            _ => None,
        })
        .collect()
}

/// `v` reduced to `bits` bits, two's complement if `signed`.
fn reduce(v: i128, bits: u32, signed: bool) -> i128 {
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if signed && r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// Rust's answers (each result as an `i128`) for a word row built with
/// `args` (the value fields left out) on `x`, `y` of type `$t` (`$u` and
/// `$i` its unsigned and signed counterparts), with Rust's own methods.
macro_rules! word_reference {
    ($f:ident, $t:ty, $u:ty, $i:ty) => {
        fn $f(name: &str, args: &[Arg], x: $t, y: $t) -> Vec<i128> {
            let choice = args.iter().find_map(|a| match a {
                Arg::Choice(c) => Some(c.as_str()),
                _ => None,
            });
            let flags: Vec<bool> = args
                .iter()
                .filter_map(|a| match a {
                    Arg::Bool(b) => Some(*b),
                    _ => None,
                })
                .collect();
            let n = counts(args);
            let signed = <$t>::MIN != 0;
            // Division by zero: all ones (unsigned), -1 or 1 by the
            // dividend's sign (signed); the remainder is the dividend.
            let quot = || -> i128 {
                match y {
                    0 if signed && (x as i128) < 0 => 1,
                    0 => (0 as $t).wrapping_sub(1) as i128,
                    _ => x.wrapping_div(y) as i128,
                }
            };
            let rem = || -> i128 {
                match y {
                    0 => x as i128,
                    _ => x.wrapping_rem(y) as i128,
                }
            };
            let shift = |kind: &str, k: u32| -> i128 {
                match kind {
                    "left" => x.wrapping_shl(k) as i128,
                    "right" => (x as $u).wrapping_shr(k) as $t as i128,
                    "arith_right" => (x as $i).wrapping_shr(k) as $t as i128,
                    "rotate_left" => x.rotate_left(k) as i128,
                    "rotate_right" => x.rotate_right(k) as i128,
                    other => panic!("no shift {other}"),
                }
            };
            let w = |v: $t| vec![v as i128];
            let b = |v: bool| vec![v as i128];
            match name {
                "constant" => w(n[1] as $t),
                "arith" => match choice.unwrap() {
                    "add" => w(x.wrapping_add(y)),
                    "sub" => w(x.wrapping_sub(y)),
                    "mul" => w(x.wrapping_mul(y)),
                    "div" => vec![quot()],
                    "rem" => vec![rem()],
                    "and" => w(x & y),
                    "or" => w(x | y),
                    "xor" => w(x ^ y),
                    other => panic!("no reference for arith {other}"),
                },
                "not" => w(!x),
                "neg" => w(x.wrapping_neg()),
                "shift" => vec![shift(choice.unwrap(), n[0] as u32)],
                "shift_by" => vec![shift(choice.unwrap(), y as $u as u32)],
                "overflowing" => {
                    let (v, o) = match choice.unwrap() {
                        "add" => x.overflowing_add(y),
                        "sub" => x.overflowing_sub(y),
                        "mul" => x.overflowing_mul(y),
                        other => panic!("no reference for overflowing {other}"),
                    };
                    vec![v as i128, o as i128]
                }
                "div_rem" => vec![quot(), rem()],
                "checked_div" => vec![quot(), x.checked_div(y).is_some() as i128],
                "compare" => {
                    let c = args.iter().find_map(|a| match a {
                        Arg::Comparison(c) => Some(*c),
                        _ => None,
                    });
                    b(c.unwrap().holds(x, y))
                }
                "max" => w(x.max(y)),
                "min" => w(x.min(y)),
                "polynomial" => {
                    let cs = args.iter().find_map(|a| match a {
                        Arg::Ints(cs) => Some(cs.clone()),
                        _ => None,
                    });
                    let mut acc: $t = 0;
                    for c in cs.unwrap().iter().rev() {
                        let c = i64::try_from(c).unwrap() as $t;
                        acc = acc.wrapping_mul(x).wrapping_add(c);
                    }
                    w(acc)
                }
                "fused_sum" => w(x
                    .wrapping_mul(y)
                    .wrapping_add(y.wrapping_mul(3))
                    .wrapping_add(5)),
                "count_ones" => vec![x.count_ones() as i128],
                "leading_zeros" => vec![x.leading_zeros() as i128],
                "reverse_bits" => w(x.reverse_bits()),
                "swap_bytes" => w(x.swap_bytes()),
                "bit" => b((x as $u >> n[0]) & 1 == 1),
                "cast" => vec![reduce(x as i128, n[0] as u32, flags[0])],
                "to_int" => vec![x as i128],
                other => panic!("no reference for {other}"),
            }
        }
    };
}

word_reference!(rust_u8, u8, u8, i8);
word_reference!(rust_i8, i8, u8, i8);

/// Every word row built by name (each choice, comparison and the other
/// arguments of [`word_args`]; the fused sum by its variant) on bytes
/// (`u8`, then `i8`) against Rust's own methods, for every pair of bytes.
fn word_rows_against_rust(signed: bool) {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    p.set_threads(2);
    let byte = Shape::Word { bits: 8, signed };
    let v = WordArgs {
        x: p.push(Op::Input(byte)).unwrap()[0],
        y: p.push(Op::Input(byte)).unwrap()[0],
        amount: p
            .push(Op::Input(Shape::Word {
                bits: 8,
                signed: false,
            }))
            .unwrap()[0],
        signed,
    };
    // (row name, arguments, results)
    let mut cases: Vec<(&str, Vec<Arg>, usize)> = Vec::new();
    let mut rows_built = Vec::new();
    for row in WordOp::ROWS {
        if TRANSCIPHER_ROWS.contains(&row.name) {
            rows_built.push(row.name);
            continue;
        }
        if row.fields.iter().any(|(_, k)| *k == Kind::Terms) {
            // Built by its variant only: `x * y + 3 y + 5`.
            let op = WordOp::FusedSum(
                8,
                signed,
                vec![(v.x, v.y)],
                vec![(v.y, BigInt::from(3))],
                BigInt::from(5),
            );
            let outs = p.push(op).unwrap();
            for o in &outs {
                p.output_value(*o).unwrap();
            }
            cases.push((row.name, vec![], outs.len()));
            rows_built.push(row.name);
            continue;
        }
        let options: Vec<Vec<Arg>> = row
            .fields
            .iter()
            .map(|(f, k)| word_args(row.name, f, *k, &v))
            .collect();
        for args in combinations(&options) {
            let op = WordOp::from_name(row.name, &args).unwrap();
            assert_eq!(op.name(), row.name);
            assert!(format!("{op:?}").starts_with(row.variant), "{op:?}");
            let outs = p.push(op).unwrap();
            for o in &outs {
                p.output_value(*o).unwrap();
            }
            let clear: Vec<Arg> = args
                .into_iter()
                .filter(|a| !matches!(a, Arg::Value(_)))
                .collect();
            cases.push((row.name, clear, outs.len()));
        }
        rows_built.push(row.name);
    }
    let names: Vec<&str> = WordOp::ROWS.iter().map(|r| r.name).collect();
    assert_eq!(rows_built, names, "every word row is tried");
    let prog = p.build().unwrap();
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            let (x, y) = if signed {
                (BigInt::from(a as i8), BigInt::from(b as i8))
            } else {
                (BigInt::from(a), BigInt::from(b))
            };
            let got = prog
                .run_clear(&[vec![x], vec![y], vec![BigInt::from(b)]])
                .unwrap();
            let mut got = got.into_iter().map(|v| v[0].clone());
            for (name, args, count) in &cases {
                let want = if signed {
                    rust_i8(name, args, a as i8, b as i8)
                } else {
                    rust_u8(name, args, a, b)
                };
                assert_eq!(want.len(), *count, "{name} {args:?}: results");
                let got: Vec<BigInt> = got.by_ref().take(*count).collect();
                let want: Vec<BigInt> = want.into_iter().map(BigInt::from).collect();
                assert_eq!(got, want, "{name} {args:?} on ({a}, {b}), signed {signed}");
            }
        }
    }
}

#[test]
fn every_word_row_built_by_name_gives_rusts_answer_on_u8() {
    word_rows_against_rust(false);
}

#[test]
fn every_word_row_built_by_name_gives_rusts_answer_on_i8() {
    word_rows_against_rust(true);
}

#[test]
fn word_rows_keep_their_places_in_program_files() {
    let variants: Vec<&str> = WordOp::ROWS.iter().map(|r| r.variant).collect();
    assert_eq!(variants, WORD_ORDER);
    let v = WordArgs {
        x: ValueId(0),
        y: ValueId(1),
        amount: ValueId(2),
        signed: false,
    };
    for (i, row) in WordOp::ROWS.iter().enumerate() {
        let op = if row.fields.iter().any(|(_, k)| *k == Kind::Terms) {
            WordOp::FusedSum(8, false, vec![(v.x, v.y)], vec![], BigInt::from(0))
        } else {
            let args: Vec<Arg> = row
                .fields
                .iter()
                .map(|(f, k)| word_args(row.name, f, *k, &v).remove(0))
                .collect();
            WordOp::from_name(row.name, &args).unwrap()
        };
        let bytes = bincode::serialize(&op).unwrap();
        assert_eq!(bytes[..4], (i as u32).to_le_bytes(), "{}", row.variant);
    }
    // The operation kinds inside keep their places too.
    let arith = WordOp::from_name(
        "arith",
        &[Arg::Choice("xor".into()), Arg::Value(v.x), Arg::Value(v.y)],
    )
    .unwrap();
    assert_eq!(
        bincode::serialize(&arith).unwrap()[4..8],
        7u32.to_le_bytes()
    );
    assert!(matches!(
        WordOp::from_name(
            "arith",
            &[Arg::Choice("nand".into()), Arg::Value(v.x), Arg::Value(v.y)]
        ),
        Err(hearth::Error::Config(_))
    ));
}

/// A method Python offers takes its value first, and a name two families
/// offer takes the same arguments in both (`_table_ops` lists it once).
#[test]
fn python_rows_are_methods_of_one_signature_per_name() {
    let mut seen: std::collections::HashMap<&str, &[(&str, Kind)]> = Default::default();
    for row in [IntOp::ROWS, WordOp::ROWS, BoolOp::ROWS]
        .into_iter()
        .flatten()
        .filter(|r| r.python)
    {
        assert_eq!(
            row.fields.first().map(|f| f.1),
            Some(Kind::Value),
            "{}",
            row.name
        );
        if let Some(fields) = seen.insert(row.name, row.fields) {
            assert_eq!(fields, row.fields, "{} in two families", row.name);
        }
    }
}

/// Program files of every integer, word and boolean operation written by
/// hearth before the operation tables (ba7d6ab; `tests/data/before-tables`,
/// with their clear results on a few inputs) load and give those results.
/// A file whose stated cost differs from the rebuilt circuit's is refused
/// by design (`formats/program_file.rs`): if an algorithm's cost changes,
/// rewrite these files with the hearth before that change and say so.
#[test]
fn program_files_written_before_the_tables_load_and_run() {
    use hearth::CompiledProgram;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/before-tables");
    let runs = std::fs::read_to_string(dir.join("runs.txt")).unwrap();
    let mut checked = 0;
    for line in runs.lines().filter(|l| !l.starts_with('#')) {
        let (head, outputs) = line.split_once(" : ").unwrap();
        let mut words = head.split(' ');
        let name = words.next().unwrap();
        let inputs: Vec<Vec<BigInt>> = words.map(|v| vec![v.parse().unwrap()]).collect();
        let path = dir.join(format!("{name}.hprog"));
        let prog = CompiledProgram::load(&path)
            .unwrap_or_else(|e| panic!("{} no longer loads: {e}", path.display()));
        let want: Vec<Vec<BigInt>> = outputs
            .split(';')
            .map(|o| o.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(prog.run_clear(&inputs).unwrap(), want, "{line}");
        checked += 1;
    }
    assert_eq!(checked, 11, "6 integer and 5 word runs");
}

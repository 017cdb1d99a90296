//! The integer family's operation table: every row built by its name
//! gives Rust's integer arithmetic on the clear backend, for every pair of
//! 4-digit inputs (the boolean rows on every pair of bits), and rows keep
//! their places in program files.

use hearth::api::ops::{BoolOp, IntOp, Op, ValueId};
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
        (Kind::Gate | Kind::Terms, _) => unreachable!("no integer row takes {kind:?}"),
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

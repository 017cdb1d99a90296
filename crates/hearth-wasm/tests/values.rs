//! The page's value rules, natively: inputs by name, tensors nested or
//! flat, every mismatch refused; outputs nested back; JavaScript types by
//! the value's type.

use hearth_core::crypto::encoding::Shape;
use hearth_core::formats::Param;
use hearth_wasm::values::{as_number, flatten, is_bool, nest, order_inputs, type_name, Tree};
use num_bigint::BigInt;

fn v(x: i64) -> Tree {
    Tree::Value(BigInt::from(x))
}

fn list(items: Vec<Tree>) -> Tree {
    Tree::List(items)
}

fn ints(xs: &[i64]) -> Vec<BigInt> {
    xs.iter().map(|&x| BigInt::from(x)).collect()
}

const U8: Shape = Shape::Word {
    bits: 8,
    signed: false,
};

#[test]
fn tensors_flatten_nested_or_flat_and_nest_back() {
    let p = Param::new("m", U8, &[2, 3]);
    let nested = list(vec![
        list(vec![v(1), v(2), v(3)]),
        list(vec![v(4), v(5), v(6)]),
    ]);
    assert_eq!(
        flatten(&p, nested.clone()).unwrap(),
        ints(&[1, 2, 3, 4, 5, 6])
    );
    let flat = list((1..=6).map(v).collect());
    assert_eq!(flatten(&p, flat).unwrap(), ints(&[1, 2, 3, 4, 5, 6]));
    assert_eq!(nest(&p, ints(&[1, 2, 3, 4, 5, 6])), nested);
    let s = Param::new("s", U8, &[]);
    assert_eq!(flatten(&s, v(7)).unwrap(), ints(&[7]));
    assert_eq!(nest(&s, ints(&[7])), v(7));
}

#[test]
fn misshapen_values_are_refused() {
    let p = Param::new("m", U8, &[2, 3]);
    for bad in [
        v(1),
        list(vec![v(1), v(2)]),
        list(vec![list(vec![v(1), v(2)]), list(vec![v(4), v(5), v(6)])]),
        list(vec![
            list(vec![v(1), v(2), list(vec![])]),
            list(vec![v(4), v(5), v(6)]),
        ]),
        list((1..=7).map(v).collect()),
    ] {
        let e = flatten(&p, bad.clone()).unwrap_err().to_string();
        assert!(e.contains("\"m\""), "{bad:?}: {e}");
    }
    let s = Param::new("s", U8, &[]);
    assert!(flatten(&s, list(vec![v(1)])).is_err());
}

#[test]
fn inputs_by_name_each_exactly_once() {
    let params = [Param::new("a", U8, &[]), Param::new("b", U8, &[2])];
    let given = vec![
        ("b".to_string(), list(vec![v(5), v(6)])),
        ("a".into(), v(4)),
    ];
    assert_eq!(
        order_inputs(&params, given).unwrap(),
        vec![ints(&[4]), ints(&[5, 6])]
    );
    let missing = order_inputs(&params, vec![("a".into(), v(1))]).unwrap_err();
    assert!(missing.to_string().contains("\"b\""), "{missing}");
    let unknown = vec![
        ("a".into(), v(1)),
        ("b".into(), list(vec![v(1), v(2)])),
        ("c".into(), v(0)),
    ];
    let e = order_inputs(&params, unknown).unwrap_err().to_string();
    assert!(e.contains("\"c\"") && e.contains("a, b"), "{e}");
    let twice = vec![
        ("a".into(), v(1)),
        ("a".into(), v(2)),
        ("b".into(), list(vec![v(1), v(2)])),
    ];
    assert!(order_inputs(&params, twice)
        .unwrap_err()
        .to_string()
        .contains("twice"));
}

#[test]
fn javascript_types_follow_the_value_type() {
    let bool_ = Shape::Word {
        bits: 1,
        signed: false,
    };
    assert!(is_bool(bool_) && !is_bool(U8));
    assert_eq!(type_name(bool_), "bool");
    assert_eq!(type_name(U8), "u8");
    assert_eq!(
        type_name(Shape::Word {
            bits: 64,
            signed: true
        }),
        "i64"
    );
    assert_eq!(type_name(Shape::Int { digits: 12 }), "int12");
    assert_eq!(type_name(Shape::TwosInt { bits: 16 }), "twos16");
    assert!(as_number(Shape::Word {
        bits: 32,
        signed: false
    }));
    assert!(as_number(Shape::Int { digits: 53 }));
    assert!(!as_number(Shape::Int { digits: 54 }));
    assert!(!as_number(Shape::Word {
        bits: 64,
        signed: false
    }));
}

/// The page's ciphers: SP 800-38A's CTR-AES128 first block, the Kreyvium
/// authors' first vector, both their own inverses; wrong lengths refused.
#[test]
fn the_page_seals_with_aes_ctr_and_kreyvium() {
    use hearth_wasm::seal::{aes_ctr, kreyvium};
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let (key, counter) = (
        hex("2b7e151628aed2a6abf7158809cf4f3c"),
        hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"),
    );
    let plain = hex("6bc1bee22e409f96e93d7e117393172a");
    let sealed = aes_ctr(&key, &counter, &plain).unwrap();
    assert_eq!(sealed, hex("874d6191b620e3261bef6864990db6ce"));
    assert_eq!(aes_ctr(&key, &counter, &sealed).unwrap(), plain);
    assert_eq!(
        kreyvium(&[0; 16], &[0; 16], &[0; 8]).unwrap(),
        hex("26dcf1f4bc0f1922")
    );
    assert_eq!(
        aes_ctr(&key[..15], &counter, &plain).unwrap_err(),
        "the key must be 16 bytes, not 15"
    );
    assert!(kreyvium(&key, &counter[1..], &plain)
        .unwrap_err()
        .contains("the IV must be 16 bytes"));
}

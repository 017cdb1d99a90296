//! A program's values as a page holds them: one entry per named input or
//! output, a scalar or nested lists following the param's dims
//! ([`Tree`]), checked and flattened into the row-major lists
//! `ClientKey::encrypt_bundle` takes, and nested back from what
//! `ClientKey::decrypt_bundle` returns. Plain Rust, so that the rules are
//! tested natively (tests/values.rs); `js.rs` only converts JavaScript
//! values to trees and back.

use hearth_core::crypto::encoding::Shape;
use hearth_core::formats::Param;
use hearth_core::Error;
use num_bigint::BigInt;

/// One value, or nested lists of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tree {
    /// A scalar.
    Value(BigInt),
    /// A list (one tensor dimension).
    List(Vec<Tree>),
}

/// The most bits a value has to be returned to JavaScript as a `number`
/// (an integer it holds exactly, `Number.MAX_SAFE_INTEGER` is `2^53 - 1`);
/// wider types come back as `BigInt`, whatever the value.
pub const NUMBER_BITS: usize = 53;

/// Whether values of `shape` are booleans (one unsigned bit).
pub fn is_bool(shape: Shape) -> bool {
    shape
        == Shape::Word {
            bits: 1,
            signed: false,
        }
}

/// Whether values of `shape` come back as a JavaScript `number` (else a
/// `BigInt`, or a boolean for [`is_bool`]): decided by the type, never by
/// the value, so a page sees one JavaScript type per output.
pub fn as_number(shape: Shape) -> bool {
    shape.len() <= NUMBER_BITS
}

/// A short name of `shape`: `bool`, `u8`, `i32` (words), `int16` (a
/// signed-binary integer of 16 digits), `twos16` (two's-complement
/// digits).
pub fn type_name(shape: Shape) -> String {
    match shape {
        s if is_bool(s) => "bool".into(),
        Shape::Word { bits, signed } => format!("{}{bits}", if signed { 'i' } else { 'u' }),
        Shape::Int { digits } => format!("int{digits}"),
        Shape::TwosInt { bits } => format!("twos{bits}"),
    }
}

/// Orders named values as `params` declares them and flattens each
/// ([`flatten`]): every param named exactly once, no other name.
pub fn order_inputs(
    params: &[Param],
    named: Vec<(String, Tree)>,
) -> Result<Vec<Vec<BigInt>>, Error> {
    let mut slots: Vec<Option<Tree>> = vec![None; params.len()];
    for (name, tree) in named {
        let Some(i) = params.iter().position(|p| p.name == name) else {
            let known: Vec<_> = params.iter().map(|p| p.name.as_str()).collect();
            return Err(Error::Dimensions(format!(
                "the program has no input {name:?} (its inputs: {})",
                known.join(", ")
            )));
        };
        if slots[i].replace(tree).is_some() {
            return Err(Error::Dimensions(format!("input {name:?} is given twice")));
        }
    }
    params
        .iter()
        .zip(slots)
        .map(|(p, slot)| match slot {
            Some(tree) => flatten(p, tree),
            None => Err(Error::Dimensions(format!(
                "input {:?} ({}) is missing",
                p.name, p.shape
            ))),
        })
        .collect()
}

/// The values of one param, row-major: a scalar for a scalar param; for a
/// tensor, lists nested as its dims (outermost first) or one flat list of
/// all its values. Ranges are checked by the encryption.
pub fn flatten(param: &Param, tree: Tree) -> Result<Vec<BigInt>, Error> {
    let count = param.count()?;
    let mismatch = |what: String| {
        Error::Dimensions(format!(
            "input {:?} has dims {:?}: {what}",
            param.name, param.dims
        ))
    };
    if param.dims.is_empty() {
        return match tree {
            Tree::Value(v) => Ok(vec![v]),
            Tree::List(_) => Err(mismatch("a scalar is expected, a list was given".into())),
        };
    }
    let Tree::List(items) = tree else {
        return Err(mismatch("a list is expected, a scalar was given".into()));
    };
    if param.dims.len() > 1
        && items.len() == count
        && items.iter().all(|t| matches!(t, Tree::Value(_)))
    {
        let values = items.into_iter().filter_map(|t| match t {
            Tree::Value(v) => Some(v),
            Tree::List(_) => None,
        });
        return Ok(values.collect());
    }
    let mut out = Vec::with_capacity(count);
    nest_into(&param.dims, Tree::List(items), &mut out, &mismatch)?;
    Ok(out)
}

/// Appends `tree`'s values, checking it is nested exactly as `dims`.
fn nest_into(
    dims: &[usize],
    tree: Tree,
    out: &mut Vec<BigInt>,
    mismatch: &dyn Fn(String) -> Error,
) -> Result<(), Error> {
    match (dims.split_first(), tree) {
        (None, Tree::Value(v)) => {
            out.push(v);
            Ok(())
        }
        (None, Tree::List(_)) => Err(mismatch("lists are nested deeper than its dims".into())),
        (Some(_), Tree::Value(_)) => {
            Err(mismatch("a value stands where a list is expected".into()))
        }
        (Some((&d, rest)), Tree::List(items)) => {
            if items.len() != d {
                return Err(mismatch(format!(
                    "a list of {} where {d} are expected",
                    items.len()
                )));
            }
            items
                .into_iter()
                .try_for_each(|t| nest_into(rest, t, out, mismatch))
        }
    }
}

/// The values of one param (row-major, as decrypted) nested as its dims:
/// a scalar for a scalar param.
pub fn nest(param: &Param, values: Vec<BigInt>) -> Tree {
    fn build(dims: &[usize], it: &mut std::vec::IntoIter<BigInt>) -> Tree {
        match dims.split_first() {
            None => Tree::Value(it.next().unwrap_or_default()),
            Some((&d, rest)) => Tree::List((0..d).map(|_| build(rest, it)).collect()),
        }
    }
    build(&param.dims, &mut values.into_iter())
}

//! JavaScript values to [`Tree`]s and back, and hearth's errors as
//! JavaScript `Error`s. Inputs: `number` (a safe integer), `BigInt`,
//! `boolean` (1 or 0), and arrays or typed arrays of them. Outputs: a
//! `boolean` for `bool`, a `number` for types of at most 53 bits, a
//! `BigInt` above ([`crate::values::as_number`]), arrays for tensors.

use hearth_core::crypto::encoding::Shape;
use js_sys::{Array, ArrayBuffer, Object};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use wasm_bindgen::{JsCast, JsError, JsValue};

use crate::values::{as_number, is_bool, Tree};

/// A hearth error as a JavaScript `Error` carrying its message.
pub fn error(e: hearth_core::Error) -> JsError {
    JsError::new(&e.to_string())
}

/// A refused JavaScript value, saying where it was.
fn refused(at: &str, what: &str) -> JsError {
    JsError::new(&format!("{at}: {what}"))
}

/// The `(name, value)` pairs of a plain object of inputs.
pub fn named(inputs: &JsValue) -> Result<Vec<(String, Tree)>, JsError> {
    if !inputs.is_object() || Array::is_array(inputs) {
        return Err(JsError::new(
            "the inputs are an object with one property per input name, e.g. { x: 3, w: [1, 2] }",
        ));
    }
    Object::entries(inputs.unchecked_ref())
        .iter()
        .map(|pair| {
            let pair: Array = pair.unchecked_into();
            let name = pair.get(0).as_string().unwrap_or_default();
            let tree = tree(&pair.get(1), &name)?;
            Ok((name, tree))
        })
        .collect()
}

/// One input value (`at` names it in errors).
fn tree(v: &JsValue, at: &str) -> Result<Tree, JsError> {
    if let Some(b) = v.as_bool() {
        return Ok(Tree::Value(BigInt::from(u8::from(b))));
    }
    if v.is_bigint() {
        let digits: String = v
            .unchecked_ref::<js_sys::BigInt>()
            .to_string(10)
            .map_err(|_| refused(at, "a BigInt that does not print"))?
            .into();
        return digits
            .parse()
            .map(Tree::Value)
            .map_err(|_| refused(at, "a BigInt that does not parse"));
    }
    if let Some(x) = v.as_f64() {
        let safe = js_sys::Number::is_safe_integer(v);
        if !safe {
            return Err(refused(
                at,
                &format!("{x} is not a safe integer (pass a BigInt above 2^53 - 1)"),
            ));
        }
        return Ok(Tree::Value(BigInt::from(x as i64)));
    }
    if Array::is_array(v) || ArrayBuffer::is_view(v) {
        return Array::from(v)
            .iter()
            .enumerate()
            .map(|(i, item)| tree(&item, &format!("{at}[{i}]")))
            .collect::<Result<_, _>>()
            .map(Tree::List);
    }
    Err(refused(
        at,
        "expected a number, a BigInt, a boolean or an array of them",
    ))
}

/// One output value of `shape` as JavaScript.
pub fn to_js(shape: Shape, t: Tree) -> JsValue {
    match t {
        Tree::List(items) => items
            .into_iter()
            .map(|t| to_js(shape, t))
            .collect::<Array>()
            .into(),
        Tree::Value(v) if is_bool(shape) => JsValue::from_bool(v != BigInt::ZERO),
        Tree::Value(v) => match v.to_i64().filter(|_| as_number(shape)) {
            Some(x) => JsValue::from_f64(x as f64),
            // BigInt of a decimal string cannot fail.
            None => js_sys::BigInt::new(&JsValue::from_str(&v.to_string()))
                .map_or(JsValue::NULL, JsValue::from),
        },
    }
}

//! hearth's client in WebAssembly: what a web page needs to compute on
//! its user's data with a `hearth server` without the secret key leaving
//! the browser. It generates keys, writes the compressed server key and
//! the public key the server and data owners need, encrypts a program's
//! inputs into a bundle, and decrypts a result bundle. Every byte string
//! is a hearth file, the same as the command line and the Python package
//! read and write, so bundles and keys move between the platforms.
//!
//! Built on the client layer only (`hearth-core`: keys, encodings,
//! bundles, program signatures), without the circuit engine, threads or
//! server: `scripts/wasm-build.sh` makes the JavaScript package (with its
//! TypeScript types) from it, and `web/` is a page that uses it. See the
//! book's chapter "The browser client".

mod js;
pub mod seal;
pub mod values;

use std::path::Path;

use hearth_core::crypto::keys::KeyId;
use hearth_core::crypto::params::ParameterSet;
use hearth_core::formats::{Bundle, Param, ProgramSummary};
use num_bigint::BigInt;
use wasm_bindgen::prelude::*;

use crate::js::{error, named, to_js};
use crate::values::{nest, order_inputs, type_name};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** One input or output of a program. */
export interface Param {
  /** Its name. */
  name: string;
  /** `bool`, `u8`..`u64`, `i8`..`i64` (words), `intN` (signed-binary digits), `twosN`. */
  type: string;
  /** Its type in words. */
  description: string;
  /** Tensor dimensions, outermost first; empty for a scalar. */
  dims: number[];
  /** Whether its values come back as `bigint` (types wider than 53 bits) rather than `number`. */
  bigint: boolean;
}
/** A value: a scalar, or arrays nested as the param's dims (or one flat array). */
export type Value = number | bigint | boolean | Value[] | ArrayLike<number>;
/** Inputs by name. */
export type Inputs = Record<string, Value>;
/** Decrypted outputs by name: booleans, numbers, bigints, nested arrays. */
export type Outputs = Record<string, any>;
"#;

/// The origin named in errors about bytes a page passed.
fn origin(what: &str) -> &Path {
    Path::new(what)
}

/// A program file as a client reads it: the parameter set, the named
/// inputs and outputs and the stated cost, without its operations (the
/// server rebuilds and checks those).
#[wasm_bindgen]
pub struct Program {
    summary: ProgramSummary,
}

#[wasm_bindgen]
impl Program {
    /// Reads program file bytes (a `.hprog`, as `hearth compile` or
    /// `CompiledProgram.save` writes them).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<Program, JsError> {
        let summary = ProgramSummary::read(origin("<program>"), bytes).map_err(error)?;
        Ok(Program { summary })
    }

    /// The name of its parameter set.
    #[wasm_bindgen(getter)]
    pub fn params(&self) -> String {
        self.summary.params.params().name.into()
    }

    /// Its inputs, in order.
    #[wasm_bindgen(unchecked_return_type = "Param[]")]
    pub fn inputs(&self) -> JsValue {
        params_js(&self.summary.signature.inputs)
    }

    /// Its outputs, in order.
    #[wasm_bindgen(unchecked_return_type = "Param[]")]
    pub fn outputs(&self) -> JsValue {
        params_js(&self.summary.signature.outputs)
    }

    /// Its stated number of bootstraps (#PBS).
    #[wasm_bindgen(getter)]
    pub fn pbs(&self) -> usize {
        self.summary.stats.pbs
    }

    /// Its stated depth (the longest chain of bootstraps).
    #[wasm_bindgen(getter)]
    pub fn depth(&self) -> u32 {
        self.summary.stats.depth
    }
}

/// Params as an array of [`Param`] objects (the TypeScript interface).
fn params_js(params: &[Param]) -> JsValue {
    params
        .iter()
        .map(|p| {
            let o = js_sys::Object::new();
            let set = |k: &str, v: JsValue| js_sys::Reflect::set(&o, &k.into(), &v).map(drop);
            let dims: js_sys::Array = p.dims.iter().map(|&d| JsValue::from(d as u32)).collect();
            // Setting a property of a fresh plain object cannot fail.
            let _ = set("name", p.name.as_str().into())
                .and(set("type", type_name(p.shape).into()))
                .and(set("description", p.shape.to_string().into()))
                .and(set("dims", dims.into()))
                .and(set(
                    "bigint",
                    (!values::as_number(p.shape) && !values::is_bool(p.shape)).into(),
                ));
            JsValue::from(o)
        })
        .collect::<js_sys::Array>()
        .into()
}

/// Secret keys: they encrypt and decrypt, and make the keys others need.
/// Keep them where the page's user keeps secrets (the example page keeps
/// their bytes in IndexedDB) and never send them.
#[wasm_bindgen]
pub struct ClientKey {
    inner: hearth_core::ClientKey,
}

#[wasm_bindgen]
impl ClientKey {
    /// Generates keys for a named parameter set (`DIGITS_128`,
    /// `DIGITS_KS32_128`, `DIGITS_MB4_128`, `BITS_128`, `GATES_128`); test sets are refused.
    pub fn generate(params: &str) -> Result<ClientKey, JsError> {
        let p = ParameterSet::for_front_end(params).map_err(error)?;
        Ok(ClientKey {
            inner: hearth_core::ClientKey::generate(p),
        })
    }

    /// Reads the bytes [`ClientKey::to_bytes`] wrote (a client key file),
    /// checking every field.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<ClientKey, JsError> {
        let inner =
            hearth_core::ClientKey::from_bytes(origin("<client key>"), bytes).map_err(error)?;
        secure(inner.params())?;
        Ok(ClientKey { inner })
    }

    /// The secret keys as client key file bytes (what `hearth keygen`
    /// writes).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Vec<u8>, JsError> {
        self.inner.to_bytes().map_err(error)
    }

    /// Its id (16 hex digits), which its bundles and server keys carry.
    #[wasm_bindgen(getter, js_name = keyId)]
    pub fn key_id(&self) -> String {
        self.inner.key_id().to_string()
    }

    /// The name of its parameter set.
    #[wasm_bindgen(getter)]
    pub fn params(&self) -> String {
        self.inner.params().name.into()
    }

    /// A fresh compressed server key (seeded: what `POST /v1/keys`
    /// takes), as file bytes.
    #[wasm_bindgen(js_name = compressedServerKey)]
    pub fn compressed_server_key(&self) -> Result<Vec<u8>, JsError> {
        self.inner.compressed_server_key().to_bytes().map_err(error)
    }

    /// A fresh public key for data owners who encrypt but may not
    /// decrypt.
    #[wasm_bindgen(js_name = publicKey)]
    pub fn public_key(&self) -> Result<PublicKey, JsError> {
        let inner = self.inner.public_key().map_err(error)?;
        Ok(PublicKey { inner })
    }

    /// Encrypts the inputs of `program` (an object with one property per
    /// input: a scalar, or arrays nested as its dims) into bundle file
    /// bytes, ready to submit with the program. The inputs named in
    /// `clear` travel in the clear, each value in its own bytes: public
    /// values only, such as sealed bytes and their counter
    /// ([`aes_ctr`]).
    pub fn encrypt(
        &self,
        program: &Program,
        #[wasm_bindgen(unchecked_param_type = "Inputs")] inputs: JsValue,
        clear: Option<Vec<String>>,
    ) -> Result<Vec<u8>, JsError> {
        let key = (self.inner.params(), self.inner.key_id());
        encrypt_inputs(key, program, &inputs, clear, |p, v| {
            self.inner.encrypt_bundle(p, v)
        })
    }

    /// Decrypts result bundle bytes (`GET /v1/jobs/{id}/result`) into an
    /// object with one property per output.
    #[wasm_bindgen(unchecked_return_type = "Outputs")]
    pub fn decrypt(&self, bundle: &[u8]) -> Result<JsValue, JsError> {
        let bundle = Bundle::from_bytes(origin("<bundle>"), bundle).map_err(error)?;
        let out = js_sys::Object::new();
        for (param, values) in self.inner.decrypt_bundle(&bundle).map_err(error)? {
            let v = to_js(param.shape, nest(&param, values));
            js_sys::Reflect::set(&out, &param.name.as_str().into(), &v)
                .map_err(|_| JsError::new("cannot set an output property"))?;
        }
        Ok(out.into())
    }
}

/// `program`'s inputs checked and ordered, encrypted by `encrypt` (a
/// client or a public key of the set and key `key`) into bundle file
/// bytes, those named in `clear` in the clear.
fn encrypt_inputs(
    (key, key_id): (&ParameterSet, KeyId),
    program: &Program,
    inputs: &JsValue,
    clear: Option<Vec<String>>,
    encrypt: impl FnMut(&[Param], &[Vec<BigInt>]) -> hearth_core::Result<Bundle>,
) -> Result<Vec<u8>, JsError> {
    let theirs = program.summary.params.params();
    if theirs.name != key.name {
        return Err(JsError::new(&format!(
            "the program is built for {}, the key is for {}",
            theirs.name, key.name
        )));
    }
    let params = &program.summary.signature.inputs;
    let values = order_inputs(params, named(inputs)?).map_err(error)?;
    let clear = clear.unwrap_or_default();
    Bundle::with_clear_values(key.id, key_id, params, &values, &clear, encrypt)
        .and_then(|b| b.to_bytes())
        .map_err(error)
}

/// AES-128 in counter mode: `data` XORed with the keystream of `key`
/// from the counter block `counter` (16 bytes each; the block counts as
/// a 128-bit big-endian number). Encrypts and decrypts alike; never use
/// one key and counter block twice.
#[wasm_bindgen(js_name = aesCtr)]
pub fn aes_ctr(key: &[u8], counter: &[u8], data: &[u8]) -> Result<Vec<u8>, JsError> {
    seal::aes_ctr(key, counter, data).map_err(|e| JsError::new(&e))
}

/// Kreyvium: `data` XORed with the keystream of `key` and `iv` (16 bytes
/// each). Encrypts and decrypts alike; never use one key and IV twice.
#[wasm_bindgen]
pub fn kreyvium(key: &[u8], iv: &[u8], data: &[u8]) -> Result<Vec<u8>, JsError> {
    seal::kreyvium(key, iv, data).map_err(|e| JsError::new(&e))
}

/// Refuses a key of a test set read from bytes: no front end takes one.
fn secure(params: &ParameterSet) -> Result<(), JsError> {
    if params.is_insecure() {
        return Err(error(hearth_core::Error::InsecureParams(params.name)));
    }
    Ok(())
}

/// Encrypts for one client key and cannot decrypt: what a data owner
/// holds.
#[wasm_bindgen]
pub struct PublicKey {
    inner: hearth_core::PublicKey,
}

#[wasm_bindgen]
impl PublicKey {
    /// Reads public key file bytes (`hearth keygen --public-key`,
    /// [`PublicKey::to_bytes`]).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<PublicKey, JsError> {
        let inner =
            hearth_core::PublicKey::from_bytes(origin("<public key>"), bytes).map_err(error)?;
        secure(inner.params())?;
        Ok(PublicKey { inner })
    }

    /// The key as file bytes (compressed: a seed and one polynomial).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Vec<u8>, JsError> {
        self.inner.to_bytes().map_err(error)
    }

    /// The id of the client key it encrypts for.
    #[wasm_bindgen(getter, js_name = keyId)]
    pub fn key_id(&self) -> String {
        self.inner.key_id().to_string()
    }

    /// The name of its parameter set.
    #[wasm_bindgen(getter)]
    pub fn params(&self) -> String {
        self.inner.params().name.into()
    }

    /// Encrypts the inputs of `program` as [`ClientKey::encrypt`] does
    /// (`clear` too).
    pub fn encrypt(
        &self,
        program: &Program,
        #[wasm_bindgen(unchecked_param_type = "Inputs")] inputs: JsValue,
        clear: Option<Vec<String>>,
    ) -> Result<Vec<u8>, JsError> {
        let key = (self.inner.params(), self.inner.key_id());
        encrypt_inputs(key, program, &inputs, clear, |p, v| {
            self.inner.encrypt_bundle(p, v)
        })
    }
}

//! The files clients send: legitimate jobs of a few kinds, whose results
//! are checked against Rust's integers, and hostile ones (an output bomb,
//! a result too large to keep, a compact bundle that would expand a
//! thousandfold). All on `GATES_128`, the words' parameter set.

use std::path::Path;

use hearth::api::ops::{Op, ValueId, WordArith, WordOp};
use hearth::api::{U128, U8};
use hearth::{Bundle, ClientKey, CompiledProgram, Param, ParameterSet, Program, Shape, GATES_128};
use num_bigint::BigInt;

/// A legitimate job: a program of two `u8` inputs and one `u8` output,
/// and what Rust computes for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `a + b`, wrapping: 8 bootstraps.
    Add,
    /// `a * b`, wrapping: 69 bootstraps.
    Mul,
    /// `a ^ b`: 8 bootstraps.
    Xor,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 3] = [Kind::Add, Kind::Mul, Kind::Xor];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Add => "add",
            Kind::Mul => "mul",
            Kind::Xor => "xor",
        }
    }

    /// Its program on `params`.
    pub fn program(self, params: &'static ParameterSet) -> CompiledProgram {
        let p = Program::new(params);
        let (a, b) = (U8::input(&p), U8::input(&p));
        p.output(&match self {
            Kind::Add => &a + &b,
            Kind::Mul => &a * &b,
            Kind::Xor => &a ^ &b,
        });
        p.build().expect("a two-input program builds")
    }

    /// What Rust computes.
    pub fn expected(self, a: u8, b: u8) -> u8 {
        match self {
            Kind::Add => a.wrapping_add(b),
            Kind::Mul => a.wrapping_mul(b),
            Kind::Xor => a ^ b,
        }
    }
}

/// The inputs `a`, `b` of a program of two `u8` inputs, encrypted under
/// `key` as a compact bundle file.
pub fn bundle(key: &ClientKey, program: &CompiledProgram, a: u8, b: u8) -> Vec<u8> {
    key.encrypt_bundle(
        &program.signature().inputs,
        &[vec![BigInt::from(a)], vec![BigInt::from(b)]],
    )
    .and_then(|b| b.to_bytes())
    .expect("two u8 values encrypt")
}

/// The first value of a result bundle file's first output.
pub fn decrypt_one(key: &ClientKey, result: &[u8]) -> hearth::Result<BigInt> {
    let bundle = Bundle::from_bytes(Path::new("result"), result)?;
    let mut values = key.decrypt_bundle(&bundle)?;
    values
        .first_mut()
        .and_then(|(_, v)| v.drain(..).next())
        .ok_or_else(|| hearth::Error::Config("the result holds no value".into()))
}

/// `key`'s server key as a compressed key file (what clients upload).
pub fn key_file(key: &ClientKey) -> Vec<u8> {
    key.compressed_server_key()
        .to_bytes()
        .expect("a server key serializes")
}

/// A program of no bootstrap whose result is `copies` copies of its first
/// input (two `u8` inputs, as [`bundle`] encrypts): free to run, costly
/// to keep (each copy is 8 ciphertexts).
pub fn copies_program(copies: usize) -> CompiledProgram {
    let p = Program::new(&GATES_128);
    let a = U8::input(&p);
    let _b = U8::input(&p);
    for _ in 0..copies {
        p.output(&a);
    }
    p.build().expect("copies build")
}

/// Outputs of the output bomb: each names the same 128-bit input.
pub const BOMB_OUTPUTS: usize = 1_000_000;

/// The output bomb (program file, bundle file): a program of one `u128`
/// input whose file names it as an output [`BOMB_OUTPUTS`] times, its
/// stated cost and signature left as they were and its header sealed
/// again (a few bytes per output that a rebuild would turn into 128
/// ciphertexts each), with a valid bundle under `key`.
pub fn output_bomb(key: &ClientKey) -> (Vec<u8>, Vec<u8>) {
    let p = Program::new(&GATES_128);
    let wide = U128::input(&p);
    p.output(&wide);
    let one = p.build().expect("one output builds");
    let input = key
        .encrypt_bundle(&one.signature().inputs, &[vec![BigInt::from(1u8) << 100]])
        .and_then(|b| b.to_bytes())
        .expect("a u128 encrypts");
    let program = one.to_bytes().expect("a program serializes");
    let bomb = crate::forge::program_with_outputs(&program, BOMB_OUTPUTS)
        .expect("the forge takes a valid program");
    (bomb, input)
}

/// A legitimate `u8` sum's program file with its operations replaced by
/// `ops` (and its outputs by `outputs`), its stated cost (8 bootstraps)
/// and signature left as they were and its header sealed again, with a
/// valid bundle under `key` for the program it states.
fn forged(key: &ClientKey, ops: Vec<Op>, outputs: Vec<ValueId>) -> (Vec<u8>, Vec<u8>) {
    let sum = Kind::Add.program(&GATES_128);
    let program = sum.to_bytes().expect("a program serializes");
    let forged = crate::forge::program_with_ops(&program, ops, outputs)
        .expect("the forge takes a valid program");
    (forged, bundle(key, &sum, 1, 2))
}

/// Bytes of [`decoding_bomb`]'s program file, about.
pub const DECODING_BOMB_BYTES: usize = 16 << 20;

/// A decoding bomb: a program file of [`DECODING_BOMB_BYTES`] whose
/// operations are two `u8` inputs and then custom operations (4 bytes
/// each on the wire, tens in memory once decoded), stating the cost of a
/// `u8` sum. Decoding it whole before refusing it cost hundreds of MiB.
pub fn decoding_bomb(key: &ClientKey) -> (Vec<u8>, Vec<u8>) {
    let word = Shape::Word {
        bits: 8,
        signed: false,
    };
    let mut ops = vec![Op::Input(word), Op::Input(word)];
    ops.extend(std::iter::repeat_n(Op::Custom, DECODING_BOMB_BYTES / 4));
    forged(key, ops, vec![ValueId(0)])
}

/// Bits of each factor of [`forged_cost`]'s product.
pub const FORGED_BITS: usize = 1020;

/// A program file that states the cost of a `u8` sum (8 bootstraps) and
/// whose operations ask for the product of two [`FORGED_BITS`]-bit words:
/// about a million bit operations, within the work a program file may
/// ask for, that take a minute and gigabytes to build. A few hundred
/// bytes.
pub fn forged_cost(key: &ClientKey) -> (Vec<u8>, Vec<u8>) {
    let word = Shape::Word {
        bits: FORGED_BITS,
        signed: false,
    };
    let ops = vec![
        Op::Input(word),
        Op::Input(word),
        Op::Word(WordOp::Arith(WordArith::Mul, ValueId(0), ValueId(1))),
    ];
    forged(key, ops, vec![ValueId(2)])
}

/// A `u8` sum's program padded to about `bytes` with thread plans that
/// change nothing (12 bytes each on the wire), stating its true cost,
/// with a bundle under `key` whose sum is `a + b`. Built programs kept
/// their operations: each such job held about ten times its size.
pub fn padded_program(key: &ClientKey, bytes: usize, a: u8, b: u8) -> (Vec<u8>, Vec<u8>) {
    let sum = Kind::Add.program(&GATES_128);
    let program = sum.to_bytes().expect("a program serializes");
    let threads = CompiledProgram::peek(Path::new("sum"), &program)
        .expect("a program peeks")
        .threads;
    let word = Shape::Word {
        bits: 8,
        signed: false,
    };
    let mut ops = vec![Op::Input(word), Op::Input(word)];
    ops.extend(std::iter::repeat_n(Op::PlanThreads(threads), bytes / 12));
    ops.push(Op::Word(WordOp::Arith(
        WordArith::Add,
        ValueId(0),
        ValueId(1),
    )));
    let padded = crate::forge::program_with_ops(&program, ops, vec![ValueId(2)])
        .expect("the forge takes a valid program");
    (padded, bundle(key, &sum, a, b))
}

/// Ciphertexts of [`wide_bundle`]: the most a compact bundle may hold.
pub const WIDE_CIPHERTEXTS: usize = 1 << 16;

/// A compact bundle file under `key` of one tensor input of 8 192 `u8`
/// values: [`WIDE_CIPHERTEXTS`] seeded ciphertexts in about 512 KiB, that
/// a server expanding it would turn into about 1 GiB. Forged from a
/// bundle of one value (encrypting them all would take seconds and that
/// GiB here): the tensor's size and the bodies' count are set anew, the
/// bodies repeated, the header sealed again; the result is checked to be
/// a well-formed compact bundle of that tensor.
pub fn wide_bundle(key: &ClientKey) -> Vec<u8> {
    let word = Shape::Word {
        bits: 8,
        signed: false,
    };
    let values = WIDE_CIPHERTEXTS / word.len();
    let one = Param::new("x", word, &[1]);
    let mut bytes = key
        .encrypt_bundle(&[one], &[vec![BigInt::from(0u8)]])
        .and_then(|b| b.to_bytes())
        .expect("a u8 encrypts");
    // The payload (bincode, fixed-width little-endian integers) ends with
    // the tensor's dims (one u64), then the seeded list: the seed (u128),
    // the bodies' count (u64) and the bodies (u64 each).
    let n = bytes.len();
    let bodies = n - 8 * word.len();
    let (count_at, dims_at) = (bodies - 8, bodies - 8 - 16 - 8);
    let mut set = |at: usize, was: usize, now: usize| {
        let field = &mut bytes[at..at + 8];
        assert_eq!(
            field,
            &(was as u64).to_le_bytes(),
            "the bundle layout changed"
        );
        field.copy_from_slice(&(now as u64).to_le_bytes());
    };
    set(dims_at, 1, values);
    set(count_at, word.len(), WIDE_CIPHERTEXTS);
    let one_value = bytes[bodies..].to_vec();
    for _ in 1..values {
        bytes.extend_from_slice(&one_value);
    }
    hearth::crypto::files::reseal(&mut bytes);
    let wide = Param::new("x", word, &[values]);
    Bundle::check_bytes_expecting(Path::new("wide bundle"), &bytes, GATES_128.id, &[wide])
        .expect("the forged bundle is a compact bundle of the wide tensor");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::backend::CountBackend;

    #[test]
    fn kinds_compute_what_rust_does() {
        assert_eq!(Kind::Add.expected(250, 9), 3);
        assert_eq!(Kind::Mul.expected(16, 17), 16);
        assert_eq!(Kind::Xor.expected(0xf0, 0x3c), 0xcc);
        // The bootstraps each kind's documentation states, as the count
        // backend counts them.
        let costs: Vec<usize> = Kind::ALL
            .iter()
            .map(|k| CountBackend.stats(k.program(&GATES_128).circuit()).pbs)
            .collect();
        assert_eq!(costs, [8, 69, 8]);
        let copies = copies_program(4);
        assert_eq!(copies.circuit().stats().pbs, 0);
        assert_eq!(copies.signature().outputs.len(), 4);
    }
}

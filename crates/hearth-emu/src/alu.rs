//! ARM's ALU on hearth's words: the NZCV flags of additions, subtractions
//! and results, and the bit fields (BFC, BFI, UBFX, SBFX). Only the
//! emulator needs them, so they are an extension trait, [`ArmWord`], of
//! [`hearth::api::Word`] here rather than methods of the library's words;
//! the circuits are the library's ([`hearth::bits::flags`],
//! [`hearth::bits::bitwise`]), built through [`Word::from_circuit`].
//!
//! ```
//! use hearth::api::{clear_word, clear_word_value, Program, U8};
//! use hearth::backend::ClearBackend;
//! use hearth_emu::alu::ArmWord;
//!
//! let p = Program::new(&hearth::INSECURE_TEST_BITS);
//! let (x, y) = (U8::input(&p), U8::input(&p));
//! let (d, f) = x.sub_with_flags(&y); // ARM's SUBS
//! p.output(&d);
//! p.output(&f.c);
//! let prog = p.build()?;
//! let out = prog.run(&ClearBackend, &[clear_word(5, 8, false)?, clear_word(7, 8, false)?])?;
//! assert_eq!(clear_word_value(&out[0], false)?, 254.into());
//! assert_eq!(clear_word_value(&out[1], false)?, 0.into()); // a borrow: C clear
//! # Ok::<(), hearth::Error>(())
//! ```

use hearth::api::{Bool, Program, Word};
use hearth::bits::flags::{self, Nzcv};
use hearth::bits::{bitwise, Bits};
use hearth::{BuildError, CircuitBuilder, Error};

/// NZCV condition flags of an addition or subtraction.
#[derive(Clone)]
pub struct Flags<'p> {
    /// Negative: the result's top bit.
    pub n: Bool<'p>,
    /// Zero: every bit of the result clear.
    pub z: Bool<'p>,
    /// Carry: the adder's carry out (for a subtraction, 1 when no borrow).
    pub c: Bool<'p>,
    /// Overflow: the signed result does not fit (the carries into and out
    /// of the top bit differ).
    pub v: Bool<'p>,
}

/// The word operations of ARM's ALU that Rust's integers do not have:
/// results with their condition flags, and bit fields. Implemented for
/// every [`Word`]; operands of another program are an error for
/// [`Program::build`], as with the library's operators.
pub trait ArmWord<'p>: Sized {
    /// `self + rhs` with its NZCV flags (ARM's ADDS).
    fn add_with_flags(&self, rhs: &Self) -> (Self, Flags<'p>);

    /// `self + rhs + carry` with its NZCV flags (ARM's ADCS; SBCS is
    /// `self + !rhs + C`, SUBS `self + !rhs + 1`).
    fn add_with_carry(&self, rhs: &Self, carry: &Bool<'p>) -> (Self, Flags<'p>);

    /// `self - rhs` with its NZCV flags (ARM's SUBS / CMP: C is "no
    /// borrow").
    fn sub_with_flags(&self, rhs: &Self) -> (Self, Flags<'p>);

    /// The N and Z flags of this value (ARM's logical operations with S
    /// set: N the top bit, Z all bits clear).
    fn nz(&self) -> (Bool<'p>, Bool<'p>);

    /// Bits `lsb .. lsb + width` cleared (ARM's BFC; free).
    fn field_clear(&self, lsb: usize, width: usize) -> Self;

    /// The low `width` bits of `y` written at `lsb` (ARM's BFI; free).
    fn field_insert(&self, y: &Self, lsb: usize, width: usize) -> Self;

    /// Bits `lsb .. lsb + width`, extended by this type's signedness
    /// (ARM's UBFX / SBFX; free).
    fn field_extract(&self, lsb: usize, width: usize) -> Self;
}

impl<'p, const BITS: usize, const SIGNED: bool> ArmWord<'p> for Word<'p, BITS, SIGNED> {
    fn add_with_flags(&self, rhs: &Self) -> (Self, Flags<'p>) {
        let p = self.owner();
        let mut out = None;
        let s = Self::from_circuit(p, |b| {
            same(p, rhs.owner(), "an operand")?;
            let zero = b.constant(0);
            let (s, f) = flags::add_flags(b, self.bits(), rhs.bits(), zero)?;
            out = Some(f);
            Ok(s)
        });
        (s, flags_of(p, out))
    }

    fn add_with_carry(&self, rhs: &Self, carry: &Bool<'p>) -> (Self, Flags<'p>) {
        let p = self.owner();
        let mut out = None;
        let s = Self::from_circuit(p, |b| {
            same(p, rhs.owner(), "an operand")?;
            same(p, carry.owner(), "a carry")?;
            let (s, f) = flags::add_flags(b, self.bits(), rhs.bits(), carry.wire())?;
            out = Some(f);
            Ok(s)
        });
        (s, flags_of(p, out))
    }

    fn sub_with_flags(&self, rhs: &Self) -> (Self, Flags<'p>) {
        let p = self.owner();
        let mut out = None;
        let d = Self::from_circuit(p, |b| {
            same(p, rhs.owner(), "an operand")?;
            let (d, f) = flags::sub_flags(b, self.bits(), rhs.bits())?;
            out = Some(f);
            Ok(d)
        });
        (d, flags_of(p, out))
    }

    fn nz(&self) -> (Bool<'p>, Bool<'p>) {
        let p = self.owner();
        let mut z = None;
        let n = Bool::from_circuit(p, |b| {
            let (n, zero) = flags::nz(b, self.bits())?;
            z = Some(zero);
            Ok(n)
        });
        let z = Bool::from_circuit(p, |b| Ok(z.unwrap_or_else(|| b.constant(0))));
        (n, z)
    }

    fn field_clear(&self, lsb: usize, width: usize) -> Self {
        Self::from_circuit(self.owner(), |b| {
            Ok(bitwise::field_clear(b, self.bits(), lsb, width))
        })
    }

    fn field_insert(&self, y: &Self, lsb: usize, width: usize) -> Self {
        let p = self.owner();
        Self::from_circuit(p, |b| {
            same(p, y.owner(), "an operand")?;
            Ok(bitwise::field_insert(b, self.bits(), y.bits(), lsb, width))
        })
    }

    fn field_extract(&self, lsb: usize, width: usize) -> Self {
        Self::from_circuit(self.owner(), |b| {
            let x: &Bits = self.bits();
            Ok(bitwise::field_extract(b, x, lsb, width, BITS, SIGNED))
        })
    }
}

/// The flags as booleans of `p` (clear zeros when the operation failed:
/// its error is kept for [`Program::build`]).
fn flags_of(p: &Program, f: Option<Nzcv>) -> Flags<'_> {
    let pick = |g: fn(&Nzcv) -> hearth::Wire| {
        Bool::from_circuit(p, |b: &mut CircuitBuilder| {
            Ok(f.as_ref().map_or_else(|| b.constant(0), g))
        })
    };
    Flags {
        n: pick(|f| f.n),
        z: pick(|f| f.z),
        c: pick(|f| f.c),
        v: pick(|f| f.v),
    }
}

/// Refuses `what` of another program than `p`.
fn same(p: &Program, other: &Program, what: &str) -> Result<(), Error> {
    if std::ptr::eq(p, other) {
        Ok(())
    } else {
        Err(BuildError::ForeignWire {
            node: format!("{what} of another program"),
        }
        .into())
    }
}

//! ARM's NZCV flags (CryptoEmu section 6.1): negative (the top bit), zero
//! (an OR tree, negated), carry (the adder's carry out; for a subtraction,
//! 1 when no borrow), overflow (the carries into and out of the top bit
//! differ: one XOR; on the digits family's sets read from the top bits).

use super::adders::{add_overflowing, AdderKind};
use super::compare::or_all;
use super::gates::not;
use super::{Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::error::Error;

/// The four condition flags, each one bit.
#[derive(Clone, Copy, Debug)]
pub struct Nzcv {
    /// Negative: the top bit.
    pub n: Wire,
    /// Zero: every bit clear.
    pub z: Wire,
    /// Carry out (for a subtraction: no borrow).
    pub c: Wire,
    /// Signed overflow.
    pub v: Wire,
}

/// `x + y + carry_in` with its flags (ARM's ADDS / ADCS).
pub fn add_flags(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    carry_in: Wire,
) -> Result<(Bits, Nzcv), Error> {
    let (sum, c, v) = add_overflowing(b, x, y, carry_in, AdderKind::Auto, true)?;
    let v = v.expect("asked for the signed overflow");
    let (nf, z) = nz(b, &sum)?;
    Ok((sum, Nzcv { n: nf, z, c, v }))
}

/// `x - y` with its flags (ARM's SUBS / CMP): `x + not y + 1`.
pub fn sub_flags(b: &mut CircuitBuilder, x: &Bits, y: &Bits) -> Result<(Bits, Nzcv), Error> {
    let n = x.len().max(y.len());
    let zero = b.constant(0);
    let ny: Vec<Wire> = (0..n)
        .map(|i| not(b, y.bit_or(i, zero)))
        .collect::<Result<_, _>>()?;
    let one = b.constant(ONE);
    add_flags(b, x, &Bits::from_vec(ny), one)
}

/// N and Z of a result (logical operations set only these).
pub fn nz(b: &mut CircuitBuilder, r: &Bits) -> Result<(Wire, Wire), Error> {
    let n = r.top(b);
    let any = or_all(b, &mut Selectors::for_bits(), r.wires())?;
    Ok((n, not(b, any)?))
}

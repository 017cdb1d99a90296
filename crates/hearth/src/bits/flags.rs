//! ARM's NZCV flags (CryptoEmu section 6.1): negative (the top bit), zero
//! (an OR tree, negated), carry (the adder's carry out; for a subtraction,
//! 1 when no borrow), overflow (the carries into and out of the top bit
//! differ: one XOR).

use super::adders::{add_carries, AdderKind};
use super::compare::or_all;
use super::gates::{gate, not, Gate};
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
    let (sum, carries) = add_carries(b, x, y, carry_in, AdderKind::Auto)?;
    let n = sum.len();
    let mut sel = Selectors::for_bits();
    let v = if n == 0 {
        b.constant(0)
    } else {
        gate(b, &mut sel, Gate::Xor, carries[n - 1], carries[n])?
    };
    let (nf, z) = nz(b, &sum)?;
    Ok((
        sum,
        Nzcv {
            n: nf,
            z,
            c: carries[n],
            v,
        },
    ))
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

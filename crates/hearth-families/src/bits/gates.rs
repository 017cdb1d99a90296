//! Gates: any boolean function of a few bits that is a *threshold* of a
//! linear form costs one bootstrap.
//!
//! A gate reads the selector `sum_i c_i x_i` (bits stored as 0 or 2) and a
//! table that maps each value to `-1` or `+1` (the output `0` or `1`, plus
//! one afterwards: `2 out - 1 + 1 = 2 out`). A negacyclic table must give
//! opposite outputs at values half the ring apart, and the decoding margin
//! is half the distance between values with different outputs. For each
//! function the coefficients are *searched* (entries in -4..=4) for the
//! cheapest form the parameter set allows: quadratic weight over the budget
//! of the margin it reaches. On `pi = 3` that gives AND / OR and their
//! negated-input variants with `x + y` or `x - y` (weight 2, margin 1), XOR
//! with `2x + 2y` (weight 8, margin 2), majority with `x + y + z` (3) and
//! XOR3 with `2(x + y + z)` (12); a multiplexer is no threshold there and
//! costs two gates whose sum is linear. Larger `pi` finds more one-gate
//! forms (e.g. the multiplexer on `pi = 5`).
//!
//! Constant inputs are folded first (an AND with a clear 1 is the other
//! input, free), repeated inputs merged, and a function that only copies or
//! negates one input costs nothing: `not x = 2 - x`.

use std::collections::HashMap;

use super::{on_even_positions, ONE};
use crate::circuit::{CircuitBuilder, Memo, Selectors, Wire};
use crate::crypto::lut::Lut;
use crate::crypto::params::{Budgets, Margin, ParameterSet};
use crate::error::Error;

/// The two-input gates of the papers (`NY`: first input negated, `YN`:
/// second input negated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Gate {
    /// `a & b`.
    And,
    /// `a | b`.
    Or,
    /// `a ^ b`.
    Xor,
    /// `!(a & b)`.
    Nand,
    /// `!(a | b)`.
    Nor,
    /// `!(a ^ b)`.
    Xnor,
    /// `!a & b`.
    AndNY,
    /// `a & !b`.
    AndYN,
    /// `!a | b`.
    OrNY,
    /// `a | !b`.
    OrYN,
}

impl Gate {
    /// Every gate.
    pub const ALL: [Gate; 10] = [
        Gate::And,
        Gate::Or,
        Gate::Xor,
        Gate::Nand,
        Gate::Nor,
        Gate::Xnor,
        Gate::AndNY,
        Gate::AndYN,
        Gate::OrNY,
        Gate::OrYN,
    ];

    /// The gate on clear bits.
    pub fn eval(self, a: bool, b: bool) -> bool {
        match self {
            Gate::And => a & b,
            Gate::Or => a | b,
            Gate::Xor => a ^ b,
            Gate::Nand => !(a & b),
            Gate::Nor => !(a | b),
            Gate::Xnor => !(a ^ b),
            Gate::AndNY => !a & b,
            Gate::AndYN => a & !b,
            Gate::OrNY => !a | b,
            Gate::OrYN => a | !b,
        }
    }
}

/// A one-bootstrap form of a function: selector coefficients and the
/// margin it decodes with.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Form {
    coefs: Vec<i64>,
    level: Margin,
}

/// Search key: modulus, budgets, arity and truth table.
type FormKey = (u64, Budgets, usize, u64);

thread_local! {
    static FORMS: Memo<FormKey, Option<Form>> = Memo::new();
}

/// The positions `sum_i c_i x_i` (mod `m`) and outputs of every input
/// combination, if they form a consistent negacyclic table whose values
/// are exactly an arithmetic progression (no phantom values the builder's
/// range would add); with its margin.
fn layout(m: u64, coefs: &[i64], truth: u64) -> Option<(Vec<(u64, bool)>, Margin)> {
    let k = coefs.len();
    let mi = m as i64;
    let mut at: HashMap<u64, bool> = HashMap::new();
    let mut points = Vec::with_capacity(1 << k);
    for combo in 0..1u64 << k {
        let s: i64 = (0..k)
            .map(|i| coefs[i] * ONE * ((combo >> i) & 1) as i64)
            .sum();
        let pos = s.rem_euclid(mi) as u64;
        let out = (truth >> combo) & 1 == 1;
        for (p, v) in [(pos, out), ((pos + m / 2) % m, !out)] {
            if *at.entry(p).or_insert(v) != v {
                return None;
            }
        }
        points.push((pos, out));
    }
    // The builder sees lo..=hi with step gcd(2|c_i|): every value of that
    // progression must be a combination.
    let step = coefs
        .iter()
        .fold(0u64, |g, &c| num_integer::gcd(g, (ONE * c).unsigned_abs()));
    let span: i64 = coefs.iter().map(|&c| (ONE * c).abs()).sum();
    let lo: i64 = coefs.iter().map(|&c| (ONE * c).min(0)).sum();
    let values = (span as u64 / step + 1).min(m / num_integer::gcd(step % m, m));
    for j in 0..values {
        let pos = (lo + (j * step) as i64).rem_euclid(mi) as u64;
        if !points.iter().any(|&(p, _)| p == pos) {
            return None;
        }
    }
    let mut min_dist = i64::MAX;
    for (&p, &v) in &at {
        for (&q, &w) in &at {
            if v != w {
                let d = (p as i64 - q as i64).rem_euclid(mi);
                min_dist = min_dist.min(d.min(mi - d));
            }
        }
    }
    let level = Margin::within(min_dist as u64);
    Some((points, level))
}

/// The cheapest one-bootstrap form of `truth` (bit `c` is the output for
/// the input combination `c`) on `b`'s parameters, if any.
fn form(b: &CircuitBuilder, arity: usize, truth: u64) -> Option<Form> {
    let p = b.params();
    let m = p.message_modulus();
    let key = (m, p.budgets, arity, truth);
    FORMS.with(|memo| memo.get_or(key, || search(p, m, arity, truth)))
}

/// [`form`]'s search: every coefficient vector (uniform ones beyond three
/// inputs) whose table is consistent, the least noise per budget first.
fn search(p: &ParameterSet, m: u64, arity: usize, truth: u64) -> Option<Form> {
    let choices: Vec<i64> = (-4..=4).filter(|&c| c != 0).collect();
    let mut best: Option<(f64, u64, Form)> = None;
    // Every coefficient vector for up to three inputs; beyond, uniform
    // ones (enough for symmetric functions such as wide ORs and counters).
    let candidates: Vec<Vec<i64>> = if arity <= 3 {
        (0..choices.len().pow(arity as u32))
            .map(|mut n| {
                (0..arity)
                    .map(|_| {
                        let c = choices[n % choices.len()];
                        n /= choices.len();
                        c
                    })
                    .collect()
            })
            .collect()
    } else {
        choices.iter().map(|&c| vec![c; arity]).collect()
    };
    for coefs in candidates {
        let Some((_, level)) = layout(m, &coefs, truth) else {
            continue;
        };
        let budget = p.budgets.at(level);
        let weight: u64 = coefs.iter().map(|&c| (c * c) as u64).sum();
        if budget < weight {
            continue;
        }
        let cost = weight as f64 / budget as f64;
        if best
            .as_ref()
            .is_none_or(|(bc, bw, _)| (cost, weight) < (*bc, *bw))
        {
            best = Some((
                cost,
                weight,
                Form {
                    coefs: coefs.clone(),
                    level,
                },
            ));
        }
    }
    best.map(|(_, _, f)| f)
}

/// The function restricted to its encrypted, distinct inputs: constants
/// substituted, repeated wires and complements (`ONE - x`, as a NOT or an
/// XOR with a clear 1 gives) merged.
pub(crate) struct Reduced {
    /// The distinct encrypted inputs.
    pub(crate) inputs: Vec<Wire>,
    /// Bit `c`: the output where input `i` is bit `i` of `c`.
    pub(crate) truth: u64,
}

pub(crate) fn reduce(
    b: &CircuitBuilder,
    inputs: &[Wire],
    f: &dyn Fn(&[bool]) -> bool,
) -> Result<Reduced, Error> {
    // For each original input: Ok((index into distinct inputs, negated))
    // or Err(constant).
    let mut distinct: Vec<Wire> = Vec::new();
    let mut map: Vec<Result<(usize, bool), bool>> = Vec::with_capacity(inputs.len());
    for &w in inputs {
        if let Some(v) = b.constant_value(w)? {
            map.push(Err(v.rem_euclid(2 * ONE) == ONE));
            continue;
        }
        let mut found = None;
        for (i, &d) in distinct.iter().enumerate() {
            if d == w || b.offset_from(w, d, 1)? == Some(0) {
                found = Some((i, false));
            } else if b.offset_from(w, d, -1)? == Some(ONE) {
                found = Some((i, true));
            }
            if found.is_some() {
                break;
            }
        }
        map.push(Ok(found.unwrap_or_else(|| {
            distinct.push(w);
            (distinct.len() - 1, false)
        })));
    }
    let mut truth = 0u64;
    let mut args = vec![false; inputs.len()];
    if distinct.len() > 6 {
        return Ok(Reduced {
            inputs: distinct,
            truth: 0,
        });
    }
    for combo in 0..1u64 << distinct.len() {
        for (a, m) in args.iter_mut().zip(&map) {
            *a = match *m {
                Ok((i, negated)) => ((combo >> i) & 1 == 1) != negated,
                Err(c) => c,
            };
        }
        if f(&args) {
            truth |= 1 << combo;
        }
    }
    // Inputs the function ignores (a select between equal bits) are dropped.
    let mut i = 0;
    while i < distinct.len() {
        let rows = 1u64 << distinct.len();
        let (mut without, mut ignored) = (0u64, true);
        for combo in 0..rows {
            let (low, high) = (combo & ((1 << i) - 1), combo >> (i + 1));
            let bit = (truth >> combo) & 1;
            ignored &= bit == (truth >> (combo ^ (1 << i))) & 1;
            if (combo >> i) & 1 == 0 {
                without |= bit << (low | (high << i));
            }
        }
        if ignored {
            distinct.remove(i);
            truth = without;
        } else {
            i += 1;
        }
    }
    Ok(Reduced {
        inputs: distinct,
        truth,
    })
}

/// `f` of the input bits as one bootstrap (or for free), if a form exists.
pub fn threshold(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    inputs: &[Wire],
    f: &dyn Fn(&[bool]) -> bool,
) -> Result<Option<Wire>, Error> {
    let r = reduce(b, inputs, f)?;
    let k = r.inputs.len();
    if k > 6 {
        return Ok(None);
    }
    // The all-ones truth table: 2^k bits (for k = 6 all 64; `(1 << 64) - 1`
    // overflowed, found by fuzzing program files).
    let all = u64::MAX >> (64 - (1u32 << k));
    // Free cases: constants, copies and negations of one input.
    if r.truth == 0 || r.truth == all {
        return Ok(Some(b.constant(if r.truth == 0 { 0 } else { ONE })));
    }
    if k == 1 {
        let x = r.inputs[0];
        return Ok(Some(if r.truth == 0b10 { x } else { not(b, x)? }));
    }
    let Some(form) = form(b, k, r.truth) else {
        return Ok(None);
    };
    let (points, _) = layout(b.params().message_modulus(), &form.coefs, r.truth)
        .expect("a found form has a layout");
    let budget = b.params().budgets.at(form.level);
    let m = b.params().message_modulus();
    let mut terms: Vec<(Wire, i64)> = r.inputs.iter().copied().zip(form.coefs).collect();
    let mut s = sel.linear_within(b, &terms, 0, budget)?;
    // Inputs that share fresh values (e.g. x and a sum read from x) can
    // give the selector a range with values no input combination makes;
    // independent copies of the inputs make the range exact again.
    let reachable = |b: &CircuitBuilder, s: Wire| -> Result<bool, Error> {
        Ok(b.range(s)?
            .residues(m)
            .iter()
            .all(|x| points.iter().any(|&(p, _)| p == *x)))
    };
    if !reachable(b, s)? {
        for t in terms.iter_mut() {
            t.0 = refresh(b, t.0)?;
        }
        s = sel.linear_within(b, &terms, 0, budget)?;
    }
    let pts: Vec<(i64, i64)> = points
        .iter()
        .map(|&(p, out)| (p as i64, if out { 1 } else { -1 }))
        .collect();
    let lut = Lut::from_points(b.params().pi, &pts)?;
    let y = b.bootstrap(s, &lut)?;
    Ok(Some(b.add_const(y, 1)?))
}

/// `f` of the input bits: one bootstrap where a form exists.
fn must(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    inputs: &[Wire],
    what: &str,
    f: &dyn Fn(&[bool]) -> bool,
) -> Result<Wire, Error> {
    threshold(b, sel, inputs, f)?.ok_or_else(|| Error::UnsupportedParams {
        params: b.params().id,
        family: "two's-complement bits",
        reason: format!("no one-bootstrap form for {what}"),
    })
}

/// The widest OR (up to 6 inputs) one bootstrap can compute here.
pub fn widest_or(b: &CircuitBuilder, _sel: &mut Selectors) -> Result<usize, Error> {
    Ok((2..=6)
        .rev()
        // The truth table of a k-input OR: every row but the all-zero one
        // (64 rows fill a u64 at k = 6, hence the u128).
        .find(|&k| form(b, k, ((1u128 << (1 << k)) - 2) as u64).is_some())
        .unwrap_or(2))
}

/// The OR of a group of bits (one bootstrap, or free for one bit).
pub fn or_n(b: &mut CircuitBuilder, sel: &mut Selectors, group: &[Wire]) -> Result<Wire, Error> {
    must(b, sel, group, "OR", &|v| v.iter().any(|&t| t))
}

/// `not x`: free (`2 - x`).
pub fn not(b: &mut CircuitBuilder, x: Wire) -> Result<Wire, Error> {
    Ok(b.linear(&[(x, -1)], ONE)?)
}

/// `g_k(x_k, y)` for each `(x_k, g_k)`: gates that share the input `y`,
/// two per blind rotation where the set has room (`pi >= 5`): the
/// selector `x_a + 2 x_b + 4 y` takes 8 even values in the first half of
/// the ring, so the two gates are two tables read one unit apart
/// (many-LUT, interleaved, at the margin-1/2 budget: weight 21 from fresh
/// bits; the noisiest input takes weight 1). One gate each elsewhere, and
/// for clear or unrefreshed inputs.
pub fn gates_sharing(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    xs: &[(Wire, Gate)],
    y: Wire,
) -> Result<Vec<Wire>, Error> {
    let mut out = Vec::with_capacity(xs.len());
    let mut k = 0;
    while k < xs.len() {
        if k + 1 < xs.len() {
            if let Some(pair) = gate_pair(b, [xs[k], xs[k + 1]], y)? {
                for (&(x, g), &w) in xs[k..k + 2].iter().zip(&pair) {
                    guard_gate(b, g, x, y, w)?;
                }
                out.extend(pair);
                k += 2;
                continue;
            }
        }
        let (x, g) = xs[k];
        out.push(gate(b, sel, g, x, y)?);
        k += 1;
    }
    Ok(out)
}

/// Two gates sharing `y` in one rotation, or `None` where that does not
/// apply (see [`gates_sharing`]).
fn gate_pair(
    b: &mut CircuitBuilder,
    [(xa, ga), (xb, gb)]: [(Wire, Gate); 2],
    y: Wire,
) -> Result<Option<[Wire; 2]>, Error> {
    two_of_three(
        b,
        [xa, xb, y],
        [&|v: [bool; 3]| ga.eval(v[0], v[2]), &|v: [bool; 3]| {
            gb.eval(v[1], v[2])
        }],
    )
}

/// Two functions of the same three bits in one rotation, where the set
/// has room (`pi >= 5`): the selector `x_0 + 2 x_1 + 4 x_2` (the noisiest
/// input at weight 1) takes 8 even values in the first half of the ring,
/// read by two tables one unit apart (many-LUT, interleaved, at the
/// margin-1/2 budget: weight 21 from fresh bits). `None` for clear or
/// unrefreshed inputs, or where the weight is over that budget.
pub(crate) fn two_of_three(
    b: &mut CircuitBuilder,
    inputs: [Wire; 3],
    fs: [&dyn Fn([bool; 3]) -> bool; 2],
) -> Result<Option<[Wire; 2]>, Error> {
    let params = b.params();
    if params.pi < 5 {
        return Ok(None);
    }
    for w in inputs {
        if b.constant_value(w)?.is_some() || !on_even_positions(b, w, ONE)? {
            return Ok(None);
        }
    }
    // The noisiest input takes the smallest weight.
    let mut order = [0usize, 1, 2];
    let mut weight = [0u64; 3];
    for (i, &w) in inputs.iter().enumerate() {
        weight[i] = b.quadratic_weight(w)?;
    }
    order.sort_by_key(|&i| std::cmp::Reverse(weight[i]));
    let terms = [
        (inputs[order[0]], 1),
        (inputs[order[1]], 2),
        (inputs[order[2]], 4),
    ];
    if b.weight_of(&terms)? > params.budgets.half {
        return Ok(None);
    }
    let s = b.linear(&terms, 0)?;
    // Inputs that share fresh values can widen the selector's range past
    // its 8 values: one table each then.
    if !on_even_positions(b, s, 7 * ONE)? {
        return Ok(None);
    }
    let table = |f: &dyn Fn([bool; 3]) -> bool| -> Result<Lut, Error> {
        let points: Vec<(i64, i64)> = (0..8)
            .map(|v| {
                let mut bits = [false; 3];
                for (shift, &i) in order.iter().enumerate() {
                    bits[i] = (v >> shift) & 1 == 1;
                }
                (ONE * v, if f(bits) { ONE } else { 0 })
            })
            .collect();
        Ok(Lut::from_points(params.pi, &points)?)
    };
    let (ta, tb) = (table(fs[0])?, table(fs[1])?);
    let out = b.bootstrap_many(s, &[&ta, &tb])?;
    Ok(Some([out[0], out[1]]))
}

/// A two-input gate.
pub fn gate(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    g: Gate,
    x: Wire,
    y: Wire,
) -> Result<Wire, Error> {
    let out = must(b, sel, &[x, y], &format!("{g:?}"), &|v| g.eval(v[0], v[1]))?;
    guard_gate(b, g, x, y, out)?;
    Ok(out)
}

/// Notes what `out = g(x, y)` implies ([`crate::circuit::guard`]): an AND
/// is set only when its inputs taken as they are are set; an OR or an XOR
/// only when one of its inputs is.
pub(crate) fn guard_gate(
    b: &mut CircuitBuilder,
    g: Gate,
    x: Wire,
    y: Wire,
    out: Wire,
) -> Result<(), Error> {
    Ok(match g {
        Gate::And => b.guard_and(out, &[x, y]),
        Gate::AndNY => b.guard_and(out, &[y]),
        Gate::AndYN => b.guard_and(out, &[x]),
        Gate::Or | Gate::Xor => b.guard_or(out, x, y),
        _ => Ok(()),
    }?)
}

/// Majority of three (2OF3): the carry of a full adder.
pub fn maj(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    x: Wire,
    y: Wire,
    z: Wire,
) -> Result<Wire, Error> {
    must(b, sel, &[x, y, z], "MAJ", &|v| {
        (v[0] as u8 + v[1] as u8 + v[2] as u8) >= 2
    })
}

/// `x xor y xor z`: the sum of a full adder.
pub fn xor3(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    x: Wire,
    y: Wire,
    z: Wire,
) -> Result<Wire, Error> {
    must(b, sel, &[x, y, z], "XOR3", &|v| v[0] ^ v[1] ^ v[2])
}

/// `if s { x } else { y }`: one bootstrap where a form exists, else
/// `(s and x) + (not s and y)` (two bootstraps side by side; the sum of two
/// bits of which at most one is set is linear).
pub fn mux(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    s: Wire,
    x: Wire,
    y: Wire,
) -> Result<Wire, Error> {
    if let Some(w) = threshold(b, sel, &[s, x, y], &|v| if v[0] { v[1] } else { v[2] })? {
        return Ok(w);
    }
    let a = gate(b, sel, Gate::And, s, x)?;
    let c = gate(b, sel, Gate::AndNY, s, y)?;
    let sum = b.add(a, c)?;
    Ok(b.assume_range(sum, 0, ONE, ONE)?)
}

/// A fresh copy of bit `x` (one bootstrap): restores weight 1.
pub fn refresh(b: &mut CircuitBuilder, x: Wire) -> Result<Wire, Error> {
    if b.constant_value(x)?.is_some() {
        return Ok(x);
    }
    Selectors::for_bits().refresh(b, x)
}

/// Full adder: `(sum, carry)` of three bits for one bootstrap: the carry is
/// the majority, the sum `x + y + z - 2 carry` is linear (weight up to 7
/// with fresh inputs).
pub fn full_add(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    x: Wire,
    y: Wire,
    z: Wire,
) -> Result<(Wire, Wire), Error> {
    let c = maj(b, sel, x, y, z)?;
    Ok((sum_bit(b, sel, [x, y, z], c)?, c))
}

/// The sum bit `x xor y xor z` given their carry `c`: linear,
/// `x + y + z - 2c`, where its weight allows; else XOR3 (one bootstrap).
pub(crate) fn sum_bit(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    [x, y, z]: [Wire; 3],
    c: Wire,
) -> Result<Wire, Error> {
    let terms = [(x, 1), (y, 1), (z, 1), (c, -2)];
    if b.weight_of(&terms)? <= b.params().budgets.one {
        let s = b.linear(&terms, 0)?;
        return Ok(b.assume_range(s, 0, ONE, ONE)?);
    }
    xor3(b, sel, x, y, z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend};
    use crate::crypto::params::{DIGITS_128, INSECURE_TEST_BITS as P};

    /// Fuzzing regression (`fuzz/`, target `program`): a function of six
    /// distinct inputs (a column counter of an 8-bit product) overflowed
    /// `1 << 64` computing the all-ones truth table, a panic in debug
    /// builds. Constant functions of six inputs are now folded like those
    /// of fewer.
    #[test]
    fn six_input_functions_fold_constants() {
        let mut b = CircuitBuilder::new(&P);
        let x: Vec<Wire> = (0..6)
            .map(|_| b.input_with_step(0, 2, 2).unwrap())
            .collect();
        let mut sel = Selectors::for_bits();
        for (value, constant) in [(ONE, true), (0, false)] {
            let w = threshold(&mut b, &mut sel, &x, &|_| constant)
                .unwrap()
                .unwrap();
            assert_eq!(b.constant_value(w).unwrap(), Some(value));
        }
        // A non-constant one of six inputs: no panic, a form or none.
        let parity = |v: &[bool]| v.iter().filter(|&&t| t).count() % 2 == 1;
        assert!(threshold(&mut b, &mut sel, &x, &parity).is_ok());
    }

    /// Every gate, majority, XOR3 and MUX on every input combination.
    #[test]
    fn gates_are_exact_on_every_input() {
        for params in [&P, &DIGITS_128] {
            let mut b = CircuitBuilder::new(params);
            let x: Vec<Wire> = (0..3)
                .map(|_| b.input_with_step(0, 2, 2).unwrap())
                .collect();
            let mut sel = Selectors::for_bits();
            let mut outs = Vec::new();
            for g in Gate::ALL {
                outs.push(gate(&mut b, &mut sel, g, x[0], x[1]).unwrap());
            }
            outs.push(maj(&mut b, &mut sel, x[0], x[1], x[2]).unwrap());
            outs.push(xor3(&mut b, &mut sel, x[0], x[1], x[2]).unwrap());
            outs.push(mux(&mut b, &mut sel, x[0], x[1], x[2]).unwrap());
            let (s, c) = full_add(&mut b, &mut sel, x[0], x[1], x[2]).unwrap();
            outs.extend([s, c]);
            for &o in &outs {
                b.output(o).unwrap();
            }
            let circuit = b.build();
            for combo in 0..8u64 {
                let v: Vec<bool> = (0..3).map(|i| (combo >> i) & 1 == 1).collect();
                let ins: Vec<u64> = v.iter().map(|&t| 2 * t as u64).collect();
                let out = ClearBackend.evaluate(&circuit, &ins).unwrap();
                let mut want: Vec<bool> = Gate::ALL.iter().map(|g| g.eval(v[0], v[1])).collect();
                let count = v.iter().filter(|&&t| t).count();
                want.push(count >= 2);
                want.push(count % 2 == 1);
                want.push(if v[0] { v[1] } else { v[2] });
                want.extend([count % 2 == 1, count >= 2]);
                let got: Vec<bool> = out.iter().map(|&o| o == 2).collect();
                assert!(out.iter().all(|&o| o == 0 || o == 2), "{out:?}");
                assert_eq!(got, want, "{} inputs {v:?}", params.name);
            }
        }
    }

    #[test]
    fn forms_on_gates_128() {
        let b = CircuitBuilder::new(&P);
        let and = form(&b, 2, 0b1000).unwrap();
        assert_eq!(
            (and.coefs.iter().map(|c| c * c).sum::<i64>(), and.level),
            (2, Margin::One)
        );
        let xor = form(&b, 2, 0b0110).unwrap();
        assert_eq!(
            (xor.coefs.iter().map(|c| c * c).sum::<i64>(), xor.level),
            (8, Margin::Two)
        );
        let maj = form(&b, 3, 0b1110_1000).unwrap();
        assert_eq!(maj.level, Margin::One);
        // MUX(s, x, y) is no threshold on pi = 3.
        let mux_truth = (0..8u64)
            .filter(|&c| if c & 1 == 1 { c & 2 != 0 } else { c & 4 != 0 })
            .fold(0, |t, c| t | 1 << c);
        assert!(form(&b, 3, mux_truth).is_none());
    }

    #[test]
    fn constants_and_copies_are_free() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input_with_step(0, 2, 2).unwrap();
        let one = b.constant(2);
        let zero = b.constant(0);
        let mut sel = Selectors::for_bits();
        assert_eq!(gate(&mut b, &mut sel, Gate::And, x, one).unwrap(), x);
        let z = gate(&mut b, &mut sel, Gate::And, x, zero).unwrap();
        assert_eq!(b.constant_value(z).unwrap(), Some(0));
        let nx = gate(&mut b, &mut sel, Gate::Nand, x, x).unwrap();
        assert_eq!(b.quadratic_weight(nx).unwrap(), 1);
        assert_eq!(b.build().stats().pbs, 0);
    }
}

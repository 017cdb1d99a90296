//! Many small boolean functions computed side by side. Two functions
//! that read three bits between them share one bootstrap where the set
//! has room (two tables of one selector, [`two_of_three`]); the others
//! cost one each, or nothing (constants, copies and negations).

use super::gates::{mux, reduce, threshold, two_of_three, Reduced};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::error::Error;

/// A boolean function of a few bits.
type Table<'a> = Box<dyn Fn(&[bool]) -> bool + 'a>;

/// `f` of the bits `inputs` (a clear, repeated or ignored input is
/// folded away first).
pub(crate) struct Function<'a> {
    pub(crate) inputs: Vec<Wire>,
    pub(crate) f: Table<'a>,
}

impl<'a> Function<'a> {
    pub(crate) fn new(inputs: Vec<Wire>, f: impl Fn(&[bool]) -> bool + 'a) -> Self {
        Function {
            inputs,
            f: Box::new(f),
        }
    }
}

/// The outputs of `fs`, in order. Pairs are matched greedily, the
/// functions with the fewest possible partners first.
pub(crate) fn functions(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    fs: &[Function],
) -> Result<Vec<Wire>, Error> {
    let reduced: Vec<Reduced> = fs
        .iter()
        .map(|f| reduce(b, &f.inputs, &*f.f))
        .collect::<Result<_, _>>()?;
    let n = fs.len();
    let mut out: Vec<Option<Wire>> = vec![None; n];
    for (i, r) in reduced.iter().enumerate() {
        if r.inputs.len() <= 1 {
            out[i] = Some(single(b, sel, r)?);
        }
    }
    let pairable = |i: usize| matches!(reduced[i].inputs.len(), 2 | 3);
    let partners: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            if !pairable(i) {
                return Vec::new();
            }
            (0..n)
                .filter(|&j| j != i && pairable(j))
                .filter(|&j| union(&reduced[i], &reduced[j]).is_some())
                .collect()
        })
        .collect();
    let mut order: Vec<usize> = (0..n).filter(|&i| !partners[i].is_empty()).collect();
    order.sort_by_key(|&i| partners[i].len());
    let mut paired = vec![false; n];
    for i in order {
        if paired[i] {
            continue;
        }
        let Some(&j) = partners[i]
            .iter()
            .filter(|&&j| !paired[j])
            .min_by_key(|&&j| partners[j].len())
        else {
            continue;
        };
        let Some(u) = union(&reduced[i], &reduced[j]) else {
            continue;
        };
        let (ri, rj) = (&reduced[i], &reduced[j]);
        let fi = |v: [bool; 3]| eval(ri, u, v);
        let fj = |v: [bool; 3]| eval(rj, u, v);
        if let Some([p, q]) = two_of_three(b, u, [&fi, &fj])? {
            (out[i], out[j]) = (Some(p), Some(q));
            paired[i] = true;
            paired[j] = true;
        }
    }
    (0..n)
        .map(|i| match out[i] {
            Some(w) => Ok(w),
            None => single(b, sel, &reduced[i]),
        })
        .collect()
}

/// The inputs of two reduced functions together, if they are three.
fn union(x: &Reduced, y: &Reduced) -> Option<[Wire; 3]> {
    let mut all: Vec<Wire> = x.inputs.clone();
    for w in &y.inputs {
        if !all.contains(w) {
            all.push(*w);
        }
    }
    all.try_into().ok()
}

/// `r` on the bits `v` of the wires `u` (a superset of its inputs).
fn eval(r: &Reduced, u: [Wire; 3], v: [bool; 3]) -> bool {
    let combo = r.inputs.iter().enumerate().fold(0u64, |c, (k, w)| {
        let at = u.iter().position(|x| x == w).expect("in the union");
        c | (v[at] as u64) << k
    });
    (r.truth >> combo) & 1 == 1
}

/// One function alone: one bootstrap where a form exists (a threshold, or
/// one table of a three-bit selector), else a multiplexer of its two
/// cofactors on its first input.
fn single(b: &mut CircuitBuilder, sel: &mut Selectors, r: &Reduced) -> Result<Wire, Error> {
    let truth = r.truth;
    let f = |v: &[bool]| {
        let combo = v
            .iter()
            .enumerate()
            .fold(0u64, |c, (k, &x)| c | (x as u64) << k);
        (truth >> combo) & 1 == 1
    };
    if let Some(w) = threshold(b, sel, &r.inputs, &f)? {
        return Ok(w);
    }
    if let Ok(u) = <[Wire; 3]>::try_from(r.inputs.as_slice()) {
        let g = |v: [bool; 3]| f(&v);
        if let Some([w, _]) = two_of_three(b, u, [&g, &g])? {
            return Ok(w);
        }
    }
    let (&first, rest) = r.inputs.split_first().expect("constants are thresholds");
    let cofactor = |bit: u64| Reduced {
        inputs: rest.to_vec(),
        truth: (0..1u64 << rest.len()).fold(0, |t, c| t | ((truth >> (c << 1 | bit)) & 1) << c),
    };
    let hi = single(b, sel, &cofactor(1))?;
    let lo = single(b, sel, &cofactor(0))?;
    mux(b, sel, first, hi, lo)
}

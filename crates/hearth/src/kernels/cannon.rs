//! Cannon's algorithm: a matrix product run as `q` stages so that only
//! `1/q` of its products are alive at once (the CPU-GPU paper's
//! memory-bounded variant, section V).
//!
//! The matrices are cut into `q x q` blocks. In stage `s`, block `(i, j)`
//! of the result adds `A(i, t) B(t, j)` with `t = (i + j + s) mod q` (the
//! shifted pairing of Cannon's cycles), so every stage uses each block of
//! `A` and `B` once and does `1/q` of the work. Each stage is its own
//! compiled program: it takes `A`, `B` and the running sums, and returns
//! the new running sums, each one fused sum (products plus the previous
//! sum as one more row). Between stages only the `m n` running sums stay
//! alive; [`CannonPlan::memory_estimate`] is the largest stage's.

use num_bigint::BigInt;

use super::Element;
use crate::api::{CompiledProgram, Encrypted, Program, Shape};
use crate::backend::Backend;
use crate::crypto::keys::Ciphertext;
use crate::crypto::params::ParameterSet;
use crate::error::Error;

/// A matrix product `[m, k] x [k, n]` planned as Cannon stages.
pub struct CannonPlan {
    stages: Vec<CompiledProgram>,
    m: usize,
    k: usize,
    n: usize,
}

/// `0..len` cut into `q` near-equal ranges (some empty when `q > len`).
fn cuts(len: usize, q: usize) -> Vec<std::ops::Range<usize>> {
    (0..q).map(|i| i * len / q..(i + 1) * len / q).collect()
}

/// An integer family as a type, for code that makes its own programs.
pub trait Family {
    /// The family's element in a program.
    type E<'p>: Element<'p>;
    /// An encrypted input of `shape` (the family's own shapes only).
    fn input(program: &Program, shape: Shape) -> Self::E<'_>;
}

/// Exact [`crate::Int`]s.
pub struct Ints;

/// [`crate::Word`]s of `BITS` bits.
pub struct Words<const BITS: usize, const SIGNED: bool>;

impl Family for Ints {
    type E<'p> = crate::Int<'p>;
    fn input(program: &Program, shape: Shape) -> crate::Int<'_> {
        program.input(shape.len())
    }
}

impl<const BITS: usize, const SIGNED: bool> Family for Words<BITS, SIGNED> {
    type E<'p> = crate::Word<'p, BITS, SIGNED>;
    fn input(program: &Program, _: Shape) -> crate::Word<'_, BITS, SIGNED> {
        crate::Word::input(program)
    }
}

impl CannonPlan {
    /// Plans `[m, k] x [k, n]` for family `F` on `params` in `q` stages;
    /// the operands' elements have shape `element`.
    pub fn new<F: Family>(
        params: &'static ParameterSet,
        (m, k, n): (usize, usize, usize),
        element: Shape,
        q: usize,
        threads: usize,
    ) -> Result<Self, Error> {
        if q == 0 {
            return Err(Error::Dimensions(
                "Cannon's algorithm needs q >= 1 blocks".into(),
            ));
        }
        let (rm, rk, rn) = (cuts(m, q), cuts(k, q), cuts(n, q));
        // Block index of every row of A and column of B.
        let block = |r: &[std::ops::Range<usize>], x: usize| {
            r.iter().position(|c| c.contains(&x)).unwrap_or(0)
        };
        let one = BigInt::from(1);
        let zero = BigInt::from(0);
        let mut stages: Vec<CompiledProgram> = Vec::with_capacity(q);
        for s in 0..q {
            let p = Program::new(params);
            p.set_threads(threads);
            {
                let a: Vec<F::E<'_>> = (0..m * k).map(|_| F::input(&p, element)).collect();
                let b: Vec<F::E<'_>> = (0..k * n).map(|_| F::input(&p, element)).collect();
                // The running sums, shaped as the previous stage returned them.
                let acc: Option<Vec<F::E<'_>>> = stages.last().map(|prev| {
                    prev.output_shapes()
                        .iter()
                        .map(|&shape| F::input(&p, shape))
                        .collect()
                });
                let mut results = Vec::with_capacity(m * n);
                for i in 0..m {
                    for j in 0..n {
                        let t = (block(&rm, i) + block(&rn, j) + s) % q;
                        let pairs: Vec<_> = rk[t]
                            .clone()
                            .map(|l| (&a[i * k + l], &b[l * n + j]))
                            .collect();
                        let scaled: Vec<_> =
                            acc.iter().map(|acc| (&acc[i * n + j], &one)).collect();
                        results.push(Element::fused_sum(&p, &pairs, &scaled, &zero));
                    }
                }
                for r in &results {
                    p.output(r);
                }
            }
            stages.push(p.build()?);
        }
        Ok(CannonPlan { stages, m, k, n })
    }

    /// The stage programs, in order.
    pub fn stages(&self) -> &[CompiledProgram] {
        &self.stages
    }

    /// Bytes the largest stage needs ([`CompiledProgram::memory_estimate`]).
    pub fn memory_estimate(&self, threads: usize) -> u64 {
        self.stages
            .iter()
            .map(|s| s.memory_estimate(threads))
            .max()
            .unwrap_or(0)
    }

    /// Runs the stages on `backend`: `a` and `b` hold one digit vector per
    /// element (row-major); returns the `m n` results.
    pub fn run<B: Backend>(
        &self,
        backend: &B,
        a: &[Vec<B::Digit>],
        b: &[Vec<B::Digit>],
    ) -> Result<Vec<Vec<B::Digit>>, Error>
    where
        B::Digit: Clone,
    {
        if a.len() != self.m * self.k || b.len() != self.k * self.n {
            return Err(Error::Dimensions(format!(
                "Cannon plan for {}x{} by {}x{}: {} and {} elements given",
                self.m,
                self.k,
                self.k,
                self.n,
                a.len(),
                b.len()
            )));
        }
        let mut acc: Vec<Vec<B::Digit>> = Vec::new();
        for stage in &self.stages {
            let mut ins: Vec<Vec<B::Digit>> = a.iter().chain(b).cloned().collect();
            ins.append(&mut acc);
            acc = stage.run(backend, &ins)?;
        }
        Ok(acc)
    }

    /// [`CannonPlan::run`] on encrypted values.
    pub fn run_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        backend: &B,
        a: &[Encrypted],
        b: &[Encrypted],
    ) -> Result<Vec<Encrypted>, Error> {
        let cts = |xs: &[Encrypted]| {
            xs.iter()
                .map(|x| x.ciphertexts().to_vec())
                .collect::<Vec<_>>()
        };
        let out = self.run(backend, &cts(a), &cts(b))?;
        let shapes = self
            .stages
            .last()
            .map(|s| s.output_shapes().to_vec())
            .unwrap_or_default();
        out.into_iter()
            .zip(shapes)
            .map(|(c, s)| Encrypted::new(s, c))
            .collect()
    }
}

//! The benchmarked operations, each as a one-operation program, beside
//! PARMESAN's published cost (Table 5 of the PARMESAN paper, or its cost
//! formulas where the table has no entry).

use hearth::crypto::params::ParameterSet;
use hearth::{CompiledProgram, Error, Program};

/// One benchmarked operation on `n`-digit operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// The exact product `x * y`.
    Mul,
    /// The product wrapped to the operands' `n` bits (`i{n}::wrapping_mul`).
    MulWrapping,
    /// `x * x`.
    Square,
    /// `x * x` wrapped to `n` bits (`x.wrapping_mul(&x, n)`).
    SquareWrapping,
    /// `x * k` for a clear `k`.
    ScalarMul(i64),
    /// `x * k` wrapped to `n` bits (`x.wrapping_mul(&constant(k), n)`).
    ScalarMulWrapping(i64),
    /// The sign of `x`.
    Signum,
    /// `max(x, y)`.
    Max,
    /// `x < y`.
    Lt,
    /// `x == y`.
    Eq,
    /// Rounding at digit position `i`.
    Round(usize),
    /// `|x - y|`.
    AbsDiff,
    /// `x ** e` for a clear `e`.
    Pow(u32),
}

/// How a benchmarked operation's inputs are encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// `n` signed-binary digits ([`Program::input`]): PARMESAN's inputs.
    SignedBinary,
    /// `n`-bit two's complement ([`Program::input_twos`]): tfhe-rs's
    /// `FheInt` inputs.
    Twos,
}

/// PARMESAN's depth, #PBS and widest level for one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Reference {
    /// Depth in bootstraps.
    pub depth: u32,
    /// Bootstraps.
    pub pbs: usize,
    /// The widest level (bootstraps that can run at once), where given.
    pub threads: Option<usize>,
    /// `true` when taken from Table 5, `false` when from the paper's formulas.
    pub table: bool,
}

/// An operation's name on the command line (`--ops`): its name in the
/// table in words joined by `-` (`mul (wrapping)` is `mul-wrapping`,
/// `scalar mul x805` is `scalar-mul-x805`).
pub fn slug(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The items of `all` that `names` call (by `name` or its [`slug`]), in
/// `all`'s order; every one when `names` is empty; an unknown name is an
/// error listing the slugs.
pub fn select<T: Copy>(
    all: &[T],
    names: &[String],
    name: impl Fn(&T) -> String,
) -> Result<Vec<T>, Error> {
    let called = |item: &T, n: &String| {
        let full = name(item);
        full == *n || slug(&full) == *n
    };
    if let Some(n) = names
        .iter()
        .find(|n| !all.iter().any(|item| called(item, n)))
    {
        let known: Vec<String> = all.iter().map(|item| slug(&name(item))).collect();
        return Err(Error::Config(format!(
            "--ops: no operation `{n}`; the operations are {}",
            known.join(", ")
        )));
    }
    Ok(all
        .iter()
        .copied()
        .filter(|item| names.is_empty() || names.iter().any(|n| called(item, n)))
        .collect())
}

impl Op {
    /// Every operation of `hearth bench ops`.
    pub const ALL: [Op; 19] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::MulWrapping,
        Op::Square,
        Op::SquareWrapping,
        Op::ScalarMul(805),
        Op::ScalarMulWrapping(805),
        Op::ScalarMul(3195),
        Op::ScalarMul(4095),
        Op::ScalarMul(4096),
        Op::ScalarMul(4097),
        Op::Signum,
        Op::Max,
        Op::Lt,
        Op::Eq,
        Op::Round(5),
        Op::AbsDiff,
        Op::Pow(3),
    ];

    /// Its name in tables.
    pub fn name(self) -> String {
        match self {
            Op::Add => "add".into(),
            Op::Sub => "sub".into(),
            Op::Mul => "mul".into(),
            Op::MulWrapping => "mul (wrapping)".into(),
            Op::Square => "square".into(),
            Op::SquareWrapping => "square (wrapping)".into(),
            Op::ScalarMul(k) => format!("scalar mul x{k}"),
            Op::ScalarMulWrapping(k) => format!("scalar mul x{k} (wrapping)"),
            Op::Signum => "signum".into(),
            Op::Max => "max".into(),
            Op::Lt => "lt".into(),
            Op::Eq => "eq".into(),
            Op::Round(i) => format!("round at {i}"),
            Op::AbsDiff => "abs diff".into(),
            Op::Pow(e) => format!("pow {e}"),
        }
    }

    /// The operations named (by their names in the table or their [`slug`]s),
    /// in table order; every one when `names` is empty.
    pub fn named(names: &[String]) -> Result<Vec<Op>, Error> {
        select(&Op::ALL, names, |op| op.name())
    }

    /// Number of inputs.
    pub fn arity(self) -> usize {
        match self {
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::MulWrapping
            | Op::Max
            | Op::Lt
            | Op::Eq
            | Op::AbsDiff => 2,
            _ => 1,
        }
    }

    /// Plain integer semantics on `n`-bit operands, for checking.
    pub fn reference(self, x: i128, y: i128, n: usize) -> i128 {
        match self {
            Op::MulWrapping | Op::SquareWrapping | Op::ScalarMulWrapping(_) => {
                let p = match self {
                    Op::SquareWrapping => x * x,
                    Op::ScalarMulWrapping(k) => x * k as i128,
                    _ => x * y,
                };
                let m = 1i128 << n;
                (p.rem_euclid(m) + m / 2).rem_euclid(m) - m / 2
            }
            Op::Eq => (x == y) as i128,
            Op::Add => x + y,
            Op::Sub => x - y,
            Op::Mul => x * y,
            Op::Square => x * x,
            Op::ScalarMul(k) => x * k as i128,
            Op::Signum => x.signum(),
            Op::Max => x.max(y),
            Op::AbsDiff => (x - y).abs(),
            Op::Pow(e) => x.pow(e),
            Op::Lt => (x < y) as i128,
            Op::Round(i) => {
                if i == 0 {
                    x
                } else {
                    (x + (1 << (i - 1))).div_euclid(1 << i) << i
                }
            }
        }
    }

    /// The operation alone, on `n`-digit signed-binary inputs.
    pub fn program(
        self,
        params: &'static ParameterSet,
        n: usize,
    ) -> Result<CompiledProgram, Error> {
        self.program_on(params, n, Inputs::SignedBinary, None)
    }

    /// The operation alone, on `n`-digit inputs of the given kind,
    /// planned for `threads` (default: this machine's cores).
    pub fn program_on(
        self,
        params: &'static ParameterSet,
        n: usize,
        inputs: Inputs,
        threads: Option<usize>,
    ) -> Result<CompiledProgram, Error> {
        let p = Program::new(params);
        if let Some(t) = threads {
            p.set_threads(t);
        }
        let input = || match inputs {
            Inputs::SignedBinary => p.input(n),
            Inputs::Twos => p.input_twos(n),
        };
        let x = input();
        let out = match self {
            Op::Add => &x + &input(),
            Op::Sub => &x - &input(),
            Op::Mul => &x * &input(),
            Op::MulWrapping => x.wrapping_mul(&input(), n),
            Op::Square => x.square(),
            Op::SquareWrapping => x.wrapping_mul(&x, n),
            Op::ScalarMul(k) => &x * k,
            Op::ScalarMulWrapping(k) => x.wrapping_mul(&p.constant(k), n),
            Op::Signum => x.signum(),
            Op::Max => x.max(&input()),
            Op::Lt => x.lt(&input()),
            Op::Eq => x.eq(&input()),
            Op::Round(i) => x.round(i),
            Op::AbsDiff => x.abs_diff(&input()),
            Op::Pow(e) => x.pow(e as usize),
        };
        p.output(&out);
        p.build()
    }

    /// PARMESAN's cost at `n` bits, where the paper gives one.
    pub fn parmesan(self, n: usize) -> Option<Reference> {
        let table = |depth, pbs, threads| {
            Some(Reference {
                depth,
                pbs,
                threads: Some(threads),
                table: true,
            })
        };
        let formula = |depth, pbs| {
            Some(Reference {
                depth,
                pbs,
                threads: None,
                table: false,
            })
        };
        // S_4(n) = sum of ceil(n / 4^k) over the levels of a signum reduction.
        let s = |n: usize| {
            let (mut total, mut m, mut levels) = (0, n, 0);
            while m > 1 {
                m = m.div_ceil(4);
                total += m;
                levels += 1;
            }
            (levels.max(1), total.max(1))
        };
        match (self, n) {
            (Op::Add | Op::Sub, _) => formula(2, 2 * n),
            (Op::ScalarMul(4095), 16) => table(2, 32, 16),
            (Op::ScalarMul(4096), 16) => table(0, 0, 0),
            (Op::ScalarMul(4097), 16) => table(2, 32, 16),
            (Op::ScalarMul(805 | 3195), 16) => table(6, 114, 22),
            (Op::Mul, 4) => table(7, 40, 16),
            (Op::Mul, 8) => table(15, 176, 64),
            (Op::Mul, 16) => table(23, 725, 81),
            (Op::Mul, 32) => table(41, 2617, 289),
            (Op::Square, 4) => table(5, 24, 5),
            (Op::Square, 8) => table(11, 122, 16),
            (Op::Square, 16) => table(19, 488, 64),
            (Op::Square, 32) => table(27, 1837, 129),
            (Op::Signum, 32) => table(3, 11, 8),
            (Op::Signum, _) => {
                let (d, p) = s(n);
                formula(d, p)
            }
            (Op::Max, 32) => table(6, 109, 32),
            (Op::Max, _) => {
                let (d, p) = s(n + 1);
                formula(2 + d + 1, 2 * n + p + n)
            }
            (Op::Round(5), 32) => table(4, 56, 27),
            (Op::Round(i), _) if i > 1 && i <= n => {
                let (d, p) = s(i - 1);
                formula(d + 1 + 2, p + 1 + 2 * (n - i))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::crypto::params::DIGITS_128;

    /// The hardware-independent claim: no depth and no #PBS above
    /// PARMESAN's, at 4, 8, 16 and 32 bits.
    #[test]
    fn every_cost_is_at_most_parmesans() {
        for op in Op::ALL {
            for n in [4, 8, 16, 32] {
                let Some(r) = op.parmesan(n) else { continue };
                let st = op.program(&DIGITS_128, n).unwrap().circuit().stats();
                assert!(
                    st.depth <= r.depth && st.pbs <= r.pbs,
                    "{} at {n}: depth {} #PBS {} vs PARMESAN {} / {}",
                    op.name(),
                    st.depth,
                    st.pbs,
                    r.depth,
                    r.pbs
                );
            }
        }
    }

    /// Two's-complement inputs skip the subtraction's transfers and the
    /// comparisons' subtraction: the counts tfhe-rs's `FheInt` is measured
    /// against (`hearth bench tfhe-pbs`: sub 16 / 32, lt 11 / 23, eq 11 / 21,
    /// max 35 / 71 at 16 / 32 bits) are not exceeded, at no more depth than
    /// signed-binary inputs need.
    #[test]
    fn twos_inputs_cost_less() {
        let tfhe_rs = [
            (Op::Add, [16, 32]),
            (Op::Sub, [16, 32]),
            (Op::Lt, [11, 23]),
            (Op::Eq, [11, 21]),
            (Op::Max, [35, 71]),
        ];
        for (op, counts) in tfhe_rs {
            for (n, limit) in [16, 32].into_iter().zip(counts) {
                let tw = op.program_on(&DIGITS_128, n, Inputs::Twos, None).unwrap();
                let sb = op.program(&DIGITS_128, n).unwrap();
                let (tw, sb) = (tw.circuit().stats(), sb.circuit().stats());
                assert!(tw.pbs <= limit, "{} at {n}: {} PBS", op.name(), tw.pbs);
                assert!(tw.pbs <= sb.pbs && tw.depth <= sb.depth, "{}", op.name());
            }
        }
        let sub = Op::Sub
            .program_on(&DIGITS_128, 32, Inputs::Twos, None)
            .unwrap();
        assert_eq!(
            (sub.circuit().stats().pbs, sub.circuit().stats().depth),
            (16, 1)
        );
    }
}

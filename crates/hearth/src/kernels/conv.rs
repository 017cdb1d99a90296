//! 2-D convolutions over `[channels, height, width]` feature maps, ReLU and
//! pooling (the CSA paper's CNN kernel, section V.C).

use num_bigint::BigInt;

use super::{Element, Tensor};
use crate::api::Program;
use crate::error::Error;

/// Convolution weights `[R out channels, Q in channels, K, L]`.
pub enum Weights<'a, E> {
    /// Clear weights: shifted copies of the inputs, no product bootstraps.
    Clear(&'a Tensor<BigInt>),
    /// Encrypted weights: one general product per tap.
    Encrypted(&'a Tensor<E>),
}

impl<E> Weights<'_, E> {
    fn shape(&self) -> &[usize] {
        match self {
            Weights::Clear(t) => t.shape(),
            Weights::Encrypted(t) => t.shape(),
        }
    }
}

/// Zero padding on every side (padded taps are skipped: they cost nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Padding(pub usize);

/// The loop order of the CSA paper's convolution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvOrder {
    /// Version 1: each output sums all its taps (channels and kernel
    /// positions) as one fused sum, finished once. Fewest bootstraps.
    #[default]
    PerOutput,
    /// Version 2: kernel taps outside, feature-map positions inside: every
    /// output accumulates one tap at a time into its running (redundant)
    /// sum. More, smaller steps; the paper's order for large filters.
    PerTap,
}

/// `x * w + bias`: `x` is `[Q, H, W]`, `w` is `[R, Q, K, L]`, `bias` is
/// `[R]`; the result is `[R, (H + 2p - K) / stride + 1, (W + 2p - L) /
/// stride + 1]` (cross-correlation, as in CNNs).
#[allow(clippy::too_many_arguments)]
pub fn conv2d<'p, E: Element<'p>>(
    program: &'p Program,
    x: &Tensor<E>,
    w: &Weights<'_, E>,
    bias: Option<&Tensor<BigInt>>,
    stride: usize,
    padding: Padding,
    order: ConvOrder,
) -> Result<Tensor<E>, Error> {
    x.expect_rank("a convolution's input [Q, H, W]", 3)?;
    let ws = w.shape();
    if ws.len() != 4 || ws[1] != x.shape()[0] {
        return Err(Error::Dimensions(format!(
            "convolution weights must be [R, Q, K, L] with Q = {} input channels, their shape is \
             {ws:?}",
            x.shape()[0]
        )));
    }
    let (q, h, wid) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    let (r, kh, kw) = (ws[0], ws[2], ws[3]);
    let p = padding.0;
    if stride == 0 || h + 2 * p < kh || wid + 2 * p < kw {
        return Err(Error::Dimensions(format!(
            "a {kh}x{kw} kernel with stride {stride} and padding {p} on a {h}x{wid} input"
        )));
    }
    if let Some(bias) = bias {
        if bias.shape() != [r] {
            return Err(Error::Dimensions(format!(
                "bias of shape {:?} for {r} output channels",
                bias.shape()
            )));
        }
    }
    let oh = (h + 2 * p - kh) / stride + 1;
    let ow = (wid + 2 * p - kw) / stride + 1;
    let zero = BigInt::from(0);
    // The input element under tap (c, k, l) of output (i, j), if any.
    let input = |c: usize, i: usize, j: usize, k: usize, l: usize| -> Option<&E> {
        let (y, z) = (
            (i * stride + k).checked_sub(p)?,
            (j * stride + l).checked_sub(p)?,
        );
        (y < h && z < wid).then(|| &x.data()[(c * h + y) * wid + z])
    };
    let taps: Vec<(usize, usize, usize)> = (0..q)
        .flat_map(|c| (0..kh).flat_map(move |k| (0..kw).map(move |l| (c, k, l))))
        .collect();
    let widx = |o: usize, (c, k, l): (usize, usize, usize)| ((o * q + c) * kh + k) * kw + l;
    Tensor::from_fn(&[r, oh, ow], |idx| {
        let (o, i, j) = (idx[0], idx[1], idx[2]);
        let b = bias.map_or(&zero, |bias| &bias.data()[o]);
        let present: Vec<(&E, usize)> = taps
            .iter()
            .filter_map(|&t| input(t.0, i, j, t.1, t.2).map(|e| (e, widx(o, t))))
            .collect();
        let sum = |terms: &[(&E, usize)], acc: Option<&E>, b: &BigInt| -> E {
            let one = BigInt::from(1);
            match w {
                Weights::Clear(wt) => {
                    let mut scaled: Vec<_> =
                        terms.iter().map(|&(e, t)| (e, &wt.data()[t])).collect();
                    scaled.extend(acc.map(|a| (a, &one)));
                    E::fused_sum(program, &[], &scaled, b)
                }
                Weights::Encrypted(wt) => {
                    let pairs: Vec<_> = terms.iter().map(|&(e, t)| (e, &wt.data()[t])).collect();
                    let scaled: Vec<_> = acc.map(|a| (a, &one)).into_iter().collect();
                    E::fused_sum(program, &pairs, &scaled, b)
                }
            }
        };
        match order {
            ConvOrder::PerOutput => sum(&present, None, b),
            ConvOrder::PerTap => {
                let mut acc = E::constant(program, b);
                for term in &present {
                    acc = sum(std::slice::from_ref(term), Some(&acc), &zero);
                }
                acc
            }
        }
    })
}

/// `max(x, 0)` elementwise.
pub fn relu<'p, E: Element<'p>>(x: &Tensor<E>) -> Tensor<E> {
    x.map(E::relu)
}

/// Windows `s x s`, stride `s`, of a `[C, H, W]` map (rows and columns
/// beyond the last whole window are dropped).
fn pool<'p, E: Element<'p>>(
    x: &Tensor<E>,
    s: usize,
    what: &str,
    f: impl Fn(&[&E]) -> E,
) -> Result<Tensor<E>, Error> {
    x.expect_rank(what, 3)?;
    let (c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    if s == 0 || s > h || s > w {
        return Err(Error::Dimensions(format!(
            "{what}: a {s}x{s} window on a {h}x{w} map"
        )));
    }
    Tensor::from_fn(&[c, h / s, w / s], |idx| {
        let window: Vec<&E> = (0..s * s)
            .map(|t| &x.data()[(idx[0] * h + idx[1] * s + t / s) * w + idx[2] * s + t % s])
            .collect();
        f(&window)
    })
}

/// Max-pooling `s x s` with stride `s` of `[C, H, W]`: a balanced tree of
/// maxima per window.
pub fn max_pool<'p, E: Element<'p>>(x: &Tensor<E>, s: usize) -> Result<Tensor<E>, Error> {
    pool(x, s, "max-pool of [C, H, W]", |win| {
        let mut level: Vec<E> = win.iter().map(|&e| e.clone()).collect();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|c| {
                    if c.len() == 2 {
                        c[0].max(&c[1])
                    } else {
                        c[0].clone()
                    }
                })
                .collect();
        }
        level.pop().expect("a window is not empty")
    })
}

/// Average-pooling `s x s` with stride `s`, `s` a power of two:
/// `floor(window sum / s^2)`, the sum fused, the division a shift. On
/// words the window sum wraps in the word's width, like every word sum:
/// pick a width that holds it.
pub fn avg_pool<'p, E: Element<'p>>(
    program: &'p Program,
    x: &Tensor<E>,
    s: usize,
) -> Result<Tensor<E>, Error> {
    if !s.is_power_of_two() {
        return Err(Error::Dimensions(format!(
            "average-pool window {s} is not a power of two"
        )));
    }
    let one = BigInt::from(1);
    let shift = 2 * s.trailing_zeros() as usize;
    pool(x, s, "average-pool of [C, H, W]", |win| {
        let scaled: Vec<_> = win.iter().map(|&e| (e, &one)).collect();
        E::fused_sum(program, &[], &scaled, &BigInt::from(0)).shr_floor(shift)
    })
}

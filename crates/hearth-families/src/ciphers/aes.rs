//! AES-128 under FHE, for counter mode: the key schedule once per key,
//! then one circuit per block of keystream.
//!
//! Everything but the S-box is linear over GF(2), so it is free: a bit is
//! carried as a sum of clean bits ([`Lin`]) through ShiftRows, MixColumns
//! and AddRoundKey, and only read by a bootstrap where a product needs it.
//! The S-box works in the tower field (`ciphers/tower.rs`), with the parity
//! gate ([`crate::bits::parity`]) doing each step's products and the XORs
//! around them in one bootstrap:
//!
//! * 18 bootstraps: the nine Karatsuba forms of both halves `h`, `l` of
//!   the input in the tower, each the parity of a sum;
//! * 9: `theta = LAMBDA h^2 + h l + l^2`, nine products of forms, four of
//!   them taking the linear part and the other products with them, so
//!   `theta` comes out as four clean bits;
//! * 9: `theta`'s inverse and the XOR of its bits, each a sum of
//!   functions of three of `theta`'s bits, some taking an earlier one as
//!   part of their parity (the order found by search);
//! * 18: the products `h / theta` and `l / theta`, the same way.
//!
//! That is 53 bootstraps per S-box with every output a sum of clean bits
//! (a block: 8 752 with the last round's reads and the splits of heavy
//! sums), where one gate at a time pays for every XOR too. The last round
//! has no MixColumns: its S-boxes' outputs, with the round key and the
//! owner's ciphertext bit, are read once more to give clean data bits.

use hearth_core::symmetric::aes::{AFFINE_CONSTANT, BLOCK, RCON, ROUNDS};

use super::tower::{Tower, FORMS};
use crate::bits::parity::{xor_all, xor_with};
use crate::bits::ONE;
use crate::circuit::{CircuitBuilder, Wire};
use crate::error::Error;

/// A bit as the XOR of clean bits and a constant: what the linear layers
/// carry. The same wire twice cancels.
#[derive(Clone, Debug, Default)]
pub struct Lin {
    wires: Vec<Wire>,
    one: bool,
}

impl Lin {
    /// A clean bit.
    pub fn of(w: Wire) -> Lin {
        Lin {
            wires: vec![w],
            one: false,
        }
    }

    /// A constant bit.
    pub fn constant(one: bool) -> Lin {
        Lin {
            wires: Vec::new(),
            one,
        }
    }

    /// `self ^= other`.
    pub fn add(&mut self, other: &Lin) {
        for &w in &other.wires {
            match self.wires.iter().position(|&v| v == w) {
                Some(i) => {
                    self.wires.swap_remove(i);
                }
                None => self.wires.push(w),
            }
        }
        self.one ^= other.one;
    }

    /// The XOR of clean bits.
    fn of_all(wires: impl IntoIterator<Item = Wire>) -> Lin {
        Lin::sum(&wires.into_iter().map(Lin::of).collect::<Vec<_>>())
    }

    /// The XOR of `lins`.
    fn sum<'a>(lins: impl IntoIterator<Item = &'a Lin>) -> Lin {
        let mut s = Lin::default();
        for l in lins {
            s.add(l);
        }
        s
    }

    /// The terms of a parity: the wires, and the constant as a wire.
    fn terms(&self, b: &mut CircuitBuilder) -> Vec<Wire> {
        let mut t = self.wires.clone();
        if self.one {
            t.push(b.constant(ONE));
        }
        t
    }

    /// The bit as one clean bit: a parity (none for a clean bit alone).
    pub fn clean(&self, b: &mut CircuitBuilder) -> Result<Wire, Error> {
        let t = self.terms(b);
        xor_all(b, &t)
    }
}

/// `parity(v[..n - 1]) & v[n - 1]`: a form of one factor (one or two of
/// its bits) times a clean form of the other.
fn form_times(v: &[bool]) -> bool {
    let (last, rest) = v.split_last().expect("a product has two factors");
    rest.iter().fold(false, |a, &x| a ^ x) & last
}

/// Outputs that are sums of products, each output a clean bit: output
/// `t` is `extra[t]` plus the XOR of the products in `rows[t]`. Product
/// `k` is `form_times` of the wires `factors(k)`. A product only one
/// output reads is computed by that output's bootstrap, with the other
/// products and the extra as its parity; the rest are computed alone.
fn sums_of_products(
    b: &mut CircuitBuilder,
    rows: &[u32],
    extra: &[Lin],
    factors: &dyn Fn(usize) -> Vec<Wire>,
) -> Result<Vec<Wire>, Error> {
    let columns = rows.iter().fold(0u32, |a, &r| a | r);
    let used_once = |k: usize| rows.iter().filter(|&&r| (r >> k) & 1 == 1).count() == 1;
    let mut taken = 0u32;
    let absorbed: Vec<Option<usize>> = rows
        .iter()
        .map(|&r| {
            let k =
                (0..32).find(|&k| (r >> k) & 1 == 1 && used_once(k) && (taken >> k) & 1 == 0)?;
            taken |= 1 << k;
            Some(k)
        })
        .collect();
    let mut alone: Vec<Option<Wire>> = vec![None; 32];
    for (k, slot) in alone.iter_mut().enumerate() {
        if (columns >> k) & 1 == 1 && (taken >> k) & 1 == 0 {
            *slot = Some(xor_with(b, &[], &factors(k), &form_times)?);
        }
    }
    rows.iter()
        .zip(extra)
        .zip(absorbed)
        .map(|((&r, extra), own)| {
            let mut xs = extra.terms(b);
            xs.extend(
                (0..32)
                    .filter(|&k| (r >> k) & 1 == 1 && Some(k) != own)
                    .map(|k| alone[k].expect("every product no output absorbs is computed alone")),
            );
            match own {
                Some(k) => xor_with(b, &xs, &factors(k), &form_times),
                None => xor_all(b, &xs),
            }
        })
        .collect()
}

/// The nonlinear monomials of an algebraic normal form over four bits
/// (coefficient of monomial `m` at bit `m`), grouped by the three bits
/// each group reads (a mask): greedily, the subset holding most first.
fn groups(anf: u16) -> Vec<(usize, Vec<usize>)> {
    let mut remaining: Vec<usize> = (0..16)
        .filter(|&m: &usize| (anf >> m) & 1 == 1 && m.count_ones() >= 2)
        .collect();
    let mut groups = Vec::new();
    while !remaining.is_empty() {
        let subset = [7usize, 11, 13, 14]
            .into_iter()
            .max_by_key(|&s| remaining.iter().filter(|&&m| m & !s == 0).count())
            .expect("four subsets");
        let (inside, outside): (Vec<usize>, Vec<usize>) =
            remaining.iter().partition(|&&m| m & !subset == 0);
        groups.push((subset, inside));
        remaining = outside;
    }
    groups
}

/// The order in which to compute the inverse's forms, and which forms
/// computed before each one takes as part of its parity: the order and
/// choice with the fewest groups of monomials in all (each group is a
/// bootstrap). Found once by trying every order.
fn inverse_plan() -> &'static [(usize, u8)] {
    static PLAN: std::sync::OnceLock<Vec<(usize, u8)>> = std::sync::OnceLock::new();
    PLAN.get_or_init(|| {
        let anfs = Tower::get().inverse_anf;
        let n = anfs.len();
        let cost = |a: u16| groups(a).len().max(1);
        let mut best: Option<(usize, Vec<(usize, u8)>)> = None;
        let mut order: Vec<usize> = (0..n).collect();
        // Every permutation (Heap's algorithm would do; n = 5 is small).
        let mut perms = Vec::new();
        permutations(&mut order, 0, &mut perms);
        for perm in perms {
            let mut plan = Vec::with_capacity(n);
            let mut total = 0;
            for (step, &s) in perm.iter().enumerate() {
                let (c, use_mask) = (0..1u8 << step)
                    .map(|mask| {
                        let a = (0..step)
                            .filter(|&i| (mask >> i) & 1 == 1)
                            .fold(anfs[s], |a, i| a ^ anfs[perm[i]]);
                        (cost(a), mask)
                    })
                    .min()
                    .expect("at least the empty choice");
                total += c;
                plan.push((s, use_mask));
            }
            if best.as_ref().is_none_or(|(t, _)| total < *t) {
                best = Some((total, plan));
            }
        }
        best.expect("one order at least").1
    })
}

fn permutations(v: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k == v.len() {
        out.push(v.clone());
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, out);
        v.swap(k, i);
    }
}

/// A function of four clean bits given by its algebraic normal form
/// (degree 3 at most) plus the parity `xs`, as a clean bit: its monomials
/// grouped by three of the bits, one bootstrap per group, the last
/// group's taking the others, the linear monomials, the constant and
/// `xs` as its parity.
fn normal_form(
    b: &mut CircuitBuilder,
    vars: &[Wire; 4],
    anf: u16,
    mut xs: Vec<Wire>,
) -> Result<Wire, Error> {
    if anf >> 15 == 1 {
        return Err(Error::Config(
            "a function of four bits of degree 4 is no sum of functions of three".into(),
        ));
    }
    let mut groups = groups(anf);
    xs.extend(
        (0..4)
            .filter(|&i| (anf >> (1 << i)) & 1 == 1)
            .map(|i| vars[i]),
    );
    if anf & 1 == 1 {
        xs.push(b.constant(ONE));
    }
    let Some(last) = groups.pop() else {
        return xor_all(b, &xs);
    };
    let gate = |subset: usize, monomials: Vec<usize>| {
        let positions: Vec<usize> = (0..4).filter(|&i| (subset >> i) & 1 == 1).collect();
        let ys: Vec<Wire> = positions.iter().map(|&i| vars[i]).collect();
        let h = move |v: &[bool]| {
            monomials.iter().fold(false, |acc, &m| {
                acc ^ positions
                    .iter()
                    .zip(v)
                    .all(|(&i, &x)| (m >> i) & 1 == 0 || x)
            })
        };
        (ys, h)
    };
    for (subset, monomials) in groups {
        let (ys, h) = gate(subset, monomials);
        xs.push(xor_with(b, &[], &ys, &h)?);
    }
    let (ys, h) = gate(last.0, last.1);
    xor_with(b, &xs, &ys, &h)
}

/// `theta`'s inverse (four bits) and the XOR of its bits, as five clean
/// bits, by [`inverse_plan`].
fn inverse(b: &mut CircuitBuilder, theta: &[Wire; 4]) -> Result<Vec<Wire>, Error> {
    let anfs = Tower::get().inverse_anf;
    let plan = inverse_plan();
    let mut out: Vec<Option<Wire>> = vec![None; anfs.len()];
    for (step, &(s, mask)) in plan.iter().enumerate() {
        let earlier: Vec<usize> = (0..step)
            .filter(|&i| (mask >> i) & 1 == 1)
            .map(|i| plan[i].0)
            .collect();
        let anf = earlier.iter().fold(anfs[s], |a, &e| a ^ anfs[e]);
        let xs = earlier
            .iter()
            .map(|&e| out[e].expect("computed earlier"))
            .collect();
        out[s] = Some(normal_form(b, theta, anf, xs)?);
    }
    Ok(out
        .into_iter()
        .map(|w| w.expect("every form planned"))
        .collect())
}

/// The S-box on a byte of sums (bit `i` at index `i`): its output as
/// sums of clean bits.
pub fn sbox(b: &mut CircuitBuilder, x: &[Lin; 8]) -> Result<[Lin; 8], Error> {
    let tw = Tower::get();
    let tower: Vec<Lin> = tw
        .to_tower
        .iter()
        .map(|&mask| Lin::sum((0..8).filter(|&i| (mask >> i) & 1 == 1).map(|i| &x[i])))
        .collect();
    let forms = |b: &mut CircuitBuilder, half: &[Lin]| -> Result<Vec<Wire>, Error> {
        FORMS
            .iter()
            .map(|&f| Lin::sum((0..4).filter(|&i| (f >> i) & 1 == 1).map(|i| &half[i])).clean(b))
            .collect()
    };
    let (low, high) = (forms(b, &tower[..4])?, forms(b, &tower[4..])?);
    // The clean single bits among the forms: tower bits 0-3 (low), 4-7.
    let single = |j: usize| {
        let k = FORMS
            .iter()
            .position(|&f| f == 1 << (j % 4))
            .expect("single forms");
        if j < 4 {
            low[k]
        } else {
            high[k]
        }
    };
    let rows: Vec<u32> = tw.products.iter().map(|&r| r as u32).collect();
    let linear: Vec<Lin> = tw
        .theta_linear
        .iter()
        .map(|&mask| Lin::of_all((0..8).filter(|&j| (mask >> j) & 1 == 1).map(single)))
        .collect();
    let theta = sums_of_products(b, &rows, &linear, &|k| vec![high[k], low[k]])?;
    let theta: [Wire; 4] = theta.try_into().expect("four bits");
    let inv = inverse(b, &theta)?;
    // A form of the inverse: its one or two bits, or the XOR of all four.
    let inv_form = |k: usize| -> Vec<Wire> {
        match FORMS[k] {
            0b1111 => vec![inv[4]],
            f => (0..4)
                .filter(|&i| (f >> i) & 1 == 1)
                .map(|i| inv[i])
                .collect(),
        }
    };
    let none = vec![Lin::default(); 4];
    let out_h = sums_of_products(b, &rows, &none, &|k| {
        let mut v = inv_form(k);
        v.push(high[k]);
        v
    })?;
    let h_lins: Vec<Lin> = out_h.iter().map(|&w| Lin::of(w)).collect();
    let out_l = sums_of_products(b, &rows, &h_lins, &|k| {
        let mut v = inv_form(k);
        v.push(low[k]);
        v
    })?;
    let out: Vec<Wire> = out_l.into_iter().chain(out_h).collect();
    Ok(std::array::from_fn(|i| {
        let mut s = Lin::of_all(
            (0..8)
                .filter(|&j| (tw.out_map[i] >> j) & 1 == 1)
                .map(|j| out[j]),
        );
        s.add(&Lin::constant((AFFINE_CONSTANT >> i) & 1 == 1));
        s
    }))
}

/// A state or a round key: 16 bytes of 8 bits, bit `i` of byte `n` at
/// index `8 n + i`, bytes in AES's order (column by column).
pub type Block = Vec<Lin>;

fn byte(state: &[Lin], n: usize) -> [Lin; 8] {
    std::array::from_fn(|i| state[8 * n + i].clone())
}

/// `x * 2` in AES's field, on a byte of sums.
fn xtime(a: &[Lin; 8]) -> [Lin; 8] {
    std::array::from_fn(|i| match i {
        0 => a[7].clone(),
        1 | 3 | 4 => Lin::sum([&a[i - 1], &a[7]]),
        _ => a[i - 1].clone(),
    })
}

fn shift_rows(state: &[Lin]) -> Block {
    (0..BLOCK)
        .flat_map(|n| {
            let (row, col) = (n % 4, n / 4);
            byte(state, row + 4 * ((col + row) % 4))
        })
        .collect()
}

fn mix_columns(state: &[Lin]) -> Block {
    (0..BLOCK)
        .flat_map(|n| {
            let (row, col) = (n % 4, n / 4);
            let a = |r: usize| byte(state, 4 * col + (row + r) % 4);
            let (a0, a1) = (xtime(&a(0)), a(1));
            let a1x = xtime(&a1);
            let (a2, a3) = (a(2), a(3));
            std::array::from_fn::<Lin, 8, _>(|i| {
                Lin::sum([&a0[i], &a1x[i], &a1[i], &a2[i], &a3[i]])
            })
        })
        .collect()
}

fn add(state: &mut [Lin], key: &[Lin]) {
    for (s, k) in state.iter_mut().zip(key) {
        s.add(k);
    }
}

/// The round keys of an encrypted key (128 bits, bit `i` of byte `n` at
/// `8 n + i`, each 0 or 2): eleven blocks of clean bits. 40 S-boxes, and
/// every round key bit read once (a parity) so that blocks add one wire
/// per key bit.
pub fn expand_key(b: &mut CircuitBuilder, key: &[Wire]) -> Result<Vec<Vec<Wire>>, Error> {
    if key.len() != 8 * BLOCK {
        return Err(Error::Config(format!(
            "an AES-128 key has 128 bits, not {}",
            key.len()
        )));
    }
    let mut keys: Vec<Vec<Wire>> = vec![key.to_vec()];
    for round in 0..ROUNDS {
        let prev: Vec<Lin> = keys[round].iter().map(|&w| Lin::of(w)).collect();
        // The last word, rotated by one byte, through the S-box, plus rcon.
        let mut t: Vec<Lin> = Vec::with_capacity(32);
        for j in 0..4 {
            let n = 12 + (j + 1) % 4;
            let mut s = sbox(b, &byte(&prev, n))?;
            if j == 0 {
                for (i, bit) in s.iter_mut().enumerate() {
                    bit.add(&Lin::constant((RCON[round] >> i) & 1 == 1));
                }
            }
            t.extend(s);
        }
        let mut next: Vec<Lin> = Vec::with_capacity(128);
        for word in 0..4 {
            for i in 0..32 {
                let mut v = prev[32 * word + i].clone();
                v.add(if word == 0 {
                    &t[i]
                } else {
                    &next[32 * (word - 1) + i]
                });
                next.push(v);
            }
        }
        let clean: Vec<Wire> = next.iter().map(|l| l.clean(b)).collect::<Result<_, _>>()?;
        keys.push(clean);
    }
    Ok(keys)
}

/// Clear bytes as bits (bit `i` of byte `n` at `8 n + i`): a counter
/// block or an owner's ciphertext the circuit is built for.
pub fn clear_bits(bytes: &[u8]) -> Vec<Lin> {
    (0..8 * bytes.len())
        .map(|j| Lin::constant((bytes[j / 8] >> (j % 8)) & 1 == 1))
        .collect()
}

/// Bits as wires (each 0 or 2): a counter block or an owner's ciphertext
/// given as inputs, so that one circuit serves every block.
pub fn wire_bits(wires: &[Wire]) -> Vec<Lin> {
    wires.iter().map(|&w| Lin::of(w)).collect()
}

/// Round-key bits [`expand_key`] gives: eleven keys of 128 bits.
pub const ROUND_KEY_BITS: usize = (ROUNDS + 1) * 8 * BLOCK;

/// `AES_k(counter)` as 128 sums of clean bits (bit `i` of byte `n` at
/// `8 n + i`). `keys` are [`expand_key`]'s; `counter` is 128 bits
/// ([`clear_bits`] or [`wire_bits`]): it only enters sums, so either way
/// costs the same bootstraps.
pub fn keystream_block(
    b: &mut CircuitBuilder,
    keys: &[Vec<Wire>],
    counter: &[Lin],
) -> Result<Vec<Lin>, Error> {
    if keys.len() != ROUNDS + 1 || keys.iter().any(|k| k.len() != 8 * BLOCK) {
        return Err(Error::Config(
            "AES-128 needs eleven round keys of 128 bits".into(),
        ));
    }
    if counter.len() != 8 * BLOCK {
        return Err(Error::Config(format!(
            "an AES counter block is 128 bits, not {}",
            counter.len()
        )));
    }
    let round_key = |r: usize| -> Block { wire_bits(&keys[r]) };
    let mut state: Block = counter.to_vec();
    add(&mut state, &round_key(0));
    for round in 1..=ROUNDS {
        let mut subbed: Block = Vec::with_capacity(8 * BLOCK);
        for n in 0..BLOCK {
            subbed.extend(sbox(b, &byte(&state, n))?);
        }
        state = shift_rows(&subbed);
        if round < ROUNDS {
            state = mix_columns(&state);
        }
        add(&mut state, &round_key(round));
    }
    Ok(state)
}

/// The data under one block of the owner's ciphertext (128 bits, or
/// fewer for a message's last block): `ciphertext` XOR `AES_k(counter)`,
/// as clean bits (0 or 2) in the ciphertext's bit order: [`keystream_block`],
/// and each bit with the ciphertext's read once.
pub fn decrypt_block(
    b: &mut CircuitBuilder,
    keys: &[Vec<Wire>],
    counter: &[Lin],
    ciphertext: &[Lin],
) -> Result<Vec<Wire>, Error> {
    if ciphertext.len() > 8 * BLOCK {
        return Err(Error::Config(format!(
            "an AES block is 128 bits, not {}",
            ciphertext.len()
        )));
    }
    let mut state = keystream_block(b, keys, counter)?;
    state.truncate(ciphertext.len());
    add(&mut state, ciphertext);
    state.iter().map(|l| l.clean(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend};
    use crate::crypto::params::DIGITS_KS32_128;
    use hearth_core::symmetric::aes::{encrypt_block, sbox as clear_sbox};
    use rand::{Rng, SeedableRng};

    fn inputs(b: &mut CircuitBuilder, n: usize) -> Vec<Wire> {
        (0..n)
            .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
            .collect()
    }

    fn encode(bytes: &[u8]) -> Vec<u64> {
        bytes
            .iter()
            .flat_map(|&x| (0..8).map(move |i| 2 * ((x >> i) & 1) as u64))
            .collect()
    }

    fn decode(bits: &[u64]) -> Vec<u8> {
        bits.chunks(8)
            .map(|c| c.iter().rev().fold(0u8, |a, &v| a << 1 | (v == 2) as u8))
            .collect()
    }

    /// Every byte through the S-box circuit on the clear backend.
    #[test]
    fn the_sbox_circuit_is_the_sbox() {
        let mut b = CircuitBuilder::new(&DIGITS_KS32_128);
        let x = inputs(&mut b, 8);
        let lins: [Lin; 8] = std::array::from_fn(|i| Lin::of(x[i]));
        for l in sbox(&mut b, &lins).unwrap() {
            let w = l.clean(&mut b).unwrap();
            b.output(w).unwrap();
        }
        let c = b.build();
        eprintln!("S-box: {:?}", c.stats());
        for v in 0..=255u8 {
            let out = ClearBackend.evaluate(&c, &encode(&[v])).unwrap();
            assert_eq!(decode(&out)[0], clear_sbox(v), "x = {v:#04x}");
        }
    }

    /// Random keys, counters and data: the key schedule and a block's
    /// circuit give the data back from the clear cipher's ciphertext.
    #[test]
    fn transciphered_blocks_are_the_data() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(85);
        let mut b = CircuitBuilder::new(&DIGITS_KS32_128);
        let key = inputs(&mut b, 128);
        let keys = expand_key(&mut b, &key).unwrap();
        let cases: Vec<([u8; 16], [u8; 16])> = (0..2).map(|_| (rng.gen(), rng.gen())).collect();
        for (counter, sealed) in &cases {
            let (counter, sealed) = (clear_bits(counter), clear_bits(sealed));
            for w in decrypt_block(&mut b, &keys, &counter, &sealed).unwrap() {
                b.output(w).unwrap();
            }
        }
        let c = b.build();
        eprintln!("key schedule and two blocks: {:?}", c.stats());
        for _ in 0..3 {
            let k: [u8; 16] = rng.gen();
            let out = ClearBackend.evaluate(&c, &encode(&k)).unwrap();
            for (i, (counter, sealed)) in cases.iter().enumerate() {
                let ks = encrypt_block(&k, counter);
                let want: Vec<u8> = sealed.iter().zip(ks).map(|(c, k)| c ^ k).collect();
                assert_eq!(decode(&out[128 * i..128 * (i + 1)]), want);
            }
        }
    }

    /// Random keys, counters and data against RustCrypto's AES-128-CTR:
    /// one circuit with the key, the counter block and the owner's
    /// ciphertext as inputs, on the clear backend. `HEARTH_AES_CASES`
    /// cases (default 1 000; the book's figure is 10 000).
    #[test]
    fn random_cases_against_the_clear_cipher() {
        use hearth_core::symmetric::aes::{counter_after, AesCtr};
        let cases: usize = std::env::var("HEARTH_AES_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        let mut b = CircuitBuilder::new(&DIGITS_KS32_128);
        let key = inputs(&mut b, 128);
        let keys = expand_key(&mut b, &key).unwrap();
        let (counter, sealed) = (inputs(&mut b, 128), inputs(&mut b, 128));
        for w in decrypt_block(&mut b, &keys, &wire_bits(&counter), &wire_bits(&sealed)).unwrap() {
            b.output(w).unwrap();
        }
        let c = b.build();
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x85);
        for case in 0..cases {
            let (k, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
            // Some counters at the edge of the 128-bit wrap.
            let iv = if case % 10 == 0 { [0xff; 16] } else { iv };
            let blocks = 1 + case % 3;
            let data: Vec<u8> = (0..16 * blocks).map(|_| rng.gen()).collect();
            let mut sealed_bytes = data.clone();
            AesCtr::new(&k, &iv).apply(&mut sealed_bytes);
            for (i, chunk) in sealed_bytes.chunks(16).enumerate() {
                let mut input = encode(&k);
                input.extend(encode(&counter_after(&iv, i as u64)));
                input.extend(encode(chunk));
                let out = ClearBackend.evaluate(&c, &input).unwrap();
                assert_eq!(
                    decode(&out),
                    data[16 * i..16 * (i + 1)],
                    "case {case} block {i}"
                );
            }
        }
    }
}

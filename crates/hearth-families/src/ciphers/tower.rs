//! AES's field as a tower, GF(((2^2)^2)^2), for the S-box under FHE.
//!
//! An element of GF(256) is `h y + l` with `h, l` in GF(16) and
//! `y^2 = y + LAMBDA`; an element of GF(16) is `h w + l` with `h, l` in
//! GF(4) and `w^2 = w + NU`; GF(4) is `c0 + c1 u` with `u^2 = u + 1`.
//! Bits: GF(4) in bits 0-1, GF(16) low half in bits 0-1 and high in 2-3,
//! GF(256) low in bits 0-3 and high in 4-7.
//!
//! In the tower the inverse is `(h y + (h + l)) / theta` with
//! `theta = LAMBDA h^2 + h l + l^2`: one product in GF(16) (`h l`), one
//! inverse in GF(16) of four bits, and two products. A GF(16) product is
//! nine products of bits by Karatsuba at both levels, each a product of
//! the same "form" (a sum of the element's bits, [`FORMS`]) of both
//! factors. The isomorphism with AES's polynomial basis, the products'
//! recombination and the inverse's algebraic normal form are found here
//! by search over the small fields, not written out by hand, and the
//! tests check every one against AES's own field.

use std::sync::OnceLock;

use hearth_core::symmetric::aes::affine_linear;

/// `w^2 = w + NU` in GF(16) over GF(4) (`NU = u`).
const NU: u8 = 2;

/// The nine Karatsuba forms of a GF(16) element, as masks of its bits:
/// low, high and their sum (GF(4) elements), each as bit 0, bit 1 and
/// their sum.
pub const FORMS: [u8; 9] = [
    0b0001, 0b0010, 0b0011, 0b0100, 0b1000, 0b1100, 0b0101, 0b1010, 0b1111,
];

/// GF(4): `c0 + c1 u`, `u^2 = u + 1`.
fn mul4(a: u8, b: u8) -> u8 {
    let (a0, a1, b0, b1) = (a & 1, a >> 1 & 1, b & 1, b >> 1 & 1);
    let c0 = (a0 & b0) ^ (a1 & b1);
    let c1 = (a0 & b1) ^ (a1 & b0) ^ (a1 & b1);
    c0 | c1 << 1
}

/// GF(16) over GF(4).
pub fn mul16(x: u8, y: u8) -> u8 {
    let (x0, x1, y0, y1) = (x & 3, x >> 2 & 3, y & 3, y >> 2 & 3);
    let high = mul4(x1, y1);
    let z0 = mul4(x0, y0) ^ mul4(NU, high);
    let z1 = mul4(x0 ^ x1, y0 ^ y1) ^ mul4(x0, y0);
    z0 | z1 << 2
}

/// GF(16)'s inverse (0 for 0).
pub fn inv16(x: u8) -> u8 {
    (1..16).find(|&y| mul16(x, y) == 1).unwrap_or(0)
}

/// GF(256) over GF(16), `y^2 = y + lambda`.
fn mul256(x: u8, y: u8, lambda: u8) -> u8 {
    let (xl, xh, yl, yh) = (x & 15, x >> 4, y & 15, y >> 4);
    let hh = mul16(xh, yh);
    let high = hh ^ mul16(xh, yl) ^ mul16(xl, yh);
    let low = mul16(lambda, hh) ^ mul16(xl, yl);
    low | high << 4
}

/// `LAMBDA`: the first GF(16) element for which `y^2 + y + LAMBDA` has no
/// root.
fn lambda() -> u8 {
    (1..16u8)
        .find(|&l| (0..16u8).all(|y| mul16(y, y) ^ y ^ l != 0))
        .expect("an irreducible y^2 + y + lambda exists")
}

/// Bit `i` of `x` as 0 or 1.
fn bit(x: u32, i: usize) -> u32 {
    (x >> i) & 1
}

/// The tower's constants and linear maps, found once.
pub struct Tower {
    /// Tower bit `j` of an element is the XOR of the AES bits in
    /// `to_tower[j]`.
    pub to_tower: [u8; 8],
    /// The S-box's output bit `i` (without its constant) is the XOR of the
    /// tower bits of the inverse in `out_map[i]`.
    pub out_map: [u8; 8],
    /// `theta`'s linear part `LAMBDA h^2 + l^2`: bit `t` is the XOR of the
    /// tower bits in `theta_linear[t]`.
    pub theta_linear: [u8; 4],
    /// Bit `t` of a GF(16) product is the XOR of the form products
    /// `F_k(x) F_k(y)` for the `k` in `products[t]`.
    pub products: [u16; 4],
    /// Algebraic normal forms over GF(16)'s four bits (coefficient of the
    /// monomial `m` at bit `m`) of the inverse's bits and of the XOR of
    /// all four (the last form).
    pub inverse_anf: [u16; 5],
}

impl Tower {
    /// The tower, computed on first use.
    pub fn get() -> &'static Tower {
        static TOWER: OnceLock<Tower> = OnceLock::new();
        TOWER.get_or_init(Tower::find)
    }

    fn find() -> Tower {
        let lambda = lambda();
        let pow = |b: u8, e: usize| (0..e).fold(1u8, |acc, _| mul256(acc, b, lambda));
        // A root of AES's polynomial x^8 + x^4 + x^3 + x + 1 in the tower.
        let beta = (2..=255u8)
            .find(|&b| pow(b, 8) ^ pow(b, 4) ^ pow(b, 3) ^ b ^ 1 == 0)
            .expect("AES's polynomial splits in any GF(256)");
        let phi = |x: u8| {
            (0..8)
                .filter(|&i| (x >> i) & 1 == 1)
                .fold(0u8, |acc, i| acc ^ pow(beta, i))
        };
        let mut to_tower = [0u8; 8];
        for i in 0..8 {
            let p = pow(beta, i);
            for (j, t) in to_tower.iter_mut().enumerate() {
                *t |= ((p >> j) & 1) << i;
            }
        }
        let mut phi_inv = [0u8; 256];
        for x in 0..=255u8 {
            phi_inv[phi(x) as usize] = x;
        }
        let mut out_map = [0u8; 8];
        for j in 0..8 {
            let v = affine_linear(phi_inv[1 << j]);
            for (i, o) in out_map.iter_mut().enumerate() {
                *o |= ((v >> i) & 1) << j;
            }
        }
        let mut theta_linear = [0u8; 4];
        for j in 0..8 {
            let e = 1u8 << (j % 4);
            let v = if j < 4 {
                mul16(e, e)
            } else {
                mul16(lambda, mul16(e, e))
            };
            for (t, row) in theta_linear.iter_mut().enumerate() {
                *row |= ((v >> t) & 1) << j;
            }
        }
        let form = |x: u8, k: usize| ((x & FORMS[k]).count_ones() & 1) as u16;
        let products = std::array::from_fn(|t| {
            (0..1u16 << 9)
                .find(|&r| {
                    (0..256u16).all(|xy| {
                        let (x, y) = ((xy & 15) as u8, (xy >> 4) as u8);
                        let sum = (0..9)
                            .filter(|&k| (r >> k) & 1 == 1)
                            .fold(0, |a, k| a ^ (form(x, k) & form(y, k)));
                        sum == ((mul16(x, y) >> t) & 1) as u16
                    })
                })
                .expect("Karatsuba's nine products span a GF(16) product")
        });
        let anf = |f: &dyn Fn(u8) -> u32| {
            let mut a: Vec<u32> = (0..16u8).map(f).collect();
            for i in 0..4 {
                for x in 0..16 {
                    if (x >> i) & 1 == 1 {
                        a[x] ^= a[x ^ (1 << i)];
                    }
                }
            }
            (0..16).fold(0u16, |acc, m| acc | (a[m] as u16) << m)
        };
        let inverse_anf = std::array::from_fn(|s| {
            if s < 4 {
                anf(&|x| bit(inv16(x) as u32, s))
            } else {
                anf(&|x| inv16(x).count_ones() & 1)
            }
        });
        Tower {
            to_tower,
            out_map,
            theta_linear,
            products,
            inverse_anf,
        }
    }
}

#[cfg(test)]
impl Tower {
    /// An AES field element's tower bits.
    pub fn to_tower(&self, x: u8) -> u8 {
        (0..8).fold(0u8, |acc, j| {
            acc | (((self.to_tower[j] & x).count_ones() & 1) as u8) << j
        })
    }

    /// The S-box computed the way the circuit computes it, on clear bits:
    /// forms, `theta`, its inverse, the two products, the output map.
    pub fn sbox_by_steps(&self, x: u8) -> u8 {
        let t = self.to_tower(x);
        let (l, h) = (t & 15, t >> 4);
        let form = |x: u8, k: usize| (x & FORMS[k]).count_ones() & 1;
        let product = |x: u8, y: u8| {
            (0..4).fold(0u8, |acc, s| {
                let v = (0..9)
                    .filter(|&k| (self.products[s] >> k) & 1 == 1)
                    .fold(0, |a, k| a ^ (form(x, k) & form(y, k)));
                acc | (v as u8) << s
            })
        };
        let linear = (0..4).fold(0u8, |acc, s| {
            acc | (((self.theta_linear[s] & t).count_ones() & 1) as u8) << s
        });
        let theta = linear ^ product(h, l);
        let inv = (0..4).fold(0u8, |acc, s| {
            let v = (0..16)
                .filter(|&m| (self.inverse_anf[s] >> m) & 1 == 1 && m & !theta == 0)
                .count()
                & 1;
            acc | (v as u8) << s
        });
        let (out_h, out_l) = (product(h, inv), product(h, inv) ^ product(l, inv));
        let out = out_l | out_h << 4;
        (0..8).fold(0u8, |acc, i| {
            acc | (((self.out_map[i] & out).count_ones() & 1) as u8) << i
        }) ^ hearth_core::symmetric::aes::AFFINE_CONSTANT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::symmetric::aes::{field_mul, sbox};

    #[test]
    fn the_tower_is_a_field_isomorphic_to_aes() {
        let t = Tower::get();
        for x in 1..16u8 {
            assert_eq!(mul16(x, inv16(x)), 1);
        }
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(
                    t.to_tower(field_mul(a, b)),
                    mul256(t.to_tower(a), t.to_tower(b), lambda())
                );
            }
        }
    }

    #[test]
    fn the_steps_give_the_sbox() {
        let t = Tower::get();
        for x in 0..=255u8 {
            assert_eq!(t.sbox_by_steps(x), sbox(x), "x = {x:#04x}");
        }
        // The inverse's forms have degree 3 at most: no monomial of all
        // four bits, so each is a sum of functions of three bits.
        assert!(t.inverse_anf.iter().all(|a| a >> 15 == 0));
    }
}

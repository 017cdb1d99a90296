//! Named parameter sets.
//!
//! Every set keeps the security parameters (LWE dimension `n`, GLWE dimension
//! `k`, polynomial size `N`, noise distributions) of a published tfhe-rs set
//! and reads its plaintexts as `pi` message bits *without* a padding bit, so
//! the encoding factor is `delta = 2^(64 - pi)`. Bootstrapping is negacyclic:
//! a lookup table over `Z_{2^pi}` must satisfy `f(x + 2^(pi-1)) = -f(x)`.
//!
//! The *quadratic-weight budget* is the largest sum of squared integer weights
//! with which freshly bootstrapped ciphertexts may be combined into one
//! bootstrap input (or one decrypted output) such that the failure
//! probability per PBS stays at or below [`ParameterSet::log2_p_fail`]. It is
//! computed with tfhe-rs's own noise formulas in [`crate::crypto::noise`]; a test
//! recomputes it for every secure set.

use serde::{Deserialize, Serialize};
use tfhe::core_crypto::prelude::{
    DecompositionBaseLog, DecompositionLevelCount, DynamicDistribution, GlweDimension,
    LweBskGroupingFactor, LweDimension, PolynomialSize,
};

use crate::crypto::packing::Packing;
use crate::error::Error;

/// Stable identity of a parameter set; written into every key, ciphertext and
/// circuit so that mixing sets is caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u16)]
pub enum ParamsId {
    /// [`DIGITS_128`].
    Digits128 = 1,
    /// [`BITS_128`].
    Bits128 = 2,
    /// [`GATES_128`].
    Gates128 = 3,
    /// [`DIGITS_KS32_128`].
    Digits128Ks32 = 4,
    /// [`INSECURE_TEST_DIGITS`].
    InsecureTestDigits = 101,
    /// [`INSECURE_TEST_BITS`].
    InsecureTestBits = 102,
    // Payloads (bincode) name a set by its place in this list, headers by
    // its number: a new set goes last, so that files written before it
    // keep their meaning.
    /// [`DIGITS_MB4_128`].
    Digits128Mb4 = 5,
}

impl ParamsId {
    /// The id written in file headers.
    pub fn to_u16(self) -> u16 {
        self as u16
    }

    /// Parses a header id; `None` for ids this build does not know.
    pub fn from_u16(v: u16) -> Option<Self> {
        ALL.iter().map(|p| p.id).find(|id| id.to_u16() == v)
    }

    /// The parameter set with this id.
    pub fn params(self) -> &'static ParameterSet {
        ALL.iter()
            .find(|p| p.id == self)
            .expect("every id has a set")
    }
}

impl std::fmt::Display for ParamsId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.params().name)
    }
}

/// The noise margin a bootstrap (or a decryption) decodes with: half the
/// distance between two selector values with different outputs. A wider
/// margin tolerates more noise, so each has its own budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Margin {
    /// Values one unit apart (a dense selector): margin 1/2 unit.
    Half,
    /// Values two units apart (bits stored as 0 or 2): margin 1 unit.
    One,
    /// Values four units apart: margin 2 units.
    Two,
}

impl Margin {
    /// Every margin, narrowest first.
    pub const ALL: [Margin; 3] = [Margin::Half, Margin::One, Margin::Two];

    /// Units between the values it separates: 1, 2 or 4.
    pub fn spacing(self) -> u64 {
        1 << self.log2_spacing()
    }

    /// log2 of [`Margin::spacing`]: 0, 1 or 2.
    pub fn log2_spacing(self) -> u32 {
        self as u32
    }

    /// The widest margin whose spacing is at most `units` (at least
    /// [`Margin::Half`]).
    pub fn within(units: u64) -> Margin {
        Margin::ALL
            .into_iter()
            .rev()
            .find(|m| m.spacing() <= units)
            .unwrap_or(Margin::Half)
    }
}

impl std::fmt::Display for Margin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Margin::Half => "1/2",
            Margin::One => "1",
            Margin::Two => "2",
        })
    }
}

/// One quadratic-weight budget per [`Margin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Budgets {
    /// For values one unit apart.
    pub half: u64,
    /// For values two units apart.
    pub one: u64,
    /// For values four units apart.
    pub two: u64,
}

impl Budgets {
    /// The budget for `margin`.
    pub fn at(&self, margin: Margin) -> u64 {
        match margin {
            Margin::Half => self.half,
            Margin::One => self.one,
            Margin::Two => self.two,
        }
    }

    /// Budgets from a function of the margin.
    pub fn from_fn(f: impl Fn(Margin) -> u64) -> Budgets {
        Budgets {
            half: f(Margin::Half),
            one: f(Margin::One),
            two: f(Margin::Two),
        }
    }
}

/// A complete TFHE parameter set for hearth's `pi`-bit, padding-free encoding.
#[derive(Clone, Copy, Debug)]
pub struct ParameterSet {
    /// Stable identity, written into files.
    pub id: ParamsId,
    /// The name front ends accept.
    pub name: &'static str,
    /// The tfhe-rs set whose security parameters this one keeps.
    pub source: &'static str,
    /// Claimed security in bits; 0 for the insecure test sets.
    pub security_bits: u32,
    /// Message bits (no padding bit): digits live in `Z_{2^pi}`.
    pub pi: u32,
    /// Largest quadratic weight allowed into a bootstrap, by the margin its
    /// selector decodes with.
    pub budgets: Budgets,
    /// Largest quadratic weight of an output decrypted with those margins
    /// (fresh errors only: decryption has no key or modulus switch).
    pub output_budgets: Budgets,
    /// Largest quadratic weight of an output that is packed
    /// ([`crate::crypto::packing`]) before it is decrypted, by margin.
    pub packed_output_budgets: Budgets,
    /// How results are packed: the packing key switch's decomposition and
    /// the storage modulus.
    pub packing: Packing,
    /// log2 of the failure probability of one PBS (or decryption) at its
    /// budget; `None` where it was not analysed (insecure sets).
    pub log2_p_fail: Option<f64>,
    /// `n`: the small LWE key's dimension (after the key switch).
    pub lwe_dimension: LweDimension,
    /// `k`: the GLWE dimension.
    pub glwe_dimension: GlweDimension,
    /// `N`: the polynomial size.
    pub polynomial_size: PolynomialSize,
    /// Noise of the small LWE key (key-switch key).
    pub lwe_noise: DynamicDistribution<u64>,
    /// Noise of the GLWE key (bootstrap key, fresh encryptions).
    pub glwe_noise: DynamicDistribution<u64>,
    /// Bootstrap key decomposition base (log2).
    pub pbs_base_log: DecompositionBaseLog,
    /// Bootstrap key decomposition levels.
    pub pbs_level: DecompositionLevelCount,
    /// Key-switch decomposition base (log2).
    pub ks_base_log: DecompositionBaseLog,
    /// Key-switch decomposition levels.
    pub ks_level: DecompositionLevelCount,
    /// The key switch lands on a 32-bit small LWE (tfhe-rs's KS32 atomic
    /// pattern): its key holds `u32`s, half the bytes to stream per key
    /// switch, and the small LWE's noise is `lwe_noise` scaled to that
    /// modulus (TUniform bound `2^(b - 32)`). `false`: the classic 64-bit
    /// key switch.
    pub ks32: bool,
    /// The multi-bit bootstrap's grouping factor `g` (tfhe-rs's
    /// `LweBskGroupingFactor`): the blind rotation reads the small LWE's
    /// mask `g` coefficients at a time, `n / g` steps of `2^g - 1` GGSW
    /// products each, so a bootstrap has `g` times fewer sequential steps
    /// and more work per step for threads (or a GPU) to share. `None`:
    /// the classical bootstrap, one step per coefficient.
    pub grouping_factor: Option<LweBskGroupingFactor>,
}

/// Signed-binary digits family: `pi = 5`, no padding.
///
/// Source: `V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` (n = 918,
/// k = 1, N = 2048, TUniform(45) / TUniform(17), PBS 2^23 x 1), whose
/// `delta = 2^59` is exactly the delta of 5 message bits without padding.
/// Security parameters are unchanged (128 bits); only the key-switch
/// decomposition goes from 2^4 x 4 to 2^3 x 5, which lowers the key-switch
/// noise. With tfhe-rs's formulas ([`crate::crypto::noise`]) the variance at the
/// blind-rotation input is `qw * V_pbs + V_ks + V_ms` with
/// `V_pbs = 2^-29.65`, `V_ks = 2^-22.69`, `V_ms = 2^-19.74` (centered
/// modulus switch); decoding fails when the error reaches `delta / 2 = 2^-6`.
/// That gives a budget of 112 at p_fail <= 2^-128 (1 373 at 2^-64), against
/// 40 for the source decomposition (2^4 x 4): enough for PARMESAN's 20
/// (addition), 41 (maximum) and 85 (signum). Costs 25% more key-switch work.
pub const DIGITS_128: ParameterSet = ParameterSet {
    id: ParamsId::Digits128,
    name: "DIGITS_128",
    source: "V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 (KS 2^3 x 5)",
    security_bits: 128,
    pi: 5,
    budgets: Budgets {
        half: 112,
        one: 3713,
        two: 18119,
    },
    output_budgets: Budgets {
        half: 1200,
        one: 4801,
        two: 19207,
    },
    packed_output_budgets: Budgets {
        half: 931,
        one: 4533,
        two: 18938,
    },
    packing: Packing {
        base_log: DecompositionBaseLog(21),
        level: DecompositionLevelCount(1),
        storage_log_modulus: 14,
    },
    log2_p_fail: Some(-128.0),
    lwe_dimension: LweDimension(918),
    glwe_dimension: GlweDimension(1),
    polynomial_size: PolynomialSize(2048),
    lwe_noise: DynamicDistribution::new_t_uniform(45),
    glwe_noise: DynamicDistribution::new_t_uniform(17),
    pbs_base_log: DecompositionBaseLog(23),
    pbs_level: DecompositionLevelCount(1),
    ks_base_log: DecompositionBaseLog(3),
    ks_level: DecompositionLevelCount(5),
    ks32: false,
    grouping_factor: None,
};

/// [`DIGITS_128`] on tfhe-rs's KS32 atomic pattern: the key switch lands on
/// a 32-bit small LWE, so each one streams half the key bytes.
///
/// Source: `V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128` (n = 918,
/// k = 1, N = 2048, small LWE TUniform(13) modulo `2^32` (the relative
/// noise of TUniform(45) modulo `2^64`), GLWE TUniform(17), PBS 2^23 x 1),
/// security unchanged (128 bits); the key switch goes from 2^4 x 4 to
/// 2^3 x 5 as in [`DIGITS_128`]. tfhe-rs's formulas give the same variances
/// (`V_ks = 2^-22.69` with a 32-bit output, `V_ms = 2^-19.74` from `2^32`)
/// and so the same budgets, 112 at p_fail <= 2^-128. Measured on the
/// development machine: one key switch alone 1.9 ms instead of 3.9 ms; in
/// a whole KS-PBS 3-5% less than [`DIGITS_128`], about tfhe-rs's default
/// 64-bit pattern (2^4 x 4); digits operations 7-11% faster than on
/// [`DIGITS_128`] in one back-to-back run. The GPU backend does not run it.
pub const DIGITS_KS32_128: ParameterSet = ParameterSet {
    id: ParamsId::Digits128Ks32,
    name: "DIGITS_KS32_128",
    source: "V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128 (KS 2^3 x 5)",
    ks32: true,
    ..DIGITS_128
};

/// [`DIGITS_128`]'s digits (`pi = 5`, no padding) on tfhe-rs's GPU
/// multi-bit set, grouping factor 4: the set tfhe-rs's own GPU benchmarks
/// and its CUDA integer API run on.
///
/// Source: `V1_8_PARAM_GPU_MULTI_BIT_GROUP_4_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`
/// (n = 920, k = 1, N = 2048, TUniform(45) / TUniform(17), PBS 2^22 x 1,
/// grouping factor 4; 128-bit security), whose `delta = 2^59` is that of 5
/// bits without padding; only the key switch goes from 2^3 x 5 to
/// 2^3 x 6. With tfhe-rs's multi-bit formulas ([`crate::crypto::noise`])
/// `V_pbs = 2^-27.54` (the multi-bit blind rotation adds 15 GGSW products'
/// noise per group of 4), `V_ks = 2^-23.52` and the multi-bit modulus
/// switch `V_ms = 2^-19.83`: a budget of 51 at p_fail <= 2^-128 (38 with
/// the source's key switch, under the digits family's 41; 57 at 2^2 x 8
/// for 60% more key-switch work). The bootstrap key holds `n / 4 * 15`
/// GGSWs, 3.75 times the classical key's.
pub const DIGITS_MB4_128: ParameterSet = ParameterSet {
    id: ParamsId::Digits128Mb4,
    name: "DIGITS_MB4_128",
    source: "V1_8_PARAM_GPU_MULTI_BIT_GROUP_4_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 (KS 2^3 x 6)",
    security_bits: 128,
    pi: 5,
    budgets: Budgets {
        half: 51,
        one: 882,
        two: 4207,
    },
    output_budgets: Budgets {
        half: 277,
        one: 1108,
        two: 4433,
    },
    packed_output_budgets: Budgets {
        half: 215,
        one: 1046,
        two: 4371,
    },
    packing: Packing {
        base_log: DecompositionBaseLog(21),
        level: DecompositionLevelCount(1),
        storage_log_modulus: 14,
    },
    log2_p_fail: Some(-128.0),
    lwe_dimension: LweDimension(920),
    glwe_dimension: GlweDimension(1),
    polynomial_size: PolynomialSize(2048),
    lwe_noise: DynamicDistribution::new_t_uniform(45),
    glwe_noise: DynamicDistribution::new_t_uniform(17),
    pbs_base_log: DecompositionBaseLog(22),
    pbs_level: DecompositionLevelCount(1),
    ks_base_log: DecompositionBaseLog(3),
    ks_level: DecompositionLevelCount(6),
    ks32: false,
    grouping_factor: Some(LweBskGroupingFactor(4)),
};

/// Two's-complement bits family: `pi = 3` (room for 3-input gates), no padding.
///
/// Source: `V1_8_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128` unchanged
/// (n = 879, k = 4, N = 512, TUniform(46) / TUniform(17), PBS 2^23 x 1,
/// KS 2^5 x 3): its `delta = 2^61` is that of 3 bits without padding. The
/// margin is `delta / 2 = 2^-4`, so the budget is large: 2 898 at 2^-128
/// (29 104 at 2^-64), with `V_pbs = 2^-30.03`, `V_ks = 2^-18.54`,
/// `V_ms = 2^-15.81`.
pub const BITS_128: ParameterSet = ParameterSet {
    id: ParamsId::Bits128,
    name: "BITS_128",
    source: "V1_8_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128",
    security_bits: 128,
    pi: 3,
    budgets: Budgets {
        half: 2898,
        one: 77766,
        two: 377238,
    },
    output_budgets: Budgets {
        half: 24955,
        one: 99823,
        two: 399294,
    },
    packed_output_budgets: Budgets {
        half: 19366,
        one: 94234,
        two: 393705,
    },
    packing: Packing {
        base_log: DecompositionBaseLog(21),
        level: DecompositionLevelCount(1),
        storage_log_modulus: 12,
    },
    log2_p_fail: Some(-128.0),
    lwe_dimension: LweDimension(879),
    glwe_dimension: GlweDimension(4),
    polynomial_size: PolynomialSize(512),
    lwe_noise: DynamicDistribution::new_t_uniform(46),
    glwe_noise: DynamicDistribution::new_t_uniform(17),
    pbs_base_log: DecompositionBaseLog(23),
    pbs_level: DecompositionLevelCount(1),
    ks_base_log: DecompositionBaseLog(5),
    ks_level: DecompositionLevelCount(3),
    ks32: false,
    grouping_factor: None,
};

/// Gates of the bits family: `pi = 3`, bits stored as 0 or 2, every gate a
/// selector whose values with different outputs are at least 2 units
/// apart (margin 1 unit), as in TFHE gate bootstrapping.
///
/// Source: `V1_0_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M40` (n = 799,
/// k = 3, N = 512, TUniform(48) / TUniform(30), PBS 2^17 x 1; 128-bit
/// security), key switch 2^4 x 3 instead of 2^3 x 4 (7% faster). With
/// tfhe-rs's formulas `V_pbs = 2^-17.88`, `V_ks = 2^-16.41`,
/// `V_ms = 2^-15.94`. At p_fail <= 2^-128 per PBS the budget is 0 for dense
/// selectors (margin 1/2 unit: refused), 15 at margin 1 and 81 at
/// margin 2: enough for AND-type gates (weight 2), majority (3), XOR with a
/// doubled selector (8 at margin 2) and unrefreshed full-adder sums.
/// One KS-PBS is about 0.67x of [`BITS_128`]'s (`hearth bench params`).
pub const GATES_128: ParameterSet = ParameterSet {
    id: ParamsId::Gates128,
    name: "GATES_128",
    source: "V1_0_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M40 (KS 2^4 x 3)",
    security_bits: 128,
    pi: 3,
    budgets: Budgets {
        half: 0,
        one: 15,
        two: 81,
    },
    output_budgets: Budgets {
        half: 5,
        one: 21,
        two: 87,
    },
    packed_output_budgets: Budgets {
        half: 4,
        one: 21,
        two: 86,
    },
    packing: Packing {
        base_log: DecompositionBaseLog(15),
        level: DecompositionLevelCount(1),
        storage_log_modulus: 12,
    },
    log2_p_fail: Some(-128.0),
    lwe_dimension: LweDimension(799),
    glwe_dimension: GlweDimension(3),
    polynomial_size: PolynomialSize(512),
    lwe_noise: DynamicDistribution::new_t_uniform(48),
    glwe_noise: DynamicDistribution::new_t_uniform(30),
    pbs_base_log: DecompositionBaseLog(17),
    pbs_level: DecompositionLevelCount(1),
    ks_base_log: DecompositionBaseLog(4),
    ks_level: DecompositionLevelCount(3),
    ks32: false,
    grouping_factor: None,
};

/// INSECURE: tiny dimensions and noise for fast tests of the digits family.
/// Same `pi` and budget as [`DIGITS_128`] so the same circuits are valid.
/// Refused by every front end.
pub const INSECURE_TEST_DIGITS: ParameterSet = ParameterSet {
    id: ParamsId::InsecureTestDigits,
    name: "INSECURE_TEST_DIGITS",
    source: "none (insecure, for tests)",
    security_bits: 0,
    pi: 5,
    budgets: DIGITS_128.budgets,
    output_budgets: DIGITS_128.output_budgets,
    packed_output_budgets: DIGITS_128.packed_output_budgets,
    packing: Packing {
        base_log: DecompositionBaseLog(21),
        level: DecompositionLevelCount(1),
        storage_log_modulus: 16,
    },
    log2_p_fail: None,
    lwe_dimension: LweDimension(96),
    glwe_dimension: GlweDimension(1),
    polynomial_size: PolynomialSize(1024),
    lwe_noise: DynamicDistribution::new_t_uniform(2),
    glwe_noise: DynamicDistribution::new_t_uniform(2),
    pbs_base_log: DecompositionBaseLog(23),
    pbs_level: DecompositionLevelCount(1),
    ks_base_log: DecompositionBaseLog(4),
    ks_level: DecompositionLevelCount(5),
    ks32: false,
    grouping_factor: None,
};

/// INSECURE: tiny dimensions and noise for fast tests of the bits family.
/// Same `pi` and budgets as [`GATES_128`] (the tightest bits set), so its
/// circuits are valid on both bits sets. Refused by every front end.
pub const INSECURE_TEST_BITS: ParameterSet = ParameterSet {
    id: ParamsId::InsecureTestBits,
    name: "INSECURE_TEST_BITS",
    source: "none (insecure, for tests)",
    security_bits: 0,
    pi: 3,
    budgets: GATES_128.budgets,
    output_budgets: GATES_128.output_budgets,
    packed_output_budgets: GATES_128.packed_output_budgets,
    packing: Packing {
        base_log: DecompositionBaseLog(15),
        level: DecompositionLevelCount(1),
        storage_log_modulus: 16,
    },
    log2_p_fail: None,
    lwe_dimension: LweDimension(64),
    glwe_dimension: GlweDimension(1),
    polynomial_size: PolynomialSize(512),
    lwe_noise: DynamicDistribution::new_t_uniform(2),
    glwe_noise: DynamicDistribution::new_t_uniform(2),
    pbs_base_log: DecompositionBaseLog(23),
    pbs_level: DecompositionLevelCount(1),
    ks_base_log: DecompositionBaseLog(4),
    ks_level: DecompositionLevelCount(5),
    ks32: false,
    grouping_factor: None,
};

/// Every named set, secure ones first.
pub const ALL: [&ParameterSet; 7] = [
    &DIGITS_128,
    &DIGITS_KS32_128,
    &DIGITS_MB4_128,
    &BITS_128,
    &GATES_128,
    &INSECURE_TEST_DIGITS,
    &INSECURE_TEST_BITS,
];

/// The names of the named sets, comma-separated: the secure ones, or all.
pub fn names(secure_only: bool) -> String {
    ALL.iter()
        .filter(|p| !(secure_only && p.is_insecure()))
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ParameterSet {
    /// Looks a set up by name (any set, insecure ones included: for tests).
    pub fn by_name(name: &str) -> Result<&'static ParameterSet, Error> {
        ALL.iter()
            .copied()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownParams(name.to_string()))
    }

    /// Looks a set up for a front end: insecure sets are refused.
    pub fn for_front_end(name: &str) -> Result<&'static ParameterSet, Error> {
        let p = Self::by_name(name)?;
        if p.is_insecure() {
            return Err(Error::InsecureParams(p.name));
        }
        Ok(p)
    }

    /// Whether it is an `INSECURE_*` test set (no security claimed).
    pub fn is_insecure(&self) -> bool {
        self.security_bits == 0
    }

    /// `2^pi`, the number of digit values.
    pub fn message_modulus(&self) -> u64 {
        1 << self.pi
    }

    /// The encoding factor `2^(64 - pi)`.
    pub fn delta(&self) -> u64 {
        1 << (64 - self.pi)
    }

    /// Dimension of the ciphertexts hearth keeps between bootstraps
    /// (the GLWE key read as an LWE key: `k * N`).
    pub fn big_lwe_dimension(&self) -> LweDimension {
        self.glwe_dimension
            .to_equivalent_lwe_dimension(self.polynomial_size)
    }

    /// GGSW ciphertexts in the bootstrap key: one per small-key coefficient
    /// for the classical bootstrap, `2^g - 1` per group of `g` for the
    /// multi-bit one.
    pub fn bootstrap_ggsw_count(&self) -> usize {
        let n = self.lwe_dimension.0;
        match self.grouping_factor {
            None => n,
            Some(g) => n / g.0 * g.ggsw_per_multi_bit_element().0,
        }
    }

    /// Bytes of one ciphertext kept between bootstraps.
    pub fn ciphertext_bytes(&self) -> u64 {
        (self.big_lwe_dimension().0 as u64 + 1) * 8
    }

    /// Bytes of one bootstrap's working GLWE accumulator and scratch (an
    /// estimate: the accumulator, its FFT twin and the key-switched input).
    pub fn accumulator_bytes(&self) -> u64 {
        let glwe = self.glwe_dimension.to_glwe_size().0 as u64 * self.polynomial_size.0 as u64;
        glwe * 8 * 3 + (self.lwe_dimension.0 as u64 + 1) * 8
    }
}

//! Random composed programs of the typed integer API, differential against
//! `BigInt` arithmetic on the clear backend (proptest: a failure shrinks to
//! a minimal program), and small ones encrypted on `DIGITS_128` against the
//! clear backend digit for digit. The long run is
//! `hearth-bench fuzz-programs --count N` (and `--encrypted`), or these
//! property tests with `PROPTEST_CASES=N` (their own counts otherwise).

use hearth::backend::CpuBackend;
use hearth::digits::Comparison;
use hearth::{DIGITS_128, INSECURE_TEST_DIGITS};
use hearth_testkit::programs::{Limits, Op, ProgramSpec};
use proptest::prelude::*;
use rand::SeedableRng;

fn constant() -> impl Strategy<Value = i64> {
    prop_oneof![-16i64..=16, -(1i64 << 40)..=(1i64 << 40)]
}

fn comparison() -> impl Strategy<Value = Comparison> {
    prop::sample::select(Comparison::ALL.to_vec())
}

/// Every public operation; operands are indices of earlier values (taken
/// modulo their number, so repeated operands are common).
fn op() -> impl Strategy<Value = Op> {
    let i = || 0usize..32;
    prop_oneof![
        (i(), i()).prop_map(|(a, b)| Op::Add(a, b)),
        (i(), i()).prop_map(|(a, b)| Op::Sub(a, b)),
        (i(), i()).prop_map(|(a, b)| Op::Mul(a, b)),
        i().prop_map(Op::Neg),
        (i(), 0u8..=8).prop_map(|(a, k)| Op::Shl(a, k)),
        (i(), constant()).prop_map(|(a, c)| Op::AddConst(a, c)),
        (i(), constant()).prop_map(|(a, c)| Op::SubConst(a, c)),
        (i(), constant()).prop_map(|(a, c)| Op::ScalarMul(a, c)),
        i().prop_map(Op::Square),
        i().prop_map(Op::Signum),
        (i(), i(), comparison()).prop_map(|(a, b, c)| Op::Compare(a, b, c)),
        (i(), i()).prop_map(|(a, b)| Op::Max(a, b)),
        (i(), i()).prop_map(|(a, b)| Op::Min(a, b)),
        i().prop_map(Op::Abs),
        i().prop_map(Op::Relu),
        (i(), 0u8..=20).prop_map(|(a, k)| Op::Round(a, k)),
        i().prop_map(Op::ToBits),
        prop::collection::vec(i(), 0..=8).prop_map(Op::Sum),
        constant().prop_map(Op::Constant),
        (i(), 0u8..=20).prop_map(|(a, n)| Op::Wrap(a, n)),
        (i(), i(), 0u8..=20).prop_map(|(a, b, n)| Op::WrappingAdd(a, b, n)),
        (i(), i(), 0u8..=20).prop_map(|(a, b, n)| Op::WrappingMul(a, b, n)),
    ]
}

/// Up to 4 inputs of 0-16 digits (any signed-binary representation, or
/// two's complement), 1-10 operations.
fn program() -> impl Strategy<Value = ProgramSpec> {
    (
        prop::collection::vec(prop::collection::vec(-1i8..=1, 0..=16), 1..=4),
        prop::collection::vec(any::<bool>(), 0..=4),
        prop::collection::vec(op(), 1..=10),
    )
        .prop_map(|(inputs, twos, ops)| ProgramSpec {
            inputs,
            twos,
            ops,
            max_len: Limits::default().max_len,
        })
}

/// `PROPTEST_CASES` when set (a long run), else `default`.
fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok());
    ProptestConfig::with_cases(n.unwrap_or(default))
}

proptest! {
    #![proptest_config(cases(2500))]

    #[test]
    fn random_programs_are_exact(spec in program()) {
        if let Err(e) = spec.check(&INSECURE_TEST_DIGITS) {
            prop_assert!(false, "{e}\n{spec}");
        }
    }
}

proptest! {
    #![proptest_config(cases(64))]

    /// Encrypted on the insecure set, then packed as a server sends the
    /// results back: the owner decrypts what the full ciphertexts hold.
    #[test]
    fn random_programs_packed_decrypt_exactly(spec in program()) {
        let (client, server) = hearth_testkit::keys::keys(&INSECURE_TEST_DIGITS);
        if let Err(e) = spec.check_packed(client, server) {
            prop_assert!(false, "{e}\n{spec}");
        }
    }
}

/// The long run: `cargo test --release -p hearth --test all programs:: -- --ignored`
/// (10^6 programs; the CLI does the same in parallel).
#[test]
#[ignore = "long: a million random programs"]
fn a_million_random_programs() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    for i in 0..1_000_000 {
        let spec = ProgramSpec::random(&mut rng, &Limits::default());
        if let Err(e) = spec.check(&INSECURE_TEST_DIGITS) {
            let small = spec.shrink(|c| c.check(&INSECURE_TEST_DIGITS).is_err());
            panic!("program {i}: {e}\n{spec}\nshrunk:\n{small}");
        }
    }
}

#[test]
fn random_programs_encrypted_equal_the_clear_backend() {
    let (client, server) = hearth_testkit::keys::keys(&DIGITS_128);
    let cpu = CpuBackend::new(server, None).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut pbs = 0;
    for i in 0..2 {
        let spec = ProgramSpec::random(&mut rng, &Limits::small());
        match spec.check_encrypted(client, &cpu) {
            Ok(c) => pbs += c.pbs,
            Err(e) => panic!("program {i}: {e}\n{spec}"),
        }
    }
    eprintln!("2 encrypted programs, {pbs} bootstraps: equal to the clear backend");
    assert!(pbs > 0, "the programs bootstrap");
    // Two more, their results packed as a server sends them back.
    for i in 0..2 {
        let spec = ProgramSpec::random(&mut rng, &Limits::small());
        match spec.check_packed(client, server) {
            Ok(packed) => assert!(packed, "program {i} packs\n{spec}"),
            Err(e) => panic!("program {i}, packed: {e}\n{spec}"),
        }
    }
}

mod words {
    use hearth::{GATES_128, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
    use hearth_testkit::word_programs::{WordOp, WordSpec};
    use proptest::prelude::*;
    use rand::SeedableRng;

    /// A word type of 8-64 bits, 1-3 inputs, 1-8 operations of every kind
    /// (operand indices taken modulo the values so far).
    fn program() -> impl Strategy<Value = WordSpec> {
        (
            prop::sample::select(vec![8usize, 16, 32, 64]),
            any::<bool>(),
            prop::collection::vec(any::<u64>(), 1..=3),
            prop::collection::vec(
                (
                    0..WordOp::KINDS,
                    any::<u8>(),
                    any::<u8>(),
                    any::<u8>(),
                    any::<u8>(),
                )
                    .prop_map(|(k, a, b, c, d)| WordOp::from_parts(k, a, b, c, d)),
                1..=8,
            ),
        )
            .prop_map(|(bits, signed, inputs, ops)| WordSpec {
                bits,
                signed,
                inputs: inputs
                    .into_iter()
                    .map(|x| x & (u64::MAX >> (64 - bits)))
                    .collect(),
                ops,
            })
    }

    proptest! {
        #![proptest_config(super::cases(48))]

        /// Encrypted on an insecure set of each family's key, then packed.
        #[test]
        fn random_word_programs_packed_decrypt_exactly(
            spec in program(),
            params in prop::sample::select(vec![&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS]),
        ) {
            let (client, server) = hearth_testkit::keys::keys(params);
            if let Err(e) = spec.check_packed(client, server) {
                prop_assert!(false, "{e}\n{spec}");
            }
        }
    }

    proptest! {
        #![proptest_config(super::cases(200))]

        /// On GATES_128's circuits and on DIGITS_128's (the key words share
        /// with `Int`: other gate forms, packed comparisons).
        #[test]
        fn random_word_programs_are_exact(
            spec in program(),
            threads in prop::sample::select(vec![2usize, 16]),
            params in prop::sample::select(vec![&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS]),
        ) {
            if let Err(e) = spec.check(params, threads) {
                prop_assert!(false, "{e}\n{spec}");
            }
        }
    }

    #[test]
    fn random_word_programs_encrypted_equal_the_clear_backend() {
        let (client, server) = hearth_testkit::keys::keys(&GATES_128);
        let cpu = hearth::backend::CpuBackend::new(server, None).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut pbs = 0;
        for i in 0..4 {
            let mut spec = WordSpec::random(&mut rng, 3);
            spec.bits = 8;
            spec.inputs.iter_mut().for_each(|x| *x &= 0xff);
            match spec.check_encrypted(client, &cpu, 2) {
                Ok(c) => pbs += c.pbs,
                Err(e) => panic!("program {i}: {e}\n{spec}"),
            }
            if i % 2 == 0 {
                match spec.check_packed(client, server) {
                    Ok(packed) => assert!(packed, "program {i} packs\n{spec}"),
                    Err(e) => panic!("program {i}, packed: {e}\n{spec}"),
                }
            }
        }
        eprintln!("4 encrypted 8-bit word programs, {pbs} bootstraps: equal to the clear backend");
        assert!(pbs > 0);
    }
}

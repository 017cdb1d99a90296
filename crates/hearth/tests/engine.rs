//! The encrypted path against the clear backend, and the checks that refuse
//! mixed keys and parameters. Run in release mode (`cargo test --release`).

use hearth::backend::{Backend, ClearBackend, CountBackend, CpuBackend, Depth};
use hearth::{
    CircuitBuilder, ClientKey, Error, Lut, ParameterSet, BITS_128, DIGITS_128, INSECURE_TEST_BITS,
    INSECURE_TEST_DIGITS,
};
use hearth_testkit::circuits::random_circuit;

/// Each value encrypted.
fn encrypt_all(client: &ClientKey, values: &[u64]) -> Vec<hearth::Ciphertext> {
    values
        .iter()
        .map(|&v| client.encrypt(v as i64).unwrap())
        .collect()
}

/// Encrypts, runs on the cpu backend, decrypts, and compares every output
/// digit with the clear backend.
fn check_random_circuits(params: &'static ParameterSet, seeds: std::ops::Range<u64>, size: usize) {
    // The keys shared by this process's tests (one keygen per set).
    let (client, server) = hearth_testkit::keys::keys(params);
    let cpu = CpuBackend::new(server, Some(2)).unwrap();
    let mut total_pbs = 0;
    for seed in seeds {
        let rc = random_circuit(params, seed, 3, size, 1 + seed as usize % 3).unwrap();
        let expected = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
        let cts = encrypt_all(client, &rc.inputs);
        let (out, report) = cpu.run(&rc.circuit, &cts).unwrap();
        let got: Vec<u64> = out.iter().map(|c| client.decrypt(c).unwrap()).collect();
        assert_eq!(got, expected, "{} seed {seed}", params.name);
        assert_eq!(report.pbs, size, "every requested bootstrap is real");
        total_pbs += report.pbs;
    }
    assert!(total_pbs > 0);
}

#[test]
fn cpu_matches_clear_on_100_random_circuits_insecure_digits() {
    check_random_circuits(&INSECURE_TEST_DIGITS, 0..100, 30);
}

#[test]
fn cpu_matches_clear_on_random_circuits_insecure_bits() {
    check_random_circuits(&INSECURE_TEST_BITS, 1000..1040, 30);
}

#[test]
fn cpu_matches_clear_on_random_circuits_digits_128() {
    check_random_circuits(&DIGITS_128, 2000..2003, 12);
}

#[test]
fn cpu_matches_clear_on_random_circuits_bits_128() {
    check_random_circuits(&BITS_128, 3000..3003, 12);
}

/// Ready bootstraps run in groups (one pass over the keys, the default)
/// give the ungrouped path's ciphertexts bit for bit, and the clear
/// backend's values: random circuits of several parallel streams (wide
/// levels), the KS32 set and the 64-bit one, 1 and 2 threads.
#[test]
fn grouped_bootstraps_are_the_ungrouped_ones_bit_for_bit() {
    use hearth::DIGITS_KS32_128;
    for (params, seeds) in [
        (&DIGITS_KS32_128, 4000..4003),
        (&INSECURE_TEST_DIGITS, 4100..4110),
    ] {
        let (client, server) = hearth_testkit::keys::keys(params);
        for threads in [1, 2] {
            let group = hearth::backend::cpu::DEFAULT_GROUP;
            let grouped = CpuBackend::new(server, Some(threads))
                .unwrap()
                .with_group(group);
            assert_eq!(grouped.group(), group);
            let single = CpuBackend::new(server, Some(threads))
                .unwrap()
                .with_group(1);
            assert_eq!(single.group(), 1);
            for seed in seeds.clone() {
                let rc = random_circuit(params, seed, 4, 16, 8).unwrap();
                let expected = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
                let cts = encrypt_all(client, &rc.inputs);
                let a = grouped.evaluate(&rc.circuit, &cts).unwrap();
                let b = single.evaluate(&rc.circuit, &cts).unwrap();
                let lwes = |v: &[hearth::Ciphertext]| -> Vec<Vec<u64>> {
                    v.iter().map(|c| c.lwe().as_ref().to_vec()).collect()
                };
                assert_eq!(lwes(&a), lwes(&b), "{} seed {seed}", params.name);
                let got: Vec<u64> = a.iter().map(|c| client.decrypt(c).unwrap()).collect();
                assert_eq!(got, expected, "{} seed {seed}", params.name);
            }
        }
    }
}

#[test]
fn many_lut_outputs_match_their_tables() {
    let params = &INSECURE_TEST_DIGITS;
    let client = ClientKey::generate(params);
    let server = client.server_key();
    let mut b = CircuitBuilder::new(params);
    let x = b.input(-2, 2).unwrap();
    let luts: Vec<Lut> = (0..3)
        .map(|k| Lut::from_fn(5, -2, 2, move |v| v * v + k).unwrap())
        .collect();
    let refs: Vec<&Lut> = luts.iter().collect();
    for w in b.bootstrap_many(x, &refs).unwrap() {
        b.output(w).unwrap();
    }
    let c = b.build();
    assert_eq!(c.stats().pbs, 1);
    let cpu = CpuBackend::new(&server, Some(1)).unwrap();
    for v in -2i64..=2 {
        let want: Vec<u64> = (0..3).map(|k| ((v * v + k) % 32) as u64).collect();
        assert_eq!(
            ClearBackend
                .evaluate(&c, &[v.rem_euclid(32) as u64])
                .unwrap(),
            want
        );
        let out = cpu.evaluate(&c, &[client.encrypt(v).unwrap()]).unwrap();
        let got: Vec<u64> = out.iter().map(|o| client.decrypt(o).unwrap()).collect();
        assert_eq!(got, want, "x = {v}");
    }
    // Four tables on five values do not fit 16 slots.
    let mut b = CircuitBuilder::new(params);
    let x = b.input(-2, 2).unwrap();
    let four = [&luts[0], &luts[1], &luts[2], &luts[0]];
    assert!(matches!(
        b.bootstrap_many(x, &four),
        Err(hearth::BuildError::ManyLutTooWide {
            needed: 20,
            available: 16,
            ..
        })
    ));
}

#[test]
fn mixed_keys_and_parameters_are_refused() {
    let a = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let b = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let bits = ClientKey::generate(&INSECURE_TEST_BITS);
    let server_a = a.server_key();
    let mut builder = CircuitBuilder::new(&INSECURE_TEST_DIGITS);
    let x = builder.input(0, 3).unwrap();
    let id = Lut::from_fn(5, 0, 3, |v| v).unwrap();
    let y = builder.bootstrap(x, &id).unwrap();
    builder.output(y).unwrap();
    let circuit = builder.build();
    let cpu = CpuBackend::new(&server_a, Some(1)).unwrap();

    let foreign = b.encrypt(1).unwrap();
    assert!(matches!(
        cpu.evaluate(&circuit, std::slice::from_ref(&foreign)),
        Err(Error::WrongKey { .. })
    ));
    assert!(matches!(a.decrypt(&foreign), Err(Error::WrongKey { .. })));
    let other_params = bits.encrypt(1).unwrap();
    assert!(matches!(
        cpu.evaluate(&circuit, &[other_params]),
        Err(Error::ParamsMismatch { .. })
    ));
    assert!(matches!(
        cpu.evaluate(&circuit, &[]),
        Err(Error::InputCount {
            expected: 1,
            found: 0
        })
    ));

    // A circuit for other parameters.
    let mut builder = CircuitBuilder::new(&INSECURE_TEST_BITS);
    let x = builder.input(0, 1).unwrap();
    builder.output(x).unwrap();
    let bits_circuit = builder.build();
    assert!(matches!(
        cpu.evaluate(&bits_circuit, &[a.encrypt(1).unwrap()]),
        Err(Error::ParamsMismatch { .. })
    ));

    // The right key works, and values out of the digit range are refused.
    let ok = cpu.evaluate(&circuit, &[a.encrypt(3).unwrap()]).unwrap();
    assert_eq!(a.decrypt(&ok[0]).unwrap(), 3);
    assert!(matches!(a.encrypt(32), Err(Error::ValueOutOfRange { .. })));
    assert!(matches!(a.encrypt(-17), Err(Error::ValueOutOfRange { .. })));
}

#[test]
fn clear_backend_checks_inputs_and_assumptions() {
    let mut b = CircuitBuilder::new(&INSECURE_TEST_DIGITS);
    let x = b.input(-1, 1).unwrap();
    let narrowed = b.assume_range(x, 0, 1, 1).unwrap();
    let lut = Lut::from_fn(5, 0, 1, |v| v).unwrap();
    let y = b.bootstrap(narrowed, &lut).unwrap();
    b.output(y).unwrap();
    let c = b.build();
    assert_eq!(ClearBackend.evaluate(&c, &[1]).unwrap(), vec![1]);
    assert!(matches!(
        ClearBackend.evaluate(&c, &[31]),
        Err(Error::SelectorOutOfRange { .. })
    ));
    assert!(matches!(
        ClearBackend.evaluate(&c, &[5]),
        Err(Error::InputOutOfRange { .. })
    ));
    assert_eq!(
        CountBackend.evaluate(&c, &[Depth(3)]).unwrap(),
        vec![Depth(4)]
    );
}

/// A clear constant keeps its value through an assumed range: lookups
/// on it fold to the table's value at the constant (a wider assumed range
/// once made them read the range's first value).
#[test]
fn assumed_ranges_keep_constants() {
    let mut b = CircuitBuilder::new(&INSECURE_TEST_DIGITS);
    let c = b.constant(2);
    let assumed = b.assume_range(c, -3, 3, 1).unwrap();
    assert_eq!(b.constant_value(assumed).unwrap(), Some(2));
    let lut = Lut::from_fn(5, -3, 3, |v| v * v - 1).unwrap();
    let one = Lut::from_fn(5, -3, 3, |v| v + 1).unwrap();
    let y = b.bootstrap(assumed, &lut).unwrap();
    let many = b.bootstrap_many(assumed, &[&lut, &one]).unwrap();
    assert_eq!(b.constant_value(y).unwrap(), Some(3));
    assert_eq!(b.constant_value(many[0]).unwrap(), Some(3));
    assert_eq!(b.constant_value(many[1]).unwrap(), Some(3));
}

#[test]
fn trivial_ciphertexts_and_signed_views() {
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let server = client.server_key();
    for v in -16i64..16 {
        let t = server.trivial(v).unwrap();
        assert_eq!(client.decrypt_signed(&t).unwrap(), v);
        assert_eq!(
            client.decrypt_signed(&client.encrypt(v).unwrap()).unwrap(),
            v
        );
    }
}

#[test]
fn intermediates_are_freed_after_their_last_use() {
    // 8 independent chains of 300 bootstraps each: x_{i+1} = f(x_i + x_{i-1}).
    // Freed after last use, at most a few values per chain are alive;
    // kept, all 2 400 would be.
    let params = &INSECURE_TEST_DIGITS;
    let client = ClientKey::generate(params);
    let server = client.server_key();
    let lut = Lut::negacyclic(5, |v| (3 * v + 1) % 32).unwrap();
    let mut b = CircuitBuilder::new(params);
    let (chains, length) = (8, 300);
    let mut ends = Vec::new();
    for _ in 0..chains {
        let mut prev = b.input(0, 3).unwrap();
        let mut cur = b.bootstrap(prev, &lut).unwrap();
        for _ in 1..length {
            let s = b.add(cur, prev).unwrap();
            prev = cur;
            cur = b.bootstrap(s, &lut).unwrap();
        }
        ends.push(cur);
    }
    for e in ends {
        b.output(e).unwrap();
    }
    let circuit = b.build();
    let stats = circuit.stats();
    assert_eq!(stats.pbs, chains * length);
    assert_eq!(stats.depth as usize, length);
    let inputs: Vec<u64> = (0..chains as u64).map(|i| i % 4).collect();
    let expected = ClearBackend.evaluate(&circuit, &inputs).unwrap();
    let cts: Vec<_> = inputs
        .iter()
        .map(|&v| client.encrypt(v as i64).unwrap())
        .collect();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = done.clone();
    let cpu = CpuBackend::new(&server, Some(2))
        .unwrap()
        .with_progress(move |d, total| {
            assert_eq!(total, chains * length);
            seen.fetch_max(d, std::sync::atomic::Ordering::Relaxed);
        });
    let (out, report) = cpu.run(&circuit, &cts).unwrap();
    let got: Vec<u64> = out.iter().map(|c| client.decrypt(c).unwrap()).collect();
    assert_eq!(got, expected);
    assert_eq!(
        done.load(std::sync::atomic::Ordering::Relaxed),
        chains * length
    );
    assert!(
        report.peak_live <= 3 * chains,
        "peak live {}",
        report.peak_live
    );
    assert!(
        stats.peak_live <= 3 * chains,
        "level-order peak {}",
        stats.peak_live
    );
}

/// The one backend selector: cpu as asked; gpu where none can be used
/// falls back to cpu with the reason (or, under `HEARTH_REQUIRE_GPU`,
/// fails), before a key too (`Engine::usable`); mpi without the ranks of
/// a launch is refused; whatever it
/// chose computes what the clear backend computes.
#[test]
fn the_selector_chooses_falls_back_with_its_reason_and_computes_exactly() {
    use hearth::backend::{no_gpu_reason, Engine, Evaluator};
    let params = &INSECURE_TEST_DIGITS;
    let (client, server) = hearth_testkit::keys::keys(params);
    let cpu = Evaluator::choose(Engine::Cpu, server, Some(2)).unwrap();
    assert!(cpu.fallback.is_none());
    assert_eq!(cpu.evaluator.engine(), Engine::Cpu);
    assert_eq!(cpu.evaluator.threads(), vec![2]);
    match (no_gpu_reason(), std::env::var_os("HEARTH_REQUIRE_GPU")) {
        (Some(why), None) => {
            let gpu = Evaluator::choose(Engine::Gpu, server, Some(1)).unwrap();
            assert_eq!(gpu.fallback.as_deref(), Some(why));
            assert_eq!(gpu.evaluator.engine(), Engine::Cpu);
        }
        (Some(why), Some(_)) => match Evaluator::choose(Engine::Gpu, server, Some(1)) {
            Err(Error::Gpu(m)) => assert!(m.contains(why) && m.contains("HEARTH_REQUIRE_GPU")),
            _ => panic!("HEARTH_REQUIRE_GPU must turn the fallback into an error"),
        },
        (None, _) => {
            let gpu = Evaluator::choose(Engine::Gpu, server, Some(1)).unwrap();
            assert_eq!(gpu.evaluator.engine(), Engine::Gpu);
        }
    }
    match Evaluator::choose(Engine::Mpi, server, Some(1)) {
        Err(Error::Cluster(m)) => assert!(m.contains("mpirun"), "{m}"),
        _ => panic!("mpi needs the ranks of a launch"),
    }
    for (text, engine) in [
        ("cpu", Engine::Cpu),
        ("GPU", Engine::Gpu),
        ("Mpi", Engine::Mpi),
    ] {
        assert_eq!(text.parse::<Engine>().unwrap(), engine);
        assert_eq!(engine.to_string().parse::<Engine>().unwrap(), engine);
    }
    assert!(matches!("tpu".parse::<Engine>(), Err(Error::Config(_))));
    assert_eq!(Engine::ALL.map(Engine::name), ["cpu", "gpu", "mpi"]);
    // The same rule before any key (a server's start, Python's warning).
    assert_eq!(Engine::Cpu.usable().unwrap(), (Engine::Cpu, None));
    assert_eq!(Engine::Mpi.usable().unwrap(), (Engine::Mpi, None));
    match (no_gpu_reason(), std::env::var_os("HEARTH_REQUIRE_GPU")) {
        (None, _) => assert_eq!(Engine::Gpu.usable().unwrap(), (Engine::Gpu, None)),
        (Some(why), None) => assert_eq!(
            Engine::Gpu.usable().unwrap(),
            (Engine::Cpu, Some(why.to_string()))
        ),
        (Some(_), Some(_)) => assert!(matches!(Engine::Gpu.usable(), Err(Error::Gpu(_)))),
    }
    let rc = random_circuit(params, 11, 3, 40, 2).unwrap();
    let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
    let ev = cpu.evaluator.with_progress(|_, _| {});
    let out = ev
        .evaluate(&rc.circuit, &rc.encrypt(client).unwrap())
        .unwrap();
    let got: Vec<u64> = out.iter().map(|c| client.decrypt(c).unwrap()).collect();
    assert_eq!(got, want);
}

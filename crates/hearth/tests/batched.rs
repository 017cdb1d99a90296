//! The batched schedule (the GPU backend's, run here by the CPU executor)
//! against the dependency-driven cpu backend: the same ciphertexts bit for
//! bit, on random circuits and on composed integer programs with many-LUT
//! bootstraps; typed errors for foreign keys and parameters. Release mode.

use hearth::backend::{Backend, Batched, ClearBackend, ClearBatch, CpuBackend, CpuBatch, Plan};
use hearth::{ClientKey, Error, ParameterSet, DIGITS_128, INSECURE_TEST_BITS};
use hearth::{Lut, INSECURE_TEST_DIGITS};
use hearth_testkit::circuits::random_circuit;
use hearth_testkit::programs::{Limits, ProgramSpec};
use hearth_testkit::word_programs::WordSpec;
use rand::SeedableRng;

fn batched(server: &hearth::ServerKey) -> Batched<CpuBatch<'_>> {
    Batched::new(CpuBatch::new(CpuBackend::new(server, Some(2)).unwrap()))
}

fn same_ciphertexts(params: &'static ParameterSet, seeds: std::ops::Range<u64>, size: usize) {
    // The keys shared by this process's tests (one keygen per set).
    let (client, server) = hearth_testkit::keys::keys(params);
    let cpu = CpuBackend::new(server, Some(2)).unwrap();
    let batch = batched(server);
    for seed in seeds {
        let rc = random_circuit(params, seed, 4, size, 1 + seed as usize % 4).unwrap();
        let cts: Vec<_> = rc
            .inputs
            .iter()
            .map(|&v| client.encrypt(v as i64).unwrap())
            .collect();
        let want = cpu.evaluate(&rc.circuit, &cts).unwrap();
        let got = batch.evaluate(&rc.circuit, &cts).unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.lwe(), w.lwe(), "{} seed {seed}", params.name);
        }
        let clear = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
        let dec: Vec<u64> = got.iter().map(|c| client.decrypt(c).unwrap()).collect();
        assert_eq!(dec, clear, "{} seed {seed}", params.name);
    }
}

#[test]
fn batched_cpu_equals_cpu_bit_for_bit_insecure() {
    same_ciphertexts(&INSECURE_TEST_DIGITS, 0..16, 60);
    same_ciphertexts(&INSECURE_TEST_BITS, 100..110, 60);
}

#[test]
fn batched_cpu_equals_cpu_bit_for_bit_digits_128() {
    same_ciphertexts(&DIGITS_128, 200..202, 16);
}

/// On the INSECURE twins (the same circuits as DIGITS_128's and
/// GATES_128's); the batched schedule on DIGITS_128 keys is checked bit
/// for bit above.
#[test]
fn batched_integer_programs_equal_the_clear_backend() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let (client, server) = hearth_testkit::keys::keys(&INSECURE_TEST_DIGITS);
    let batch = batched(server);
    for i in 0..3 {
        let spec = ProgramSpec::random(&mut rng, &Limits::small());
        if let Err(e) = spec.check_encrypted(client, &batch) {
            panic!("program {i}: {e}\n{spec}");
        }
    }
    let (client, server) = hearth_testkit::keys::keys(&INSECURE_TEST_BITS);
    let batch = batched(server);
    for i in 0..2 {
        let mut spec = WordSpec::random(&mut rng, 3);
        spec.bits = 8;
        spec.inputs.iter_mut().for_each(|x| *x &= 0xff);
        if let Err(e) = spec.check_encrypted(client, &batch, 2) {
            panic!("word program {i}: {e}\n{spec}");
        }
    }
}

#[test]
fn many_lut_plans_match_the_clear_backend() {
    // Composed programs use many-LUT bootstraps; the plan places each
    // output where tfhe-rs's CUDA many-LUT bootstrap writes it.
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let mut many = 0;
    for i in 0..300 {
        let spec = ProgramSpec::random(&mut rng, &Limits::small());
        let Ok((prog, _)) = spec.build(&INSECURE_TEST_DIGITS) else {
            continue;
        };
        let circuit = prog.circuit();
        let plan = Plan::new(circuit).unwrap();
        many += plan
            .levels
            .iter()
            .flatten()
            .filter(|l| l.outputs > 1)
            .count();
        let inputs: Vec<u64> = spec
            .clear_inputs(&INSECURE_TEST_DIGITS)
            .into_iter()
            .flatten()
            .collect();
        let want = ClearBackend.evaluate(circuit, &inputs);
        let got = Batched::new(ClearBatch::default()).run_plan(circuit, &plan, &inputs);
        assert_eq!(got.ok(), want.ok(), "program {i}\n{spec}");
    }
    assert!(many > 0, "some launches are many-LUT");
}

#[test]
fn batched_refuses_foreign_keys_and_parameters() {
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let server = client.server_key();
    let other = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let batch = batched(&server);
    let mut b = hearth::CircuitBuilder::new(&INSECURE_TEST_DIGITS);
    let x = b.input(-1, 1).unwrap();
    let y = b.bootstrap(x, &Lut::negacyclic(5, |v| v).unwrap()).unwrap();
    b.output(y).unwrap();
    let circuit = b.build();
    let foreign = other.encrypt(1).unwrap();
    assert!(matches!(
        batch.evaluate(&circuit, &[foreign]),
        Err(Error::WrongKey { .. })
    ));
    assert!(matches!(
        batch.evaluate(&circuit, &[]),
        Err(Error::InputCount { .. })
    ));
    let mut b = hearth::CircuitBuilder::new(&INSECURE_TEST_BITS);
    let x = b.input(0, 2).unwrap();
    b.output(x).unwrap();
    let bits = b.build();
    assert!(matches!(
        batch.evaluate(&bits, &[client.encrypt(1).unwrap()]),
        Err(Error::ParamsMismatch { .. })
    ));
    // The backend still works after refusals.
    let out = batch
        .evaluate(&circuit, &[client.encrypt(1).unwrap()])
        .unwrap();
    assert_eq!(client.decrypt_signed(&out[0]).unwrap(), 1);
}

/// `bench noise --backend gpu` runs each round as one circuit on a backend:
/// on the batched CPU executor it must see what the direct measurement sees
/// (fresh encryptions differ, so the same statistics, not the same bits).
#[test]
fn noise_measured_through_a_backend_matches_the_direct_measurement() {
    use hearth::backend::noise::{measure, measure_on};
    use hearth::crypto::params::Margin;
    let params = &INSECURE_TEST_DIGITS;
    let client = ClientKey::generate(params);
    let server = client.server_key();
    let margin = Margin::ALL
        .into_iter()
        .find(|&m| params.budgets.at(m) > 0)
        .unwrap();
    let qw = params.budgets.at(margin);
    // Two rounds through the backend (4 096 + 104); 1 500 direct samples
    // put the direct standard deviations within about 2%.
    let n = 4200;
    let direct = measure(&client, &server, qw, margin, 1500, 3, &|_| {}).unwrap();
    let batch = batched(&server);
    let via = measure_on(&client, &server, Some(&batch), qw, margin, n, 3, &|_| {}).unwrap();
    assert_eq!((via.wrong, direct.wrong), (0, 0));
    assert_eq!(via.bootstraps, n);
    for (a, b, what) in [
        (via.pbs_std_measured, direct.pbs_std_measured, "output"),
        (via.input_std_measured, direct.input_std_measured, "input"),
    ] {
        assert!((0.85..1.18).contains(&(a / b)), "{what}: {a} against {b}");
    }
}

//! The MPI backend on 1, 2 and 4 ranks of this machine (feature `mpi`).
//!
//! Each test launches `mpirun -np N` on this test binary itself, running
//! only [`mpi_child`] with `HEARTH_MPI_CHILD` naming what to check. Every
//! rank but 0 serves; rank 0 compares the MPI backend with the cpu backend
//! and the clear backend (decrypted: each process plans its own FFT, so
//! ciphertexts may differ in their last bits), then prints a line the parent test looks for. Without `mpirun`
//! the tests say so and pass, unless `HEARTH_REQUIRE_MPI` is set.
#![cfg(feature = "mpi")]

use std::process::Command;
use std::time::{Duration, Instant};

use hearth::backend::{Backend, ClearBackend, Cluster, CpuBackend};
use hearth::{
    Ciphertext, ClientKey, Error, ParameterSet, DIGITS_128, INSECURE_TEST_BITS,
    INSECURE_TEST_DIGITS,
};
use hearth_testkit::circuits::random_circuit;
use hearth_testkit::programs::{Limits, ProgramSpec};
use hearth_testkit::word_programs::WordSpec;
use rand::SeedableRng;

/// Runs `mpirun -np ranks` on this binary's [`mpi_child`] in `mode`:
/// `None` when there is no `mpirun` (and it is not required).
fn launch(ranks: usize, mode: &str, timeout_s: u64) -> Option<(bool, String, Duration)> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("HEARTH_REQUIRE_MPI").is_none(),
            "HEARTH_REQUIRE_MPI is set and mpirun is missing"
        );
        eprintln!("skipped: no mpirun (install openmpi-bin)");
        return None;
    }
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let out = Command::new("timeout")
        .arg(format!("{}", timeout_s + 120))
        .args(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(ranks.to_string())
        .arg(exe)
        .arg("--exact")
        .arg(child_test_name())
        .args(["--nocapture", "--test-threads=1"])
        .env("HEARTH_MPI_CHILD", mode)
        .env("HEARTH_MPI_TIMEOUT", timeout_s.to_string())
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), text, start.elapsed()))
}

fn expect_ok(ranks: usize, mode: &str) {
    let Some((ok, text, _)) = launch(ranks, mode, 60) else {
        return;
    };
    let want = format!("MPI OK {mode} on {ranks} ranks");
    assert!(ok && text.contains(&want), "{want} not reported:\n{text}");
}

#[test]
fn one_rank_equals_cpu() {
    expect_ok(1, "digits");
}

#[test]
fn two_ranks_equal_cpu_digits() {
    expect_ok(2, "digits");
}

#[test]
fn four_ranks_equal_cpu_digits() {
    expect_ok(4, "digits");
}

#[test]
fn two_ranks_equal_cpu_bits() {
    expect_ok(2, "bits");
}

#[test]
fn two_ranks_equal_cpu_on_real_parameters() {
    expect_ok(2, "real");
}

/// A launch in `mode` (rank 1 stopped at some point) must fail after the
/// 4 s timeout with an error naming rank 1.
fn expect_rank_1_named(mode: &str) {
    let Some((ok, text, wall)) = launch(2, mode, 4) else {
        return;
    };
    assert!(!ok, "the launch must fail:\n{text}");
    assert!(
        text.contains("MPI rank 1: did not answer within 4s"),
        "no error naming rank 1:\n{text}"
    );
    assert!(wall < Duration::from_secs(40), "took {wall:?}:\n{text}");
}

#[test]
fn a_stopped_rank_is_named_within_the_timeout() {
    // Rank 1 stops itself (SIGSTOP) 1 s after it starts, while the key is
    // shared or while it serves (on a loaded machine, either).
    expect_rank_1_named("stop");
}

#[test]
fn a_rank_stopped_before_the_key_arrives_is_named() {
    expect_rank_1_named("stop-early");
}

#[test]
fn a_killed_rank_ends_the_launch_naming_it() {
    // SIGKILL: mpirun itself ends every rank and names the dead one.
    let Some((ok, text, wall)) = launch(2, "kill", 30) else {
        return;
    };
    assert!(!ok, "the launch must fail:\n{text}");
    assert!(
        text.contains("rank 1") && text.contains("signal 9"),
        "mpirun did not name rank 1:\n{text}"
    );
    assert!(wall < Duration::from_secs(40), "took {wall:?}:\n{text}");
}

fn decrypt(client: &ClientKey, cts: &[Ciphertext]) -> Vec<u64> {
    cts.iter().map(|c| client.decrypt(c).unwrap()).collect()
}

/// [`mpi_child`]'s name for the test harness: its module path without the
/// crate's name (`mpi_child` in a test binary of its own).
fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::mpi_child"),
        None => "mpi_child".to_string(),
    }
}

/// One rank of a launch (does nothing outside one).
#[test]
fn mpi_child() {
    let Ok(mode) = std::env::var("HEARTH_MPI_CHILD") else {
        return;
    };
    let timeout: u64 = std::env::var("HEARTH_MPI_TIMEOUT")
        .unwrap()
        .parse()
        .unwrap();
    let cluster = std::sync::Arc::new(Cluster::init(Duration::from_secs(timeout)).unwrap());
    if cluster.rank() != 0 {
        let threads = 1 + cluster.rank() as usize % 2;
        if mode == "stop-early" {
            // Stopped before it takes the key: rank 0's sharing must end.
            let pid = std::process::id().to_string();
            let _ = Command::new("kill").args(["-STOP", &pid]).status();
        }
        if mode == "stop" || mode == "kill" {
            let pid = std::process::id().to_string();
            let signal = if mode == "stop" { "-STOP" } else { "-KILL" };
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(1));
                let _ = Command::new("kill").args([signal, &pid]).status();
            });
        }
        cluster.work(threads).unwrap();
        return;
    }
    let params: &'static ParameterSet = match mode.as_str() {
        "bits" => &INSECURE_TEST_BITS,
        "real" => &DIGITS_128,
        _ => &INSECURE_TEST_DIGITS,
    };
    let client = ClientKey::generate(params);
    let compressed = client.compressed_server_key();
    // A rank stopped or killed early may already fail the key's sharing.
    match cluster.share_key(&compressed.to_bytes().unwrap()) {
        Err(e @ Error::Rank { .. }) if mode.starts_with("stop") || mode == "kill" => {
            eprintln!("{e}");
            cluster.abort(3);
        }
        shared => shared.unwrap(),
    }
    let server = compressed.decompress();
    let mpi = cluster.backend(&server, 1).unwrap();
    let cpu = CpuBackend::new(&server, Some(2)).unwrap();
    match mode.as_str() {
        "stop" | "kill" => {
            // Long enough that rank 1 is stopped or killed mid-run.
            let rc = random_circuit(params, 1, 4, 4000, 8).unwrap();
            let cts = rc.encrypt(&client).unwrap();
            match mpi.run(&rc.circuit, &cts) {
                Err(e @ Error::Rank { .. }) => {
                    eprintln!("{e}");
                    cluster.abort(3);
                }
                other => panic!("expected a rank error, got {:?}", other.map(|_| ())),
            }
        }
        _ => {}
    }
    let (circuits, size) = if mode == "real" { (1, 24) } else { (12, 40) };
    for seed in 0..circuits {
        let rc = random_circuit(params, seed, 3, size, 1 + seed as usize % 4).unwrap();
        let cts = rc.encrypt(&client).unwrap();
        let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
        let (got, report) = mpi.run(&rc.circuit, &cts).unwrap();
        assert_eq!(report.pbs, size);
        let on_cpu = decrypt(&client, &cpu.evaluate(&rc.circuit, &cts).unwrap());
        assert_eq!(
            decrypt(&client, &got),
            on_cpu,
            "seed {seed}: mpi differs from cpu"
        );
        assert_eq!(
            on_cpu, want,
            "seed {seed}: cpu differs from the clear backend"
        );
    }
    // Random integer programs.
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let programs = if mode == "real" { 1 } else { 4 };
    for i in 0..programs {
        if mode == "bits" {
            let mut spec = WordSpec::random(&mut rng, 3);
            spec.bits = 8;
            spec.inputs.iter_mut().for_each(|x| *x &= 0xff);
            if let Err(e) = spec.check_encrypted(&client, &mpi, 2) {
                panic!("word program {i}: {e}\n{spec}");
            }
        } else {
            let spec = ProgramSpec::random(&mut rng, &Limits::small());
            if let Err(e) = spec.check_encrypted(&client, &mpi) {
                panic!("program {i}: {e}\n{spec}");
            }
        }
    }
    // Batch mode: rows scattered over the ranks, back in order.
    let rc = random_circuit(params, 99, 3, 16, 2).unwrap();
    let rows = if mode == "real" { 3 } else { 7 };
    let rows: Vec<Vec<_>> = (0..rows)
        .map(|r| {
            rc.inputs
                .iter()
                .map(|&v| client.encrypt((v as i64 + r) % 4).unwrap())
                .collect()
        })
        .collect();
    let out = mpi.run_batch(&rc.circuit, &rows).unwrap();
    assert_eq!(out.len(), rows.len());
    for (r, (row, got)) in rows.iter().zip(&out).enumerate() {
        let on_cpu = cpu.evaluate(&rc.circuit, row).unwrap();
        assert_eq!(
            decrypt(&client, got),
            decrypt(&client, &on_cpu),
            "batch row {r}"
        );
    }
    let remote = mpi.remote_bootstraps();
    assert_eq!(
        remote > 0,
        cluster.size() > 1,
        "{remote} bootstraps sent to workers"
    );
    if mode == "digits" {
        // Another key becomes the workers' key (kept alone, the default);
        // the first key's backend then refuses to run. With two keys kept,
        // switching to a kept one sends only its id, and a new key drops
        // the least recently shared one, which travels again when it
        // comes back.
        let transfers = |n: u64| assert_eq!(cluster.key_transfers(), n, "key files sent");
        transfers(1);
        let rc = random_circuit(params, 7, 3, 30, 3).unwrap();
        let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
        let clients: Vec<ClientKey> = (0..2).map(|_| ClientKey::generate(params)).collect();
        let servers: Vec<_> = clients.iter().map(|c| c.server_key()).collect();
        let share = |bytes: Vec<u8>, sent: u64| {
            cluster.share_key(&bytes).unwrap();
            transfers(sent);
        };
        let check = |client: &ClientKey, server, what: &str| {
            let mpi = cluster.backend(server, 1).unwrap();
            let cts = rc.encrypt(client).unwrap();
            let got = decrypt(client, &mpi.run(&rc.circuit, &cts).unwrap().0);
            assert_eq!(got, want, "{what}");
        };
        let first = compressed.to_bytes().unwrap();
        let other: Vec<Vec<u8>> = servers.iter().map(|s| s.to_bytes().unwrap()).collect();
        share(other[0].clone(), 2);
        let cts = rc.encrypt(&client).unwrap();
        assert!(matches!(mpi.run(&rc.circuit, &cts), Err(Error::Cluster(_))));
        check(&clients[0], &servers[0], "second key");
        cluster.keep_keys(2).unwrap();
        share(first.clone(), 3);
        let got = decrypt(&client, &mpi.run(&rc.circuit, &cts).unwrap().0);
        assert_eq!(got, want, "first key, shared again");
        share(other[0].clone(), 3);
        check(&clients[0], &servers[0], "second key, kept by the workers");
        share(other[1].clone(), 4);
        check(&clients[1], &servers[1], "third key");
        share(other[0].clone(), 4);
        share(first, 5);
        check(&client, &server, "first key, dropped and sent again");
        let got = decrypt(&client, &mpi.run(&rc.circuit, &cts).unwrap().0);
        assert_eq!(got, want, "first key's backend, its key shared again");
        // Another key whose file claims the first key's id (a random tag
        // anyone can copy, in the header and the payload) is another key:
        // sent, not named, and the first key's backend refuses to run.
        let mut forged = other[1].clone();
        let (theirs, mine) = (
            clients[1].key_id().0.to_le_bytes(),
            client.key_id().0.to_le_bytes(),
        );
        let mut at = 0;
        while let Some(i) = forged[at..].windows(8).position(|w| w == theirs) {
            forged[at + i..at + i + 8].copy_from_slice(&mine);
            at += i + 8;
        }
        hearth::crypto::files::reseal(&mut forged);
        let claims = hearth::ServerKey::from_bytes(std::path::Path::new("forged"), &forged);
        assert_eq!(claims.unwrap().key_id(), client.key_id());
        share(forged, 6);
        assert!(matches!(mpi.run(&rc.circuit, &cts), Err(Error::Cluster(_))));
    }
    println!(
        "MPI OK {mode} on {} ranks ({remote} bootstraps remote)",
        cluster.size()
    );
}

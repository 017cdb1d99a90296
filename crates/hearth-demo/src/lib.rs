//! hearth's first demo: generate one key, run an encrypted circuit and two
//! typed programs on it (exact integers of the signed-binary family, `u16`
//! words of the two's-complement family), decrypt, and check every output
//! against the clear backend and plain Rust integer arithmetic.
//!
//! `cargo run --release -p hearth-demo` runs it on the cpu backend; it
//! builds the library alone. `hearth demo` runs the same demo with the
//! command's options (`--threads`, `--backend cpu|gpu|mpi`).

use std::time::{Duration, Instant};

use hearth::api::{Int, Program, U16};
use hearth::backend::{Backend, ClearBackend, CountBackend, Engine, Evaluator};
use hearth::circuit::Stats;
use hearth::crypto::keys::signed_digit;
use hearth::{CircuitBuilder, ClientKey, Error, Lut, ParameterSet, ServerKey, Wire, DIGITS_128};

/// Where the demo runs its circuits: the library's evaluators
/// ([`Evaluator`], which says what it is for the tables) of one
/// [`Engine`].
pub trait Evaluators {
    /// The engine the evaluators run on (the thread plan follows it).
    fn engine(&self) -> Engine;

    /// The threads asked for (`None`: `HEARTH_THREADS`, else every core).
    fn threads(&self) -> Option<usize>;

    /// An evaluator of `server`'s ciphertexts.
    fn evaluator<'k>(&self, server: &'k ServerKey) -> Result<Evaluator<'k>, Error>;

    /// The thread count programs on `params` are planned for
    /// ([`hearth::backend::plan_threads`]: a GPU's where one runs).
    fn plan_threads(&self, params: &'static ParameterSet) -> usize {
        hearth::backend::plan_threads(self.engine(), params, self.threads()).unwrap_or(1)
    }
}

/// The cpu backend on `HEARTH_THREADS` threads, else every core.
pub struct Cpu;

impl Evaluators for Cpu {
    fn engine(&self) -> Engine {
        Engine::Cpu
    }

    fn threads(&self) -> Option<usize> {
        None
    }

    fn evaluator<'k>(&self, server: &'k ServerKey) -> Result<Evaluator<'k>, Error> {
        Ok(Evaluator::choose(Engine::Cpu, server, None)?.evaluator)
    }
}

/// Keys for `params`, saying so on stderr (a few seconds).
fn keys(params: &'static ParameterSet) -> (ClientKey, ServerKey) {
    eprintln!("{}: generating keys...", params.name);
    let client = ClientKey::generate(params);
    let server = client.server_key();
    (client, server)
}

/// A table's last line: the circuit's cost (count backend), where it
/// ran and how long it took.
fn footer(stats: &Stats, ev: &Evaluator<'_>, wall: Duration) {
    println!(
        "#PBS {}, depth {}, widest level {}, {}, {:.1} ms",
        stats.pbs,
        stats.depth,
        stats.max_width(),
        ev.describe(),
        wall.as_secs_f64() * 1e3
    );
}

/// `a * b` for digits in [-2, 2]: floor((a+b)^2/4) - floor((a-b)^2/4),
/// two bootstraps of depth 1.
fn product(b: &mut CircuitBuilder, x: Wire, y: Wire) -> Result<Wire, Error> {
    let quarter_square = Lut::from_fn(5, -4, 4, |v| (v * v) / 4)?;
    let s = b.add(x, y)?;
    let d = b.sub(x, y)?;
    let qs = b.bootstrap(s, &quarter_square)?;
    let qd = b.bootstrap(d, &quarter_square)?;
    Ok(b.sub(qs, qd)?)
}

/// Runs the demo on `on`'s evaluators: prints each table and fails unless
/// every decrypted output equals the clear backend's and plain Rust's.
pub fn run(on: &dyn Evaluators) -> Result<(), Error> {
    let params = &DIGITS_128;
    println!(
        "hearth demo: {} ({}), budget {} per bootstrap input",
        params.name, params.source, params.budgets.half
    );
    let t = Instant::now();
    let (client, server) = keys(params);
    println!(
        "keys generated in {:.1} s (key {})",
        t.elapsed().as_secs_f64(),
        client.key_id()
    );

    // Four encrypted digits in [-2, 2].
    let values = [2i64, -1, 1, -2];
    let mut b = CircuitBuilder::new(params);
    let x: Vec<Wire> = (0..4).map(|_| b.input(-2, 2)).collect::<Result<_, _>>()?;
    let weighted = b.linear(&[(x[0], 3), (x[1], -2), (x[2], 1)], 0)?;
    let sign = Lut::from_fn(5, -12, 12, i64::signum)?;
    let weighted_sign = b.bootstrap(weighted, &sign)?;
    let relu = Lut::from_fn(5, -4, 4, |v| v.max(0))?;
    let diff = b.sub(x[0], x[1])?;
    let relu_diff = b.bootstrap(diff, &relu)?;
    let max = b.add(x[1], relu_diff)?;
    let p01 = product(&mut b, x[0], x[1])?;
    let p23 = product(&mut b, x[2], x[3])?;
    let dot = b.add(p01, p23)?;
    let dot_sign = b.bootstrap(dot, &sign)?;
    let names = [
        "3*x0 - 2*x1 + x2",
        "sign(3*x0 - 2*x1 + x2)",
        "max(x0, x1)",
        "x0*x1 + x2*x3",
        "sign(x0*x1 + x2*x3)",
    ];
    for w in [weighted, weighted_sign, max, dot, dot_sign] {
        b.output(w)?;
    }
    let circuit = b.build();
    let stats = CountBackend.stats(&circuit);

    let cts = values
        .iter()
        .map(|&v| client.encrypt(v))
        .collect::<Result<Vec<_>, _>>()?;
    let ev = on.evaluator(&server)?;
    let t = Instant::now();
    let out = ev.evaluate(&circuit, &cts)?;
    let wall = t.elapsed();
    let clear_inputs: Vec<u64> = values.iter().map(|&v| v.rem_euclid(32) as u64).collect();
    let expected = ClearBackend.evaluate(&circuit, &clear_inputs)?;

    println!("inputs x0..x3 = {values:?} (encrypted)");
    println!("| output | decrypted | clear backend | plain Rust |");
    println!("|---|---|---|---|");
    let plain = [
        3 * values[0] - 2 * values[1] + values[2],
        (3 * values[0] - 2 * values[1] + values[2]).signum(),
        values[0].max(values[1]),
        values[0] * values[1] + values[2] * values[3],
        (values[0] * values[1] + values[2] * values[3]).signum(),
    ];
    let mut ok = true;
    for ((name, ct), (&e, &p)) in names.iter().zip(&out).zip(expected.iter().zip(&plain)) {
        let d = client.decrypt_signed(ct)?;
        let e = signed_digit(params, e);
        ok &= d == e && d == p;
        println!("| {name} | {d} | {e} | {p} |");
    }
    footer(&stats, &ev, wall);
    ok &= integers(on, &client, &server)?;
    ok &= words(on, &client, &server)?;
    if !ok {
        return Err(Error::Config(
            "demo: decrypted results differ from the expected values".into(),
        ));
    }
    println!("all outputs match the clear backend and plain integer arithmetic");
    Ok(())
}

/// Signed-binary integers through the typed API: the maximum of three
/// encrypted 8-bit values and a weighted sum of them, in one program.
fn integers(on: &dyn Evaluators, client: &ClientKey, server: &ServerKey) -> Result<bool, Error> {
    let values = [-87i64, 113, 42];
    let weights = [3i64, -5, 7];
    let p = Program::new(&DIGITS_128);
    let x: Vec<_> = (0..3).map(|_| p.input(8)).collect();
    let max = x[0].max(&x[1]).max(&x[2]);
    let terms: Vec<_> = x.iter().zip(weights).map(|(xi, w)| xi * w).collect();
    let weighted = Int::sum(&p, &terms);
    p.output(&max);
    p.output(&weighted);
    let prog = p.build()?;
    let stats = CountBackend.stats(prog.circuit());
    let inputs = values
        .iter()
        .map(|&v| client.encrypt_int(v, 8))
        .collect::<Result<Vec<_>, _>>()?;
    let ev = on.evaluator(server)?;
    let t = Instant::now();
    let out = prog.run_encrypted(&ev, &inputs)?;
    let wall = t.elapsed();
    let got = [client.decrypt_i64(&out[0])?, client.decrypt_i64(&out[1])?];
    let want = [
        values.iter().copied().max().expect("three values"),
        values.iter().zip(weights).map(|(v, w)| v * w).sum(),
    ];
    println!();
    println!("signed-binary integers: x = {values:?} (8 digits each, encrypted)");
    println!("| output | decrypted | plain Rust |");
    println!("|---|---|---|");
    println!("| max(x0, x1, x2) | {} | {} |", got[0], want[0]);
    println!("| 3*x0 - 5*x1 + 7*x2 | {} | {} |", got[1], want[1]);
    footer(&stats, &ev, wall);
    Ok(got == want)
}

/// Fixed-width words on the same key as the integers: Rust's wrapping
/// semantics on 16-bit unsigned integers, one program.
fn words(on: &dyn Evaluators, client: &ClientKey, server: &ServerKey) -> Result<bool, Error> {
    let params = &DIGITS_128;
    println!();
    println!(
        "words: u16 on {}, the same key as the integers",
        params.name
    );
    let (x, y) = (51_234u16, 4_321u16);
    let p = Program::new(params);
    let ev = on.evaluator(server)?;
    p.set_threads(on.plan_threads(params));
    let a = U16::input(&p);
    let b = U16::input(&p);
    let sum = &a + &b;
    let lt = a.lt(&b);
    let prod = &a * &b;
    let rot = a.rotate_left_by(&b);
    for w in [&sum, &prod, &rot] {
        p.output(w);
    }
    p.output(&lt);
    let prog = p.build()?;
    let stats = CountBackend.stats(prog.circuit());
    let inputs = [client.encrypt_word(x)?, client.encrypt_word(y)?];
    let t = Instant::now();
    let out = prog.run_encrypted(&ev, &inputs)?;
    let wall = t.elapsed();
    let got: Vec<u16> = out[..3]
        .iter()
        .map(|o| client.decrypt_word::<u16>(o))
        .collect::<Result<_, _>>()?;
    let got_lt = client.decrypt_bool(&out[3])?;
    let want = [
        x.wrapping_add(y),
        x.wrapping_mul(y),
        x.rotate_left(y as u32),
    ];
    println!("x = {x}, y = {y} (u16, encrypted)");
    println!("| output | decrypted | plain Rust |");
    println!("|---|---|---|");
    for (name, (g, w)) in ["x + y (wrapping)", "x * y (wrapping)", "x.rotate_left(y)"]
        .iter()
        .zip(got.iter().zip(&want))
    {
        println!("| {name} | {g} | {w} |");
    }
    println!("| x < y | {got_lt} | {} |", x < y);
    footer(&stats, &ev, wall);
    Ok(got == want && got_lt == (x < y))
}

//! The public key from the command line (DIGITS_128, release mode: front
//! ends refuse the insecure test sets): `keygen` writes public.key,
//! `encrypt --public-key` encrypts without the client key and cannot
//! decrypt; three data owners each encrypt their own input (`--only`),
//! `combine` joins them, and the result is exact against Rust's integers,
//! run locally and through a `hearth server` with two tenants.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth::{Bundle, ClientKey, Error, Program, DIGITS_128};
use hearth_server::{Client, ErrorCode};

use crate::server::{code, dir, Server};

/// `hearth ARGS` on 2 threads: (success, stdout, stderr); it never panics.
fn hearth(args: &[&str]) -> (bool, String, String) {
    let r = crate::cli::hearth(args);
    assert!(!r.2.contains("panicked"), "{args:?}: {}", r.2);
    r
}

fn ok(args: &[&str]) -> String {
    let (ok, out, err) = hearth(args);
    assert!(ok, "{args:?} failed: {err}");
    out
}

/// `args` fails, saying `needle` on stderr.
fn refused(args: &[&str], needle: &str) {
    let (ok, out, err) = hearth(args);
    assert!(!ok, "{args:?} succeeded: {out}");
    assert!(err.contains(needle), "{args:?}: wanted {needle:?} in {err}");
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The three owners' inputs: `a` (two values), `b` and `c`.
struct Inputs {
    a: [i64; 2],
    b: i64,
    c: i64,
}

impl Inputs {
    /// The program's outputs by name, from Rust's integers.
    fn expected(&self) -> serde_json::Value {
        let Inputs { a, b, c } = *self;
        serde_json::json!({
            "total": a[0] + a[1] + b - c,
            "best": a[1].max(c),
            "scaled": 3 * a[0] - 2 * b,
        })
    }

    /// One values file per input, as each owner holds: (name, file).
    fn files(&self, d: &Path) -> [(&'static str, PathBuf); 3] {
        let write = |name: &str, v: serde_json::Value| {
            let f = d.join(format!("{name}.json"));
            std::fs::write(&f, serde_json::json!({ name: v }).to_string()).unwrap();
            f
        };
        [
            ("a", write("a", serde_json::json!(self.a))),
            ("b", write("b", serde_json::json!(self.b))),
            ("c", write("c", serde_json::json!(self.c))),
        ]
    }
}

/// A program of three inputs, `a` (two 8-digit integers), `b` and `c`,
/// and three outputs (see [`Inputs::expected`]), saved in `d`.
fn program(d: &Path) -> PathBuf {
    let p = Program::new(&DIGITS_128);
    let (a0, a1, b, c) = (p.input(8), p.input(8), p.input(8), p.input(8));
    p.output(&(&(&(&a0 + &a1) + &b) - &c));
    p.output(&a1.max(&c));
    p.output(&(&a0.scalar_mul(3) - &b.scalar_mul(2)));
    let prog = p
        .build()
        .unwrap()
        .with_signature(
            &[("a", &[2]), ("b", &[]), ("c", &[])],
            &[("total", &[]), ("best", &[]), ("scaled", &[])],
        )
        .unwrap();
    let file = d.join("three.hprog");
    prog.save(&file).unwrap();
    file
}

/// `hearth keygen --params DIGITS_128 --compressed` into `d/name`.
fn keygen(d: &Path, name: &str) -> PathBuf {
    let keys = d.join(name);
    let out = ok(&[
        "keygen",
        "--params",
        "DIGITS_128",
        "--compressed",
        "--out",
        s(&keys),
    ]);
    assert!(
        out.contains("(client.key, public.key, server.key: ")
            && out.contains("public.key: for data owners"),
        "{out}"
    );
    assert!(keys.join("public.key").exists());
    keys
}

/// Each owner encrypts its own input with `key_option` (`--public-key`
/// or `--key`) and `key`; the bundles, in the order of the inputs.
fn owners_encrypt(d: &Path, prog: &Path, key_option: &str, key: &Path, x: &Inputs) -> Vec<PathBuf> {
    x.files(d)
        .into_iter()
        .map(|(name, values)| {
            let bundle = d.join(format!("{name}.hb"));
            let out = ok(&[
                "encrypt",
                key_option,
                s(key),
                "--program",
                s(prog),
                "--only",
                name,
                "--values",
                s(&values),
                "--out",
                s(&bundle),
            ]);
            assert!(
                out.contains(&format!("of input {name} (of a, b, c)")),
                "{out}"
            );
            bundle
        })
        .collect()
}

/// `hearth run` with `server_key`, then `hearth decrypt` with
/// `client_key`: the outputs as JSON.
fn run_and_decrypt(
    d: &Path,
    server_key: &Path,
    prog: &Path,
    bundle: &Path,
    client_key: &Path,
) -> serde_json::Value {
    let out = d.join("out.hb");
    ok(&[
        "run",
        "--server-key",
        s(server_key),
        "--program",
        s(prog),
        "--bundle",
        s(bundle),
        "--out",
        s(&out),
    ]);
    let got = ok(&["decrypt", "--key", s(client_key), "--bundle", s(&out)]);
    serde_json::from_str(&got).unwrap()
}

/// `keygen` writes public.key (and says why it does not on GATES_128,
/// removing a stale one); `encrypt --public-key` of every input, `run`
/// and `decrypt` give Rust's results; the public key cannot decrypt, and
/// the key options are refused together, missing or swapped.
#[test]
fn public_key_encrypts_runs_and_cannot_decrypt() {
    let d = dir("public-key");
    let keys = keygen(&d, "keys");
    let (client, public) = (keys.join("client.key"), keys.join("public.key"));
    let info = ok(&["info", s(&public)]);
    assert!(
        info.contains("kind:        public key") && info.contains("status:      ok"),
        "{info}"
    );
    let prog = program(&d);
    let x = Inputs {
        a: [120, -35],
        b: 77,
        c: -19,
    };
    let values = d.join("values.json");
    std::fs::write(
        &values,
        serde_json::json!({"a": x.a, "b": x.b, "c": x.c}).to_string(),
    )
    .unwrap();
    let bundle = d.join("in.hb");
    let encrypt = |key_args: &[&str], out: &Path| {
        let mut args = vec!["encrypt"];
        args.extend_from_slice(key_args);
        args.extend([
            "--program",
            s(&prog),
            "--values",
            s(&values),
            "--out",
            s(out),
        ]);
        hearth(&args)
    };
    let (good, out, err) = encrypt(&["--public-key", s(&public)], &bundle);
    assert!(good, "{err}");
    assert!(
        out.contains("4 values of 3 inputs encrypted with the public key of key"),
        "{out}"
    );
    let got = run_and_decrypt(&d, &keys.join("server.key"), &prog, &bundle, &client);
    assert_eq!(got, x.expected());

    // The public key cannot decrypt.
    refused(
        &[
            "decrypt",
            "--key",
            s(&public),
            "--bundle",
            s(&d.join("out.hb")),
        ],
        "holds a public key, expected a client key",
    );
    // One key option, of its own kind.
    let nowhere = d.join("never.hb");
    for (args, says) in [
        (
            vec!["--key", s(&client), "--public-key", s(&public)],
            "cannot be used with",
        ),
        (vec![], "--key <FILE>|--public-key <FILE>"),
        (
            vec!["--key", s(&public)],
            "holds a public key: give it with --public-key",
        ),
        (
            vec!["--public-key", s(&client)],
            "holds a client key: give it with --key",
        ),
    ] {
        let (good, _, err) = encrypt(&args, &nowhere);
        assert!(!good && err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!nowhere.exists());

    // GATES_128 has no public key: keygen says so, succeeds, and removes
    // the public.key of the key it replaces.
    let gates = d.join("gates");
    std::fs::create_dir_all(&gates).unwrap();
    std::fs::copy(&public, gates.join("public.key")).unwrap();
    let out = ok(&[
        "keygen",
        "--params",
        "GATES_128",
        "--compressed",
        "--out",
        s(&gates),
    ]);
    assert!(
        out.contains("no public.key: parameter set GATES_128 has no public key")
            && out.contains("power-of-two"),
        "{out}"
    );
    assert!(gates.join("client.key").exists() && !gates.join("public.key").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// Three data owners, each with the public key and its own input only
/// (`--only`); `combine` joins their bundles and the result is Rust's.
/// A client-key part joins public-key parts; wrong orders, unknown or
/// repeated names and a bundle under another key are refused, saying why.
#[test]
fn three_owners_encrypt_their_inputs_and_combine() {
    let d = dir("owners");
    let keys = keygen(&d, "keys");
    let other = keygen(&d, "other");
    let (client, public) = (keys.join("client.key"), keys.join("public.key"));
    let prog = program(&d);
    let x = Inputs {
        a: [-200, 13],
        b: -91,
        c: 250,
    };
    let parts = owners_encrypt(&d, &prog, "--public-key", &public, &x);
    let joined = d.join("joined.hb");
    let combine = |bundles: &[&Path], program: bool, out: &Path| {
        let mut args = vec!["combine", "--out", s(out)];
        if program {
            args.extend(["--program", s(&prog)]);
        }
        args.extend(bundles.iter().map(|b| s(b)));
        hearth(&args)
    };
    let (good, out, err) = combine(&[&parts[0], &parts[1], &parts[2]], true, &joined);
    assert!(good, "{err}");
    assert!(
        out.contains("3 bundles joined") && out.contains("inputs a, b, c"),
        "{out}"
    );
    let got = run_and_decrypt(&d, &keys.join("server.key"), &prog, &joined, &client);
    assert_eq!(got, x.expected());

    // A part encrypted with the client key joins public-key parts; the
    // joined inputs decrypt to the owners' values.
    let mixed_x = Inputs {
        a: [5, -6],
        b: 7,
        c: -8,
    };
    let mixed_dir = d.join("mixed");
    std::fs::create_dir_all(&mixed_dir).unwrap();
    let mut mixed = owners_encrypt(&mixed_dir, &prog, "--public-key", &public, &mixed_x);
    let [(_, a_values), ..] = mixed_x.files(&mixed_dir);
    ok(&[
        "encrypt",
        "--key",
        s(&client),
        "--program",
        s(&prog),
        "--only",
        "a",
        "--values",
        s(&a_values),
        "--out",
        s(&mixed[0]),
    ]);
    let bc = mixed_dir.join("bc.hb");
    let both = mixed_dir.join("both.json");
    std::fs::write(
        &both,
        serde_json::json!({"b": mixed_x.b, "c": mixed_x.c}).to_string(),
    )
    .unwrap();
    let out = ok(&[
        "encrypt",
        "--public-key",
        s(&public),
        "--program",
        s(&prog),
        "--only",
        "b,c",
        "--values",
        s(&both),
        "--out",
        s(&bc),
    ]);
    assert!(
        out.contains("2 values of inputs b, c (of a, b, c)"),
        "{out}"
    );
    mixed.truncate(1);
    mixed.push(bc);
    let joined_mixed = mixed_dir.join("joined.hb");
    let (good, _, err) = combine(&[&mixed[0], &mixed[1]], true, &joined_mixed);
    assert!(good, "{err}");
    let inputs = ok(&["decrypt", "--key", s(&client), "--bundle", s(&joined_mixed)]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&inputs).unwrap(),
        serde_json::json!({"a": mixed_x.a, "b": mixed_x.b, "c": mixed_x.c})
    );

    // Refusals.
    let [(_, a_values), (_, b_values), _] = x.files(&d);
    let nowhere = d.join("never.hb");
    let only = |names: &str, values: &Path| {
        hearth(&[
            "encrypt",
            "--public-key",
            s(&public),
            "--program",
            s(&prog),
            "--only",
            names,
            "--values",
            s(values),
            "--out",
            s(&nowhere),
        ])
    };
    for (names, says) in [
        (
            "b,a",
            "the inputs must be consecutive and in the program's order (a, b, c)",
        ),
        ("a,c", "the inputs must be consecutive"),
        ("d", "the program has no input d (its inputs: a, b, c)"),
        ("a,a", "consecutive and in the program's order"),
    ] {
        let (good, _, err) = only(names, &a_values);
        assert!(!good && err.contains(says), "--only {names}: {err}");
    }
    // A value of another owner's input is not taken.
    let (good, _, err) = hearth(&[
        "encrypt",
        "--public-key",
        s(&public),
        "--program",
        s(&prog),
        "--only",
        "a",
        "--values",
        s(&a_values),
        "--input",
        &format!("b={}", s(&b_values)),
        "--out",
        s(&nowhere),
    ]);
    assert!(
        !good && err.contains("input b is not one of --only a"),
        "{err}"
    );
    let (good, _, err) = only("b", &a_values);
    assert!(!good && err.contains("no value for input b"), "{err}");
    assert!(!nowhere.exists());

    // The bundles out of order: combine with --program, and run, refuse them.
    let (good, _, err) = combine(&[&parts[1], &parts[0], &parts[2]], true, &nowhere);
    assert!(
        !good
            && err.contains("the bundle holds [b: ")
            && err.contains("in the order of the program's inputs"),
        "{err}"
    );
    let swapped = d.join("swapped.hb");
    let (good, _, err) = combine(&[&parts[1], &parts[0], &parts[2]], false, &swapped);
    assert!(good, "{err}");
    refused(
        &[
            "run",
            "--server-key",
            s(&keys.join("server.key")),
            "--program",
            s(&prog),
            "--bundle",
            s(&swapped),
            "--out",
            s(&nowhere),
        ],
        "the bundle holds [b: ",
    );
    // One owner used another key's public key: the library's WrongKey.
    let stray = d.join("stray");
    std::fs::create_dir_all(&stray).unwrap();
    let strays = owners_encrypt(&stray, &prog, "--public-key", &other.join("public.key"), &x);
    let (good, _, err) = combine(&[&parts[0], &strays[1], &parts[2]], false, &nowhere);
    assert!(!good, "combined across keys");
    let other_id = ClientKey::load(&other.join("client.key")).unwrap().key_id();
    let want = Error::WrongKey {
        expected: ClientKey::load(&client).unwrap().key_id(),
        found: other_id,
    }
    .to_string();
    assert!(err.contains(&want) && err.contains(s(&strays[1])), "{err}");
    // The same part twice.
    let (good, _, err) = combine(&[&parts[0], &parts[0]], false, &nowhere);
    assert!(
        !good && err.contains("two entries are named \"a\""),
        "{err}"
    );
    assert!(!nowhere.exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// A `hearth server` with two tenants: the key owner (tenant `clinic`)
/// uploads its compressed server key; three data owners encrypt their
/// inputs with only the public key; the combined bundle is submitted and
/// its result decrypts to Rust's integers with the owner's client key.
/// The other tenant (`lab`, with a key of its own) can neither fetch the
/// job nor run under the owner's key, and its client key refuses the
/// result with `Error::WrongKey`.
#[test]
fn owners_submit_through_a_server_with_two_tenants() {
    let d = dir("public-key-tenants");
    let data = d.join("data");
    let token = |tenant: &str| {
        crate::server::hearth(&["server", "token", "add", tenant, "--data", s(&data)])
            .trim()
            .to_string()
    };
    let (clinic, lab) = (token("clinic"), token("lab"));
    let server = Server::start(&data, &d.join("server.log"), &[]);
    let url = server.url.as_str();
    let api = |t: &str| Client::builder(url).token(t).build().unwrap();

    let keys = keygen(&d, "keys");
    let lab_keys = keygen(&d, "lab");
    assert!(
        api(&lab)
            .upload_key(&lab_keys.join("server.key"))
            .unwrap()
            .new
    );
    let prog = program(&d);
    let x = Inputs {
        a: [211, -147],
        b: 66,
        c: -240,
    };
    // The data owners get public.key and the program file only.
    let owners = d.join("owners");
    std::fs::create_dir_all(&owners).unwrap();
    std::fs::copy(keys.join("public.key"), owners.join("public.key")).unwrap();
    let parts = owners_encrypt(
        &owners,
        &prog,
        "--public-key",
        &owners.join("public.key"),
        &x,
    );
    let joined = d.join("joined.hb");
    let mut args = vec!["combine", "--program", s(&prog), "--out", s(&joined)];
    args.extend(parts.iter().map(|p| s(p)));
    ok(&args);

    // The key owner submits: its compressed server key is uploaded first.
    let (good, job, err) = hearth(&[
        "submit",
        "--url",
        url,
        "--token",
        &clinic,
        "--server-key",
        s(&keys.join("server.key")),
        "--program",
        s(&prog),
        "--bundle",
        s(&joined),
    ]);
    assert!(good && err.contains("registered"), "{err}");
    let job = job.trim().to_string();
    let id = job.parse().unwrap();
    api(&clinic)
        .wait_timeout(id, Duration::from_millis(50), Duration::from_secs(300))
        .unwrap();

    // The other tenant: no fetch, no status, no job under the owner's key.
    let stolen = d.join("stolen.hb");
    refused(
        &[
            "fetch",
            "--url",
            url,
            "--token",
            &lab,
            "--job",
            &job,
            "--out",
            s(&stolen),
        ],
        "not_found",
    );
    assert!(!stolen.exists());
    let theirs = api(&lab);
    assert_eq!(code(theirs.status(id)), ErrorCode::NotFound);
    assert_eq!(code(theirs.result(id)), ErrorCode::NotFound);
    let owner = ClientKey::load(&keys.join("client.key")).unwrap();
    let bundle = std::fs::read(&joined).unwrap();
    let prog_bytes = std::fs::read(&prog).unwrap();
    assert_eq!(
        code(theirs.submit_with_key(owner.key_id(), &prog_bytes, &bundle)),
        ErrorCode::UnknownKey
    );

    // The key owner fetches and decrypts.
    let out = d.join("out.hb");
    ok(&[
        "fetch",
        "--url",
        url,
        "--token",
        &clinic,
        "--job",
        &job,
        "--out",
        s(&out),
        "--wait",
        "--poll",
        "50ms",
    ]);
    let got = ok(&[
        "decrypt",
        "--key",
        s(&keys.join("client.key")),
        "--bundle",
        s(&out),
    ]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&got).unwrap(),
        x.expected()
    );
    // The other tenant's client key: a key mismatch, typed and on the
    // command line.
    let result = Bundle::load(&out).unwrap();
    let lab_key = ClientKey::load(&lab_keys.join("client.key")).unwrap();
    match lab_key.decrypt_bundle(&result) {
        Err(Error::WrongKey { expected, found }) => {
            assert_eq!((expected, found), (lab_key.key_id(), owner.key_id()));
        }
        other => panic!("the lab's key decrypted the clinic's result: {other:?}"),
    }
    refused(
        &[
            "decrypt",
            "--key",
            s(&lab_keys.join("client.key")),
            "--bundle",
            s(&out),
        ],
        "wrong key",
    );
    // Fetched once: gone for its owner too.
    assert_eq!(code(api(&clinic).result(id)), ErrorCode::NotFound);
    drop(server);
    let _ = std::fs::remove_dir_all(&d);
}

/// `hearth --help` lists `combine` after `encrypt`; `keygen --help` and
/// `encrypt --help` name the public key and `--only`.
#[test]
fn the_help_names_the_public_key_and_combine() {
    let top = ok(&["--help"]);
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let at = |c: &str| commands.iter().position(|x| *x == c);
    assert_eq!(at("combine"), at("encrypt").map(|i| i + 1), "{commands:?}");
    for (args, wanted) in [
        (
            &["keygen", "--help"][..],
            &["public.key", "GATES_128 has none"][..],
        ),
        (
            &["encrypt", "--help"],
            &[
                "--public-key <FILE>",
                "--only <NAME>",
                "comma-separated",
                "hearth combine",
            ],
        ),
        (
            &["combine", "--help"],
            &["--program <FILE>", "under one key"],
        ),
    ] {
        let help = ok(args);
        for w in wanted {
            assert!(help.contains(w), "{args:?}: {w:?} in {help}");
        }
    }
}

/// `encrypt --clear`: a data owner sends its sealed values in the clear
/// (two bytes per `u16`) beside an encrypted pad; `run` reads them as
/// trivial ciphertexts and the decrypted result is Rust's; the bundle is
/// smaller than the same inputs all encrypted. A name that is not one of
/// the inputs encrypted here is refused.
#[test]
fn clear_inputs_travel_beside_encrypted_ones() {
    use hearth::api::U16;
    let d = dir("clear-inputs");
    let keys = keygen(&d, "keys");
    let p = Program::new(&DIGITS_128);
    let pad = U16::input(&p);
    let sealed: Vec<U16> = (0..4).map(|_| U16::input(&p)).collect();
    let sum = sealed
        .iter()
        .fold(U16::constant(&p, 0u16), |acc, s| &acc + &(s ^ &pad));
    p.output(&sum);
    let prog = d.join("pad.hprog");
    p.build()
        .unwrap()
        .with_signature(&[("pad", &[]), ("sealed", &[4])], &[("sum", &[])])
        .unwrap()
        .save(&prog)
        .unwrap();
    let (pad, data) = (0xb3a1u16, [40_000u16, 31, 65_535, 1_234]);
    let values = d.join("values.json");
    let sealed: Vec<u16> = data.iter().map(|x| x ^ pad).collect();
    std::fs::write(
        &values,
        serde_json::json!({"pad": pad, "sealed": sealed}).to_string(),
    )
    .unwrap();
    let public = keys.join("public.key");
    let encrypt = |extra: &[&str], out: &Path| {
        let mut args = vec!["encrypt", "--public-key", s(&public), "--program", s(&prog)];
        args.extend_from_slice(extra);
        args.extend(["--values", s(&values), "--out", s(out)]);
        ok(&args)
    };
    let (clear, all) = (d.join("clear.hb"), d.join("all.hb"));
    let said = encrypt(&["--clear", "sealed"], &clear);
    assert!(said.contains("sealed in the clear"), "{said}");
    encrypt(&[], &all);
    let len = |f: &Path| std::fs::metadata(f).unwrap().len();
    // 64 ciphertext bodies fewer (8 bytes each), 8 bytes of values more.
    assert!(
        len(&clear) + 400 < len(&all),
        "{} vs {}",
        len(&clear),
        len(&all)
    );
    let got = run_and_decrypt(
        &d,
        &keys.join("server.key"),
        &prog,
        &clear,
        &keys.join("client.key"),
    );
    let want = data.iter().fold(0u16, |a, &x| a.wrapping_add(x));
    assert_eq!(got, serde_json::json!({ "sum": want }));
    refused(
        &[
            "encrypt",
            "--public-key",
            s(&public),
            "--program",
            s(&prog),
            "--clear",
            "nothing",
            "--values",
            s(&values),
            "--out",
            s(&clear),
        ],
        "--clear nothing: not one of the inputs",
    );
}

/// A device's upload from the command line: `seal` writes the sealed
/// bytes and the clear inputs' values, `encrypt --clear` sends them in the
/// clear beside the key from its raw file (`--input aes_key=FILE.bin`,
/// public key), and the values the program receives, run on the clear
/// backend, transcipher to the data (AES and Kreyvium). `seal` unseals
/// too, names the next counter block, and refuses a bad key or nonce.
#[test]
fn seal_then_encrypt_in_the_clear() {
    use hearth::api::{Word, U128};
    use num_bigint::BigInt;
    let d = dir("seal");
    let keys = keygen(&d, "keys");
    let key_file = d.join("aes-key.bin");
    std::fs::write(&key_file, b"a device's key!!").unwrap();
    let data: Vec<u8> = (0..20u8).map(|i| i.wrapping_mul(37)).collect();
    std::fs::write(d.join("data.bin"), &data).unwrap();
    let nonce = "000000000000000000000000fffffffe";
    for cipher in ["aes", "kreyvium"] {
        let p = Program::new(&DIGITS_128);
        let key = U128::input(&p);
        let (nonce_in, sealed) = (U128::input(&p), Word::<160, false>::input(&p));
        p.output(&match cipher {
            "aes" => key.aes_key_schedule().aes_ctr_decrypt(&nonce_in, &sealed),
            _ => key.kreyvium_decrypt(&nonce_in, &sealed),
        });
        let prog = p
            .build()
            .unwrap()
            .with_signature(
                &[("aes_key", &[]), ("counter", &[]), ("sealed", &[])],
                &[("data", &[])],
            )
            .unwrap();
        let prog_file = d.join(format!("{cipher}.hprog"));
        prog.save(&prog_file).unwrap();
        let (sealed, json) = (d.join("sealed.bin"), d.join("sealed.json"));
        let seal = |input: &Path, out: &Path, more: &[&str]| {
            let mut args = vec!["seal", "--cipher", cipher, "--symmetric-key", s(&key_file)];
            args.extend(["--nonce", nonce, "--in", s(input), "--out", s(out)]);
            args.extend_from_slice(more);
            ok(&args)
        };
        let said = seal(&d.join("data.bin"), &sealed, &["--values-out", s(&json)]);
        if cipher == "aes" {
            // Two blocks from ...fffffffe: the next is ...00000000 of the next 2^32.
            assert!(
                said.contains(
                    "next message starts at counter block 00000000000000000000000100000000"
                ),
                "{said}"
            );
        }
        let back = d.join("back.bin");
        seal(&sealed, &back, &[]);
        assert_eq!(std::fs::read(&back).unwrap(), data);
        assert_ne!(std::fs::read(&sealed).unwrap(), data);
        // The device's bundles: the key once (AES: a bundle from the raw
        // key file; Kreyvium: a transciphering key file), the upload in
        // the clear.
        let public = keys.join("public.key");
        let (key_hb, upload_hb, all_hb) = (d.join("key.hb"), d.join("up.hb"), d.join("all.hb"));
        let tkey = d.join("device.tkey");
        let encrypt = |more: &[&str]| {
            let mut args = vec!["encrypt", "--public-key", s(&public), "--program"];
            args.push(s(&prog_file));
            args.extend_from_slice(more);
            ok(&args)
        };
        let key_part = if cipher == "aes" {
            let input = format!("aes_key={}", s(&key_file));
            encrypt(&["--only", "aes_key", "--input", &input, "--out", s(&key_hb)]);
            s(&key_hb).to_string()
        } else {
            let said = ok(&[
                "seal-key",
                "--cipher",
                cipher,
                "--symmetric-key",
                s(&key_file),
                "--public-key",
                s(&public),
                "--out",
                s(&tkey),
            ]);
            assert!(
                said.starts_with("Kreyvium key encrypted with the public key"),
                "{said}"
            );
            let info = ok(&["info", s(&tkey)]);
            assert!(
                info.contains("transciphering key: Kreyvium key of 128 bits"),
                "{info}"
            );
            format!("aes_key={}", s(&tkey))
        };
        encrypt(&[
            "--only",
            "counter,sealed",
            "--clear",
            "counter,sealed",
            "--values",
            s(&json),
            "--out",
            s(&upload_hb),
        ]);
        let upload_len = std::fs::metadata(&upload_hb).unwrap().len();
        assert!(upload_len < 20 + 16 + 200, "{upload_len} bytes");
        ok(&[
            "combine",
            "--program",
            s(&prog_file),
            "--out",
            s(&all_hb),
            &key_part,
            s(&upload_hb),
        ]);
        // What the server receives, decrypted, runs to the data.
        let client = ClientKey::load(&keys.join("client.key")).unwrap();
        let received = client
            .decrypt_bundle(&Bundle::load(&all_hb).unwrap())
            .unwrap();
        let inputs: Vec<Vec<BigInt>> = received.into_iter().map(|(_, v)| v).collect();
        let out = prog.run_clear(&inputs).unwrap();
        let want = BigInt::from_bytes_le(num_bigint::Sign::Plus, &data);
        assert_eq!(out[0][0], want, "{cipher}");
    }
    let seal = |key: &Path, nonce: &str| {
        vec![
            "seal".to_string(),
            "--cipher".into(),
            "aes".into(),
            "--symmetric-key".into(),
            s(key).into(),
            "--nonce".into(),
            nonce.into(),
            "--in".into(),
            s(&d.join("data.bin")).into(),
            "--out".into(),
            s(&d.join("x.bin")).into(),
        ]
    };
    std::fs::write(d.join("short.key"), [0u8; 15]).unwrap();
    let args = seal(&d.join("short.key"), nonce);
    refused(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "15 bytes, a key is 16",
    );
    let args = seal(&key_file, "0011");
    refused(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "expected 32 hex digits",
    );
}

//! Client and server over loopback: a program whose loop exit depends on
//! encrypted data runs end to end (the server holds only the server key);
//! the client refuses once its decision budget is spent and gets the
//! stopped state back; malformed and oversized messages are refused and
//! the server keeps serving.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use hearth::{Ciphertext, ClientKey, GATES_128};
use hearth_emu::remote::{receive, run_remote, send, Message, Server, MAX_MESSAGE, VERSION};
use hearth_emu::{values, Image, Policy, Val};

const PROGRAM: &str = "
    ldr r1, =buf
    ldr r0, [r1]
    add r0, r0, r4
    str r0, [r1, #4]
loop:
    subs r4, r4, #1
    bne loop
    svc #0
";

fn program() -> Vec<u8> {
    format!("_start:\n{PROGRAM}\n.data\nbuf: .word 1000, 0\n").into_bytes()
}

fn decrypt(key: &ClientKey, d: &[Ciphertext]) -> u64 {
    values::decrypt(key, d).unwrap()
}

fn request(key: &ClientKey, count: u32) -> Message {
    let cts = |v: u64, n| values::encrypt(key, v, n).unwrap();
    // The first word of the data memory (1000) is sent encrypted.
    let memory = [0xe8u64, 0x03, 0, 0]
        .iter()
        .flat_map(|&b| cts(b, 8))
        .collect();
    Message::Run {
        program: program(),
        regs: vec![(4, cts(count as u64, 32))],
        clear_regs: Vec::new(),
        memory,
        max_steps: 10_000,
        width: 32,
    }
}

#[test]
fn client_and_server_over_loopback() {
    let key = ClientKey::generate(&GATES_128);
    let server = Server {
        key: key.server_key(),
        threads: None,
        limit: MAX_MESSAGE,
        timeout: Duration::from_secs(120),
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || server.serve(&listener, |line| eprintln!("server: {line}")));

    // A whole run: the loop exit is decided by the key owner, 3 times.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut policy = Policy::new(10);
    let run = run_remote(&mut s, &key, request(&key, 3), &mut policy, MAX_MESSAGE).unwrap();
    assert_eq!(run.error, None);
    assert_eq!(policy.log.len(), 3);
    assert_eq!(policy.log.iter().filter(|d| d.1).count(), 2);
    let Val::Enc(r0) = &run.state.regs[0] else {
        panic!("r0 is encrypted")
    };
    assert_eq!(decrypt(&key, r0), 1003);
    let stored: Vec<Ciphertext> = run.state.memory[4..8]
        .iter()
        .flat_map(|b| match b {
            hearth_emu::Byte::Enc(d) => d.clone(),
            hearth_emu::Byte::Clear(_) => panic!("stored bytes are encrypted"),
        })
        .collect();
    let word: u64 = stored
        .chunks(8)
        .enumerate()
        .map(|(i, c)| decrypt(&key, c) << (8 * i))
        .sum();
    assert_eq!(word, 1003);

    // A garbage message: refused with an error, the connection closed.
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    match receive(&mut s, MAX_MESSAGE).unwrap() {
        Message::Error { message } => assert!(message.contains("not a hearth-emu"), "{message}"),
        m => panic!("{m:?}"),
    }
    // An oversized one: refused before it is read.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = b"HEMU".to_vec();
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(1u64 << 40).to_le_bytes());
    s.write_all(&head).unwrap();
    match receive(&mut s, MAX_MESSAGE).unwrap() {
        Message::Error { message } => assert!(message.contains("exceeds"), "{message}"),
        m => panic!("{m:?}"),
    }
    // A well-framed message of the wrong kind.
    let mut s = TcpStream::connect(addr).unwrap();
    send(&mut s, &Message::Decision { taken: true }).unwrap();
    match receive(&mut s, MAX_MESSAGE).unwrap() {
        Message::Error { message } => assert!(message.contains("expected a run"), "{message}"),
        m => panic!("{m:?}"),
    }
    // A truncated payload.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = b"HEMU".to_vec();
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&100u64.to_le_bytes());
    head.extend_from_slice(&[7u8; 10]);
    s.write_all(&head).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(rest.starts_with(b"HEMU"), "an error message comes back");

    // The budget runs out: the client refuses, the state comes back.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut policy = Policy::new(2);
    let run = run_remote(&mut s, &key, request(&key, 5), &mut policy, MAX_MESSAGE).unwrap();
    let err = run.error.expect("stopped early");
    assert!(err.contains("budget"), "{err}");
    assert_eq!(policy.log.len(), 2);
    let Val::Enc(r4) = &run.state.regs[4] else {
        panic!("r4 is encrypted")
    };
    assert_eq!(decrypt(&key, r4), 2, "stopped at the third decision");
    assert_eq!(run.state.pc, 0x10010 + 4, "the state is at the branch");

    // And the server still serves.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut policy = Policy::new(10);
    let run = run_remote(&mut s, &key, request(&key, 1), &mut policy, MAX_MESSAGE).unwrap();
    assert_eq!(run.error, None);
    assert_eq!(policy.log, vec![(0x10014, false)]);

    // A clear pointer register: the loads and stores through it run.
    let pointers = "_start:\n ldr r0, [r2]\n add r0, r0, r4\n str r0, [r2, #4]\n svc #0\n\
                    .data\nbuf: .word 1000, 0\n";
    let buf = Image::load(pointers.as_bytes()).unwrap().symbols["buf"];
    let pointer_run = |regs: Vec<(u8, Vec<Ciphertext>)>, clear_regs: Vec<(u8, u32)>| {
        let mut s = TcpStream::connect(addr).unwrap();
        let request = Message::Run {
            program: pointers.as_bytes().to_vec(),
            regs,
            clear_regs,
            memory: Vec::new(),
            max_steps: 100,
            width: 32,
        };
        run_remote(&mut s, &key, request, &mut Policy::new(0), MAX_MESSAGE)
    };
    let four = || values::encrypt(&key, 4, 32).unwrap();
    let run = pointer_run(vec![(4, four())], vec![(2, buf)]).unwrap();
    assert_eq!(run.error, None);
    assert_eq!(run.state.regs[2], Val::Clear(buf));
    let Val::Enc(r0) = &run.state.regs[0] else {
        panic!("r0 is encrypted")
    };
    assert_eq!(decrypt(&key, r0), 1004);
    // The same register clear and encrypted, or not a register: refused.
    for clear in [(4, buf), (15, buf)] {
        match pointer_run(vec![(4, four())], vec![clear]) {
            Err(e) => assert!(
                e.to_string().contains("twice") || e.to_string().contains("r0..r14"),
                "{e}"
            ),
            Ok(_) => panic!("r{} accepted", clear.0),
        }
    }
    // A message of protocol version 1 (before clear registers): refused,
    // both versions named.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = b"HEMU".to_vec();
    head.extend_from_slice(&1u16.to_le_bytes());
    head.extend_from_slice(&8u64.to_le_bytes());
    head.extend_from_slice(&[0u8; 8]);
    s.write_all(&head).unwrap();
    match receive(&mut s, MAX_MESSAGE).unwrap() {
        Message::Error { message } => assert!(
            message.contains("version 1") && message.contains(&VERSION.to_string()),
            "{message}"
        ),
        m => panic!("{m:?}"),
    }
}

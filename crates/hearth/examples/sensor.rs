//! The sensor tutorial's encrypted run (docs/tutorials/sensor.md, whose
//! section 3 shows this file): the owner's keys, the sensor's AES key
//! under the public key and a sealed upload in the clear, the server's
//! key schedule and per-upload program on the CPU backend, the owner's
//! decryption. About three minutes on two cores:
//! `cargo run --release -p hearth --example sensor`.

use hearth::api::{AesRoundKeys, CompiledProgram, Program, Word, U128, U16, U32};
use hearth::symmetric::aes::AesCtr;
use hearth::{Error, DIGITS_KS32_128};
use num_bigint::BigInt;
/// Readings per upload: one AES block of little-endian u16s.
const READINGS: usize = 8;
/// The alarm threshold, in hundredths of a degree.
const LIMIT: u16 = 2_500;
/// Once per sensor: the AES key in, its round keys out.
fn key_schedule() -> Result<CompiledProgram, Error> {
    let p = Program::new(&DIGITS_KS32_128);
    p.output(&U128::input(&p).aes_key_schedule());
    p.build()?
        .with_signature(&[("aes_key", &[])], &[("round_keys", &[])])
}
/// Per upload: the block decrypted under FHE, its readings' average, and
/// whether the average is above LIMIT.
fn per_upload() -> Result<CompiledProgram, Error> {
    let p = Program::new(&DIGITS_KS32_128);
    let keys = AesRoundKeys::input(&p);
    let counter = U128::input(&p);
    let sealed = Word::<128, false>::input(&p);
    let data = keys.aes_ctr_decrypt(&counter, &sealed);
    let mut sum = U32::constant(&p, 0u32);
    for i in 0..READINGS {
        let reading: U16 = (&data >> (16 * i) as u32).cast();
        sum = &sum + &reading.cast::<32, false>();
    }
    let average: U16 = (&sum >> 3).cast();
    p.output(&average);
    p.output(&average.gt(&U16::constant(&p, LIMIT)));
    p.build()?.with_signature(
        &[("round_keys", &[]), ("counter", &[]), ("sealed", &[])],
        &[("average", &[]), ("alarm", &[])],
    )
}
/// The sensor: eight readings sealed under `key` at counter block `block`.
fn seal(key: &[u8; 16], block: u128, readings: &[u16; READINGS]) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    for (chunk, r) in bytes.chunks_mut(2).zip(readings) {
        chunk.copy_from_slice(&r.to_le_bytes());
    }
    AesCtr::new(key, &block.to_be_bytes()).apply(&mut bytes);
    bytes
}
use hearth::backend::CpuBackend;
use hearth::{Bundle, ClientKey};
use std::time::Instant;

fn main() -> Result<(), Error> {
    let (schedule, upload) = (key_schedule()?, per_upload()?);

    // The owner.
    let client = ClientKey::generate(&DIGITS_KS32_128);
    let server_key = client.server_key();
    let public = client.public_key()?;

    // The sensor, once: its AES key under the public key.
    let aes_key = *b"sensor 42's key!";
    let key_value = BigInt::from(u128::from_le_bytes(aes_key));
    let key_bundle = public.encrypt_bundle(&schedule.signature().inputs, &[vec![key_value]])?;
    println!("key upload: {} bytes", key_bundle.to_bytes()?.len());

    // The server, once: the round keys, kept.
    let backend = CpuBackend::new(&server_key, None)?;
    let start = Instant::now();
    let round_keys = schedule.run_bundle(&backend, &key_bundle)?;
    println!("key schedule: {:.1} s", start.elapsed().as_secs_f64());

    // The sensor, per upload: the counter and the sealed block, in the clear.
    let readings = [2_480u16, 2_530, 2_610, 2_700, 2_650, 2_590, 2_520, 2_470];
    let counter: u128 = 0x5e45_0042_0000_0001_0000_0000 << 32;
    let sealed = seal(&aes_key, counter, &readings);
    let clear_inputs = &upload.signature().inputs[1..];
    let values = [
        vec![BigInt::from(counter)],
        vec![BigInt::from(u128::from_le_bytes(sealed))],
    ];
    let sent = Bundle::clear(public.params().id, public.key_id(), clear_inputs, &values)?;
    println!("upload: {} bytes", sent.to_bytes()?.len());

    // The server, per upload: round keys and upload joined, then the run.
    let start = Instant::now();
    let inputs = Bundle::combine([round_keys, sent])?;
    let results = upload.run_bundle(&backend, &inputs)?;
    println!("per upload: {:.1} s", start.elapsed().as_secs_f64());

    // The owner.
    let out = client.decrypt_bundle(&results)?;
    let average = readings.iter().map(|&r| u32::from(r)).sum::<u32>() / 8;
    assert_eq!(out[0].1[0], BigInt::from(average));
    assert_eq!(out[1].1[0], BigInt::from(1));
    println!("average {}, alarm {}", out[0].1[0], out[1].1[0]);
    Ok(())
}

//! `hearth emu client`: runs an A32 program on a `hearth emu serve` server,
//! answering its branch queries with the secret key.

use std::path::PathBuf;

use hearth::{ClientKey, Error};
use hearth_emu::{values, Image, Policy};

use crate::emu::{
    emu_err, gates_only, initial_registers, parse_width, print_state, report_policy, width_of,
    ProgramInputs, Registers, POINTER_HINT,
};

#[derive(clap::Args)]
pub struct Args {
    /// The server's address.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7878")]
    connect: String,
    /// A folder with client.key (GATES_128).
    #[arg(long, value_name = "DIR")]
    keys: PathBuf,
    #[command(flatten)]
    inputs: ProgramInputs,
    /// The most branch decisions answered; the run stops at the next one.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    decisions: u64,
    /// Stop after this many instructions.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    max_steps: u64,
    /// Write the final data memory (decrypted) to this file (default:
    /// not written).
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
    /// Register width: 32, or 16 for the 16-bit mode.
    #[arg(long, value_name = "BITS", default_value_t = 32, value_parser = parse_width)]
    width: u32,
}

/// `hearth emu client`: sends a program and its encrypted inputs, answers
/// branch queries, prints the decrypted result.
pub fn run(args: Args) -> Result<(), Error> {
    let key = ClientKey::load(&args.keys.join("client.key"))?;
    gates_only(key.params())?;
    let elf = std::fs::read(&args.inputs.program)
        .map_err(|e| Error::Config(format!("{}: {e}", args.inputs.program.display())))?;
    // Refuse locally what the server would refuse.
    let image = Image::load_for(&elf, width_of(args.width))
        .map_err(|e| Error::Config(format!("{}: {e}", args.inputs.program.display())))?;
    let bits = args.width as usize;
    let Registers { clear, encrypted } = initial_registers(&image, &args.inputs, bits)?;
    let cts = |v: u64, n: usize| values::encrypt(&key, v, n);
    let mut memory = Vec::new();
    if let Some(path) = &args.inputs.mem {
        let bytes =
            std::fs::read(path).map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        for b in bytes {
            memory.extend(cts(b as u64, 8)?);
        }
    }
    let regs = encrypted
        .iter()
        .map(|&(r, v)| Ok((r, cts(v as u64, bits)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let request = hearth_emu::remote::Message::Run {
        program: elf,
        regs,
        clear_regs: clear,
        memory,
        max_steps: args.max_steps,
        width: args.width,
    };
    let mut stream = std::net::TcpStream::connect(&args.connect)
        .map_err(|e| Error::Config(format!("{}: {e}", args.connect)))?;
    let mut policy = Policy::new(args.decisions);
    let run = hearth_emu::remote::run_remote(
        &mut stream,
        &key,
        request,
        &mut policy,
        hearth_emu::remote::MAX_MESSAGE,
    )
    .map_err(emu_err)?;
    for (pc, taken) in &policy.log {
        eprintln!(
            "decision at {pc:#010x}: {}",
            if *taken { "taken" } else { "not taken" }
        );
    }
    report_policy(&policy);
    let dec = |d: &[hearth::Ciphertext]| values::decrypt(&key, d);
    eprintln!("{} instructions, {} PBS on the server", run.steps, run.pbs);
    print_state(&run.state, &dec, args.dump.as_deref())?;
    match run.error {
        Some(e) => {
            if e.contains("address depends on encrypted data") {
                eprintln!("{POINTER_HINT}");
            }
            Err(Error::Config(format!("the run stopped early: {e}")))
        }
        None => Ok(()),
    }
}

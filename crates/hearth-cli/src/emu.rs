//! `hearth emu`: the A32 emulator on encrypted registers and memory.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use hearth::api::{clear_word, clear_word_value};
use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::{ClientKey, Error, ServerKey, GATES_128};
use hearth_emu::values;
use hearth_emu::{
    BranchOracle, Byte, ClearOracle, EmuError, Flag, Image, KeyOracle, Machine, Policy, State,
    StepReport, Val, Width,
};

#[derive(clap::Subcommand)]
pub enum Emu {
    /// Run an A32 program (an ELF executable from `arm-none-eabi-gcc -marm`,
    /// or assembly text) from its entry to its first `svc`: registers given
    /// with --reg and the data memory are encrypted; registers given with
    /// --clear-reg (pointers, sizes), the pc, the code and every address
    /// stay clear.
    Run(RunArgs),
    /// Serve A32 programs for remote key owners over TCP (holds only the
    /// server key; the compute server for any program is `hearth server`).
    Serve(crate::emu_serve::Args),
    /// Run an A32 program on a `hearth emu serve` server, answering its
    /// branch queries with the secret key.
    Client(crate::emu_client::Args),
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Real encryption (GATES_128), the cpu backend.
    Encrypted,
    /// The same circuits on the clear backend: a debugging emulator.
    Clear,
}

/// A program and its inputs, as `hearth emu run` and `hearth emu client`
/// take them.
#[derive(clap::Args)]
pub struct ProgramInputs {
    /// The ELF executable or assembly file.
    pub program: PathBuf,
    /// An encrypted initial register, e.g. `--reg r0=42`, `--reg
    /// r1=0xff`, `--reg r2=-5` (repeatable). Pointers belong in
    /// --clear-reg: loads and stores need clear addresses.
    #[arg(long = "reg", value_name = "rN=VALUE", value_parser = parse_reg)]
    pub regs: Vec<(u8, RegValue)>,
    /// A clear initial register, for pointers and other public inputs,
    /// e.g. `--clear-reg r1=0x20000`, or `--clear-reg r0=@a`: the address
    /// of the program's symbol `a` (an ELF symbol such as a C global, or an
    /// assembly label; `@a+8` adds an offset). Addresses computed from it
    /// stay clear, so loads and stores through it work; whoever runs the
    /// program (a server too) sees it. Repeatable; a register is given by
    /// --reg or --clear-reg, not both.
    #[arg(long = "clear-reg", value_name = "rN=VALUE", value_parser = parse_reg)]
    pub clear_regs: Vec<(u8, RegValue)>,
    /// Raw bytes for the start of the data memory, encrypted (default:
    /// none; the rest keeps the ELF's initial data).
    #[arg(long, value_name = "FILE")]
    pub mem: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    inputs: ProgramInputs,
    /// Encrypted, or the same circuits on clear values (debugging).
    #[arg(long, value_name = "MODE", value_enum, default_value = "encrypted")]
    mode: Mode,
    /// A folder with client.key and server.key (GATES_128, from `hearth
    /// keygen --params GATES_128`; default: fresh keys are generated).
    #[arg(long, value_name = "DIR")]
    keys: Option<PathBuf>,
    /// Stop after this many instructions.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    max_steps: u64,
    /// The most branch decisions the key owner answers.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    decisions: u64,
    /// One line per instruction: address, instruction, PBS, depth, time.
    #[arg(long)]
    trace: bool,
    /// Write the final data memory (decrypted) to this file (default:
    /// not written).
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
    #[command(flatten)]
    threads: hearth_cli::options::Threads,
    /// Register width: 32 (A32), or 16 (the 16-bit mode: 16-bit registers
    /// and memory words, assembly placed below 64 KiB).
    #[arg(long, value_name = "BITS", default_value_t = 32, value_parser = parse_width)]
    width: u32,
}

pub fn parse_width(s: &str) -> Result<u32, String> {
    match s {
        "16" => Ok(16),
        "32" => Ok(32),
        _ => Err(format!("`{s}`: the width is 16 or 32")),
    }
}

pub fn width_of(bits: u32) -> Width {
    if bits == 16 {
        Width::W16
    } else {
        Width::W32
    }
}

/// An initial register's value as given: a number, or the address of a
/// program symbol plus an offset (`@name`, `@name+8`), resolved once the
/// program is loaded.
#[derive(Clone, Debug)]
pub enum RegValue {
    /// A number.
    Number(u32),
    /// A symbol's address plus an offset.
    Symbol(String, i64),
}

pub fn parse_reg(s: &str) -> Result<(u8, RegValue), String> {
    let (r, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected rN=VALUE or rN=@symbol"))?;
    let r = match r.trim().to_ascii_lowercase().as_str() {
        "sp" => 13,
        "lr" => 14,
        r => r
            .strip_prefix('r')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|&n| n <= 14)
            .ok_or_else(|| format!("`{r}`: registers are r0..r14 (sp, lr)"))?,
    };
    let v = v.trim();
    if let Some(sym) = v.strip_prefix('@') {
        let (name, offset) = match sym.find(['+', '-']) {
            Some(i) => {
                let off = &sym[i + 1..];
                let n = parse_number(off)?;
                (&sym[..i], if &sym[i..=i] == "-" { -n } else { n })
            }
            None => (sym, 0),
        };
        if name.is_empty() {
            return Err(format!("`{v}`: expected @symbol"));
        }
        return Ok((r, RegValue::Symbol(name.to_string(), offset)));
    }
    let value = if let Some(n) = v.strip_prefix('-') {
        let n = parse_number(n)?;
        if n > 1 << 31 {
            return Err(format!("`{v}` does not fit 32 bits"));
        }
        (n as u32).wrapping_neg()
    } else {
        u32::try_from(parse_number(v)?).map_err(|_| format!("`{v}` does not fit 32 bits"))?
    };
    Ok((r, RegValue::Number(value)))
}

/// A decimal or `0x` hexadecimal number.
fn parse_number(v: &str) -> Result<i64, String> {
    let r = match v.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16),
        None => v.parse(),
    };
    r.map_err(|e| format!("`{v}`: {e}"))
}

/// Initial registers and their values, symbols resolved.
pub struct Registers {
    /// From --clear-reg.
    pub clear: Vec<(u8, u32)>,
    /// From --reg, to encrypt.
    pub encrypted: Vec<(u8, u32)>,
}

/// The initial registers of a run on `image` with `bits`-bit registers,
/// symbols resolved. A register given twice (by either flag), an unknown
/// symbol or a value wider than the registers is an error.
pub fn initial_registers(
    image: &Image,
    inputs: &ProgramInputs,
    bits: usize,
) -> Result<Registers, Error> {
    let (program, encrypted, clear) = (&inputs.program, &inputs.regs, &inputs.clear_regs);
    let mut given: [Option<&str>; 15] = [None; 15];
    let mut resolve = |list: &[(u8, RegValue)], flag: &'static str| {
        list.iter()
            .map(|(r, v)| {
                match given[*r as usize].replace(flag) {
                    Some(f) if f == flag => {
                        return Err(Error::Config(format!("r{r} is given twice by {flag}")))
                    }
                    Some(f) => {
                        return Err(Error::Config(format!(
                            "r{r} is given by both {f} and {flag}: a register is either \
                             encrypted or clear"
                        )))
                    }
                    None => {}
                }
                let value = match v {
                    RegValue::Number(x) => *x,
                    RegValue::Symbol(name, off) => {
                        let addr = image
                            .symbols
                            .get(name)
                            .ok_or_else(|| unknown_symbol(image, program, name))?;
                        (*addr as i64).wrapping_add(*off) as u32
                    }
                };
                if bits < 32 && value >> bits != 0 {
                    return Err(Error::Config(format!(
                        "r{r} = {value:#x} does not fit {bits} bits"
                    )));
                }
                Ok((*r, value))
            })
            .collect::<Result<Vec<_>, Error>>()
    };
    let encrypted = resolve(encrypted, "--reg")?;
    let clear = resolve(clear, "--clear-reg")?;
    Ok(Registers { clear, encrypted })
}

/// The error for `@name` when the program has no such symbol: it lists
/// the symbols it has.
fn unknown_symbol(image: &Image, program: &std::path::Path, name: &str) -> Error {
    let mut names: Vec<&str> = image
        .symbols
        .keys()
        .map(String::as_str)
        .filter(|n| !n.starts_with(['$', '.']))
        .collect();
    names.sort_unstable();
    let more = names.len().saturating_sub(40);
    names.truncate(40);
    Error::Config(format!(
        "`@{name}`: {} has no symbol `{name}` (it has: {}{})",
        program.display(),
        names.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

pub fn run(which: Emu) -> Result<(), Error> {
    match which {
        Emu::Run(args) => run_program(args),
        Emu::Serve(args) => crate::emu_serve::run(args),
        Emu::Client(args) => crate::emu_client::run(args),
    }
}

pub fn emu_err(e: impl std::fmt::Display) -> Error {
    Error::Config(e.to_string())
}

fn run_program(args: RunArgs) -> Result<(), Error> {
    let file = std::fs::read(&args.inputs.program)
        .map_err(|e| Error::Config(format!("{}: {e}", args.inputs.program.display())))?;
    let image = Image::load_for(&file, width_of(args.width)).map_err(|e| match e {
        hearth_emu::LoadError::Instructions(list) => {
            let lines: Vec<String> = list.iter().map(|u| format!("  {u}")).collect();
            Error::Config(format!(
                "{}: {} unsupported instruction(s):\n{}",
                args.inputs.program.display(),
                list.len(),
                lines.join("\n")
            ))
        }
        e => Error::Config(format!("{}: {e}", args.inputs.program.display())),
    })?;
    let mut data = image.data.clone();
    if let Some(path) = &args.inputs.mem {
        let bytes =
            std::fs::read(path).map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        if bytes.len() > data.len() {
            return Err(Error::Config(format!(
                "{}: {} bytes do not fit the {}-byte data memory at {:#x}",
                path.display(),
                bytes.len(),
                data.len(),
                image.data_base
            )));
        }
        data[..bytes.len()].copy_from_slice(&bytes);
    }
    eprintln!(
        "{}: {} instructions, data memory {} bytes at {:#x}, entry {:#x}",
        args.inputs.program.display(),
        image.code.len(),
        data.len(),
        image.data_base,
        image.entry
    );
    match args.mode {
        Mode::Clear => {
            let enc = |v: u64, n: usize| clear_word(v, n, false);
            let dec = |d: &[u64]| -> Result<u64, Error> {
                u64::try_from(clear_word_value(d, false)?).map_err(emu_err)
            };
            let mut oracle = ClearOracle(Policy::new(args.decisions));
            execute(&args, image, &data, &ClearBackend, enc, dec, &mut oracle)?;
            report_policy(&oracle.0);
        }
        Mode::Encrypted => {
            let (client, server) = match &args.keys {
                Some(dir) => (
                    ClientKey::load(&dir.join("client.key"))?,
                    ServerKey::load(&dir.join("server.key"))?,
                ),
                None => {
                    eprintln!("generating GATES_128 keys...");
                    let c = ClientKey::generate(&GATES_128);
                    let s = c.server_key();
                    (c, s)
                }
            };
            gates_only(client.params())?;
            let cpu = CpuBackend::new(&server, args.threads.get())?;
            let enc = |v: u64, n: usize| values::encrypt(&client, v, n);
            let dec = |d: &[hearth::Ciphertext]| values::decrypt(&client, d);
            let mut oracle = KeyOracle {
                key: &client,
                policy: Policy::new(args.decisions),
            };
            execute(&args, image, &data, &cpu, enc, dec, &mut oracle)?;
            report_policy(&oracle.policy);
        }
    }
    Ok(())
}

/// What to do about an encrypted address.
pub const POINTER_HINT: &str = "hint: pointers must be clear: give them with --clear-reg \
                            (e.g. --clear-reg r0=@array), not --reg";

/// The emulator's circuits are built for GATES_128: other keys (insecure
/// test sets included) are refused before anything runs.
pub fn gates_only(params: &hearth::ParameterSet) -> Result<(), Error> {
    if params.id != GATES_128.id {
        return Err(Error::Config(format!(
            "the emulator runs on GATES_128 keys; these are {}",
            params.name
        )));
    }
    Ok(())
}

pub fn report_policy(p: &Policy) {
    eprintln!(
        "key owner: {} branch decision(s) answered (budget {})",
        p.log.len(),
        p.budget
    );
}

/// Runs `image` on `backend`, encrypting the given registers and the data
/// memory with `enc`; prints the final state decrypted with `dec`.
fn execute<B: Backend>(
    args: &RunArgs,
    image: Image,
    data: &[u8],
    backend: &B,
    enc: impl Fn(u64, usize) -> Result<Vec<B::Digit>, Error>,
    dec: impl Fn(&[B::Digit]) -> Result<u64, Error>,
    oracle: &mut dyn BranchOracle<B::Digit>,
) -> Result<(), Error>
where
    B::Digit: Clone,
{
    let bits = args.width as usize;
    let regs = initial_registers(&image, &args.inputs, bits)?;
    let memory = data
        .iter()
        .map(|&b| Ok(Byte::Enc(enc(b as u64, 8)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut state = State::new(image.entry, image.data_base, memory);
    let encrypted = regs
        .encrypted
        .iter()
        .map(|&(r, v)| Ok((r, enc(v as u64, bits)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    state
        .set_registers(&regs.clear, encrypted, bits)
        .map_err(emu_err)?;
    let mut m = Machine::new(image, state, backend, &GATES_128);
    m.set_width(width_of(args.width));
    if let Some(t) = args.threads.get() {
        m.set_threads(t);
    }
    let start = Instant::now();
    let trace = args.trace;
    let progress = |r: &StepReport| {
        let cond = match r.executed {
            Some(true) => "",
            Some(false) => " (skipped)",
            None => " (oblivious)",
        };
        if trace {
            println!(
                "{:#010x}  {:<32} PBS {:>6}  depth {:>4}  {:>9.3} ms{cond}",
                r.pc,
                r.instr.to_string(),
                r.pbs,
                r.depth,
                r.time.as_secs_f64() * 1e3
            );
        }
    };
    let mut steps = 0u64;
    let mut pbs = 0u64;
    // A progress line rewritten in place, where someone watches a terminal.
    let live = !trace && std::io::stderr().is_terminal();
    let result = m.run(oracle, args.max_steps, |r| {
        steps += 1;
        pbs += r.pbs as u64;
        progress(r);
        if live {
            eprint!(
                "\r{steps} instructions, {pbs} PBS, {:.1} s",
                start.elapsed().as_secs_f64()
            );
        }
    });
    if live {
        eprintln!();
    }
    match &result {
        Ok(stop) => eprintln!(
            "stopped at {stop:?} after {} instructions, {} PBS, {:.2} s",
            m.steps,
            m.pbs,
            start.elapsed().as_secs_f64()
        ),
        Err(e) => {
            eprintln!("error: {e}; state kept at pc {:#010x}", m.state.pc);
            if matches!(e, EmuError::Encrypted { what, .. } if what.contains("address")) {
                eprintln!("{POINTER_HINT}");
            }
        }
    }
    print_state(&m.state, &dec, args.dump.as_deref())?;
    result.map(|_| ()).map_err(emu_err)
}

/// Prints registers and flags (decrypted with `dec`), and writes the data
/// memory to `dump`.
pub fn print_state<D>(
    state: &State<D>,
    dec: &impl Fn(&[D]) -> Result<u64, Error>,
    dump: Option<&std::path::Path>,
) -> Result<(), Error> {
    for r in 0..15 {
        let (v, how) = match &state.regs[r] {
            Val::Clear(v) => (*v as u64, "clear"),
            Val::Enc(d) => (dec(d)?, "encrypted"),
        };
        println!("r{r:<2} = {v:#010x} ({v}, {how})");
    }
    let mut flags = String::new();
    for (name, f) in "NZCV".chars().zip(&state.flags) {
        let (v, how) = match f {
            Flag::Clear(b) => (*b, ""),
            Flag::Enc(d) => (dec(std::slice::from_ref(d))? == 1, "*"),
        };
        flags.push_str(&format!("{name}={}{how} ", v as u8));
    }
    println!("pc  = {:#010x}   {flags}(* encrypted)", state.pc);
    if let Some(path) = dump {
        let bytes = state
            .memory
            .iter()
            .map(|b| match b {
                Byte::Clear(x) => Ok(*x),
                Byte::Enc(d) => Ok(dec(d)? as u8),
            })
            .collect::<Result<Vec<u8>, Error>>()?;
        std::fs::write(path, &bytes)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        eprintln!("data memory written to {}", path.display());
    }
    Ok(())
}

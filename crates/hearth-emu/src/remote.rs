//! The emulator over TCP: a server that holds only the server key runs
//! programs for clients that hold the secret key and answer its branch
//! queries.
//!
//! Protocol (version [`VERSION`]): every message is `HEMU`, the version
//! (u16, little-endian), the payload length (u64, little-endian, at most
//! the receiver's limit) and a bincode [`Message`]. Version 2 added clear
//! initial registers to [`Message::Run`]; a peer of another version is
//! refused with both versions named. The client sends
//! [`Message::Run`]; the server answers with any number of
//! [`Message::Query`] (one encrypted condition bit each; the client
//! answers [`Message::Decision`] or [`Message::Refuse`]) and ends with
//! [`Message::Done`] (the final or stopped state, encrypted) or
//! [`Message::Error`]. A malformed, oversized or unexpected message ends
//! that connection with an error; the server goes on serving.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use bincode::Options;
use hearth::backend::CpuBackend;
use hearth::{Ciphertext, ClientKey, ServerKey, GATES_128};
use serde::{Deserialize, Serialize};

use crate::image::Image;
use crate::machine::{EmuError, Machine, Stop, Width};
use crate::oracle::{BranchOracle, Policy};
use crate::state::{Byte, State};

/// The first bytes of every message.
pub const MAGIC: [u8; 4] = *b"HEMU";
/// The protocol version this side speaks (2: clear initial registers).
pub const VERSION: u16 = 2;
/// The default bound on one message (1 GiB).
pub const MAX_MESSAGE: u64 = 1 << 30;

/// Protocol messages.
#[derive(Serialize, Deserialize, Debug)]
pub enum Message {
    /// Run `program` (an ELF executable or assembly text) from its entry:
    /// registers given in `regs` and the data memory
    /// (8 ciphertexts per byte from its start; the rest keeps the ELF's
    /// data, encrypted by nobody: clear) are encrypted; registers in
    /// `clear_regs` are public inputs (pointers, sizes), which the server
    /// sees. A register may be given once (checked by
    /// [`State::set_registers`]).
    Run {
        /// The ELF file or assembly text.
        program: Vec<u8>,
        /// Encrypted initial registers: (register, one ciphertext per bit).
        regs: Vec<(u8, Vec<Ciphertext>)>,
        /// Clear initial registers (protocol version 2).
        clear_regs: Vec<(u8, u32)>,
        /// The start of the data memory, 8 ciphertexts per byte.
        memory: Vec<Ciphertext>,
        /// The most instructions to run.
        max_steps: u64,
        /// The register width: 32, or 16 for the 16-bit mode.
        width: u32,
    },
    /// The encrypted condition of the branch at `pc`.
    Query {
        /// The branch's address.
        pc: u32,
        /// The condition, one encrypted bit.
        cond: Ciphertext,
    },
    /// The key owner's answer to a [`Message::Query`].
    Decision {
        /// Whether the branch is taken.
        taken: bool,
    },
    /// The key owner declines to answer (its budget is spent): the run
    /// stops there.
    Refuse {
        /// Why.
        reason: String,
    },
    /// The state at the end (`error` is why the run stopped early; the
    /// state is then the one before the failing instruction).
    Done {
        /// Registers, flags and data memory.
        state: Box<State<Ciphertext>>,
        /// Instructions executed.
        steps: u64,
        /// Bootstraps spent.
        pbs: u64,
        /// Why the run stopped early, if it did.
        error: Option<String>,
    },
    /// The request was refused (malformed, oversized, unexpected, or a
    /// program or input the server does not accept).
    Error {
        /// Why.
        message: String,
    },
}

/// Why a remote run failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The connection failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// A message that breaks the protocol (magic, version, size, format,
    /// order).
    #[error("protocol: {0}")]
    Protocol(String),
    /// The server answered with [`Message::Error`].
    #[error("the server refused: {0}")]
    Server(String),
}

fn protocol(s: impl Into<String>) -> RemoteError {
    RemoteError::Protocol(s.into())
}

/// Writes one message.
pub fn send(stream: &mut impl Write, m: &Message) -> Result<(), RemoteError> {
    let payload = bincode::serialize(m).map_err(|e| protocol(e.to_string()))?;
    let mut head = Vec::with_capacity(14);
    head.extend_from_slice(&MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    stream.write_all(&head)?;
    stream.write_all(&payload)?;
    stream.flush()?;
    Ok(())
}

/// Reads one message of at most `limit` bytes.
pub fn receive(stream: &mut impl Read, limit: u64) -> Result<Message, RemoteError> {
    let mut head = [0u8; 14];
    stream.read_exact(&mut head)?;
    if head[..4] != MAGIC {
        return Err(protocol("not a hearth-emu message"));
    }
    let version = u16::from_le_bytes([head[4], head[5]]);
    if version != VERSION {
        return Err(protocol(format!(
            "protocol version {version}, this side speaks {VERSION}"
        )));
    }
    let len = u64::from_le_bytes(head[6..14].try_into().expect("8 bytes"));
    if len > limit {
        return Err(protocol(format!(
            "a message of {len} bytes exceeds the limit of {limit}"
        )));
    }
    let mut payload = Vec::new();
    stream.take(len).read_to_end(&mut payload)?;
    if payload.len() as u64 != len {
        return Err(protocol("truncated message"));
    }
    bincode::options()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(limit)
        .deserialize(&payload)
        .map_err(|e| protocol(format!("malformed message: {e}")))
}

/// Asks the client over the connection.
struct RemoteOracle<'s> {
    stream: &'s mut TcpStream,
    limit: u64,
}

impl BranchOracle<Ciphertext> for RemoteOracle<'_> {
    fn decide(&mut self, pc: u32, cond: &Ciphertext) -> Result<bool, String> {
        let q = Message::Query {
            pc,
            cond: cond.clone(),
        };
        send(self.stream, &q).map_err(|e| e.to_string())?;
        match receive(self.stream, self.limit).map_err(|e| e.to_string())? {
            Message::Decision { taken } => Ok(taken),
            Message::Refuse { reason } => Err(format!("the key owner refused: {reason}")),
            m => Err(format!("expected a decision, got {}", kind(&m))),
        }
    }
}

fn kind(m: &Message) -> &'static str {
    match m {
        Message::Run { .. } => "run",
        Message::Query { .. } => "query",
        Message::Decision { .. } => "decision",
        Message::Refuse { .. } => "refuse",
        Message::Done { .. } => "done",
        Message::Error { .. } => "error",
    }
}

/// A server: the server key and its limits.
pub struct Server {
    /// The server key (GATES_128): every ciphertext is checked against it.
    pub key: ServerKey,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// The largest message accepted.
    pub limit: u64,
    /// How long a client may take to answer.
    pub timeout: Duration,
}

impl Server {
    /// Serves connections one after another, forever; a failed connection
    /// is logged (through `log`) and the next one served.
    pub fn serve(&self, listener: &TcpListener, mut log: impl FnMut(String)) -> ! {
        loop {
            match listener.accept() {
                Ok((stream, peer)) => match self.handle(stream) {
                    Ok(()) => log(format!("{peer}: done")),
                    Err(e) => log(format!("{peer}: {e}")),
                },
                Err(e) => log(format!("accept: {e}")),
            }
        }
    }

    /// Runs one client's program.
    pub fn handle(&self, mut stream: TcpStream) -> Result<(), RemoteError> {
        stream.set_read_timeout(Some(self.timeout))?;
        let request = match receive(&mut stream, self.limit) {
            Ok(m) => m,
            Err(e) => {
                let _ = send(
                    &mut stream,
                    &Message::Error {
                        message: e.to_string(),
                    },
                );
                return Err(e);
            }
        };
        match self.run(&mut stream, request) {
            Ok(done) => send(&mut stream, &done),
            Err(message) => {
                send(
                    &mut stream,
                    &Message::Error {
                        message: message.clone(),
                    },
                )?;
                Err(RemoteError::Server(message))
            }
        }
    }

    fn run(&self, stream: &mut TcpStream, request: Message) -> Result<Message, String> {
        let Message::Run {
            program,
            regs,
            clear_regs,
            memory,
            max_steps,
            width,
        } = request
        else {
            return Err(format!("expected a run request, got {}", kind(&request)));
        };
        let width = match width {
            32 => Width::W32,
            16 => Width::W16,
            w => return Err(format!("a register width of {w} (16 or 32)")),
        };
        let image = Image::load_for(&program, width).map_err(|e| e.to_string())?;
        let check = |cts: &[Ciphertext]| -> Result<(), String> {
            cts.iter()
                .try_for_each(|ct| self.key.check(ct))
                .map_err(|e| e.to_string())
        };
        if memory.len() % 8 != 0 || memory.len() / 8 > image.data.len() {
            return Err(format!(
                "{} memory ciphertexts: expected 8 per byte, at most {} bytes",
                memory.len(),
                image.data.len()
            ));
        }
        check(&memory)?;
        let mut bytes: Vec<Byte<Ciphertext>> =
            memory.chunks(8).map(|c| Byte::Enc(c.to_vec())).collect();
        bytes.extend(image.data[bytes.len()..].iter().map(|&b| Byte::Clear(b)));
        let mut state = State::new(image.entry, image.data_base, bytes);
        for (_, cts) in &regs {
            if cts.len() != width.bits() {
                return Err(format!(
                    "a register of {} ciphertexts, expected {}",
                    cts.len(),
                    width.bits()
                ));
            }
            check(cts)?;
        }
        state
            .set_registers(&clear_regs, regs, width.bits())
            .map_err(|e| e.to_string())?;
        let cpu = CpuBackend::new(&self.key, self.threads).map_err(|e| e.to_string())?;
        let mut m = Machine::new(image, state, &cpu, &GATES_128);
        m.set_width(width);
        let limit = self.limit;
        let mut oracle = RemoteOracle { stream, limit };
        let result = m.run(&mut oracle, max_steps, |_| {});
        let error = match result {
            Ok(Stop::Halted { .. }) => None,
            Err(EmuError::Hearth { source, pc }) => Some(format!("at {pc:#010x}: {source}")),
            Err(e) => Some(e.to_string()),
        };
        Ok(Message::Done {
            state: Box::new(m.state),
            steps: m.steps,
            pbs: m.pbs,
            error,
        })
    }
}

/// What a remote run returned.
pub struct RemoteRun {
    /// Registers, flags and data memory at the end (or before the failing
    /// instruction).
    pub state: State<Ciphertext>,
    /// Instructions executed.
    pub steps: u64,
    /// Bootstraps spent on the server.
    pub pbs: u64,
    /// Why the run stopped early, if it did.
    pub error: Option<String>,
}

/// The key owner's side: sends the program and its encrypted inputs,
/// answers queries under `policy` (each a single bit, decrypted only while
/// the budget lasts), returns the final state.
pub fn run_remote(
    stream: &mut TcpStream,
    key: &ClientKey,
    request: Message,
    policy: &mut Policy,
    limit: u64,
) -> Result<RemoteRun, RemoteError> {
    send(stream, &request)?;
    let mut oracle = crate::oracle::KeyOracle {
        key,
        policy: std::mem::replace(policy, Policy::new(0)),
    };
    let out = loop {
        match receive(stream, limit)? {
            Message::Query { pc, cond } => {
                let reply = match oracle.decide(pc, &cond) {
                    Ok(taken) => Message::Decision { taken },
                    Err(reason) => Message::Refuse { reason },
                };
                send(stream, &reply)?;
            }
            Message::Done {
                state,
                steps,
                pbs,
                error,
            } => {
                break Ok(RemoteRun {
                    state: *state,
                    steps,
                    pbs,
                    error,
                })
            }
            Message::Error { message } => break Err(RemoteError::Server(message)),
            m => break Err(protocol(format!("unexpected {} from the server", kind(&m)))),
        }
    };
    *policy = oracle.policy;
    out
}

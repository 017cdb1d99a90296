//! What the compute server's hostile tests (`crates/hearth-cli/tests/
//! hostile.rs`) and its soak (`hearth-bench soak`) share: `hearth server`
//! as a child process that can be killed ([`ServerProcess`]), what such a
//! process holds, read from `/proc` ([`footprint()`], [`Watch`]), the
//! hostile clients (connections that stall, uploads that trickle,
//! downloads that are never read: [`net`]) and the files they send, forged
//! or legitimate ([`payloads`]).
//!
//! Linux only: `/proc`, and sockets bound to other loopback addresses
//! (Linux routes all of 127/8 to the loopback interface, so an attacker on
//! 127.0.0.2 is another client address for the server's limits than a
//! tenant on 127.0.0.1).

pub mod footprint;
pub mod net;
pub mod payloads;
mod process;

pub use footprint::{cpu_time, footprint, Footprint, Peaks, Watch};
pub use process::ServerProcess;

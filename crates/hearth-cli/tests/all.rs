//! The command's tests, one module per file, in one test binary (one
//! link; `cargo test --release -p hearth-cli --test all deploy::` runs
//! one file's tests).

mod cli;
mod deploy;
mod docs;
#[cfg(target_os = "linux")]
mod fleet;
#[cfg(target_os = "linux")]
mod hostile;
mod public_key;
mod reference;
mod server;
#[cfg(target_os = "linux")]
mod tenant_attacks;

/// A loopback port free now, for a server that must keep its address
/// across restarts (or that is started with its port on the command line).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

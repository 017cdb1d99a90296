//! `hearth server` as a child process.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use hearth_client::Client;

/// A `hearth server` child process: killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// `http://ADDR` or `https://ADDR`, as its first line said.
    pub url: String,
    /// The address it listens on.
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Runs `hearth server --listen LISTEN --data DATA ARGS` with the
    /// `hearth` binary at `hearth`, its stderr appended to `log`, and
    /// waits for its first line (`listening on URL`). A server that ends
    /// first (a closed data folder, a bad option) is an error quoting the
    /// end of its log.
    pub fn start(
        hearth: &Path,
        listen: &str,
        data: &Path,
        log: &Path,
        args: &[&str],
    ) -> Result<ServerProcess, String> {
        let data = data.to_str().ok_or("the data folder's path is not UTF-8")?;
        let all = [&["--listen", listen, "--data", data][..], args].concat();
        Self::start_with(hearth, log, &all)
    }

    /// Runs `hearth server ARGS` (a fleet's server: `--store`, `--blobs`,
    /// no `--data`), as [`ServerProcess::start`] does.
    pub fn start_with(hearth: &Path, log: &Path, args: &[&str]) -> Result<ServerProcess, String> {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = Command::new(hearth)
            .arg("server")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("{}: {e}", hearth.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        let read = BufReader::new(stdout).read_line(&mut line);
        let url = match (read, line.trim().strip_prefix("listening on ")) {
            (Ok(_), Some(url)) => url.to_string(),
            _ => {
                let _ = child.kill();
                let status = child.wait();
                return Err(format!(
                    "hearth server did not start ({status:?}); its log ends:\n{}",
                    log_tail(log)
                ));
            }
        };
        let addr = url
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .parse()
            .map_err(|e| format!("{url}: {e}"))?;
        Ok(ServerProcess { child, url, addr })
    }

    /// Its process id (for `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A client without a token.
    pub fn client(&self) -> Client {
        Client::new(&self.url).expect("the server's URL is http(s)")
    }

    /// Pauses it (SIGSTOP) or lets it go on (SIGCONT), as a machine that
    /// stalls or a network partition would look to the others.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: a signal to the child this value owns (not reaped yet).
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, signal);
        }
    }

    /// Kills it with SIGKILL, as a crash would: no chance to clean up.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The last lines of a log (all of a short one).
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

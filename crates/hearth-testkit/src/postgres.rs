//! A throwaway PostgreSQL cluster for the fleet's tests and benchmarks:
//! `initdb` in a temporary folder, a server on a free loopback port
//! (fsync off: nothing in it outlives the test), stopped and removed on
//! drop. As root it runs as the `postgres` user, as Debian's packages
//! make it (PostgreSQL refuses to run as root).
//!
//! Where PostgreSQL's programs are missing, [`Postgres::start`] says so,
//! and the tests skip, saying so, unless `HEARTH_REQUIRE_POSTGRES` is set
//! (the test command sets it where it installed them).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A running throwaway cluster.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// The user the cluster runs as, when the tests run as root.
    user: Option<&'static str>,
}

/// The folder of `initdb` and `pg_ctl`: on the `PATH`, else the newest
/// of Debian's `/usr/lib/postgresql/*/bin`.
fn bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|d| d.join("initdb").is_file())
            .collect();
        versions.sort_by_key(|d| {
            d.parent()
                .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
                .unwrap_or(0)
        });
        versions.pop()
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54_321)
}

impl Postgres {
    /// Starts a cluster named for `name` (a folder in the temporary
    /// folder), or says why it cannot.
    pub fn start(name: &str) -> Result<Postgres, String> {
        Self::start_with(name, None)
    }

    /// [`Postgres::start`], serving TLS with the PEM certificate chain and
    /// key `tls` (clients may still connect without).
    pub fn start_tls(name: &str, cert: &str, key: &str) -> Result<Postgres, String> {
        Self::start_with(name, Some((cert, key)))
    }

    fn start_with(name: &str, tls: Option<(&str, &str)>) -> Result<Postgres, String> {
        let bin = bin_dir()
            .ok_or("PostgreSQL is not installed (no initdb; Debian: apt-get install postgresql)")?;
        let root = unsafe { libc::geteuid() } == 0;
        let user = root.then_some("postgres");
        let dir = std::env::temp_dir().join(format!("hearth-pg-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        if let Some(u) = user {
            let ok = Command::new("chown")
                .args([&format!("{u}:"), dir.to_str().unwrap_or_default()])
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !ok.success() {
                return Err(format!(
                    "chown {u} {} failed (is there a {u} user?)",
                    dir.display()
                ));
            }
        }
        let pg = Postgres {
            dir,
            bin,
            port: free_port(),
            user,
        };
        let data = pg.dir.join("data");
        pg.run(
            "initdb",
            &[
                "-D",
                path(&data),
                "-U",
                "hearth",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off \
             -c max_connections=200",
            pg.port,
            path(&pg.dir)
        );
        if let Some((cert, key)) = tls {
            let (cert_file, key_file) = (pg.dir.join("server.crt"), pg.dir.join("server.key"));
            std::fs::write(&cert_file, cert).map_err(|e| e.to_string())?;
            std::fs::write(&key_file, key).map_err(|e| e.to_string())?;
            // PostgreSQL reads a key only its owner can.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| e.to_string())?;
            if let Some(u) = pg.user {
                for f in [&cert_file, &key_file] {
                    Command::new("chown")
                        .args([&format!("{u}:"), path(f)])
                        .status()
                        .map_err(|e| e.to_string())?;
                }
            }
            options += &format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                path(&cert_file),
                path(&key_file)
            );
        }
        let log = pg.dir.join("log");
        pg.run(
            "pg_ctl",
            &[
                "-D",
                path(&data),
                "-l",
                path(&log),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        )?;
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", pg.port)).is_err() {
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!("PostgreSQL did not listen on port {}", pg.port));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(pg)
    }

    /// Starts a cluster, or `None` after saying why the test skips; under
    /// `HEARTH_REQUIRE_POSTGRES` a cluster that cannot start fails the
    /// test instead.
    pub fn start_or_skip(name: &str) -> Option<Postgres> {
        or_skip(Postgres::start(name))
    }

    /// [`Postgres::start_tls`], or `None` as [`Postgres::start_or_skip`].
    pub fn start_tls_or_skip(name: &str, cert: &str, key: &str) -> Option<Postgres> {
        or_skip(Postgres::start_tls(name, cert, key))
    }

    /// The URL of a database of the cluster (made if new).
    pub fn url(&self, db: &str) -> String {
        if db != "postgres" {
            let exists = self.psql(
                "postgres",
                &format!("SELECT 1 FROM pg_database WHERE datname = '{db}'"),
            );
            if exists.trim() != "1" {
                self.psql("postgres", &format!("CREATE DATABASE {db}"));
            }
        }
        format!("postgres://hearth@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs `sql` in database `db` with `psql` (the cluster's own, else
    /// the one on the `PATH`) and gives its rows, one a line, fields
    /// separated by `|`. Panics if it fails.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let port = self.port.to_string();
        let args = ["-h", "127.0.0.1", "-p", &port, "-U", "hearth", "-d", db];
        let args = [
            &args[..],
            &["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
        ]
        .concat();
        let own = self.bin.join("psql");
        let psql = if own.is_file() {
            own
        } else {
            PathBuf::from("psql")
        };
        let out = Command::new(psql).args(&args).output().expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// CPU seconds the cluster's processes have used so far (the
    /// postmaster and its children, from `/proc`; Linux only, else 0).
    pub fn cpu_seconds(&self) -> f64 {
        let pid = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
            .ok()
            .and_then(|s| s.lines().next()?.trim().parse::<u32>().ok());
        let Some(pid) = pid else {
            return 0.0;
        };
        // SAFETY: sysconf reads a constant of the system.
        let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let mut ticks = 0u64;
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // After the command's name (in parentheses): state, ppid, ...;
            // utime and stime are the 12th and 13th fields after it.
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            let me: Option<u32> = entry.file_name().to_str().and_then(|n| n.parse().ok());
            let parent: Option<u32> = f.get(1).and_then(|p| p.parse().ok());
            if me == Some(pid) || parent == Some(pid) {
                let t = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                ticks += t(11) + t(12);
            }
        }
        ticks as f64 / tick
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let exe = self.bin.join(program);
        let mut cmd = match self.user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let out = cmd
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{program} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }
}

/// `started`, or `None` after saying why the test skips (a failure under
/// `HEARTH_REQUIRE_POSTGRES`).
fn or_skip(started: Result<Postgres, String>) -> Option<Postgres> {
    match started {
        Ok(pg) => Some(pg),
        Err(why) if std::env::var_os("HEARTH_REQUIRE_POSTGRES").is_some() => {
            panic!("HEARTH_REQUIRE_POSTGRES is set and PostgreSQL cannot start: {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.run(
            "pg_ctl",
            &["-D", path(&data), "-m", "immediate", "-w", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

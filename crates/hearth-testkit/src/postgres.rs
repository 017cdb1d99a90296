//! A throwaway PostgreSQL cluster for the fleet's tests and benchmarks:
//! `initdb` in a temporary folder, a server on a free loopback port
//! (fsync off: nothing in it outlives the test), stopped and removed on
//! drop. As root it runs as the `postgres` user, as Debian's packages
//! make it (PostgreSQL refuses to run as root).
//!
//! For the fault drills: the cluster stops and starts again on its port
//! ([`Postgres::stop`], [`Postgres::start_again`]), logs the statements of
//! each client ([`Postgres::log_statements`], [`Postgres::statements`]),
//! and holds a transaction open from another session
//! ([`Postgres::session`]); a [`Proxy`] between a server and the cluster
//! cuts a connection right after the cluster committed a transaction,
//! before its answer reaches the server (a lost reply).
//!
//! Where PostgreSQL's programs are missing, [`Postgres::start`] says so,
//! and the tests skip, saying so, unless `HEARTH_REQUIRE_POSTGRES` is set
//! (the test command sets it where it installed them).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running throwaway cluster.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// The user the cluster runs as, when the tests run as root.
    user: Option<&'static str>,
    /// The server's options (`pg_ctl -o`), to start it again alike.
    options: String,
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
        let mut pg = Postgres {
            dir,
            bin,
            port: free_port(),
            user,
            options: String::new(),
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
        pg.options = options;
        // A port found free may be taken before the server binds it
        // (clusters of tests side by side): another port, twice more.
        let mut tries = 0;
        loop {
            match pg.launch() {
                Ok(()) => return Ok(pg),
                Err(e) if tries == 2 => {
                    let log = std::fs::read_to_string(pg.dir.join("log")).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(5).collect();
                    return Err(format!("{e}; its log ends: {:?}", tail));
                }
                Err(_) => {
                    tries += 1;
                    let old = format!("-p {} ", pg.port);
                    pg.port = free_port();
                    pg.options = pg.options.replacen(&old, &format!("-p {} ", pg.port), 1);
                }
            }
        }
    }

    /// Starts the server of the cluster made, and waits until it listens.
    fn launch(&self) -> Result<(), String> {
        let (data, log) = (self.dir.join("data"), self.dir.join("log"));
        self.run(
            "pg_ctl",
            &[
                "-D",
                path(&data),
                "-l",
                path(&log),
                "-o",
                &self.options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        )?;
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!("PostgreSQL did not listen on port {}", self.port));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Stops the server (`pg_ctl stop -m MODE`: `fast` ends every session
    /// and closes its connection; `immediate` kills the processes, as a
    /// crash does), keeping the cluster. Panics if it fails.
    pub fn stop(&self, mode: &str) {
        let data = self.dir.join("data");
        self.run("pg_ctl", &["-D", path(&data), "-m", mode, "-w", "stop"])
            .unwrap_or_else(|e| panic!("stopping PostgreSQL: {e}"));
    }

    /// Starts the server stopped by [`Postgres::stop`] again, on the same
    /// port. Panics if it fails.
    pub fn start_again(&self) {
        self.launch()
            .unwrap_or_else(|e| panic!("starting PostgreSQL again: {e}"));
    }

    /// The cluster's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Makes a superuser `user` who must give `password` (SCRAM) on the
    /// loopback address (every other user is trusted). Panics if it fails.
    pub fn require_password(&self, user: &str, password: &str) {
        self.psql(
            "postgres",
            &format!("CREATE ROLE {user} LOGIN SUPERUSER PASSWORD '{password}'"),
        );
        let hba = self.dir.join("data/pg_hba.conf");
        let rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
        std::fs::write(
            &hba,
            format!("host all {user} 127.0.0.1/32 scram-sha-256\n{rules}"),
        )
        .expect("pg_hba.conf written");
        self.psql("postgres", "SELECT pg_reload_conf()");
        // The reload is a signal: wait until the user is asked for it.
        let start = Instant::now();
        let port = self.port.to_string();
        while Command::new(self.psql_path())
            .args(["-h", "127.0.0.1", "-p", &port, "-U", user, "-d", "postgres"])
            .args(["-w", "-X", "-q", "-c", "SELECT 1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(start.elapsed() < Duration::from_secs(30), "pg_hba.conf");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Logs every statement from now on, each line prefixed with its
    /// client's `application_name` and database (for
    /// [`Postgres::statements`]). Sessions open now follow at their next
    /// statement.
    pub fn log_statements(&self) {
        for sql in [
            "ALTER SYSTEM SET log_statement = 'all'",
            "ALTER SYSTEM SET log_line_prefix = '%a|%d|'",
            "SELECT pg_reload_conf()",
        ] {
            self.psql("postgres", sql);
        }
        // The reload is a signal: wait until a new session sees it.
        let start = Instant::now();
        while self.psql("postgres", "SHOW log_statement").trim() != "all" {
            assert!(start.elapsed() < Duration::from_secs(30), "log_statement");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The statements logged so far (see [`Postgres::log_statements`]) on
    /// database `db` by clients other than `psql` whose text contains
    /// `what`.
    pub fn statements(&self, db: &str, what: &str) -> usize {
        let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
        let tail = format!("|{db}|");
        log.lines()
            .filter_map(|l| {
                let (app, rest) = l.split_once('|')?;
                (app != "psql" && !app.starts_with("session-"))
                    .then_some(())
                    .and(rest.strip_prefix(&tail[1..]))
            })
            .filter(|l| l.starts_with("LOG:  statement: ") || l.starts_with("LOG:  execute "))
            .filter(|l| l.contains(what))
            .count()
    }

    /// Runs `sql` with `psql` in database `db` in the background (a
    /// transaction that holds locks, say), until it ends or the session is
    /// ended (its server process terminated: a `psql` killed in the middle
    /// of a statement would leave it running).
    pub fn session(&self, db: &str, sql: &str) -> Session {
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let app = format!(
            "session-{}-{}",
            std::process::id(),
            SESSIONS.fetch_add(1, Ordering::Relaxed)
        );
        let port = self.port.to_string();
        let child = Command::new(self.psql_path())
            .args(["-h", "127.0.0.1", "-p", &port, "-U", "hearth", "-d", db])
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env("PGAPPNAME", &app)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("psql runs");
        Session {
            child,
            app,
            psql: self.psql_path(),
            port: self.port,
        }
    }

    /// The cluster's own `psql`, else the one on the `PATH`.
    fn psql_path(&self) -> PathBuf {
        let own = self.bin.join("psql");
        if own.is_file() {
            own
        } else {
            PathBuf::from("psql")
        }
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

    /// Runs `sql` in database `db` until it gives a non-empty first line,
    /// and gives that line; panics after `limit`, saying `what` was
    /// waited for.
    pub fn wait_row(&self, db: &str, sql: &str, what: &str, limit: Duration) -> String {
        let t = Instant::now();
        loop {
            let out = self.psql(db, sql);
            if let Some(line) = out.lines().next().filter(|l| !l.is_empty()) {
                return line.to_string();
            }
            assert!(t.elapsed() < limit, "{what}: not within {limit:?} ({sql})");
            std::thread::sleep(Duration::from_millis(20));
        }
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
        let out = Command::new(self.psql_path())
            .args(&args)
            .output()
            .expect("psql runs");
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

/// A `psql` session of [`Postgres::session`], ended when dropped.
pub struct Session {
    child: Child,
    /// Its `application_name`, which finds its server process.
    app: String,
    psql: PathBuf,
    port: u16,
}

impl Session {
    /// Ends the session: its transaction, if open, rolls back.
    pub fn end(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let sql = format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{}'",
            self.app
        );
        let _ = Command::new(&self.psql)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "hearth",
            ])
            .args(["-d", "postgres", "-X", "-q", "-c", &sql])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop();
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

/// A TCP proxy between the fleet's servers and a cluster that reads the
/// protocol's messages (plain connections only: a connection that turns
/// to TLS is passed through) and can lose the answer to a commit: armed
/// with [`Proxy::lose_commit_reply`], the next transaction that runs a
/// statement beginning with the words given has its connection cut right
/// after the cluster answered its `COMMIT`, the answer never delivered.
pub struct Proxy {
    port: u16,
    shared: Arc<ProxyShared>,
}

#[derive(Default)]
struct ProxyShared {
    /// The statement whose transaction's commit answer is to be lost.
    lose: Mutex<Option<String>>,
    /// Answers lost so far.
    lost: AtomicUsize,
    stopped: AtomicBool,
}

/// What the two directions of one connection share.
#[derive(Default)]
struct Link {
    /// Statements prepared on it, by name.
    prepared: Mutex<HashMap<String, String>>,
    /// The client asked for TLS (the server's first byte answers it).
    asked_tls: AtomicBool,
    /// Its open transaction ran the armed statement.
    armed: AtomicBool,
}

impl Proxy {
    /// A proxy on a free loopback port to the cluster on `port`.
    pub fn start(port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let me = listener.local_addr().expect("bound").port();
        let shared = Arc::new(ProxyShared::default());
        let s = shared.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.stopped.load(Ordering::Relaxed) {
                    return;
                }
                let (Ok(client), Ok(server)) = (client, TcpStream::connect(("127.0.0.1", port)))
                else {
                    continue;
                };
                let link = Arc::new(Link::default());
                let (c2, s2) = match (client.try_clone(), server.try_clone()) {
                    (Ok(c), Ok(s)) => (c, s),
                    _ => continue,
                };
                let (shared1, link1) = (s.clone(), link.clone());
                std::thread::spawn(move || {
                    let _ = upstream(client, server, &shared1, &link1);
                });
                let shared2 = s.clone();
                std::thread::spawn(move || {
                    let _ = downstream(s2, c2, &shared2, &link);
                });
            }
        });
        Proxy { port: me, shared }
    }

    /// The URL of database `db` through the proxy.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://hearth@127.0.0.1:{}/{db}", self.port)
    }

    /// Arms the proxy: the next transaction that runs a statement
    /// beginning with `statement` has the answer to its `COMMIT` lost.
    pub fn lose_commit_reply(&self, statement: &str) {
        *self.shared.lose.lock().unwrap_or_else(|e| e.into_inner()) = Some(statement.into());
    }

    /// How many commit answers were lost so far.
    pub fn lost(&self) -> usize {
        self.shared.lost.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A message's type (0 for the untyped ones of the start) and its body.
fn message(r: &mut impl Read, typed: bool) -> std::io::Result<(u8, Vec<u8>)> {
    let mut kind = [0u8];
    if typed {
        r.read_exact(&mut kind)?;
    }
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let n = u32::from_be_bytes(len).saturating_sub(4) as usize;
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    Ok((kind[0], body))
}

fn send(w: &mut impl Write, kind: u8, body: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(body.len() + 5);
    if kind != 0 {
        out.push(kind);
    }
    out.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    out.extend_from_slice(body);
    w.write_all(&out)
}

/// The NUL-terminated strings at the start of `body`.
fn strings(body: &[u8], n: usize) -> Vec<String> {
    body.split(|&b| b == 0)
        .take(n)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// Client to server: reads the statements prepared and bound, arming the
/// link when its transaction runs the armed statement.
fn upstream(
    mut client: TcpStream,
    mut server: TcpStream,
    shared: &ProxyShared,
    link: &Link,
) -> std::io::Result<()> {
    // The start: a TLS request (answered by one byte), then the startup
    // message.
    loop {
        let (_, body) = message(&mut client, false)?;
        let code = body
            .get(..4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
        // Said before the request goes on: the server's one-byte answer
        // must not be read as a message.
        if code == Some(80_877_103) {
            link.asked_tls.store(true, Ordering::SeqCst);
        }
        send(&mut server, 0, &body)?;
        match code {
            Some(80_877_103) => {}
            Some(196_608) => break,
            _ => return Ok(()),
        }
    }
    loop {
        let (kind, body) = message(&mut client, true)?;
        let statement = match kind {
            b'P' => {
                let s = strings(&body, 2);
                let (name, sql) = (s[0].clone(), s.get(1).cloned().unwrap_or_default());
                lock(&link.prepared).insert(name, sql);
                None
            }
            b'B' => {
                let s = strings(&body, 2);
                s.get(1)
                    .and_then(|name| lock(&link.prepared).get(name).cloned())
            }
            b'Q' => strings(&body, 1).pop(),
            _ => None,
        };
        if let Some(sql) = statement {
            let armed = lock(&shared.lose)
                .as_ref()
                .is_some_and(|w| sql.trim_start().starts_with(w.as_str()));
            if armed {
                link.armed.store(true, Ordering::SeqCst);
            }
        }
        send(&mut server, kind, &body)?;
    }
}

/// Server to client: cuts the connection instead of delivering the answer
/// to an armed transaction's `COMMIT`.
fn downstream(
    mut server: TcpStream,
    mut client: TcpStream,
    shared: &ProxyShared,
    link: &Link,
) -> std::io::Result<()> {
    // The server speaks only once the client spoke: by then the client's
    // side has seen whether it asked for TLS.
    server.peek(&mut [0u8])?;
    let mut first = true;
    loop {
        if first && link.asked_tls.load(Ordering::SeqCst) {
            let mut answer = [0u8];
            server.read_exact(&mut answer)?;
            client.write_all(&answer)?;
            if answer[0] == b'S' {
                // TLS from here on: passed through unread.
                return std::io::copy(&mut server, &mut client).map(|_| ());
            }
        }
        first = false;
        let (kind, body) = message(&mut server, true)?;
        if kind == b'C' {
            let tag = strings(&body, 1).pop().unwrap_or_default();
            if tag == "ROLLBACK" {
                link.armed.store(false, Ordering::SeqCst);
            }
            if tag == "COMMIT" && link.armed.swap(false, Ordering::SeqCst) {
                let mut lose = lock(&shared.lose);
                if lose.take().is_some() {
                    drop(lose);
                    shared.lost.fetch_add(1, Ordering::Relaxed);
                    let _ = server.shutdown(Shutdown::Both);
                    let _ = client.shutdown(Shutdown::Both);
                    return Ok(());
                }
            }
        }
        send(&mut client, kind, &body)?;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

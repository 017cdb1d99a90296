//! The server's connections: HTTP/1.1 on hyper, with limits of our own on
//! how many are open and how long they may stay silent.
//!
//! `axum::serve` runs hyper without a timer, so hyper's header timeout is
//! off: a connection that sends half a request line and waits is held for
//! ever, and nothing bounds how many are open. Sockets that cost a client
//! nothing would use up the process's file descriptors, and then the
//! server's own disk writes would fail. Here:
//!
//! * **Header timeout.** hyper's `header_read_timeout`, driven by
//!   [`TokioTimer`], starts whenever the connection waits for a request
//!   head. That is when it opens, and again after each response on a
//!   kept-alive connection: in hyper 1.x, `Conn::poll_read_head` arms the
//!   timer whenever it starts reading a head, and `State::idle` asks for
//!   that read as soon as a response is written. So the one timeout bounds
//!   a slow or silent head *and* is the keep-alive idle timeout. Bodies
//!   have their own limits (`--body-timeout`, `--min-upload-rate`:
//!   `server/body.rs`).
//! * **Caps.** At [`Limits::max`] connections the accept loop stops until
//!   one ends: new connections wait in the kernel's backlog and take no
//!   descriptor. A connection from a client that has
//!   [`Limits::per_client`] open is accepted and closed at once. Clients
//!   are counted by address, an IPv6 client by its /64 ([`client_of`]).
//! * **Unproven connections.** A connection is *unproven* until one of
//!   its requests is let through by the API's authentication (a valid
//!   token; on an open server, any request): until then it has cost its
//!   client nothing but a socket. Unproven connections hold at most half
//!   of [`Limits::max`] ([`Unproven`]), and at the cap, or when every
//!   place is taken, the accept loop makes room by dropping one: the
//!   oldest of the client holding the most. Addresses that hold half-sent
//!   heads on every place they may therefore cannot keep a client out: a
//!   newcomer is accepted, and its request, once proven, no longer
//!   competes with them; a single connection of its own address is never
//!   the one dropped while another address holds more.
//! * **Slow readers.** A connection whose answers wait for the client to
//!   read them must take them at [`Limits::min_send_rate`] or more, judged
//!   over windows of [`Limits::send_window`]: a client that reads a large
//!   result a byte at a time, or not at all, would otherwise hold its
//!   connection and its download slot for ever (hyper has no write
//!   timeout). The connection is then dropped ([`stalled`]).
//! * **TLS.** The handshake runs in the connection's own task, after the
//!   connection has its place under the caps, within
//!   [`Limits::handshake_timeout`].
//! * **Descriptors.** [`prepare`] makes sure at start that the process may
//!   open every connection and [`RESERVE`] more files, so connections
//!   never take the descriptors the data folder's writes need.
//! * **Stop.** When the shutdown future completes, the listener is closed,
//!   connections that have not sent a whole request yet (a TLS handshake,
//!   a first request head) are dropped, idle kept-alive ones are closed,
//!   and the requests in flight finish (hyper's graceful shutdown).
//!
//! Each request carries its peer's address as an extension
//! ([`ConnectInfo<SocketAddr>`]), for the limits per client address.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus::{IntCounterVec, IntGauge};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;
use tower_service::Service;

use crate::config::{Config, ServerError};
use crate::metrics::Metrics;

/// Descriptors kept for everything but connections: the data folder's
/// files (keys, jobs and results being written or read, the tenants
/// file), the listeners and the runtime's own.
pub(crate) const RESERVE: usize = 256;

/// Connections the metrics address takes at once (a scraper or two).
const METRICS_CONNECTIONS: usize = 8;

/// The connections not proven yet (see the module's doc), by id, with
/// their client, when they opened and how to drop them.
pub(crate) struct Unproven {
    cap: usize,
    table: Mutex<UnprovenTable>,
}

#[derive(Default)]
struct UnprovenTable {
    next: u64,
    conns: HashMap<u64, (IpAddr, tokio::time::Instant, Arc<tokio::sync::Notify>)>,
    by_client: HashMap<IpAddr, usize>,
}

impl UnprovenTable {
    fn remove(&mut self, id: u64) -> bool {
        let Some((client, _, _)) = self.conns.remove(&id) else {
            return false;
        };
        if let Some(n) = self.by_client.get_mut(&client) {
            *n -= 1;
            if *n == 0 {
                self.by_client.remove(&client);
            }
        }
        true
    }
}

/// A connection's entry among the [`Unproven`]: proving it takes it out;
/// it goes when the connection ends.
#[derive(Clone)]
pub(crate) struct Proof {
    unproven: Arc<Unproven>,
    id: u64,
}

impl Proof {
    /// The connection's request was let through: it may no longer be
    /// dropped to make room.
    pub(crate) fn prove(&self) {
        self.unproven.table().remove(self.id);
    }
}

impl Unproven {
    fn new(cap: usize) -> Arc<Unproven> {
        Arc::new(Unproven {
            cap: cap.max(1),
            table: Mutex::default(),
        })
    }

    fn table(&self) -> MutexGuard<'_, UnprovenTable> {
        // Only counts and entries: right whatever panicked.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a new connection of `client` as unproven, dropping another
    /// beyond the cap: its proof, and what tells it to end.
    fn enter(self: &Arc<Self>, client: IpAddr) -> (Proof, Arc<tokio::sync::Notify>) {
        let evict = Arc::new(tokio::sync::Notify::new());
        let mut t = self.table();
        let id = t.next;
        t.next += 1;
        t.conns
            .insert(id, (client, tokio::time::Instant::now(), evict.clone()));
        *t.by_client.entry(client).or_default() += 1;
        let over = t.conns.len() > self.cap;
        drop(t);
        if over {
            self.evict_one();
        }
        let proof = Proof {
            unproven: self.clone(),
            id,
        };
        (proof, evict)
    }

    /// Drops the oldest unproven connection of the clients holding the
    /// most; false if none is unproven.
    fn evict_one(&self) -> bool {
        let mut t = self.table();
        let most = t.by_client.values().copied().max().unwrap_or(0);
        let oldest = t
            .conns
            .iter()
            .filter(|(_, c)| t.by_client.get(&c.0) == Some(&most))
            .min_by_key(|(id, c)| (c.1, **id))
            .map(|(&id, c)| (id, c.2.clone()));
        let Some((id, evict)) = oldest else {
            return false;
        };
        t.remove(id);
        drop(t);
        // A permit is stored: the connection ends even if it was not
        // waiting yet.
        evict.notify_one();
        true
    }
}

/// Ends a connection's entry among the unproven with the connection.
struct Entered(Proof);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0.prove();
    }
}

/// What one listener allows its connections.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Most connections open at once.
    pub(crate) max: usize,
    /// Most connections open at once from one client ([`client_of`]).
    pub(crate) per_client: usize,
    /// Longest wait for a request head, also between requests.
    pub(crate) header_timeout: Duration,
    /// Longest TLS handshake.
    pub(crate) handshake_timeout: Duration,
    /// Slowest a client may read answers that wait for it, bytes per
    /// second (0: any speed).
    pub(crate) min_send_rate: u64,
    /// The window that rate is judged over.
    pub(crate) send_window: Duration,
}

impl Limits {
    /// The API's: `--max-connections`, `--max-connections-per-ip`,
    /// `--header-timeout`, `--handshake-timeout`.
    pub(crate) fn api(config: &Config) -> Limits {
        Limits {
            max: config.max_connections,
            per_client: config.max_connections_per_ip,
            header_timeout: config.header_timeout,
            handshake_timeout: config.handshake_timeout,
            min_send_rate: config.min_upload_rate,
            send_window: config.upload_grace.max(Duration::from_millis(100)),
        }
    }

    /// The metrics address's: a few connections, the API's timeouts.
    pub(crate) fn metrics(config: &Config) -> Limits {
        Limits {
            max: METRICS_CONNECTIONS,
            per_client: METRICS_CONNECTIONS,
            ..Limits::api(config)
        }
    }
}

/// Checks the connection settings and makes sure the process may open
/// every connection of the API and the metrics address, and [`RESERVE`]
/// more files: the descriptor limit is raised if it can be, else the
/// server does not start.
pub(crate) fn prepare(config: &Config) -> Result<(), ServerError> {
    let positive = [
        (config.max_connections > 0, "--max-connections"),
        (
            config.max_connections_per_ip > 0,
            "--max-connections-per-ip",
        ),
        (!config.header_timeout.is_zero(), "--header-timeout"),
        (!config.handshake_timeout.is_zero(), "--handshake-timeout"),
    ];
    if let Some((_, name)) = positive.iter().find(|(ok, _)| !ok) {
        return Err(ServerError::Config(format!("{name} must be positive")));
    }
    let metrics = match config.metrics_listen {
        Some(_) => Limits::metrics(config).max,
        None => 0,
    };
    reserve_descriptors(config.max_connections, metrics).map_err(ServerError::Config)
}

/// Raises the soft `RLIMIT_NOFILE` (toward the hard one) to fit `api` and
/// `metrics` connections and [`RESERVE`] files, or says why it cannot.
#[cfg(unix)]
fn reserve_descriptors(api: usize, metrics: usize) -> Result<(), String> {
    let needed = api.saturating_add(metrics).saturating_add(RESERVE) as libc::rlim_t;
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) } != 0 {
        return Err(format!(
            "the descriptor limit cannot be read: {}",
            std::io::Error::last_os_error()
        ));
    }
    let fits = |limit: libc::rlim_t| limit == libc::RLIM_INFINITY || limit >= needed;
    if fits(now.rlim_cur) {
        return Ok(());
    }
    let raised = libc::rlimit {
        rlim_cur: needed,
        rlim_max: now.rlim_max,
    };
    // SAFETY: setrlimit only reads the struct it is given.
    if fits(now.rlim_max) && unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        return Ok(());
    }
    let metrics = match metrics {
        0 => String::new(),
        n => format!(", {n} for the metrics address"),
    };
    Err(format!(
        "--max-connections {api} needs {needed} file descriptors ({api} connections{metrics} \
         and {RESERVE} for the data folder's files), but this process may open only {} (hard \
         limit {}): raise the limit (`ulimit -n {needed}`, LimitNOFILE= in a systemd unit) or \
         lower --max-connections",
        now.rlim_cur, now.rlim_max
    ))
}

/// Elsewhere the descriptor limit is not ours to set.
#[cfg(not(unix))]
fn reserve_descriptors(_api: usize, _metrics: usize) -> Result<(), String> {
    Ok(())
}

/// The address a client is counted by: an IPv4 address as itself (also
/// when mapped into IPv6); an IPv6 address by its /64, the block that one
/// host, or one customer, is usually given whole.
pub(crate) fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// Where a listener's connections are counted (see [`crate::metrics`]).
#[derive(Clone)]
pub(crate) struct Counters {
    listener: &'static str,
    open: IntGauge,
    refused: IntCounterVec,
}

impl Counters {
    /// The counters of the listener named `listener` (`api`, `metrics`).
    pub(crate) fn new(metrics: &Metrics, listener: &'static str) -> Counters {
        Counters {
            listener,
            open: metrics.connections.with_label_values(&[listener]),
            refused: metrics.connections_refused.clone(),
        }
    }

    fn refuse(&self, reason: &str) {
        self.refused
            .with_label_values(&[self.listener, reason])
            .inc();
    }
}

/// Connections open by client, at most `cap` each.
struct Clients {
    cap: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Clients {
    fn table(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        // The counts stay right whatever panicked while holding the lock
        // (nothing does: it only adds and subtracts).
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a connection of `client`, unless it has `cap` open.
    fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Counted> {
        let mut open = self.table();
        let n = open.entry(client).or_default();
        if *n >= self.cap {
            return None;
        }
        *n += 1;
        Some(Counted {
            clients: self.clone(),
            client,
        })
    }
}

/// One connection counted against its client, until dropped.
struct Counted {
    clients: Arc<Clients>,
    client: IpAddr,
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = self.clients.table();
        if let Some(n) = open.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// A connection's place: its permit under [`Limits::max`], its count
/// against its client and in the open gauge, all given back when the
/// connection's task ends.
struct Place {
    _permit: OwnedSemaphorePermit,
    _counted: Counted,
    open: IntGauge,
}

impl Place {
    fn new(permit: OwnedSemaphorePermit, counted: Counted, open: IntGauge) -> Place {
        open.inc();
        Place {
            _permit: permit,
            _counted: counted,
            open,
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.dec();
    }
}

/// What every connection of a listener shares.
struct Each {
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: Limits,
    counters: Counters,
    unproven: Arc<Unproven>,
}

/// Resolves once the listener stops (or cannot say so any more).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Serves `router` on `listener`, over TLS with `tls`, within `limits`,
/// until `shutdown` completes; then closes the listener, ends the
/// connections as the module's doc says, and returns once every one has
/// ended.
pub(crate) async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: Limits,
    counters: Counters,
    shutdown: impl Future<Output = ()>,
) {
    let max = u32::try_from(limits.max.max(1)).unwrap_or(u32::MAX);
    let places = Arc::new(Semaphore::new(max as usize));
    let clients = Arc::new(Clients {
        cap: limits.per_client.max(1),
        open: Mutex::default(),
    });
    let (stop, stopping) = watch::channel(false);
    let unproven = Unproven::new(limits.max / 2);
    let each = Arc::new(Each {
        tls,
        router,
        limits,
        counters,
        unproven,
    });
    tokio::pin!(shutdown);
    loop {
        // A free place, or one an unproven connection is told to give up
        // (it does at once: its task ends).
        let permit = match places.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                each.unproven.evict_one();
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    p = places.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                }
            }
        };
        let (tcp, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(_) => {
                    // Out of descriptors, usually, or a connection reset
                    // before it was accepted: wait a little, not spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(counted) = clients.admit(client_of(peer.ip())) else {
            each.counters.refuse("per_ip");
            continue;
        };
        let place = Place::new(permit, counted, each.counters.open.clone());
        tokio::spawn(connection(tcp, peer, each.clone(), stopping.clone(), place));
    }
    drop(listener);
    let _ = stop.send(true);
    // Every place given back: every connection has ended.
    let _ = places.acquire_many(max).await;
}

/// One connection, unproven until a request of its passes the API's
/// authentication: dropped if the accept loop needs its place meanwhile.
async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    each: Arc<Each>,
    stopping: watch::Receiver<bool>,
    place: Place,
) {
    let (proof, evict) = each.unproven.enter(client_of(peer.ip()));
    let entered = Entered(proof.clone());
    tokio::select! {
        () = established(tcp, peer, &each, stopping, place, proof) => {}
        () = evict.notified() => each.counters.refuse("evicted"),
    }
    drop(entered);
}

/// One connection, from its TLS handshake (if any) to its end.
async fn established(
    tcp: TcpStream,
    peer: SocketAddr,
    each: &Each,
    mut stopping: watch::Receiver<bool>,
    _place: Place,
    proof: Proof,
) {
    let Some(acceptor) = &each.tls else {
        return http(tcp, peer, each, stopping, proof).await;
    };
    let handshake = tokio::time::timeout(each.limits.handshake_timeout, acceptor.accept(tcp));
    let done = tokio::select! {
        done = handshake => done,
        () = stopped(&mut stopping) => return,
    };
    match done {
        Ok(Ok(tls)) => http(tls, peer, each, stopping, proof).await,
        Ok(Err(_)) => each.counters.refuse("handshake_failed"),
        Err(_) => each.counters.refuse("handshake_timeout"),
    }
}

/// HTTP/1.1 on `io` until the client, the header timeout or a stalled
/// answer ends it, or the listener stops.
async fn http<I>(
    io: I,
    peer: SocketAddr,
    each: &Each,
    mut stopping: watch::Receiver<bool>,
    proof: Proof,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let sending = Arc::new(Sending::default());
    let io = TokioIo::new(Watched {
        io,
        sending: sending.clone(),
    });
    let stall = stalled(&sending, each.limits.send_window, each.limits.min_send_rate);
    tokio::pin!(stall);
    // Whether a whole request head arrived: a connection without one has
    // no request to finish when the listener stops.
    let served = Arc::new(AtomicBool::new(false));
    let (seen, router) = (served.clone(), each.router.clone());
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        seen.store(true, Ordering::Relaxed);
        req.extensions_mut().insert(ConnectInfo(peer));
        req.extensions_mut().insert(proof.clone());
        router.clone().call(req.map(Body::new))
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(each.limits.header_timeout);
    let began = tokio::time::Instant::now();
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let ended = tokio::select! {
        ended = conn.as_mut() => ended,
        () = &mut stall => return each.counters.refuse("send_stalled"),
        () = stopped(&mut stopping) => {
            if !served.load(Ordering::Relaxed) {
                return;
            }
            // Closes it now if idle, else after the request in flight.
            conn.as_mut().graceful_shutdown();
            tokio::select! {
                ended = conn => ended,
                () = stall => return each.counters.refuse("send_stalled"),
            }
        }
    };
    // hyper ends a connection whose head timed out with an error if some
    // of the head had come, and quietly if none had.
    let timed_out = match ended {
        Err(e) => e.is_timeout(),
        Ok(()) => began.elapsed() >= each.limits.header_timeout,
    };
    if timed_out && !served.load(Ordering::Relaxed) {
        each.counters.refuse("header_timeout");
    }
}

/// How a connection's writes are going, for [`stalled`].
#[derive(Default)]
struct Sending {
    /// Bytes the client took.
    written: AtomicU64,
    /// The last write waits for the client to read.
    waiting: AtomicBool,
    /// A write waited since the last look.
    waited: AtomicBool,
}

impl Sending {
    fn note<T>(&self, polled: &Poll<std::io::Result<T>>, n: impl FnOnce(&T) -> usize) {
        match polled {
            Poll::Ready(Ok(v)) => {
                self.written.fetch_add(n(v) as u64, Ordering::Relaxed);
                self.waiting.store(false, Ordering::Relaxed);
            }
            Poll::Pending => {
                self.waiting.store(true, Ordering::Relaxed);
                self.waited.store(true, Ordering::Relaxed);
            }
            Poll::Ready(Err(_)) => {}
        }
    }
}

/// Resolves when, over a window of `window`, writes waited for the client
/// and it took fewer than `rate` bytes a second; never if `rate` is 0.
/// A connection with nothing to send never waits, whatever its idle time
/// (that is the header timeout's business).
async fn stalled(sending: &Sending, window: Duration, rate: u64) {
    if rate == 0 {
        return std::future::pending().await;
    }
    let least = (rate as f64 * window.as_secs_f64()) as u64;
    let mut before = sending.written.load(Ordering::Relaxed);
    loop {
        tokio::time::sleep(window).await;
        let now = sending.written.load(Ordering::Relaxed);
        let waited = sending.waited.swap(false, Ordering::Relaxed)
            || sending.waiting.load(Ordering::Relaxed);
        if waited && now.saturating_sub(before) < least {
            return;
        }
        before = now;
    }
}

/// A connection's stream, its writes noted in [`Sending`].
struct Watched<I> {
    io: I,
    sending: Arc<Sending>,
}

impl<I: AsyncRead + Unpin> AsyncRead for Watched<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Watched<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.sending.note(&polled, |n| *n);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.sending.note(&polled, |n| *n);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_counted_by_address_and_ipv6_by_its_64() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(client_of(ip("192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(client_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(
            client_of(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")),
            ip("2001:db8:1:2::")
        );
        assert_eq!(client_of(ip("::1")), ip("::"));
    }

    #[test]
    fn more_connections_than_descriptors_refuse_to_start() {
        let mut config = Config::new("unused");
        config.max_connections = 16;
        prepare(&config).unwrap();
        config.max_connections = 1 << 40;
        let e = prepare(&config).unwrap_err().to_string();
        assert!(e.contains("--max-connections 1099511627776"), "{e}");
        config.max_connections = 0;
        assert!(prepare(&config).is_err());
    }

    /// Beyond the cap, the oldest unproven connection of the client
    /// holding the most is told to end; a proven one never is, and a
    /// client with a single connection keeps it while another holds more.
    #[tokio::test]
    async fn the_client_holding_the_most_unproven_loses_its_oldest() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let (attacker, tenant) = (ip("192.0.2.1"), ip("192.0.2.9"));
        let u = Unproven::new(3);
        let told = |n: &Arc<tokio::sync::Notify>| {
            futures_util::FutureExt::now_or_never(n.notified()).is_some()
        };
        let (_, first) = u.enter(attacker);
        let (mine, own) = u.enter(tenant);
        let (_, second) = u.enter(attacker);
        assert!(!told(&first) && !told(&own) && !told(&second));
        // A fourth: the attacker's oldest goes.
        let (_, third) = u.enter(attacker);
        assert!(told(&first) && !told(&own) && !told(&second) && !told(&third));
        // The tenant's connection proves itself: not counted, never told.
        mine.prove();
        assert_eq!(u.table().conns.len(), 2);
        let (_, fourth) = u.enter(attacker);
        let (_, fifth) = u.enter(attacker);
        assert!(told(&second) && !told(&own));
        assert!(!told(&fourth) && !told(&fifth) && !told(&third));
        // Clients holding as many: the oldest of theirs goes, not the
        // newcomer.
        let v = Unproven::new(2);
        let (_, a) = v.enter(ip("192.0.2.1"));
        let (_, b) = v.enter(ip("192.0.2.2"));
        let (_, c) = v.enter(ip("192.0.2.3"));
        assert!(told(&a) && !told(&b) && !told(&c));
        assert!(
            v.evict_one() && v.evict_one() && !v.evict_one(),
            "two left, then none"
        );
    }

    #[test]
    fn a_client_at_its_cap_is_refused_until_one_ends() {
        let clients = Arc::new(Clients {
            cap: 2,
            open: Mutex::default(),
        });
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let first = clients.admit(a).unwrap();
        let _second = clients.admit(a).unwrap();
        assert!(clients.admit(a).is_none());
        let _other = clients.admit(b).unwrap();
        drop(first);
        assert!(clients.admit(a).is_some());
        drop(_second);
        drop(_other);
        assert!(clients.table().is_empty(), "no entry left behind");
    }
}

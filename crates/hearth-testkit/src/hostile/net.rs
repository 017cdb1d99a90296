//! Hostile clients on raw sockets: connections that send a little and
//! then nothing ([`Stalled`]), uploads that trickle ([`trickle`]),
//! downloads that are never read ([`slow_downloads`]); and the reading of
//! HTTP answers they need.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the clients that poll their sockets look at them.
const POLL: Duration = Duration::from_millis(20);

/// A TCP connection to `server` (IPv4) from the loopback address `source`
/// (another client address for the server's limits, see the module doc
/// of [`super`]), its receive buffer set to `rcvbuf` bytes if given (so
/// that a reader that does not read stops the sender soon).
pub fn connect_from(
    source: Ipv4Addr,
    server: SocketAddr,
    rcvbuf: Option<u32>,
) -> std::io::Result<TcpStream> {
    let SocketAddr::V4(server) = server else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an IPv4 server address is needed",
        ));
    };
    let sockaddr = |a: SocketAddrV4| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let check = |r: libc::c_int| {
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r)
        }
    };
    // SAFETY: `socket` has no preconditions; the descriptor it returns is
    // new, and the stream owns it from here on (it closes it on every
    // error below).
    let stream = unsafe {
        let fd = check(libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
        ))?;
        TcpStream::from_raw_fd(fd)
    };
    let fd = stream.as_raw_fd();
    if let Some(bytes) = rcvbuf {
        let v = bytes as libc::c_int;
        // SAFETY: setsockopt reads the int it is pointed to, of the size given.
        check(unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })?;
    }
    let (local, remote) = (sockaddr(SocketAddrV4::new(source, 0)), sockaddr(server));
    // SAFETY: bind and connect read the address they are pointed to, of
    // the length given.
    unsafe {
        check(libc::bind(
            fd,
            (&local as *const libc::sockaddr_in).cast(),
            len,
        ))?;
        check(libc::connect(
            fd,
            (&remote as *const libc::sockaddr_in).cast(),
            len,
        ))?;
    }
    Ok(stream)
}

/// The status of an HTTP answer whose head is whole in `buf`, its
/// `Content-Length` (0 if none) and where its body starts.
pub fn head(buf: &[u8]) -> Option<(u16, usize, usize)> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let text = String::from_utf8_lossy(&buf[..end]);
    let status = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let length = text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    Some((status, length, end))
}

/// A whole answer in `buf`: its status and, for a refusal, the `code` of
/// its JSON body.
pub fn answer(buf: &[u8]) -> Option<(u16, Option<String>)> {
    let (status, length, start) = head(buf)?;
    let body = buf.get(start..start + length)?;
    let code = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("code")?.as_str().map(String::from));
    Some((status, code))
}

/// Sends `request` on a new connection to `server` and reads its whole
/// answer (the request should say `Connection: close`).
pub fn raw(server: SocketAddr, request: &[u8]) -> std::io::Result<(u16, Option<String>)> {
    let mut s = TcpStream::connect(server)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.write_all(request)?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    answer(&buf).ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into())
}

/// What the connections of a [`Stalled`] met.
#[derive(Clone, Debug, Default)]
pub struct Stalls {
    /// Connections opened.
    pub opened: usize,
    /// How long each connection the server ended had been open.
    pub lifetimes: Vec<Duration>,
    /// Connections that could not be opened.
    pub failed: usize,
}

impl Stalls {
    /// The longest a connection was open before the server ended it.
    pub fn longest(&self) -> Duration {
        self.lifetimes.iter().max().copied().unwrap_or_default()
    }

    /// The connections the server held longer than `d` (the others it
    /// closed as soon as it accepted them: over the cap).
    pub fn held_over(&self, d: Duration) -> usize {
        self.lifetimes.iter().filter(|l| **l > d).count()
    }
}

/// `n` connections from `source` that each send `greeting` (half a
/// request line, headers without their end, a TLS record header that
/// promises more) and then nothing, kept open: one the server ends is
/// opened again 250 ms later (not at once: those closed at once would
/// spin), until [`Stalled::stop`].
pub struct Stalled {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Stalls>,
}

/// One of the stalled connections.
enum Slot {
    Open(TcpStream, Instant),
    Closed(Instant),
}

impl Stalled {
    /// Opens the connections and keeps them open, on a thread of its own.
    pub fn start(server: SocketAddr, source: Ipv4Addr, n: usize, greeting: Vec<u8>) -> Stalled {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut seen = Stalls::default();
            let open = |seen: &mut Stalls| {
                let s = connect_from(source, server, None).and_then(|mut s| {
                    // Refused already, maybe: its end is seen below.
                    let _ = s.write_all(&greeting);
                    s.set_nonblocking(true)?;
                    Ok(s)
                });
                match s {
                    Ok(s) => {
                        seen.opened += 1;
                        Slot::Open(s, Instant::now())
                    }
                    Err(_) => {
                        seen.failed += 1;
                        Slot::Closed(Instant::now())
                    }
                }
            };
            let mut slots: Vec<Slot> = (0..n).map(|_| open(&mut seen)).collect();
            let mut buf = [0u8; 512];
            while !stopped.load(Ordering::Relaxed) {
                for slot in &mut slots {
                    let ended = match slot {
                        Slot::Open(s, since) => match s.read(&mut buf) {
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
                            // An answer (a 408, say): read on to the end.
                            Ok(n) if n > 0 => None,
                            _ => Some(since.elapsed()),
                        },
                        Slot::Closed(at) if at.elapsed() >= Duration::from_millis(250) => {
                            *slot = open(&mut seen);
                            None
                        }
                        Slot::Closed(_) => None,
                    };
                    if let Some(lived) = ended {
                        seen.lifetimes.push(lived);
                        *slot = Slot::Closed(Instant::now());
                    }
                }
                std::thread::sleep(POLL);
            }
            seen
        });
        Stalled { stop, thread }
    }

    /// Closes the connections: what they met.
    pub fn stop(self) -> Stalls {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .expect("the stalled clients do not panic")
    }
}

/// One upload to `path` from `source` of a body of 1 000 bytes announced
/// and sent one byte a second, with `token` if given: the answer's status
/// and code, and when it came (none within `limit`: `None`).
pub fn trickle(
    server: SocketAddr,
    source: Ipv4Addr,
    path: &str,
    token: Option<&str>,
    limit: Duration,
) -> std::io::Result<Option<(u16, Option<String>, Duration)>> {
    let t = Instant::now();
    let mut s = connect_from(source, server, None)?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/octet-stream\r\n\
         Content-Length: 1000\r\n\r\n"
    )?;
    s.set_read_timeout(Some(Duration::from_secs(1)))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while t.elapsed() < limit {
        // Read first: an answer followed by the server's close must not
        // be lost to a reset that a late byte would cause.
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
        if let Some((status, code)) = answer(&buf) {
            return Ok(Some((status, code, t.elapsed())));
        }
        // Refused already, maybe: the answer is read above.
        let _ = s.write_all(b"x");
    }
    Ok(answer(&buf).map(|(status, code)| (status, code, t.elapsed())))
}

/// How one of [`slow_downloads`] ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Download {
    /// The answer's status (0: none came).
    pub status: u16,
    /// A refusal's code.
    pub code: Option<String>,
    /// Sent (status 200), and dropped by the server before the whole
    /// result was taken: a reader too slow.
    pub dropped: bool,
}

/// `n` downloads of `path` from `source`, with `token` if given, that
/// read their answer's head and then nothing for `hold` (a small receive
/// buffer: the server cannot push a large result into it); then the
/// downloads the server sent are read to their end, to tell those it
/// dropped meanwhile from those it kept.
pub fn slow_downloads(
    server: SocketAddr,
    source: Ipv4Addr,
    path: &str,
    token: Option<&str>,
    n: usize,
    hold: Duration,
) -> Vec<Download> {
    let t = Instant::now();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n");
    let mut conns: Vec<Option<TcpStream>> = (0..n)
        .map(|_| {
            let mut s = connect_from(source, server, Some(4096)).ok()?;
            s.write_all(request.as_bytes()).ok()?;
            s.set_nonblocking(true).ok()?;
            Some(s)
        })
        .collect();
    let mut bufs = vec![Vec::new(); n];
    let mut seen = vec![Download::default(); n];
    let mut chunk = [0u8; 4096];
    while t.elapsed() < hold {
        for ((conn, buf), seen) in conns.iter_mut().zip(&mut bufs).zip(&mut seen) {
            // A download answered (its head, or a whole refusal) is left
            // alone: not read, not closed.
            let Some(s) = conn.as_mut().filter(|_| seen.status == 0) else {
                continue;
            };
            match s.read(&mut chunk) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => *conn = None,
            }
            (seen.status, seen.code) = match head(buf) {
                Some((200, _, _)) => (200, None),
                Some(_) => answer(buf).unwrap_or_default(),
                None => (0, None),
            };
        }
        std::thread::sleep(POLL);
    }
    for ((conn, buf), seen) in conns.iter_mut().zip(&bufs).zip(&mut seen) {
        if let (Some(s), Some((200, length, start))) = (conn, head(buf)) {
            seen.dropped = cut_short(s, buf.len() - start, length);
        }
    }
    seen
}

/// Whether a body of `length` bytes, `got` of them read, ends before it
/// is whole when `s` is read on: the sender dropped the connection. A
/// connection still open and idle for half a second is not.
fn cut_short(s: &mut TcpStream, mut got: usize, length: usize) -> bool {
    let mut chunk = vec![0u8; 1 << 16];
    let mut idle = Instant::now();
    while got < length {
        match s.read(&mut chunk) {
            Ok(0) => return true,
            Ok(n) => {
                got += n;
                idle = Instant::now();
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if idle.elapsed() > Duration::from_millis(500) {
                    return false;
                }
                std::thread::sleep(POLL);
            }
            Err(_) => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_they_come() {
        let body = br#"{"code":"queue_full"}"#;
        let whole = [
            format!(
                "HTTP/1.1 503 Service Unavailable\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
            body,
        ]
        .concat();
        assert_eq!(head(&whole[..20]), None);
        let (status, length, start) = head(&whole).unwrap();
        assert_eq!((status, start + length), (503, whole.len()));
        assert_eq!(answer(&whole[..whole.len() - 1]), None, "not whole yet");
        assert_eq!(answer(&whole), Some((503, Some("queue_full".into()))));
        assert_eq!(answer(b"HTTP/1.1 200 OK\r\n\r\n"), Some((200, None)));
    }

    #[test]
    fn connections_come_from_the_address_asked_for() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let _c = connect_from(Ipv4Addr::new(127, 0, 0, 2), addr, Some(4096)).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), Ipv4Addr::new(127, 0, 0, 2));
    }
}

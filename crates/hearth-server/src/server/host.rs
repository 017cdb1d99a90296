//! The `Host` check of an open server (no tenants, so no tokens).
//!
//! A web page the server's user visits can make the browser send requests
//! to the server on the user's machine. Uploads need a type a page cannot
//! send without asking (`body.rs`), but through *DNS rebinding* a page can
//! also read: its own name, resolved again, points at 127.0.0.1, and the
//! browser then treats the server as the page's own site. Such requests
//! carry the page's name in `Host`. So an open server answers only
//! requests addressed to an IP address or to `localhost`, names no DNS
//! answer can move. A request without `Host` passes: browsers always send
//! one. A server with tenants is not checked: a page has no token. The
//! metrics address, which has no tokens at all, is always checked.

use std::net::{Ipv4Addr, Ipv6Addr};

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::routes::{Refused, Shr};
use crate::wire::{ApiError, ErrorCode};

/// Refuses (`misdirected`) a request to an open server whose `Host` is
/// neither an IP address nor `localhost`.
pub(super) async fn check_host(State(s): Shr, req: Request, next: Next) -> Response {
    // A tenants file that cannot be read is refused by `authenticate`.
    let open = s.tenants().is_ok_and(|t| t.is_open());
    match foreign(&req).filter(|_| open) {
        Some(host) => misdirected(
            &host,
            "this server has no tenants (`hearth server token add` makes one), so it",
        ),
        None => next.run(req).await,
    }
}

/// The same check on the metrics address, always: it has no tokens at
/// all, and its metrics name tenants.
pub(super) async fn check_metrics_host(req: Request, next: Next) -> Response {
    match foreign(&req) {
        Some(host) => misdirected(&host, "the metrics address has no tokens, so it"),
        None => next.run(req).await,
    }
}

/// The first `Host` of `req` that is not local ([`is_local`]).
fn foreign(req: &Request) -> Option<String> {
    req.headers()
        .get_all(header::HOST)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .find(|host| !is_local(host))
}

/// The refusal of a request addressed to `host`; `who` says why.
fn misdirected(host: &str, who: &str) -> Response {
    Refused(ApiError::new(
        ErrorCode::Misdirected,
        format!(
            "{who} answers only requests addressed to an IP address or localhost, not to {:?}: \
             a web page could reach it under that name (DNS rebinding)",
            host.chars().take(64).collect::<String>()
        ),
    ))
    .into_response()
}

/// Whether a `Host` value (a name or an address, maybe with a port) is an
/// IPv4 address, a bracketed IPv6 address, or `localhost` (any case, a
/// trailing dot or none).
fn is_local(host: &str) -> bool {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split_once(']').is_some_and(|(v6, after)| {
            v6.parse::<Ipv6Addr>().is_ok()
                && (after.is_empty() || after.strip_prefix(':').is_some_and(is_port))
        });
    }
    let name = match host.split_once(':') {
        Some((name, port)) if is_port(port) => name,
        Some(_) => return false,
        None => host,
    };
    let bare = name.strip_suffix('.').unwrap_or(name);
    name.parse::<Ipv4Addr>().is_ok() || bare.eq_ignore_ascii_case("localhost")
}

/// A port as `Host` may give it: up to 5 digits (none: the default).
fn is_port(p: &str) -> bool {
    p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::is_local;

    #[test]
    fn only_addresses_and_localhost_are_local() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "10.1.2.3:1",
            "localhost",
            "localhost:8080",
            "LocalHost.:8080",
            "localhost.",
            "[::1]",
            "[::1]:8080",
            "[2001:db8::7]:443",
            "localhost:",
        ] {
            assert!(is_local(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "evil.localhost",
            "127.0.0.1.nip.io",
            "127.0.0.1:80:80",
            "::1",
            "[::1",
            "[::1]x",
            "[evil.example]:80",
            "localhost:99999x",
            "localhost..",
            "",
            "127.1",
        ] {
            assert!(!is_local(bad), "{bad}");
        }
    }
}

//! Cross-origin requests (CORS) from the web pages the operator names
//! (`--allow-origin`), so that a page on another site can use the API with
//! its user's token: the browser client (`crates/hearth-wasm`, `web/`).
//!
//! Off by default, and then browsers let no other site's page read an
//! answer or upload a key or job (`body.rs`: uploads need a type only a
//! preflight could allow). When on, only the named origins are answered,
//! exactly (scheme, host and port), never `*`, and without credentials:
//! the token travels in `Authorization`, which a page sets only when its
//! user gave it the token. A server without tenants needs no token, so
//! any script of an allowed page could use it on its visitors' behalf:
//! `--allow-origin` is refused there at the start, and answers nothing if
//! the last tenant is removed while it runs. tower-http's `CorsLayer`
//! answers the preflights, before the routes, the `Host` check and
//! authentication.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, request, HeaderValue, Method, Uri};
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::state::Shared;
use crate::config::ServerError;
use crate::tenants::Tenants;

/// How long a browser may reuse a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(600);

/// `origins` as a browser sends them in `Origin` (lower case, no default
/// port, no path), refused where one is not an `http` or `https` origin,
/// or where the data folder has no tenants.
pub(crate) fn check(origins: &[String], tenants: &Tenants) -> Result<Vec<String>, ServerError> {
    if origins.is_empty() {
        return Ok(Vec::new());
    }
    if tenants.is_open() {
        return Err(ServerError::Config(
            "--allow-origin needs tenants: this server has none, so its API needs no token and \
             any script of an allowed page could use it for its visitors (add one with \
             `hearth server token add`)"
                .into(),
        ));
    }
    origins.iter().map(|o| normalize(o)).collect()
}

/// One origin in its canonical form.
fn normalize(origin: &str) -> Result<String, ServerError> {
    let refused = |why: &str| {
        ServerError::Config(format!(
            "--allow-origin {origin:?}: {why} (an origin is scheme://host[:port], e.g. \
             https://app.example.com)"
        ))
    };
    let uri: Uri = origin.parse().map_err(|_| refused("not a URL"))?;
    let scheme = match uri.scheme_str().map(str::to_ascii_lowercase) {
        Some(s) if s == "http" || s == "https" => s,
        _ => return Err(refused("the scheme must be http or https")),
    };
    let Some(authority) = uri.authority() else {
        return Err(refused("no host"));
    };
    if authority.as_str().contains('@') {
        return Err(refused("an origin has no user name"));
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err(refused("an origin has no path or query"));
    }
    let host = authority.host().to_ascii_lowercase();
    let default = if scheme == "https" { 443 } else { 80 };
    Ok(match authority.port_u16() {
        Some(p) if p != default => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// The layer answering the allowed origins while the server has tenants;
/// `None` when no origin is allowed.
pub(super) fn layer(shared: &Arc<Shared>, origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allowed: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|o| HeaderValue::from_str(o).ok())
        .collect();
    let shared = shared.clone();
    let allow = AllowOrigin::predicate(move |origin: &HeaderValue, _: &request::Parts| {
        allowed.contains(origin) && shared.tenants().is_ok_and(|t| !t.is_open())
    });
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
            .max_age(PREFLIGHT_MAX_AGE),
    )
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn origins_are_canonical_or_refused() {
        for (given, canonical) in [
            ("https://App.Example.com", "https://app.example.com"),
            ("https://app.example.com:443", "https://app.example.com"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
            ("http://localhost:80", "http://localhost"),
        ] {
            assert_eq!(normalize(given).unwrap(), canonical);
        }
        for bad in [
            "*",
            "app.example.com",
            "ftp://x",
            "https://x/page",
            "https://x?q",
            "https://u@x",
            "null",
        ] {
            assert!(normalize(bad).is_err(), "{bad}");
        }
    }
}

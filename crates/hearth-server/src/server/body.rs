//! Request bodies: read whole within the server's limits on size, type,
//! time and rate, each holding one of the upload permits while it is in
//! memory. The permits are shared fairly: one tenant (on an open server,
//! one client address) holds at most `--max-uploads-per-tenant` of them,
//! so that its uploads, however slow, leave the others room.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{header, Extensions, HeaderMap};
use http_body_util::BodyExt;
use tokio::time::{timeout_at, Instant};

use super::slots::Slot;
use super::state::Shared;
use crate::config::Config;
use crate::conn::client_of;
use crate::tenants::Tenant;
use crate::wire::{ApiError, ErrorCode};

/// Reads the whole body of an upload (`POST /v1/keys`, `POST /v1/jobs`)
/// holding an upload permit, returned with the bytes. Cheap refusals come
/// first: a `Content-Length` over `--max-body` (before any byte is read;
/// a client sending `Expect: 100-continue`, as [`crate::Client`] does,
/// then sends none), then a `Content-Type` other than
/// `application/octet-stream`, before a permit is taken. The body must
/// then keep to `--min-upload-rate` and arrive within `--body-timeout`.
pub(super) async fn read_body(s: &Shared, req: Request) -> Result<(Vec<u8>, Slot), ApiError> {
    let (parts, body) = req.into_parts();
    let limit = s.config.max_body;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|&n| n > limit) {
        return Err(too_large(&n.to_string(), limit));
    }
    check_type(&parts.headers)?;
    let deadline = Instant::now() + s.config.body_timeout;
    let permit = s
        .uploads
        .acquire(owner(&parts.extensions), deadline)
        .await?;
    let bytes = receive(body, &s.config).await?;
    Ok((bytes, permit))
}

fn too_large(n: &str, limit: u64) -> ApiError {
    ApiError::new(
        ErrorCode::TooLarge,
        format!("the body is {n} bytes, over the limit of {limit}"),
    )
}

/// Refuses an upload that is not `application/octet-stream` (any case,
/// parameters allowed). A web page can send that type to another site
/// only after asking it (a CORS preflight), which this server answers only
/// for the origins `--allow-origin` names (`cors.rs`), so no other page
/// can post keys or jobs to a server on its visitor's machine.
fn check_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let given = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let essence = given.as_deref().and_then(|v| v.split(';').next());
    if essence.is_some_and(|e| e.trim().eq_ignore_ascii_case("application/octet-stream")) {
        return Ok(());
    }
    let given = match given {
        Some(v) => format!("{:?}", v.chars().take(64).collect::<String>()),
        None => "none".into(),
    };
    Err(ApiError::new(
        ErrorCode::UnsupportedMediaType,
        format!("an upload needs Content-Type: application/octet-stream (given: {given})"),
    ))
}

/// Whom an upload or a download counts against: its tenant, or on an
/// open server (one anonymous tenant, no names) its client's address.
pub(super) fn owner(extensions: &Extensions) -> String {
    match extensions.get::<Tenant>() {
        Some(t) if !t.name.is_empty() => t.name.clone(),
        _ => extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| client_of(peer.ip()).to_string())
            .unwrap_or_default(),
    }
}

/// The body's bytes, frame by frame, within `max_body`. Each frame must
/// come before `start + upload_grace + received / min_upload_rate` (the
/// minimum rate) and before `start + body_timeout` (the cap); `start` is
/// when reading begins, since a client that sent `Expect: 100-continue`
/// waits for that.
async fn receive(mut body: Body, c: &Config) -> Result<Vec<u8>, ApiError> {
    let start = Instant::now();
    let at = |d: Duration| start.checked_add(d);
    let mut bytes = Vec::new();
    loop {
        let cap = at(c.body_timeout);
        let rate = (c.min_upload_rate > 0)
            .then(|| bytes.len() as f64 / c.min_upload_rate as f64)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .and_then(|d| at(c.upload_grace.saturating_add(d)))
            .filter(|r| cap.is_none_or(|cap| *r < cap));
        let frame = match rate.or(cap) {
            Some(deadline) => timeout_at(deadline, body.frame()).await,
            None => Ok(body.frame().await),
        };
        let data = match frame {
            Ok(None) => return Ok(bytes),
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => data,
                // Trailers: nothing of the body.
                Err(_) => continue,
            },
            Ok(Some(Err(e))) => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("the body could not be read: {e}"),
                ))
            }
            Err(_) if rate.is_some() => {
                return Err(ApiError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the body arrived too slowly: {} bytes in {:.1} s, under \
                         --min-upload-rate ({} bytes/s after {} s)",
                        bytes.len(),
                        start.elapsed().as_secs_f64(),
                        c.min_upload_rate,
                        c.upload_grace.as_secs_f64()
                    ),
                ))
            }
            Err(_) => {
                return Err(ApiError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the body did not arrive within {} s",
                        c.body_timeout.as_secs()
                    ),
                ))
            }
        };
        if (bytes.len() + data.len()) as u64 > c.max_body {
            return Err(too_large("more than", c.max_body));
        }
        bytes.extend_from_slice(&data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_need_octet_stream() {
        let with = |v: Option<&str>| {
            let mut h = HeaderMap::new();
            if let Some(v) = v {
                h.insert(header::CONTENT_TYPE, v.parse().unwrap());
            }
            check_type(&h).map_err(|e| e.code)
        };
        for ok in [
            "application/octet-stream",
            "Application/Octet-Stream",
            "application/octet-stream; charset=binary",
            " application/octet-stream ;x=y",
        ] {
            assert_eq!(with(Some(ok)), Ok(()), "{ok}");
        }
        for bad in [
            None,
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            Some("application/octet-streamx"),
        ] {
            assert_eq!(with(bad), Err(ErrorCode::UnsupportedMediaType), "{bad:?}");
        }
    }
}

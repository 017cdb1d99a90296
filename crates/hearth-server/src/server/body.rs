//! Request bodies: read whole within the server's limits on size and
//! time, each holding one of the upload permits while it is in memory.

use axum::body::Body;
use axum::http::{header, HeaderMap};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::state::Shared;
use crate::api::{ApiError, ErrorCode};

/// Reads a whole body within `--max-body` and `--body-timeout`, holding
/// one of `--max-uploads` permits (returned with the body: the caller
/// keeps it while the bytes are in memory). A `Content-Length` over the
/// limit is refused before any byte is read (a client sending `Expect:
/// 100-continue`, as [`crate::Client`] does, then sends none).
pub(super) async fn read_body<'a>(
    s: &'a Shared,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Vec<u8>, tokio::sync::SemaphorePermit<'a>), ApiError> {
    let limit = s.config.max_body;
    let too_large = |n: String| {
        ApiError::new(
            ErrorCode::TooLarge,
            format!("the body is {n} bytes, over the limit of {limit}"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|&n| n > limit) {
        return Err(too_large(n.to_string()));
    }
    let permit = match tokio::time::timeout(s.config.body_timeout, s.uploads.acquire()).await {
        Ok(Ok(p)) => p,
        _ => {
            return Err(ApiError::new(
                ErrorCode::QueueFull,
                format!(
                    "{} uploads are in progress, the limit; try again later",
                    s.config.max_uploads
                ),
            ))
        }
    };
    let limited = Limited::new(body, usize::try_from(limit).unwrap_or(usize::MAX));
    match tokio::time::timeout(s.config.body_timeout, limited.collect()).await {
        Err(_) => Err(ApiError::new(
            ErrorCode::Timeout,
            format!(
                "the body did not arrive within {} s",
                s.config.body_timeout.as_secs()
            ),
        )),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(too_large("more than".into()))
        }
        Ok(Err(e)) => Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("the body could not be read: {e}"),
        )),
        Ok(Ok(c)) => Ok((c.to_bytes().to_vec(), permit)),
    }
}


//! The HTTP routes' handlers, and the middleware every request passes:
//! authentication and observation.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::StreamExt;
use serde::Deserialize;

use super::body::{owner, read_body};
use super::lock::lock;
use super::state::{internal, key_info, not_found, public, Shared};
use super::OPENAPI;
use crate::refusals;
use crate::request::{check_key_header, split_job};
use crate::tenants::{now as now_s, Tenant};
use crate::wire::{
    parse_key_id, ApiError, Deleted, ErrorCode, JobId, JobState, JobStatus, KeyInfo, ServerInfo,
    ServerStats, Submitted,
};

/// A refusal as an HTTP answer: its code's status, the JSON body, and
/// `Retry-After` or `WWW-Authenticate` where its code has one. A newtype:
/// [`ApiError`] is hearth-client's (a client builds it without axum), so
/// the server cannot implement axum's `IntoResponse` for it. Handlers
/// answer `Result<_, Refused>`; `?` turns an `ApiError` into one.
pub(super) struct Refused(pub(super) ApiError);

impl From<ApiError> for Refused {
    fn from(e: ApiError) -> Refused {
        Refused(e)
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let e = public(self.0);
        let status =
            StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (status, Json(e.body())).into_response();
        let retry = match e.code {
            ErrorCode::QueueFull | ErrorCode::QueueLimit => Some(1),
            // The next UTC day.
            ErrorCode::DailyLimit => Some(86_400 - now_s() % 86_400),
            _ => None,
        };
        if let Some(v) = retry.and_then(|s| HeaderValue::from_str(&s.to_string()).ok()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if e.code == ErrorCode::Unauthorized {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"hearth\""),
            );
        }
        r.extensions_mut().insert(e.code);
        r
    }
}

pub(super) type Shr = State<Arc<Shared>>;

/// Runs `f` off the async threads, holding one of the heavy-work permits
/// (`--threads` of them), of which `owner` (a tenant) holds at most half:
/// one tenant's rebuilds and key decompressions, however many, leave
/// another tenant's a permit. Waits up to `--body-timeout` for it, else
/// `queue_full`.
pub(super) async fn heavy<T: Send + 'static>(
    s: &Arc<Shared>,
    owner: &str,
    f: impl FnOnce(&Shared) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let deadline = tokio::time::Instant::now() + s.config.body_timeout;
    let _permit = s.heavy.acquire(owner.to_string(), deadline).await?;
    let s = s.clone();
    // The request's span goes along, for the events of the work.
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(|| f(&s)))
        .await
        .map_err(|e| internal(format!("the work stopped: {e}")))?
}

pub(super) async fn post_key(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    req: Request,
) -> Result<(StatusCode, Json<KeyInfo>), Refused> {
    let (bytes, _upload) = read_body(&s, req).await?;
    let info = check_key_header(&bytes, s.config.max_body)?;
    if let Some(k) = s.ledger.key(&t.name, info.key_id).await? {
        return Ok((StatusCode::OK, Json(key_info(&k, false))));
    }
    let (stored, new) = s.ledger.clone().register_key(&s, t, info, bytes).await?;
    if new {
        s.log(|| format!("key {} registered", stored.key_id));
    }
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(key_info(&stored, new))))
}

pub(super) async fn get_key(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let Some(id) = path.ok().and_then(|Path(p)| parse_key_id(&p)) else {
        return Refused(refusals::unknown_key()).into_response();
    };
    match s.ledger.key(&t.name, id).await {
        Ok(Some(k)) => Json(key_info(&k, false)).into_response(),
        Ok(None) => Refused(refusals::unknown_key()).into_response(),
        Err(e) => Refused(e).into_response(),
    }
}

/// `DELETE /v1/keys/{key_id}`: forgets one of the caller's keys (its
/// file, its cached copy) unless a job of the caller under it is queued or
/// running (`key_in_use`). A job admitted while the key is being deleted
/// fails as `unknown_key` when it runs.
pub(super) async fn delete_key(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<KeyInfo>, Refused> {
    let id = path
        .ok()
        .and_then(|Path(p)| parse_key_id(&p))
        .ok_or_else(refusals::unknown_key)?;
    let stored = s.ledger.delete_key(&s, &t.name, id).await?;
    s.forget_key(&stored);
    s.log(|| format!("key {id} deleted"));
    Ok(Json(key_info(&stored, false)))
}

/// The query of `POST /v1/jobs`.
#[derive(Deserialize)]
pub(super) struct SubmitQuery {
    /// The key the client means (16 hex digits): the bundle must be under it.
    pub(super) key: Option<String>,
    /// A finished job of the caller whose result bundle goes before the
    /// posted bundle's entries: inputs the server keeps between jobs.
    pub(super) with: Option<String>,
    /// Keep the result with every ciphertext in full (for later jobs'
    /// `?with=`) instead of packed.
    #[serde(default)]
    pub(super) unpacked: bool,
}

pub(super) async fn post_job(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    query: Result<Query<SubmitQuery>, QueryRejection>,
    req: Request,
) -> Result<(StatusCode, Json<Submitted>), Refused> {
    let Query(query) =
        query.map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("the query: {e}")))?;
    let named = match query.key {
        Some(k) => Some(parse_key_id(&k).ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!("key={k:?} is not a key id (16 hex digits)"),
            )
        })?),
        None => None,
    };
    let (bytes, _upload) = read_body(&s, req).await?;
    let bytes = match query.with {
        Some(job) => with_result(&s, &t, &job, bytes).await?,
        None => bytes,
    };
    let parts = split_job(&bytes, s.config.max_body)?;
    if let Some(k) = named.filter(|&k| k != parts.key_id) {
        return Err(ApiError::new(
            ErrorCode::WrongKey,
            format!(
                "the bundle is under key {}, the request names key {k}",
                parts.key_id
            ),
        )
        .into());
    }
    let key = s.ledger.key(&t.name, parts.key_id).await?;
    let key = key.ok_or_else(|| {
        ApiError::new(
            ErrorCode::UnknownKey,
            format!(
                "the bundle is under key {}, which is not registered (POST /v1/keys first)",
                parts.key_id
            ),
        )
    })?;
    if key.params != parts.params.id {
        return Err(ApiError::new(
            ErrorCode::WrongKey,
            format!(
                "key {} is of {}, the job of {}",
                key.key_id,
                key.params.params().name,
                parts.params.name
            ),
        )
        .into());
    }
    s.ledger.check_room(&s, &t).await?;
    let submitted = s
        .ledger
        .clone()
        .submit(&s, t, bytes, query.unpacked)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(submitted)))
}

/// `body` with the result of the caller's finished job `job` joined
/// before its bundle's entries (`?with=JOB`): inputs kept on the server
/// between jobs, such as AES round keys, so an upload carries only its
/// own data. The joined body is bounded by `--max-body` from the sizes
/// alone, before the result is read or the posted bundle expanded; a job
/// of another tenant is `not_found`, one without a result `not_ready`.
async fn with_result(
    s: &Arc<Shared>,
    t: &Tenant,
    job: &str,
    body: Vec<u8>,
) -> Result<Vec<u8>, ApiError> {
    let id: JobId = job.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("with={job:?} is not a job id"),
        )
    })?;
    let (status, result) = s.ledger.status(s, id, &t.name).await?;
    let Some(path) = result.filter(|_| matches!(status.state, JobState::Done { .. })) else {
        return Err(ApiError::new(
            ErrorCode::NotReady,
            format!("job {id} has no result to take inputs from yet"),
        ));
    };
    let max = s.config.max_body;
    heavy(s, &t.name, move |_| {
        let parts = split_job(&body, max)?;
        let bad = |e: hearth::Error| ApiError::new(ErrorCode::BadBundle, format!("bundle: {e}"));
        let posted = hearth::Bundle::from_bytes(std::path::Path::new("bundle"), parts.bundle)
            .map_err(bad)?;
        let earlier_len = std::fs::metadata(&path).map_err(internal)?.len();
        let full = hearth::formats::bundle::full_file_len(posted.params(), &posted.signature());
        let joined_len = (parts.program.len() as u64)
            .saturating_add(earlier_len)
            .saturating_add(full);
        if joined_len > max {
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                format!(
                    "the job with job {id}'s result: {joined_len} bytes, over the limit of {max}"
                ),
            ));
        }
        let earlier = hearth::Bundle::load(&path).map_err(internal)?;
        if earlier.is_packed() {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "job {id}'s result is packed for its owner: post the job whose result later \
                     jobs take with ?unpacked=true"
                ),
            ));
        }
        let joined = hearth::Bundle::combine([earlier, posted]).map_err(|e| match e {
            hearth::Error::WrongKey { .. } | hearth::Error::ParamsMismatch { .. } => ApiError::new(
                ErrorCode::WrongKey,
                format!("job {id}'s result and the bundle: {e}"),
            ),
            e => ApiError::new(
                ErrorCode::BadBundle,
                format!("job {id}'s result and the bundle: {e}"),
            ),
        })?;
        let mut out = parts.program.to_vec();
        out.extend(joined.to_bytes().map_err(internal)?);
        Ok(out)
    })
    .await
}

pub(super) fn job_id(path: Result<Path<String>, PathRejection>) -> Result<JobId, ApiError> {
    let Path(p) = path.map_err(|_| ApiError::new(ErrorCode::NotFound, "no such job"))?;
    p.parse()
}

pub(super) async fn get_job(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<JobStatus>, Refused> {
    Ok(Json(s.ledger.status(&s, job_id(path)?, &t.name).await?.0))
}

pub(super) async fn get_result(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    request: axum::http::request::Parts,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, Refused> {
    let id = job_id(path)?;
    let (status, file) = s.ledger.status(&s, id, &t.name).await?;
    match status.state {
        JobState::Done { .. } => {}
        JobState::Failed { code, message } => {
            return Err(ApiError::new(
                ErrorCode::JobFailed,
                format!("the job failed ({code}): {message}"),
            )
            .into())
        }
        JobState::Queued { .. } | JobState::Running { .. } => {
            return Err(
                ApiError::new(ErrorCode::NotReady, format!("job {id} has not finished")).into(),
            )
        }
    }
    // One of the download permits, kept by the body until it is sent;
    // one tenant holds at most its share of them.
    let deadline = tokio::time::Instant::now() + s.config.body_timeout;
    let permit = s
        .downloads
        .acquire(owner(&request.extensions), deadline)
        .await?;
    let path = file.ok_or_else(|| not_found(id))?;
    let file = match tokio::fs::File::open(path).await {
        Ok(f) => f,
        // Deleted meanwhile.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(id).into()),
        Err(e) => return Err(internal(e).into()),
    };
    let len = file.metadata().await.map_err(internal)?.len();
    // Streamed from disk: one chunk in memory at a time, whatever its size.
    let chunks = tokio_util::io::ReaderStream::new(file).map(move |chunk| {
        let _held = &permit;
        chunk
    });
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (header::CONTENT_LENGTH, HeaderValue::from(len)),
        ],
        Body::from_stream(chunks),
    )
        .into_response())
}

pub(super) async fn delete_job(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Deleted>, Refused> {
    let id = job_id(path)?;
    s.ledger.clone().delete_job(&s, id, &t.name).await?;
    Ok(Json(Deleted { job_id: id }))
}

/// `GET /v1/info`: the server's limits, to anyone who reaches it; which
/// server answered (its fleet name, or its host's name and process id)
/// only to a caller with a valid token (anyone on an open server): a
/// stranger learns nothing of the machine behind the address.
pub(super) async fn get_info(State(s): Shr, headers: HeaderMap) -> Json<ServerInfo> {
    let known = s.tenants().is_ok_and(|t| {
        t.is_open() || bearer(&headers).is_some_and(|b| t.authenticate(b).is_some())
    });
    Json(ServerInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        threads: s.config.threads,
        max_pbs: s.config.max_pbs,
        max_memory: s.config.max_memory,
        max_queue: s.config.max_queue,
        max_jobs: s.config.max_jobs,
        max_body: s.config.max_body,
        backend: s.config.describe_backend(),
        store: s.ledger.kind().into(),
        server: if known { s.name.clone() } else { String::new() },
    })
}

pub(super) async fn get_stats(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
) -> Result<Json<ServerStats>, Refused> {
    let mut st = ServerStats::default();
    for (state, _, n) in s.ledger.job_counts(&s, Some(&t.name)).await? {
        match state.as_str() {
            "queued" => st.queued += n,
            "running" => st.running += n,
            "done" => st.done += n,
            _ => st.failed += n,
        }
    }
    let counts = lock(&s.counts).get(&t.name).cloned().unwrap_or_default();
    st.accepted = counts.accepted;
    st.recovered = counts.recovered;
    st.completed = counts.completed;
    st.refused = counts
        .refused
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    st.keys = s.ledger.key_count(&t.name).await?;
    Ok(Json(st))
}

/// `GET /v1/openapi.json`: [`OPENAPI`], for clients generated from it.
pub(super) async fn get_openapi() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        OPENAPI,
    )
        .into_response()
}

/// `GET /v1/health`: the server answers and its job worker runs; in a
/// fleet, its database answered its heartbeats within the last lease (no
/// query of its own: callers without a token cost the database nothing).
pub(super) async fn get_health(State(s): Shr) -> Response {
    if s.stop.load(Ordering::Relaxed) {
        return Refused(ApiError::new(ErrorCode::Internal, "stopping")).into_response();
    }
    if !s.ledger.reachable() {
        let e = ApiError::new(ErrorCode::Internal, "the fleet's database is out of reach");
        return Refused(e).into_response();
    }
    Json(serde_json::json!({"status": "ok"})).into_response()
}

/// `GET /metrics` on the metrics address: the gauges set from the jobs
/// held now, then everything in Prometheus's text format.
pub(super) async fn get_metrics(State(s): Shr) -> Response {
    // In a fleet, the jobs and the queue are the fleet's (from its
    // database); a database out of reach leaves the gauges as they were.
    if let Ok(counts) = s.ledger.job_counts(&s, None).await {
        s.metrics.jobs.reset();
        let mut queued = 0;
        for (state, tenant, n) in counts {
            if state == "queued" {
                queued += n;
            }
            s.metrics
                .jobs
                .with_label_values(&[state.as_str(), tenant.as_str()])
                .set(n as i64);
        }
        s.metrics.queue_depth.set(queued as i64);
    }
    s.metrics
        .running_memory
        .set(lock(&s.jobs).running_memory as i64);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        s.metrics.render(),
    )
        .into_response()
}

pub(super) async fn no_route() -> Refused {
    Refused(ApiError::new(
        ErrorCode::NotFound,
        "no such endpoint (see GET /v1/openapi.json)",
    ))
}

pub(super) async fn no_method() -> Refused {
    Refused(ApiError::new(
        ErrorCode::BadRequest,
        "this endpoint does not take that method",
    ))
}

/// Lets a request through with the tenant its bearer token names (or as
/// the anonymous tenant, on an open server), or refuses it
/// (`unauthorized`) before its body is read.
pub(super) async fn authenticate(State(s): Shr, mut req: Request, next: Next) -> Response {
    // In a fleet, a token the tenants read a moment ago do not know (or
    // none) is refused without a query.
    let tenants = match s.tenants_for(bearer(req.headers())).await {
        Ok(t) => t,
        Err(e) => return Refused(e).into_response(),
    };
    let tenant = if tenants.is_open() {
        Tenant::anonymous()
    } else {
        let token = bearer(req.headers());
        match token.map(|t| tenants.authenticate(t)) {
            Some(Some(t)) => t,
            Some(None) => {
                return Refused(ApiError::new(
                    ErrorCode::Unauthorized,
                    "the token is not valid (unknown, mistyped or revoked)",
                ))
                .into_response()
            }
            None => {
                return Refused(ApiError::new(
                    ErrorCode::Unauthorized,
                    "this server needs an API token: Authorization: Bearer TOKEN \
                     (hearth --token or HEARTH_TOKEN; the operator makes one with \
                     `hearth server token add`)",
                ))
                .into_response()
            }
        }
    };
    tracing::Span::current().record("tenant", tenant.name.as_str());
    if let Some(proof) = req.extensions().get::<crate::conn::Proof>() {
        proof.prove();
    }
    req.extensions_mut().insert(tenant.clone());
    let mut r = next.run(req).await;
    // For `observe`, which counts the answer for its tenant.
    r.extensions_mut().insert(tenant);
    r
}

/// The token of an `Authorization: Bearer TOKEN` header (the scheme's
/// case does not matter, RFC 9110).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Counts every refusal by its code (for `GET /v1/stats`).
/// Every answer, seen once: one span per request (method, path, then the
/// tenant and the answer's status); refusals counted by code (stats and
/// metrics); with `config.log`, refusals logged at info level with their
/// code, other answers at debug level (clients poll).
pub(super) async fn observe(State(s): Shr, req: Request, next: Next) -> Response {
    use tracing::Instrument;
    let span = tracing::info_span!(
        "request",
        method = %req.method(),
        path = %req.uri().path(),
        tenant = tracing::field::Empty,
        status = tracing::field::Empty,
    );
    let start = Instant::now();
    let r = next.run(req).instrument(span.clone()).await;
    let status = r.status().as_u16();
    span.record("status", status);
    let code = r.extensions().get::<ErrorCode>().copied();
    if let Some(code) = code {
        // Refusals before a token was checked count for no tenant.
        let tenant = r
            .extensions()
            .get::<Tenant>()
            .map_or("", |t| t.name.as_str());
        s.count(tenant, |c| {
            *c.refused.entry(code.as_str()).or_default() += 1
        });
        s.metrics.refusals.with_label_values(&[code.as_str()]).inc();
    }
    if s.config.log {
        let _entered = span.enter();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        match code {
            Some(code) => tracing::info!(status, ms, code = code.as_str(), "refused"),
            None => tracing::debug!(status, ms, "answered"),
        }
    }
    r
}

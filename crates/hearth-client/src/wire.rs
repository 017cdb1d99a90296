//! What travels over HTTP: job ids, the JSON bodies of the answers, and
//! the typed refusals ([`ErrorCode`], [`ApiError`]), shared by the server
//! and the [`crate::Client`].

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use hearth_core::KeyId;
use serde::{Deserialize, Serialize};

/// Why a request was refused: a stable string in the JSON body's `code`,
/// each with one HTTP status ([`ErrorCode::status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// `too_large` (413): the body is over `--max-body`.
    TooLarge,
    /// `bad_request` (400): the body could not be read (the client went
    /// away), or the request is not one this API knows.
    BadRequest,
    /// `timeout` (408): the body did not arrive within the server's time.
    Timeout,
    /// `bad_program` (400): the first file of a job is not a program this
    /// hearth builds (header, checksum, operations, cost).
    BadProgram,
    /// `bad_bundle` (400): the second file of a job is not a bundle, or it
    /// does not fit the program's signature or parameters.
    BadBundle,
    /// `bad_key` (400): an uploaded server key is not a valid key file.
    BadKey,
    /// `insecure_params` (422): a program, bundle or key on an `INSECURE`
    /// test parameter set.
    InsecureParams,
    /// `unknown_key` (404): the tenant has no server key registered under
    /// the bundle's (or the URL's) key id.
    UnknownKey,
    /// `wrong_key` (422): the bundle is under another key than the one the
    /// request names, or the registered key is of other parameters.
    WrongKey,
    /// `over_cost` (422): the program's #PBS or estimated peak memory is
    /// over the operator's limits.
    OverCost,
    /// `queue_full` (503): as many jobs as `--max-queue` are waiting, or
    /// `--max-uploads` bodies were being received for all of
    /// `--body-timeout`.
    QueueFull,
    /// `too_many_keys` (503): as many keys as `--max-keys` are registered.
    TooManyKeys,
    /// `not_found` (404): no such job (never submitted, deleted, or
    /// another tenant's), or no such endpoint.
    NotFound,
    /// `not_ready` (409): the job is queued or running (its result does
    /// not exist yet; a running job cannot be deleted).
    NotReady,
    /// `job_failed` (422): the job ran and failed; the message says why.
    JobFailed,
    /// `internal` (500): the server could not do its part (disk full, ...).
    Internal,
    /// `unauthorized` (401): the server has tenants and the request has
    /// no `Authorization: Bearer` token, or one that is unknown, wrong or
    /// revoked.
    Unauthorized,
    /// `key_limit` (429): the tenant has as many keys registered as its
    /// limit allows.
    KeyLimit,
    /// `queue_limit` (429): the tenant has as many jobs queued or running
    /// as its limit allows.
    QueueLimit,
    /// `daily_limit` (429): the job's bootstraps would take the tenant
    /// over its bootstraps for the day (UTC).
    DailyLimit,
    /// `expired` (410): the job waited in the queue longer than
    /// `--queue-ttl` and was not run.
    Expired,
    /// `key_in_use` (409): the key cannot be deleted while a job of its
    /// tenant under it is queued or running.
    KeyInUse,
    /// `unsupported_media_type` (415): an upload without `Content-Type:
    /// application/octet-stream` (a web page cannot send one without the
    /// browser asking the server first, and it never says yes).
    UnsupportedMediaType,
    /// `misdirected` (421): an open server (no tenants) got a request whose
    /// `Host` is neither an IP address nor `localhost`: a page of another
    /// site reaching it through DNS rebinding.
    Misdirected,
    /// `storage_limit` (429): the tenant's stored bytes (keys, queued jobs,
    /// results kept) would go over its storage quota.
    StorageLimit,
    /// `insufficient_storage` (507): the data folder's disk would go under
    /// the server's reserve of free space.
    InsufficientStorage,
    /// `closed` (503): the server refuses every request: its data folder
    /// had tenants and its tenants file is now missing, empty or
    /// unreadable, or it serves a public address without tenants or TLS.
    Closed,
    /// `crashed` (500): a failed job's code: the server died while running
    /// it as many times as it allows, so it is not run again.
    Crashed,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: [ErrorCode; 28] = [
        Self::TooLarge,
        Self::BadRequest,
        Self::Timeout,
        Self::BadProgram,
        Self::BadBundle,
        Self::BadKey,
        Self::InsecureParams,
        Self::UnknownKey,
        Self::WrongKey,
        Self::OverCost,
        Self::QueueFull,
        Self::TooManyKeys,
        Self::NotFound,
        Self::NotReady,
        Self::JobFailed,
        Self::Internal,
        Self::Unauthorized,
        Self::KeyLimit,
        Self::QueueLimit,
        Self::DailyLimit,
        Self::Expired,
        Self::KeyInUse,
        Self::UnsupportedMediaType,
        Self::Misdirected,
        Self::StorageLimit,
        Self::InsufficientStorage,
        Self::Closed,
        Self::Crashed,
    ];

    /// The stable string of the JSON body.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TooLarge => "too_large",
            Self::BadRequest => "bad_request",
            Self::Timeout => "timeout",
            Self::BadProgram => "bad_program",
            Self::BadBundle => "bad_bundle",
            Self::BadKey => "bad_key",
            Self::InsecureParams => "insecure_params",
            Self::UnknownKey => "unknown_key",
            Self::WrongKey => "wrong_key",
            Self::OverCost => "over_cost",
            Self::QueueFull => "queue_full",
            Self::TooManyKeys => "too_many_keys",
            Self::NotFound => "not_found",
            Self::NotReady => "not_ready",
            Self::JobFailed => "job_failed",
            Self::Internal => "internal",
            Self::Unauthorized => "unauthorized",
            Self::KeyLimit => "key_limit",
            Self::QueueLimit => "queue_limit",
            Self::DailyLimit => "daily_limit",
            Self::Expired => "expired",
            Self::KeyInUse => "key_in_use",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Misdirected => "misdirected",
            Self::StorageLimit => "storage_limit",
            Self::InsufficientStorage => "insufficient_storage",
            Self::Closed => "closed",
            Self::Crashed => "crashed",
        }
    }

    /// The HTTP status the server answers with.
    pub fn status(self) -> u16 {
        match self {
            Self::TooLarge => 413,
            Self::BadRequest | Self::BadProgram | Self::BadBundle | Self::BadKey => 400,
            Self::Timeout => 408,
            Self::InsecureParams | Self::WrongKey | Self::OverCost | Self::JobFailed => 422,
            Self::UnknownKey | Self::NotFound => 404,
            Self::QueueFull | Self::TooManyKeys | Self::Closed => 503,
            Self::NotReady => 409,
            Self::Internal | Self::Crashed => 500,
            Self::Unauthorized => 401,
            Self::KeyLimit | Self::QueueLimit | Self::DailyLimit | Self::StorageLimit => 429,
            Self::Expired => 410,
            Self::KeyInUse => 409,
            Self::UnsupportedMediaType => 415,
            Self::Misdirected => 421,
            Self::InsufficientStorage => 507,
        }
    }

    /// The code named `s`, if it is one of [`ErrorCode::ALL`].
    pub fn parse(s: &str) -> Option<ErrorCode> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal: its code and a message for people. The JSON body of every
/// answer that is not a success is `{"code": "...", "message": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// What went wrong, as a stable code.
    pub code: ErrorCode,
    /// What went wrong, in words.
    pub message: String,
}

impl ApiError {
    /// A refusal with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            code: self.code.as_str().to_string(),
            message: self.message.clone(),
        }
    }
}

/// The JSON body of a refusal, as sent (the code as a string, so that a
/// client reads codes a newer server adds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// One of [`ErrorCode::as_str`].
    pub code: String,
    /// Words for people.
    pub message: String,
}

/// A job's id: 128 random bits from the operating system, written as 32
/// lowercase hex digits. Knowing it is what lets a client read or delete
/// the job, so it cannot be guessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub [u8; 16]);

impl JobId {
    /// A fresh id from the operating system's random source.
    pub fn random() -> JobId {
        use rand::RngCore;
        let mut bytes = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        JobId(bytes)
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl FromStr for JobId {
    type Err = ApiError;

    /// 32 hex digits (either case); anything else is [`ErrorCode::NotFound`]
    /// (no job can have that id).
    fn from_str(s: &str) -> Result<JobId, ApiError> {
        let refused = || ApiError::new(ErrorCode::NotFound, format!("no job {s:?}"));
        if s.len() != 32 || !s.is_ascii() {
            return Err(refused());
        }
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| refused())?;
        }
        Ok(JobId(bytes))
    }
}

impl Serialize for JobId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for JobId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<JobId, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(|e: ApiError| serde::de::Error::custom(e))
    }
}

/// A key id as 16 hex digits (how [`KeyId`] displays), or `None`.
pub fn parse_key_id(s: &str) -> Option<KeyId> {
    if s.len() != 16 {
        return None;
    }
    u64::from_str_radix(s, 16).ok().map(KeyId)
}

/// The answer to `POST /v1/keys` and `GET /v1/keys/{key_id}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyInfo {
    /// The key id, 16 hex digits.
    pub key_id: String,
    /// The parameter set's name.
    pub params: String,
    /// Whether the key is stored compressed.
    pub compressed: bool,
    /// Bytes of the stored file.
    pub bytes: u64,
    /// Whether this upload registered it (`false`: it was registered
    /// already, and the upload was not stored).
    pub new: bool,
}

/// The answer to `POST /v1/jobs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submitted {
    /// The job's id: the only way to read its status and result.
    pub job_id: JobId,
    /// Bootstraps the program runs.
    pub pbs: u64,
    /// Its depth in bootstraps.
    pub depth: u64,
    /// Its estimated peak memory on the server's threads, in bytes.
    pub memory: u64,
}

/// Where a job is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    /// Waiting; `position` of its tenant's own jobs start before it
    /// (other tenants' jobs are not counted: their load is theirs).
    Queued {
        /// The tenant's jobs before it in the queue.
        position: usize,
    },
    /// Running: `done` of `total` bootstraps finished.
    Running {
        /// Bootstraps finished.
        done: u64,
        /// Bootstraps in the program.
        total: u64,
    },
    /// Finished: the result can be fetched.
    Done {
        /// Bytes of the result bundle.
        result_bytes: u64,
    },
    /// Finished without a result.
    Failed {
        /// An [`ErrorCode`] string.
        code: String,
        /// Why.
        message: String,
    },
}

/// The answer to `GET /v1/jobs/{job_id}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStatus {
    /// The job.
    pub job_id: JobId,
    /// The key its bundle is under.
    pub key_id: String,
    /// Bootstraps the program runs.
    pub pbs: u64,
    /// Its depth in bootstraps.
    pub depth: u64,
    /// Where it is.
    #[serde(flatten)]
    pub state: JobState,
}

/// The answer to `GET /v1/info`: the server's limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// The hearth version serving.
    pub version: String,
    /// Threads of the pool jobs run on.
    pub threads: usize,
    /// Most bootstraps one job may run.
    pub max_pbs: u64,
    /// Most estimated peak memory of one job, bytes.
    pub max_memory: u64,
    /// Most jobs waiting at once.
    pub max_queue: usize,
    /// Most jobs running at once (0 from a server older than this field).
    #[serde(default)]
    pub max_jobs: usize,
    /// Most bytes in one request body.
    pub max_body: u64,
    /// Where jobs run, in words: `cpu, 16 threads`, `gpu, one job at a
    /// time`, `mpi, 4 ranks x 16 threads, one job at a time` (empty from
    /// a server older than this field).
    #[serde(default)]
    pub backend: String,
    /// Where its state is kept: `files` (its own data folder) or
    /// `postgres` (a fleet's database, shared with other servers; empty
    /// from a server older than this field).
    #[serde(default)]
    pub store: String,
    /// Which server answered: its name in the fleet, or its host's name
    /// and process id; empty for a caller without a valid token on a
    /// server with tenants (and from a server older than this field).
    #[serde(default)]
    pub server: String,
}

/// The answer to `GET /v1/stats`: the caller's own counts since the server
/// started, and its jobs held now (never another tenant's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStats {
    /// Jobs waiting now.
    pub queued: usize,
    /// Jobs running now.
    pub running: usize,
    /// Results waiting to be fetched and deleted.
    pub done: usize,
    /// Failed jobs not yet deleted.
    pub failed: usize,
    /// Jobs accepted since start (recovered ones not counted).
    pub accepted: u64,
    /// Jobs found on disk at start and queued again.
    pub recovered: u64,
    /// Jobs run to a result since start.
    pub completed: u64,
    /// Registered keys.
    pub keys: usize,
    /// Refusals since start, by code.
    pub refused: BTreeMap<String, u64>,
}

/// The answer to `DELETE /v1/jobs/{job_id}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    /// The job that is gone.
    pub job_id: JobId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_have_statuses() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(c.as_str()), Some(c));
            assert!(seen.insert(c.as_str()));
            assert!((400..600).contains(&c.status()), "{c}");
        }
        assert_eq!(ErrorCode::parse("nope"), None);
    }

    #[test]
    fn job_ids_are_random_hex_and_parse_strictly() {
        let a = JobId::random();
        let b = JobId::random();
        assert_ne!(a, b);
        let s = a.to_string();
        assert_eq!(s.len(), 32);
        assert_eq!(s.parse::<JobId>().unwrap(), a);
        assert_eq!(s.to_uppercase().parse::<JobId>().unwrap(), a);
        for bad in [
            "",
            "00",
            &s[..31],
            &format!("{s}0"),
            &s.replace(&s[..1], "g"),
        ] {
            assert_eq!(bad.parse::<JobId>().unwrap_err().code, ErrorCode::NotFound);
        }
        // Multi-byte characters do not split inside a character.
        assert!("é".repeat(16).parse::<JobId>().is_err());
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<JobId>(&json).unwrap(), a);
        assert_eq!(parse_key_id("00000000000000ff"), Some(KeyId(255)));
        assert_eq!(parse_key_id("ff"), None);
    }

    #[test]
    fn job_status_is_flat_json() {
        let st = JobStatus {
            job_id: JobId([7; 16]),
            key_id: KeyId(1).to_string(),
            pbs: 10,
            depth: 3,
            state: JobState::Running { done: 4, total: 10 },
        };
        let v: serde_json::Value = serde_json::to_value(&st).unwrap();
        assert_eq!(v["state"], "running");
        assert_eq!(v["done"], 4);
        assert_eq!(serde_json::from_value::<JobStatus>(v).unwrap(), st);
    }
}

//! A blocking client of the server's HTTP API (ureq, rustls for
//! `https://`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::crypto::files::info_from_bytes;
use hearth_core::formats::Bundle;
use hearth_core::KeyId;
use serde::de::DeserializeOwned;

use crate::wire::{
    ErrorBody, ErrorCode, JobId, JobState, JobStatus, KeyInfo, ServerInfo, ServerStats, Submitted,
};

/// What a client call can meet.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server refused the request: its HTTP status, its code (see
    /// [`ErrorCode`]) and message.
    #[error("the server refused ({status} {code}): {message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The code string of the JSON body.
        code: String,
        /// The message of the JSON body.
        message: String,
    },
    /// The job ran and failed (from [`Client::wait`]).
    #[error("job {job} failed ({code}): {message}")]
    JobFailed {
        /// The job.
        job: JobId,
        /// The failure's code.
        code: String,
        /// Why.
        message: String,
    },
    /// No answer: the server could not be reached, or the connection
    /// broke.
    #[error("cannot reach the server: {0}")]
    Transport(String),
    /// An answer that is not this API's.
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
    /// [`Client::wait_timeout`] ran out of time.
    #[error("job {0} has not finished in time")]
    Timeout(JobId),
    /// A local file could not be read.
    #[error(transparent)]
    Hearth(#[from] hearth_core::Error),
    /// A setting that cannot be used: a URL that is not `http(s)://`, a
    /// CA file without a certificate.
    #[error("{0}")]
    Config(String),
}

impl ClientError {
    /// The server's code, when the server refused the request (or the
    /// job failed) with one this client knows.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Api { code, .. } => ErrorCode::parse(code),
            ClientError::JobFailed { .. } => Some(ErrorCode::JobFailed),
            _ => None,
        }
    }
}

/// A server key to upload: a file's path or its bytes.
#[derive(Clone, Copy, Debug)]
pub enum KeySource<'a> {
    /// A server key file (compressed or not).
    Path(&'a Path),
    /// A server key file's bytes.
    Bytes(&'a [u8]),
}

impl<'a> From<&'a Path> for KeySource<'a> {
    fn from(p: &'a Path) -> Self {
        KeySource::Path(p)
    }
}

impl<'a> From<&'a PathBuf> for KeySource<'a> {
    fn from(p: &'a PathBuf) -> Self {
        KeySource::Path(p)
    }
}

impl<'a> From<&'a [u8]> for KeySource<'a> {
    fn from(b: &'a [u8]) -> Self {
        KeySource::Bytes(b)
    }
}

impl<'a> From<&'a Vec<u8>> for KeySource<'a> {
    fn from(b: &'a Vec<u8>) -> Self {
        KeySource::Bytes(b)
    }
}

/// The most bytes of a JSON answer read.
const JSON_LIMIT: u64 = 1 << 20;
/// The most bytes of a result read.
const RESULT_LIMIT: u64 = 1 << 40;
/// Longest a connection is kept idle for the next call: well under the
/// server's default `--header-timeout` (20 s), after which the server
/// closes it.
pub const MAX_IDLE: Duration = Duration::from_secs(5);

/// A client of one server (`http://HOST:PORT` or `https://HOST:PORT`).
/// Uploads send `Expect: 100-continue`, so a body over the server's
/// limit is refused before it is sent. Connections are kept alive between
/// calls, but never sent on once the server may have closed them: the
/// server closes a connection idle for its `--header-timeout` (20 s by
/// default), ureq does not send a request again on a new connection, and
/// so the client drops a pooled connection after [`MAX_IDLE`], and ureq
/// checks each pooled connection before using it (a read that must find
/// nothing: a connection the server closed shows its end).
#[derive(Clone, Debug)]
pub struct Client {
    base: String,
    agent: ureq::Agent,
    /// `Bearer TOKEN`, sent with every request.
    auth: Option<String>,
}

/// How to reach a server: [`Client::builder`], then [`ClientBuilder::build`].
#[derive(Clone, Debug)]
pub struct ClientBuilder {
    url: String,
    token: Option<String>,
    ca_cert: Option<PathBuf>,
}

impl ClientBuilder {
    /// The API token the operator gave (`hearth server token add`): sent
    /// as `Authorization: Bearer` with every request.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Trusts only the certificates in this PEM file for `https://`
    /// (a private CA, or a server's self-signed certificate). Without it,
    /// the system's roots are trusted.
    pub fn ca_cert(mut self, pem: impl Into<PathBuf>) -> Self {
        self.ca_cert = Some(pem.into());
        self
    }

    /// The client (the CA file is read now).
    pub fn build(self) -> Result<Client, ClientError> {
        use ureq::tls::{parse_pem, PemItem, RootCerts, TlsConfig, TlsProvider};
        let url = self.url;
        let base = url.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ClientError::Config(format!(
                "{url:?} is not an http:// or https:// URL"
            )));
        }
        let roots = match &self.ca_cert {
            None => RootCerts::PlatformVerifier,
            Some(path) => {
                let pem = read_file(path)?;
                let bad = |e: String| ClientError::Config(format!("{}: {e}", path.display()));
                let mut certs = Vec::new();
                for item in parse_pem(&pem) {
                    if let PemItem::Certificate(c) = item.map_err(|e| bad(e.to_string()))? {
                        certs.push(c);
                    }
                }
                if certs.is_empty() {
                    return Err(bad("no PEM certificate in the file".into()));
                }
                RootCerts::Specific(Arc::new(certs))
            }
        };
        let tls = TlsConfig::builder()
            .provider(TlsProvider::Rustls)
            .root_certs(roots)
            .build();
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            // Refusals arrive at once; a 100 Continue too, from this server.
            .timeout_await_100(Some(Duration::from_secs(10)))
            .max_idle_age(MAX_IDLE)
            .tls_config(tls)
            .build();
        Ok(Client {
            base,
            agent: ureq::Agent::new_with_config(config),
            auth: self.token.map(|t| format!("Bearer {}", t.trim())),
        })
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, ClientError> {
    std::fs::read(path).map_err(|source| {
        hearth_core::Error::from(hearth_core::FileError::Io {
            path: path.to_path_buf(),
            source,
        })
        .into()
    })
}

/// The options of a job's submission ([`Client::submit_with_options`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmitOptions {
    /// The key the bundle must be under (`?key=`).
    pub key: Option<KeyId>,
    /// A finished job of the caller whose result goes before the bundle's
    /// entries (`?with=`); its result must have been kept unpacked.
    pub with: Option<JobId>,
    /// Keep this job's result with every ciphertext in full
    /// (`?unpacked=true`), so that later jobs can take it with `with`;
    /// otherwise it leaves the server packed.
    pub unpacked: bool,
}

impl Client {
    /// A client of the server at `url` (`http://HOST:PORT` or
    /// `https://HOST:PORT`, a trailing `/` or none) without a token,
    /// trusting the system's roots: [`Client::builder`] for more.
    pub fn new(url: &str) -> Result<Client, ClientError> {
        Client::builder(url).build()
    }

    /// A client to configure: a token, a CA file.
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder {
            url: url.to_string(),
            token: None,
            ca_cert: None,
        }
    }

    fn get(&self, path: &str) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        self.authorized(self.agent.get(self.url_of(path)))
    }

    fn authorized<B>(&self, r: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.auth {
            Some(a) => r.header("Authorization", a),
            None => r,
        }
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.base
    }

    fn url_of(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn transport(e: ureq::Error) -> ClientError {
        ClientError::Transport(e.to_string())
    }

    /// The body of a success, or the refusal.
    fn answer(mut r: ureq::http::Response<ureq::Body>, limit: u64) -> Result<Vec<u8>, ClientError> {
        let status = r.status().as_u16();
        let body = r
            .body_mut()
            .with_config()
            .limit(if (200..300).contains(&status) {
                limit
            } else {
                JSON_LIMIT
            })
            .read_to_vec()
            .map_err(Self::transport)?;
        if (200..300).contains(&status) {
            return Ok(body);
        }
        match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(e) => Err(ClientError::Api {
                status,
                code: e.code,
                message: e.message,
            }),
            Err(_) => Err(ClientError::Protocol(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            ))),
        }
    }

    fn json<T: DeserializeOwned>(
        r: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<T, ClientError> {
        let body = Self::answer(r.map_err(Self::transport)?, JSON_LIMIT)?;
        serde_json::from_slice(&body).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    fn post(
        &self,
        path: &str,
        body: &[u8],
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        self.authorized(self.agent.post(self.url_of(path)))
            .header("Expect", "100-continue")
            .content_type("application/octet-stream")
            .send(body)
    }

    /// The server's limits (`GET /v1/info`).
    pub fn info(&self) -> Result<ServerInfo, ClientError> {
        Self::json(self.get("/v1/info").call())
    }

    /// Counts of jobs and refusals (`GET /v1/stats`).
    pub fn stats(&self) -> Result<ServerStats, ClientError> {
        Self::json(self.get("/v1/stats").call())
    }

    /// Registers a server key (`POST /v1/keys`): a compressed key file is
    /// the smallest upload. A key registered already is not sent again by
    /// the server's choice: the answer says `new: false`.
    pub fn upload_key<'a>(&self, key: impl Into<KeySource<'a>>) -> Result<KeyInfo, ClientError> {
        let owned;
        let bytes = match key.into() {
            KeySource::Bytes(b) => b,
            KeySource::Path(p) => {
                owned = read_file(p)?;
                &owned
            }
        };
        Self::json(self.post("/v1/keys", bytes))
    }

    /// The key `id` as registered (`GET /v1/keys/{id}`), or `None`.
    pub fn key(&self, id: KeyId) -> Result<Option<KeyInfo>, ClientError> {
        match Self::json(self.get(&format!("/v1/keys/{id}")).call()) {
            Ok(k) => Ok(Some(k)),
            Err(e) if e.code() == Some(ErrorCode::UnknownKey) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes one of the caller's keys (`DELETE /v1/keys/{id}`): refused
    /// as `key_in_use` while a job under it is queued or running.
    pub fn delete_key(&self, id: KeyId) -> Result<KeyInfo, ClientError> {
        Self::json(
            self.authorized(self.agent.delete(self.url_of(&format!("/v1/keys/{id}"))))
                .call(),
        )
    }

    /// Registers the key in `path` unless the server has its id already
    /// (only the 36-byte header is read to learn it).
    pub fn ensure_key(&self, path: &Path) -> Result<KeyInfo, ClientError> {
        let bytes = read_file(path)?;
        let info = info_from_bytes(path, &bytes)?;
        match self.key(info.key_id)? {
            Some(k) => Ok(k),
            None => self.upload_key(&bytes),
        }
    }

    /// Submits a job (`POST /v1/jobs`): program file bytes
    /// (`hearth::CompiledProgram::to_bytes`) and input bundle bytes
    /// ([`Bundle::to_bytes`]), sent one after the other. The
    /// bundle's key must be registered.
    pub fn submit(&self, program: &[u8], bundle: &[u8]) -> Result<Submitted, ClientError> {
        self.submit_to("/v1/jobs".into(), program, bundle)
    }

    /// [`Client::submit`], naming the key the job is for: the server
    /// refuses a bundle under another key (`wrong_key`).
    pub fn submit_with_key(
        &self,
        key: KeyId,
        program: &[u8],
        bundle: &[u8],
    ) -> Result<Submitted, ClientError> {
        self.submit_to(format!("/v1/jobs?key={key}"), program, bundle)
    }

    /// Submits with every option of `POST /v1/jobs` ([`SubmitOptions`]):
    /// the key named, a kept result joined, the result kept unpacked.
    pub fn submit_with_options(
        &self,
        options: SubmitOptions,
        program: &[u8],
        bundle: &[u8],
    ) -> Result<Submitted, ClientError> {
        let mut query = Vec::new();
        if let Some(key) = options.key {
            query.push(format!("key={key}"));
        }
        if let Some(job) = options.with {
            query.push(format!("with={job}"));
        }
        if options.unpacked {
            query.push("unpacked=true".to_string());
        }
        let path = if query.is_empty() {
            "/v1/jobs".to_string()
        } else {
            format!("/v1/jobs?{}", query.join("&"))
        };
        self.submit_to(path, program, bundle)
    }

    /// [`Client::submit_with_key`], the result of the caller's finished
    /// job `earlier` joined before the bundle's entries (`?with=`): inputs
    /// the server keeps between jobs, such as AES round keys, so the
    /// bundle carries only the new data.
    pub fn submit_after(
        &self,
        key: KeyId,
        earlier: JobId,
        program: &[u8],
        bundle: &[u8],
    ) -> Result<Submitted, ClientError> {
        let options = SubmitOptions {
            key: Some(key),
            with: Some(earlier),
            unpacked: false,
        };
        self.submit_with_options(options, program, bundle)
    }

    fn submit_to(
        &self,
        path: String,
        program: &[u8],
        bundle: &[u8],
    ) -> Result<Submitted, ClientError> {
        let body = [program, bundle].concat();
        Self::json(self.post(&path, &body))
    }

    /// Where a job is (`GET /v1/jobs/{id}`).
    pub fn status(&self, job: JobId) -> Result<JobStatus, ClientError> {
        Self::json(self.get(&format!("/v1/jobs/{job}")).call())
    }

    /// Polls every `poll` until the job is done; a failed job is
    /// [`ClientError::JobFailed`].
    pub fn wait(&self, job: JobId, poll: Duration) -> Result<JobStatus, ClientError> {
        self.wait_with(job, poll, None, |_| {})
    }

    /// [`Client::wait`] giving up after `timeout` ([`ClientError::Timeout`]).
    pub fn wait_timeout(
        &self,
        job: JobId,
        poll: Duration,
        timeout: Duration,
    ) -> Result<JobStatus, ClientError> {
        self.wait_with(job, poll, Some(timeout), |_| {})
    }

    /// [`Client::wait`] with a deadline (or none) and a callback on every
    /// status seen (for a progress bar).
    pub fn wait_with(
        &self,
        job: JobId,
        poll: Duration,
        timeout: Option<Duration>,
        mut seen: impl FnMut(&JobStatus),
    ) -> Result<JobStatus, ClientError> {
        let start = Instant::now();
        loop {
            let st = self.status(job)?;
            seen(&st);
            match &st.state {
                JobState::Done { .. } => return Ok(st),
                JobState::Failed { code, message } => {
                    return Err(ClientError::JobFailed {
                        job,
                        code: code.clone(),
                        message: message.clone(),
                    })
                }
                JobState::Queued { .. } | JobState::Running { .. } => {}
            }
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                return Err(ClientError::Timeout(job));
            }
            std::thread::sleep(poll);
        }
    }

    /// The result bundle's bytes (`GET /v1/jobs/{id}/result`): the job
    /// stays until [`Client::delete`].
    pub fn result(&self, job: JobId) -> Result<Vec<u8>, ClientError> {
        let r = self
            .get(&format!("/v1/jobs/{job}/result"))
            .call()
            .map_err(Self::transport)?;
        Self::answer(r, RESULT_LIMIT)
    }

    /// The result as a [`Bundle`], checked.
    pub fn result_bundle(&self, job: JobId) -> Result<Bundle, ClientError> {
        let bytes = self.result(job)?;
        Ok(Bundle::from_bytes(Path::new("<result>"), &bytes)?)
    }

    /// Forgets a job and its result (`DELETE /v1/jobs/{id}`); a queued
    /// job is cancelled, a running one cannot be deleted (`not_ready`).
    pub fn delete(&self, job: JobId) -> Result<(), ClientError> {
        let r = self
            .authorized(self.agent.delete(self.url_of(&format!("/v1/jobs/{job}"))))
            .call()
            .map_err(Self::transport)?;
        Self::answer(r, JSON_LIMIT).map(drop)
    }
}

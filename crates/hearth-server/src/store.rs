//! The server's data folder. Every file is written with
//! [`hearth::crypto::files::write_atomic`] (a temporary name, sync,
//! rename), so a crash leaves the old file or the whole new one.
//!
//! ```text
//! DATA/lock                 held (advisory lock) while a server uses DATA
//! DATA/keys/KEYID.key       a server key registered on an open server
//! DATA/keys/TENANT/KEYID.key  a server key a tenant registered, as uploaded
//!                           (written only once it is checked)
//! DATA/tenants.json         tenants and token hashes (crate::tenants)
//! DATA/usage.json           bootstraps admitted today, by tenant
//! DATA/jobs/JOBID.job       an accepted job: header, JSON meta, request
//! DATA/jobs/JOBID.out       its result bundle (a hearth bundle file)
//! DATA/jobs/JOBID.err       its failure: JSON {code, message}
//! DATA/jobs/JOBID.runs      how many times it was started (a decimal)
//! ```
//!
//! A job file is the magic `HSJOB\0\0\x01`, the meta's length (u32 little
//! endian), the meta ([`JobMeta`], JSON) and the request body (program
//! file then bundle file). Once the result is written, the job file is
//! rewritten without the request. Deleting a job removes `.job` first,
//! so a crash halfway leaves a result without a job, which the next start
//! removes; a job without `.out` or `.err` is queued again at start,
//! unless `.runs` says it was started as often as the server allows (it
//! then fails as `crashed`: a job that kills the server cannot keep it
//! from coming up).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use hearth::crypto::files::{read_info, remove_durable, write_atomic, FileKind};
use hearth::{Bundle, KeyId, ParamsId};
use serde::{Deserialize, Serialize};

use crate::wire::{parse_key_id, ApiError, ErrorCode, JobId};

const JOB_MAGIC: [u8; 8] = *b"HSJOB\0\0\x01";
/// Largest meta a job file may state.
const MAX_META: u32 = 1 << 16;

/// What the server records about a job beside its request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobMeta {
    /// Submission order (the queue order after a restart).
    pub seq: u64,
    /// The key its bundle is under (16 hex digits).
    pub key_id: String,
    /// Bootstraps it runs.
    pub pbs: u64,
    /// Its depth.
    pub depth: u64,
    /// Its estimated memory, bytes.
    pub memory: u64,
    /// The tenant that submitted it (empty on an open server).
    #[serde(default)]
    pub tenant: String,
    /// When it was accepted (Unix milliseconds, so that `--queue-ttl`
    /// holds to the millisecond; 0 in files from before, and such a job
    /// never expires in the queue).
    #[serde(default)]
    pub submitted_ms: u64,
    /// The most bytes its result file can take (reserved against its
    /// tenant's storage from admission on; 0 in files from before).
    #[serde(default)]
    pub result_bytes: u64,
    /// Whether its result is kept with every ciphertext in full (posted
    /// with `?unpacked=true`, for later jobs' `?with=`); else it is packed
    /// where its outputs allow (false in files from before).
    #[serde(default)]
    pub unpacked: bool,
}

/// A key file found at start.
#[derive(Clone, Debug)]
pub struct StoredKey {
    /// The tenant that registered it (empty on an open server).
    pub tenant: String,
    /// Its id.
    pub key_id: KeyId,
    /// Its parameter set.
    pub params: ParamsId,
    /// Stored compressed.
    pub compressed: bool,
    /// File bytes.
    pub bytes: u64,
}

/// A job found at start.
#[derive(Clone, Debug)]
pub struct StoredJob {
    /// Its id.
    pub id: JobId,
    /// Its meta.
    pub meta: JobMeta,
    /// What it came to, if it finished.
    pub outcome: Option<Outcome>,
    /// When it finished (Unix seconds, its result's or failure's file
    /// time).
    pub finished: Option<u64>,
    /// How many times it was started ([`Store::start_attempt`]).
    pub attempts: u32,
}

/// What [`Store::recover`] found.
#[derive(Clone, Debug, Default)]
pub struct Recovered {
    /// The registered keys.
    pub keys: Vec<StoredKey>,
    /// The jobs, in submission order.
    pub jobs: Vec<StoredJob>,
    /// Words about files that were skipped.
    pub notes: Vec<String>,
}

/// How a stored job finished.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A result of this many bytes.
    Done(u64),
    /// A failure.
    Failed(ApiError),
}

/// Bootstraps admitted on one UTC day, by tenant (`usage.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Days since 1970-01-01 (UTC).
    pub day: u64,
    /// Bootstraps of the jobs admitted that day, by tenant.
    pub pbs: std::collections::BTreeMap<String, u64>,
}

#[derive(Serialize, Deserialize)]
struct Failure {
    code: String,
    message: String,
}

/// The data folder (see the module doc).
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    /// Held for the server's life: a second server on the same folder is
    /// refused.
    _lock: File,
}

fn io(what: impl std::fmt::Display, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Internal, format!("{what}: {e}"))
}

impl Store {
    /// Opens (creating) the folder and takes its lock.
    pub fn open(root: &Path) -> Result<Store, ApiError> {
        for d in [root.to_path_buf(), root.join("keys"), root.join("jobs")] {
            std::fs::create_dir_all(&d).map_err(|e| io(d.display(), e))?;
        }
        let lock_path = root.join("lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io(lock_path.display(), e))?;
        if lock.try_lock().is_err() {
            return Err(ApiError::new(
                ErrorCode::Internal,
                format!("{} is in use by another server", root.display()),
            ));
        }
        Ok(Store {
            root: root.to_path_buf(),
            _lock: lock,
        })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of `tenant`'s keys.
    fn keys_dir(&self, tenant: &str) -> PathBuf {
        let d = self.root.join("keys");
        if tenant.is_empty() {
            d
        } else {
            d.join(tenant)
        }
    }

    /// Where `tenant`'s key `id` is stored.
    pub fn key_path(&self, tenant: &str, id: KeyId) -> PathBuf {
        self.keys_dir(tenant).join(format!("{id}.key"))
    }

    /// The bootstraps admitted on the day `usage.json` is of (none if
    /// the file is missing or unreadable: the limit then counts from
    /// zero).
    pub fn read_usage(&self) -> Usage {
        std::fs::read(self.root.join("usage.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes `usage.json`.
    pub fn write_usage(&self, usage: &Usage) -> Result<(), ApiError> {
        let json = serde_json::to_vec(usage).map_err(|e| io("usage", e))?;
        write_atomic(&self.root.join("usage.json"), &json, false).map_err(|e| io("usage", e))
    }

    fn job_path(&self, id: JobId, ext: &str) -> PathBuf {
        self.root.join("jobs").join(format!("{id}.{ext}"))
    }

    /// Where a job's result is.
    pub fn result_path(&self, id: JobId) -> PathBuf {
        self.job_path(id, "out")
    }

    /// Writes an accepted job.
    pub fn write_job(&self, id: JobId, meta: &JobMeta, request: &[u8]) -> Result<(), ApiError> {
        let path = self.job_path(id, "job");
        write_atomic(&path, &encode_job(meta, request), false).map_err(|e| io("job", e))
    }

    /// Bytes of a job's file on disk (0 if it cannot be read).
    pub fn job_bytes(&self, id: JobId) -> u64 {
        std::fs::metadata(self.job_path(id, "job"))
            .map(|m| m.len())
            .unwrap_or(0)
    }

    /// Reads a job's meta and request.
    pub fn read_job(&self, id: JobId) -> Result<(JobMeta, Vec<u8>), ApiError> {
        let path = self.job_path(id, "job");
        let bytes = std::fs::read(&path).map_err(|e| io(format!("job {id}"), e))?;
        let (meta, start) = decode_meta(&bytes).map_err(|e| io(format!("job {id}"), e))?;
        Ok((meta, bytes[start..].to_vec()))
    }

    /// Writes a job's result (streamed: no second copy in memory), then
    /// drops its request from the job file; returns the result's bytes.
    pub fn write_result(
        &self,
        id: JobId,
        meta: &JobMeta,
        result: &Bundle,
    ) -> Result<u64, ApiError> {
        let n = result
            .save_len(&self.result_path(id))
            .map_err(|e| io("result", e))?;
        self.finished(id, meta)?;
        Ok(n)
    }

    /// Writes a job's failure, then drops its request from the job file.
    pub fn write_failure(&self, id: JobId, meta: &JobMeta, e: &ApiError) -> Result<(), ApiError> {
        let f = Failure {
            code: e.code.as_str().into(),
            message: e.message.clone(),
        };
        let json = serde_json::to_vec(&f).map_err(|e| io("failure", e))?;
        write_atomic(&self.job_path(id, "err"), &json, false).map_err(|e| io("failure", e))?;
        self.finished(id, meta)
    }

    /// Drops a finished job's request from its file, and its start count
    /// (which only matters while it may run again).
    fn finished(&self, id: JobId, meta: &JobMeta) -> Result<(), ApiError> {
        self.write_job(id, meta, &[])?;
        let _ = std::fs::remove_file(self.job_path(id, "runs"));
        Ok(())
    }

    /// Counts one more start of job `id` on disk, durably, before it
    /// runs; returns the count (1 at the first start).
    pub fn start_attempt(&self, id: JobId) -> Result<u32, ApiError> {
        let n = self.attempts(id) + 1;
        write_atomic(&self.job_path(id, "runs"), n.to_string().as_bytes(), false)
            .map_err(|e| io("job start", e))?;
        Ok(n)
    }

    /// How many times job `id` was started (0 if never, or unreadable).
    pub fn attempts(&self, id: JobId) -> u32 {
        std::fs::read_to_string(self.job_path(id, "runs"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Forgets a job: the job file first, then the rest, each removal
    /// made durable (a power loss cannot bring a deleted job back).
    pub fn delete_job(&self, id: JobId) -> Result<(), ApiError> {
        for ext in ["job", "out", "err", "runs"] {
            remove_durable(&self.job_path(id, ext))
                .map_err(|e| io(format!("deleting job {id}"), e))?;
        }
        Ok(())
    }

    /// Scans the folder at start: temporary files and unfinished uploads
    /// are removed, results without a job too; keys whose header does not
    /// match their name are skipped (and reported).
    pub fn recover(&self) -> Result<Recovered, ApiError> {
        let mut notes = Vec::new();
        let mut keys = Vec::new();
        let mut folders = vec![(String::new(), "keys".to_string())];
        for (path, name) in self.list("keys")? {
            if path.is_dir() {
                if crate::tenants::valid_name(&name) {
                    folders.push((name.clone(), format!("keys/{name}")));
                } else {
                    notes.push(format!("ignored {}", path.display()));
                }
            }
        }
        for (tenant, dir) in folders {
            for (path, name) in self.list(&dir)? {
                if path.is_dir() {
                    continue;
                }
                if name.contains(".tmp") || name.ends_with(".upload") {
                    let _ = std::fs::remove_file(&path);
                    continue;
                }
                let Some(id) = name.strip_suffix(".key").and_then(parse_key_id) else {
                    notes.push(format!("ignored {}", path.display()));
                    continue;
                };
                match read_info(&path) {
                    Ok(info)
                        if info.key_id == id
                            && matches!(
                                info.kind,
                                FileKind::ServerKey | FileKind::CompressedServerKey
                            ) =>
                    {
                        keys.push(StoredKey {
                            tenant: tenant.clone(),
                            key_id: id,
                            params: info.params,
                            compressed: info.kind == FileKind::CompressedServerKey,
                            bytes: std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
                        })
                    }
                    Ok(_) => notes.push(format!("{}: not the key its name says", path.display())),
                    Err(e) => notes.push(format!("{}: {e}", path.display())),
                }
            }
        }
        let entries = self.list("jobs")?;
        let has = |id: JobId, ext: &str| {
            let want = format!("{id}.{ext}");
            entries.iter().any(|(_, n)| *n == want)
        };
        let mut jobs = Vec::new();
        for (path, name) in &entries {
            if name.contains(".tmp") {
                let _ = std::fs::remove_file(path);
                continue;
            }
            let Some((stem, ext)) = name.split_once('.') else {
                notes.push(format!("ignored {}", path.display()));
                continue;
            };
            let Ok(id) = stem.parse::<JobId>() else {
                notes.push(format!("ignored {}", path.display()));
                continue;
            };
            match ext {
                "job" => {}
                "out" | "err" | "runs" => {
                    if !has(id, "job") {
                        // Deleted halfway before a crash.
                        let _ = std::fs::remove_file(path);
                    }
                    continue;
                }
                _ => {
                    notes.push(format!("ignored {}", path.display()));
                    continue;
                }
            }
            let meta = match read_meta(path) {
                Ok(m) => m,
                Err(e) => {
                    notes.push(format!("{}: {e}", path.display()));
                    continue;
                }
            };
            let outcome = if has(id, "out") {
                let n = std::fs::metadata(self.result_path(id))
                    .map(|m| m.len())
                    .unwrap_or(0);
                Some(Outcome::Done(n))
            } else if has(id, "err") {
                let f = std::fs::read(self.job_path(id, "err"))
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Failure>(&b).ok());
                Some(Outcome::Failed(match f {
                    Some(f) => ApiError::new(
                        ErrorCode::parse(&f.code).unwrap_or(ErrorCode::Internal),
                        f.message,
                    ),
                    None => ApiError::new(ErrorCode::Internal, "its failure record is unreadable"),
                }))
            } else {
                None
            };
            let finished = outcome.as_ref().and_then(|o| {
                let ext = if matches!(o, Outcome::Done(_)) {
                    "out"
                } else {
                    "err"
                };
                let t = std::fs::metadata(self.job_path(id, ext))
                    .ok()?
                    .modified()
                    .ok()?;
                Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs())
            });
            jobs.push(StoredJob {
                id,
                meta,
                outcome,
                finished,
                attempts: self.attempts(id),
            });
        }
        jobs.sort_by_key(|j| j.meta.seq);
        Ok(Recovered { keys, jobs, notes })
    }

    fn list(&self, dir: &str) -> Result<Vec<(PathBuf, String)>, ApiError> {
        let d = self.root.join(dir);
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&d).map_err(|e| io(d.display(), e))? {
            let entry = entry.map_err(|e| io(d.display(), e))?;
            if let Ok(name) = entry.file_name().into_string() {
                out.push((entry.path(), name));
            }
        }
        Ok(out)
    }
}

/// A job file's bytes.
pub fn encode_job(meta: &JobMeta, request: &[u8]) -> Vec<u8> {
    let json = serde_json::to_vec(meta).expect("plain data");
    let mut out = Vec::with_capacity(12 + json.len() + request.len());
    out.extend_from_slice(&JOB_MAGIC);
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(request);
    out
}

/// The meta of a job file and where its request starts.
pub fn decode_meta(bytes: &[u8]) -> Result<(JobMeta, usize), String> {
    if bytes.len() < 12 || bytes[..8] != JOB_MAGIC {
        return Err("not a job file".into());
    }
    let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if len > MAX_META || 12 + len as usize > bytes.len() {
        return Err("truncated job file".into());
    }
    let end = 12 + len as usize;
    let meta = serde_json::from_slice(&bytes[12..end]).map_err(|e| e.to_string())?;
    Ok((meta, end))
}

fn read_meta(path: &Path) -> Result<JobMeta, String> {
    let mut f = File::open(path).map_err(|e| e.to_string())?;
    let mut head = [0u8; 12];
    f.read_exact(&mut head).map_err(|e| e.to_string())?;
    let len = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes")).min(MAX_META + 1);
    let mut bytes = head.to_vec();
    bytes.resize(12 + len as usize, 0);
    f.read_exact(&mut bytes[12..]).map_err(|e| e.to_string())?;
    decode_meta(&bytes).map(|(m, _)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(seq: u64) -> JobMeta {
        JobMeta {
            seq,
            key_id: KeyId(5).to_string(),
            pbs: 7,
            depth: 3,
            memory: 1000,
            tenant: String::new(),
            submitted_ms: 0,
            result_bytes: 0,
            unpacked: false,
        }
    }

    #[test]
    fn job_files_round_trip_and_refuse_damage() {
        let bytes = encode_job(&meta(4), b"request");
        let (m, start) = decode_meta(&bytes).unwrap();
        assert_eq!(m, meta(4));
        assert_eq!(&bytes[start..], b"request");
        for cut in 0..start {
            assert!(decode_meta(&bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert!(decode_meta(&bad).is_err());
        let mut bad = bytes.clone();
        bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_meta(&bad).is_err());
    }

    #[test]
    fn recovery_orders_jobs_and_cleans_up() {
        let root = std::env::temp_dir().join(format!("hearth-server-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = Store::open(&root).unwrap();
        assert!(Store::open(&root).is_err(), "a second server is refused");
        let ids: Vec<JobId> = (0..4).map(|_| JobId::random()).collect();
        for (i, &id) in ids.iter().enumerate() {
            store.write_job(id, &meta(10 - i as u64), b"r").unwrap();
        }
        let empty = Bundle::new(ParamsId::Gates128, KeyId(5), Vec::new()).unwrap();
        store.start_attempt(ids[1]).unwrap();
        let result_bytes = store.write_result(ids[1], &meta(9), &empty).unwrap();
        assert_eq!(store.attempts(ids[1]), 0, "a finished job's count goes");
        assert_eq!(result_bytes, empty.to_bytes().unwrap().len() as u64);
        // Job 0 was started twice (two crashes, say), job 3 never.
        assert_eq!(store.start_attempt(ids[0]).unwrap(), 1);
        assert_eq!(store.start_attempt(ids[0]).unwrap(), 2);
        std::fs::write(
            root.join("jobs").join(format!("{}.runs", JobId::random())),
            b"1",
        )
        .unwrap();
        let e = ApiError::new(ErrorCode::JobFailed, "boom");
        store.write_failure(ids[2], &meta(8), &e).unwrap();
        // A result whose job was deleted halfway, a stray temporary file.
        let orphan = JobId::random();
        std::fs::write(store.result_path(orphan), b"x").unwrap();
        std::fs::write(root.join("jobs").join("x.job.tmp99"), b"x").unwrap();
        // Uploads a server before this one left half checked.
        std::fs::create_dir_all(root.join("keys/t")).unwrap();
        std::fs::write(root.join("keys/0000000000000001-x.upload"), b"x").unwrap();
        std::fs::write(root.join("keys/t/0000000000000001-x.upload"), b"x").unwrap();
        let Recovered { keys, jobs, notes } = store.recover().unwrap();
        assert!(keys.is_empty() && notes.is_empty(), "{notes:?}");
        let order: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        assert_eq!(order, [ids[3], ids[2], ids[1], ids[0]]);
        assert!(matches!(jobs[1].outcome, Some(Outcome::Failed(ref f)) if *f == e));
        assert!(matches!(jobs[2].outcome, Some(Outcome::Done(n)) if n == result_bytes));
        assert!(jobs[0].outcome.is_none() && jobs[3].outcome.is_none());
        assert_eq!((jobs[3].attempts, jobs[0].attempts), (2, 0));
        assert_eq!(store.read_job(ids[1]).unwrap().1, b"");
        assert_eq!(store.read_job(ids[0]).unwrap().1, b"r");
        assert!(!store.result_path(orphan).exists());
        assert_eq!(std::fs::read_dir(root.join("keys")).unwrap().count(), 1);
        assert_eq!(std::fs::read_dir(root.join("keys/t")).unwrap().count(), 0);
        // 4 jobs, a result, a failure, a start count; the orphan count gone.
        assert_eq!(std::fs::read_dir(root.join("jobs")).unwrap().count(), 7);
        store.delete_job(ids[1]).unwrap();
        store.delete_job(ids[1]).unwrap();
        store.delete_job(ids[0]).unwrap();
        assert_eq!(std::fs::read_dir(root.join("jobs")).unwrap().count(), 3);
        drop(store);
        assert!(Store::open(&root).is_ok(), "the lock goes with the server");
        let _ = std::fs::remove_dir_all(&root);
    }
}

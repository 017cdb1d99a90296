//! Tenants and their API tokens: who may use the server, and how much.
//!
//! The operator keeps them in `DATA/tenants.json` with `hearth server
//! token add | list | revoke` ([`edit`]); the server reads the file again
//! whenever it changes (it looks at every request), so a new token works
//! and a revoked one is refused from the next request on.
//!
//! A token is `hth_` + its id (16 hex digits, not secret: it names the
//! token in `token list` and `token revoke`) + `_` + 64 hex digits of
//! secret (32 bytes from the operating system). It is printed once; the
//! file keeps only the SHA3-256 of the secret, compared in constant time.
//!
//! A folder that never had a tenant is **open**: every request is served,
//! as one anonymous tenant. The server allows that only on a loopback
//! address, unless told `--insecure`.
//!
//! A folder that has had tenants stays **closed** to anyone without a
//! token: the first tenant also writes `DATA/tenants.required`, and while
//! that file exists a missing, emptied or unreadable tenants file refuses
//! every request ([`TenantError::Closed`]) instead of opening the server.
//! Only the operator's explicit `hearth server reopen` ([`reopen`])
//! removes every tenant and the marker together.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use hearth::crypto::files::write_atomic;
use serde::{Deserialize, Serialize};
use sha3::{Digest, Sha3_256};
use subtle::ConstantTimeEq;

/// The file's name in the data folder.
pub const FILE: &str = "tenants.json";
/// The marker of a folder that has had tenants (see the module doc).
pub const REQUIRED: &str = "tenants.required";
const LOCK: &str = "tenants.lock";
const PREFIX: &str = "hth_";

/// What one tenant may hold and spend. Each limit reached has its own
/// refusal: `key_limit`, `queue_limit`, `daily_limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantLimits {
    /// Most server keys registered at once.
    pub max_keys: usize,
    /// Most jobs queued or running at once.
    pub max_queue: usize,
    /// Most bootstraps of the jobs admitted in one UTC day (a job of no
    /// bootstrap counts one).
    pub max_pbs_per_day: u64,
}

impl Default for TenantLimits {
    /// 8 keys, 16 jobs, 100 million bootstraps a day.
    fn default() -> Self {
        TenantLimits {
            max_keys: 8,
            max_queue: 16,
            max_pbs_per_day: 100_000_000,
        }
    }
}

/// A token as the file keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// 16 hex digits: the token's public name.
    pub id: String,
    /// Whose it is.
    pub tenant: String,
    /// SHA3-256 of the secret, 64 hex digits.
    pub hash: String,
    /// When it was made (Unix seconds).
    pub created: u64,
    /// When it was revoked (Unix seconds), if it was.
    #[serde(default)]
    pub revoked: Option<u64>,
}

/// The tenants file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tenants {
    /// Tenants by name, with their limits.
    pub tenants: BTreeMap<String, TenantLimits>,
    /// Every token made, revoked ones included.
    pub tokens: Vec<TokenRecord>,
    /// Bytes a tenant may keep stored (keys, queued jobs, results), where
    /// it differs from the server's `--max-storage`.
    #[serde(default)]
    pub storage: BTreeMap<String, u64>,
}

/// What a revocation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Revoke<'a> {
    /// One token, by its id (the 16 hex digits after `hth_`).
    Token(&'a str),
    /// Every token of a tenant.
    Tenant(&'a str),
    /// A token id or a tenant name; refused when it is both.
    Either(&'a str),
}

/// Why the tenants file could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum TenantError {
    /// The file or its lock could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a tenants file.
    #[error("{path}: not a tenants file: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A name that cannot be a tenant's.
    #[error(
        "{0:?} is not a tenant name: 1 to 32 of a-z, 0-9, '-' and '_', starting with a letter or digit"
    )]
    BadName(String),
    /// `revoke` named no token and no tenant.
    #[error("no token and no tenant is named {0:?} (see `hearth server token list`)")]
    NotFound(String),
    /// `revoke` named something that is both a token id and a tenant.
    #[error(
        "{0:?} is both a token id and a tenant's name: say which (`--token-id` or `--tenant`)"
    )]
    Ambiguous(String),
    /// The folder has had tenants and its tenants file is missing, empty or
    /// unreadable: every request is refused until the operator restores it
    /// (or reopens the folder with `hearth server reopen`).
    #[error(
        "the folder has had tenants ({REQUIRED}) and {FILE} {0}: every request is refused \
         until it is restored, or until `hearth server reopen` opens the folder on purpose"
    )]
    Closed(String),
    /// A fleet's database could not be reached, read or changed
    /// ([`crate::fleet`]).
    #[error("the fleet's database: {0}")]
    Database(String),
}

/// Seconds since 1970-01-01, UTC (the server's clock for token times,
/// job times and the daily limit).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Milliseconds since 1970-01-01, UTC (when a job was queued: the queue
/// TTL is measured to the millisecond).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(secret: &str) -> [u8; 32] {
    Sha3_256::digest(secret.as_bytes()).into()
}

/// Whether `name` can name a tenant (it is also a folder name).
pub fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=32).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_')
}

/// A tenant's name and limits, as a request was authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant {
    /// The tenant's name; empty on an open server.
    pub name: String,
    /// Its limits; `None` on an open server (the server's own apply).
    pub limits: Option<TenantLimits>,
}

impl Tenant {
    /// The one tenant of an open server.
    pub fn anonymous() -> Tenant {
        Tenant {
            name: String::new(),
            limits: None,
        }
    }
}

/// Whether `data` has had tenants (its [`REQUIRED`] marker exists).
pub fn required(data: &Path) -> bool {
    data.join(REQUIRED).exists()
}

impl Tenants {
    /// The file in `data`, or no tenants if there is none. A folder that
    /// has had tenants ([`required`]) and has none now, or whose file is
    /// unreadable, is [`TenantError::Closed`]: never open by accident.
    pub fn load(data: &Path) -> Result<Tenants, TenantError> {
        let found = match Self::read(data) {
            Ok(Some(t)) if !t.is_open() => return Ok(t),
            Ok(found) => found,
            Err(e) if required(data) => {
                return Err(TenantError::Closed(format!("cannot be used ({e})")))
            }
            Err(e) => return Err(e),
        };
        match (found, required(data)) {
            (found, false) => Ok(found.unwrap_or_default()),
            (Some(_), true) => Err(TenantError::Closed("holds no tenant".into())),
            (None, true) => Err(TenantError::Closed("is missing".into())),
        }
    }

    /// The file in `data` as it is (`None`: there is none).
    fn read(data: &Path) -> Result<Option<Tenants>, TenantError> {
        let path = data.join(FILE);
        match std::fs::read(&path) {
            Ok(bytes) => Self::parse(&path, &bytes).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(TenantError::Io { path, source }),
        }
    }

    /// Parses and checks a tenants file's bytes.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Tenants, TenantError> {
        let malformed = |message: String| TenantError::Malformed {
            path: path.to_path_buf(),
            message,
        };
        let t: Tenants = serde_json::from_slice(bytes).map_err(|e| malformed(e.to_string()))?;
        t.check().map_err(malformed)?;
        Ok(t)
    }

    /// Checks what a file or a fleet's database holds: names that can be
    /// tenants', quotas and tokens of known tenants, tokens well formed.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(n) = self.tenants.keys().find(|n| !valid_name(n)) {
            return Err(format!("{n:?} is not a tenant name"));
        }
        if let Some(n) = self.storage.keys().find(|n| !self.tenants.contains_key(*n)) {
            return Err(format!("a storage quota for an unknown tenant {n:?}"));
        }
        for k in &self.tokens {
            if !self.tenants.contains_key(&k.tenant) {
                return Err(format!(
                    "token {} is of an unknown tenant {:?}",
                    k.id, k.tenant
                ));
            }
            if k.id.len() != 16 || k.hash.len() != 64 {
                return Err(format!("token {:?} is not well formed", k.id));
            }
        }
        Ok(())
    }

    /// Whether the server is open (no tenant: no token asked for).
    pub fn is_open(&self) -> bool {
        self.tenants.is_empty()
    }

    /// Makes a token for `tenant` (created with `limits`, or the
    /// defaults, if new; its limits set to `limits` if given) and returns
    /// it: the only time it is seen.
    pub fn add_token(
        &mut self,
        tenant: &str,
        limits: Option<TenantLimits>,
    ) -> Result<String, TenantError> {
        use rand::RngCore;
        if !valid_name(tenant) {
            return Err(TenantError::BadName(tenant.to_string()));
        }
        let entry = self.tenants.entry(tenant.to_string()).or_default();
        if let Some(l) = limits {
            *entry = l;
        }
        let mut raw = [0u8; 40];
        rand::rngs::OsRng.fill_bytes(&mut raw);
        let id = hex(&raw[..8]);
        let secret = hex(&raw[8..]);
        self.tokens.push(TokenRecord {
            id: id.clone(),
            tenant: tenant.to_string(),
            hash: hex(&digest(&secret)),
            created: now(),
            revoked: None,
        });
        Ok(format!("{PREFIX}{id}_{secret}"))
    }

    /// Revokes the token with id `name`, or every token of the tenant
    /// `name`; returns how many were live. A name that is both is refused
    /// ([`TenantError::Ambiguous`]): say which with
    /// [`Tenants::revoke_token`] or [`Tenants::revoke_tenant`].
    pub fn revoke(&mut self, name: &str) -> Result<usize, TenantError> {
        self.revoke_as(Revoke::Either(name))
    }

    /// Revokes the token with id `id`; returns 1 if it was live, else 0.
    pub fn revoke_token(&mut self, id: &str) -> Result<usize, TenantError> {
        self.revoke_as(Revoke::Token(id))
    }

    /// Revokes every token of `tenant`; returns how many were live.
    pub fn revoke_tenant(&mut self, tenant: &str) -> Result<usize, TenantError> {
        self.revoke_as(Revoke::Tenant(tenant))
    }

    fn revoke_as(&mut self, which: Revoke<'_>) -> Result<usize, TenantError> {
        let is_token = |n: &str| self.tokens.iter().any(|k| k.id == n);
        let is_tenant = |n: &str| self.tenants.contains_key(n);
        let (name, by_id) = match which {
            Revoke::Token(n) => (n, true),
            Revoke::Tenant(n) => (n, false),
            Revoke::Either(n) if is_token(n) && is_tenant(n) => {
                return Err(TenantError::Ambiguous(n.to_string()))
            }
            Revoke::Either(n) => (n, is_token(n)),
        };
        if !(if by_id {
            is_token(name)
        } else {
            is_tenant(name)
        }) {
            return Err(TenantError::NotFound(name.to_string()));
        }
        let t = now();
        let mut n = 0;
        for k in &mut self.tokens {
            let hit = if by_id {
                k.id == name
            } else {
                k.tenant == name
            };
            if hit && k.revoked.is_none() {
                k.revoked = Some(t);
                n += 1;
            }
        }
        Ok(n)
    }

    /// The bytes `tenant` may keep stored, where the file sets them.
    pub fn max_storage(&self, tenant: &str) -> Option<u64> {
        self.storage.get(tenant).copied()
    }

    /// The tenant a bearer token belongs to, if it is a live token here.
    /// The secret's hash is compared in constant time.
    pub fn authenticate(&self, token: &str) -> Option<Tenant> {
        let rest = token.strip_prefix(PREFIX)?;
        let (id, secret) = rest.split_once('_')?;
        let record = self.tokens.iter().find(|k| k.id == id)?;
        let want = record.hash.as_bytes();
        let got = hex(&digest(secret));
        if !bool::from(want.ct_eq(got.as_bytes())) || record.revoked.is_some() {
            return None;
        }
        Some(Tenant {
            name: record.tenant.clone(),
            limits: Some(*self.tenants.get(&record.tenant)?),
        })
    }

    /// Writes the file; a file with tenants writes the [`REQUIRED`]
    /// marker first, so that no crash between the two leaves a folder
    /// that had tenants open.
    fn save(&self, data: &Path) -> Result<(), TenantError> {
        if !self.is_open() {
            mark_required(data)?;
        }
        let mut json = serde_json::to_vec_pretty(self).expect("plain data");
        json.push(b'\n');
        write(&data.join(FILE), &json)
    }
}

/// What the [`REQUIRED`] marker says to whoever opens it.
const MARKER_TEXT: &str = "This folder has had tenants: the server refuses every request while \
tenants.json is missing or empty. `hearth server reopen --data DIR` opens it again on purpose.\n";

/// Writes the [`REQUIRED`] marker: `data` has tenants, and stays closed
/// to anyone without a token until [`reopen`].
pub fn mark_required(data: &Path) -> Result<(), TenantError> {
    if required(data) {
        return Ok(());
    }
    write(&data.join(REQUIRED), MARKER_TEXT.as_bytes())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), TenantError> {
    write_atomic(path, bytes, false).map_err(|e| TenantError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// Opens a folder on purpose (`hearth server reopen`): removes every
/// tenant and token, then the [`REQUIRED`] marker, under the file's lock.
/// Returns the names of the tenants removed. The server then serves
/// anyone who reaches it, on loopback only unless `--insecure`.
pub fn reopen(data: &Path) -> Result<Vec<String>, TenantError> {
    let _lock = lock(data)?;
    let was = match Tenants::read(data) {
        Ok(Some(t)) => t.tenants.into_keys().collect(),
        _ => Vec::new(),
    };
    Tenants::default().save(data)?;
    let marker = data.join(REQUIRED);
    match hearth::crypto::files::remove_durable(&marker) {
        Ok(_) => Ok(was),
        Err(source) => Err(TenantError::Io {
            path: marker,
            source,
        }),
    }
}

/// Takes the tenants file's lock (one editor at a time), released on drop.
fn lock(data: &Path) -> Result<File, TenantError> {
    let io = |path: PathBuf| move |source| TenantError::Io { path, source };
    std::fs::create_dir_all(data).map_err(io(data.to_path_buf()))?;
    let lock_path = data.join(LOCK);
    let lock = File::create(&lock_path).map_err(io(lock_path.clone()))?;
    lock.lock().map_err(io(lock_path))?;
    Ok(lock)
}

/// Changes the tenants file of `data` under its lock (one editor at a
/// time; a running server only reads it): reads it, calls `f`, and
/// writes it back atomically if `f` succeeds. A missing file starts
/// empty (so `token add` restores a closed folder whose file was lost);
/// an unreadable one is an error, never overwritten.
pub fn edit<T>(
    data: &Path,
    f: impl FnOnce(&mut Tenants) -> Result<T, TenantError>,
) -> Result<T, TenantError> {
    let _lock = lock(data)?;
    let mut t = Tenants::read(data)?.unwrap_or_default();
    let out = f(&mut t)?;
    t.save(data)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_authenticate_until_revoked() {
        let mut t = Tenants::default();
        assert!(t.is_open());
        let a = t.add_token("alice", None).unwrap();
        let b = t.add_token("bob", Some(TenantLimits::default())).unwrap();
        assert!(!t.is_open());
        assert_eq!(t.authenticate(&a).unwrap().name, "alice");
        assert_eq!(t.authenticate(&b).unwrap().name, "bob");
        // Any change to the secret, the id or the prefix is refused.
        for bad in [
            format!("{a}0"),
            a[..a.len() - 1].to_string(),
            a.replacen("hth_", "htx_", 1),
            a.replacen(&a[4..20], &b[4..20], 1),
            String::new(),
            "hth_".into(),
            "hth__".into(),
        ] {
            assert!(t.authenticate(&bad).is_none(), "{bad}");
        }
        let id = a[4..20].to_string();
        assert_eq!(t.revoke(&id).unwrap(), 1);
        assert!(t.authenticate(&a).is_none());
        assert_eq!(t.revoke("bob").unwrap(), 1);
        assert!(t.authenticate(&b).is_none());
        assert!(matches!(t.revoke("carol"), Err(TenantError::NotFound(_))));
        // The file keeps no secret.
        let json = serde_json::to_string(&t).unwrap();
        assert!(!json.contains(&a[21..]) && !json.contains(&b[21..]));
        assert_eq!(Tenants::parse(Path::new("t"), json.as_bytes()).unwrap(), t);
    }

    #[test]
    fn names_and_files_are_checked() {
        for ok in ["a", "team-1", "x_y", &"a".repeat(32)] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-a", "A", "a/b", "..", "a b", &"a".repeat(33), "é"] {
            assert!(!valid_name(bad), "{bad}");
            let mut t = Tenants::default();
            assert!(matches!(
                t.add_token(bad, None),
                Err(TenantError::BadName(_))
            ));
        }
        for bad in [
            &b"{"[..],
            br#"{"tenants": {"../x": {"max_keys": 1, "max_queue": 1, "max_pbs_per_day": 1}}, "tokens": []}"#,
            br#"{"tenants": {}, "tokens": [{"id": "0000000000000000", "tenant": "a", "hash": "00", "created": 0}]}"#,
        ] {
            assert!(matches!(
                Tenants::parse(Path::new("t"), bad),
                Err(TenantError::Malformed { .. })
            ));
        }
    }

    #[test]
    fn a_name_that_is_both_a_token_and_a_tenant_is_refused() {
        let mut t = Tenants::default();
        let a = t.add_token("alice", None).unwrap();
        let id = a[4..20].to_string();
        // A tenant named like alice's token id.
        let twin = t.add_token(&id, None).unwrap();
        assert!(matches!(t.revoke(&id), Err(TenantError::Ambiguous(_))));
        assert!(t.authenticate(&a).is_some() && t.authenticate(&twin).is_some());
        assert!(matches!(
            t.revoke_token("alice"),
            Err(TenantError::NotFound(_))
        ));
        assert_eq!(t.revoke_token(&id).unwrap(), 1);
        assert!(t.authenticate(&a).is_none() && t.authenticate(&twin).is_some());
        assert_eq!(t.revoke_tenant(&id).unwrap(), 1);
        assert!(t.authenticate(&twin).is_none());
    }

    /// A folder that has had tenants is closed, never open, once its file
    /// is removed, emptied or damaged; `edit` restores it, `reopen` opens
    /// it on purpose.
    #[test]
    fn a_folder_that_had_tenants_fails_closed() {
        let d = std::env::temp_dir().join(format!("hearth-tenants-closed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        assert!(Tenants::load(&d).unwrap().is_open(), "a new folder is open");
        edit(&d, |t| t.add_token("alice", None)).unwrap();
        assert!(required(&d));
        assert!(!Tenants::load(&d).unwrap().is_open());
        let file = d.join(FILE);
        let closed = |d: &Path| matches!(Tenants::load(d), Err(TenantError::Closed(_)));
        std::fs::rename(&file, d.join("moved")).unwrap();
        assert!(closed(&d), "missing");
        std::fs::write(&file, b"{\"tenants\": {}, \"tokens\": []}").unwrap();
        assert!(closed(&d), "emptied");
        std::fs::write(&file, b"").unwrap();
        assert!(closed(&d), "truncated");
        // An unreadable file is not overwritten by an edit.
        assert!(edit(&d, |t| t.add_token("bob", None)).is_err());
        std::fs::remove_file(&file).unwrap();
        edit(&d, |t| t.add_token("bob", None)).unwrap();
        let t = Tenants::load(&d).unwrap();
        assert_eq!(t.tenants.keys().collect::<Vec<_>>(), ["bob"]);
        assert_eq!(reopen(&d).unwrap(), ["bob"]);
        assert!(!required(&d));
        assert!(Tenants::load(&d).unwrap().is_open());
        let _ = std::fs::remove_dir_all(&d);
    }
}

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
//! A folder without the file (or with no tenant in it) is **open**: every
//! request is served, as one anonymous tenant. The server allows that only
//! on a loopback address, unless told `--insecure`.

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
    /// Most bootstraps of the jobs admitted in one UTC day.
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
}

/// Seconds since 1970-01-01, UTC (the server's clock for token times,
/// job times and the daily limit).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
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

impl Tenants {
    /// The file in `data`, or no tenants if there is none.
    pub fn load(data: &Path) -> Result<Tenants, TenantError> {
        let path = data.join(FILE);
        match std::fs::read(&path) {
            Ok(bytes) => Self::parse(&path, &bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tenants::default()),
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
        if let Some(n) = t.tenants.keys().find(|n| !valid_name(n)) {
            return Err(malformed(format!("{n:?} is not a tenant name")));
        }
        for k in &t.tokens {
            if !t.tenants.contains_key(&k.tenant) {
                return Err(malformed(format!(
                    "token {} is of an unknown tenant {:?}",
                    k.id, k.tenant
                )));
            }
            if k.id.len() != 16 || k.hash.len() != 64 {
                return Err(malformed(format!("token {:?} is not well formed", k.id)));
            }
        }
        Ok(t)
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
    /// `name`; returns how many were live.
    pub fn revoke(&mut self, name: &str) -> Result<usize, TenantError> {
        let t = now();
        let mut matched = false;
        let mut n = 0;
        for k in &mut self.tokens {
            if k.id == name || k.tenant == name {
                matched = true;
                if k.revoked.is_none() {
                    k.revoked = Some(t);
                    n += 1;
                }
            }
        }
        if !matched && !self.tenants.contains_key(name) {
            return Err(TenantError::NotFound(name.to_string()));
        }
        Ok(n)
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

    fn save(&self, data: &Path) -> Result<(), TenantError> {
        let path = data.join(FILE);
        let mut json = serde_json::to_vec_pretty(self).expect("plain data");
        json.push(b'\n');
        write_atomic(&path, &json, false).map_err(|e| TenantError::Io {
            path,
            source: std::io::Error::other(e.to_string()),
        })
    }
}

/// Changes the tenants file of `data` under its lock (one editor at a
/// time; a running server only reads it): loads it, calls `f`, and
/// writes it back atomically if `f` succeeds.
pub fn edit<T>(
    data: &Path,
    f: impl FnOnce(&mut Tenants) -> Result<T, TenantError>,
) -> Result<T, TenantError> {
    let io = |path: PathBuf| move |source| TenantError::Io { path, source };
    std::fs::create_dir_all(data).map_err(io(data.to_path_buf()))?;
    let lock_path = data.join(LOCK);
    let lock = File::create(&lock_path).map_err(io(lock_path.clone()))?;
    lock.lock().map_err(io(lock_path))?;
    let mut t = Tenants::load(data)?;
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
}

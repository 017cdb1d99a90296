//! `hearth server migrate --data DIR --store URL --blobs DIR`: a data
//! folder's tenants and tokens, keys, jobs (finished ones with their
//! results or failures, unfinished ones queued) and the day's usage,
//! moved into a fleet that holds none yet. The folder is read under its
//! lock (no server may run on it meanwhile) and left as it was.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::blobs::{BlobStore, Folder};
use super::db::Db;
use super::keys::blob_name;
use super::sql;
use crate::store::{Outcome, Recovered, Store};
use crate::tenants::{self, Tenants};

/// What [`migrate`] moved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Tenants (and their tokens: every one still works).
    pub tenants: usize,
    /// Server keys.
    pub keys: usize,
    /// Jobs that had finished (their results or failures kept).
    pub finished: usize,
    /// Jobs that had not: queued in the fleet, their starts counted.
    pub queued: usize,
    /// Files of the folder that were skipped, in words.
    pub notes: Vec<String>,
}

fn i(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// One row to write, its blob written already.
enum Row {
    Key {
        tenant: String,
        key_id: String,
        params: &'static str,
        compressed: bool,
        bytes: u64,
        blob: String,
    },
    Job {
        id: String,
        meta: crate::store::JobMeta,
        held: u64,
        state: &'static str,
        request_blob: Option<String>,
        result: Option<(String, u64)>,
        error: Option<(String, String)>,
        finished_s: Option<u64>,
        attempts: u32,
    },
}

/// Moves the data folder `data` into the fleet at `db` whose blobs are in the
/// folder `blobs`. Refused if the fleet has tenants, keys or jobs
/// already, or if the folder is closed (it has had tenants and lost its
/// file). Blobs are written first, then every row in one transaction: a
/// failure leaves the fleet as it was (and the blobs written removed).
pub fn migrate(data: &Path, db: &super::Database, blobs: &Path) -> Result<Migrated, String> {
    let store = Store::open(data).map_err(|e| e.message)?;
    let t = Tenants::load(data).map_err(|e| e.to_string())?;
    let required = tenants::required(data);
    let usage = store.read_usage();
    let Recovered { keys, jobs, notes } = store.recover().map_err(|e| e.message)?;
    let folder: Arc<dyn BlobStore> =
        Arc::new(Folder::open(blobs).map_err(|e| format!("{}: {e}", blobs.display()))?);
    let db = Db::connect(db, 2)?;
    db.block(async { check_empty(&db.client().await.map_err(|e| e.message)?).await })?;
    // This run's blobs have names of their own: a run that fails removes
    // only what it wrote.
    let run: String = {
        use rand::RngCore;
        let mut r = [0u8; 6];
        rand::rngs::OsRng.fill_bytes(&mut r);
        r.iter().map(|b| format!("{b:02x}")).collect()
    };
    let mut written = Vec::new();
    let moved = (|| {
        let mut rows = Vec::new();
        let mut stored: BTreeMap<String, u64> = BTreeMap::new();
        for k in &keys {
            let bytes = std::fs::read(store.key_path(&k.tenant, k.key_id))
                .map_err(|e| format!("key {}: {e}", k.key_id))?;
            let blob = blob_name(&k.tenant, k.key_id);
            folder.put(&blob, &bytes).map_err(|e| e.to_string())?;
            written.push(blob.clone());
            *stored.entry(k.tenant.clone()).or_default() += k.bytes;
            rows.push(Row::Key {
                tenant: k.tenant.clone(),
                key_id: k.key_id.to_string(),
                params: k.params.params().name,
                compressed: k.compressed,
                bytes: k.bytes,
                blob,
            });
        }
        let (mut finished, mut queued) = (0, 0);
        for j in &jobs {
            let id = j.id.to_string();
            let (state, held, request_blob, result, error) = match &j.outcome {
                Some(Outcome::Done(n)) => {
                    let blob = format!("results/{id}.m{run}.out");
                    let bytes = std::fs::read(store.result_path(j.id))
                        .map_err(|e| format!("job {id}'s result: {e}"))?;
                    folder.put(&blob, &bytes).map_err(|e| e.to_string())?;
                    written.push(blob.clone());
                    finished += 1;
                    ("done", *n, None, Some((blob, *n)), None)
                }
                Some(Outcome::Failed(e)) => {
                    finished += 1;
                    let error = (e.code.as_str().to_string(), e.message.clone());
                    ("failed", 0, None, None, Some(error))
                }
                None => {
                    let (_, request) = store.read_job(j.id).map_err(|e| e.message)?;
                    let blob = format!("jobs/{id}.m{run}.req");
                    folder.put(&blob, &request).map_err(|e| e.to_string())?;
                    written.push(blob.clone());
                    queued += 1;
                    let held = (request.len() as u64).saturating_add(j.meta.result_bytes);
                    ("queued", held, Some(blob), None, None)
                }
            };
            *stored.entry(j.meta.tenant.clone()).or_default() += held;
            rows.push(Row::Job {
                id,
                meta: j.meta.clone(),
                held,
                state,
                request_blob,
                result,
                error,
                finished_s: j.finished,
                attempts: j.attempts,
            });
        }
        db.block(write(&db, &t, required, &rows, &stored, &usage))?;
        Ok(Migrated {
            tenants: t.tenants.len(),
            keys: keys.len(),
            finished,
            queued,
            notes,
        })
    })();
    if moved.is_err() {
        for b in &written {
            let _ = folder.delete(b);
        }
    }
    moved
}

/// Refuses a fleet that holds keys or jobs already.
async fn check_empty(c: &impl deadpool_postgres::GenericClient) -> Result<(), String> {
    let row = sql::one(
        c,
        "SELECT (SELECT count(*) FROM keys), (SELECT count(*) FROM jobs)",
        &[],
    )
    .await
    .map_err(|e| e.to_string())?;
    if row.get::<_, i64>(0) > 0 || row.get::<_, i64>(1) > 0 {
        return Err(
            "the fleet holds keys or jobs already: a folder is migrated into an empty fleet".into(),
        );
    }
    Ok(())
}

/// Every row in one transaction, into a fleet that holds nothing yet.
async fn write(
    db: &Db,
    t: &Tenants,
    required: bool,
    rows: &[Row],
    stored: &BTreeMap<String, u64>,
    usage: &crate::store::Usage,
) -> Result<(), String> {
    let text = |e: tokio_postgres::Error| e.to_string();
    let mut c = db.client().await.map_err(|e| e.message)?;
    let tx = c.transaction().await.map_err(text)?;
    // Checked again with the tables locked to the end: nothing comes in
    // meanwhile.
    sql::exec(&tx, "LOCK TABLE keys, jobs IN EXCLUSIVE MODE", &[])
        .await
        .map_err(text)?;
    check_empty(&tx).await?;
    super::tenants::import(&tx, t, required)
        .await
        .map_err(|e| e.to_string())?;
    for r in rows {
        match r {
            Row::Key {
                tenant,
                key_id,
                params,
                compressed,
                bytes,
                blob,
            } => {
                sql::exec(
                    &tx,
                    "INSERT INTO keys (tenant, key_id, params, compressed, bytes, blob) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    &[tenant, key_id, params, compressed, &i(*bytes), blob],
                )
                .await
                .map_err(text)?;
            }
            Row::Job {
                id,
                meta: m,
                held,
                state,
                request_blob,
                result,
                error,
                finished_s,
                attempts,
            } => {
                let lane = if m.tenant.is_empty() {
                    format!("key:{}", m.key_id)
                } else {
                    format!("tenant:{}", m.tenant)
                };
                // A finished job's time from its file, else now.
                let finished =
                    (*state != "queued").then(|| i(finished_s.unwrap_or_else(crate::tenants::now)));
                sql::exec(
                    &tx,
                    "INSERT INTO jobs (id, tenant, lane, key_id, pbs, depth, memory, result_max, \
                     held, state, submitted_ms, finished_s, request_blob, result_blob, \
                     result_bytes, error_code, error_message, attempts, unpacked) VALUES ($1, $2, \
                     $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
                    &[
                        id,
                        &m.tenant,
                        &lane,
                        &m.key_id,
                        &i(m.pbs),
                        &i(m.depth),
                        &i(m.memory),
                        &i(m.result_bytes),
                        &i(*held),
                        state,
                        &i(m.submitted_ms),
                        &finished,
                        request_blob,
                        &result.as_ref().map(|r| r.0.clone()),
                        &result.as_ref().map(|r| i(r.1)),
                        &error.as_ref().map(|e| e.0.clone()),
                        &error.as_ref().map(|e| e.1.clone()),
                        &(*attempts as i32),
                        &m.unpacked,
                    ],
                )
                .await
                .map_err(text)?;
            }
        }
    }
    let today = sql::one(&tx, "SELECT extract(epoch from now())::bigint / 86400", &[])
        .await
        .map_err(text)?
        .get::<_, i64>(0);
    let mut tenants: Vec<&String> = stored.keys().collect();
    tenants.extend(usage.pbs.keys().filter(|k| !stored.contains_key(*k)));
    for tenant in tenants {
        let pbs = if i(usage.day) == today {
            usage.pbs.get(tenant).copied().unwrap_or(0)
        } else {
            0
        };
        sql::exec(
            &tx,
            "INSERT INTO usage (tenant, stored_bytes, day, pbs_today) VALUES ($1, $2, $3, $4)",
            &[
                tenant,
                &i(stored.get(tenant).copied().unwrap_or(0)),
                &today,
                &i(pbs),
            ],
        )
        .await
        .map_err(text)?;
    }
    tx.commit().await.map_err(text)
}

//! Statements through each connection's cache of prepared statements
//! (deadpool's `prepare_cached`): the fleet sends the same few statements
//! for every request and job, so each connection parses and plans each
//! once, not at every use.

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Error, Row};

/// A statement's parameters.
pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The rows of `sql`.
pub(super) async fn rows(
    c: &impl GenericClient,
    sql: &str,
    p: Params<'_>,
) -> Result<Vec<Row>, Error> {
    let st = c.prepare_cached(sql).await?;
    c.query(&st, p).await
}

/// The one row of `sql`.
pub(super) async fn one(c: &impl GenericClient, sql: &str, p: Params<'_>) -> Result<Row, Error> {
    let st = c.prepare_cached(sql).await?;
    c.query_one(&st, p).await
}

/// The row of `sql`, if any.
pub(super) async fn opt(
    c: &impl GenericClient,
    sql: &str,
    p: Params<'_>,
) -> Result<Option<Row>, Error> {
    let st = c.prepare_cached(sql).await?;
    c.query_opt(&st, p).await
}

/// Runs `sql`; the rows it changed.
pub(super) async fn exec(c: &impl GenericClient, sql: &str, p: Params<'_>) -> Result<u64, Error> {
    let st = c.prepare_cached(sql).await?;
    c.execute(&st, p).await
}

//! The rows an import writes for its build, machine and runs, inside its transaction.

use std::collections::BTreeMap;

use sqlx::{AssertSqlSafe, Row as _};

use crate::blocks::insert_sql;
use crate::{BuildMeta, Error, RunMeta, Tx, now, with_tx};

/// The builds and machines a group transaction has stored or checked, and where its series
/// block ids are: the group's later imports of the same build (same metadata) and machine
/// (same facts) skip their statements.
/// It is emptied when an import is undone, as the rows that import wrote are gone.
#[derive(Default)]
pub(crate) struct Known {
    builds: Vec<(BuildMeta, i64)>,
    machines: Vec<(String, BTreeMap<String, String>, i64)>,
    /// The id the next series block gets, once an import of the group has written blocks.
    pub(crate) next_block: Option<i64>,
}

impl Known {
    async fn build(&mut self, tx: &mut Tx, b: &BuildMeta) -> Result<i64, Error> {
        if let Some((_, id)) = self.builds.iter().find(|(k, _)| k == b) {
            return Ok(*id);
        }
        let id = upsert_build(tx, b).await?;
        self.builds.push((b.clone(), id));
        Ok(id)
    }

    /// The ids of the build and the machine of a run's metadata.
    pub(crate) async fn build_and_machine(
        &mut self,
        tx: &mut Tx,
        meta: &RunMeta,
    ) -> Result<(i64, i64), Error> {
        let build = self.build(tx, &meta.build).await?;
        let machine = self.machine(tx, &meta.machine, &meta.machine_facts).await?;
        Ok((build, machine))
    }

    async fn machine(
        &mut self,
        tx: &mut Tx,
        name: &str,
        facts: &BTreeMap<String, String>,
    ) -> Result<i64, Error> {
        if let Some((_, _, id)) = self
            .machines
            .iter()
            .find(|(n, f, _)| n == name && f == facts)
        {
            return Ok(*id);
        }
        let id = upsert_machine(tx, name, facts).await?;
        self.machines.push((name.to_string(), facts.clone(), id));
        Ok(id)
    }
}

async fn upsert_build(tx: &mut Tx, b: &BuildMeta) -> Result<i64, Error> {
    with_tx!(tx, |tx| {
        let row = sqlx::query(
            "SELECT id, commit_sha, kernel_version, config, cmdline FROM builds WHERE label = $1",
        )
        .bind(&b.label)
        .fetch_optional(&mut **tx)
        .await?;
        let Some(row) = row else {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO builds (label, commit_sha, kernel_version, config, cmdline, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(&b.label)
            .bind(&b.commit)
            .bind(&b.kernel_version)
            .bind(&b.config)
            .bind(&b.cmdline)
            .bind(now())
            .fetch_one(&mut **tx)
            .await?;
            return Ok(id);
        };
        let id: i64 = row.get(0);
        let fields = [
            (
                "commit",
                "commit_sha",
                &b.commit,
                row.get::<Option<String>, _>(1),
            ),
            (
                "kernel version",
                "kernel_version",
                &b.kernel_version,
                row.get(2),
            ),
            ("config", "config", &b.config, row.get(3)),
            ("boot command line", "cmdline", &b.cmdline, row.get(4)),
        ];
        for (what, col, given, stored) in fields {
            match (given, stored) {
                (Some(g), Some(s)) if *g != s => {
                    return Err(Error::Invalid(format!(
                        "build {:?} already has a different {what} ({}); use another label for a different build",
                        b.label,
                        if s.len() > 40 {
                            format!("{}...", &s[..s.floor_char_boundary(40)])
                        } else {
                            s
                        }
                    )));
                }
                (Some(g), None) => {
                    sqlx::query(AssertSqlSafe(format!(
                        "UPDATE builds SET {col} = $1 WHERE id = $2"
                    )))
                    .bind(g)
                    .bind(id)
                    .execute(&mut **tx)
                    .await?;
                }
                _ => {}
            }
        }
        Ok(id)
    })
}

/// Rows per multi-row insert of key/value pairs (three values each).
const ROWS_PER_STATEMENT: usize = 300;

async fn upsert_machine(
    tx: &mut Tx,
    name: &str,
    facts: &BTreeMap<String, String>,
) -> Result<i64, Error> {
    let id: i64 = with_tx!(tx, |tx| {
        match sqlx::query_scalar::<_, i64>("SELECT id FROM machines WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut **tx)
            .await?
        {
            Some(id) => id,
            None => {
                sqlx::query_scalar(
                    "INSERT INTO machines (name, created_at) VALUES ($1, $2) RETURNING id",
                )
                .bind(name)
                .bind(now())
                .fetch_one(&mut **tx)
                .await?
            }
        }
    });
    let rows: Vec<_> = facts.iter().map(|(k, v)| (id, k, v)).collect();
    insert_pairs(
        tx,
        "INSERT INTO machine_facts (machine_id, key, value) VALUES ",
        " ON CONFLICT (machine_id, key) DO UPDATE SET value = excluded.value",
        &rows,
    )
    .await?;
    Ok(id)
}

/// Inserts (id, key, value) rows in multi-row statements: `head`, the rows, then `tail`.
async fn insert_pairs(
    tx: &mut Tx,
    head: &str,
    tail: &str,
    rows: &[(i64, &String, &String)],
) -> Result<(), Error> {
    for part in rows.chunks(ROWS_PER_STATEMENT) {
        let mut sql = insert_sql(head, part.len(), 3, tx.is_postgres());
        sql.push_str(tail);
        with_tx!(tx, |t| {
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for &(id, k, v) in part {
                q = q.bind(id).bind(k).bind(v);
            }
            q.execute(&mut **t).await?;
        });
    }
    Ok(())
}

/// A run to insert: its build, machine, import and parameters.
pub(crate) struct NewRun<'a> {
    pub(crate) build_id: i64,
    pub(crate) machine_id: i64,
    pub(crate) meta: &'a RunMeta,
    pub(crate) params: &'a BTreeMap<String, String>,
    pub(crate) params_key: &'a str,
    pub(crate) import_hash: &'a str,
    pub(crate) created_at: i64,
}

/// Runs per multi-row insert (eight or nine values each).
const RUNS_PER_STATEMENT: usize = 200;

/// A run's columns after its id, in the order [`bind_run!`] binds them.
const RUN_COLUMNS: &str =
    "build_id, machine_id, benchmark, params_key, content_hash, import_hash, token_id, created_at";

/// Binds run `$r`'s columns after its id, in the order of [`RUN_COLUMNS`], with `$hash` its
/// content hash.
macro_rules! bind_run {
    ($q:expr, $r:expr, $hash:expr) => {
        $q.bind($r.build_id)
            .bind($r.machine_id)
            .bind(&$r.meta.benchmark)
            .bind($r.params_key)
            .bind($hash)
            .bind($r.import_hash)
            .bind($r.meta.token_id)
            .bind($r.created_at)
    };
}

/// Inserts `runs` and their parameters in multi-row statements; their ids, in order. On SQLite
/// the ids are given from `first_id` on (looked up when `None`) rather than returned: each
/// returned row is a message from the connection's thread, and a wake-up of the writer's.
pub(crate) async fn insert_runs(
    tx: &mut Tx,
    runs: &[NewRun<'_>],
    first_id: Option<i64>,
) -> Result<Vec<i64>, Error> {
    let postgres = tx.is_postgres();
    let mut ids = Vec::with_capacity(runs.len());
    let mut next = if postgres || runs.is_empty() {
        0
    } else {
        crate::engine::next_id(tx, first_id, crate::engine::next_id_sql!("runs")).await?
    };
    let content_hash = |r: &NewRun<'_>| crate::meta::content_hash(r.import_hash, r.params_key);
    for part in runs.chunks(RUNS_PER_STATEMENT) {
        if !postgres {
            let head = format!("INSERT INTO runs (id, {RUN_COLUMNS}) VALUES ");
            let sql = insert_sql(&head, part.len(), 9, false);
            with_tx!(tx, |t| {
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for r in part {
                    q = bind_run!(q.bind(next), r, content_hash(r));
                    ids.push(next);
                    next += 1;
                }
                q.execute(&mut **t).await?;
            });
            continue;
        }
        let head = format!("INSERT INTO runs ({RUN_COLUMNS}) VALUES ");
        let mut sql = insert_sql(&head, part.len(), 8, postgres);
        sql.push_str(" RETURNING id, import_hash, params_key");
        let mut made: Vec<(i64, String, String)> = with_tx!(tx, |t| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql));
            for r in part {
                q = bind_run!(q, r, content_hash(r));
            }
            q.fetch_all(&mut **t).await?
        });
        // PostgreSQL does not promise RETURNING's row order: rows are matched by (import,
        // params) and, for a pair given twice, by id (ids are handed out in the order of VALUES).
        made.sort_unstable();
        for r in part {
            let at = made
                .iter()
                .position(|(_, h, k)| h == r.import_hash && k == r.params_key)
                .ok_or_else(|| Error::Write("an inserted run was not returned".into()))?;
            ids.push(made.remove(at).0);
        }
    }
    let params: Vec<(i64, &String, &String)> = runs
        .iter()
        .zip(&ids)
        .flat_map(|(r, &id)| r.params.iter().map(move |(k, v)| (id, k, v)))
        .collect();
    insert_pairs(
        tx,
        "INSERT INTO run_params (run_id, key, value) VALUES ",
        "",
        &params,
    )
    .await?;
    Ok(ids)
}

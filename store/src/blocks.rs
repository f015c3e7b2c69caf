//! Series gathered into blocks before they are written: one `series_block` row per (run,
//! metric, unit, direction, label, statistic) holding every scope's samples. A per-CPU profile
//! feeds each block from one file per CPU, so the blocks of a run are only complete at its end:
//! they are held here, compactly, until then.

use std::fmt::Write as _;

use ingest::model::FastMap;
use sqlx::AssertSqlSafe;

use crate::write::{Row, pack};
use crate::{Error, Tx, with_tx};

/// Series per block at most: a series id is (block id << 16) | its index.
pub(crate) const MAX_SERIES: usize = 1 << 16;
/// Block rows per INSERT statement (10 bound values each). Small statements are faster through
/// sqlx: 400 rows a statement took 2.7x as long to write a 57,000-block profile as 25 do.
const ROWS_PER_STMT: usize = 25;

/// (run, metric, unit, direction, label, statistic).
type BlockKey = (i64, [u32; 5]);

struct Block {
    key: BlockKey,
    scopes: Vec<u32>,
    /// (index of the series in `scopes`, value) in arrival order.
    vals: Vec<(u32, f64)>,
    /// Whether `vals` is already ordered by series index.
    ordered: bool,
}

/// The series of an import, by slot (the import's own series numbering, from 0).
#[derive(Default)]
pub(crate) struct Blocks {
    index: FastMap<BlockKey, u32>,
    blocks: Vec<Block>,
    /// Slot -> (block, index in the block).
    slots: Vec<(u32, u32)>,
    /// Samples per slot.
    lens: Vec<u32>,
}

impl Blocks {
    /// Adds a new series as slot `slot` (slots are added in increasing order, without gaps).
    pub(crate) fn add(&mut self, slot: usize, r: &Row) {
        let key = [r.metric, r.unit, r.direction, r.label, r.statistic];
        self.add_series(slot, r.run_id, key, r.scope, &r.vals);
    }

    /// [`Blocks::add`] of a series that is the last its block receives (a per-CPU total):
    /// its block grows by exactly what it needs. The 65th series of a 64-CPU block would
    /// otherwise double it, and a profile has tens of thousands of such blocks.
    pub(crate) fn add_last(&mut self, slot: usize, r: &Row) {
        let key = (
            r.run_id,
            [r.metric, r.unit, r.direction, r.label, r.statistic],
        );
        if let Some(&b) = self.index.get(&key) {
            let block = &mut self.blocks[b as usize];
            if block.scopes.len() < MAX_SERIES {
                block.scopes.reserve_exact(1);
                block.vals.reserve_exact(r.vals.len());
            }
        }
        self.add(slot, r);
    }

    /// [`Blocks::add`] from the parts of a row: `key` is (metric, unit, direction, label,
    /// statistic).
    pub(crate) fn add_series(
        &mut self,
        slot: usize,
        run_id: i64,
        key: [u32; 5],
        scope: u32,
        vals: &[f64],
    ) {
        debug_assert_eq!(slot, self.slots.len());
        let key = (run_id, key);
        let b = match self.index.get(&key) {
            Some(&b) if self.blocks[b as usize].scopes.len() < MAX_SERIES => b,
            _ => {
                let b = self.blocks.len() as u32;
                self.blocks.push(Block {
                    key,
                    scopes: Vec::new(),
                    vals: Vec::new(),
                    ordered: true,
                });
                self.index.insert(key, b);
                b
            }
        };
        let block = &mut self.blocks[b as usize];
        let pos = block.scopes.len() as u32;
        block.scopes.push(scope);
        self.slots.push((b, pos));
        self.lens.push(0);
        self.append(slot, vals);
    }

    /// Adds a new series as slot `slot` in a block of its own.
    pub(crate) fn add_alone(&mut self, slot: usize, r: &Row) {
        self.index.clear();
        self.add(slot, r);
        self.index.clear();
    }

    /// Adds samples to the series of `slot`.
    pub(crate) fn append(&mut self, slot: usize, values: &[f64]) {
        let (b, pos) = self.slots[slot];
        let block = &mut self.blocks[b as usize];
        if block.vals.last().is_some_and(|&(p, _)| p > pos) {
            block.ordered = false;
        }
        block.vals.extend(values.iter().map(|&v| (pos, v)));
        self.lens[slot] += values.len() as u32;
    }

    /// Samples of the series of `slot` so far.
    pub(crate) fn len(&self, slot: usize) -> usize {
        self.lens[slot] as usize
    }

    /// (run, metric) of every block of whole-run series (no label, no statistic) holding a
    /// series of `scope`, sorted; none when `scope` is `None`.
    pub(crate) fn whole_run_with_scope(&self, scope: Option<u32>) -> Vec<(i64, u32)> {
        let Some(scope) = scope else {
            return Vec::new();
        };
        let mut out: Vec<(i64, u32)> = self
            .blocks
            .iter()
            .filter(|b| b.key.1[3] == 0 && b.key.1[4] == 0 && b.scopes.contains(&scope))
            .map(|b| (b.key.0, b.key.1[0]))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Slots used so far.
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The blocks as they will be stored (each series' samples together, packed), computed
    /// before the write transaction so that it only inserts.
    pub(crate) fn encode(self) -> Encoded {
        Encoded {
            blocks: self
                .blocks
                .iter()
                .map(|b| {
                    let (counts, vals) = encode(b);
                    EncodedBlock {
                        key: b.key,
                        scopes: b.scopes.clone(),
                        counts,
                        vals,
                    }
                })
                .collect(),
        }
    }
}

/// Binds a block's columns from `run_id` to `vals`, as `series_block` and `pending_blocks`
/// both hold them (a macro: each engine's query is its own type).
macro_rules! bind_block {
    ($q:expr, $b:expr) => {
        bind_block!($q, $b.key.0, $b)
    };
    ($q:expr, $run:expr, $b:expr) => {{
        let b = $b;
        let [metric, unit, direction, label, statistic] = b.key.1;
        $q.bind($run)
            .bind(metric as i64)
            .bind(unit as i64)
            .bind(direction as i64)
            .bind(nonzero(label))
            .bind(nonzero(statistic))
            .bind(series_json(&b.scopes, &b.counts))
            .bind(b.counts.iter().map(|&c| i64::from(c)).sum::<i64>())
            .bind(&b.vals[..])
    }};
}

/// A block ready to store: its key, each series' scope and sample count, the packed samples.
pub(crate) struct EncodedBlock {
    key: BlockKey,
    scopes: Vec<u32>,
    counts: Vec<u32>,
    vals: Vec<u8>,
}

/// The blocks of an import, encoded ([`Blocks::encode`]).
pub(crate) struct Encoded {
    blocks: Vec<EncodedBlock>,
}

impl Encoded {
    /// Renumbers the blocks before they are written: run `i` of the import becomes `runs[i]`,
    /// and name ids found in `names` become what it maps them to.
    pub(crate) fn renumber(&mut self, runs: &[i64], names: Option<&FastMap<u32, u32>>) {
        for b in &mut self.blocks {
            b.key.0 = runs[b.key.0 as usize];
        }
        if let Some(names) = names {
            self.rename(names);
        }
    }

    /// The name ids found in `names` become what it maps them to (runs keep their numbers).
    pub(crate) fn rename(&mut self, names: &FastMap<u32, u32>) {
        let name = |id: u32| names.get(&id).copied().unwrap_or(id);
        for b in &mut self.blocks {
            for id in &mut b.key.1 {
                *id = name(*id);
            }
            for s in &mut b.scopes {
                *s = name(*s);
            }
        }
    }

    /// Blocks in all.
    pub(crate) fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Stages blocks `range` (numbered from 0 in this import) in `pending_blocks` under
    /// `import_key`, with the import's run numbers; [`Encoded::move_staged`] later moves them.
    pub(crate) async fn stage(
        &self,
        tx: &mut Tx,
        import_key: &str,
        range: std::ops::Range<usize>,
        created_at: i64,
    ) -> Result<(), Error> {
        let start = range.start;
        for (c, chunk) in self.blocks[range].chunks(ROWS_PER_STMT).enumerate() {
            let sql = insert_sql(
                "INSERT INTO pending_blocks (import_key, seq, run_slot, metric_id, unit_id, direction_id, label_id, statistic_id, series, n, vals, created_at) VALUES ",
                chunk.len(),
                12,
                tx.is_postgres(),
            );
            with_tx!(&mut *tx, |t| {
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for (i, b) in chunk.iter().enumerate() {
                    q = q
                        .bind(import_key)
                        .bind((start + c * ROWS_PER_STMT + i) as i64);
                    q = bind_block!(q, b).bind(created_at);
                }
                q.execute(&mut **t).await?;
            });
        }
        Ok(())
    }

    /// Moves the blocks staged under `import_key` into `series_block` (ids after the highest
    /// stored one, in staging order), run `i` of the import becoming `runs[i]`, and deletes
    /// them from `pending_blocks`: inside the import's last transaction.
    pub(crate) async fn move_staged(
        tx: &mut Tx,
        import_key: &str,
        runs: &[i64],
    ) -> Result<(), Error> {
        let base =
            crate::engine::next_id(tx, None, crate::engine::next_id_sql!("series_block")).await?;
        with_tx!(&mut *tx, |t| {
            for (slot, run_id) in runs.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO series_block (id, run_id, metric_id, unit_id, direction_id, label_id, statistic_id, series, n, vals) \
                     SELECT $1 + seq, $2, metric_id, unit_id, direction_id, label_id, statistic_id, series, n, vals \
                     FROM pending_blocks WHERE import_key = $3 AND run_slot = $4 ORDER BY seq",
                )
                .bind(base)
                .bind(run_id)
                .bind(import_key)
                .bind(slot as i64)
                .execute(&mut **t)
                .await?;
            }
            sqlx::query("DELETE FROM pending_blocks WHERE import_key = $1")
                .bind(import_key)
                .execute(&mut **t)
                .await?;
        });
        Ok(())
    }

    /// Writes every block (renumbered: its run is a stored one) through multi-row statements,
    /// with ids from `next` on; see [`write_blocks`].
    pub(crate) async fn write(&self, tx: &mut Tx, next: Option<i64>) -> Result<i64, Error> {
        let rows: Vec<(i64, &EncodedBlock)> = self.blocks.iter().map(|b| (b.key.0, b)).collect();
        write_blocks(tx, next, &rows).await
    }

    /// The blocks with the stored id of their run, run `i` of the import being `runs[i]`
    /// (the blocks themselves are left as they are).
    pub(crate) fn with_runs<'a>(
        &'a self,
        runs: &'a [i64],
    ) -> impl Iterator<Item = (i64, &'a EncodedBlock)> + 'a {
        self.blocks.iter().map(|b| (runs[b.key.0 as usize], b))
    }
}

/// Writes blocks, each with the id of its run, through multi-row statements, with ids from
/// `next` on (the highest stored one is read when `None`). Returns the id after the last one
/// written: the next import of a group transaction, which holds the write turn, starts there.
pub(crate) async fn write_blocks(
    tx: &mut Tx,
    next: Option<i64>,
    rows: &[(i64, &EncodedBlock)],
) -> Result<i64, Error> {
    let mut next =
        crate::engine::next_id(tx, next, crate::engine::next_id_sql!("series_block")).await?;
    if let crate::engine::TxInner::Postgres(t) = &mut tx.inner {
        write_unnest(rows, next, t).await?;
        return Ok(next + rows.len() as i64);
    }
    for chunk in rows.chunks(ROWS_PER_STMT) {
        let sql = insert_sql(
            "INSERT INTO series_block (id, run_id, metric_id, unit_id, direction_id, label_id, statistic_id, series, n, vals) VALUES ",
            chunk.len(),
            10,
            tx.is_postgres(),
        );
        with_tx!(&mut *tx, |t| {
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for &(run, b) in chunk {
                q = bind_block!(q.bind(next), run, b);
                next += 1;
            }
            q.execute(&mut **t).await?;
        });
    }
    Ok(next)
}

/// Block rows per insert on PostgreSQL, bound as one array per column: the statement is the
/// same whatever the rows (parsed and planned once), and a 3,200-sample upload's 1,600 blocks
/// go in one round trip instead of 64 statements of 25 rows.
const ROWS_PER_UNNEST: usize = 5000;

/// [`write_blocks`] on PostgreSQL: the blocks as columns of arrays, `UNNEST`ed into rows.
async fn write_unnest(
    rows: &[(i64, &EncodedBlock)],
    mut next: i64,
    t: &mut sqlx::Transaction<'static, sqlx::Postgres>,
) -> Result<(), Error> {
    for chunk in rows.chunks(ROWS_PER_UNNEST) {
        let len = chunk.len();
        let mut ids = Vec::with_capacity(len);
        let mut runs = Vec::with_capacity(len);
        let [mut metrics, mut units, mut directions] = [(); 3].map(|()| Vec::with_capacity(len));
        let [mut labels, mut statistics] = [(); 2].map(|()| Vec::with_capacity(len));
        let mut series = Vec::with_capacity(len);
        let mut counts = Vec::with_capacity(len);
        let mut vals: Vec<&[u8]> = Vec::with_capacity(len);
        for &(run, b) in chunk {
            let [metric, unit, direction, label, statistic] = b.key.1;
            ids.push(next);
            next += 1;
            runs.push(run);
            metrics.push(i64::from(metric));
            units.push(i64::from(unit));
            directions.push(i64::from(direction));
            labels.push(nonzero(label));
            statistics.push(nonzero(statistic));
            series.push(series_json(&b.scopes, &b.counts));
            counts.push(b.counts.iter().map(|&c| i64::from(c)).sum::<i64>());
            vals.push(&b.vals);
        }
        sqlx::query(
            "INSERT INTO series_block (id, run_id, metric_id, unit_id, direction_id, label_id, statistic_id, series, n, vals) \
             SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::int8[], $8::text[], $9::int8[], $10::bytea[])",
        )
        .bind(&ids)
        .bind(&runs)
        .bind(&metrics)
        .bind(&units)
        .bind(&directions)
        .bind(&labels)
        .bind(&statistics)
        .bind(&series)
        .bind(&counts)
        .bind(&vals)
        .execute(&mut **t)
        .await?;
    }
    Ok(())
}

/// `head` followed by `rows` groups of `cols` placeholders: `($1,$2),($3,$4)` when
/// `numbered` (PostgreSQL), `(?,?),(?,?)` otherwise (SQLite, see [`crate::engine`]).
pub(crate) fn insert_sql(head: &str, rows: usize, cols: usize, numbered: bool) -> String {
    let mut sql = String::with_capacity(head.len() + rows * cols * 5);
    sql.push_str(head);
    for i in 0..rows {
        sql.push_str(if i == 0 { "(" } else { ",(" });
        for c in 1..=cols {
            let sep = if c == 1 { "" } else { "," };
            if numbered {
                let _ = write!(sql, "{sep}${}", i * cols + c);
            } else {
                let _ = write!(sql, "{sep}?");
            }
        }
        sql.push(')');
    }
    sql
}

fn nonzero(id: u32) -> Option<i64> {
    (id != 0).then_some(id as i64)
}

/// The `series` JSON of a block: [scope name id, sample count] per series, compact (history
/// reads find a scope in it by text: `history_batch::has_scope`).
fn series_json(scopes: &[u32], counts: &[u32]) -> String {
    let mut series = String::with_capacity(scopes.len() * 12 + 2);
    series.push('[');
    for (i, (s, n)) in scopes.iter().zip(counts).enumerate() {
        if i > 0 {
            series.push(',');
        }
        let _ = write!(series, "[{s},{n}]");
    }
    series.push(']');
    series
}

/// Each series' sample count and the block's packed samples, each series' samples together in
/// arrival order.
fn encode(b: &Block) -> (Vec<u32>, Vec<u8>) {
    let mut counts = vec![0u32; b.scopes.len()];
    for &(p, _) in &b.vals {
        counts[p as usize] += 1;
    }
    let vals: Vec<f64> = if b.ordered {
        b.vals.iter().map(|&(_, v)| v).collect()
    } else {
        let mut sorted = b.vals.clone();
        sorted.sort_by_key(|&(p, _)| p);
        sorted.into_iter().map(|(_, v)| v).collect()
    };
    (counts, pack(&vals))
}

/// The series of a stored block: (scope name id, sample count) per series, in order.
pub(crate) fn decode_series(json: &str) -> Result<Vec<(u32, usize)>, Error> {
    serde_json::from_str(json).map_err(|e| Error::Corrupt(format!("series of a block: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::unpack;

    #[test]
    fn a_scope_entry_is_found_in_the_series_text_of_its_blocks_only() {
        use crate::history_batch::scope_entry;
        let json = series_json(&[13, 3, 130], &[2, 1, 1]);
        assert_eq!(json, "[[13,2],[3,1],[130,1]]");
        for id in [13, 3, 130] {
            assert!(json.contains(&scope_entry(id)), "{id}");
        }
        // Ids that are a prefix, a suffix or a count of another are not found.
        for id in [1, 2, 30, 31] {
            assert!(!json.contains(&scope_entry(id)), "{id}");
        }
        assert_eq!(decode_series(&json).unwrap(), [(13, 2), (3, 1), (130, 1)]);
    }

    fn row(run_id: i64, metric: u32, scope: u32, vals: &[f64]) -> Row {
        Row {
            run_id,
            metric,
            unit: 1,
            direction: 2,
            scope,
            label: 0,
            statistic: 0,
            vals: vals.to_vec(),
        }
    }

    #[test]
    fn a_key_gathers_its_scopes_and_late_samples_join_their_series() {
        let mut b = Blocks::default();
        b.add(0, &row(1, 10, 20, &[1.0]));
        b.add(1, &row(1, 10, 21, &[2.0]));
        b.add(2, &row(1, 11, 20, &[5.0]));
        b.add(3, &row(2, 10, 20, &[6.0]));
        // More samples of the first series, after the second one's.
        b.append(0, &[3.0, 4.0]);
        assert_eq!((b.len(0), b.len(1), b.slots()), (3, 1, 4));
        assert_eq!(b.blocks.len(), 3, "one block per (run, metric, ...)");
        let (counts, vals) = encode(&b.blocks[0]);
        let series = series_json(&b.blocks[0].scopes, &counts);
        assert_eq!(series, "[[20,3],[21,1]]");
        assert_eq!(unpack(&vals).unwrap(), [1.0, 3.0, 4.0, 2.0]);
        assert_eq!(decode_series(&series).unwrap(), [(20, 3), (21, 1)]);
    }

    #[test]
    fn alone_means_a_block_each() {
        let mut b = Blocks::default();
        b.add_alone(0, &row(1, 10, 20, &[1.0]));
        b.add_alone(1, &row(1, 10, 21, &[2.0]));
        assert_eq!(b.blocks.len(), 2);
    }
}

-- A large import's series blocks, written in bounded batches (each its own short write
-- transaction, so that other uploads commit in between) before its runs exist. The import's
-- last transaction moves them into series_block under their runs and deletes them: readers
-- never see a run without all of its series. Rows left by an import that died midway are
-- removed when a day old.
CREATE TABLE pending_blocks (
    import_key   TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    run_slot     INTEGER NOT NULL,
    metric_id    INTEGER NOT NULL,
    unit_id      INTEGER NOT NULL,
    direction_id INTEGER NOT NULL,
    label_id     INTEGER,
    statistic_id INTEGER,
    series       TEXT NOT NULL,
    n            INTEGER NOT NULL,
    vals         BLOB NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (import_key, seq)
) WITHOUT ROWID;

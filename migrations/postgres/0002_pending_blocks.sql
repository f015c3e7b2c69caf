-- A large import's series blocks, written in bounded batches (each its own short write
-- transaction, so that other uploads commit in between) before its runs exist. The import's
-- last transaction moves them into series_block under their runs and deletes them: readers
-- never see a run without all of its series. Rows left by an import that died midway are
-- removed when a day old.
CREATE TABLE pending_blocks (
    import_key   TEXT COLLATE "C" NOT NULL,
    seq          BIGINT NOT NULL,
    run_slot     BIGINT NOT NULL,
    metric_id    BIGINT NOT NULL,
    unit_id      BIGINT NOT NULL,
    direction_id BIGINT NOT NULL,
    label_id     BIGINT,
    statistic_id BIGINT,
    series       TEXT NOT NULL,
    n            BIGINT NOT NULL,
    vals         BYTEA NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (import_key, seq)
);

-- Series stored in blocks: one row per (run, metric, unit, direction, label, statistic) holding
-- every scope's samples, so that a per-CPU profile (19,043 functions x 64 CPUs) is some 10^5
-- rows instead of 5 * 10^6.
--
-- `series` is a JSON array with one [scope name id, sample count] pair per series, in the
-- order their samples follow each other in `vals` (little-endian f64); `n` is the block's total.
-- A series' id is (block id << 16) | its index in `series`; a block holds at most 65,536 series.
-- Existing series become blocks of one series each (the same samples, the same key).

CREATE TABLE series_block (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric_id    INTEGER NOT NULL REFERENCES names(id),
    unit_id      INTEGER NOT NULL REFERENCES names(id),
    direction_id INTEGER NOT NULL REFERENCES names(id),
    label_id     INTEGER REFERENCES names(id),
    statistic_id INTEGER REFERENCES names(id),
    series       TEXT NOT NULL,
    n            INTEGER NOT NULL DEFAULT 0,
    vals         BLOB NOT NULL DEFAULT x''
);
CREATE INDEX series_block_run ON series_block(run_id, metric_id);

INSERT INTO series_block (id, run_id, metric_id, unit_id, direction_id, label_id, statistic_id, series, n, vals)
SELECT id, run_id, metric_id, unit_id, direction_id, label_id, statistic_id,
       json_array(json_array(scope_id, n)), n, vals
FROM series_data;

DROP VIEW series;
DROP INDEX series_data_run;
DROP TABLE series_data;

-- Series as they read before: the key's strings, and `n`. Every read of series keys uses it.
CREATE VIEW series AS
SELECT (b.id << 16) | j.key AS id, b.run_id, m.name AS metric, u.name AS unit, d.name AS direction,
       sc.name AS scope, l.name AS label, st.name AS statistic, j.value ->> '$[1]' AS n
FROM series_block b
JOIN json_each(b.series) j
JOIN names m ON m.id = b.metric_id
JOIN names u ON u.id = b.unit_id
JOIN names d ON d.id = b.direction_id
JOIN names sc ON sc.id = j.value ->> '$[0]'
LEFT JOIN names l ON l.id = b.label_id
LEFT JOIN names st ON st.id = b.statistic_id;

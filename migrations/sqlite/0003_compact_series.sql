-- A compact store of series, sized for per-CPU function profiles (millions of series).
-- Every string of a series key (metric, unit, direction, scope, label, statistic) is stored
-- once in `names`; a series row references them and holds its samples together, packed as
-- little-endian f64 in `vals` (n * 8 bytes, in sample order).
--
-- The old tables are renamed, not dropped: the store packs `samples_v1` into `vals` in Rust
-- (SQL cannot encode a float as bytes) right after this migration, in one transaction, then
-- drops both old tables.

CREATE TABLE names (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

ALTER TABLE series RENAME TO series_v1;
ALTER TABLE samples RENAME TO samples_v1;
DROP INDEX series_run;

CREATE TABLE series_data (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric_id    INTEGER NOT NULL REFERENCES names(id),
    unit_id      INTEGER NOT NULL REFERENCES names(id),
    direction_id INTEGER NOT NULL REFERENCES names(id),
    scope_id     INTEGER NOT NULL REFERENCES names(id),
    label_id     INTEGER REFERENCES names(id),
    statistic_id INTEGER REFERENCES names(id),
    n            INTEGER NOT NULL DEFAULT 0,
    vals         BLOB NOT NULL DEFAULT x''
);
CREATE INDEX series_data_run ON series_data(run_id, metric_id, scope_id);

-- Series as they read before: the key's strings, and `n`. Every read of series keys uses it.
CREATE VIEW series AS
SELECT s.id, s.run_id, m.name AS metric, u.name AS unit, d.name AS direction, sc.name AS scope,
       l.name AS label, st.name AS statistic, s.n
FROM series_data s
JOIN names m ON m.id = s.metric_id
JOIN names u ON u.id = s.unit_id
JOIN names d ON d.id = s.direction_id
JOIN names sc ON sc.id = s.scope_id
LEFT JOIN names l ON l.id = s.label_id
LEFT JOIN names st ON st.id = s.statistic_id;

INSERT INTO names (name)
SELECT metric FROM series_v1
UNION SELECT unit FROM series_v1
UNION SELECT direction FROM series_v1
UNION SELECT scope FROM series_v1
UNION SELECT label FROM series_v1 WHERE label IS NOT NULL
UNION SELECT statistic FROM series_v1 WHERE statistic IS NOT NULL;

-- Same ids, so that nothing referring to a series id changes; `vals` is filled afterwards.
INSERT INTO series_data (id, run_id, metric_id, unit_id, direction_id, scope_id, label_id, statistic_id, n)
SELECT s.id, s.run_id,
       (SELECT id FROM names WHERE name = s.metric),
       (SELECT id FROM names WHERE name = s.unit),
       (SELECT id FROM names WHERE name = s.direction),
       (SELECT id FROM names WHERE name = s.scope),
       (SELECT id FROM names WHERE name = s.label),
       (SELECT id FROM names WHERE name = s.statistic),
       s.n
FROM series_v1 s;

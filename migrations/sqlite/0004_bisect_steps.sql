-- The record of each `bisect-step`: the commit, the series looked at, what was measured and the
-- verdict. Databases bisected with before this migration already hold the table (it used to be
-- created on first use), hence IF NOT EXISTS; the layout is the same.
CREATE TABLE IF NOT EXISTS bisect_steps (
    id INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,
    commit_sha TEXT NOT NULL,
    build_label TEXT NOT NULL,
    machine TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    series TEXT NOT NULL,
    good_ref TEXT NOT NULL,
    bad_ref TEXT NOT NULL,
    runs INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    median REAL,
    good_median REAL,
    bad_median REAL,
    p_good REAL,
    p_bad REAL,
    level REAL,
    verdict TEXT NOT NULL,
    run_id INTEGER REFERENCES runs(id)
);

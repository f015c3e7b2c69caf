-- quiescent's store: builds, machines, runs with their raw artifacts, and every sample.
-- Times are unix seconds (UTC). Samples are in canonical units (seconds, s^2, count, bytes).

-- The kernel under test. Two builds may share a commit and differ in config or command line.
CREATE TABLE builds (
    id             INTEGER PRIMARY KEY,
    label          TEXT NOT NULL UNIQUE,
    commit_sha     TEXT,
    kernel_version TEXT,
    config         TEXT,
    cmdline        TEXT,
    created_at     INTEGER NOT NULL
);
CREATE INDEX builds_commit ON builds(commit_sha);

-- The rig a run executed on.
CREATE TABLE machines (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

-- Free-form facts about a machine (cpu model, cpus, memory, ...).
CREATE TABLE machine_facts (
    machine_id INTEGER NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (machine_id, key)
) WITHOUT ROWID;

-- Upload tokens for test rigs: only the sha256 of the token is kept.
CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    hash       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

-- One execution of one benchmark on one machine for one build.
-- `params_key` is the canonical `k=v` list (sorted, `&`-joined) that pools runs of the same
-- scenario; `import_hash` (metadata + artifact hashes) makes re-imports idempotent, and
-- `content_hash` (import hash + params) tells apart the runs one sweep file makes.
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    build_id     INTEGER NOT NULL REFERENCES builds(id),
    machine_id   INTEGER NOT NULL REFERENCES machines(id),
    benchmark    TEXT NOT NULL,
    params_key   TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL UNIQUE,
    import_hash  TEXT NOT NULL,
    token_id     INTEGER REFERENCES tokens(id),
    created_at   INTEGER NOT NULL
);
CREATE INDEX runs_build_bench ON runs(build_id, benchmark, machine_id);
CREATE INDEX runs_bench ON runs(benchmark);
CREATE INDEX runs_import ON runs(import_hash);

CREATE TABLE run_params (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

-- The raw files exactly as received, content-addressed by sha256, stored in chunks so that a
-- large file never has to sit in memory whole.
CREATE TABLE artifacts (
    id     INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    size   INTEGER NOT NULL
);

CREATE TABLE artifact_chunks (
    artifact_id INTEGER NOT NULL REFERENCES artifacts(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (artifact_id, seq)
) WITHOUT ROWID;

-- Which files a run came from, under which name, and what the parser said about them.
CREATE TABLE run_artifacts (
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    artifact_id   INTEGER NOT NULL REFERENCES artifacts(id),
    seq           INTEGER NOT NULL,
    file_name     TEXT NOT NULL,
    format        TEXT NOT NULL,
    meta_json     TEXT NOT NULL DEFAULT '{}',
    warnings_json TEXT NOT NULL DEFAULT '[]',
    warning_count INTEGER NOT NULL DEFAULT 0,
    extra_json    TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX run_artifacts_artifact ON run_artifacts(artifact_id);

-- (run, metric, scope[, label, statistic]) -> samples. `statistic` is NULL for real samples
-- and names the statistic (`median`, `p99`, ...) for someone's pre-computed summary values.
CREATE TABLE series (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric    TEXT NOT NULL,
    unit      TEXT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('lower_is_better', 'higher_is_better', 'neutral')),
    scope     TEXT NOT NULL DEFAULT 'all',
    label     TEXT,
    statistic TEXT,
    n         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX series_run ON series(run_id, metric, scope);

CREATE TABLE samples (
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    value     REAL NOT NULL,
    PRIMARY KEY (series_id, idx)
) WITHOUT ROWID;

-- A frozen comparison behind a shareable link: the exact runs and settings.
CREATE TABLE comparisons (
    id           TEXT PRIMARY KEY,
    base_label   TEXT NOT NULL,
    head_label   TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    base_runs_json TEXT NOT NULL,
    head_runs_json TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);

-- Upload idempotency keys (per token).
CREATE TABLE idempotency_keys (
    token_id   INTEGER NOT NULL REFERENCES tokens(id),
    key        TEXT NOT NULL,
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (token_id, key)
) WITHOUT ROWID;

-- History: builds in commit order per branch, the detector's state per series and the alerts
-- raised from its change points.

CREATE TABLE branches (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- A build's place on a branch (a build can be on several). `position` orders the branch's
-- builds: git's first-parent order when the commit is known, else the order of arrival.
CREATE TABLE build_branches (
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    branch_id   INTEGER NOT NULL REFERENCES branches(id),
    position    INTEGER NOT NULL,
    parent      TEXT,
    commit_time INTEGER,
    PRIMARY KEY (build_id, branch_id)
);
CREATE INDEX build_branches_order ON build_branches(branch_id, position);

-- The first-parent order of a branch as `commits import` read it from git (0 = oldest).
CREATE TABLE branch_commits (
    branch_id  INTEGER NOT NULL REFERENCES branches(id),
    commit_sha TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (branch_id, commit_sha)
);

-- One analysed series of a history: its key and the p-values of every candidate the detector
-- tested, the family over which q-values are computed across a benchmark's series.
CREATE TABLE history_series (
    id          INTEGER PRIMARY KEY,
    branch_id   INTEGER NOT NULL REFERENCES branches(id),
    machine_id  INTEGER NOT NULL REFERENCES machines(id),
    benchmark   TEXT NOT NULL,
    params_key  TEXT NOT NULL,
    metric      TEXT NOT NULL,
    direction   TEXT NOT NULL,
    unit        TEXT NOT NULL DEFAULT '',
    tested_p    TEXT NOT NULL DEFAULT '[]',
    updated_at  INTEGER NOT NULL,
    UNIQUE (branch_id, machine_id, benchmark, params_key, metric)
);
CREATE INDEX history_series_bench ON history_series(benchmark);

-- The alerts of one build: every change point whose new regime starts at `build_id`.
CREATE TABLE alert_groups (
    id          INTEGER PRIMARY KEY,
    branch_id   INTEGER NOT NULL REFERENCES branches(id),
    build_id    INTEGER NOT NULL REFERENCES builds(id),
    created_at  INTEGER NOT NULL,
    notified_at INTEGER,
    UNIQUE (branch_id, build_id)
);

CREATE TABLE alerts (
    id                INTEGER PRIMARY KEY,
    group_id          INTEGER NOT NULL REFERENCES alert_groups(id),
    history_series_id INTEGER NOT NULL REFERENCES history_series(id),
    build_before_id   INTEGER NOT NULL REFERENCES builds(id),
    build_after_id    INTEGER NOT NULL REFERENCES builds(id),
    before_median     REAL NOT NULL,
    after_median      REAL NOT NULL,
    change_pct        REAL NOT NULL,
    low_pct           REAL NOT NULL,
    high_pct          REAL NOT NULL,
    p                 REAL NOT NULL,
    q                 REAL NOT NULL,
    kind              TEXT NOT NULL,
    state             TEXT NOT NULL DEFAULT 'untriaged'
                      CHECK (state IN ('untriaged', 'acknowledged', 'invalid', 'fixed')),
    note              TEXT,
    who               TEXT,
    fixed_by_build_id INTEGER REFERENCES builds(id),
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    UNIQUE (history_series_id, build_after_id)
);
CREATE INDEX alerts_group ON alerts(group_id);
CREATE INDEX alerts_state ON alerts(state);

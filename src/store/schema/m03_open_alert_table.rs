//! Schema step: SQLite only: one open alert per fingerprint is held by the writer's in-memory table, not an index; the
//! status check written as comparisons.
//!
//! PostgreSQL keeps its unique index `alerts_one_open`, which its intake's `INSERT … ON CONFLICT` names.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            6,
            "-- One open alert per project and fingerprint is held by the writer's in-memory table from now on
    -- (store/open_alerts.rs): this index put a random key on disk for every new alert. What the table is filled
    -- from at start: the open alerts in id order, so new alerts only ever append to it (status is there so
    -- the start-up read needs no table row).
    DROP INDEX alerts_one_open;
    CREATE INDEX alerts_open ON alerts (id, project_id, fingerprint, status)
        WHERE status != 'resolved' AND fingerprint IS NOT NULL;",
        ),
        (
            7,
            "-- The status check, unchanged in meaning, as comparisons: SQLite evaluates `IN` over more than two
    -- constants by building a temporary B-tree of them, and a CHECK does so for every row written (about 20 k
    -- instructions per new alert). SQLite cannot change a CHECK in place, so the table is rebuilt (the procedure
    -- of its ALTER TABLE documentation): the same columns in the same order, then the same indexes.
    CREATE TABLE alerts_rebuilt (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        iid INTEGER NOT NULL,
        integration_id INTEGER,
        fingerprint TEXT,
        status TEXT NOT NULL CHECK (
            status = 'triggered' OR status = 'acknowledged' OR status = 'resolved' OR status = 'ignored'
        ),
        title TEXT NOT NULL,
        description TEXT,
        severity TEXT NOT NULL,
        service TEXT,
        monitoring_tool TEXT,
        hosts TEXT NOT NULL,
        environment TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        events INTEGER NOT NULL,
        last_event_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        incident_iid INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, iid)
    );
    INSERT INTO alerts_rebuilt SELECT * FROM alerts;
    DROP TABLE alerts;
    ALTER TABLE alerts_rebuilt RENAME TO alerts;
    CREATE INDEX alerts_by_project_status ON alerts (project_id, status);
    CREATE INDEX alerts_open ON alerts (id, project_id, fingerprint, status)
        WHERE status != 'resolved' AND fingerprint IS NOT NULL;",
        ),
    ],
    postgres: &[],
};

// No migration puts back a partial unique index on `alerts (project_id, fingerprint) WHERE status !=
// 'resolved'` for "at most one open alert per project and fingerprint", on purpose. Migration 6 dropped
// exactly that index: its random keys cost one index page written per new alert per commit and capped durable
// intake at about 17k alerts/s on the bench machine (`examples/store_floor.rs`). The rule is held by the
// lifecycle's decision, the single writer and the writer's in-memory open-alert table, whose primary key
// refuses a second open alert as the index did (see the store's module documentation and `open_alerts.rs`).
// The index would also refuse rows another program writes (the `sqlite3` shell), which the store accepts and
// groups into, older first. Should it come back, duplicates an older build or the shell left must be resolved
// first (all but the oldest open alert of each key), or the migration fails on existing data.

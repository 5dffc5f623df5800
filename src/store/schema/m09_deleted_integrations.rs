//! Schema step: Deleted integrations keep their row, so ids are never given twice; SQLite's outbox ids too.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            12,
            "-- Ids are never given twice. A deleted integration's row stays, marked deleted, its sealed key erased: its
    -- id and address are never another's, and its alerts keep naming it. Integrations deleted before this
    -- migration, which alerts still name, get such a row too, so their ids are not given again either.
    ALTER TABLE integrations ADD COLUMN deleted_at TEXT;
    INSERT INTO integrations (id, project_id, project_path, type, name, active, token_nonce, token_ciphertext,
        created_at, updated_at, deleted_at)
    SELECT integration_id, MIN(project_id), '', 'generic', 'a deleted integration', 0, x'', x'',
        CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP
    FROM alerts WHERE integration_id IS NOT NULL AND integration_id NOT IN (SELECT id FROM integrations)
    GROUP BY integration_id;
    DROP INDEX integrations_one_per_project;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE type IN ('generic', 'prometheus', 'opsgenie') AND deleted_at IS NULL;
    -- Finished incident calls are removed by the sweep; AUTOINCREMENT keeps the highest id ever given, so a call
    -- never takes the id of one removed. SQLite cannot add it in place: the table is rebuilt, same columns.
    CREATE TABLE outbox_rebuilt (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('create_incident', 'close_incident')),
        project_id INTEGER NOT NULL,
        alert_id INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        done_at TEXT
    );
    INSERT INTO outbox_rebuilt (id, kind, project_id, alert_id, attempts, next_attempt_at, last_error, done_at)
        SELECT id, kind, project_id, alert_id, attempts, next_attempt_at, last_error, done_at FROM outbox;
    DROP TABLE outbox;
    ALTER TABLE outbox_rebuilt RENAME TO outbox;
    CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE done_at IS NULL;
    CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;",
        ),
    ],
    postgres: &[
        (
            7,
            "-- A deleted integration's row stays, marked deleted, its sealed key erased: its alerts keep naming it (ids
    -- come from sequences, never given twice).
    ALTER TABLE integrations ADD COLUMN deleted_at TEXT;
    DROP INDEX integrations_one_per_project;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE type IN ('generic', 'prometheus', 'opsgenie') AND deleted_at IS NULL;",
        ),
    ],
};

//! Schema step: which kinds are one per project is said by svcgate (`crate::alerts::kinds`), not by a list of kinds
//! in the `integrations_one_per_project` index. Each row carries `one_per_project`, filled by the management API
//! from the kind's line; the index is unique on `(project_id, type)` among the live rows that carry it. Existing
//! rows are backfilled with the kinds that were one per project when this step was written.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[(
        14,
        "-- Whether a kind is one per project is said by svcgate, carried by each row; the index lists no kinds.
    ALTER TABLE integrations ADD COLUMN one_per_project INTEGER NOT NULL DEFAULT 0;
    UPDATE integrations SET one_per_project = 1 WHERE type IN ('generic', 'prometheus', 'opsgenie');
    DROP INDEX integrations_one_per_project;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE one_per_project AND deleted_at IS NULL;",
    )],
    postgres: &[(
        9,
        "-- Whether a kind is one per project is said by svcgate, carried by each row; the index lists no kinds.
    ALTER TABLE integrations ADD COLUMN one_per_project BOOLEAN NOT NULL DEFAULT false;
    UPDATE integrations SET one_per_project = true WHERE type IN ('generic', 'prometheus', 'opsgenie');
    DROP INDEX integrations_one_per_project;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE one_per_project AND deleted_at IS NULL;",
    )],
};

//! Schema step: integration kinds are checked in Rust, not by a `CHECK` list in SQL, so that a new kind needs no
//! schema step (the list of kinds is `crate::alerts::kinds`, which the management API refuses unknown kinds by).
//!
//! SQLite cannot drop a `CHECK` in place: the table is rebuilt (the procedure of its ALTER TABLE documentation,
//! as SQLite's migrations 7 and 12 do), the same columns in the same order, then the same indexes. PostgreSQL
//! drops the constraint by the name it gave it.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[(
        13,
        "-- Integration kinds are checked by svcgate, not by the schema: the type column loses its CHECK list.
    CREATE TABLE integrations_rebuilt (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        project_path TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        active INTEGER NOT NULL,
        endpoint_identifier TEXT,
        token_nonce BLOB NOT NULL,
        token_ciphertext BLOB NOT NULL,
        api_url TEXT,
        payload_example TEXT,
        payload_attribute_mapping TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
    );
    INSERT INTO integrations_rebuilt SELECT * FROM integrations;
    DROP TABLE integrations;
    ALTER TABLE integrations_rebuilt RENAME TO integrations;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE type IN ('generic', 'prometheus', 'opsgenie') AND deleted_at IS NULL;
    CREATE UNIQUE INDEX integrations_endpoint ON integrations (endpoint_identifier)
        WHERE endpoint_identifier IS NOT NULL;",
    )],
    postgres: &[(
        8,
        "-- Integration kinds are checked by svcgate, not by the schema: the type column loses its CHECK list.
    -- The name is the one PostgreSQL gave step 1's inline CHECK on `type`; no IF EXISTS, so a wrong one fails.
    ALTER TABLE integrations DROP CONSTRAINT integrations_type_check;",
    )],
};

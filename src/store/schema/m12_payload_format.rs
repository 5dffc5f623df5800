//! Schema step: each integration carries `payload_format`, the name of the format its payloads are read in (chosen
//! for Generic and HTTP Endpoint integrations through the management API and the form; other kinds keep the
//! default and read their kind's own). Every existing row gets `generic`, what Generic and HTTP Endpoint
//! integrations read until this step. The store checks no list of names: which formats exist is svcgate's to say.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[(
        15,
        "-- The format an integration's payloads are read in; every existing row reads svcgate's generic payload.
    ALTER TABLE integrations ADD COLUMN payload_format TEXT NOT NULL DEFAULT 'generic';",
    )],
    postgres: &[(
        10,
        "-- The format an integration's payloads are read in; every existing row reads svcgate's generic payload.
    ALTER TABLE integrations ADD COLUMN payload_format TEXT NOT NULL DEFAULT 'generic';",
    )],
};

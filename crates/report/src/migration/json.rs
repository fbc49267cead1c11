//! The migration as JSON (`gpu-trust/migration/v1`, docs/schema/migration-v1.schema.json): the serde
//! shape of the migration with the audit of the planned state.

use super::TargetAudit;
use gpu_trust_planner::migrate::Migration;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    #[serde(flatten)]
    migration: &'a Migration,
    target_audit: &'a TargetAudit,
}

/// The migration as pretty JSON, ending in a newline.
pub fn render(migration: &Migration, audit: &TargetAudit) -> Result<String, serde_json::Error> {
    crate::text::pretty_json(&Document {
        migration,
        target_audit: audit,
    })
}

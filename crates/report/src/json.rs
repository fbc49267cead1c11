//! The JSON report: exactly the serde shape of [`AuditReport`] (`gpu-trust/audit/v1`), pretty-printed
//! with a final newline. The report keeps every list sorted and every map ordered, so the same report
//! always renders to the same bytes. The shape is described by `docs/schema/audit-v1.schema.json`.

use crate::AuditReport;

/// The report as pretty-printed JSON, ending in a newline.
pub fn render(report: &AuditReport) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    Ok(text)
}

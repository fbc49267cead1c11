//! The policy check as JSON: the serde shape of the check report, pretty-printed.

use gpu_trust_policy::CheckReport;

/// The check report as pretty JSON, ending in a newline.
pub fn render(report: &CheckReport) -> Result<String, serde_json::Error> {
    crate::text::pretty_json(report)
}

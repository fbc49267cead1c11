//! `gpu-trust probe --format json`: the evidence as the audit reads it back (`--evidence`).

use crate::text::pretty_json;
use gpu_trust_model::evidence::ProbeEvidence;

/// The evidence as pretty JSON with a trailing newline. The types fix the field order, so the same
/// evidence always gives the same bytes.
pub fn render(evidence: &ProbeEvidence) -> Result<String, serde_json::Error> {
    pretty_json(evidence)
}

//! The plan as JSON (`gpu-trust/plan/v1`): the serde shape of the plan, pretty-printed.

use gpu_trust_planner::plan::Plan;

/// The plan as pretty JSON, ending in a newline.
pub fn render(plan: &Plan) -> Result<String, serde_json::Error> {
    crate::text::pretty_json(plan)
}

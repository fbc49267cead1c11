//! `gpu-trust probe`: the measured evidence of one run (`gpu-trust/probe/v2`,
//! `gpu_trust_model::evidence`), one module per format. The renderers read only the evidence, so the
//! report crate needs nothing of the probe itself.

pub mod json;
pub mod table;

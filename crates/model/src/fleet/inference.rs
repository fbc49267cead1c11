//! Inference servers found in a workload, with the device memory each reserves up front.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InferenceEngine {
    Vllm,
    Sglang,
    Tgi,
}

impl InferenceEngine {
    /// Its name in messages.
    pub const fn title(self) -> &'static str {
        match self {
            InferenceEngine::Vllm => "vLLM",
            InferenceEngine::Sglang => "SGLang",
            InferenceEngine::Tgi => "TGI",
        }
    }

    /// The flag that sets the fraction of device memory it reserves at start: vLLM engine arguments
    /// (`--gpu-memory-utilization`), SGLang server arguments (`--mem-fraction-static`), Hugging Face
    /// TGI launcher (`--cuda-memory-fraction`).
    pub const fn fraction_flag(self) -> &'static str {
        match self {
            InferenceEngine::Vllm => "--gpu-memory-utilization",
            InferenceEngine::Sglang => "--mem-fraction-static",
            InferenceEngine::Tgi => "--cuda-memory-fraction",
        }
    }
}

/// An inference server found from image and arguments, with its up-front memory reservation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InferenceServer {
    pub engine: InferenceEngine,
    pub container: String,
    /// Fraction of device memory reserved at start (explicit flag or the engine's default).
    pub reserved_fraction: Option<f64>,
    /// The flag that set it, or `None` when the default applies.
    pub flag: Option<String>,
    /// The server that runs the engine with the engine's own arguments and defaults (KServe's
    /// Hugging Face runtime), when the image is not the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

//! Input and policy rules (GT0xx).

pub mod gt001_unknown_gpu_model;
pub mod gt002_missing_sharing_config;
pub mod gt003_expired_acceptance;
pub mod gt004_acceptance_without_reason;

//! gpu-trust-rules

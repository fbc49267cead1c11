//! gpu-trust-policy

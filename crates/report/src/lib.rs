//! gpu-trust-report

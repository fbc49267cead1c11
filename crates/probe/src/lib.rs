//! gpu-trust-probe

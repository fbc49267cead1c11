//! gpu-trust-planner

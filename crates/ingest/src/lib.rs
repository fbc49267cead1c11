//! gpu-trust-ingest

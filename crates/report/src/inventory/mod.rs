//! `gpu-trust inventory`: the fleet as gpu-trust reads it, in the view ingest builds
//! ([`gpu_trust_ingest::inventory::Inventory`]); one module per format.

pub mod json;
pub mod table;
pub mod yaml;

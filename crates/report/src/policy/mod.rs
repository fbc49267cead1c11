//! `gpu-trust policy check`: what a valid policy declares and how it resolves, from the check report
//! the policy crate builds ([`gpu_trust_policy::CheckReport`]); one module per format. And
//! `gpu-trust policy init`'s policy file ([`init`]).

pub mod init;
pub mod json;
pub mod table;

//! The audit: rules over the fleet model and the tenancy policy, pairs, blast radius, acceptances.

pub mod report;

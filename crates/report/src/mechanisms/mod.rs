//! `gpu-trust mechanisms`: the isolation model (`gpu_trust_model::isolation`) per mechanism, the
//! layers above the device, and the mechanism of each DRA sharing strategy; one module per format.

pub mod json;
pub mod table;

use gpu_trust_model::fleet::DraStrategy;

/// The DRA sharing strategies, in the order both formats list them.
const DRA_STRATEGIES: [DraStrategy; 6] = [
    DraStrategy::Exclusive,
    DraStrategy::TimeSlicing,
    DraStrategy::Mps,
    DraStrategy::Mig,
    DraStrategy::MigTimeSlicing,
    DraStrategy::MigMps,
];

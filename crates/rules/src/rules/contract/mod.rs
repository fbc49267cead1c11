//! Contract rules (GT5xx): what the hosting terms promise a tenant against what the silicon enforces.

pub mod gt501_isolation_promised_not_enforced;
pub mod gt502_shared_not_isolated;

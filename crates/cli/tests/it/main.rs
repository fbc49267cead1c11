//! The integration tests of `cli`, one module per former test binary, linked once.

#[path = "support/apiserver.rs"]
mod apiserver;

mod advisories;
mod architecture;
mod audit;
mod catalogue;
mod completions;
mod corpus;
mod decisions;
mod examples;
mod help;
mod hostile;
mod hostile_coverage;
mod hostile_failclosed;
mod hostile_kinds;
mod inventory;
mod judgements;
mod live;
mod mechanisms;
mod migration;
mod plan;
mod policy;
mod probe;
mod probe_device_script;
mod release;
mod rules;
mod serve;
mod suppressions;
mod toolbox;
mod width;

//! One module per subcommand: its arguments (with `--help` text and examples) and its `run`.

pub mod advisories;
pub mod audit;
pub mod catalogue;
pub mod completions;
pub mod explain;
pub mod inventory;
pub mod manpages;
pub mod mechanisms;
pub mod plan;
pub mod policy;
pub mod probe;
pub mod rules;
pub mod serve;

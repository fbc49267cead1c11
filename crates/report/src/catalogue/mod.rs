//! `gpu-trust catalogue`: the GPU catalogue, and one model's MIG profiles and maximal layouts; one
//! module per format. Everything shown is the catalogue's data (`gpu_trust_model::catalogue`) and
//! the layouts the geometry enumerates from it.

pub mod json;
pub mod table;

use gpu_trust_model::geometry::{self, Layout, ProfileSet};
use serde::Serialize;

/// The MIG layouts of one model over a set of its profiles.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Layouts {
    /// The profiles the layouts are counted over.
    pub profiles: Vec<&'static str>,
    pub valid_count: usize,
    pub maximal_count: usize,
    pub maximal: Vec<&'static Layout>,
}

impl Layouts {
    /// The layouts over `set`: how many are valid, and those to which no instance can be added.
    pub fn over(set: &ProfileSet) -> Layouts {
        let maximal = geometry::maximal_layouts_in(set);
        Layouts {
            profiles: set.profiles().map(|p| p.name).collect(),
            valid_count: geometry::layouts_in(set).len(),
            maximal_count: maximal.len(),
            maximal,
        }
    }
}

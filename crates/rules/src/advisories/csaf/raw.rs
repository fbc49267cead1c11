//! The parts of a CSAF 2.0 document this reader uses, as the JSON schema names them (fields not
//! listed are ignored; a value of the wrong type is an error at its line and column).

use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Debug, Deserialize)]
pub(super) struct RawCsaf {
    pub(super) document: Spanned<RawDocument>,
    #[serde(default)]
    pub(super) product_tree: Option<Spanned<RawProductTree>>,
    #[serde(default)]
    pub(super) vulnerabilities: Vec<Spanned<RawVulnerability>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawDocument {
    #[serde(default)]
    pub(super) category: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) csaf_version: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) publisher: Option<Spanned<RawPublisher>>,
    #[serde(default)]
    pub(super) title: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) tracking: Option<Spanned<RawTracking>>,
    #[serde(default)]
    pub(super) references: Vec<RawReference>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawPublisher {
    #[serde(default)]
    pub(super) category: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) name: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) namespace: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawTracking {
    #[serde(default)]
    pub(super) current_release_date: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) id: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) initial_release_date: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) revision_history: Option<Spanned<Vec<serde::de::IgnoredAny>>>,
    #[serde(default)]
    pub(super) status: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) version: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawReference {
    #[serde(default)]
    pub(super) category: Option<String>,
    #[serde(default)]
    pub(super) url: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawProductTree {
    #[serde(default)]
    pub(super) branches: Vec<RawBranch>,
    #[serde(default)]
    pub(super) full_product_names: Vec<RawProduct>,
    #[serde(default)]
    pub(super) relationships: Vec<RawRelationship>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawBranch {
    pub(super) category: Spanned<String>,
    pub(super) name: Spanned<String>,
    #[serde(default)]
    pub(super) branches: Vec<RawBranch>,
    #[serde(default)]
    pub(super) product: Option<RawProduct>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawProduct {
    pub(super) name: Spanned<String>,
    pub(super) product_id: Spanned<String>,
    #[serde(default)]
    pub(super) product_identification_helper: Option<RawHelper>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawHelper {
    #[serde(default)]
    pub(super) cpe: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawRelationship {
    pub(super) full_product_name: RawProduct,
    pub(super) product_reference: Spanned<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawVulnerability {
    #[serde(default)]
    pub(super) cve: Option<String>,
    #[serde(default)]
    pub(super) ids: Vec<RawId>,
    #[serde(default)]
    pub(super) title: Option<String>,
    #[serde(default)]
    pub(super) notes: Vec<RawNote>,
    #[serde(default)]
    pub(super) cwe: Option<RawCwe>,
    #[serde(default)]
    pub(super) product_status: Option<Spanned<RawStatus>>,
    #[serde(default)]
    pub(super) scores: Vec<RawScore>,
    #[serde(default)]
    pub(super) release_date: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) references: Vec<RawReference>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawId {
    pub(super) text: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawNote {
    #[serde(default)]
    pub(super) category: Option<String>,
    #[serde(default)]
    pub(super) text: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawCwe {
    #[serde(default)]
    pub(super) name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct RawStatus {
    #[serde(default)]
    pub(super) first_affected: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) first_fixed: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) fixed: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) known_affected: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) known_not_affected: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) last_affected: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) under_investigation: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawScore {
    #[serde(default)]
    pub(super) cvss_v3: Option<RawCvss>,
    #[serde(default)]
    pub(super) cvss_v2: Option<RawCvss>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RawCvss {
    #[serde(rename = "baseScore")]
    pub(super) base_score: Spanned<f64>,
}

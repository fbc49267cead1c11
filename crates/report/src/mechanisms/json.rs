//! The isolation model as JSON (`gpu-trust/mechanisms/v1`).

use super::DRA_STRATEGIES;
use gpu_trust_model::fleet::DraStrategy;
use gpu_trust_model::isolation::{Mechanism, Property, LAYERS};
use gpu_trust_model::Incident;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MechanismsJson {
    schema: &'static str,
    mechanisms: Vec<MechanismJson>,
    layers: &'static [gpu_trust_model::isolation::LayerFact],
    /// DRA claims take the mechanism their sharing strategy names.
    dra: Vec<DraJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DraJson {
    strategy: DraStrategy,
    mechanism: Mechanism,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MechanismJson {
    name: &'static str,
    title: &'static str,
    /// What the mechanism needs of the node beyond what Kubernetes shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    requires: Option<&'static str>,
    properties: Vec<PropertyJson>,
    reach: Vec<ReachJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PropertyJson {
    property: &'static str,
    #[serde(flatten)]
    fact: &'static gpu_trust_model::isolation::PropertyFact,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReachJson {
    incident: Incident,
    scope: gpu_trust_model::isolation::Scope,
}

/// The selected mechanisms, every layer above the device and the DRA strategies, as pretty JSON
/// ending in a newline.
pub fn render(selected: &[Mechanism]) -> Result<String, serde_json::Error> {
    let doc = MechanismsJson {
        schema: "gpu-trust/mechanisms/v1",
        mechanisms: selected.iter().map(|m| mechanism_json(*m)).collect(),
        layers: &LAYERS,
        dra: DRA_STRATEGIES
            .iter()
            .map(|s| DraJson {
                strategy: *s,
                mechanism: Mechanism::for_dra(*s),
            })
            .collect(),
    };
    crate::text::pretty_json(&doc)
}

fn mechanism_json(m: Mechanism) -> MechanismJson {
    MechanismJson {
        name: m.as_str(),
        title: m.title(),
        requires: m.requires(),
        properties: Property::ALL
            .iter()
            .map(|p| PropertyJson {
                property: p.as_str(),
                fact: m.property(*p),
            })
            .collect(),
        reach: Incident::ALL
            .iter()
            .map(|i| ReachJson {
                incident: *i,
                scope: m.reach(*i),
            })
            .collect(),
    }
}

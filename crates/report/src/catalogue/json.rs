//! The catalogue as JSON (`gpu-trust/catalogue/v1`): every model, or one model with its layouts.

use super::Layouts;
use gpu_trust_model::catalogue::{self, GpuModel};
use serde::Serialize;
use serde_json::Value;

const SCHEMA: &str = "gpu-trust/catalogue/v1";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CatalogueJson {
    schema: &'static str,
    models: Vec<Value>,
    /// MIG products known by name only.
    unmodelled_mig: &'static [catalogue::UnmodelledMig],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelJson<'a> {
    schema: &'static str,
    model: Value,
    /// `None` for models without MIG.
    layouts: Option<&'a Layouts>,
}

/// Every model of the catalogue, as pretty JSON ending in a newline.
pub fn catalogue() -> Result<String, serde_json::Error> {
    crate::text::pretty_json(&CatalogueJson {
        schema: SCHEMA,
        models: catalogue::all()
            .iter()
            .map(model_value)
            .collect::<Result<_, _>>()?,
        unmodelled_mig: &catalogue::UNMODELLED_MIG,
    })
}

/// One model and, for a MIG model, its layouts, as pretty JSON ending in a newline.
pub fn model(model: &GpuModel, layouts: Option<&Layouts>) -> Result<String, serde_json::Error> {
    crate::text::pretty_json(&ModelJson {
        schema: SCHEMA,
        model: model_value(model)?,
        layouts,
    })
}

/// The model as the catalogue serialises it, each profile with its placements in nvidia-smi notation.
fn model_value(model: &GpuModel) -> Result<Value, serde_json::Error> {
    let mut v = serde_json::to_value(model)?;
    if let (Some(g), Some(profiles)) = (
        model.mig,
        v.pointer_mut("/mig/profiles").and_then(Value::as_array_mut),
    ) {
        for (p, json) in g.profiles.iter().zip(profiles.iter_mut()) {
            if let Some(obj) = json.as_object_mut() {
                obj.insert("placements".into(), Value::String(p.placements()));
            }
        }
    }
    Ok(v)
}

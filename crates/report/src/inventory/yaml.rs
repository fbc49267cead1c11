//! The inventory as YAML: the same document as the JSON, as `kubectl get -o yaml` users read it.

use gpu_trust_ingest::inventory::Inventory;

/// The inventory as YAML.
pub fn render(inventory: &Inventory) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(inventory)
}

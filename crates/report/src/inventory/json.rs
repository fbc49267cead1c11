//! The inventory as `gpu-trust/inventory/v1` JSON: the serde shape of the view, pretty-printed.

use gpu_trust_ingest::inventory::Inventory;

/// The inventory as pretty JSON, ending in a newline.
pub fn render(inventory: &Inventory) -> Result<String, serde_json::Error> {
    crate::text::pretty_json(inventory)
}

//! A large JSON List read in pieces gives the fleet and the diagnostics that reading its text whole
//! gives: the same objects, locations and errors, whether the pieces reader takes the file or leaves
//! it to be read whole.

use gpu_trust_ingest::{ingest, ingest_gathered, Options};
use gpu_trust_source::{gather_large, read_all, Entry, Format, GatherOptions, Input, ReadOptions};
use std::path::{Path, PathBuf};

/// Every object of an example cluster, as JSON values.
fn example_objects(name: &str) -> Vec<serde_json::Value> {
    let path = format!(
        "{}/../../examples/{name}/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let options = ReadOptions {
        split_key: Some("items".to_string()),
        format: Format::Yaml,
        ..ReadOptions::default()
    };
    read_all(&text, &path, &options)
        .iter()
        .filter_map(|e| match e {
            Entry::Object(o) => Some(o.deserialize::<serde_json::Value>().unwrap()),
            _ => None,
        })
        .collect()
}

/// The fleet and diagnostics read from `text` whole, and from the same text written to a file and
/// read in pieces.
fn both(dir: &Path, text: &str) -> (String, String) {
    let path = dir.join("cluster.json");
    std::fs::write(&path, text).unwrap();
    let name = path.display().to_string();
    let whole = ingest(
        &[Input {
            name,
            text: text.to_string(),
        }],
        &Options::default(),
    );
    let (gathered, diagnostics) = gather_large(
        &[PathBuf::from(&path)],
        &mut std::io::empty(),
        &GatherOptions::default(),
        0,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(matches!(gathered[0], gpu_trust_source::Gathered::Large(_)));
    let pieces = ingest_gathered(gathered, &Options::default());
    (format!("{whole:#?}"), format!("{pieces:#?}"))
}

fn list(items: &[serde_json::Value]) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}})
}

#[test]
fn example_clusters_read_in_pieces_give_the_same_fleet() {
    let dir = tempfile::tempdir().unwrap();
    for example in [
        "ml-platform",
        "hami-kai",
        "gke",
        "inference-platform",
        "helm-device-plugin",
    ] {
        let items = example_objects(example);
        assert!(items.len() > 3, "{example}");
        let value = list(&items);
        for text in [
            serde_json::to_string_pretty(&value).unwrap(),
            value.to_string(),
        ] {
            let (whole, pieces) = both(dir.path(), &text);
            assert_eq!(whole, pieces, "{example}");
            assert!(whole.contains("nodes: ["), "{example}");
        }
    }
}

#[test]
fn errors_read_in_pieces_are_the_errors_of_the_whole_text() {
    let dir = tempfile::tempdir().unwrap();
    let items = example_objects("ml-platform");
    let pretty = serde_json::to_string_pretty(&list(&items)).unwrap();
    let pod = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\", \"name\": \"q\"}}";
    let typed = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": 5}}";
    let cases = [
        // A duplicate key and a wrong type in one item each: reported for those items alone.
        pretty.replacen("\"items\": [", &format!("\"items\": [\n{pod},\n{typed},"), 1),
        // A syntax error in an item in the middle: the whole document is refused.
        pretty.replacen("\"items\": [", "\"items\": [\n{\"kind\": Pod},", 1),
        // Truncated.
        pretty[..pretty.len() / 2].to_string(),
        // Items without a kind in a list that names it.
        "{\"apiVersion\": \"v1\", \"items\": [{\"metadata\": {\"name\": \"n1\"}}], \"kind\": \"NodeList\"}"
            .to_string(),
        "{\"items\": [{\"metadata\": {\"name\": \"n1\"}}], \"kind\": \"List\"}".to_string(),
    ];
    for (i, text) in cases.iter().enumerate() {
        let (whole, pieces) = both(dir.path(), text);
        assert_eq!(whole, pieces, "case {i}");
    }
    let (whole, _) = both(dir.path(), &cases[0]);
    assert!(whole.contains("duplicate key `name`"), "{whole}");
}

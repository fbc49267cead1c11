//! The multi-document reader: locations of every object, error boundaries, bounds, JSON.

use gpu_trust_source::{read_all, Entry, Format, Limits, ReadOptions};
use serde::Deserialize;
use std::time::{Duration, Instant};

fn options() -> ReadOptions {
    ReadOptions {
        limits: Limits::default(),
        split_key: Some("items".into()),
        format: Format::Auto,
    }
}

#[derive(Debug, Deserialize, PartialEq)]
struct Meta {
    kind: Option<String>,
    metadata: Option<Name>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Name {
    #[serde(default)]
    name: String,
    #[serde(default)]
    replicas: Option<u32>,
}

/// (document, item, line, column, name) of every object; invalid entries as (document, item, line, column, "!message").
fn summary(entries: &[Entry<'_>]) -> Vec<(usize, Option<usize>, u32, u32, String)> {
    entries
        .iter()
        .map(|e| match e {
            Entry::Object(o) => {
                let m: Result<Meta, _> = o.deserialize();
                let name = match m {
                    Ok(m) => m.metadata.map(|n| n.name).unwrap_or_default(),
                    Err(d) => format!("!{}", d.message),
                };
                (o.document(), o.item(), o.pos().line, o.pos().column, name)
            }
            Entry::Container { object, items } => (
                object.document(),
                None,
                object.pos().line,
                object.pos().column,
                format!("container of {items}"),
            ),
            Entry::Invalid {
                document,
                item,
                diagnostic,
            } => (
                *document,
                *item,
                diagnostic.location.line,
                diagnostic.location.column,
                format!("!{}", diagnostic.message),
            ),
        })
        .collect()
}

const LIST: &str = "\
apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: a
- apiVersion: v1
  kind: Pod
  metadata:
    name: b
kind: List
metadata:
  resourceVersion: \"\"
";

#[test]
fn list_items_keep_their_lines() {
    let entries = read_all(LIST, "dump.yaml", &options());
    assert_eq!(
        summary(&entries),
        vec![
            (1, Some(0), 3, 3, "a".to_string()),
            (1, Some(1), 7, 3, "b".to_string()),
            (1, None, 1, 1, "container of 2".to_string()),
        ]
    );
    let Entry::Container { object, .. } = &entries[2] else {
        panic!("container expected")
    };
    let meta: Meta = object.deserialize().unwrap();
    assert_eq!(meta.kind.as_deref(), Some("List"));
}

#[test]
fn documents_are_numbered_and_located() {
    let text = "# header\nkind: A\nmetadata: {name: one}\n---\n---\nkind: B\nmetadata:\n  name: two\n...\n";
    let entries = read_all(text, "m.yaml", &options());
    assert_eq!(
        summary(&entries),
        vec![
            (1, None, 2, 1, "one".to_string()),
            (3, None, 6, 1, "two".to_string())
        ]
    );
}

#[test]
fn a_syntax_error_skips_only_its_document() {
    let text = "kind: A\nmetadata: {name: one}\n---\nkind: B\nmetadata: [unclosed\n---\nkind: C\nmetadata: {name: three}\n";
    let s = summary(&read_all(text, "m.yaml", &options()));
    assert_eq!(s.len(), 3, "{s:?}");
    assert_eq!(s[0].4, "one");
    assert_eq!((s[1].0, s[1].1), (2, None));
    assert!(s[1].4.starts_with("!invalid YAML"), "{s:?}");
    assert!(s[1].2 >= 5, "error line {s:?}");
    assert_eq!(s[2].4, "three");
}

#[test]
fn a_wrong_type_names_the_value() {
    let text = "kind: A\nmetadata:\n  name: x\n  replicas: many\n";
    let entries = read_all(text, "m.yaml", &options());
    let Entry::Object(o) = &entries[0] else {
        panic!()
    };
    let err = o.deserialize::<Meta>().unwrap_err();
    assert_eq!(err.location.to_string(), "m.yaml:4:13");
    assert!(err.message.contains("many"), "{err}");
}

#[test]
fn duplicate_key_skips_only_that_item() {
    let text = "items:\n- metadata: {name: a}\n- metadata: {name: b}\n  metadata: {name: c}\n- metadata: {name: d}\n";
    let s = summary(&read_all(text, "d.yaml", &options()));
    assert_eq!(s[0].4, "a");
    assert_eq!((s[1].1, s[1].2), (Some(1), 4));
    assert!(s[1].4.contains("duplicate key `metadata`"), "{s:?}");
    assert_eq!(s[2].4, "d");
}

#[test]
fn alias_bomb_is_refused_quickly_naming_the_bound() {
    let mut text =
        String::from("items:\n- metadata: {name: ok}\n- a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..20 {
        let p = i - 1;
        text.push_str(&format!(
            "  a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    text.push_str("- metadata: {name: after}\n");
    let started = Instant::now();
    let s = summary(&read_all(&text, "bomb.yaml", &options()));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(s[0].4, "ok");
    assert_eq!(s[1].1, Some(1));
    assert!(s[1].4.contains("max_alias_expansion"), "{s:?}");
    assert_eq!(s[2].4, "after");
}

#[test]
fn deep_nesting_and_huge_scalars_name_their_bound() {
    let limits = Limits {
        max_depth: 8,
        max_scalar_bytes: 16,
        ..Limits::default()
    };
    let opts = ReadOptions {
        limits,
        ..options()
    };
    let deep = format!(
        "items:\n- {}x{}\n- {{metadata: {{name: fine}}}}\n",
        "[".repeat(20),
        "]".repeat(20)
    );
    let s = summary(&read_all(&deep, "deep.yaml", &opts));
    assert!(s[0].4.contains("max_depth"), "{s:?}");
    assert_eq!(s[1].4, "fine");
    let long = format!("metadata: {{name: {}}}\n", "y".repeat(40));
    let s = summary(&read_all(&long, "long.yaml", &opts));
    assert!(s[0].4.contains("max_scalar_bytes"), "{s:?}");
    assert_eq!((s[0].2, s[0].3), (1, 18));
}

#[test]
fn object_size_bound_applies_per_item() {
    let opts = ReadOptions {
        limits: Limits {
            max_object_bytes: 64,
            ..Limits::default()
        },
        ..options()
    };
    let text = format!(
        "items:\n- metadata: {{name: a}}\n- metadata: {{name: a, other: {}}}\n- metadata: {{name: c}}\n",
        "z".repeat(100)
    );
    let s = summary(&read_all(&text, "big.yaml", &opts));
    assert_eq!(s[0].4, "a");
    assert!(s[1].4.contains("max_object_bytes"), "{s:?}");
    assert_eq!(s[2].4, "c");
}

#[test]
fn merge_keys_and_anchors_resolve() {
    let text = "base: &b {name: x, replicas: 2}\nmetadata:\n  <<: *b\n  name: z\n";
    let entries = read_all(text, "m.yaml", &options());
    let Entry::Object(o) = &entries[0] else {
        panic!()
    };
    let m: Meta = o.deserialize().unwrap();
    assert_eq!(
        m.metadata,
        Some(Name {
            name: "z".into(),
            replicas: Some(2)
        })
    );
}

const JSON_LIST: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "a"
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "b",
                "replicas": "three"
            }
        }
    ],
    "kind": "List"
}
"#;

#[test]
fn json_list_items_keep_their_lines_and_errors_are_absolute() {
    let entries = read_all(JSON_LIST, "dump.json", &options());
    let s = summary(&entries);
    assert_eq!(s[0], (1, Some(0), 4, 9, "a".to_string()));
    assert_eq!((s[1].1, s[1].2, s[1].3), (Some(1), 11, 9));
    let Entry::Object(o) = &entries[1] else {
        panic!()
    };
    let err = o.deserialize::<Meta>().unwrap_err();
    assert_eq!(err.location.line, 16, "{err}");
    assert_eq!(s[2].4, "container of 2");
    let Entry::Container { object, .. } = &entries[2] else {
        panic!()
    };
    assert_eq!(
        object.deserialize::<Meta>().unwrap().kind.as_deref(),
        Some("List")
    );
}

#[test]
fn concatenated_json_documents() {
    let text = "{\"kind\": \"A\", \"metadata\": {\"name\": \"one\"}}\n{\"kind\": \"B\", \"metadata\": {\"name\": \"two\"}}\n";
    let s = summary(&read_all(text, "s.json", &options()));
    assert_eq!(
        s,
        vec![
            (1, None, 1, 1, "one".to_string()),
            (2, None, 2, 1, "two".to_string())
        ]
    );
}

#[test]
fn broken_json_names_its_position() {
    let text = "{\n  \"kind\": \"A\",\n  \"metadata\": {\"name\": }\n}\n";
    let s = summary(&read_all(text, "b.json", &options()));
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].2, s[0].3), (3, 24), "{s:?}");
}

#[test]
fn flow_yaml_that_is_not_json_falls_back_to_yaml() {
    let s = summary(&read_all(
        "{kind: A, metadata: {name: flow}}\n",
        "-",
        &options(),
    ));
    assert_eq!(s, vec![(1, None, 1, 1, "flow".to_string())]);
}

#[test]
fn parse_value_shifts_lines_for_embedded_text() {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct C {
        version: String,
    }
    let err = gpu_trust_source::parse_value::<C>(
        "version: v1\nflgas: {}\n",
        "cm.yaml",
        &Limits::default(),
        10,
    )
    .unwrap_err();
    assert_eq!(err.location.line, 12, "{err}");
    assert!(err.message.contains("flgas"), "{err}");
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    fn read_everything(text: &str) {
        for entry in read_all(text, "fuzz.yaml", &options()) {
            if let Entry::Object(o) | Entry::Container { object: o, .. } = entry {
                let _ = o.deserialize::<serde_json::Value>();
                let _ = o.deserialize::<Meta>();
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
            read_everything(&text);
        }

        #[test]
        fn yaml_shaped_text_never_panics(text in "([-:{}\\[\\],&*!|>'\"#?% \n\tab0-9]|items|kind|<<){0,200}") {
            read_everything(&text);
        }

        #[test]
        fn mutated_lists_never_panic(at in 0usize..400, cut in 0usize..40, insert in "[-:{}\\[\\],&*!|>'\"\n ]{0,6}") {
            for base in [LIST, JSON_LIST] {
                let at = at.min(base.len());
                let mut text = String::new();
                let start = (0..=at).rev().find(|i| base.is_char_boundary(*i)).unwrap_or(0);
                let end_raw = (start + cut).min(base.len());
                let end = (end_raw..=base.len()).find(|i| base.is_char_boundary(*i)).unwrap_or(base.len());
                text.push_str(&base[..start]);
                text.push_str(&insert);
                text.push_str(&base[end..]);
                read_everything(&text);
            }
        }
    }
}

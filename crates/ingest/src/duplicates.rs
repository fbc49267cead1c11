//! The same object read twice: two files, a kustomize base and its patch, a dump and the manifests it
//! came from, an item repeated in a list. Two readings that say the same to the audit are one object;
//! two that differ are an error at the later reading, naming the first and what differs, because the
//! audit cannot know which one the cluster runs (it never takes the first as the truth).

use gpu_trust_model::{Diagnostic, Location};

/// The error for a second reading of `what` (`Deployment ml/trainer`) at `here` that differs from the
/// first, at `first`, in `differences` (field names, as the audit reads them).
pub(crate) fn conflict(
    what: &str,
    here: &Location,
    first: &Location,
    differences: &[String],
) -> Diagnostic {
    Diagnostic::error(
        here.clone(),
        format!(
            "{what} is also at {first} with different contents ({}): which one the cluster runs cannot be judged; give it once (a kustomize base and its patches: audit what `kubectl kustomize` renders)",
            if differences.is_empty() {
                "its contents".to_string()
            } else {
                differences.join(", ")
            }
        ),
    )
}

/// The top-level fields in which two serialisable readings differ, `object` (where it was read) left
/// out; a reading that does not serialise differs as a whole.
pub(crate) fn differing_fields<T: serde::Serialize>(a: &T, b: &T) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return vec!["its contents".to_string()];
    };
    let mut keys: Vec<&String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| *k != "object")
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Thing {
        object: u32,
        labels: Vec<&'static str>,
        replicas: u32,
    }

    #[test]
    fn differences_leave_out_where_it_was_read() {
        let a = Thing {
            object: 1,
            labels: vec!["a"],
            replicas: 1,
        };
        let b = Thing {
            object: 2,
            labels: vec!["a"],
            replicas: 2,
        };
        assert_eq!(differing_fields(&a, &b), ["replicas"]);
        assert!(differing_fields(&a, &a).is_empty());
        let d = conflict(
            "Deployment ml/x",
            &Location::new("b.yaml", 1, 1),
            &Location::new("a.yaml", 3, 1),
            &["replicas".to_string()],
        );
        assert!(d.is_error());
        assert!(d
            .message
            .contains("a.yaml:3:1 with different contents (replicas)"));
    }
}

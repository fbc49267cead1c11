//! Acceptances written on objects: `accept.gpu-trust.io/<RULE>: <reason>` with an optional
//! `accept.gpu-trust.io/<RULE>.until: <YYYY-MM-DD>`, on a workload object (a controller or a bare
//! Pod) or on a Namespace (docs/suppressions.md).
//!
//! Read from the object's own `metadata.annotations`. A key under the prefix that is not a rule code
//! or a rule code with `.until`, or an `until` that is not a date, is an error at the annotation (its
//! line and column in YAML; the object's position in JSON, which keeps none) and that acceptance is
//! dropped: a typo never accepts anything, and never passes silently. An acceptance whose reason is
//! absent or blank is kept with no reason: it accepts nothing, and the audit reports it. Whether the
//! rule code names a rule of the catalogue is checked by the audit, which knows the rules.

use crate::discover::At;
use crate::kinds::Typed;
use gpu_trust_model::date::Date;
use gpu_trust_model::fleet::{
    AnnotatedAcceptance, AnnotatedSubject, ACCEPT_ANNOTATION_PREFIX, ACCEPT_UNTIL_SUFFIX,
};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use gpu_trust_source::tree::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// One annotation under the prefix: its key, its text (`None` when not a string) and where it is.
pub(crate) type Entry = (String, Option<String>, Location);

/// What a typed object can carry: workloads and Namespaces (other kinds run no pods of their own).
pub(crate) fn typed_subject(t: &Typed) -> Option<(AnnotatedSubject, &ObjectMeta)> {
    let meta = match t {
        Typed::Namespace(o) => return Some((AnnotatedSubject::Namespace, &o.metadata)),
        Typed::Pod(o) => &o.metadata,
        Typed::Deployment(o) => &o.metadata,
        Typed::StatefulSet(o) => &o.metadata,
        Typed::DaemonSet(o) => &o.metadata,
        Typed::ReplicaSet(o) => &o.metadata,
        Typed::Job(o) => &o.metadata,
        Typed::CronJob(o) => &o.metadata,
        _ => return None,
    };
    Some((AnnotatedSubject::Workload, meta))
}

/// The accept annotations of typed metadata, located through the YAML tree when there is one.
pub(crate) fn typed_entries(
    meta: &ObjectMeta,
    node: Option<&Node<'_>>,
    object: &Location,
) -> Vec<Entry> {
    let Some(map) = &meta.annotations else {
        return Vec::new();
    };
    let positions = key_positions(node, object);
    map.iter()
        .filter(|(k, _)| k.starts_with(ACCEPT_ANNOTATION_PREFIX))
        .map(|(k, v)| {
            let at = positions.get(k).cloned().unwrap_or_else(|| object.clone());
            (k.clone(), Some(v.clone()), at)
        })
        .collect()
}

/// The accept annotations of an object read as a tree.
pub(crate) fn tree_entries(root: At<'_, '_>, object: &Location) -> Vec<Entry> {
    let Some(entries) = root
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(At::entries)
    else {
        return Vec::new();
    };
    let positions = match root {
        At::Yaml(n) => key_positions(Some(n), object),
        At::Json(_) => BTreeMap::new(),
    };
    entries
        .into_iter()
        .filter(|(k, _)| k.starts_with(ACCEPT_ANNOTATION_PREFIX))
        .map(|(k, v)| {
            let at = positions
                .get(&k)
                .cloned()
                .unwrap_or_else(|| v.location(object));
            (k, v.text(), at)
        })
        .collect()
}

/// Where each annotation key is in a YAML object.
fn key_positions(node: Option<&Node<'_>>, object: &Location) -> BTreeMap<String, Location> {
    let Some(map) = node
        .and_then(|n| n.get("metadata"))
        .and_then(|m| m.get("annotations"))
        .and_then(Node::as_map)
    else {
        return BTreeMap::new();
    };
    map.iter()
        .filter_map(|(k, _)| {
            let text = k.as_scalar_text()?;
            text.starts_with(ACCEPT_ANNOTATION_PREFIX).then(|| {
                (
                    text.to_string(),
                    Location::new(object.file.clone(), k.pos.line, k.pos.column),
                )
            })
        })
        .collect()
}

/// `GT` and three digits.
fn is_rule_code(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 5 && b.starts_with(b"GT") && b[2..].iter().all(u8::is_ascii_digit)
}

/// The acceptances of one object's accept annotations, and the errors of those that are not valid.
pub(crate) fn parse(
    subject: AnnotatedSubject,
    object: &ObjectRef,
    entries: Vec<Entry>,
) -> (Vec<AnnotatedAcceptance>, Vec<Diagnostic>) {
    let mut errors = Vec::new();
    // Per rule: the reason annotation and the until annotation.
    type Half = Option<(String, Option<String>, Location)>;
    let mut by_rule: BTreeMap<String, (Half, Half)> = BTreeMap::new();
    for (key, value, at) in entries {
        let name = &key[ACCEPT_ANNOTATION_PREFIX.len()..];
        let (code, until) = match name.strip_suffix(ACCEPT_UNTIL_SUFFIX) {
            Some(code) => (code, true),
            None => (name, false),
        };
        if !is_rule_code(code) {
            let upper = code.to_ascii_uppercase();
            let message = if is_rule_code(&upper) {
                format!(
                    "{object}: annotation `{key}`: rule codes are written in upper case (`{ACCEPT_ANNOTATION_PREFIX}{upper}`); this acceptance is not applied"
                )
            } else {
                format!(
                    "{object}: annotation `{key}` is not an acceptance: after `{ACCEPT_ANNOTATION_PREFIX}` comes a rule code (`GT202`) for the reason, or a rule code and `{ACCEPT_UNTIL_SUFFIX}` (`GT202{ACCEPT_UNTIL_SUFFIX}`) for the last day; it is not applied"
                )
            };
            errors.push(Diagnostic::error(
                Code::InvalidAcceptanceAnnotation,
                at,
                message,
            ));
            continue;
        }
        let Some(text) = value else {
            errors.push(Diagnostic::error(
                Code::InvalidAcceptanceAnnotation,
                at,
                format!("{object}: annotation `{key}` is not a string; it is not applied"),
            ));
            continue;
        };
        let slot = by_rule.entry(code.to_string()).or_default();
        if until {
            slot.1 = Some((key, Some(text), at));
        } else {
            slot.0 = Some((key, Some(text), at));
        }
    }
    let mut out = Vec::new();
    for (rule, (reason, until)) in by_rule {
        let until_date = match &until {
            None => None,
            Some((key, text, at)) => {
                let text = text.as_deref().unwrap_or_default();
                match Date::parse(text.trim()) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        errors.push(Diagnostic::error(Code::InvalidAcceptanceAnnotation,
                            at.clone(),
                            format!(
                                "{object}: annotation `{key}`: {e}; the acceptance of {rule} is not applied"
                            ),
                        ));
                        continue;
                    }
                }
            }
        };
        let (annotation, location, reason) = match (reason, until) {
            (Some((key, text, at)), _) => (
                key,
                at,
                text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
            ),
            (None, Some((key, _, at))) => (key, at, None),
            (None, None) => continue,
        };
        out.push(AnnotatedAcceptance {
            subject: subject.clone(),
            object: object.clone(),
            rule,
            reason,
            until: until_date,
            annotation,
            location,
        });
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> ObjectRef {
        ObjectRef {
            kind: "Deployment".into(),
            namespace: Some("ml".into()),
            name: "trainer".into(),
            location: Location::new("c.yaml", 1, 1),
        }
    }

    fn entry(key: &str, value: &str, line: u32) -> Entry {
        (
            format!("{ACCEPT_ANNOTATION_PREFIX}{key}"),
            Some(value.to_string()),
            Location::new("c.yaml", line, 5),
        )
    }

    #[test]
    fn reason_and_until_make_one_acceptance() {
        let (a, e) = parse(
            AnnotatedSubject::Workload,
            &object(),
            vec![
                entry("GT202", "runs the MIG manager", 4),
                entry("GT202.until", "2027-06-30", 5),
                entry("GT204", "host network for NCCL", 6),
            ],
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].rule, "GT202");
        assert_eq!(a[0].reason.as_deref(), Some("runs the MIG manager"));
        assert_eq!(a[0].until, Date::parse("2027-06-30").ok());
        assert_eq!(a[0].location.line, 4);
        assert_eq!(a[1].rule, "GT204");
        assert_eq!(a[1].until, None);
    }

    #[test]
    fn blank_or_absent_reason_is_kept_without_one() {
        let (a, e) = parse(
            AnnotatedSubject::Workload,
            &object(),
            vec![
                entry("GT202", "  ", 4),
                entry("GT204.until", "2027-01-01", 7),
            ],
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(a.len(), 2);
        assert!(a.iter().all(|a| a.reason.is_none()));
        assert_eq!(a[1].location.line, 7, "points at the until annotation");
    }

    #[test]
    fn malformed_keys_and_dates_are_located_errors_and_not_applied() {
        let (a, e) = parse(
            AnnotatedSubject::Workload,
            &object(),
            vec![
                entry("gt202", "lower case", 4),
                entry("GT2020", "too long", 5),
                entry("GT101.untill", "2027-01-01", 6),
                entry("GT205", "driver pinned by the vendor", 7),
                entry("GT205.until", "2027-02-30", 8),
            ],
        );
        assert!(a.is_empty(), "{a:?}");
        let lines: Vec<u32> = e.iter().map(|d| d.location.line).collect();
        assert_eq!(lines, vec![4, 5, 6, 8]);
        assert!(e.iter().all(Diagnostic::is_error));
        assert!(e[0].message.contains("upper case"), "{}", e[0].message);
        assert!(e[3].message.contains("GT205"), "{}", e[3].message);
    }
}

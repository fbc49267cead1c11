//! Versions as CSAF products write them: a `product_version` (`1.19.1`), a `product_version_range` in
//! the `vers` syntax (`vers:generic/>=1.0|<1.19.1`, several intervals and versions as the vers
//! specification reads them), or one of the phrases NVIDIA writes in product names ("All versions up
//! to and including 1.19.0", "All driver versions prior to 580.126.09").

use gpu_trust_model::Version;

/// A version, or versions, a product stands for.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum VersionExpr {
    Exact(Version),
    /// From `lower` (inclusive when `.1`) to `upper` (inclusive when `.1`).
    Range {
        lower: Option<(Version, bool)>,
        upper: Option<(Version, bool)>,
    },
    /// Several versions and intervals (`vers:generic/1.17.2|>=1.18.0|<1.18.2`), each an `Exact` or
    /// a `Range`.
    Union(Vec<VersionExpr>),
}

impl VersionExpr {
    /// The branches (first version components) it names.
    pub(super) fn branches(&self) -> Vec<u64> {
        match self {
            VersionExpr::Exact(v) => vec![v.major()],
            VersionExpr::Range { upper, lower } => upper
                .as_ref()
                .or(lower.as_ref())
                .map(|(v, _)| v.major())
                .into_iter()
                .collect(),
            VersionExpr::Union(parts) => parts.iter().flat_map(VersionExpr::branches).collect(),
        }
    }
}

/// A version token: it starts with a digit (or `v` and a digit).
fn version_token(t: &str) -> Option<Version> {
    let t = t.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | '.'));
    let digits = t.strip_prefix(['v', 'V']).unwrap_or(t);
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Version::parse(t)
}

/// Reads a version text, and the condition NVIDIA writes after a phrase in parentheses ("All versions
/// up to and including 0.12.1 (only when CDI is enabled)"). A bare version followed by a phrase in
/// parentheses ("580.105.08(All versions prior to and including vGPU software 19.3)") mixes two
/// numbering schemes and is not read.
pub(super) fn parse_version_text(text: &str) -> Option<(VersionExpr, Option<String>)> {
    match text.split_once('(') {
        Some((head, rest)) if head.trim().contains(char::is_whitespace) => {
            let condition = rest.trim_end().trim_end_matches(')').trim();
            Some((
                parse_version_expr(head)?,
                (!condition.is_empty()).then(|| format!("({condition})")),
            ))
        }
        Some(_) => None,
        None => Some((parse_version_expr(text)?, None)),
    }
}

/// Reads a version expression: `vers:<scheme>/<constraints>` (the `vers` specification CSAF 2.0
/// section 3.1.2.3.3 names), a bare version, or one of NVIDIA's phrases.
pub(super) fn parse_version_expr(text: &str) -> Option<VersionExpr> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("vers:") {
        let (_, constraints) = rest.split_once('/')?;
        return parse_constraints(constraints.split('|'));
    }
    if text.starts_with(['<', '>', '=']) {
        return parse_constraints(text.split([',', '|']));
    }
    let lower = text.to_ascii_lowercase();
    let tokens: Vec<Version> = lower.split_whitespace().filter_map(version_token).collect();
    if text.contains('(') {
        return None;
    }
    let words = |w: &[&str]| w.iter().any(|p| lower.contains(p));
    match tokens.as_slice() {
        [v] if words(&[
            "up to and including",
            "prior to and including",
            "or earlier",
            "and earlier",
            "through",
        ]) =>
        {
            Some(VersionExpr::Range {
                lower: None,
                upper: Some((v.clone(), true)),
            })
        }
        [v] if words(&["prior to", "before", "earlier than", "below"]) => {
            Some(VersionExpr::Range {
                lower: None,
                upper: Some((v.clone(), false)),
            })
        }
        [v] if words(&["and later", "or later", "and above", "or newer"]) => {
            Some(VersionExpr::Range {
                lower: Some((v.clone(), true)),
                upper: None,
            })
        }
        [v] if lower.split_whitespace().count() == 1 => Some(VersionExpr::Exact(v.clone())),
        [a, b] if words(&[" to ", " through ", " - "]) || lower.contains('-') => {
            Some(VersionExpr::Range {
                lower: Some((a.clone(), true)),
                upper: Some((b.clone(), true)),
            })
        }
        _ => None,
    }
}

/// Reads `vers` constraints as the vers specification (package-url/vers-spec,
/// VERSION-RANGE-SPEC.rst, "checking if a version is contained within a range") does: a bare or `=`
/// version is that version; the others, sorted by version, pair up: a leading `<`/`<=` is open below,
/// `>`/`>=` followed by `<`/`<=` is one interval, a trailing `>`/`>=` is open above. Anything else
/// (`!=`, `*`, unsorted constraints, two bounds of one side in a row) is not read.
fn parse_constraints<'a>(parts: impl Iterator<Item = &'a str>) -> Option<VersionExpr> {
    let mut exact = Vec::new();
    let mut bounds: Vec<(&str, Version)> = Vec::new();
    for c in parts {
        let c = c.trim();
        if c.is_empty() {
            continue;
        }
        let (op, v) = ["!=", ">=", "<=", ">", "<", "="]
            .into_iter()
            .find_map(|op| c.strip_prefix(op).map(|v| (op, v)))
            .unwrap_or(("=", c));
        let v = Version::parse(v.trim())?;
        match op {
            "=" => exact.push(VersionExpr::Exact(v)),
            "!=" => return None,
            _ => bounds.push((op, v)),
        }
    }
    if bounds.windows(2).any(|w| w[0].1 > w[1].1) {
        return None;
    }
    let mut out = exact;
    let mut rest = bounds.into_iter().peekable();
    let mut first = true;
    while let Some((op, v)) = rest.next() {
        let range = match op {
            "<" | "<=" if first => VersionExpr::Range {
                lower: None,
                upper: Some((v, op == "<=")),
            },
            ">" | ">=" => {
                let upper = match rest.peek() {
                    Some(("<" | "<=", _)) => rest.next().map(|(o, u)| (u, o == "<=")),
                    None => None,
                    Some(_) => return None,
                };
                VersionExpr::Range {
                    lower: Some((v, op == ">=")),
                    upper,
                }
            }
            _ => return None,
        };
        out.push(range);
        first = false;
    }
    match out.len() {
        0 => None,
        1 => out.pop(),
        _ => Some(VersionExpr::Union(out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn version_phrases_and_vers_ranges() {
        let upto = |s: &str, inclusive| VersionExpr::Range {
            lower: None,
            upper: Some((v(s), inclusive)),
        };
        assert_eq!(
            parse_version_expr("All versions up to and including 1.19.0"),
            Some(upto("1.19.0", true))
        );
        assert_eq!(
            parse_version_expr("All driver versions prior to 580.126.09"),
            Some(upto("580.126.09", false))
        );
        assert_eq!(
            parse_version_expr("0.0  to 4.5.2"),
            Some(VersionExpr::Range {
                lower: Some((v("0.0"), true)),
                upper: Some((v("4.5.2"), true))
            })
        );
        assert_eq!(
            parse_version_expr("1.19.1"),
            Some(VersionExpr::Exact(v("1.19.1")))
        );
        assert_eq!(
            parse_version_expr("vers:generic/>=1.18.0|<1.19.1"),
            Some(VersionExpr::Range {
                lower: Some((v("1.18.0"), true)),
                upper: Some((v("1.19.1"), false))
            })
        );
        assert_eq!(
            parse_version_expr("vers:semver/1.2.3"),
            Some(VersionExpr::Exact(v("1.2.3")))
        );
        assert_eq!(parse_version_expr("vers:generic/!=1.0"), None);
        assert_eq!(
            parse_version_expr("vers:generic/1.0|>=2.0"),
            Some(VersionExpr::Union(vec![
                VersionExpr::Exact(v("1.0")),
                VersionExpr::Range {
                    lower: Some((v("2.0"), true)),
                    upper: None
                }
            ]))
        );
        assert_eq!(parse_version_expr("vers:generic/>=2.0|<1.0"), None);
        assert_eq!(parse_version_expr("vers:generic/*"), None);
        assert_eq!(
            parse_version_text(
                "580.105.08(All versions prior to and including vGPU software 19.3)"
            ),
            None
        );
        assert_eq!(
            parse_version_text(
                "All versions up to and including 0.12.1 (only when CDI is enabled)"
            ),
            Some((
                upto("0.12.1", true),
                Some("(only when CDI is enabled)".to_string())
            ))
        );
        assert_eq!(parse_version_expr("NVIDIA Container Toolkit"), None);
        assert_eq!(parse_version_expr("All versions"), None);
    }
}

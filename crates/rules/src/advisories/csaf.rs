//! CSAF 2.0 security advisories (OASIS Common Security Advisory Framework, Version 2.0, section 3 and
//! the `csaf_json_schema.json` it defines), read into the advisory data.
//!
//! A document is read through the source crate's bounded reader (size, nesting depth, scalar size; a
//! duplicate key or a value of the wrong type is an error at its line and column). The fields CSAF
//! requires of every document (section 3.2.1: `document.category`, `csaf_version` `2.0`,
//! `publisher.{category,name,namespace}`, `title`, `tracking.{current_release_date, id,
//! initial_release_date, revision_history, status, version}`) are checked, and so are the values this
//! reader uses (product ids a status names must be in the product tree, scores within 0 to 10, dates).
//!
//! The product tree is mapped to the components the audit knows by the component table
//! (`data/components.yaml`): a product is a component when a product name, a product-family name or
//! the product's CPE names it, on one of the component's platforms (NVIDIA's driver bulletins list
//! Windows and Linux products under `architecture` branches such as `Linux(R580)`). Its version comes
//! from a `product_version` branch (`1.19.1`), a `product_version_range` in the `vers` syntax
//! (`vers:generic/>=1.0|<1.19.1`), or the version phrases NVIDIA writes in product names ("All versions
//! up to and including 1.19.0", "All driver versions prior to 580.126.09", "0.0 to 4.5.2").
//!
//! Per vulnerability and component, affected products give the last affected version of a branch (or
//! the first fixed one, for "prior to"), fixed products the first fixed version, and a branch the
//! document lists for the component but not for this vulnerability is not affected by it. A product
//! that names no known component, a version phrase not understood and a vulnerability that names no
//! known component are warnings of the document: reported, and not used.

use super::{Advisory, Affected, Components, DataSource, SourceKind};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, Version};
use gpu_trust_policy::Date;
use gpu_trust_source::{Limits, ValidationContext};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};

use super::Component;

/// The largest CSAF document read, in bytes (NVIDIA's largest driver bulletin of 2026 is about
/// 0.4 MB).
pub const MAX_DOCUMENT_BYTES: usize = 16 << 20;
/// Most products one document's tree may hold.
pub const MAX_PRODUCTS: usize = 100_000;
/// Most vulnerabilities one document may hold.
pub const MAX_VULNERABILITIES: usize = 10_000;
/// Deepest nesting of product-tree branches.
pub const MAX_BRANCH_DEPTH: usize = 20;
/// Product names a warning lists before counting the rest.
const LISTED: usize = 6;

/// One CSAF document read into advisories.
#[derive(Debug, Clone)]
pub struct Document {
    pub source: DataSource,
    pub advisories: Vec<Advisory>,
    /// What the document says that the audit cannot use.
    pub warnings: Vec<Diagnostic>,
}

/// Reads one CSAF document (`file` names it in diagnostics).
pub fn read(text: &str, file: &str, components: &Components) -> Result<Document, Vec<Diagnostic>> {
    let limits = Limits {
        max_file_bytes: MAX_DOCUMENT_BYTES,
        ..Limits::default()
    };
    let (raw, mut cx) =
        ValidationContext::read::<RawCsaf>(text, file, &limits, Code::InvalidAdvisoryData)
            .map_err(|d| vec![json_words(d)])?;
    let doc_loc = cx.loc(&raw.document);
    let d = &raw.document.value;
    let require =
        |cx: &mut ValidationContext, value: Option<&Spanned<String>>, field: &str| match value {
            Some(v) if !v.value.trim().is_empty() => Some(v.value.clone()),
            Some(v) => {
                cx.error(cx.loc(v), format!("CSAF: `{field}` is empty"));
                None
            }
            None => {
                cx.error(
                    doc_loc.clone(),
                    format!("CSAF: `{field}` is missing (CSAF 2.0 requires it)"),
                );
                None
            }
        };
    require(&mut cx, d.category.as_ref(), "document.category");
    if let Some(v) = require(&mut cx, d.csaf_version.as_ref(), "document.csaf_version") {
        if v != "2.0" {
            let at = d
                .csaf_version
                .as_ref()
                .map_or(doc_loc.clone(), |s| cx.loc(s));
            cx.error(
                at,
                format!("CSAF: csaf_version `{v}` is not supported (expected 2.0)"),
            );
        }
    }
    let title = require(&mut cx, d.title.as_ref(), "document.title");
    let publisher = d.publisher.as_ref();
    let publisher_name = match publisher {
        Some(p) => {
            require(
                &mut cx,
                p.value.category.as_ref(),
                "document.publisher.category",
            );
            require(
                &mut cx,
                p.value.namespace.as_ref(),
                "document.publisher.namespace",
            );
            require(&mut cx, p.value.name.as_ref(), "document.publisher.name")
        }
        None => {
            cx.error(
                doc_loc.clone(),
                "CSAF: `document.publisher` is missing (CSAF 2.0 requires it)",
            );
            None
        }
    };
    let mut tracking_id = None;
    let mut current = None;
    let mut initial = None;
    match d.tracking.as_ref() {
        Some(t) => {
            let tv = &t.value;
            tracking_id = require(&mut cx, tv.id.as_ref(), "document.tracking.id");
            require(&mut cx, tv.status.as_ref(), "document.tracking.status");
            require(&mut cx, tv.version.as_ref(), "document.tracking.version");
            current = date(
                &mut cx,
                tv.current_release_date.as_ref(),
                &doc_loc,
                "document.tracking.current_release_date",
            );
            initial = date(
                &mut cx,
                tv.initial_release_date.as_ref(),
                &doc_loc,
                "document.tracking.initial_release_date",
            );
            match &tv.revision_history {
                Some(h) if h.value.is_empty() => cx.error(
                    cx.loc(h),
                    "CSAF: `document.tracking.revision_history` is empty",
                ),
                Some(_) => {}
                None => cx.error(
                    cx.loc(t),
                    "CSAF: `document.tracking.revision_history` is missing (CSAF 2.0 requires it)",
                ),
            }
        }
        None => cx.error(
            doc_loc.clone(),
            "CSAF: `document.tracking` is missing (CSAF 2.0 requires it)",
        ),
    }
    if raw.vulnerabilities.len() > MAX_VULNERABILITIES {
        cx.error(
            doc_loc.clone(),
            format!(
                "CSAF: {} vulnerabilities, over the limit of {MAX_VULNERABILITIES}",
                raw.vulnerabilities.len()
            ),
        );
    }

    // The product tree, flattened.
    let mut products: BTreeMap<String, Product> = BTreeMap::new();
    if let Some(tree) = &raw.product_tree {
        let mut walk = Walk {
            cx: &mut cx,
            products: &mut products,
            count: 0,
        };
        walk.branches(&tree.value.branches, &mut Vec::new(), 1);
        for p in &tree.value.full_product_names {
            walk.product(p, &[], None);
        }
        for r in &tree.value.relationships {
            // `X as component of Y`: the product is X's, under Y's name.
            let base = walk.products.get(&r.product_reference.value).cloned();
            match base {
                Some(base) => {
                    let id = r.full_product_name.product_id.value.clone();
                    walk.products.insert(
                        id.clone(),
                        Product {
                            id,
                            ..base
                        },
                    );
                }
                None => walk.cx.error(
                    walk.cx.loc(&r.product_reference),
                    format!(
                        "CSAF: relationship names product `{}`, which the product tree does not define",
                        r.product_reference.value
                    ),
                ),
            }
        }
    }

    // Each product's component and version. What a vulnerability names that cannot be mapped is
    // said once per document (products no status names, such as the product-name entries above the
    // versions, are not).
    let mut unmapped: BTreeSet<String> = BTreeSet::new();
    let mut unread: BTreeSet<String> = BTreeSet::new();
    let mut qualified: BTreeSet<String> = BTreeSet::new();
    let mut mapped: BTreeMap<String, (Component, VersionExpr, Option<String>)> = BTreeMap::new();
    let mut tree_branches: BTreeMap<Component, BTreeSet<u64>> = BTreeMap::new();
    for p in products.values() {
        let Some(component) = component_of(p, components) else {
            continue;
        };
        if let Some((expr, qualifier)) = p.version_texts().into_iter().find_map(parse_version_text)
        {
            if let Some(b) = expr.branch() {
                tree_branches.entry(component).or_default().insert(b);
            }
            mapped.insert(p.id.clone(), (component, expr, qualifier));
        }
    }

    let url = d
        .references
        .iter()
        .find(|r| r.category.as_deref() == Some("self"))
        .or_else(|| d.references.first())
        .and_then(|r| r.url.clone());
    let bulletin = match (&publisher_name, &tracking_id) {
        (Some(p), Some(id)) => format!("{p} {id}"),
        (None, Some(id)) => id.clone(),
        _ => title.clone().unwrap_or_default(),
    };
    let mut advisories = Vec::new();
    let mut unused: Vec<String> = Vec::new();
    let mut ids = BTreeSet::new();
    for (index, v) in raw.vulnerabilities.iter().enumerate() {
        let here = cx.loc(v);
        let v = &v.value;
        let id = v
            .cve
            .clone()
            .or_else(|| v.ids.first().map(|i| i.text.clone()))
            .unwrap_or_else(|| {
                format!(
                    "{}-{}",
                    tracking_id.as_deref().unwrap_or("vulnerability"),
                    index + 1
                )
            });
        if !ids.insert(id.clone()) {
            cx.error(
                here.clone(),
                format!("CSAF: vulnerability {id} is listed twice"),
            );
        }
        let mut cvss: Option<f64> = None;
        for s in &v.scores {
            for score in [&s.cvss_v3, &s.cvss_v2].into_iter().flatten() {
                let b = &score.base_score;
                if !(0.0..=10.0).contains(&b.value) {
                    cx.error(
                        cx.loc(b),
                        format!("CSAF: {id}: baseScore {} is outside 0 to 10", b.value),
                    );
                } else if cvss.is_none_or(|c| b.value > c) {
                    cvss = Some(b.value);
                }
            }
        }
        let published = match &v.release_date {
            Some(r) => date(&mut cx, Some(r), &here, "release_date"),
            None => initial,
        };
        let Some(status) = &v.product_status else {
            unused.push(id);
            continue;
        };
        let st = &status.value;
        let mut per: BTreeMap<Component, Ranges> = BTreeMap::new();
        let groups: [(&[Spanned<String>], Status); 7] = [
            (&st.known_affected, Status::Affected),
            (&st.first_affected, Status::FirstAffected),
            (&st.last_affected, Status::Affected),
            (&st.fixed, Status::Fixed),
            (&st.first_fixed, Status::Fixed),
            (&st.known_not_affected, Status::NotAffected),
            (&st.under_investigation, Status::Affected),
        ];
        for (list, status) in groups {
            for pid in list {
                if !products.contains_key(&pid.value) {
                    cx.error(
                        cx.loc(pid),
                        format!(
                            "CSAF: {id} names product `{}`, which the product tree does not define",
                            pid.value
                        ),
                    );
                    continue;
                }
                let Some((component, expr, qualifier)) = mapped.get(&pid.value) else {
                    if let Some(p) = products.get(&pid.value) {
                        if component_of(p, components).is_some() {
                            unread.insert(p.display());
                        } else {
                            unmapped.insert(p.display());
                        }
                    }
                    continue;
                };
                if let (Some(q), Some(p)) = (qualifier, products.get(&pid.value)) {
                    qualified.insert(format!("{}: {q}", p.display()));
                }
                per.entry(*component).or_default().add(status, expr);
            }
        }
        if per.is_empty() {
            unused.push(id);
            continue;
        }
        let affects: Vec<Affected> = per
            .into_iter()
            .filter_map(|(component, r)| r.affected(component, tree_branches.get(&component)))
            .collect();
        if affects.is_empty() {
            unused.push(id);
            continue;
        }
        let vurl = v.references.iter().find_map(|r| r.url.clone());
        advisories.push(Advisory {
            summary: summary(v).unwrap_or_else(|| format!("see {bulletin}")),
            id,
            bulletin: bulletin.clone(),
            title: title.clone(),
            url: url.clone().or(vurl),
            published,
            published_text: published.map(|d| d.to_string()),
            cvss,
            preconditions: Vec::new(),
            effects: Vec::new(),
            mitigation: None,
            affects,
            source: file.to_string(),
        });
    }

    let whole = Location::new(file, 0, 0);
    let mut warnings = Vec::new();
    if !unmapped.is_empty() {
        warnings.push(Diagnostic::warning(
            Code::CsafNotUsed,
            whole.clone(),
            format!(
                "CSAF: {} not a component the audit knows, not used: {}",
                plural_products(unmapped.len()),
                listed(&unmapped)
            ),
        ));
    }
    if !unread.is_empty() {
        warnings.push(Diagnostic::warning(
            Code::CsafNotUsed,
            whole.clone(),
            format!(
                "CSAF: the version of {} not understood, not used: {}",
                if unread.len() == 1 {
                    "1 product is".to_string()
                } else {
                    format!("{} products is", unread.len())
                },
                listed(&unread)
            ),
        ));
    }
    if !qualified.is_empty() {
        warnings.push(Diagnostic::warning(Code::CsafNotUsed,
            whole.clone(),
            format!(
                "CSAF: conditions written beside versions are not read, so those versions count as affected whatever the condition: {}",
                listed(&qualified)
            ),
        ));
    }
    if !unused.is_empty() {
        warnings.push(Diagnostic::warning(
            Code::CsafNotUsed,
            whole,
            format!(
                "CSAF: {} name{} no version of a component the audit knows, not used: {}",
                if unused.len() == 1 {
                    "1 vulnerability".to_string()
                } else {
                    format!("{} vulnerabilities", unused.len())
                },
                if unused.len() == 1 { "s" } else { "" },
                unused.join(", ")
            ),
        ));
    }
    let newest = current.or(initial);
    let count = advisories.len();
    cx.finish_in_order(Document {
        source: DataSource {
            name: file.to_string(),
            kind: SourceKind::Csaf,
            title,
            tracking_id,
            newest,
            advisories: count,
        },
        advisories,
        warnings,
    })
}

/// The reader's error in JSON's words: a document is read by the YAML reader (JSON is YAML), whose
/// message about an unquoted scalar in a string field speaks of YAML.
fn json_words(mut d: Diagnostic) -> Diagnostic {
    if let Some((value, _)) = d
        .message
        .split_once(" is a boolean, a number or null to YAML readers")
    {
        d.message = format!("{value} is not a string, and CSAF requires one here");
    }
    d
}

fn plural_products(n: usize) -> String {
    if n == 1 {
        "1 product is".to_string()
    } else {
        format!("{n} products are")
    }
}

fn listed(items: &BTreeSet<String>) -> String {
    let mut out: Vec<String> = items.iter().take(LISTED).cloned().collect();
    if items.len() > LISTED {
        out.push(format!("and {} more", items.len() - LISTED));
    }
    out.join("; ")
}

/// A CSAF date-time (`2026-06-30T00:00:00.000Z`), read as its day.
fn date(
    cx: &mut ValidationContext,
    value: Option<&Spanned<String>>,
    parent: &Location,
    field: &str,
) -> Option<Date> {
    let Some(v) = value else {
        cx.error(
            parent.clone(),
            format!("CSAF: `{field}` is missing (CSAF 2.0 requires it)"),
        );
        return None;
    };
    let day = v.value.get(..10).unwrap_or(&v.value);
    match Date::parse(day) {
        Ok(d) if v.value.len() == 10 || v.value[10..].starts_with('T') => Some(d),
        _ => {
            cx.error(
                cx.loc(v),
                format!("CSAF: `{field}` `{}` is not a date-time", v.value),
            );
            None
        }
    }
}

/// The first sentence of the vulnerability's summary note (else its title), at most 300 characters.
fn summary(v: &RawVulnerability) -> Option<String> {
    let text = v
        .notes
        .iter()
        .find(|n| n.category.as_deref() == Some("summary"))
        .and_then(|n| n.text.clone())
        .or_else(|| v.title.clone())
        .or_else(|| v.cwe.as_ref().and_then(|c| c.name.clone()))?;
    let text = text.trim();
    let first = match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    };
    let mut out: String = first.chars().take(300).collect();
    if out.len() < first.len() {
        out.push('…');
    }
    Some(out)
}

/// A leaf of the product tree.
#[derive(Debug, Clone)]
struct Product {
    id: String,
    /// `(category, name)` of the branches above it, outermost first.
    path: Vec<(String, String)>,
    name: String,
    cpe: Option<String>,
}

impl Product {
    fn display(&self) -> String {
        let platform = self
            .path
            .iter()
            .find(|(c, _)| c == "architecture")
            .map(|(_, n)| format!(" ({n})"))
            .unwrap_or_default();
        // The product's name: a product-name branch above it, else a version branch whose name is
        // no version (NVIDIA names the product there), else the product's own name.
        let product = self
            .path
            .iter()
            .rev()
            .find(|(c, _)| c == "product_name")
            .or_else(|| {
                self.path
                    .iter()
                    .rev()
                    .find(|(c, n)| c == "product_version" && parse_version_expr(n).is_none())
            })
            .map(|(_, n)| n.as_str())
            .unwrap_or(&self.name);
        format!("{product}{platform}")
    }

    /// Texts that may hold the version: the leaf branch's name when it is a version branch, then
    /// the product's name.
    fn version_texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        if let Some((c, n)) = self.path.last() {
            if c == "product_version" || c == "product_version_range" {
                out.push(n.as_str());
            }
        }
        out.push(self.name.as_str());
        out
    }
}

struct Walk<'a> {
    cx: &'a mut ValidationContext,
    products: &'a mut BTreeMap<String, Product>,
    count: usize,
}

impl Walk<'_> {
    fn branches(&mut self, list: &[RawBranch], path: &mut Vec<(String, String)>, depth: usize) {
        for b in list {
            if depth > MAX_BRANCH_DEPTH {
                self.cx.error(
                    self.cx.loc(&b.name),
                    format!(
                        "CSAF: product tree branches nest deeper than {MAX_BRANCH_DEPTH} levels"
                    ),
                );
                return;
            }
            path.push((b.category.value.clone(), b.name.value.clone()));
            if let Some(p) = &b.product {
                self.product(p, path, Some(&b.name));
            }
            self.branches(&b.branches, path, depth + 1);
            path.pop();
        }
    }

    fn product(
        &mut self,
        p: &RawProduct,
        path: &[(String, String)],
        _at: Option<&Spanned<String>>,
    ) {
        self.count += 1;
        if self.count > MAX_PRODUCTS {
            if self.count == MAX_PRODUCTS + 1 {
                self.cx.error(
                    self.cx.loc(&p.product_id),
                    format!("CSAF: more than {MAX_PRODUCTS} products in the product tree"),
                );
            }
            return;
        }
        let id = p.product_id.value.clone();
        if self.products.contains_key(&id) {
            self.cx.error(
                self.cx.loc(&p.product_id),
                format!("CSAF: product id `{id}` is defined twice"),
            );
            return;
        }
        self.products.insert(
            id.clone(),
            Product {
                id,
                path: path.to_vec(),
                name: p.name.value.clone(),
                cpe: p
                    .product_identification_helper
                    .as_ref()
                    .and_then(|h| h.cpe.clone()),
            },
        );
    }
}

/// The component a product is, by the component table.
fn component_of(p: &Product, components: &Components) -> Option<Component> {
    let names: Vec<&str> = p
        .path
        .iter()
        .filter(|(c, _)| {
            matches!(
                c.as_str(),
                "product_name" | "product_family" | "product_version" | "product_version_range"
            )
        })
        .map(|(_, n)| n.as_str())
        .chain(std::iter::once(p.name.as_str()))
        .collect();
    let cpe_product = p.cpe.as_deref().and_then(|c| {
        let parts: Vec<&str> = c.split(':').collect();
        (parts.len() > 4 && parts[0] == "cpe").then(|| format!("{}:{}", parts[3], parts[4]))
    });
    let platforms: Vec<String> = p
        .path
        .iter()
        .filter(|(c, _)| c == "architecture")
        .map(|(_, n)| {
            n.split(|ch: char| !ch.is_ascii_alphanumeric())
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .collect();
    components.products.iter().find_map(|entry| {
        let by_name = !entry.name.is_empty()
            && names
                .iter()
                .any(|n| n.trim().eq_ignore_ascii_case(entry.name.trim()));
        let by_cpe = entry
            .cpe
            .as_deref()
            .is_some_and(|c| cpe_product.as_deref() == Some(c));
        let on_platform = entry.platforms.is_empty()
            || platforms.is_empty()
            || platforms
                .iter()
                .any(|p| entry.platforms.iter().any(|e| e.eq_ignore_ascii_case(p)));
        ((by_name || by_cpe) && on_platform).then_some(entry.component)
    })
}

/// A version, or versions, a product stands for.
#[derive(Debug, Clone, PartialEq)]
enum VersionExpr {
    Exact(Version),
    /// From `lower` (inclusive when `.1`) to `upper` (inclusive when `.1`).
    Range {
        lower: Option<(Version, bool)>,
        upper: Option<(Version, bool)>,
    },
}

impl VersionExpr {
    fn branch(&self) -> Option<u64> {
        match self {
            VersionExpr::Exact(v) => Some(v.major()),
            VersionExpr::Range { upper, lower } => {
                upper.as_ref().or(lower.as_ref()).map(|(v, _)| v.major())
            }
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
fn parse_version_text(text: &str) -> Option<(VersionExpr, Option<String>)> {
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
fn parse_version_expr(text: &str) -> Option<VersionExpr> {
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

fn parse_constraints<'a>(parts: impl Iterator<Item = &'a str>) -> Option<VersionExpr> {
    let mut lower = None;
    let mut upper = None;
    for c in parts {
        let c = c.trim();
        if c.is_empty() || c == "*" {
            continue;
        }
        let (op, v) = if let Some(v) = c.strip_prefix(">=") {
            (">=", v)
        } else if let Some(v) = c.strip_prefix("<=") {
            ("<=", v)
        } else if let Some(v) = c.strip_prefix('>') {
            (">", v)
        } else if let Some(v) = c.strip_prefix('<') {
            ("<", v)
        } else if let Some(v) = c.strip_prefix("!=") {
            ("!=", v)
        } else {
            ("=", c.strip_prefix('=').unwrap_or(c))
        };
        let v = Version::parse(v.trim())?;
        match op {
            ">=" => lower = Some((v, true)),
            ">" => lower = Some((v, false)),
            "<=" => upper = Some((v, true)),
            "<" => upper = Some((v, false)),
            "=" if lower.is_none() && upper.is_none() => return Some(VersionExpr::Exact(v)),
            // `!=` and several disjoint ranges are not read.
            _ => return None,
        }
    }
    (lower.is_some() || upper.is_some()).then_some(VersionExpr::Range { lower, upper })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Affected,
    FirstAffected,
    Fixed,
    NotAffected,
}

/// What one vulnerability's statuses say of one component.
#[derive(Debug, Default)]
struct Ranges {
    fixed: BTreeMap<u64, Version>,
    last_affected: BTreeMap<u64, Version>,
    introduced: Option<Version>,
    not_affected: BTreeSet<u64>,
    named: BTreeSet<u64>,
}

impl Ranges {
    fn add(&mut self, status: Status, expr: &VersionExpr) {
        if let Some(b) = expr.branch() {
            if status != Status::NotAffected {
                self.named.insert(b);
            }
        }
        // The higher of two fixes of one branch (two product lines): the versions between stay affected.
        let mut fix = |v: &Version| {
            let e = self.fixed.entry(v.major()).or_insert_with(|| v.clone());
            if v > e {
                *e = v.clone();
            }
        };
        match (status, expr) {
            (Status::Fixed, VersionExpr::Exact(v))
            | (
                Status::Fixed,
                VersionExpr::Range {
                    lower: Some((v, _)),
                    ..
                },
            ) => fix(v),
            (
                Status::Affected | Status::FirstAffected,
                VersionExpr::Range {
                    upper: Some((v, false)),
                    lower,
                },
            ) => {
                fix(v);
                self.lower(lower);
            }
            (
                Status::Affected,
                VersionExpr::Range {
                    upper: Some((v, true)),
                    lower,
                },
            ) => {
                self.last(v);
                self.lower(lower);
            }
            (Status::Affected, VersionExpr::Exact(v)) => self.last(v),
            (Status::FirstAffected, VersionExpr::Exact(v)) => self.lower(&Some((v.clone(), true))),
            (Status::NotAffected, e) => {
                if let Some(b) = e.branch() {
                    self.not_affected.insert(b);
                }
            }
            _ => {}
        }
    }

    fn last(&mut self, v: &Version) {
        let e = self
            .last_affected
            .entry(v.major())
            .or_insert_with(|| v.clone());
        if v > e {
            *e = v.clone();
        }
    }

    fn lower(&mut self, lower: &Option<(Version, bool)>) {
        if let Some((v, _)) = lower {
            if v.parts.iter().any(|p| *p > 0) && self.introduced.as_ref().is_none_or(|i| v < i) {
                self.introduced = Some(v.clone());
            }
        }
    }

    fn affected(self, component: Component, tree: Option<&BTreeSet<u64>>) -> Option<Affected> {
        if self.fixed.is_empty() && self.last_affected.is_empty() {
            return None;
        }
        let mut unaffected: BTreeSet<u64> = self.not_affected;
        if let Some(tree) = tree {
            unaffected.extend(tree.difference(&self.named).copied());
        }
        unaffected.retain(|b| !self.named.contains(b));
        Some(Affected {
            component,
            fixed: self.fixed.into_values().collect(),
            introduced: self.introduced,
            last_affected: self.last_affected.into_values().collect(),
            affected_branches: Vec::new(),
            unaffected_branches: unaffected.into_iter().collect(),
            preconditions: Vec::new(),
        })
    }
}

#[derive(Debug, Deserialize)]
struct RawCsaf {
    document: Spanned<RawDocument>,
    #[serde(default)]
    product_tree: Option<Spanned<RawProductTree>>,
    #[serde(default)]
    vulnerabilities: Vec<Spanned<RawVulnerability>>,
}

#[derive(Debug, Deserialize)]
struct RawDocument {
    #[serde(default)]
    category: Option<Spanned<String>>,
    #[serde(default)]
    csaf_version: Option<Spanned<String>>,
    #[serde(default)]
    publisher: Option<Spanned<RawPublisher>>,
    #[serde(default)]
    title: Option<Spanned<String>>,
    #[serde(default)]
    tracking: Option<Spanned<RawTracking>>,
    #[serde(default)]
    references: Vec<RawReference>,
}

#[derive(Debug, Deserialize)]
struct RawPublisher {
    #[serde(default)]
    category: Option<Spanned<String>>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    namespace: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
struct RawTracking {
    #[serde(default)]
    current_release_date: Option<Spanned<String>>,
    #[serde(default)]
    id: Option<Spanned<String>>,
    #[serde(default)]
    initial_release_date: Option<Spanned<String>>,
    #[serde(default)]
    revision_history: Option<Spanned<Vec<serde::de::IgnoredAny>>>,
    #[serde(default)]
    status: Option<Spanned<String>>,
    #[serde(default)]
    version: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
struct RawReference {
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawProductTree {
    #[serde(default)]
    branches: Vec<RawBranch>,
    #[serde(default)]
    full_product_names: Vec<RawProduct>,
    #[serde(default)]
    relationships: Vec<RawRelationship>,
}

#[derive(Debug, Deserialize)]
struct RawBranch {
    category: Spanned<String>,
    name: Spanned<String>,
    #[serde(default)]
    branches: Vec<RawBranch>,
    #[serde(default)]
    product: Option<RawProduct>,
}

#[derive(Debug, Deserialize)]
struct RawProduct {
    name: Spanned<String>,
    product_id: Spanned<String>,
    #[serde(default)]
    product_identification_helper: Option<RawHelper>,
}

#[derive(Debug, Deserialize)]
struct RawHelper {
    #[serde(default)]
    cpe: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawRelationship {
    full_product_name: RawProduct,
    product_reference: Spanned<String>,
}

#[derive(Debug, Deserialize)]
struct RawVulnerability {
    #[serde(default)]
    cve: Option<String>,
    #[serde(default)]
    ids: Vec<RawId>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    notes: Vec<RawNote>,
    #[serde(default)]
    cwe: Option<RawCwe>,
    #[serde(default)]
    product_status: Option<Spanned<RawStatus>>,
    #[serde(default)]
    scores: Vec<RawScore>,
    #[serde(default)]
    release_date: Option<Spanned<String>>,
    #[serde(default)]
    references: Vec<RawReference>,
}

#[derive(Debug, Deserialize)]
struct RawId {
    text: String,
}

#[derive(Debug, Deserialize)]
struct RawNote {
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawCwe {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RawStatus {
    #[serde(default)]
    first_affected: Vec<Spanned<String>>,
    #[serde(default)]
    first_fixed: Vec<Spanned<String>>,
    #[serde(default)]
    fixed: Vec<Spanned<String>>,
    #[serde(default)]
    known_affected: Vec<Spanned<String>>,
    #[serde(default)]
    known_not_affected: Vec<Spanned<String>>,
    #[serde(default)]
    last_affected: Vec<Spanned<String>>,
    #[serde(default)]
    under_investigation: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
struct RawScore {
    #[serde(default)]
    cvss_v3: Option<RawCvss>,
    #[serde(default)]
    cvss_v2: Option<RawCvss>,
}

#[derive(Debug, Deserialize)]
struct RawCvss {
    #[serde(rename = "baseScore")]
    base_score: Spanned<f64>,
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

    #[test]
    fn an_unlisted_branch_of_the_tree_is_not_affected() {
        let mut r = Ranges::default();
        r.add(Status::Fixed, &VersionExpr::Exact(v("580.159.03")));
        r.add(
            Status::Affected,
            &VersionExpr::Range {
                lower: None,
                upper: Some((v("580.159.03"), false)),
            },
        );
        let tree: BTreeSet<u64> = [535, 580, 595].into();
        let a = r.affected(Component::Driver, Some(&tree)).unwrap();
        assert_eq!(a.fixed, [v("580.159.03")]);
        assert_eq!(a.unaffected_branches, [535, 595]);
    }
}

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
//! that names no known component, versions not understood (named with the product and the
//! vulnerabilities they leave unjudged) and a vulnerability that names no known component are warnings
//! of the document: reported, never read as "not affected".

mod ranges;
mod raw;
mod tree;
mod version;

use super::{Advisory, Affected, Component, Components, DataSource, SourceKind};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_policy::Date;
use gpu_trust_source::{Limits, ValidationContext};
use ranges::{Ranges, Status};
use raw::{RawCsaf, RawVulnerability};
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use tree::{component_of, Product, Walk};
use version::{parse_version_text, VersionExpr};

pub use tree::{MAX_BRANCH_DEPTH, MAX_PRODUCTS};

/// The largest CSAF document read, in bytes (NVIDIA's largest driver bulletin of 2026 is about
/// 0.4 MB).
pub const MAX_DOCUMENT_BYTES: usize = 16 << 20;
/// Most vulnerabilities one document may hold.
pub const MAX_VULNERABILITIES: usize = 10_000;
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

/// Reads one CSAF document (`file` names it in diagnostics): its header, its product tree
/// flattened, each product's component and version, then each vulnerability into an advisory, and
/// what the audit cannot use into warnings.
pub fn read(text: &str, file: &str, components: &Components) -> Result<Document, Vec<Diagnostic>> {
    let limits = Limits {
        max_file_bytes: MAX_DOCUMENT_BYTES,
        ..Limits::default()
    };
    let (raw, mut cx) =
        ValidationContext::read::<RawCsaf>(text, file, &limits, Code::InvalidAdvisoryData)
            .map_err(|d| vec![json_words(d)])?;
    let header = header(&mut cx, &raw);
    let (products, twice) = products(&mut cx, &raw, components);
    let (mapped, tree_branches) = versions(&products, components);
    let mut reader = Reader {
        file,
        components,
        header,
        products,
        mapped,
        tree_branches,
        ids: BTreeSet::new(),
        notes: Notes::default(),
    };
    let advisories: Vec<Advisory> = raw
        .vulnerabilities
        .iter()
        .enumerate()
        .filter_map(|(index, v)| reader.vulnerability(&mut cx, index, v))
        .collect();
    let Reader { header, notes, .. } = reader;
    let warnings = notes.warnings(file, &twice);
    let count = advisories.len();
    cx.finish_in_order(Document {
        source: DataSource {
            name: file.to_string(),
            kind: SourceKind::Csaf,
            title: header.title,
            tracking_id: header.tracking_id,
            newest: header.current.or(header.initial),
            advisories: count,
        },
        advisories,
        warnings,
    })
}

/// What the document's header says of the bulletin: its title, tracking id and dates, the name
/// its advisories are cited by and its own address.
struct Header {
    title: Option<String>,
    tracking_id: Option<String>,
    current: Option<Date>,
    initial: Option<Date>,
    /// `publisher tracking-id`, or what there is of it.
    bulletin: String,
    url: Option<String>,
}

/// Checks the fields CSAF 2.0 requires of the document (category, version 2.0, title, publisher,
/// tracking) and the vulnerabilities' count, and reads the header.
fn header(cx: &mut ValidationContext, raw: &RawCsaf) -> Header {
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
    require(cx, d.category.as_ref(), "document.category");
    if let Some(v) = require(cx, d.csaf_version.as_ref(), "document.csaf_version") {
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
    let title = require(cx, d.title.as_ref(), "document.title");
    let publisher = d.publisher.as_ref();
    let publisher_name = match publisher {
        Some(p) => {
            require(cx, p.value.category.as_ref(), "document.publisher.category");
            require(
                cx,
                p.value.namespace.as_ref(),
                "document.publisher.namespace",
            );
            require(cx, p.value.name.as_ref(), "document.publisher.name")
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
            tracking_id = require(cx, tv.id.as_ref(), "document.tracking.id");
            require(cx, tv.status.as_ref(), "document.tracking.status");
            require(cx, tv.version.as_ref(), "document.tracking.version");
            current = date(
                cx,
                tv.current_release_date.as_ref(),
                &doc_loc,
                "document.tracking.current_release_date",
            );
            initial = date(
                cx,
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
    Header {
        title,
        tracking_id,
        current,
        initial,
        bulletin,
        url,
    }
}

/// The product tree flattened into products by id (a relationship's product is its base's, under
/// its own id), and the ids defined twice alike.
fn products(
    cx: &mut ValidationContext,
    raw: &RawCsaf,
    components: &Components,
) -> (BTreeMap<String, Product>, BTreeSet<String>) {
    let mut products: BTreeMap<String, Product> = BTreeMap::new();
    let mut twice = BTreeSet::new();
    if let Some(tree) = &raw.product_tree {
        let mut walk = Walk {
            cx: &mut *cx,
            products: &mut products,
            count: 0,
            components,
            twice: BTreeSet::new(),
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
        twice = walk.twice;
    }
    (products, twice)
}

/// Each product's component and version range, by product id.
type Mapped = BTreeMap<String, (Component, VersionExpr, Option<String>)>;

/// The products whose component and version the audit reads, and per component the branches the
/// tree names.
fn versions(
    products: &BTreeMap<String, Product>,
    components: &Components,
) -> (Mapped, BTreeMap<Component, BTreeSet<u64>>) {
    let mut mapped: Mapped = BTreeMap::new();
    let mut tree_branches: BTreeMap<Component, BTreeSet<u64>> = BTreeMap::new();
    for p in products.values() {
        let Some(component) = component_of(p, components) else {
            continue;
        };
        if let Some((expr, qualifier)) = p.version_texts().into_iter().find_map(parse_version_text)
        {
            tree_branches
                .entry(component)
                .or_default()
                .extend(expr.branches());
            mapped.insert(p.id.clone(), (component, expr, qualifier));
        }
    }
    (mapped, tree_branches)
}

/// What a vulnerability names that cannot be used, said once per document (products no status
/// names, such as the product-name entries above the versions, are not).
#[derive(Default)]
struct Notes {
    /// Products of no component the audit knows.
    unmapped: BTreeSet<String>,
    /// Products of a known component whose versions are not understood, and their vulnerabilities.
    unread: BTreeSet<String>,
    unread_ids: BTreeSet<String>,
    /// Conditions written beside versions.
    qualified: BTreeSet<String>,
    /// Vulnerabilities naming no version of a known component.
    unused: Vec<String>,
}

/// A document's vulnerabilities read one by one against its header and products.
struct Reader<'a> {
    file: &'a str,
    components: &'a Components,
    header: Header,
    products: BTreeMap<String, Product>,
    mapped: Mapped,
    tree_branches: BTreeMap<Component, BTreeSet<u64>>,
    /// The vulnerabilities' ids so far (one listed twice is an error).
    ids: BTreeSet<String>,
    notes: Notes,
}

impl Reader<'_> {
    /// One vulnerability (the `index`th) as an advisory: its id, score and release date, and what it
    /// says of each component's versions; `None` when it names no version of a known component.
    fn vulnerability(
        &mut self,
        cx: &mut ValidationContext,
        index: usize,
        v: &Spanned<RawVulnerability>,
    ) -> Option<Advisory> {
        let (tracking_id, initial, bulletin) = (
            self.header.tracking_id.clone(),
            self.header.initial,
            self.header.bulletin.clone(),
        );
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
        if !self.ids.insert(id.clone()) {
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
            Some(r) => date(cx, Some(r), &here, "release_date"),
            None => initial,
        };
        let Some(status) = &v.product_status else {
            self.notes.unused.push(id);
            return None;
        };
        let per = self.ranges(cx, &id, &status.value);
        if per.is_empty() {
            self.notes.unused.push(id);
            return None;
        }
        let affects: Vec<Affected> = per
            .into_iter()
            .filter_map(|(component, r)| r.affected(component, self.tree_branches.get(&component)))
            .collect();
        if affects.is_empty() {
            self.notes.unused.push(id);
            return None;
        }
        let vurl = v.references.iter().find_map(|r| r.url.clone());
        Some(Advisory {
            summary: summary(v).unwrap_or_else(|| format!("see {bulletin}")),
            id,
            bulletin: bulletin.clone(),
            title: self.header.title.clone(),
            url: self.header.url.clone().or(vurl),
            published,
            published_text: published.map(|d| d.to_string()),
            cvss,
            preconditions: Vec::new(),
            effects: Vec::new(),
            mitigation: None,
            affects,
            source: self.file.to_string(),
        })
    }

    /// What a vulnerability's product statuses say per component, with what it names that cannot
    /// be used noted (a product the tree does not define is an error).
    fn ranges(
        &mut self,
        cx: &mut ValidationContext,
        id: &str,
        st: &raw::RawStatus,
    ) -> BTreeMap<Component, Ranges> {
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
                if !self.products.contains_key(&pid.value) {
                    cx.error(
                        cx.loc(pid),
                        format!(
                            "CSAF: {id} names product `{}`, which the product tree does not define",
                            pid.value
                        ),
                    );
                    continue;
                }
                let Some((component, expr, qualifier)) = self.mapped.get(&pid.value) else {
                    if let Some(p) = self.products.get(&pid.value) {
                        if component_of(p, self.components).is_some() {
                            let text = p.version_texts().first().copied().unwrap_or_default();
                            self.notes
                                .unread
                                .insert(format!("{} `{text}`", p.display()));
                            self.notes.unread_ids.insert(id.to_string());
                        } else {
                            self.notes.unmapped.insert(p.display());
                        }
                    }
                    continue;
                };
                if let (Some(q), Some(p)) = (qualifier, self.products.get(&pid.value)) {
                    self.notes.qualified.insert(format!("{}: {q}", p.display()));
                }
                per.entry(*component).or_default().add(status, expr);
            }
        }
        per
    }
}

impl Notes {
    /// The warnings of a document (`file`) with products defined `twice` and these notes.
    fn warnings(self, file: &str, twice: &BTreeSet<String>) -> Vec<Diagnostic> {
        let Notes {
            unmapped,
            unread,
            unread_ids,
            qualified,
            unused,
        } = self;
        let whole = Location::new(file, 0, 0);
        let mut warnings = Vec::new();
        if !twice.is_empty() {
            warnings.push(Diagnostic::warning(
            Code::CsafDefinedTwice,
            whole.clone(),
            format!(
                "CSAF: {} defined twice, which CSAF forbids; each pair reads alike, so each is read once: {}",
                if twice.len() == 1 {
                    "1 product id is".to_string()
                } else {
                    format!("{} product ids are", twice.len())
                },
                listed(twice)
            ),
        ));
        }
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
                "CSAF: the versions of {} not understood, so whether they are affected by {} is not judged: {}",
                if unread.len() == 1 {
                    "1 product are".to_string()
                } else {
                    format!("{} products are", unread.len())
                },
                listed(&unread_ids),
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
        warnings
    }
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

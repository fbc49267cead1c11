//! Advisory data: known vulnerabilities and isolation defects of the NVIDIA Container Toolkit, GPU
//! Operator, device plugin, MIG manager, DRA driver, DCGM exporter, KAI Scheduler and GPU driver, with
//! the first fixed version per branch. Rules GT201, GT203, GT205, GT210 and GT404 read it.
//!
//! The built-in data is `data/advisories.yaml` (sources in its header); `data/components.yaml` says
//! by which product names vendors' documents name each component and from which versions a
//! component injects devices with CDI by default. [`Advisories::load`] reads what `--advisories`
//! gives: files of the built-in format (a whole data set, which replaces the built-in one) and CSAF
//! 2.0 documents ([`csaf`], one vendor bulletin each, added to the data in use; an entry of a CSAF
//! document replaces one of the same id). What a document says that the audit cannot use (a product
//! that is no known component) is a warning, never dropped silently.
//!
//! [`Advisories::freshness`] says how old the data is: its newest bulletin, and whether that is older
//! than [`STALE_AFTER_DAYS`] before the audit's day. Every report carries it.

pub mod csaf;

use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, Version};
use gpu_trust_policy::Date;
use gpu_trust_source::{Limits, ValidationContext};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

pub use gpu_trust_model::stack::Component;

/// The built-in advisory file.
pub const BUILTIN: &str = include_str!("../data/advisories.yaml");
/// The name diagnostics give the built-in file.
pub const BUILTIN_NAME: &str = "crates/rules/data/advisories.yaml";
/// The built-in component table.
pub const COMPONENTS: &str = include_str!("../data/components.yaml");
/// The name diagnostics give the component table.
pub const COMPONENTS_NAME: &str = "crates/rules/data/components.yaml";

/// Data whose newest bulletin is older than this many days before the audit's day is stale: the
/// vendor publishes roughly quarterly (the driver bulletins of 2025 and 2026 came three to four
/// months apart), so three months without a newer one means updates were probably missed.
pub const STALE_AFTER_DAYS: i64 = 90;

/// When a vulnerability applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precondition {
    /// Not exploitable when CDI injects the devices.
    NotWithCdi,
    /// Not exploitable when crun is the low-level runtime.
    NotWithCrun,
    /// Only in the component's CDI modes.
    CdiOnly,
    /// Only when the device plugin's device list strategy is `cdi-annotations` or `cdi-cri`.
    CdiDeviceListStrategy,
    /// Needs a toolkit configuration other than the default.
    NonDefaultConfig,
}

impl Precondition {
    pub fn describe(self) -> &'static str {
        match self {
            Precondition::NotWithCdi => "not when CDI is used",
            Precondition::NotWithCrun => "not when crun is the low-level runtime",
            Precondition::CdiOnly => "only in CDI modes",
            Precondition::CdiDeviceListStrategy => {
                "only when the device plugin's device list strategy is cdi-annotations or cdi-cri"
            }
            Precondition::NonDefaultConfig => "only with a non-default toolkit configuration",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Precondition::NotWithCdi => "not-with-cdi",
            Precondition::NotWithCrun => "not-with-crun",
            Precondition::CdiOnly => "cdi-only",
            Precondition::CdiDeviceListStrategy => "cdi-device-list-strategy",
            Precondition::NonDefaultConfig => "non-default-config",
        }
    }
}

/// What an affected version does that a rule other than GT201 judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// A container with `NVIDIA_VISIBLE_DEVICES=none` gets every GPU of the node (GT203).
    VisibleDevicesNoneGetsAll,
    /// Every RDMA (`ibverbs`) device of the node is injected into GPU containers.
    EveryRdmaDevice,
    /// The exporter serves `/debug/pprof/` to anyone who reaches it (GT210).
    UnauthenticatedProfiling,
    /// Reconfiguring MIG partitions can corrupt data or hang the GPU (`plan --current` warns before
    /// repartitioning a node whose driver is affected).
    MigReconfiguration,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::VisibleDevicesNoneGetsAll => "visible-devices-none-gets-all",
            Effect::EveryRdmaDevice => "every-rdma-device",
            Effect::UnauthenticatedProfiling => "unauthenticated-profiling",
            Effect::MigReconfiguration => "mig-reconfiguration",
        }
    }
}

/// What the audit knows of a node's runtime setup, to judge preconditions (`None`: the input does
/// not show it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeSetup {
    /// CDI injects the devices (ClusterPolicy `cdi.enabled`, or a CDI device list strategy).
    pub cdi: Option<bool>,
    /// crun is the low-level runtime.
    pub crun: Option<bool>,
    /// The device plugin's device list strategy names a CDI strategy (`cdi-annotations`,
    /// `cdi-cri`).
    pub plugin_cdi: Option<bool>,
}

impl RuntimeSetup {
    /// Whether the precondition holds on this setup: `None` when the setup does not show it.
    fn holds(self, p: Precondition) -> Option<bool> {
        match p {
            Precondition::NotWithCdi => self.cdi.map(|c| !c),
            Precondition::NotWithCrun => self.crun.map(|c| !c),
            Precondition::CdiOnly => self.cdi,
            Precondition::CdiDeviceListStrategy => self.plugin_cdi,
            Precondition::NonDefaultConfig => None,
        }
    }
}

/// One advisory.
#[derive(Debug, Clone, PartialEq)]
pub struct Advisory {
    pub id: String,
    pub summary: String,
    pub bulletin: String,
    /// The title of the document that published it (a CSAF document's `document.title`).
    pub title: Option<String>,
    /// Where to read it.
    pub url: Option<String>,
    /// The day the patch window counts from (the last day of the month when only the month is known).
    pub published: Option<Date>,
    /// The publication date as the data writes it.
    pub published_text: Option<String>,
    /// CVSS base score; `None` for a defect published without one (a release note's fix).
    pub cvss: Option<f64>,
    pub preconditions: Vec<Precondition>,
    pub effects: Vec<Effect>,
    pub mitigation: Option<String>,
    pub affects: Vec<Affected>,
    /// The file it was read from (the built-in data's name, or the path given).
    pub source: String,
}

impl Advisory {
    /// CVSS for sorting: a defect without a score sorts after every scored one.
    fn score(&self) -> f64 {
        self.cvss.unwrap_or(-1.0)
    }
}

/// What one advisory says about one component.
#[derive(Debug, Clone, PartialEq)]
pub struct Affected {
    pub component: Component,
    /// First fixed version of each branch, sorted.
    pub fixed: Vec<Version>,
    /// The first affected version: older ones are not affected.
    pub introduced: Option<Version>,
    /// Per branch without a fix, the last version named affected: newer ones of the branch are not.
    pub last_affected: Vec<Version>,
    /// Branches listed as affected without fixed versions, sorted.
    pub affected_branches: Vec<u64>,
    /// Branches the publisher lists as not affected, sorted.
    pub unaffected_branches: Vec<u64>,
    /// Exact intervals of affected versions (a CSAF product of several intervals or versions): on
    /// the branches they span, they alone decide.
    pub intervals: Vec<Interval>,
    pub preconditions: Vec<Precondition>,
}

/// An interval of affected versions; a bound is inclusive when its flag is set, and absent when open.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub lower: Option<(Version, bool)>,
    pub upper: Option<(Version, bool)>,
}

impl Interval {
    pub fn contains(&self, v: &Version) -> bool {
        self.lower
            .as_ref()
            .is_none_or(|(l, incl)| if *incl { v >= l } else { v > l })
            && self
                .upper
                .as_ref()
                .is_none_or(|(u, incl)| if *incl { v <= u } else { v < u })
    }

    /// Whether it reaches into `branch`.
    fn spans(&self, branch: u64) -> bool {
        self.lower.as_ref().is_none_or(|(l, _)| l.major() <= branch)
            && self.upper.as_ref().is_none_or(|(u, _)| u.major() >= branch)
    }
}

impl std::fmt::Display for Interval {
    /// In the `vers` notation: `>=1.10.0|<1.12.0`, `1.17.2` for one version.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.lower, &self.upper) {
            (Some((l, true)), Some((u, true))) if l == u => write!(f, "{l}"),
            _ => {
                let lower = self
                    .lower
                    .as_ref()
                    .map(|(l, incl)| format!("{}{l}", if *incl { ">=" } else { ">" }));
                let upper = self
                    .upper
                    .as_ref()
                    .map(|(u, incl)| format!("{}{u}", if *incl { "<=" } else { "<" }));
                let parts: Vec<String> = lower.into_iter().chain(upper).collect();
                write!(f, "{}", parts.join("|"))
            }
        }
    }
}

/// Whether an installed version is affected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Fixed,
    /// Affected; `fix` is the version to upgrade to (the fix of its branch, or of the next branch),
    /// `None` when the data names the branch as affected without a fix.
    Affected {
        fix: Option<Version>,
    },
}

impl Affected {
    /// Compares an installed version with the fixes, branch by branch.
    pub fn status(&self, installed: &Version) -> Status {
        let branch = installed.major();
        if self.introduced.as_ref().is_some_and(|i| installed < i)
            || self.unaffected_branches.contains(&branch)
        {
            return Status::Fixed;
        }
        let next_fix = || {
            self.fixed
                .iter()
                .filter(|f| f.major() > branch)
                .min()
                .cloned()
        };
        if self.intervals.iter().any(|i| i.spans(branch)) {
            return match self.intervals.iter().find(|i| i.contains(installed)) {
                Some(i) => Status::Affected {
                    fix: match &i.upper {
                        Some((u, false)) => Some(u.clone()),
                        _ => self.fixed.iter().filter(|f| *f > installed).min().cloned(),
                    },
                },
                None => Status::Fixed,
            };
        }
        if let Some(fix) = self.fixed.iter().find(|f| f.major() == branch) {
            return if installed >= fix {
                Status::Fixed
            } else {
                Status::Affected {
                    fix: Some(fix.clone()),
                }
            };
        }
        if let Some(last) = self.last_affected.iter().find(|l| l.major() == branch) {
            return if installed > last {
                Status::Fixed
            } else {
                Status::Affected { fix: next_fix() }
            };
        }
        if self.affected_branches.contains(&branch) {
            return Status::Affected { fix: next_fix() };
        }
        let newest_listed = self
            .fixed
            .iter()
            .chain(&self.last_affected)
            .map(Version::major)
            .chain(self.affected_branches.iter().copied())
            .max();
        // A branch newer than every listed branch is fixed; an older one without an entry of its
        // own is affected, and the upgrade is to the fix of the next listed branch.
        match newest_listed {
            Some(newest) if branch < newest => Status::Affected { fix: next_fix() },
            _ => Status::Fixed,
        }
    }
}

/// A match of an advisory on an installed component.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    pub advisory: &'a Advisory,
    pub component: Component,
    pub fix: Option<Version>,
    /// Preconditions the setup does not show, which may still rule it out, for the message.
    pub conditions: Vec<Precondition>,
}

/// Where some of the data in use came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSource {
    /// `built-in`, or the path given.
    pub name: String,
    pub kind: SourceKind,
    /// A CSAF document's title and tracking id.
    pub title: Option<String>,
    pub tracking_id: Option<String>,
    /// The newest date the source carries: its newest bulletin (a CSAF document's current release).
    pub newest: Option<Date>,
    /// Advisories it contributed to the data in use.
    pub advisories: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SourceKind {
    BuiltIn,
    /// A file of the built-in format.
    File,
    Csaf,
    /// A CSAF document `gpu-trust advisories update` read from the vendor's repository or a mirror.
    Update,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::BuiltIn => "built-in",
            SourceKind::File => "advisory-file",
            SourceKind::Csaf => "csaf",
            SourceKind::Update => "update",
        }
    }
}

/// From which version a component injects devices with CDI unless its configuration says otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct CdiDefault {
    pub component: Component,
    pub since: Version,
    pub source: String,
}

/// A set of advisories, where it came from, and the component table it was read with.
#[derive(Debug, Clone, PartialEq)]
pub struct Advisories {
    pub advisories: Vec<Advisory>,
    pub sources: Vec<DataSource>,
    pub components: Components,
    /// The `gpu-trust advisories update` whose bulletins the data holds.
    pub update: Option<Update>,
}

impl Default for Advisories {
    fn default() -> Self {
        Advisories {
            advisories: Vec::new(),
            sources: Vec::new(),
            components: Components::builtin().clone(),
            update: None,
        }
    }
}

/// What `gpu-trust advisories update` last did: where it read the vendor's bulletins, and the last
/// day it read every bulletin its index listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The repository's address, or a mirror's.
    pub from: String,
    /// The last day it read every bulletin its indexes listed: bulletins published until then are
    /// in the data. `None` until an update has read them all.
    pub checked: Option<Date>,
}

/// The bulletins an update kept, as the commands read them offline.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    pub update: Update,
    /// `(name, text)` of each CSAF document, named by where it was read from.
    pub documents: Vec<(String, String)>,
}

/// How old the data in use is, on the audit's day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Freshness {
    /// The newest bulletin date of the data.
    pub newest: Option<Date>,
    /// Days from it to the audit's day.
    pub age_days: Option<i64>,
    /// The last day an update found nothing newer, if later than the newest bulletin.
    pub checked: Option<Date>,
    /// Neither the newest bulletin nor the last update is within [`STALE_AFTER_DAYS`], or undated.
    pub stale: bool,
}

impl Advisories {
    /// The data shipped with gpu-trust.
    pub fn builtin() -> &'static Advisories {
        static BUILT: OnceLock<Advisories> = OnceLock::new();
        BUILT.get_or_init(|| {
            Advisories::parse(BUILTIN, BUILTIN_NAME)
                .map(|mut a| {
                    if let Some(s) = a.sources.first_mut() {
                        s.name = "built-in".to_string();
                        s.kind = SourceKind::BuiltIn;
                    }
                    a
                })
                .expect("the built-in advisory data parses (tested)")
        })
    }

    /// Reads an advisory file (the format of `data/advisories.yaml`); unknown fields, bad versions and
    /// bad dates are errors with their location.
    pub fn parse(text: &str, file: &str) -> Result<Advisories, Vec<Diagnostic>> {
        let (raw, mut cx) = ValidationContext::read::<RawFile>(
            text,
            file,
            &Limits::default(),
            Code::InvalidAdvisoryData,
        )
        .map_err(|d| vec![d])?;
        if raw.version.value != 1 {
            cx.error(
                cx.loc(&raw.version),
                format!(
                    "advisory file version {} is not supported (expected 1)",
                    raw.version.value
                ),
            );
        }
        let mut out = Vec::new();
        let mut ids = BTreeSet::new();
        for entry in raw.advisories {
            let here = cx.loc(&entry);
            let a = entry.value;
            let what = format!("advisory {}", a.id);
            if a.id.trim().is_empty() {
                cx.error(here.clone(), "advisory with an empty id");
            }
            if !ids.insert(a.id.clone()) {
                cx.error(here.clone(), format!("{what} is listed twice"));
            }
            if let Some(cvss) = &a.cvss {
                if !(0.0..=10.0).contains(&cvss.value) {
                    cx.error(
                        cx.loc(cvss),
                        format!("{what}: cvss {} is outside 0 to 10", cvss.value),
                    );
                }
            }
            let published = match &a.published {
                None => None,
                Some(text) => match parse_published(&text.value) {
                    Some(d) => Some(d),
                    None => {
                        cx.error(
                            cx.loc(text),
                            format!(
                                "{what}: published `{}` is not YYYY-MM-DD or YYYY-MM",
                                text.value
                            ),
                        );
                        None
                    }
                },
            };
            if a.affects.is_empty() {
                cx.error(here.clone(), format!("{what} affects nothing"));
            }
            let mut affects = Vec::new();
            for r in a.affects {
                let r_loc = cx.loc(&r);
                let r = r.value;
                let mut versions = |list: &[Spanned<String>], field: &str| -> Vec<Version> {
                    let mut out = Vec::new();
                    for f in list {
                        match Version::parse(&f.value) {
                            Some(v) => out.push(v),
                            None => cx.error(
                                cx.loc(f),
                                format!(
                                    "{what}: {field} version `{}` of the {} is not a version",
                                    f.value, r.component
                                ),
                            ),
                        }
                    }
                    out.sort();
                    out
                };
                let fixed = versions(&r.fixed, "fixed");
                let last_affected = versions(&r.last_affected, "last affected");
                let introduced = versions(r.introduced.as_slice(), "introduced")
                    .into_iter()
                    .next();
                let branches: BTreeSet<u64> = fixed.iter().map(Version::major).collect();
                if branches.len() != fixed.len() {
                    cx.error(
                        r_loc.clone(),
                        format!(
                            "{what}: two fixed versions of one branch for the {}",
                            r.component
                        ),
                    );
                }
                if r.fixed.is_empty()
                    && r.affected_branches.is_empty()
                    && r.last_affected.is_empty()
                {
                    cx.error(
                        r_loc,
                        format!(
                            "{what}: the {} needs `fixed`, `lastAffected` or `affectedBranches`",
                            r.component
                        ),
                    );
                }
                let mut affected_branches = r.affected_branches;
                affected_branches.sort_unstable();
                affected_branches.dedup();
                let mut unaffected_branches = r.unaffected_branches;
                unaffected_branches.sort_unstable();
                unaffected_branches.dedup();
                affects.push(Affected {
                    component: r.component,
                    fixed,
                    introduced,
                    last_affected,
                    affected_branches,
                    unaffected_branches,
                    intervals: Vec::new(),
                    preconditions: r.preconditions,
                });
            }
            out.push(Advisory {
                id: a.id,
                summary: a.summary,
                bulletin: a.bulletin,
                title: a.title,
                url: a.url,
                published,
                published_text: a.published.map(|p| p.value),
                cvss: a.cvss.map(|c| c.value),
                preconditions: a.preconditions,
                effects: a.effects,
                mitigation: a.mitigation,
                affects,
                source: file.to_string(),
            });
        }
        let newest = out.iter().filter_map(|a| a.published).max();
        let source = DataSource {
            name: file.to_string(),
            kind: SourceKind::File,
            title: None,
            tracking_id: None,
            newest,
            advisories: out.len(),
        };
        // In the order the checks found them, as the file reads.
        cx.finish_in_order(Advisories {
            advisories: out,
            sources: vec![source],
            components: Components::builtin().clone(),
            update: None,
        })
    }

    /// Reads what `--advisories` gives, in order: files of the built-in format replace the built-in
    /// data (the last one wins), and CSAF documents add to it. A document whose text starts with `{`
    /// is read as CSAF. Any error makes the whole `Err`; the warnings come with the data.
    pub fn load(inputs: &[(String, String)]) -> Result<Loaded, Vec<Diagnostic>> {
        Advisories::load_with(None, inputs)
    }

    /// [`Advisories::load`] with the bulletins an `advisories update` kept (`cache`): they add to
    /// the built-in data (or the data file given) before the documents `--advisories` gives. What
    /// they say that the audit cannot use was said when the update read them, and is not repeated.
    pub fn load_with(
        cache: Option<&Cache>,
        inputs: &[(String, String)],
    ) -> Result<Loaded, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let mut base: Option<Advisories> = None;
        let mut documents = Vec::new();
        for (name, text) in cache.iter().flat_map(|c| &c.documents) {
            match csaf::read(text, name, Components::builtin()) {
                Ok(mut doc) => {
                    doc.source.kind = SourceKind::Update;
                    documents.push(doc);
                }
                Err(e) => errors.extend(e),
            }
        }
        for (name, text) in inputs {
            if text.trim_start().starts_with('{') {
                match csaf::read(text, name, Components::builtin()) {
                    Ok(doc) => {
                        warnings.extend(doc.warnings.iter().cloned());
                        documents.push(doc);
                    }
                    Err(e) => errors.extend(e),
                }
            } else {
                match Advisories::parse(text, name) {
                    Ok(a) => {
                        let message = match &base {
                            Some(old) => format!(
                                "advisory file {name} replaces {}: only one data file is used",
                                old.sources
                                    .first()
                                    .map_or("the previous one", |s| s.name.as_str())
                            ),
                            None => format!(
                                "advisory file {name} replaces the built-in advisory data: only its advisories and those of the CSAF documents given are used"
                            ),
                        };
                        warnings.push(Diagnostic::warning(
                            Code::AdvisoryDataReplaced,
                            Location::new(name.clone(), 0, 0),
                            message,
                        ));
                        base = Some(a);
                    }
                    Err(e) => errors.extend(e),
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut data = base.unwrap_or_else(|| Advisories::builtin().clone());
        data.update = cache.map(|c| c.update.clone());
        for doc in documents {
            let mut added = 0;
            for mut a in doc.advisories {
                if let Some(old) = data.advisories.iter_mut().find(|o| o.id == a.id) {
                    // The document's versions win; what the data file adds that CSAF cannot say
                    // (preconditions, effects, a mitigation) is kept.
                    let kept = !old.preconditions.is_empty()
                        || !old.effects.is_empty()
                        || old.mitigation.is_some()
                        || old.affects.iter().any(|r| !r.preconditions.is_empty());
                    a.preconditions = old.preconditions.clone();
                    a.effects = old.effects.clone();
                    a.mitigation = a.mitigation.take().or_else(|| old.mitigation.clone());
                    for r in &mut a.affects {
                        if let Some(o) = old.affects.iter().find(|o| o.component == r.component) {
                            r.preconditions = o.preconditions.clone();
                        }
                    }
                    warnings.push(Diagnostic::warning(
                        Code::AdvisoryDataReplaced,
                        Location::new(doc.source.name.clone(), 0, 0),
                        format!(
                            "{}: this document's versions replace those of {}{}",
                            a.id,
                            old.source,
                            if kept {
                                ", whose preconditions, effects and mitigation are kept"
                            } else {
                                ""
                            }
                        ),
                    ));
                    *old = a;
                } else {
                    data.advisories.push(a);
                }
                added += 1;
            }
            data.sources.push(DataSource {
                advisories: added,
                ..doc.source
            });
        }
        Ok(Loaded { data, warnings })
    }

    /// The data file that replaced the built-in data, if one did.
    pub fn replaced_built_in(&self) -> Option<&str> {
        self.sources
            .iter()
            .find(|s| s.kind == SourceKind::File)
            .map(|s| s.name.as_str())
    }

    /// The newest bulletin date of the data in use.
    pub fn newest_bulletin(&self) -> Option<Date> {
        self.advisories
            .iter()
            .filter_map(|a| a.published)
            .chain(self.sources.iter().filter_map(|s| s.newest))
            .max()
    }

    /// How old the data is on `today`: an update that found nothing newer than the newest bulletin
    /// makes the data current on the day it ran.
    pub fn freshness(&self, today: Date) -> Freshness {
        let newest = self.newest_bulletin();
        let checked = self
            .update
            .as_ref()
            .and_then(|u| u.checked)
            .filter(|c| newest.is_none_or(|n| *c > n));
        let current_on = checked.or(newest);
        Freshness {
            newest,
            age_days: newest.map(|n| today.days_since(n)),
            checked,
            stale: current_on.is_none_or(|d| today.days_since(d) > STALE_AFTER_DAYS),
        }
    }

    /// The bulletin of the newest date, as the data names it (`NVIDIA security bulletin 5861`).
    pub fn newest_bulletin_name(&self) -> Option<&str> {
        let advisory = self
            .advisories
            .iter()
            .filter_map(|a| Some((a.published?, a.bulletin.as_str())))
            .max();
        // A CSAF document's current release can be newer than its advisories (a revision).
        let document = self
            .sources
            .iter()
            .filter(|s| matches!(s.kind, SourceKind::Csaf | SourceKind::Update))
            .filter_map(|s| Some((s.newest?, s.title.as_deref().unwrap_or(s.name.as_str()))))
            .max();
        match (advisory, document) {
            (Some(a), Some(d)) if d.0 > a.0 => Some(d.1),
            (a, d) => a.or(d).map(|(_, name)| name),
        }
    }

    /// The ids of the vendor bulletins the data holds (the number that ends `NVIDIA security
    /// bulletin 5821` or a CSAF document's `NVIDIA Product Security 5861`).
    pub fn bulletin_ids(&self) -> BTreeSet<&str> {
        self.advisories
            .iter()
            .filter_map(|a| a.bulletin.rsplit(' ').next())
            .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            .collect()
    }

    /// The advisories that affect `installed` of `component` under `setup`, most severe first.
    pub fn hits(
        &self,
        component: Component,
        installed: &Version,
        setup: RuntimeSetup,
    ) -> Vec<Hit<'_>> {
        let mut out = Vec::new();
        for a in &self.advisories {
            for r in a.affects.iter().filter(|r| r.component == component) {
                let all = a.preconditions.iter().chain(&r.preconditions).copied();
                if all.clone().any(|p| setup.holds(p) == Some(false)) {
                    continue;
                }
                let conditions: Vec<Precondition> =
                    all.filter(|p| setup.holds(*p).is_none()).collect();
                if let Status::Affected { fix } = r.status(installed) {
                    out.push(Hit {
                        advisory: a,
                        component,
                        fix,
                        conditions,
                    });
                }
            }
        }
        out.sort_by(|x, y| {
            y.advisory
                .score()
                .total_cmp(&x.advisory.score())
                .then_with(|| x.advisory.id.cmp(&y.advisory.id))
        });
        out
    }

    /// The advisories with `effect` that affect `installed` of `component`, whatever the runtime
    /// setup (an unknown setup rules no precondition out), most severe first.
    pub fn with_effect(
        &self,
        component: Component,
        installed: &Version,
        effect: Effect,
    ) -> Vec<Hit<'_>> {
        self.hits(component, installed, RuntimeSetup::default())
            .into_iter()
            .filter(|h| h.advisory.effects.contains(&effect))
            .collect()
    }

    /// Per component, the advisories that name it, in data order (for `gpu-trust advisories`).
    pub fn by_component(&self) -> BTreeMap<Component, Vec<(&Advisory, &Affected)>> {
        let mut out: BTreeMap<Component, Vec<(&Advisory, &Affected)>> = BTreeMap::new();
        for a in &self.advisories {
            for r in &a.affects {
                out.entry(r.component).or_default().push((a, r));
            }
        }
        out
    }
}

/// Data read from `--advisories`, with what it says that the audit cannot use.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub data: Advisories,
    pub warnings: Vec<Diagnostic>,
}

/// `YYYY-MM-DD`, or `YYYY-MM` read as the last day of the month.
fn parse_published(text: &str) -> Option<Date> {
    if let Ok(d) = Date::parse(text) {
        return Some(d);
    }
    let (y, m) = text.split_once('-')?;
    if y.len() != 4 || m.len() != 2 {
        return None;
    }
    let (y, m): (u16, u8) = (y.parse().ok()?, m.parse().ok()?);
    let first_next = if m == 12 {
        Date::new(y.checked_add(1)?, 1, 1)?
    } else {
        Date::new(y, m.checked_add(1)?, 1)?
    };
    Date::new(y, m, 1)?;
    Some(first_next.add_days(-1))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    version: Spanned<u32>,
    #[serde(default)]
    advisories: Vec<Spanned<RawAdvisory>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdvisory {
    id: String,
    summary: String,
    bulletin: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    published: Option<Spanned<String>>,
    #[serde(default)]
    cvss: Option<Spanned<f64>>,
    #[serde(default)]
    preconditions: Vec<Precondition>,
    #[serde(default)]
    effects: Vec<Effect>,
    #[serde(default)]
    mitigation: Option<String>,
    affects: Vec<Spanned<RawAffected>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawAffected {
    component: Component,
    #[serde(default)]
    fixed: Vec<Spanned<String>>,
    #[serde(default)]
    introduced: Option<Spanned<String>>,
    #[serde(default)]
    last_affected: Vec<Spanned<String>>,
    #[serde(default)]
    affected_branches: Vec<u64>,
    #[serde(default)]
    unaffected_branches: Vec<u64>,
    #[serde(default)]
    preconditions: Vec<Precondition>,
}

/// The component table (`data/components.yaml`): how vendor documents name each component, and from
/// which versions CDI is the default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Components {
    pub products: Vec<ProductName>,
    pub cdi_defaults: Vec<CdiDefault>,
}

/// A name by which a vendor's CSAF product tree names a component.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductName {
    pub component: Component,
    /// A product or product-family name (compared without letter case).
    pub name: String,
    /// The CPE product part (`vendor:product`) of `cpe:2.3:a:<vendor>:<product>:...`.
    pub cpe: Option<String>,
    /// The platforms (`architecture` branch names, by their first word) the product must be on;
    /// empty for any.
    pub platforms: Vec<String>,
}

impl Components {
    /// The built-in table.
    pub fn builtin() -> &'static Components {
        static BUILT: OnceLock<Components> = OnceLock::new();
        BUILT.get_or_init(|| {
            Components::parse(COMPONENTS, COMPONENTS_NAME)
                .expect("the built-in component table parses (tested)")
        })
    }

    /// Reads a component table.
    pub fn parse(text: &str, file: &str) -> Result<Components, Vec<Diagnostic>> {
        let (raw, mut cx) = ValidationContext::read::<RawComponents>(
            text,
            file,
            &Limits::default(),
            Code::InvalidAdvisoryData,
        )
        .map_err(|d| vec![d])?;
        if raw.version.value != 1 {
            cx.error(
                cx.loc(&raw.version),
                format!(
                    "component table version {} is not supported (expected 1)",
                    raw.version.value
                ),
            );
        }
        let mut products = Vec::new();
        for c in raw.components {
            for name in c.names {
                products.push(ProductName {
                    component: c.component,
                    name,
                    cpe: None,
                    platforms: c.platforms.clone(),
                });
            }
            for cpe in c.cpe {
                products.push(ProductName {
                    component: c.component,
                    name: String::new(),
                    cpe: Some(cpe),
                    platforms: c.platforms.clone(),
                });
            }
        }
        let mut cdi_defaults = Vec::new();
        for d in raw.cdi_defaults {
            match Version::parse(&d.since.value) {
                Some(since) => cdi_defaults.push(CdiDefault {
                    component: d.component,
                    since,
                    source: d.source,
                }),
                None => cx.error(
                    cx.loc(&d.since),
                    format!("`{}` is not a version", d.since.value),
                ),
            }
        }
        cx.finish_in_order(Components {
            products,
            cdi_defaults,
        })
    }

    /// The version from which `component` uses CDI by default, if it does.
    pub fn cdi_since(&self, component: Component) -> Option<&CdiDefault> {
        self.cdi_defaults.iter().find(|d| d.component == component)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawComponents {
    version: Spanned<u32>,
    components: Vec<RawComponent>,
    #[serde(default)]
    cdi_defaults: Vec<RawCdiDefault>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawComponent {
    component: Component,
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    cpe: Vec<String>,
    #[serde(default)]
    platforms: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawCdiDefault {
    component: Component,
    since: Spanned<String>,
    source: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn ids(hits: &[Hit<'_>]) -> Vec<String> {
        let mut out: Vec<String> = hits.iter().map(|h| h.advisory.id.clone()).collect();
        out.sort();
        out
    }

    #[test]
    fn builtin_data_parses_and_covers_the_reference() {
        let a = Advisories::builtin();
        let all: BTreeSet<&str> = a.advisories.iter().map(|a| a.id.as_str()).collect();
        for id in [
            "CVE-2024-0132",
            "CVE-2024-0133",
            "CVE-2024-0134",
            "CVE-2024-0135",
            "CVE-2024-0136",
            "CVE-2024-0137",
            "CVE-2025-23359",
            "CVE-2025-23266",
            "CVE-2025-23267",
            "CVE-2026-24260",
            "CVE-2024-0126",
            "CVE-2024-53869",
            "CVE-2025-23244",
            "CVE-2025-23280",
            "CVE-2026-47559",
            "CVE-2026-47603",
            "CVE-2026-47604",
        ] {
            assert!(all.contains(id), "{id} missing");
        }
    }

    #[test]
    fn toolkit_versions_per_fix() {
        let a = Advisories::builtin();
        let setup = RuntimeSetup::default();
        let hits = a.hits(Component::ContainerToolkit, &v("1.16.1"), setup);
        assert!(ids(&hits).contains(&"CVE-2024-0132".to_string()));
        assert_eq!(hits[0].advisory.cvss, Some(9.0), "most severe first");
        let hits = a.hits(Component::ContainerToolkit, &v("1.17.4"), setup);
        assert_eq!(
            ids(&hits),
            [
                "CVE-2025-23266",
                "CVE-2025-23267",
                "CVE-2026-24260",
                "NVIDIA-CTK-VISIBLE-DEVICES-NONE"
            ]
        );
        assert!(a
            .hits(Component::ContainerToolkit, &v("1.19.1"), setup)
            .is_empty());
        // The higher of NVIDIA's two statements for CVE-2024-0135.
        assert!(
            ids(&a.hits(Component::ContainerToolkit, &v("1.17.2"), setup))
                .contains(&"CVE-2024-0135".to_string())
        );
    }

    #[test]
    fn preconditions_rule_out_what_the_setup_excludes() {
        let a = Advisories::builtin();
        let cdi = RuntimeSetup {
            cdi: Some(true),
            ..RuntimeSetup::default()
        };
        let hits = ids(&a.hits(Component::ContainerToolkit, &v("1.16.1"), cdi));
        assert!(!hits.contains(&"CVE-2024-0132".to_string()));
        assert!(hits.contains(&"CVE-2024-0134".to_string()));
        let crun = RuntimeSetup {
            crun: Some(true),
            ..RuntimeSetup::default()
        };
        let hits = ids(&a.hits(Component::ContainerToolkit, &v("1.17.7"), crun));
        assert!(!hits.contains(&"CVE-2025-23266".to_string()));
        assert!(hits.contains(&"CVE-2025-23267".to_string()));
        // Bulletin 5659: the device plugin is affected only when its device list strategy is
        // cdi-annotations or cdi-cri, whatever the runtime does.
        let envvar = RuntimeSetup {
            cdi: Some(true),
            plugin_cdi: Some(false),
            ..RuntimeSetup::default()
        };
        assert!(a
            .hits(Component::DevicePlugin, &v("0.17.2"), envvar)
            .is_empty());
        let plugin_cdi = RuntimeSetup {
            plugin_cdi: Some(true),
            ..RuntimeSetup::default()
        };
        let hits = a.hits(Component::DevicePlugin, &v("0.17.2"), plugin_cdi);
        assert_eq!(hits.len(), 2);
        // What the setup shows is no condition left open; what it does not show is.
        assert_eq!(hits[0].conditions, [Precondition::NotWithCrun]);
        let unknown = a.hits(
            Component::DevicePlugin,
            &v("0.17.2"),
            RuntimeSetup::default(),
        );
        assert!(unknown
            .iter()
            .all(|h| h.conditions.contains(&Precondition::CdiDeviceListStrategy)));
    }

    #[test]
    fn drivers_compare_per_branch() {
        let a = Advisories::builtin();
        let s = RuntimeSetup::default();
        let hit = |ver: &str, id: &str| -> Option<Option<Version>> {
            a.hits(Component::Driver, &v(ver), s)
                .into_iter()
                .find(|h| h.advisory.id == id)
                .map(|h| h.fix)
        };
        // Own branch: at or above the fix is fixed.
        assert_eq!(hit("550.127.05", "CVE-2024-0126"), None);
        assert_eq!(
            hit("550.127.04", "CVE-2024-0126"),
            Some(Some(v("550.127.05")))
        );
        assert_eq!(hit("535.216.01", "CVE-2024-0126"), None);
        // A branch newer than every fix is fixed.
        assert_eq!(hit("570.86.10", "CVE-2024-0126"), None);
        // An unlisted older branch is affected: upgrade to the next listed branch.
        assert_eq!(
            hit("560.35.03", "CVE-2024-0126"),
            Some(Some(v("565.57.01")))
        );
        assert_eq!(
            hit("470.256.02", "CVE-2024-0126"),
            Some(Some(v("535.216.01")))
        );
        // Affected branches without fixes.
        assert_eq!(hit("550.54.15", "CVE-2024-53869"), Some(None));
        assert_eq!(hit("570.86.10", "CVE-2024-53869"), None);
    }

    #[test]
    fn mig_reconfiguration_is_an_effect_of_the_data() {
        let a = Advisories::builtin();
        let mig =
            |ver: &str| ids(&a.with_effect(Component::Driver, &v(ver), Effect::MigReconfiguration));
        // Bulletin 5821: fixed in 580.159.03 on R580; R570 has no fix of its own.
        assert_eq!(mig("580.95.05"), ["CVE-2026-24197"]);
        assert!(mig("580.159.03").is_empty());
        assert_eq!(mig("570.211.01"), ["CVE-2026-24197"]);
        assert!(mig("595.71.05").is_empty());
    }

    #[test]
    fn the_2026_entries() {
        let a = Advisories::builtin();
        let s = RuntimeSetup::default();
        let fix = |c: Component, ver: &str, id: &str| -> Option<Option<Version>> {
            a.hits(c, &v(ver), s)
                .into_iter()
                .find(|h| h.advisory.id == id)
                .map(|h| h.fix)
        };
        // May 2026: R570 has no fix of its own; the upgrade is to R580's.
        assert_eq!(
            fix(Component::Driver, "570.211.01", "CVE-2026-24187"),
            Some(Some(v("580.159.03")))
        );
        assert_eq!(
            fix(Component::Driver, "535.288.01", "CVE-2026-24198"),
            None,
            "R535 is not affected by CVE-2026-24198"
        );
        assert_eq!(
            fix(Component::Driver, "590.48.01", "CVE-2026-24187"),
            Some(Some(v("595.71.05")))
        );
        // KAI Scheduler before 0.13.0.
        assert_eq!(
            fix(Component::KaiScheduler, "0.12.6", "CVE-2026-24176"),
            Some(Some(v("0.13.0")))
        );
        // The exporter served /debug/pprof from 4.8.0 to 4.8.1.
        assert_eq!(
            fix(Component::DcgmExporter, "4.7.1", "CVE-2026-47483"),
            None
        );
        assert_eq!(
            fix(Component::DcgmExporter, "4.8.1", "CVE-2026-47483"),
            Some(Some(v("4.8.2")))
        );
        // Every RDMA device in GPU containers: GPU Operator 26.3.0 to 26.3.2.
        let rdma = "NVIDIA-GPU-OPERATOR-RDMA-DEVICES";
        assert_eq!(fix(Component::GpuOperator, "25.10.1", rdma), None);
        assert_eq!(
            fix(Component::GpuOperator, "26.3.2", rdma),
            Some(Some(v("26.3.3")))
        );
        assert_eq!(fix(Component::GpuOperator, "26.7.0", rdma), None);
        assert_eq!(
            fix(Component::DevicePlugin, "0.19.1", rdma),
            Some(Some(v("0.19.3")))
        );
        // NVIDIA_VISIBLE_DEVICES=none: CDI modes only.
        let none = "NVIDIA-CTK-VISIBLE-DEVICES-NONE";
        let legacy = RuntimeSetup {
            cdi: Some(false),
            ..RuntimeSetup::default()
        };
        assert!(a
            .hits(Component::ContainerToolkit, &v("1.18.1"), legacy)
            .iter()
            .all(|h| h.advisory.id != none));
        assert_eq!(
            fix(Component::ContainerToolkit, "1.18.1", none),
            Some(Some(v("1.18.2")))
        );
    }

    #[test]
    fn the_data_says_how_old_it_is() {
        let a = Advisories::builtin();
        let newest = a.newest_bulletin().unwrap();
        assert_eq!(newest, Date::new(2026, 9, 30).unwrap(), "bulletin 5861");
        assert_eq!(
            a.newest_bulletin_name(),
            Some("NVIDIA security bulletin 5861")
        );
        let fresh = a.freshness(Date::new(2026, 10, 4).unwrap());
        assert_eq!(fresh.age_days, Some(4));
        assert!(!fresh.stale);
        let old = a.freshness(newest.add_days(STALE_AFTER_DAYS + 1));
        assert!(old.stale);
        assert!(!a.freshness(newest.add_days(STALE_AFTER_DAYS)).stale);
        assert_eq!(
            a.sources
                .iter()
                .map(|s| (s.name.as_str(), s.kind))
                .collect::<Vec<_>>(),
            [("built-in", SourceKind::BuiltIn)]
        );
    }

    /// An update that found nothing newer keeps the data current from the day it ran.
    #[test]
    fn an_update_that_found_nothing_newer_keeps_the_data_current() {
        let mut a = Advisories::builtin().clone();
        let newest = a.newest_bulletin().unwrap();
        let late = newest.add_days(STALE_AFTER_DAYS + 30);
        assert!(a.freshness(late).stale);
        a.update = Some(Update {
            from: "file:///mirror".into(),
            checked: Some(newest.add_days(60)),
        });
        let f = a.freshness(late);
        assert!(!f.stale, "{f:?}");
        assert_eq!(f.checked, Some(newest.add_days(60)));
        assert_eq!(
            f.age_days,
            Some(STALE_AFTER_DAYS + 30),
            "still counted from the bulletin"
        );
    }

    /// Bulletin 5861 fixes R580, R595, R610 and R615 only: an R535 or R570 driver is affected, and
    /// the fix to move to is R580's.
    #[test]
    fn the_september_2026_driver_bulletin() {
        let a = Advisories::builtin();
        let fix = |ver: &str| -> Option<Option<Version>> {
            a.hits(Component::Driver, &v(ver), RuntimeSetup::default())
                .into_iter()
                .find(|h| h.advisory.id == "CVE-2026-47559")
                .map(|h| h.fix)
        };
        assert_eq!(fix("580.159.03"), Some(Some(v("580.178.04"))));
        assert_eq!(fix("580.178.04"), None);
        assert_eq!(fix("595.71.05"), Some(Some(v("595.91.07"))));
        assert_eq!(fix("610.57.04"), None);
        assert_eq!(fix("615.71.09"), None);
        assert_eq!(
            fix("535.309.01"),
            Some(Some(v("580.178.04"))),
            "R535: no fix"
        );
        assert_eq!(
            fix("570.211.01"),
            Some(Some(v("580.178.04"))),
            "R570: no fix"
        );
        assert_eq!(fix("590.48.01"), Some(Some(v("595.91.07"))));
        assert_eq!(fix("620.1.1"), None, "a newer branch than every fix");
    }

    #[test]
    fn the_component_table_parses_and_names_every_component() {
        let c = Components::builtin();
        for component in Component::ALL {
            assert!(
                c.products.iter().any(|p| p.component == component),
                "{component:?} has no product name"
            );
        }
        assert_eq!(
            c.cdi_since(Component::GpuOperator).map(|d| d.since.clone()),
            Some(v("25.10.0"))
        );
    }

    #[test]
    fn a_data_file_replaces_the_built_in_data_and_errors_are_collected() {
        let file = "version: 1\nadvisories:\n  - id: X\n    summary: s\n    bulletin: b\n    cvss: 1\n    affects: [{component: driver, fixed: [\"1.0\"]}]\n";
        let loaded = Advisories::load(&[("a.yaml".into(), file.into())]).unwrap();
        assert_eq!(loaded.data.advisories.len(), 1);
        assert_eq!(loaded.data.sources[0].name, "a.yaml");
        // Replacing the built-in data is announced, never silent (a YAML file in a folder of
        // bulletins would otherwise drop every built-in advisory unseen).
        let said: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            ["a.yaml: warning[advisory-data-replaced]: advisory file a.yaml replaces the built-in advisory data: only its advisories and those of the CSAF documents given are used"]
        );
        assert_eq!(loaded.data.replaced_built_in(), Some("a.yaml"));
        assert_eq!(Advisories::builtin().replaced_built_in(), None);
        let err = Advisories::load(&[
            ("a.yaml".into(), "version: 3\n".into()),
            ("b.json".into(), "{\"document\": 1}".into()),
        ])
        .unwrap_err();
        let at: Vec<String> = err.iter().map(|d| d.location.to_string()).collect();
        assert_eq!(at, ["a.yaml:1:10", "b.json:1:14"]);
    }

    #[test]
    fn month_dates_count_from_the_month_end() {
        assert_eq!(parse_published("2024-10"), Date::new(2024, 10, 31));
        assert_eq!(parse_published("2024-02"), Date::new(2024, 2, 29));
        assert_eq!(parse_published("2024-12"), Date::new(2024, 12, 31));
        assert_eq!(parse_published("2024-10-02"), Date::new(2024, 10, 2));
        assert_eq!(parse_published("2024-13"), None);
        assert_eq!(parse_published("October"), None);
    }

    /// Every check of an advisory file one file can break at once, in the order they are reported
    /// (the file's order), each as the command line prints it.
    #[test]
    fn validation_diagnostics_are_stable() {
        let text = "version: 2
advisories:
  - id: X
    summary: s
    bulletin: b
    cvss: 11
    published: soon
    affects:
      - {component: driver, fixed: [\"latest\", \"550.1\", \"550.2\"]}
      - {component: container-toolkit}
  - id: X
    summary: s
    bulletin: b
    cvss: -1
    affects: []
  - id: ' '
    summary: s
    bulletin: b
    cvss: 1
    published: 2024-13
    affects: [{component: driver, affectedBranches: [535]}]
";
        let errors: Vec<String> = Advisories::parse(text, "advisories.yaml")
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        insta::assert_snapshot!("advisory_file_diagnostics", errors.join("\n"));
    }

    #[test]
    fn unknown_fields_and_bad_versions_are_located_errors() {
        let err = Advisories::parse(
            "version: 1\nadvisories:\n  - id: X\n    summary: s\n    bulletin: b\n    cvss: 1\n    affects: [{component: driver, fixd: [\"1\"]}]\n",
            "adv.yaml",
        )
        .unwrap_err();
        assert_eq!(err[0].location.file, "adv.yaml");
        assert_eq!(err[0].location.line, 7, "{}", err[0]);
        assert!(err[0].message.contains("fixd"), "{}", err[0]);
        let err = Advisories::parse(
            "version: 1\nadvisories:\n  - id: X\n    summary: s\n    bulletin: b\n    cvss: 11\n    affects: [{component: driver, fixed: [\"latest\"]}]\n",
            "adv.yaml",
        )
        .unwrap_err();
        let text: Vec<String> = err.iter().map(|d| d.message.clone()).collect();
        assert!(text.iter().any(|m| m.contains("latest")), "{text:?}");
        assert!(text.iter().any(|m| m.contains("cvss")), "{text:?}");
    }
}

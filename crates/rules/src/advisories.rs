//! Advisory data: known vulnerabilities of the NVIDIA Container Toolkit, GPU Operator, device plugin,
//! MIG manager and GPU driver, with the first fixed version per branch. Rules GT201 and GT205 read it.
//!
//! The built-in data is `data/advisories.yaml` (sources in its header); `--advisories FILE` replaces it
//! with a newer file of the same format, read by [`Advisories::parse`].

use gpu_trust_model::{Diagnostic, Version};
use gpu_trust_policy::Date;
use gpu_trust_source::{Limits, ValidationContext};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::OnceLock;

/// The built-in advisory file.
pub const BUILTIN: &str = include_str!("../data/advisories.yaml");
/// The name diagnostics give the built-in file.
pub const BUILTIN_NAME: &str = "crates/rules/data/advisories.yaml";

/// A component of the NVIDIA stack an advisory can affect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Component {
    ContainerToolkit,
    GpuOperator,
    DevicePlugin,
    MigManager,
    Driver,
}

impl Component {
    pub fn title(self) -> &'static str {
        match self {
            Component::ContainerToolkit => "NVIDIA Container Toolkit",
            Component::GpuOperator => "NVIDIA GPU Operator",
            Component::DevicePlugin => "NVIDIA device plugin",
            Component::MigManager => "NVIDIA MIG manager",
            Component::Driver => "NVIDIA GPU driver",
        }
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

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
    /// Needs a toolkit configuration other than the default.
    NonDefaultConfig,
}

impl Precondition {
    pub fn describe(self) -> &'static str {
        match self {
            Precondition::NotWithCdi => "not when CDI is used",
            Precondition::NotWithCrun => "not when crun is the low-level runtime",
            Precondition::CdiOnly => "only in CDI modes",
            Precondition::NonDefaultConfig => "only with a non-default toolkit configuration",
        }
    }
}

/// What the audit knows of a node's runtime setup, to judge preconditions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeSetup {
    /// CDI injects the devices (ClusterPolicy `cdi.enabled`, or a CDI device list strategy).
    pub cdi: Option<bool>,
    /// crun is the low-level runtime.
    pub crun: Option<bool>,
}

impl RuntimeSetup {
    /// Whether the precondition rules the vulnerability out (unknown setups do not).
    fn excludes(self, p: Precondition) -> bool {
        match p {
            Precondition::NotWithCdi => self.cdi == Some(true),
            Precondition::NotWithCrun => self.crun == Some(true),
            Precondition::CdiOnly => self.cdi == Some(false),
            Precondition::NonDefaultConfig => false,
        }
    }
}

/// One advisory.
#[derive(Debug, Clone, PartialEq)]
pub struct Advisory {
    pub id: String,
    pub summary: String,
    pub bulletin: String,
    /// The day the patch window counts from (the last day of the month when only the month is known).
    pub published: Option<Date>,
    /// The publication date as the data writes it.
    pub published_text: Option<String>,
    pub cvss: f64,
    pub preconditions: Vec<Precondition>,
    pub mitigation: Option<String>,
    pub affects: Vec<Affected>,
}

/// What one advisory says about one component.
#[derive(Debug, Clone, PartialEq)]
pub struct Affected {
    pub component: Component,
    /// First fixed version of each branch, sorted.
    pub fixed: Vec<Version>,
    /// Branches listed as affected without fixed versions, sorted.
    pub affected_branches: Vec<u64>,
    pub preconditions: Vec<Precondition>,
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
        if self.fixed.is_empty() {
            let newest = self.affected_branches.iter().max().copied().unwrap_or(0);
            return if branch <= newest && !self.affected_branches.is_empty() {
                Status::Affected { fix: None }
            } else {
                Status::Fixed
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
        // No fix in its own branch: newer than every listed branch is fixed; otherwise the upgrade is
        // to the fix of the next listed branch.
        match self.fixed.iter().filter(|f| f.major() > branch).min() {
            None => Status::Fixed,
            Some(next) => Status::Affected {
                fix: Some(next.clone()),
            },
        }
    }
}

/// A match of an advisory on an installed component.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    pub advisory: &'a Advisory,
    pub component: Component,
    pub fix: Option<Version>,
    /// Preconditions that may still rule it out (unknown setup), for the message.
    pub conditions: Vec<Precondition>,
}

/// A set of advisories.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Advisories {
    pub advisories: Vec<Advisory>,
}

impl Advisories {
    /// The data shipped with gpu-trust.
    pub fn builtin() -> &'static Advisories {
        static BUILT: OnceLock<Advisories> = OnceLock::new();
        BUILT.get_or_init(|| {
            Advisories::parse(BUILTIN, BUILTIN_NAME)
                .expect("the built-in advisory data parses (tested)")
        })
    }

    /// Reads an advisory file (the format of `data/advisories.yaml`); unknown fields, bad versions and
    /// bad dates are errors with their location.
    pub fn parse(text: &str, file: &str) -> Result<Advisories, Vec<Diagnostic>> {
        let (raw, mut cx) = ValidationContext::read::<RawFile>(text, file, &Limits::default())
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
            if !(0.0..=10.0).contains(&a.cvss.value) {
                cx.error(
                    cx.loc(&a.cvss),
                    format!("{what}: cvss {} is outside 0 to 10", a.cvss.value),
                );
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
                let mut fixed = Vec::new();
                for f in &r.fixed {
                    match Version::parse(&f.value) {
                        Some(v) => fixed.push(v),
                        None => cx.error(
                            cx.loc(f),
                            format!(
                                "{what}: fixed version `{}` of the {} is not a version",
                                f.value, r.component
                            ),
                        ),
                    }
                }
                fixed.sort();
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
                if r.fixed.is_empty() && r.affected_branches.is_empty() {
                    cx.error(
                        r_loc,
                        format!(
                            "{what}: the {} needs `fixed` or `affectedBranches`",
                            r.component
                        ),
                    );
                }
                let mut affected_branches = r.affected_branches;
                affected_branches.sort_unstable();
                affected_branches.dedup();
                affects.push(Affected {
                    component: r.component,
                    fixed,
                    affected_branches,
                    preconditions: r.preconditions,
                });
            }
            out.push(Advisory {
                id: a.id,
                summary: a.summary,
                bulletin: a.bulletin,
                published,
                published_text: a.published.map(|p| p.value),
                cvss: a.cvss.value,
                preconditions: a.preconditions,
                mitigation: a.mitigation,
                affects,
            });
        }
        // In the order the checks found them, as the file reads.
        cx.finish_in_order(Advisories { advisories: out })
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
                let conditions: Vec<Precondition> = a
                    .preconditions
                    .iter()
                    .chain(&r.preconditions)
                    .copied()
                    .collect();
                if conditions.iter().any(|p| setup.excludes(*p)) {
                    continue;
                }
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
                .cvss
                .total_cmp(&x.advisory.cvss)
                .then_with(|| x.advisory.id.cmp(&y.advisory.id))
        });
        out
    }
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
    published: Option<Spanned<String>>,
    cvss: Spanned<f64>,
    #[serde(default)]
    preconditions: Vec<Precondition>,
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
    affected_branches: Vec<u64>,
    #[serde(default)]
    preconditions: Vec<Precondition>,
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
        assert_eq!(hits[0].advisory.cvss, 9.0, "most severe first");
        let hits = a.hits(Component::ContainerToolkit, &v("1.17.4"), setup);
        assert_eq!(
            ids(&hits),
            ["CVE-2025-23266", "CVE-2025-23267", "CVE-2026-24260"]
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
            crun: None,
        };
        let hits = ids(&a.hits(Component::ContainerToolkit, &v("1.16.1"), cdi));
        assert!(!hits.contains(&"CVE-2024-0132".to_string()));
        assert!(hits.contains(&"CVE-2024-0134".to_string()));
        let crun = RuntimeSetup {
            cdi: None,
            crun: Some(true),
        };
        let hits = ids(&a.hits(Component::ContainerToolkit, &v("1.17.7"), crun));
        assert!(!hits.contains(&"CVE-2025-23266".to_string()));
        assert!(hits.contains(&"CVE-2025-23267".to_string()));
        // The device plugin is affected in CDI modes only.
        let no_cdi = RuntimeSetup {
            cdi: Some(false),
            crun: None,
        };
        assert!(a
            .hits(Component::DevicePlugin, &v("0.17.2"), no_cdi)
            .is_empty());
        assert_eq!(a.hits(Component::DevicePlugin, &v("0.17.2"), cdi).len(), 2);
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

//! The audit's result: what every renderer (table, JSON, SARIF, HTML) prints. This is the
//! `gpu-trust/audit/v2` wire format (`docs/schema/audit-v2.schema.json`); field names serialise in
//! camelCase and every list is sorted, so the same input gives byte-identical JSON.
//!
//! Nothing in it grows with the square of the tenants: what tenants share is reported once per shared
//! thing (a [`GroupEntry`]: a GPU or MIG instance, the instances of a MIG GPU, a node, the nodes a set
//! of templates may be placed on, the API server) with its members, and a finding of a pairwise rule
//! covers a node group's pairs at once, with their number. The pairs of the tenants with the widest
//! blast radius are spelled out in the [`Matrix`].

pub use crate::coverage::Coverage;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Incident, Layer, Severity, Trust};
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "gpu-trust/audit/v2";

/// A finding lists at most this many of the pairs accepted one by one (`acceptedPairs`), and counts
/// them all (`acceptedPairCount`): K tenants whose annotations accept each other make K(K-1)/2.
pub const MAX_ACCEPTED_PAIRS: usize = 200;

/// Tenants on the axes of the [`Matrix`].
pub const MAX_MATRIX_TENANTS: usize = 60;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    pub schema: &'static str,
    pub summary: Summary,
    /// Per layer: in play or not, evaluated whole, in part or not at all, and why.
    pub coverage: Coverage,
    pub tenants: Vec<TenantEntry>,
    /// Sorted: severity (most severe first), rule code, tenants, nodes, first object.
    pub findings: Vec<Finding>,
    /// What tenants share, one entry per shared thing, in a fixed order (`g1`, `g2`...).
    pub groups: Vec<GroupEntry>,
    pub blast_radius: Vec<BlastRadiusEntry>,
    /// Who can hurt whom among the tenants with the widest blast radius.
    pub matrix: Matrix,
    /// Input documents that could not be used (only with `--skip-invalid`; otherwise the run exits 2).
    pub skipped: Vec<SkippedEntry>,
    /// Rules a configuration file turned off, with its reason: their findings are not in the report.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disabled_rules: Vec<DisabledRuleEntry>,
    /// Not part of the wire format: the pair an explanation asks about ([`crate::AuditOptions::pair`]):
    /// where the two tenants meet (the findings that cover them carry `explained`).
    #[serde(skip)]
    pub pair: Option<PairReport>,
    /// How old the advisory data the audit used is: its newest bulletin, and whether that is older
    /// than 90 days before the audit's day.
    pub advisory_data: AdvisoryData,
    /// The GPU node pools (v2.4): the nodes of one GPU model and one sharing configuration, as the
    /// pairwise findings group them, with their tenants.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<PoolEntry>,
    /// Not part of the wire format: per GPU node, the GPUs and who is on them, as the HTML report draws
    /// them, built from the audit's own analysis when [`crate::AuditOptions::layout`] asks for it
    /// (empty otherwise).
    #[serde(skip)]
    pub layout: Vec<crate::layout::NodeLayout>,
    /// What to fix first (v2.4): how the actions were chosen and what stays open after them; absent
    /// when no action was looked for (a tenant's view, a pair).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_first: Option<FixFirst>,
    /// The actions of `fixFirst`, in the order to take them (v2.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<Action>>,
    /// What changed since a baseline report (`--baseline`, v2.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// Which tool made the report, when, from what input (v2.4); the audit leaves it to the caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// How the run ends and why (v2.4), as the caller decided it with [`AuditReport::verdict`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// How a run ends and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// 0 passes, 1 findings fail the run, 2 a partial audit not accepted.
    pub exit_code: u8,
    /// `fails`, `passes` or `reports-only`.
    pub outcome: &'static str,
    /// Why, in one sentence.
    pub reason: String,
}

impl AuditReport {
    /// The open findings that fail the run at `fail_at` (`None`: nothing fails it); with `new_only`,
    /// only those new since the baseline.
    pub fn failing(&self, fail_at: Option<Severity>, new_only: bool) -> usize {
        let Some(floor) = fail_at else {
            return 0;
        };
        if !new_only {
            return self.summary.findings.at_or_above(floor);
        }
        self.findings
            .iter()
            .filter(|f| f.accepted.is_none() && f.severity >= floor)
            .filter(|f| f.since == Some(Since::New))
            .count()
    }

    /// How the run ends: 2 when the audit is partial and that was not accepted, 1 when open
    /// findings at or above `fail_at` remain (with `new_only`, new ones), else 0; and why.
    pub fn verdict(&self, fail_at: Option<Severity>, new_only: bool) -> Verdict {
        let failing = self.failing(fail_at, new_only);
        let new = if new_only { "new " } else { "" };
        let findings = |floor: Severity| {
            format!(
                "{failing} {new}finding{} at or above {} {} not accepted",
                if failing == 1 { "" } else { "s" },
                floor.as_str(),
                if failing == 1 { "is" } else { "are" }
            )
        };
        let partial = !self.coverage.complete;
        if partial && !self.coverage.accepted_partial {
            let also = match fail_at {
                Some(floor) if failing > 0 => format!("; {}", findings(floor)),
                _ => String::new(),
            };
            return Verdict {
                exit_code: 2,
                outcome: "fails",
                reason: format!("the audit is partial{also}"),
            };
        }
        let accepted = if partial {
            " (a partial audit, accepted: it does not cover the layers above)"
        } else {
            ""
        };
        let unchanged = match (&self.baseline, new_only) {
            (Some(b), true) if b.unchanged > 0 => format!(
                "; {} unchanged since the baseline do{} not fail the run",
                b.unchanged,
                if b.unchanged == 1 { "es" } else { "" }
            ),
            _ => String::new(),
        };
        match fail_at {
            Some(floor) if failing > 0 => Verdict {
                exit_code: 1,
                outcome: "fails",
                reason: format!("{}{unchanged}{accepted}", findings(floor)),
            },
            Some(floor) => Verdict {
                exit_code: 0,
                outcome: "passes",
                reason: format!(
                    "no {new}finding at or above {} that is not accepted{unchanged}{accepted}",
                    floor.as_str()
                ),
            },
            None => Verdict {
                exit_code: 0,
                outcome: "reports-only",
                reason: format!("--fail-on never: no finding fails the run{accepted}"),
            },
        }
    }
}

/// Where a report comes from, so that archived reports can be told apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// `gpu-trust`.
    pub tool: String,
    pub version: String,
    /// When the report was made, RFC 3339 in UTC: `SOURCE_DATE_EPOCH` when set, else the clock.
    pub generated_at: String,
    /// `sha256:` and the hex SHA-256 of the input documents: each input's name, a NUL, its bytes and
    /// a NUL, in the order read.
    pub input_digest: String,
    /// The kubeconfig context of a live audit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The API server of a live audit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

impl Provenance {
    /// Made by `gpu-trust` `version` at `unix` seconds after 1970-01-01 UTC, from input whose
    /// SHA-256 is `digest`.
    pub fn new(version: &str, unix: i64, digest: &[u8]) -> Provenance {
        let day = gpu_trust_policy::Date::from_days_since_epoch(unix.div_euclid(86_400))
            .map_or_else(|| "1970-01-01".to_string(), |d| d.to_string());
        let s = unix.rem_euclid(86_400);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Provenance {
            tool: "gpu-trust".to_string(),
            version: version.to_string(),
            generated_at: format!("{day}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60),
            input_digest: format!("sha256:{hex}"),
            context: None,
            server: None,
        }
    }
}

/// A finding against a baseline report, by its stable key ([`Finding::id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Since {
    /// The baseline has no finding of this key.
    New,
    /// The baseline has it.
    Unchanged,
}

/// What changed since a baseline report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// The baseline report's file, as given.
    pub file: String,
    /// When the baseline was made (its `provenance.generatedAt`), when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated_at: Option<String>,
    /// Findings of this report the baseline does not have, and those it has.
    pub new: usize,
    pub unchanged: usize,
    /// The baseline's findings this report no longer has, in the baseline's order.
    pub fixed: Vec<FixedFinding>,
}

/// What a baseline report is read for: its findings' keys and, for those gone, what they said.
/// Other fields are not read, so a report of any v2 minor version is a baseline.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineReport {
    pub schema: String,
    pub findings: Vec<FixedFinding>,
    #[serde(default)]
    pub provenance: Option<BaselineProvenance>,
}

/// The one field of a baseline's provenance that is read.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineProvenance {
    pub generated_at: Option<String>,
}

impl Baseline {
    /// Marks each finding of `report` new or unchanged against `old` (read from `file`) by its
    /// stable key, and lists what `old` had that `report` has not.
    pub fn compare(report: &mut AuditReport, old: BaselineReport, file: &str) {
        let before: std::collections::BTreeSet<String> = old
            .findings
            .iter()
            .map(|f| format!("{}:{}", f.rule, f.key))
            .collect();
        let now: std::collections::BTreeSet<String> =
            report.findings.iter().map(Finding::id).collect();
        let (mut new, mut unchanged) = (0, 0);
        for f in &mut report.findings {
            let since = if before.contains(&f.id()) {
                unchanged += 1;
                Since::Unchanged
            } else {
                new += 1;
                Since::New
            };
            f.since = Some(since);
        }
        let fixed = old
            .findings
            .into_iter()
            .filter(|f| !now.contains(&format!("{}:{}", f.rule, f.key)))
            .collect();
        report.baseline = Some(Baseline {
            file: file.to_string(),
            generated_at: old.provenance.and_then(|p| p.generated_at),
            new,
            unchanged,
            fixed,
        });
    }
}

/// A finding of the baseline that is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixedFinding {
    pub rule: String,
    pub key: String,
    pub severity: Severity,
    pub message: String,
}

/// The fewest actions found that close every open finding at or above a threshold, each proven by
/// auditing the input again with its change applied (`gpu-trust-decide`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FixFirst {
    /// The severity the actions are chosen for: the run's `--fail-on` (`high` under `never`).
    pub threshold: Severity,
    /// Open findings (not accepted) at or above the threshold before any action.
    pub open: usize,
    /// How the actions were chosen among the candidates that close something and open nothing at
    /// or above the threshold.
    pub search: Search,
    /// Candidate changes audited.
    pub tried: usize,
    /// Candidate changes left untried: auditing them would have read the input too many times.
    pub untried: usize,
    /// The open findings once every action is applied together and the input audited again, by
    /// severity.
    pub remaining: SeverityCounts,
    /// The stable keys (`RULE:key`) of the open findings at or above the threshold that no
    /// candidate change closes.
    pub unclosed: Vec<String>,
    /// Why no change closes them: each change tried that closes one of `unclosed` alone, with what
    /// it opens or makes worse at or above the threshold. Empty when no change tried closes one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<Blocked>,
    /// Why no change was tried (the input is too large to audit again, a live snapshot too
    /// large to keep); absent when changes were tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_tried: Option<String>,
}

/// A change that would close findings no action closes, were it not for what it opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocked {
    /// What the change is (as an action's `summary`).
    pub summary: String,
    /// The stable keys of the unclosed findings it closes alone.
    pub closes: Vec<String>,
    /// The findings at or above the threshold the input audited again with it has that are new or
    /// worse (more severe, about another tenant or more pairs), worst first.
    pub opens: Vec<Opened>,
}

/// A finding a change opens or makes worse: its rule, stable key, severity and tenants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Opened {
    pub rule: String,
    pub key: String,
    pub severity: Severity,
    pub tenants: Vec<String>,
}

/// How actions were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Search {
    /// The fewest actions that close everything the candidates close, by trying every set.
    Exact,
    /// Each time the candidate that closes the most of what is still open: not always the fewest.
    Greedy,
}

/// What an action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionKind {
    /// A workload's pod template patched to run on other nodes (its rollout replaces its pods).
    MoveWorkload,
    /// Nodes' GPUs no longer shared: their device plugin config changed for one without sharing.
    StopSharing,
    /// The GPU driver of some nodes upgraded.
    UpgradeDriver,
}

/// One change to the cluster and the findings it closes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// `a1`, `a2`... in the order to take them.
    pub id: String,
    pub kind: ActionKind,
    /// What it does, in one sentence.
    pub summary: String,
    /// The object it changes (`Deployment/ns/name`, `ClusterPolicy/cluster-policy`), or the nodes.
    pub object: String,
    /// The commands that make the change, each whole.
    pub commands: Vec<String>,
    /// The patch the first command applies (a strategic merge patch of a pod template, as `gpu-trust
    /// plan` writes them, or a merge patch of a ClusterPolicy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<serde_json::Value>,
    /// The stable keys (`RULE:key`) of the open findings the input audited again with this change
    /// alone no longer has.
    pub closes: Vec<String>,
    /// False where a controller brings the effect the audit assumed (a driver rollout): that effect
    /// was not read from the changed objects but written into them.
    pub verified: bool,
    /// What the change assumes or also changes, one sentence each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// GPU nodes of one GPU model and one sharing configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolEntry {
    /// What the pairwise findings about these nodes are keyed by (`H100-SXM5-80GB time-slicing
    /// nvidia.com/gpu=4`).
    pub signature: String,
    /// The GPU model (or product label).
    pub gpu: String,
    /// How a whole-GPU request is shared there: the mechanism's spelling (`time-slicing`,
    /// `mps`, `exclusive`, `mig-instance`...).
    pub mechanism: Mechanism,
    /// Replicas per GPU of a shared whole GPU; absent when not shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u32>,
    /// Some GPUs are partitioned into MIG instances.
    pub mig: bool,
    pub nodes: Vec<String>,
    pub gpus: usize,
    /// The tenants whose workloads run or may run there, sorted.
    pub tenants: Vec<String>,
}

/// Two tenants and everything they share: `gpu-trust audit --pair A B`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairReport {
    /// The two tenants, in the order asked.
    pub tenants: [String; 2],
    pub trust: Trust,
    /// Where they meet: the groups both are in and meet in, in group order.
    pub groups: Vec<PairGroup>,
}

/// One group two tenants meet in, with how surely those two meet there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairGroup {
    /// The group's id (`groups`).
    pub id: String,
    pub certainty: Certainty,
    pub reason: String,
}

/// The advisory data an audit used, and how old it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdvisoryData {
    /// The newest bulletin date of the data (`YYYY-MM-DD`); `None` for data without dates.
    pub newest_bulletin: Option<String>,
    /// That bulletin, as the data names it (`NVIDIA security bulletin 5861`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_bulletin_name: Option<String>,
    /// Days from the newest bulletin to the audit's day.
    pub age_days: Option<i64>,
    /// Neither the newest bulletin nor the last `gpu-trust advisories update` is within
    /// `advisories::STALE_AFTER_DAYS` (90) days, or undated: newer bulletins were probably missed.
    pub stale: bool,
    /// Where the data came from: `built-in`, the bulletins an update kept (by the address they were
    /// read from), then the files `--advisories` gave, in order.
    pub sources: Vec<String>,
    /// The data file given with `--advisories` that replaced the built-in data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built_in_replaced_by: Option<String>,
    /// The last `gpu-trust advisories update` the data holds (its bulletins are the `sources`
    /// that start with its `from`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateData>,
}

/// Where an update read the vendor's bulletins, and the last day it found nothing newer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateData {
    pub from: String,
    /// Absent until an update read every bulletin its indexes listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// The bulletins it added to the data.
    pub bulletins: usize,
}

impl AdvisoryData {
    /// What the report says of `data` on `today`.
    pub fn of(data: &crate::advisories::Advisories, today: gpu_trust_policy::Date) -> AdvisoryData {
        use crate::advisories::SourceKind;
        let f = data.freshness(today);
        let updated = data
            .sources
            .iter()
            .filter(|s| s.kind == SourceKind::Update)
            .count();
        AdvisoryData {
            newest_bulletin: f.newest.map(|d| d.to_string()),
            newest_bulletin_name: data.newest_bulletin_name().map(str::to_string),
            age_days: f.age_days,
            stale: f.stale,
            sources: data.sources.iter().map(|s| s.name.clone()).collect(),
            built_in_replaced_by: data.replaced_built_in().map(str::to_string),
            update: data.update.as_ref().map(|u| UpdateData {
                from: u.from.clone(),
                checked: u.checked.map(|d| d.to_string()),
                bulletins: updated,
            }),
        }
    }

    /// One line for a report's footer: `advisory data of 2026-09-30, newest bulletin NVIDIA
    /// security bulletin 5861 (built-in)`, with where else it came from, and a warning when stale.
    pub fn line(&self) -> String {
        let date = self.newest_bulletin.as_deref().unwrap_or("no date");
        let mut s = format!("advisory data of {date}");
        if let Some(name) = &self.newest_bulletin_name {
            s.push_str(&format!(", newest bulletin {name}"));
        }
        // The update's bulletins are counted, not listed.
        let mut from: Vec<String> = self
            .sources
            .iter()
            .filter(|n| !self.update.as_ref().is_some_and(|u| n.starts_with(&u.from)))
            .map(|n| {
                if self.built_in_replaced_by.as_ref() == Some(n) {
                    format!("{n}, which replaces the built-in data")
                } else {
                    n.clone()
                }
            })
            .collect();
        if let Some(u) = &self.update {
            from.push(format!(
                "{} from {} ({})",
                crate::text::plural(u.bulletins as u64, "bulletin"),
                u.from,
                match &u.checked {
                    Some(day) => format!("nothing newer on {day}"),
                    None => "its last update did not read every bulletin".to_string(),
                }
            ));
        }
        s.push_str(&format!(
            " ({})",
            if from.is_empty() {
                "none".to_string()
            } else {
                from.join("; ")
            }
        ));
        if self.stale {
            match self.age_days {
                Some(d) => s.push_str(&format!(
                    "; warning: {d} days old, over {} days: run `gpu-trust advisories update` (or give newer bulletins with --advisories)",
                    crate::advisories::STALE_AFTER_DAYS
                )),
                None => s.push_str(
                    "; warning: the data has no dates: run `gpu-trust advisories update` (or give dated bulletins with --advisories)",
                ),
            }
        }
        s
    }
}

/// A rule turned off by the configuration (`disabledRules` of `.gpu-trust.yaml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisabledRuleEntry {
    pub rule: String,
    pub reason: String,
    /// Where it was disabled, `file:line:column`.
    pub source: String,
    /// Findings of the rule left out of this report.
    pub findings: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub tenants: usize,
    pub nodes: usize,
    pub gpus: usize,
    /// Counts of findings not accepted, by severity.
    pub findings: SeverityCounts,
    /// Findings accepted (by the policy or by annotations).
    pub accepted: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeverityCounts {
    pub critical: usize,
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub info: usize,
}

impl SeverityCounts {
    pub fn add(&mut self, s: Severity) {
        match s {
            Severity::Critical => self.critical += 1,
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
            Severity::Info => self.info += 1,
        }
    }

    pub fn get(&self, s: Severity) -> usize {
        match s {
            Severity::Critical => self.critical,
            Severity::High => self.high,
            Severity::Medium => self.medium,
            Severity::Low => self.low,
            Severity::Info => self.info,
        }
    }

    /// Findings at or above `threshold`.
    pub fn at_or_above(&self, threshold: Severity) -> usize {
        Severity::ALL
            .into_iter()
            .filter(|s| *s >= threshold)
            .map(|s| self.get(s))
            .sum()
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantEntry {
    pub name: String,
    pub namespaces: Vec<String>,
    /// A namespace no tenant claims: a tenant of its own with the default trust.
    pub unassigned: bool,
    /// Every workload of the tenant runs in a virtual cluster: it has an API server of its own, so it
    /// is in no control-plane group (nodes, device plugins and drivers stay shared).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub virtual_cluster: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Rule code, e.g. `GT101`.
    pub rule: String,
    /// Rule name, e.g. `untrusted-share-time-sliced-gpu`.
    pub name: String,
    pub layer: Layer,
    pub severity: Severity,
    pub certainty: Certainty,
    /// Sorted tenant names.
    pub tenants: Vec<String>,
    /// Sorted node names.
    pub nodes: Vec<String>,
    /// The objects involved: the finding's own (nodes, bindings, policy entries) sorted, then its
    /// workloads by namespace, kind and name; at most 50 (the message says how many workloads).
    pub objects: Vec<FindingObject>,
    pub message: String,
    pub remediation: String,
    /// Set when the finding is accepted: by a policy acceptance of the rule for any tenants, exactly
    /// the finding's tenants or a scope holding all it involves, by annotations covering all its
    /// workloads, or by acceptances of every pair it covers (docs/suppressions.md).
    pub accepted: Option<AcceptedEntry>,
    /// The tenant pairs a finding of a pairwise rule covers (each pair once, whatever it shares on how
    /// many nodes); absent for a finding about one tenant, a node or a workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// Pairs the policy accepts while others stay open (`accepted` is then null and the severity is
    /// that of the open pairs): the first [`MAX_ACCEPTED_PAIRS`] by tenant names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_pairs: Vec<AcceptedPair>,
    /// How many pairs are accepted one by one, all of them (v2.3); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_pair_count: Option<usize>,
    /// With `acceptedPairs`: the first open pairs by tenant name, at most 20 (`pairs` less the
    /// accepted pairs counts them all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub open_pairs: Vec<[String; 2]>,
    /// The shared things the finding is about (ids of `groups`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// For a finding of a pairwise rule: where its pairs meet and how surely, one entry per shared
    /// thing (group) and certainty, the strongest first. `certainty` and `severity` above are the
    /// strongest and worst of these; each entry's hold for its own pairs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_group: Vec<ShareEntry>,
    /// For a finding of a pairwise rule covering at most 200 pairs: every pair, with where and how
    /// surely it meets (absent when it covers more: `byGroup` then says which pairs each group
    /// holds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub covered_pairs: Vec<CoveredPair>,
    /// Annotations of one tenant that accept none of its pairs in this pairwise finding, because
    /// the rule needs the annotation of both tenants of a pair (docs/suppressions.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub one_sided_acceptances: Vec<OneSidedAcceptance>,
    /// What the finding is about, stable across runs and rollouts: the owning workload
    /// (`Deployment/ns/name`, not a pod), the tenant, the node group or the API server. Two findings
    /// of one rule never share a key.
    pub key: String,
    /// Probe measurements attached with `--evidence` (device-layer findings of the measured mechanism).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// Not part of the wire format: what the finding says about the pair an explanation asks about
    /// ([`crate::AuditOptions::pair`]), when it covers that pair.
    #[serde(skip)]
    pub explained: Option<ExplainedFinding>,
    /// With `--baseline`: whether the baseline report has this finding (v2.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Since>,
}

/// Where some pairs of a pairwise finding meet: one shared thing (a group of `groups`) at one
/// certainty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShareEntry {
    /// The group's id.
    pub group: String,
    /// The nodes of the group that host at least one of these pairs, sorted.
    pub nodes: Vec<String>,
    /// The tenants of these pairs, sorted.
    pub tenants: Vec<String>,
    /// How many pairs meet here with this certainty.
    pub pairs: usize,
    /// The trust levels of these pairs.
    pub trusts: Vec<Trust>,
    pub certainty: Certainty,
    /// Why the certainty holds for them.
    pub reason: String,
    /// The severity of these pairs (of the open ones when some are accepted).
    pub severity: Severity,
    /// True when every two of `tenants` whose trust is one of `trusts` is one of these pairs (in a
    /// `permitted` group: every two of which one at least is in the group's `permittedTenants`).
    pub every_pair: bool,
    /// How many of these pairs are accepted one by one (`acceptedPairs`).
    #[serde(skip_serializing_if = "is_zero")]
    pub accepted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One pair of a pairwise finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoveredPair {
    /// The two tenants, sorted.
    pub tenants: [String; 2],
    pub trust: Trust,
    /// The strongest certainty it meets with.
    pub certainty: Certainty,
    /// The severity the rule gives this pair at that certainty.
    pub severity: Severity,
    /// The groups where it meets.
    pub groups: Vec<String>,
    /// Accepted one by one (listed in `acceptedPairs`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub accepted: bool,
}

/// A tenant's `accept.gpu-trust.io/<RULE>` annotations that accept none of its pairs in a pairwise
/// finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OneSidedAcceptance {
    pub tenant: String,
    /// The annotations.
    pub sources: Vec<AcceptanceSource>,
    /// The other tenants of its open pairs, whose workloads lack the annotation (the first 20,
    /// sorted), and how many in all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_tenants: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub missing_count: usize,
    /// Its own workloads in the finding that lack the annotation (the first 20), and how many.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncovered_workloads: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub uncovered_count: usize,
    /// The same in words.
    pub message: String,
}

/// What a pairwise finding says about one pair (`audit --pair`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainedFinding {
    pub certainty: Certainty,
    pub reason: String,
    pub severity: Severity,
    /// The groups where the pair meets for this finding.
    pub groups: Vec<String>,
    pub nodes: Vec<String>,
    /// The finding's words for this pair alone.
    pub message: String,
    pub remediation: String,
    /// Set when the pair is accepted (by the finding's acceptance or one of its own).
    pub accepted: Option<AcceptedEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindingObject {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub file: String,
    pub line: u32,
    /// For a workload: how many of its pods the finding covers, when it covers pods (the
    /// workload's object stands for them; without the object in the input, its first pod does,
    /// with `owner`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<usize>,
    /// For a pod that stands for its owning workload, whose object is not in the input: the owner
    /// (`Deployment/namespace/name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedEntry {
    /// The reasons of the acceptances, joined by `; `.
    pub reason: String,
    /// The earliest last day among them.
    pub until: Option<String>,
    /// Where each acceptance is written: a policy entry or an annotated object.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<AcceptanceSource>,
}

/// Where an acceptance is written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptanceSource {
    /// `policy` (an `accept` entry of the tenancy policy) or `annotation` (an
    /// `accept.gpu-trust.io/<RULE>` annotation on a workload or Namespace).
    pub from: &'static str,
    /// The policy file, or the file of the annotated object.
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The annotated object (`Deployment ml/trainer`, `Namespace ml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The annotation's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotation: Option<String>,
    /// Not part of the wire format: the reason written there (the entry's `reason` joins them).
    #[serde(skip)]
    pub reason: String,
    /// Not part of the wire format: the namespace of the annotated object (a tenant view shows
    /// only its own tenants' annotations); `None` for a policy entry.
    #[serde(skip)]
    pub namespace: Option<String>,
}

/// One accepted pair of a finding that stays open for other pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedPair {
    /// The two tenants, sorted.
    pub tenants: [String; 2],
    pub reason: String,
    pub until: Option<String>,
    /// Where the acceptances are written (for annotations, those of both tenants).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<AcceptanceSource>,
}

/// Where a group is, in the terms of the isolation model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupLevel {
    /// One GPU or MIG instance shared under `mechanism`.
    Device,
    /// Different MIG instances of one physical GPU.
    MigGpu,
    /// One node (kernel, driver, toolkit, runtime).
    Node,
    /// One API server.
    ControlPlane,
}

/// A shared thing and the tenants that share it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupEntry {
    /// `g1`, `g2`... in report order.
    pub id: String,
    pub level: GroupLevel,
    /// The device mechanism (`device` level only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<Mechanism>,
    /// True for the nodes that templates or pending pods may be placed on: there, two tenants that
    /// are only scheduled there (not in `permittedTenants`) do not meet; they meet where they are
    /// scheduled together, in another group. False for one node's scheduled workloads and for the
    /// API server.
    pub permitted: bool,
    /// Sorted node names (none for the API server).
    pub nodes: Vec<String>,
    /// Its tenants, sorted. Every two of them share it, except two tenants of a `permitted` group
    /// that are both only scheduled there.
    pub tenants: Vec<String>,
    /// In a `permitted` group, the tenants whose workloads may be placed on its nodes (the others are
    /// scheduled there); absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permitted_tenants: Vec<String>,
    /// Tenant pairs that share it.
    pub pairs: usize,
    /// The strongest certainty of those pairs.
    pub certainty: Certainty,
    /// What its tenants share through it: device resources and properties (`gpu`, `memory-pool`...),
    /// `host` or `control-plane`.
    pub shares: Vec<String>,
    /// What still separates them there (`address-space`, `mig-instance`, `gpu`...); absent when
    /// nothing does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub separated_by: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlastRadiusEntry {
    /// Per tenant whose workloads run or may run on GPU nodes, or that shares the API server, one entry
    /// per incident that reaches another tenant, sorted by tenant then incident (an incident without
    /// an entry reaches no one).
    pub tenant: String,
    pub incident: Incident,
    /// How many other tenants the incident reaches: the tenants of its groups whose level carries the
    /// incident (the matrix names them, pair by pair, for its tenants).
    pub reaches: usize,
    /// The strongest certainty with which it reaches any of them.
    pub certainty: Certainty,
}

/// Who can hurt whom among the tenants with the widest blast radius (at most
/// [`MAX_MATRIX_TENANTS`]): every pair of them that shares anything.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Matrix {
    /// The tenants, in the report's tenant order.
    pub tenants: Vec<String>,
    /// Tenants left out of the matrix (their pairs are in `groups`).
    pub omitted: usize,
    /// Sorted by tenants.
    pub pairs: Vec<MatrixPair>,
}

/// Two tenants of the matrix that share something.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatrixPair {
    /// Sorted.
    pub tenants: [String; 2],
    pub trust: gpu_trust_model::Trust,
    /// The worst severity among the open findings that cover the pair; `None` when none does (full
    /// trust, or every such finding accepted).
    pub severity: Option<Severity>,
    /// The incidents either sets off that reach the other, with the strongest certainty each.
    pub incidents: BTreeMap<Incident, Certainty>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedEntry {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub error: String,
    /// The stable code of the error's kind (`docs/diagnostics.md`).
    pub code: gpu_trust_model::Code,
}

impl Finding {
    /// The finding's stable key across runs: its rule and what it is about (`GT207:node@...`),
    /// which SARIF fingerprints hash, baselines match and actions name.
    pub fn id(&self) -> String {
        format!("{}:{}", self.rule, self.key)
    }

    /// How many of its pairs are accepted one by one (the listed ones are at most
    /// [`MAX_ACCEPTED_PAIRS`]).
    pub fn accepted_pair_count(&self) -> usize {
        self.accepted_pair_count
            .unwrap_or(self.accepted_pairs.len())
    }
}

//! The audit's entry point: runs every rule over one fleet and tenancy, then names, accepts (as a whole
//! or pair by pair), attaches evidence to and sorts the findings, and adds the groups, blast radius and
//! matrix sections.

use crate::acceptance::Granted;
use crate::advisories::Advisories;
use crate::analysis::Analysis;
use crate::colocation::gpu_count;
use crate::context::Context;
use crate::coverage::CoverageInput;
use crate::owner::Owners;
use crate::parallel;
use crate::registry::registry;
use crate::sink::{Draft, Sink};
use gpu_trust_model::evidence::{cite, EvidenceSite, ProbeEvidence};
use gpu_trust_model::fleet::Fleet;
use gpu_trust_model::report::layout::NodeLayout;
use gpu_trust_model::report::{
    AcceptedPair, AdvisoryData, AuditReport, BlastRadiusEntry, CoveredPair, ExplainedFinding,
    Finding, FindingObject, Matrix, MatrixPair, OneSidedAcceptance, PairGroup, PairReport,
    PoolEntry, ShareEntry, SkippedEntry, Summary, TenantEntry, UpdateData, MAX_ACCEPTED_PAIRS,
    MAX_MATRIX_TENANTS, SCHEMA,
};
use gpu_trust_model::{Certainty, Diagnostic, Incident, Layer, ObjectRef, Severity};
use gpu_trust_policy::{Date, Tenancy, TenantId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// What an audit run is told besides the cluster and the policy.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// The day acceptances expire against and patch windows count to (`--today`; the CLI passes the
    /// clock's date, the library never reads the clock).
    pub today: Date,
    /// Advisory data (`--advisories FILE`); the built-in data by default.
    pub advisories: Advisories,
    /// Probe evidence (`--evidence FILE`), attached to device-layer findings it speaks for.
    pub evidence: Vec<ProbeEvidence>,
    /// Input documents that could not be used, listed in the report.
    pub skipped: Vec<Diagnostic>,
    /// The user let the `skipped` documents be left out (`--skip-invalid`): what they held is a gap
    /// that does not block. Without it (`serve`, which has no such flag) they make the audit
    /// partial, as an unusable input stops `gpu-trust audit`.
    pub skip_invalid: bool,
    /// The user accepts a partial audit (`--accept-partial`); the report says so.
    pub accept_partial: bool,
    /// Build the GPU layout view ([`AuditReport::layout`]) that the HTML report draws, from the
    /// audit's own analysis. Off by default: the other formats do not draw GPUs.
    pub layout: bool,
    /// Two tenants (by name) to explain: the report's `pair` says where they meet and each finding
    /// that covers them carries what it says of them alone (`Finding::explained`).
    pub pair: Option<(String, String)>,
    /// The tenants (by name) a view of the report is for (`serve`'s tenant views, OpenReports):
    /// a pairwise finding counts only the pairs with one of them, in the places they reach, and a
    /// finding about another tenant's own contract is left out, so that no sentence of the view is
    /// about tenants it does not name. `None`: every tenant, as `gpu-trust audit` reports.
    pub focus: Option<BTreeSet<String>>,
}

impl AuditOptions {
    /// Options for `today` with the built-in advisories, no evidence and nothing skipped.
    pub fn new(today: Date) -> AuditOptions {
        AuditOptions {
            today,
            advisories: Advisories::builtin().clone(),
            evidence: Vec::new(),
            skipped: Vec::new(),
            skip_invalid: false,
            accept_partial: false,
            layout: false,
            pair: None,
            focus: None,
        }
    }
}

/// One audit: the fleet ingest built, the tenancy the policy resolved against the fleet's namespaces
/// (`policy.resolve(&fleet.namespaces)`), and the options.
#[derive(Debug, Clone, Copy)]
pub struct AuditInput<'a> {
    pub fleet: &'a Fleet,
    pub tenancy: &'a Tenancy,
    pub options: &'a AuditOptions,
}

/// Runs the audit. The report is sorted: the same input gives byte-identical JSON.
pub fn audit(input: &AuditInput<'_>) -> AuditReport {
    Prepared::new(input).report(input)
}

/// What an audit computes once, before its rules run, and every report of the same input reads:
/// the analysis, who owns each pod, the blast radius and the matrix's tenants. Reports of several
/// focuses ([`AuditOptions::focus`], the tenant views of `gpu-trust serve`) are made from one.
pub struct Prepared {
    analysis: Analysis,
    owners: Owners,
    blast_radius: Vec<BlastRadiusEntry>,
    matrix_tenants: BTreeSet<TenantId>,
    /// The GPU layout view, built the first time a report asks for it.
    layout: OnceLock<Vec<NodeLayout>>,
}

impl Prepared {
    /// The analysis of `input`'s fleet and tenancy, and the blast radius that chooses the tenants
    /// of the matrix, whose pairs the rules spell out.
    pub fn new(input: &AuditInput<'_>) -> Prepared {
        let analysis = Analysis::compute(input.fleet, input.tenancy);
        let owners = Owners::new(input.fleet);
        let nobody = BTreeSet::new();
        let blast_radius =
            crate::blast::blast_radius(&context(input, &analysis, &owners, &nobody, None, None));
        let matrix_tenants = matrix_tenants(input.tenancy, &blast_radius);
        Prepared {
            analysis,
            owners,
            blast_radius,
            matrix_tenants,
            layout: OnceLock::new(),
        }
    }

    /// The report of `input`, which must be the input this was prepared from (its options may
    /// differ, except in what [`Prepared::new`] reads: the fleet and tenancy).
    pub fn report(&self, input: &AuditInput<'_>) -> AuditReport {
        report(input, self)
    }
}

fn report(input: &AuditInput<'_>, prepared: &Prepared) -> AuditReport {
    let fleet = input.fleet;
    let tenancy = input.tenancy;
    let options = input.options;
    let Prepared {
        analysis,
        owners,
        matrix_tenants,
        ..
    } = prepared;
    let blast_radius = prepared.blast_radius.clone();
    let explain = options.pair.as_ref().and_then(|(a, b)| {
        let (a, b) = (tenancy.tenant_by_name(a)?, tenancy.tenant_by_name(b)?);
        (a != b).then_some((a, b))
    });
    let focus: Option<BTreeSet<TenantId>> = options.focus.as_ref().map(|names| {
        names
            .iter()
            .filter_map(|n| tenancy.tenant_by_name(n))
            .collect()
    });

    let ctx = context(
        input,
        analysis,
        owners,
        matrix_tenants,
        explain,
        focus.as_ref(),
    );

    // The rules, the groups and the matrix's incidents are pure functions of the context: they run on
    // every core, and the findings are put back in rule order, so the report is the same on any machine.
    let (findings, groups, incidents) = parallel::run(
        || {
            parallel::each(registry(), |rule| {
                let mut drafts: Vec<Draft> = Vec::new();
                let mut sink = Sink::new(rule, &mut drafts);
                (rule.check)(&ctx, &mut sink);
                drafts
                    .into_iter()
                    // A focused audit reports only what names one of its tenants.
                    .filter(|d| {
                        focus
                            .as_ref()
                            .is_none_or(|f| d.tenants.iter().any(|t| f.contains(t)))
                    })
                    .map(|d| finding(&ctx, owners, d, &options.evidence))
                    .collect::<Vec<(Finding, MatrixSeverities)>>()
            })
        },
        || crate::groups::groups(&ctx),
        || matrix_incidents(&ctx),
    );
    let mut severities: BTreeMap<(TenantId, TenantId), Severity> = BTreeMap::new();
    let mut findings: Vec<Finding> = findings
        .into_iter()
        .flatten()
        .map(|(f, pairs)| {
            for (pair, s) in pairs {
                let e = severities.entry(pair).or_insert(s);
                *e = (*e).max(s);
            }
            f
        })
        .collect();
    // Within a severity, what the objects prove comes before what is possible or permitted.
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.certainty.cmp(&b.certainty))
            .then_with(|| a.rule.cmp(&b.rule))
            .then_with(|| a.tenants.cmp(&b.tenants))
            .then_with(|| a.nodes.cmp(&b.nodes))
            .then_with(|| a.objects.cmp(&b.objects))
            .then_with(|| a.message.cmp(&b.message))
    });
    // Several templates of one workload (a PyTorchJob's Master and Worker) can yield the same finding:
    // the user has one thing to fix, so it is reported once.
    findings.dedup_by(|a, b| {
        a.rule == b.rule
            && a.severity == b.severity
            && a.certainty == b.certainty
            && a.tenants == b.tenants
            && a.nodes == b.nodes
            && a.objects == b.objects
            && a.message == b.message
    });

    let mut summary = Summary {
        tenants: tenancy.tenants().len(),
        nodes: fleet.nodes.len(),
        gpus: fleet
            .gpu_nodes()
            .filter_map(|(_, n)| n.gpu.as_ref())
            .map(gpu_count)
            .sum::<u64>() as usize,
        ..Summary::default()
    };
    for f in &findings {
        if f.accepted.is_some() {
            summary.accepted += 1;
        } else {
            summary.findings.add(f.severity);
        }
    }

    let virtual_clusters: BTreeSet<&str> = ctx
        .virtual_cluster_tenants()
        .iter()
        .map(|t| ctx.tenant_name(*t))
        .collect();
    let tenants = tenancy
        .tenants()
        .iter()
        .map(|t| TenantEntry {
            name: t.name.clone(),
            namespaces: t.namespaces.clone(),
            unassigned: t.is_unassigned(),
            virtual_cluster: virtual_clusters.contains(t.name.as_str()),
        })
        .collect();

    let mut skipped: Vec<SkippedEntry> = options
        .skipped
        .iter()
        .map(|d| SkippedEntry {
            file: d.location.file.clone(),
            line: d.location.line,
            column: d.location.column,
            error: d.message.clone(),
            code: d.code,
        })
        .collect();
    skipped.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.error).cmp(&(&b.file, b.line, b.column, &b.error))
    });

    let coverage = crate::coverage::coverage(
        fleet,
        tenancy,
        CoverageInput {
            skipped_documents: options.skipped.len(),
            skip_invalid: options.skip_invalid,
            accept_partial: options.accept_partial,
        },
    );
    let matrix = Matrix {
        tenants: matrix_tenants
            .iter()
            .map(|t| tenancy.name(*t).to_string())
            .collect(),
        omitted: ctx.blast_tenants().len() - matrix_tenants.len(),
        pairs: incidents
            .into_iter()
            .map(|((a, b), incidents)| MatrixPair {
                tenants: [tenancy.name(a).to_string(), tenancy.name(b).to_string()],
                trust: tenancy.trust(a, b),
                severity: severities.get(&(a, b)).copied(),
                incidents,
            })
            .collect(),
    };

    // The GPU layout view the HTML report draws, from the same analysis, when it is asked for.
    let layout = if options.layout {
        prepared
            .layout
            .get_or_init(|| crate::layout::build(fleet, tenancy, analysis, owners))
            .clone()
    } else {
        Vec::new()
    };

    let pair = explain.map(|(a, b)| pair_report(&ctx, a, b));
    let pools = pools(&ctx);

    AuditReport {
        schema: SCHEMA,
        summary,
        coverage,
        tenants,
        findings,
        groups,
        blast_radius,
        matrix,
        skipped,
        disabled_rules: Vec::new(),
        pair,
        advisory_data: advisory_data(&options.advisories, options.today),
        pools,
        layout,
        fix_first: None,
        actions: None,
        baseline: None,
        provenance: None,
        verdict: None,
    }
}

/// What the report says of `data` on `today`.
fn advisory_data(
    data: &crate::advisories::Advisories,
    today: gpu_trust_policy::Date,
) -> AdvisoryData {
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

/// The context the rules read: the audit's input and its one analysis, with the matrix's tenants.
fn context<'c>(
    input: &'c AuditInput<'c>,
    analysis: &'c Analysis,
    owners: &'c Owners,
    matrix: &'c BTreeSet<TenantId>,
    explain: Option<(TenantId, TenantId)>,
    focus: Option<&'c BTreeSet<TenantId>>,
) -> Context<'c> {
    Context {
        fleet: input.fleet,
        tenancy: input.tenancy,
        analysis,
        today: input.options.today,
        advisories: &input.options.advisories,
        matrix,
        owners,
        explain,
        focus,
    }
}

/// The GPU node pools: the node groups of the co-location analysis, with the tenants on their
/// nodes (in a focused audit, the pools of its tenants).
fn pools(ctx: &Context<'_>) -> Vec<PoolEntry> {
    let mut pools: BTreeMap<usize, (PoolEntry, BTreeSet<TenantId>)> = BTreeMap::new();
    for (id, node) in ctx.fleet.gpu_nodes() {
        let (Some(group), Some(gpu)) = (ctx.colo().group_of(id), node.gpu.as_ref()) else {
            continue;
        };
        let (entry, tenants) = pools.entry(group).or_insert_with(|| {
            let replicas = gpu.sharing.replicas_for(gpu_trust_model::resource::GPU);
            let entry = PoolEntry {
                signature: crate::colocation::group_signature(gpu),
                gpu: gpu
                    .model
                    .clone()
                    .or_else(|| gpu.product.clone())
                    .unwrap_or_else(|| "unknown GPU".to_string()),
                mechanism: gpu.mechanism_for(gpu_trust_model::resource::GPU),
                replicas: (replicas > 1).then_some(replicas),
                mig: gpu.gpus.iter().any(|g| !g.mig.is_empty()),
                nodes: Vec::new(),
                gpus: 0,
                tenants: Vec::new(),
            };
            (entry, BTreeSet::new())
        });
        entry.nodes.push(node.name.clone());
        entry.gpus += gpu_count(gpu) as usize;
        tenants.extend(ctx.colo().tenants_on(id).into_keys());
    }
    pools
        .into_values()
        .filter(|(_, tenants)| ctx.focus.is_none() || tenants.iter().any(|t| ctx.in_focus(*t)))
        .map(|(mut entry, tenants)| {
            let names: BTreeSet<&str> = tenants.iter().map(|t| ctx.tenant_name(*t)).collect();
            entry.tenants = names.into_iter().map(str::to_string).collect();
            entry
        })
        .collect()
}

/// Where two tenants meet: every site both are members of and meet in, with how surely.
fn pair_report(ctx: &Context<'_>, a: TenantId, b: TenantId) -> PairReport {
    let mut groups = Vec::new();
    for i in ctx.colo().sites_of.get(&a).into_iter().flatten() {
        let Some(site) = ctx.site(*i) else { continue };
        let (Some(ma), Some(mb)) = (site.members.get(&a), site.members.get(&b)) else {
            continue;
        };
        if let Some((certainty, reason)) = site.meet(ctx.fleet, ma, mb) {
            groups.push(PairGroup {
                id: crate::blast::group_id(*i),
                certainty,
                reason: reason.to_string(),
            });
        }
    }
    PairReport {
        tenants: [
            ctx.tenant_name(a).to_string(),
            ctx.tenant_name(b).to_string(),
        ],
        trust: ctx.trust(a, b),
        groups,
    }
}

/// The severity of each open pair of the matrix's tenants a finding covers.
type MatrixSeverities = Vec<((TenantId, TenantId), Severity)>;

/// The tenants of the matrix: all those of the blast radius up to [`MAX_MATRIX_TENANTS`], else those
/// whose incidents reach the most others (ties by name); sorted.
fn matrix_tenants(tenancy: &Tenancy, blast: &[BlastRadiusEntry]) -> BTreeSet<TenantId> {
    let mut reach: BTreeMap<&str, usize> = BTreeMap::new();
    for b in blast {
        *reach.entry(b.tenant.as_str()).or_default() += b.reaches;
    }
    let mut order: Vec<(&str, usize)> = reach.into_iter().collect();
    order.sort_by_key(|(name, n)| (std::cmp::Reverse(*n), *name));
    order
        .into_iter()
        .take(MAX_MATRIX_TENANTS)
        .filter_map(|(name, _)| tenancy.tenant_by_name(name))
        .collect()
}

/// The incidents each pair of the matrix's tenants can set off on each other, with the strongest
/// certainty each, sorted by pair (lower tenant id first).
fn matrix_incidents(
    ctx: &Context<'_>,
) -> BTreeMap<(TenantId, TenantId), BTreeMap<Incident, Certainty>> {
    let mut out: BTreeMap<(TenantId, TenantId), BTreeMap<Incident, Certainty>> = BTreeMap::new();
    let mut seen: BTreeSet<usize> = BTreeSet::new();
    // A focused audit: the pairs with one of its tenants only.
    for t in ctx.matrix.iter().filter(|t| ctx.in_focus(**t)) {
        for i in ctx.colo().sites_of.get(t).into_iter().flatten() {
            if !seen.insert(*i) {
                continue;
            }
            let Some(site) = ctx.site(*i) else { continue };
            let (m, level) = site.level.reach();
            let carried: Vec<Incident> = Incident::ALL
                .into_iter()
                .filter(|incident| crate::blast::carries(m, level, *incident))
                .collect();
            let members: Vec<_> = site
                .members
                .iter()
                .filter(|(t, _)| ctx.matrix.contains(t))
                .collect();
            for (k, (a, ma)) in members.iter().enumerate() {
                for (b, mb) in &members[k + 1..] {
                    if !(ctx.in_focus(**a) || ctx.in_focus(**b)) {
                        continue;
                    }
                    let Some((c, _)) = site.meet(ctx.fleet, ma, mb) else {
                        continue;
                    };
                    let e = out.entry((**a, **b)).or_default();
                    for incident in &carried {
                        let x = e.entry(*incident).or_insert(c);
                        *x = (*x).min(c);
                    }
                }
            }
        }
    }
    out.retain(|_, incidents| !incidents.is_empty());
    out
}

/// The most objects a finding lists.
pub const MAX_OBJECTS: usize = 50;

fn object(o: &ObjectRef) -> FindingObject {
    FindingObject {
        kind: o.kind.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
        file: o.location.file.clone(),
        line: o.location.line,
        pods: None,
        owner: None,
    }
}

/// The object that stands for one owner's workloads in a finding: the owner's own object when the
/// input holds it, else its first pod (naming the owner); with how many of its pods are covered.
fn unit_object(ctx: &Context<'_>, owners: &Owners, u: &crate::text::Unit) -> Option<FindingObject> {
    let pods = (u.pods > 0).then_some(u.pods);
    let first = ctx.workload(*u.workloads.first()?)?;
    let own = u
        .workloads
        .iter()
        .filter_map(|w| ctx.workload(*w))
        .find(|w| w.kind != gpu_trust_model::fleet::WorkloadKind::Pod)
        .or_else(|| owners.object(&u.key).and_then(|w| ctx.workload(w)));
    Some(match own {
        Some(w) => FindingObject {
            pods,
            ..object(&w.object)
        },
        None if first.owner.is_some() => FindingObject {
            pods,
            owner: Some(u.key.clone()),
            ..object(&first.object)
        },
        None => object(&first.object),
    })
}

/// A tenant's annotations that accept nothing in a pairwise finding, for the report and standard
/// error: which tenant's annotation is missing, or which of its own workloads lack one.
fn one_sided_entry(ctx: &Context<'_>, rule: &str, o: &crate::sink::OneSided) -> OneSidedAcceptance {
    let tenant = ctx.tenant_name(o.tenant).to_string();
    let mut missing: Vec<String> = o
        .missing
        .iter()
        .map(|t| ctx.tenant_name(*t).to_string())
        .collect();
    missing.sort();
    let uncovered: Vec<String> = o
        .uncovered
        .iter()
        .map(|w| crate::text::workload(ctx, *w))
        .collect();
    let annotation = format!("accept.gpu-trust.io/{rule}");
    let message = if o.uncovered_count > 0 {
        format!(
            "the `{annotation}` annotations of {tenant} accept none of its pairs: {rule} needs every workload of both tenants of a pair in the finding annotated, and {} of {tenant}'s {} not ({})",
            crate::text::plural(o.uncovered_count as u64, "workload"),
            if o.uncovered_count == 1 { "is" } else { "are" },
            crate::text::list(&uncovered)
        )
    } else {
        let more = o.missing_count.saturating_sub(missing.len());
        let named = if more > 0 {
            format!("{} and {more} more", missing.join(", "))
        } else {
            crate::text::list(&missing)
        };
        format!(
            "the `{annotation}` annotations of {tenant} accept nothing for its {} with {named}: {rule} needs the annotation on every workload of both tenants of a pair in the finding, and it is missing on {}",
            if o.missing_count == 1 { "pair" } else { "pairs" },
            if o.missing_count == 1 {
                format!("{named}'s workloads there")
            } else {
                format!("the workloads of {named} there")
            }
        )
    };
    OneSidedAcceptance {
        tenant,
        sources: o.sources.clone(),
        missing_tenants: missing,
        missing_count: o.missing_count,
        uncovered_workloads: uncovered,
        uncovered_count: o.uncovered_count,
        message,
    }
}

/// The device incidents probe evidence can speak to.
const DEVICE_INCIDENTS: [Incident; 3] = [
    Incident::MemoryExhaustion,
    Incident::DeviceFault,
    Incident::ComputeContention,
];

fn finding(
    ctx: &Context<'_>,
    owners: &Owners,
    d: Draft,
    evidence: &[ProbeEvidence],
) -> (Finding, MatrixSeverities) {
    let tenants: BTreeSet<String> = d
        .tenants
        .iter()
        .map(|t| ctx.tenant_name(*t).to_string())
        .collect();
    let nodes: BTreeSet<String> = d
        .nodes
        .iter()
        .map(|n| ctx.node_name(*n).to_string())
        .collect();
    // The finding's own objects (nodes, bindings, policy entries) in sort order, then its workloads in
    // fleet order (namespace, kind, name), each owning workload once with how many of its pods the
    // finding covers, at most MAX_OBJECTS: a finding between two large tenants can involve
    // thousands of pods, and its message and nodes already say how many.
    let mut objects: Vec<FindingObject> = d.objects.iter().take(MAX_OBJECTS).map(object).collect();
    let room = MAX_OBJECTS.saturating_sub(objects.len());
    objects.extend(
        crate::text::units(ctx, d.workloads.iter().copied())
            .iter()
            .take(room)
            .filter_map(|u| unit_object(ctx, owners, u)),
    );
    let key = match &d.key {
        Some(k) => k.clone(),
        None => match d.workloads.iter().find_map(|w| ctx.workload(*w)) {
            Some(w) => owners.of(w),
            None if !nodes.is_empty() => {
                format!(
                    "node/{}",
                    nodes.iter().cloned().collect::<Vec<_>>().join(",")
                )
            }
            None if !tenants.is_empty() => {
                format!(
                    "tenant/{}",
                    tenants.iter().cloned().collect::<Vec<_>>().join(",")
                )
            }
            None => objects
                .first()
                .map(|o| {
                    format!(
                        "{}/{}/{}",
                        o.kind,
                        o.namespace.as_deref().unwrap_or(""),
                        o.name
                    )
                })
                .unwrap_or_default(),
        },
    };
    // The finding as a whole: a policy entry of the rule for any tenants, exactly these, or a scope
    // holding everything it involves; or annotations covering every workload of it.
    let mut accepted = crate::acceptance::policy_whole(ctx, &d, &tenants)
        .map(|a| Granted::policy(a).entry())
        .or_else(|| crate::acceptance::annotations_whole(ctx, &d).map(|g| g.entry()));
    let mut accepted_pairs: Vec<AcceptedPair> = Vec::new();
    let mut accepted_pair_count: Option<usize> = None;
    let mut open_pairs: Vec<[String; 2]> = Vec::new();
    if let (None, Some(pairs)) = (&accepted, &d.pairs) {
        let listed: Vec<(AcceptedPair, &Granted)> = pairs
            .accepted
            .iter()
            .map(|((a, b), g)| {
                let mut names = [
                    ctx.tenant_name(*a).to_string(),
                    ctx.tenant_name(*b).to_string(),
                ];
                names.sort();
                let e = g.entry();
                (
                    AcceptedPair {
                        tenants: names,
                        reason: e.reason,
                        until: e.until,
                        sources: e.sources,
                    },
                    g,
                )
            })
            .collect();
        if pairs.all_accepted {
            // Every pair accepted, each by its own entry: the reasons together, the earliest end.
            accepted = Some(Granted::merge(listed.iter().map(|(_, g)| (*g).clone())).entry());
        } else {
            accepted_pairs = listed.into_iter().map(|(p, _)| p).collect();
            accepted_pairs.sort_by(|a, b| a.tenants.cmp(&b.tenants));
            // Listed up to a bound, counted whole.
            accepted_pair_count = (!accepted_pairs.is_empty()).then_some(accepted_pairs.len());
            accepted_pairs.truncate(MAX_ACCEPTED_PAIRS);
            open_pairs = pairs
                .open
                .iter()
                .map(|(a, b)| {
                    let mut names = [
                        ctx.tenant_name(*a).to_string(),
                        ctx.tenant_name(*b).to_string(),
                    ];
                    names.sort();
                    names
                })
                .collect();
            open_pairs.sort();
        }
    }
    let mut statements: BTreeSet<String> = BTreeSet::new();
    if d.rule.layer == Layer::Device && !d.mechanisms.is_empty() && !evidence.is_empty() {
        let cluster_nodes: BTreeSet<&str> =
            ctx.fleet.nodes.iter().map(|n| n.name.as_str()).collect();
        for &n in &d.nodes {
            let site = EvidenceSite {
                node: ctx.node_name(n),
                model: ctx.gpu(n).and_then(|g| g.model.as_deref()),
                cluster_nodes: &cluster_nodes,
            };
            for m in &d.mechanisms {
                for i in DEVICE_INCIDENTS {
                    statements.extend(cite(evidence, &site, *m, i));
                }
            }
        }
    }
    let group = |i: &usize| crate::blast::group_id(*i);
    let node_names = |ns: &BTreeSet<gpu_trust_model::fleet::NodeId>| -> Vec<String> {
        let set: BTreeSet<&str> = ns.iter().map(|n| ctx.node_name(*n)).collect();
        set.into_iter().map(str::to_string).collect()
    };
    let tenant_names = |ts: &[TenantId]| -> Vec<String> {
        let set: BTreeSet<&str> = ts.iter().map(|t| ctx.tenant_name(*t)).collect();
        set.into_iter().map(str::to_string).collect()
    };
    let mut by_group: Vec<ShareEntry> = Vec::new();
    let mut covered_pairs: Vec<CoveredPair> = Vec::new();
    let mut one_sided: Vec<OneSidedAcceptance> = Vec::new();
    let mut explained: Option<ExplainedFinding> = None;
    if let Some(p) = &d.pairs {
        by_group = p
            .shares
            .iter()
            .map(|s| ShareEntry {
                group: group(&s.site),
                nodes: node_names(&s.nodes),
                tenants: tenant_names(&s.tenants),
                pairs: s.pairs,
                trusts: s.trusts.clone(),
                certainty: s.certainty,
                reason: s.reason.to_string(),
                severity: s.severity,
                every_pair: s.every_pair,
                accepted: if accepted.is_some() { 0 } else { s.accepted },
            })
            .collect();
        covered_pairs = p
            .listed
            .iter()
            .flatten()
            .map(|x| {
                let mut names = [
                    ctx.tenant_name(x.tenants.0).to_string(),
                    ctx.tenant_name(x.tenants.1).to_string(),
                ];
                names.sort();
                CoveredPair {
                    tenants: names,
                    trust: x.trust,
                    certainty: x.certainty,
                    severity: x.severity,
                    groups: x.sites.iter().map(group).collect(),
                    accepted: accepted.is_none() && x.accepted,
                }
            })
            .collect();
        covered_pairs.sort_by(|a, b| a.tenants.cmp(&b.tenants));
        if accepted.is_none() {
            one_sided = p
                .one_sided
                .iter()
                .map(|o| one_sided_entry(ctx, d.rule.code, o))
                .collect();
            one_sided.sort_by(|a, b| a.tenant.cmp(&b.tenant));
        }
        explained = p.explained.as_ref().map(|e| ExplainedFinding {
            certainty: e.certainty,
            reason: e.reason.to_string(),
            severity: e.severity,
            groups: e.sites.iter().map(group).collect(),
            nodes: node_names(&e.nodes),
            message: e.message.clone(),
            remediation: e.remediation.clone(),
            accepted: accepted
                .clone()
                .or_else(|| e.accepted.as_ref().map(Granted::entry)),
        });
    }
    let matrix = if accepted.is_some() {
        Vec::new()
    } else {
        d.matrix
    };
    let finding = Finding {
        rule: d.rule.code.to_string(),
        name: d.rule.name.to_string(),
        layer: d.rule.layer,
        severity: d.severity,
        certainty: d.certainty,
        tenants: tenants.into_iter().collect(),
        nodes: nodes.into_iter().collect(),
        objects,
        message: d.message,
        remediation: d.remediation,
        accepted,
        pairs: d.pairs.map(|p| p.count),
        accepted_pairs,
        accepted_pair_count,
        open_pairs,
        groups: d.sites.iter().map(|i| crate::blast::group_id(*i)).collect(),
        by_group,
        covered_pairs,
        one_sided_acceptances: one_sided,
        key,
        evidence: statements.into_iter().collect(),
        explained,
        since: None,
    };
    (finding, matrix)
}

//! The audit's entry point: runs every rule over one fleet and tenancy, then names, accepts, attaches
//! evidence to and sorts the findings, and adds the pairs and blast radius sections.

use crate::advisories::Advisories;
use crate::colocation::{gpu_count, Colocation};
use crate::context::{workload_facts, Context};
use crate::coverage::CoverageInput;
use crate::parallel;
use crate::registry::registry;
use crate::report::{
    AcceptedEntry, AuditReport, Finding, FindingObject, SkippedEntry, Summary, TenantEntry, SCHEMA,
};
use crate::sink::{Draft, Sink};
use gpu_trust_model::evidence::ProbeEvidence;
use gpu_trust_model::fleet::Fleet;
use gpu_trust_model::{Diagnostic, Incident, Layer, ObjectRef};
use gpu_trust_policy::{Date, Tenancy};
use std::collections::BTreeSet;

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
    /// Input documents that could not be used (with `--skip-invalid`), listed in the report.
    pub skipped: Vec<Diagnostic>,
    /// The user accepts a partial audit (`--accept-partial`); the report says so.
    pub accept_partial: bool,
}

impl AuditOptions {
    /// Options for `today` with the built-in advisories, no evidence and nothing skipped.
    pub fn new(today: Date) -> AuditOptions {
        AuditOptions {
            today,
            advisories: Advisories::builtin().clone(),
            evidence: Vec::new(),
            skipped: Vec::new(),
            accept_partial: false,
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
    let fleet = input.fleet;
    let tenancy = input.tenancy;
    let options = input.options;
    let (tenant_of, overrides) = workload_facts(fleet, tenancy);
    let colo = Colocation::compute(fleet, &tenant_of);
    let ctx = Context {
        fleet,
        tenancy,
        colo: &colo,
        today: options.today,
        advisories: &options.advisories,
        tenant_of: &tenant_of,
        overrides: &overrides,
    };

    // The rules, the blast radius and the pairs are pure functions of the context: they run on every
    // core, and the findings are put back in rule order, so the report is the same on any machine.
    let (findings, blast_radius, pairs) = parallel::run(
        || {
            parallel::each(registry(), |rule| {
                let mut drafts: Vec<Draft> = Vec::new();
                let mut sink = Sink::new(rule, &mut drafts);
                (rule.check)(&ctx, &mut sink);
                drafts
                    .into_iter()
                    .map(|d| finding(&ctx, d, &options.evidence))
                    .collect::<Vec<Finding>>()
            })
        },
        || crate::blast::blast_radius(&ctx),
        || crate::pairs::pairs(&ctx),
    );
    let mut findings: Vec<Finding> = findings.into_iter().flatten().collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
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

    let tenants = tenancy
        .tenants()
        .iter()
        .map(|t| TenantEntry {
            name: t.name.clone(),
            namespaces: t.namespaces.clone(),
            unassigned: t.is_unassigned(),
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
            accept_partial: options.accept_partial,
        },
    );

    AuditReport {
        schema: SCHEMA,
        summary,
        coverage,
        tenants,
        findings,
        blast_radius,
        pairs,
        skipped,
    }
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
    }
}

/// The device incidents probe evidence can speak to.
const DEVICE_INCIDENTS: [Incident; 3] = [
    Incident::MemoryExhaustion,
    Incident::DeviceFault,
    Incident::ComputeContention,
];

fn finding(ctx: &Context<'_>, d: Draft, evidence: &[ProbeEvidence]) -> Finding {
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
    // fleet order (namespace, kind, name), at most MAX_OBJECTS: a finding between two large tenants
    // can involve thousands of pods, and its message and nodes already say how many.
    let mut objects: Vec<FindingObject> = d.objects.iter().take(MAX_OBJECTS).map(object).collect();
    let room = MAX_OBJECTS.saturating_sub(objects.len());
    objects.extend(
        d.workloads
            .iter()
            .filter_map(|w| ctx.workload(*w))
            .take(room)
            .map(|w| object(&w.object)),
    );
    let accepted = ctx
        .tenancy
        .acceptance_for(d.rule.code, &tenants, ctx.today)
        .map(|a| AcceptedEntry {
            reason: a.reason.clone(),
            until: a.until.map(|u| u.to_string()),
        });
    let mut statements: BTreeSet<String> = BTreeSet::new();
    if d.rule.layer == Layer::Device && !d.mechanisms.is_empty() {
        for ev in evidence.iter().filter(|e| e.schema_supported()) {
            for node in &nodes {
                for m in &d.mechanisms {
                    for i in DEVICE_INCIDENTS {
                        for claim in ev.claims_for(node, *m, i) {
                            statements.insert(claim.statement);
                        }
                    }
                }
            }
        }
    }
    Finding {
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
        evidence: statements.into_iter().collect(),
    }
}

//! The policy check as tables. Every text from the policy is escaped for the terminal. The rules the
//! policy's settings feed are named from the registry (`Reports`), never written here.

use crate::text::{e, joined, plural, prose_line, table};
use gpu_trust_policy::{CheckReport, Tenant};
use gpu_trust_rules::registry::{codes_reporting, Reports};

fn namespaces_of(t: &Tenant) -> String {
    let list = if t.declared_namespaces.is_empty() {
        &t.namespaces
    } else {
        &t.declared_namespaces
    };
    if list.is_empty() {
        "(none: filled by the tenant label)".to_string()
    } else {
        list.join(", ")
    }
}

/// The policy for reading: its tenants, the trust between them, the platform namespaces and labels,
/// the workload classes and the acceptances with their state. `width`: the columns the
/// tables fit in.
pub fn render(r: &CheckReport, width: usize) -> String {
    let mut out = String::new();
    let head = format!(
        "Policy {}: valid ({}, {}, {})",
        e(r.file.as_deref().unwrap_or("(default)")),
        plural(r.tenants.len(), "tenant", "tenants"),
        plural(r.pairs, "pair", "pairs"),
        plural(r.acceptances.len(), "acceptance", "acceptances"),
    );
    out.push_str(&prose_line(&head, width, ""));
    out.push('\n');

    out.push_str("Tenants\n");
    if r.tenants.is_empty() {
        out.push_str("  none declared: every namespace is a tenant of its own\n");
    } else {
        let mut t = table(
            width,
            [
                "tenant",
                "namespaces",
                "latency",
                "confidential",
                "contract",
                "subjects",
            ],
        );
        for tenant in &r.tenants {
            let subjects: Vec<String> = tenant
                .subjects
                .iter()
                .map(|s| match &s.namespace {
                    Some(ns) => format!("{} {}/{}", e(&s.kind), e(ns), e(&s.name)),
                    None => format!("{} {}", e(&s.kind), e(&s.name)),
                })
                .collect();
            t.add_row(vec![
                e(&tenant.name),
                e(&namespaces_of(tenant)),
                tenant.latency.to_string(),
                if tenant.confidential { "yes" } else { "no" }.to_string(),
                tenant.contract.to_string(),
                subjects.join(", "),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    let defaulted = r.pairs.saturating_sub(r.relations.len());
    out.push('\n');
    out.push_str(&prose_line(
        &format!(
            "Trust between tenants (default: {}, for {}; inside one tenant: full)",
            r.default_trust,
            plural(defaulted, "pair", "pairs")
        ),
        width,
        "",
    ));
    if r.pairs == 0 {
        out.push_str("  no pairs: fewer than two tenants declared\n");
    } else if r.relations.is_empty() {
        out.push_str("  no relations: every pair has the default\n");
    } else {
        let mut t = table(width, ["tenants", "trust", "from"]);
        for p in &r.relations {
            let from = match p.line {
                Some(line) => format!("relation (line {line})"),
                None => "default".to_string(),
            };
            t.add_row(vec![
                format!("{} / {}", e(&p.tenants[0]), e(&p.tenants[1])),
                p.trust.to_string(),
                from,
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    // Built in, then what the policy adds: `platformNamespaces` extends the built-in list.
    let (built_in, added): (Vec<&String>, Vec<&String>) = r
        .platform_namespaces
        .iter()
        .filter(|p| !r.platform_claimed.contains_key(*p))
        .partition(|p| gpu_trust_policy::DEFAULT_PLATFORM_NAMESPACES.contains(&p.as_str()));
    let names = |list: &[&String]| list.iter().map(|p| e(p)).collect::<Vec<_>>().join(", ");
    out.push('\n');
    out.push_str(&prose_line(
        &format!(
            "Platform namespaces (infrastructure, never tenants unless a tenant names them): {}",
            names(&built_in)
        ),
        width,
        "",
    ));
    if !added.is_empty() {
        out.push_str(&prose_line(
            &format!(
                "Added by the policy's platformNamespaces (to the built-in ones above): {}",
                names(&added)
            ),
            width,
            "",
        ));
    }
    if !r.platform_claimed.is_empty() {
        let claimed: Vec<String> = r
            .platform_claimed
            .iter()
            .map(|(ns, t)| format!("{} (tenant {})", e(ns), e(t)))
            .collect();
        out.push_str(&prose_line(
            &format!(
                "Platform namespaces a tenant names, so the tenant's: {}",
                claimed.join(", ")
            ),
            width,
            "",
        ));
    }
    let labels = format!(
        "Tenant label (adds tenants for unclaimed namespaces): {}",
        if r.tenant_labels.is_empty() {
            "none".to_string()
        } else {
            joined(&r.tenant_labels, ", ")
        }
    );
    out.push_str(&prose_line(&labels, width, ""));
    out.push_str(&prose_line(
        "Any other namespace is a tenant of its own, unassigned, with the default trust.",
        width,
        "",
    ));
    out.push_str(&format!(
        "Host patch window: {}\n",
        plural(r.patch_window_days as usize, "day", "days")
    ));
    out.push_str(&prose_line(
        &format!(
            "Replicas per shared GPU without a memory limit before {}: {}",
            codes_reporting(Reports::ReplicasOverLimit),
            r.max_replicas
        ),
        width,
        "",
    ));

    if !r.workloads.is_empty() {
        out.push_str("\nWorkloads\n");
        let mut t = table(
            width,
            ["namespace", "labels", "kind", "peak memory", "latency"],
        );
        for w in &r.workloads {
            let labels: Vec<String> = w
                .labels
                .iter()
                .map(|(k, v)| format!("{}={}", e(k), e(v)))
                .collect();
            t.add_row(vec![
                w.namespace
                    .as_ref()
                    .map_or("any".to_string(), |p| e(&p.pattern)),
                labels.join(", "),
                w.kind.map_or(String::new(), |k| k.as_str().to_string()),
                w.peak_memory_mib
                    .map_or(String::new(), |m| format!("{m} MiB")),
                w.latency.map_or(String::new(), |l| l.to_string()),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    out.push_str(&format!("\nAcceptances (as of {})\n", r.today));
    if r.acceptances.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = table(width, ["rule", "scope", "reason", "until", "state", "line"]);
        for a in &r.acceptances {
            t.add_row(vec![
                e(&a.rule),
                e(&a.scope()),
                if a.reason.is_empty() {
                    format!(
                        "(none: accepts nothing, {})",
                        codes_reporting(Reports::AcceptanceWithoutReason)
                    )
                } else {
                    e(&a.reason)
                },
                a.until.map_or("no end".to_string(), |d| d.to_string()),
                a.state.as_str().to_string(),
                a.line.to_string(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    out
}

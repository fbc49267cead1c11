//! Phrases the rules' messages are built from: lists of names, workloads and nodes, and what the
//! isolation model says a mechanism enforces (read from the model, never restated).

use crate::context::Context;
use gpu_trust_model::fleet::{NodeId, WorkloadId, WorkloadKind};
use gpu_trust_model::isolation::{Enforcement, Mechanism, Property};
use gpu_trust_policy::TenantId;
use std::collections::BTreeSet;

/// How many names a message lists before "and N more".
pub const MAX_NAMES: usize = 4;

/// `a`, `a and b`, `a, b and c`, `a, b, c, d and 3 more`.
pub fn list<S: AsRef<str>>(items: &[S]) -> String {
    let shown: Vec<&str> = items
        .iter()
        .take(MAX_NAMES + 1)
        .map(AsRef::as_ref)
        .collect();
    list_of(&shown, items.len())
}

/// A list of `total` items of which the first are `shown` (at least `MAX_NAMES + 1` of them, or all).
pub fn list_of(shown: &[&str], total: usize) -> String {
    match total {
        0 => String::new(),
        1 => shown[0].to_string(),
        n if n <= MAX_NAMES => format!("{} and {}", shown[..n - 1].join(", "), shown[n - 1]),
        n => format!(
            "{} and {} more",
            shown[..MAX_NAMES].join(", "),
            n - MAX_NAMES
        ),
    }
}

/// Tenant names, sorted, as a list.
pub fn tenants(ctx: &Context<'_>, ids: impl IntoIterator<Item = TenantId>) -> String {
    let names: BTreeSet<&str> = ids.into_iter().map(|t| ctx.tenant_name(t)).collect();
    list(&names.into_iter().collect::<Vec<_>>())
}

/// Node names, sorted, as a list (`node gpu-1` / `nodes gpu-1 and gpu-2`).
pub fn nodes(ctx: &Context<'_>, ids: impl IntoIterator<Item = NodeId>) -> String {
    let names: BTreeSet<&str> = ids.into_iter().map(|n| ctx.node_name(n)).collect();
    let word = if names.len() == 1 { "node" } else { "nodes" };
    format!("{word} {}", list(&names.into_iter().collect::<Vec<_>>()))
}

/// One workload as a message names it: `cust-acme/infer-0` for a pod, `Deployment cust-acme/web`
/// for a template.
pub fn workload(ctx: &Context<'_>, id: WorkloadId) -> String {
    match ctx.workload(id) {
        Some(w) if w.kind == WorkloadKind::Pod => format!("{}/{}", w.namespace, w.object.name),
        Some(w) => format!("{} {}/{}", w.object.kind, w.namespace, w.object.name),
        None => "?".to_string(),
    }
}

/// Workloads as a list, one entry per owning workload, in fleet order of their first workload:
/// `Deployment cust-acme/web (3 pods)` for a Deployment's pods (with or without its object), a
/// template alone by its kind and name, a pod without an owner by its name.
pub fn workloads(ctx: &Context<'_>, ids: impl IntoIterator<Item = WorkloadId>) -> String {
    let names: Vec<String> = units(ctx, ids).iter().map(|u| unit_name(ctx, u)).collect();
    let shown: Vec<&str> = names
        .iter()
        .take(MAX_NAMES + 1)
        .map(String::as_str)
        .collect();
    list_of(&shown, names.len())
}

/// Workloads of one owner: its key (`Deployment/ns/name`), its workloads (the object's templates
/// and the pods), and how many of them are pods.
#[derive(Debug, Clone)]
pub struct Unit {
    pub key: String,
    pub workloads: Vec<WorkloadId>,
    pub pods: usize,
}

/// Workloads grouped by the workload that owns them, in fleet order of their first workload.
pub fn units(ctx: &Context<'_>, ids: impl IntoIterator<Item = WorkloadId>) -> Vec<Unit> {
    let mut ids: Vec<WorkloadId> = ids
        .into_iter()
        .filter(|id| ctx.workload(*id).is_some())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut index: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut out: Vec<Unit> = Vec::new();
    for id in ids {
        let Some(w) = ctx.workload(id) else { continue };
        let key = ctx.owners.of(w);
        let i = *index.entry(key.clone()).or_insert_with(|| {
            out.push(Unit {
                key,
                workloads: Vec::new(),
                pods: 0,
            });
            out.len() - 1
        });
        out[i].workloads.push(id);
        if w.kind == WorkloadKind::Pod {
            out[i].pods += 1;
        }
    }
    out
}

/// One owner as a message names it: `Deployment cust-acme/web (3 pods)`, `Deployment cust-acme/web`
/// for its object alone, `cust-acme/infer-0` for a pod of its own.
pub fn unit_name(ctx: &Context<'_>, unit: &Unit) -> String {
    if let [one] = unit.workloads.as_slice() {
        if ctx
            .workload(*one)
            .is_some_and(|w| w.kind == WorkloadKind::Pod && w.owner.is_none())
        {
            return workload(ctx, *one);
        }
    }
    let name = owner_name(&unit.key);
    match unit.pods {
        0 => name,
        n => format!("{name} ({})", plural(n as u64, "pod")),
    }
}

/// `Deployment cust-acme/web` for the key `Deployment/cust-acme/web`.
pub fn owner_name(key: &str) -> String {
    match key.split_once('/') {
        Some((kind, rest)) => format!("{kind} {rest}"),
        None => key.to_string(),
    }
}

fn enforcement_word(e: Enforcement) -> &'static str {
    match e {
        Enforcement::Separate => "separate",
        Enforcement::LimitedByKernel => "limited by the kernel",
        Enforcement::LimitedInSoftware => "limited in software",
        Enforcement::Shared => "shared",
        Enforcement::NotEnforced => "not enforced",
    }
}

/// What the silicon (or software) enforces between two workloads under `mechanism`, for the given
/// properties, as the isolation model states it: `time-slicing: memory capacity shared (one memory
/// pool); fault domain shared (...)`.
pub fn enforcement(mechanism: Mechanism, properties: &[Property]) -> String {
    let parts: Vec<String> = properties
        .iter()
        .map(|p| {
            let fact = mechanism.property(*p);
            format!(
                "{} {} ({})",
                p.title(),
                enforcement_word(fact.enforcement),
                fact.note
            )
        })
        .collect();
    format!("{}: {}", mechanism.title(), parts.join("; "))
}

/// The properties that incidents between tenants turn on: memory, faults, compute.
pub const INCIDENT_PROPERTIES: [Property; 3] = [
    Property::MemoryCapacity,
    Property::FaultDomain,
    Property::Compute,
];

/// `1 GPU` / `2 GPUs` / `1,000 tenants`.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", count(n))
    }
}

/// A count with thousands separated: `999`, `1,000`, `499,500`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// MiB in GiB from 1 GiB up (`40 GiB`, `9.75 GiB`), else MiB.
pub fn mib(v: u64) -> String {
    if v < 1024 {
        return format!("{v} MiB");
    }
    if v.is_multiple_of(1024) {
        return format!("{} GiB", v / 1024);
    }
    let text = format!("{:.2}", v as f64 / 1024.0);
    format!("{} GiB", text.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_naturally() {
        assert_eq!(list::<&str>(&[]), "");
        assert_eq!(list(&["a"]), "a");
        assert_eq!(list(&["a", "b"]), "a and b");
        assert_eq!(list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(
            list(&["a", "b", "c", "d", "e", "f"]),
            "a, b, c, d and 2 more"
        );
    }

    #[test]
    fn enforcement_reads_the_model() {
        let s = enforcement(Mechanism::KaiFraction, &[Property::MemoryCapacity]);
        let fact = Mechanism::KaiFraction.property(Property::MemoryCapacity);
        assert!(s.contains(fact.note), "{s}");
        assert!(s.starts_with(Mechanism::KaiFraction.title()), "{s}");
        assert!(s.contains("not enforced"), "{s}");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(499_500), "499,500");
        assert_eq!(plural(1, "pair"), "1 pair");
        assert_eq!(plural(1000, "tenant"), "1,000 tenants");
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(mib(40 * 1024), "40 GiB");
        assert_eq!(mib(1536), "1.5 GiB");
        assert_eq!(mib(9984), "9.75 GiB");
        assert_eq!(mib(20_070), "19.6 GiB");
        assert_eq!(mib(512), "512 MiB");
    }
}

use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::{Binding, Platform, PolicyRule};
use gpu_trust_model::labels::DRA_ADMIN_ACCESS;
use gpu_trust_model::stack::Component;
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// Wherever a GPU DRA driver is installed (NVIDIA's DRA driver: its DeviceClasses, the GPUs its
    /// ResourceSlices publish, its kubelet plugin's image or Helm chart, a GPUCluster) or GPUs are
    /// claimed with Dynamic Resource Allocation (ResourceClaims in the input, pods using them): a
    /// ResourceClaim or ResourceClaimTemplate in a tenant's namespace
    /// that sets `adminAccess: true`; a tenant's Namespace labelled `resource.kubernetes.io/admin-access:
    /// "true"`; and RBAC that lets a tenant's subjects set that label themselves: `patch` or `update` on
    /// Namespaces (cluster-wide, by `resourceNames`, or on their own Namespace through a RoleBinding
    /// in it), or `create` on Namespaces. A tenant that can also create ResourceClaims there is
    /// `observed`, otherwise `possible`. Admin access is in play as soon as the driver is, before any
    /// claim exists: a claim created later gets the devices other tenants hold.
    ///
    /// ## Why it matters
    ///
    /// A claim with admin access is given devices whether or not other claims hold them: the scheduler
    /// ignores it when counting what is in use, so it reaches GPUs allocated to other tenants. Kubernetes
    /// allows it only in namespaces with the admin-access label, and checks nothing else: whoever can
    /// label the Namespace can unlock it. A common self-service grant, `patch` on a team's own
    /// Namespace so it can manage its labels, is enough (kubernetes/kubernetes issue 141293, closed as
    /// working as designed).
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Role
    /// metadata: {name: namespace-self-service, namespace: team-a}
    /// rules:
    ///   - {apiGroups: [""], resources: [namespaces], resourceNames: [team-a], verbs: [get, patch]}
    /// ```
    ///
    /// ## Remediation
    ///
    /// Do not let tenants write Namespace objects: manage their labels through the platform's own
    /// automation, or deny the admin-access label with an admission policy (a ValidatingAdmissionPolicy
    /// or Kyverno policy that refuses `resource.kubernetes.io/admin-access` on tenant Namespaces and
    /// `adminAccess` on their claims). Remove admin-access claims and labels from tenant namespaces.
    ///
    /// ## References
    ///
    /// - Kubernetes KEP-5018 (DRA admin access) and `k8s.io/api` resource types
    ///   (`DRAAdminNamespaceLabelKey`); the feature is stable from Kubernetes 1.36.
    /// - kubernetes/kubernetes issue 141293 and kubernetes/website issue 56957 (the label is the only
    ///   gate); kyverno/policies pull request 1523 (mitigation policies).
    /// - k8s.io/apiserver `pkg/endpoints/request/requestinfo.go`: a request for
    ///   `/api/v1/namespaces/<name>` has the namespace `<name>`, so a RoleBinding in a namespace can
    ///   grant access to that Namespace object.
    pub struct TenantCanUnlockDraAdminAccess {
        code: "GT405",
        name: "tenant-can-unlock-dra-admin-access",
        layer: Layer::ControlPlane,
        severity: SeverityRule::Fixed(Severity::Critical),
        summary: "a tenant holds or can unlock DRA admin access (a claim that gets devices other tenants hold) by labelling its own Namespace",
    }
}

/// Verbs that change an existing object.
const EDIT: &[&str] = &["update", "patch"];
const CLAIMS: &[&str] = &["resourceclaims", "resourceclaimtemplates"];

/// Whether `rule` allows one of `verbs` on `resource` of `group` for the object named `name` (a rule
/// without `resourceNames` allows every name).
fn allows(
    rule: &PolicyRule,
    group: &str,
    resource: &str,
    verbs: &[&str],
    name: Option<&str>,
) -> bool {
    verbs.iter().any(|v| rule.allows(group, resource, v))
        && (rule.resource_names.is_empty()
            || name.is_some_and(|n| rule.resource_names.iter().any(|r| r == n)))
}

/// What one tenant's subjects may do.
#[derive(Default)]
struct Powers {
    /// Namespaces they may label (`None`: every namespace).
    label: Option<BTreeSet<String>>,
    label_all: bool,
    create_namespaces: bool,
    /// Namespaces they may create claims in; `claims_all` for every one.
    claims: BTreeSet<String>,
    claims_all: bool,
    bindings: BTreeSet<String>,
    objects: BTreeSet<gpu_trust_model::ObjectRef>,
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let fleet = ctx.fleet;
    let driver = !fleet.dra_classes.is_empty()
        || fleet.gpu_cluster.is_some()
        || fleet.nodes.iter().any(|n| {
            n.gpu
                .as_ref()
                .is_some_and(|g| g.platforms.contains(&Platform::DraDriver))
        })
        || ctx
            .analysis
            .versions
            .iter()
            .any(|v| v.component == Component::DraDriver);
    let dra = driver
        || !fleet.resource_claims.is_empty()
        || fleet.workloads.iter().any(|w| !w.gpu.dra.is_empty());
    if !dra {
        return;
    }
    // Claims with admin access in tenant namespaces.
    let mut claims: BTreeMap<TenantId, Vec<&gpu_trust_model::fleet::ResourceClaimInfo>> =
        BTreeMap::new();
    for c in fleet.resource_claims.iter().filter(|c| c.admin_access) {
        if let Some(t) = c
            .object
            .namespace
            .as_deref()
            .and_then(|n| ctx.tenancy.tenant_of(n))
        {
            claims.entry(t).or_default().push(c);
        }
    }
    for (tenant, list) in &claims {
        let names: Vec<String> = list.iter().map(|c| c.object.to_string()).collect();
        let mut draft = sink
            .draft(Severity::Critical, Certainty::Observed)
            .key(format!("claims/{}", ctx.tenant_name(*tenant)))
            .tenants([*tenant])
            .message(format!(
                "{} of tenant {} {} `adminAccess: true`: {} given GPUs whether or not other tenants' claims hold them",
                text::list(&names),
                ctx.tenant_name(*tenant),
                if names.len() == 1 { "sets" } else { "set" },
                if names.len() == 1 { "it is" } else { "they are" }
            ))
            .remediation(format!(
                "Remove the admin-access claims of {} and the `{DRA_ADMIN_ACCESS}` label from its namespaces; refuse both for tenants with an admission policy",
                ctx.tenant_name(*tenant)
            ));
        for c in list {
            draft = draft.object(c.object.clone());
        }
        sink.push(draft);
    }
    // Tenant namespaces already labelled.
    let mut labelled: BTreeMap<TenantId, Vec<&gpu_trust_model::fleet::NamespaceInfo>> =
        BTreeMap::new();
    for ns in &fleet.namespaces {
        if ns.labels.get(DRA_ADMIN_ACCESS).map(String::as_str) == Some("true") {
            if let Some(t) = ctx.tenancy.tenant_of(&ns.name) {
                labelled.entry(t).or_default().push(ns);
            }
        }
    }
    for (tenant, list) in &labelled {
        if claims.contains_key(tenant) {
            continue;
        }
        let names: Vec<String> = list.iter().map(|n| n.name.clone()).collect();
        let mut draft = sink
            .draft(Severity::Critical, Certainty::Possible)
            .key(format!("label/{}", ctx.tenant_name(*tenant)))
            .tenants([*tenant])
            .message(format!(
                "namespace {} of tenant {} {} `{DRA_ADMIN_ACCESS}: \"true\"`: any ResourceClaim created there may set adminAccess and get GPUs other tenants' claims hold",
                text::list(&names),
                ctx.tenant_name(*tenant),
                if names.len() == 1 { "is labelled" } else { "are labelled" }
            ))
            .remediation(format!(
                "Remove the `{DRA_ADMIN_ACCESS}` label from {}; keep admin access to a platform namespace tenants cannot write",
                text::list(&names)
            ));
        for n in list {
            if let Some(o) = n.object.clone() {
                draft = draft.object(o);
            }
        }
        sink.push(draft);
    }
    // RBAC that lets a tenant set the label.
    let mut powers: BTreeMap<TenantId, Powers> = BTreeMap::new();
    for b in &fleet.rbac.bindings {
        let tenants: BTreeSet<TenantId> = b
            .subjects
            .iter()
            .flat_map(|s| ctx.tenancy.tenants_of_subject(s))
            .collect();
        if tenants.is_empty() {
            continue;
        }
        for t in tenants {
            let p = powers.entry(t).or_default();
            grant(p, b);
        }
    }
    for (tenant, p) in powers {
        if labelled.contains_key(&tenant) || claims.contains_key(&tenant) {
            continue;
        }
        if !(p.label_all || p.create_namespaces || p.label.as_ref().is_some_and(|l| !l.is_empty()))
        {
            continue;
        }
        let mut can = Vec::new();
        if p.label_all {
            can.push("label every Namespace".to_string());
        } else if let Some(l) = &p.label {
            if !l.is_empty() {
                can.push(format!(
                    "label Namespace {}",
                    text::list(&l.iter().cloned().collect::<Vec<_>>())
                ));
            }
        }
        if p.create_namespaces {
            can.push("create Namespaces (with any label)".to_string());
        }
        let claim_there = p.claims_all
            || p.create_namespaces && !p.claims.is_empty()
            || p.label
                .as_ref()
                .is_some_and(|l| l.iter().any(|n| p.claims.contains(n)));
        let certainty = if claim_there {
            Certainty::Observed
        } else {
            Certainty::Possible
        };
        let mut draft = sink
            .draft(Severity::High, certainty)
            .key(format!("rbac/{}", ctx.tenant_name(tenant)))
            .tenants([tenant])
            .message(format!(
                "subjects of tenant {} can {} through {}: with `{DRA_ADMIN_ACCESS}: \"true\"` on a namespace, its ResourceClaims may set adminAccess and get GPUs other tenants' claims hold{}",
                ctx.tenant_name(tenant),
                text::list(&can),
                text::list(&p.bindings.iter().cloned().collect::<Vec<_>>()),
                if claim_there {
                    "; they can create ResourceClaims there"
                } else {
                    "; whether they can create ResourceClaims there is not in the input"
                }
            ))
            .remediation(format!(
                "Take write access to Namespace objects away from {}'s subjects, or refuse the `{DRA_ADMIN_ACCESS}` label on tenant Namespaces with an admission policy",
                ctx.tenant_name(tenant)
            ));
        for o in p.objects {
            draft = draft.object(o);
        }
        sink.push(draft);
    }
}

/// Adds what binding `b` grants to `p`.
fn grant(p: &mut Powers, b: &Binding) {
    let mut used = false;
    for r in &b.rules {
        match b.namespace.as_deref() {
            None => {
                if allows(r, "", "namespaces", EDIT, None) {
                    p.label_all = true;
                    used = true;
                } else if EDIT.iter().any(|v| r.allows("", "namespaces", v))
                    && !r.resource_names.is_empty()
                {
                    p.label
                        .get_or_insert_with(BTreeSet::new)
                        .extend(r.resource_names.iter().cloned());
                    used = true;
                }
                if allows(r, "", "namespaces", &["create"], None) {
                    p.create_namespaces = true;
                    used = true;
                }
                if CLAIMS
                    .iter()
                    .any(|c| r.allows("resource.k8s.io", c, "create"))
                {
                    p.claims_all = true;
                }
            }
            Some(ns) => {
                // A RoleBinding reaches the Namespace object of its own namespace: the API server
                // takes a Namespace's name as the namespace of a request for it.
                if allows(r, "", "namespaces", EDIT, Some(ns)) {
                    p.label
                        .get_or_insert_with(BTreeSet::new)
                        .insert(ns.to_string());
                    used = true;
                }
                if CLAIMS
                    .iter()
                    .any(|c| r.allows("resource.k8s.io", c, "create"))
                {
                    p.claims.insert(ns.to_string());
                }
            }
        }
    }
    if used {
        p.bindings.insert(format!("{} with {}", b.object, b.role));
        p.objects.insert(b.object.clone());
    }
}

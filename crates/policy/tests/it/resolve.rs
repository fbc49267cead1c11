//! Resolution of a policy against a cluster's namespaces: who owns what, and who trusts whom.

use gpu_trust_model::fleet::{NamespaceInfo, Subject, WorkloadClass};
use gpu_trust_model::Trust;
use gpu_trust_policy::{
    parse, Contract, Date, Latency, NamespaceRole, Policy, Tenancy, TenantOrigin, TrustSource,
};
use std::collections::BTreeMap;

fn valid() -> Policy {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/valid.yaml");
    parse(&std::fs::read_to_string(path).unwrap(), "valid.yaml").unwrap()
}

fn ns(name: &str) -> NamespaceInfo {
    NamespaceInfo {
        name: name.into(),
        ..Default::default()
    }
}

fn labelled(name: &str, key: &str, value: &str) -> NamespaceInfo {
    NamespaceInfo {
        name: name.into(),
        labels: [(key.to_string(), value.to_string())].into(),
        object: None,
    }
}

fn tenant_name<'t>(t: &'t Tenancy, namespace: &str) -> &'t str {
    t.name(
        t.tenant_of(namespace)
            .unwrap_or_else(|| panic!("{namespace} has no tenant")),
    )
}

fn cluster() -> Vec<NamespaceInfo> {
    vec![
        ns("search-prod"),
        ns("search-batch"),
        ns("ads-eu"),
        ns("ads-us"),
        ns("cust-acme"),
        ns("ml-dev"),
        ns("kube-system"),
        ns("gpu-operator"),
        ns("nvidia-dra"),
        ns("monitoring"),
        ns("forgotten"),
        labelled("team-x-dev", "capsule.clastix.io/tenant", "team-x"),
        labelled("team-x-prod", "capsule.clastix.io/tenant", "team-x"),
    ]
}

#[test]
fn namespaces_go_to_their_tenants() {
    let t = valid().resolve(&cluster());
    assert_eq!(tenant_name(&t, "search-prod"), "search");
    assert_eq!(tenant_name(&t, "search-batch"), "search");
    assert_eq!(tenant_name(&t, "ads-eu"), "ads");
    assert_eq!(tenant_name(&t, "ads-us"), "ads");
    assert_eq!(tenant_name(&t, "cust-acme"), "acme");
    assert_eq!(tenant_name(&t, "ml-dev"), "platform-ml");
    let ads = t.tenant(t.tenant_by_name("ads").unwrap());
    assert_eq!(ads.namespaces, ["ads-eu", "ads-us"]);
    assert_eq!(ads.declared_namespaces, ["ads-*"]);
    assert_eq!(ads.latency, Latency::Critical);
    let acme = t.tenant(t.tenant_by_name("acme").unwrap());
    assert!(acme.confidential);
    assert_eq!(acme.contract, Contract::Isolation);
    assert!(t.diagnostics().is_empty(), "{:?}", t.diagnostics());
}

#[test]
fn platform_namespaces_are_not_tenants() {
    let t = valid().resolve(&cluster());
    for name in ["kube-system", "gpu-operator", "nvidia-dra", "monitoring"] {
        assert_eq!(t.tenant_of(name), None, "{name}");
        assert_eq!(t.role(name), Some(NamespaceRole::Platform), "{name}");
        assert!(t.is_platform(name));
    }
    assert!(t.tenants().iter().all(|x| x.name != "kube-system"));
    // The policy's list extends the built-in one: kube-public, which it does not name, and the GPU
    // Operator's namespace stay infrastructure beside the namespaces it adds.
    let t = valid().resolve(&[
        ns("kube-public"),
        ns("gpu-operator"),
        ns("nvidia-gpu-operator"),
    ]);
    for name in ["kube-public", "gpu-operator", "nvidia-gpu-operator"] {
        assert_eq!(t.tenant_of(name), None, "{name}");
        assert!(t.is_platform(name), "{name}");
    }
    assert!(t.tenants().iter().all(|x| x.namespaces.is_empty()));
    // A policy that adds one namespace keeps every built-in one.
    let p = parse("platformNamespaces: [monitoring]\n", "p.yaml").unwrap();
    for d in gpu_trust_policy::DEFAULT_PLATFORM_NAMESPACES {
        assert!(
            p.platform_namespaces().iter().any(|x| x.pattern == *d),
            "{d} is kept"
        );
    }
    assert!(p
        .platform_namespaces()
        .iter()
        .any(|x| x.pattern == "monitoring"));
    // A built-in namespace is a tenant's only when a tenant names it.
    let p = parse(
        "platformNamespaces: [monitoring]\ntenants:\n  - {name: ops, namespaces: [kube-public]}\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(
        tenant_name(&p.resolve(&[ns("kube-public")]), "kube-public"),
        "ops"
    );
    // ...while without a policy every default platform namespace is infrastructure.
    let t = Policy::default().resolve(&[
        ns("kube-public"),
        ns("kube-node-lease"),
        ns("nvidia-gpu-operator"),
        ns("acme-gpu-operator"),
    ]);
    assert!(t.tenants().is_empty(), "{:?}", t.tenants());
}

#[test]
fn scheduler_and_operator_namespaces_are_platform_by_default() {
    // The namespaces the batch schedulers and workload operators install into run their
    // controllers and device plugins (HAMi's, privileged on every GPU node), not a tenant's pods.
    let names = [
        "volcano-system",
        "kai-scheduler",
        "kai-resource-reservation",
        "hami-system",
        "lws-system",
        "jobset-system",
        "ray-system",
    ];
    let t = Policy::default().resolve(&names.map(ns));
    for name in names {
        assert_eq!(t.role(name), Some(NamespaceRole::Platform), "{name}");
    }
    assert!(t.tenants().is_empty(), "{:?}", t.tenants());
    // Namespaces where users run their own jobs stay tenants.
    let t = Policy::default().resolve(&[ns("kubeflow-user"), ns("ray-jobs")]);
    assert_eq!(t.tenants().len(), 2);
}

#[test]
fn unassigned_namespaces_are_own_tenants_without_trust() {
    let t = valid().resolve(&cluster());
    let forgotten = t.tenant_of("forgotten").unwrap();
    assert!(t.tenant(forgotten).is_unassigned());
    assert_eq!(t.name(forgotten), "forgotten");
    for other in t.ids().filter(|id| *id != forgotten) {
        assert_eq!(t.trust(forgotten, other), Trust::None, "{}", t.name(other));
        assert_eq!(t.trust_source(forgotten, other), TrustSource::Default);
    }
    assert_eq!(t.trust(forgotten, forgotten), Trust::Full);
}

#[test]
fn unassigned_tenants_take_the_declared_default() {
    let p = parse("trust: {default: limited}\n", "p.yaml").unwrap();
    let t = p.resolve(&[ns("a"), ns("b")]);
    let (a, b) = (t.tenant_of("a").unwrap(), t.tenant_of("b").unwrap());
    assert_ne!(a, b);
    assert_eq!(t.trust(a, b), Trust::Limited);
}

#[test]
fn explicit_names_beat_globs() {
    let p = parse(
        "tenants:\n  - name: ads\n    namespaces: [\"ads-*\"]\n  - name: audit\n    namespaces: [ads-audit]\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[ns("ads-audit"), ns("ads-prod")]);
    assert_eq!(tenant_name(&t, "ads-audit"), "audit");
    assert_eq!(tenant_name(&t, "ads-prod"), "ads");
}

#[test]
fn explicit_platform_name_beats_tenant_glob_and_tenant_glob_beats_platform_glob() {
    let p = parse(
        "platformNamespaces: [kube-system, \"nvidia-*\"]\ntenants:\n  - name: wide\n    namespaces: [\"kube-*\", \"nvidia-lab-*\"]\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[
        ns("kube-system"),
        ns("kube-lab"),
        ns("nvidia-lab-1"),
        ns("nvidia-dcgm"),
    ]);
    assert!(t.is_platform("kube-system"));
    assert_eq!(tenant_name(&t, "kube-lab"), "wide");
    assert_eq!(tenant_name(&t, "nvidia-lab-1"), "wide");
    assert!(t.is_platform("nvidia-dcgm"));
}

#[test]
fn the_more_specific_glob_wins_and_equal_globs_are_an_error() {
    let p = parse(
        "tenants:\n  - name: ads\n    namespaces: [\"ads-*\"]\n  - name: ads-eu\n    namespaces: [\"ads-eu-*\"]\n  - name: prod\n    namespaces: [\"*prod\"]\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[ns("ads-eu-1"), ns("ads-us")]);
    assert_eq!(tenant_name(&t, "ads-eu-1"), "ads-eu");
    assert_eq!(tenant_name(&t, "ads-us"), "ads");
    // Only that `prod` matches none of them.
    let messages: Vec<&str> = t.diagnostics().iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("tenant `prod` (*prod) matches no namespace"),
        "{messages:?}"
    );

    // `ads-*` and `*prod` both have four literal characters.
    let t = p.resolve(&[ns("ads-prod")]);
    assert_eq!(tenant_name(&t, "ads-prod"), "ads");
    let d = t.diagnostics().iter().find(|d| d.is_error()).unwrap();
    assert_eq!(d.code, gpu_trust_model::Code::NamespaceGlobTie, "{d}");
    assert_eq!(d.location.line, 7);
    assert!(
        d.message.contains("`ads-*` of tenant `ads`")
            && d.message.contains("`*prod` of tenant `prod`"),
        "{d}"
    );
}

#[test]
fn tenant_label_adds_tenants_for_unclaimed_namespaces() {
    let t = valid().resolve(&cluster());
    let team = t.tenant_by_name("team-x").unwrap();
    assert_eq!(t.tenant(team).origin, TenantOrigin::Label);
    assert_eq!(t.tenant(team).namespaces, ["team-x-dev", "team-x-prod"]);
    assert_eq!(t.tenant_of("team-x-dev"), Some(team));
    assert_eq!(
        t.trust(team, t.tenant_by_name("search").unwrap()),
        Trust::None
    );
}

#[test]
fn tenant_label_beats_platform_names_only() {
    // A namespace a tenant claims stays with it whatever its label says; a label naming a declared
    // tenant joins that tenant, even in a namespace the policy lists as infrastructure (a tenant
    // that may create namespaces could create one of that name), and says so.
    let t = valid().resolve(&[
        labelled("ads-eu", "capsule.clastix.io/tenant", "acme"),
        labelled("monitoring", "capsule.clastix.io/tenant", "acme"),
        labelled("acme-extra", "capsule.clastix.io/tenant", "acme"),
    ]);
    assert_eq!(tenant_name(&t, "ads-eu"), "ads");
    assert_eq!(tenant_name(&t, "monitoring"), "acme");
    assert!(t
        .diagnostics()
        .iter()
        .any(|d| d.code == gpu_trust_model::Code::TenantClaimsPlatform
            && d.message.contains("`monitoring`")));
    assert_eq!(tenant_name(&t, "acme-extra"), "acme");
    let acme = t.tenant(t.tenant_by_name("acme").unwrap());
    assert_eq!(acme.origin, TenantOrigin::Declared);
    assert!(
        acme.confidential,
        "the joined namespace gets the tenant's attributes"
    );
}

#[test]
fn default_policy_uses_namespaces_and_the_capsule_label() {
    let t = Policy::default().resolve(&[
        ns("a"),
        ns("b"),
        labelled("c1", "capsule.clastix.io/tenant", "c"),
        labelled("c2", "capsule.clastix.io/tenant", "c"),
        ns("kube-system"),
    ]);
    let names: Vec<&str> = t.tenants().iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(t.tenant_of("c1"), t.tenant_of("c2"));
    let (a, b, c) = (
        t.tenant_of("a").unwrap(),
        t.tenant_of("b").unwrap(),
        t.tenant_of("c1").unwrap(),
    );
    assert_eq!(t.trust(a, b), Trust::None);
    assert_eq!(t.trust(a, c), Trust::None);
    assert_eq!(t.trust(c, c), Trust::Full);
}

/// A tenant of Capsule or of Stakater's Multi Tenant Operator that names a namespace it creates
/// after a built-in platform pattern (`nvidia-*`, `*-gpu-operator`, `gpu-operator`) keeps it: the
/// namespace is judged as the label's tenant, with a warning at the namespace, never silently made
/// infrastructure. Without a label the built-in patterns hold.
#[test]
fn a_tenant_namespace_named_like_the_platform_stays_the_tenants() {
    let t = Policy::default().resolve(&[
        labelled("nvidia-jobs", "capsule.clastix.io/tenant", "acme"),
        labelled("acme-gpu-operator", "stakater.com/tenant", "acme"),
        labelled("gpu-operator", "stakater.com/tenant", "globex"),
        ns("nvidia-dcgm"),
        ns("kube-system"),
    ]);
    assert_eq!(tenant_name(&t, "nvidia-jobs"), "acme");
    assert_eq!(tenant_name(&t, "acme-gpu-operator"), "acme");
    assert_eq!(tenant_name(&t, "gpu-operator"), "globex");
    assert!(!t.is_platform("nvidia-jobs") && !t.is_platform("gpu-operator"));
    assert!(t.is_platform("nvidia-dcgm") && t.is_platform("kube-system"));
    let warned: Vec<&str> = t
        .diagnostics()
        .iter()
        .filter(|d| d.code == gpu_trust_model::Code::TenantClaimsPlatform)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(warned.len(), 3, "{warned:?}");
    assert!(warned
        .iter()
        .any(|m| m.contains("`nvidia-*`") && m.contains("`capsule.clastix.io/tenant: acme`")));
    assert!(warned.iter().all(|m| !m.contains("nvidia-dcgm")));
}

#[test]
fn label_off_means_every_namespace_alone() {
    let p = parse("tenantLabel: null\n", "p.yaml").unwrap();
    let t = p.resolve(&[
        labelled("c1", "capsule.clastix.io/tenant", "c"),
        labelled("c2", "capsule.clastix.io/tenant", "c"),
    ]);
    assert_ne!(t.tenant_of("c1"), t.tenant_of("c2"));
}

#[test]
fn unassigned_name_never_merges_into_a_declared_tenant() {
    // Namespace `search` is not one of tenant search's namespaces: it must not inherit its trust.
    let t = valid().resolve(&[ns("search"), ns("search-prod")]);
    let stray = t.tenant_of("search").unwrap();
    let search = t.tenant_of("search-prod").unwrap();
    assert_ne!(stray, search);
    assert_eq!(t.name(stray), "search (namespace)");
    assert!(t.tenant(stray).is_unassigned());
    assert_eq!(t.trust(stray, search), Trust::None);
}

#[test]
fn declared_tenants_exist_without_namespaces() {
    let t = valid().resolve(&[]);
    let names: Vec<&str> = t.tenants().iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        ["acme", "ads", "platform-ml", "search"],
        "sorted by name"
    );
    assert!(t.tenants().iter().all(|x| x.namespaces.is_empty()));
    assert_eq!(t.pairs().len(), 6);
}

#[test]
fn trust_is_symmetric_and_full_inside_a_tenant() {
    let t = valid().resolve(&cluster());
    let id = |n: &str| t.tenant_by_name(n).unwrap();
    let (search, ads, ml, acme) = (id("search"), id("ads"), id("platform-ml"), id("acme"));
    assert_eq!(t.trust(search, ads), Trust::Limited);
    assert_eq!(t.trust(ads, search), Trust::Limited);
    assert_eq!(t.trust(search, ml), Trust::Full);
    assert_eq!(t.trust(ml, search), Trust::Full);
    assert_eq!(t.trust(ads, ml), Trust::None, "trust is not transitive");
    assert_eq!(t.trust(acme, search), Trust::None);
    assert_eq!(t.trust(acme, acme), Trust::Full);
    match t.trust_source(ads, search) {
        TrustSource::Relation(loc) => assert_eq!(loc.line, 29),
        other => panic!("{other:?}"),
    }
    for a in t.ids() {
        for b in t.ids() {
            assert_eq!(t.trust(a, b), t.trust(b, a));
        }
    }
    let pairs = t.pairs();
    let n = t.tenants().len();
    assert_eq!(pairs.len(), n * (n - 1) / 2);
    assert!(pairs.iter().all(|p| p.tenants[0] < p.tenants[1]));
}

#[test]
fn rbac_subjects_of_a_tenant() {
    let t = valid().resolve(&cluster());
    let id = |n: &str| t.tenant_by_name(n).unwrap();
    let subject = |kind: &str, name: &str, namespace: Option<&str>| Subject {
        kind: kind.into(),
        name: name.into(),
        namespace: namespace.map(Into::into),
    };
    assert_eq!(
        t.tenants_of_subject(&subject("ServiceAccount", "trainer", Some("search-batch"))),
        [id("search")]
    );
    assert_eq!(
        t.tenants_of_subject(&subject(
            "User",
            "system:serviceaccount:ads-eu:default",
            None
        )),
        [id("ads")]
    );
    assert_eq!(
        t.tenants_of_subject(&subject("Group", "system:serviceaccounts:cust-acme", None)),
        [id("acme")]
    );
    assert_eq!(
        t.tenants_of_subject(&subject("Group", "ml-devs", None)),
        [id("platform-ml")]
    );
    assert_eq!(
        t.tenants_of_subject(&subject("User", "alice@example.com", None)),
        [id("platform-ml")]
    );
    assert!(t.is_subject_of(id("platform-ml"), &subject("Group", "ml-devs", None)));
    assert!(!t.is_subject_of(id("search"), &subject("Group", "ml-devs", None)));
    assert_eq!(
        t.tenants_of_subject(&subject("Group", "system:authenticated", None))
            .len(),
        t.tenants().len()
    );
    assert!(t
        .tenants_of_subject(&subject(
            "ServiceAccount",
            "gpu-operator",
            Some("gpu-operator")
        ))
        .is_empty());
    assert!(t
        .tenants_of_subject(&subject("User", "admin", None))
        .is_empty());
}

#[test]
fn workload_overrides() {
    let p = parse(
        "workloads:\n  - selector: {namespace: search-batch, labels: {app: trainer}}\n    kind: training\n    peakMemory: 60GiB\n  - selector: {namespace: \"search-*\"}\n    kind: batch\n    latency: tolerant\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[ns("search-batch")]);
    let trainer: BTreeMap<String, String> = [("app".to_string(), "trainer".to_string())].into();
    let o = t.workload_overrides("search-batch", &trainer);
    assert_eq!(
        o.kind,
        Some(WorkloadClass::Training),
        "the first entry wins"
    );
    assert_eq!(o.peak_memory_mib, Some(61_440));
    assert_eq!(
        o.latency,
        Some(Latency::Tolerant),
        "a later entry fills what the first leaves"
    );
    let o = t.workload_overrides("search-batch", &BTreeMap::new());
    assert_eq!(o.kind, Some(WorkloadClass::Batch));
    assert_eq!(o.peak_memory_mib, None);
    let o = t.workload_overrides("ads-eu", &trainer);
    assert_eq!(o, Default::default());
}

#[test]
fn acceptances_match_and_expire() {
    let t = valid().resolve(&cluster());
    let before = Date::parse("2027-06-30").unwrap();
    let after = Date::parse("2027-07-01").unwrap();
    let a = t
        .acceptance_for("GT401", ["ads", "search"], before)
        .unwrap();
    assert_eq!(a.reason, "internal teams, one cluster by design");
    assert_eq!(a.location.line, 46);
    assert!(t
        .acceptance_for("GT401", ["search", "ads"], before)
        .is_some());
    assert!(t
        .acceptance_for("GT401", ["search", "acme"], before)
        .is_none());
    assert!(t
        .acceptance_for("GT207", ["search", "ads"], before)
        .is_none());
    assert!(t
        .acceptance_for("GT401", ["search", "ads"], after)
        .is_none());
    assert_eq!(t.expired_acceptances(before).count(), 0);
    assert_eq!(t.expired_acceptances(after).count(), 1);
}

#[test]
fn acceptance_naming_no_tenant_is_a_warning() {
    let p = parse(
        "accept:\n  - rule: GT401\n    tenants: [ghost, search]\n    reason: x\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[ns("search")]);
    let d = t.diagnostics();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(!d[0].is_error());
    assert_eq!(d[0].code, gpu_trust_model::Code::UnknownTenant, "{}", d[0]);
    assert_eq!(d[0].location.line, 2);
    assert!(d[0].message.contains("`ghost`"));
}

#[test]
fn patch_window_and_replica_limit() {
    let p = parse(
        "host: {patchWindowDays: 14}\nsharing: {maxReplicas: 2}\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[]);
    assert_eq!(t.patch_window_days(), 14);
    assert_eq!(t.max_replicas(), 2);
    let t = Policy::default().resolve(&[]);
    assert_eq!(t.patch_window_days(), 30);
    assert_eq!(t.max_replicas(), 4);
}

#[test]
fn same_input_same_tenancy() {
    let mut shuffled = cluster();
    shuffled.reverse();
    shuffled.push(ns("forgotten"));
    let a = valid().resolve(&cluster());
    let b = valid().resolve(&shuffled);
    assert_eq!(a.tenants(), b.tenants());
}

/// Declared tenants that get no namespace of the input, and namespace names that look alike or have
/// characters no namespace can have, are warnings of the resolution.
#[test]
fn unmatched_tenants_and_confusable_namespaces_are_warned_about() {
    let p = parse(
        "tenants:\n  - name: a\n    namespaces: [team-a]\n  - name: b\n    namespaces: [team-b]\n",
        "p.yaml",
    )
    .unwrap();
    // `team-a` written with a Cyrillic `а` in the cluster: tenant a matches nothing.
    let t = p.resolve(&[ns("te\u{0430}m-a"), ns("team-b")]);
    let messages: Vec<String> = t.diagnostics().iter().map(ToString::to_string).collect();
    assert!(
        t.diagnostics().iter().all(|d| !d.is_error()),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(
            |m| m.starts_with(
                "p.yaml:2:11: warning[tenant-without-namespace]: tenant `a` (team-a) matches no namespace",
            )
        ),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.starts_with(
            "input: warning[invalid-namespace-name]: namespace `te\\u{430}m-a` has U+0430",
        )),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("look alike") && m.contains("`team-a`")),
        "{messages:?}"
    );
    // Without a cluster (`policy check`) nothing is missing.
    assert!(p.resolve(&[]).diagnostics().is_empty());
}

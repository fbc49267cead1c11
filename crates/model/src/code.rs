//! The stable code of every kind of diagnostic: one kebab-case identifier per kind, shown beside the
//! level (`error[invalid-yaml]`), carried in the JSON report (`skipped[].code`), SARIF and JUnit, and
//! accepted by `--silence` to hide a warning. Codes are stable: a kind of diagnostic keeps its code,
//! and a code is never reused for another kind. `docs/diagnostics.md` lists them all (generated from
//! this table by [`markdown`], and checked against it by a test).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The part of the pipeline a code belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Reading files and text (the source crate).
    Input,
    /// Kubernetes objects into the fleet model (the ingest crate).
    Cluster,
    /// The NVIDIA configurations a node's GPUs are set up with (device plugin, mig-parted).
    Node,
    /// The tenancy policy and its fit to the cluster's namespaces.
    Policy,
    /// Acceptances written as annotations on objects.
    Acceptance,
    /// Advisory data and vendor CSAF documents.
    Advisory,
    /// A live cluster read through its API server.
    Live,
    /// The plan file, `.gpu-trust.yaml` and other inputs of the command line.
    Command,
}

impl Stage {
    /// Every stage, in the order the documentation lists them.
    pub const ALL: [Stage; 8] = [
        Stage::Input,
        Stage::Cluster,
        Stage::Node,
        Stage::Policy,
        Stage::Acceptance,
        Stage::Advisory,
        Stage::Live,
        Stage::Command,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Stage::Input => "Reading input",
            Stage::Cluster => "Cluster objects",
            Stage::Node => "Node GPU configuration",
            Stage::Policy => "Tenancy policy",
            Stage::Acceptance => "Acceptances",
            Stage::Advisory => "Advisory data",
            Stage::Live => "Live cluster",
            Stage::Command => "Command inputs",
        }
    }
}

macro_rules! codes {
    ($( $variant:ident = $name:literal, $stage:ident, $meaning:literal; )*) => {
        /// The kind of a diagnostic. Its spelling ([`Code::as_str`]) is its stable identifier.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Code {
            $( #[doc = $meaning] $variant, )*
        }

        impl Code {
            /// Every code, in the order of the table (grouped by stage).
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The stable identifier (`invalid-yaml`).
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// The stage of the pipeline that reports it.
            pub fn stage(self) -> Stage {
                match self { $(Code::$variant => Stage::$stage,)* }
            }

            /// What a diagnostic of this kind means, as the documentation gives it.
            pub fn meaning(self) -> &'static str {
                match self { $(Code::$variant => $meaning,)* }
            }

            /// The code spelled `name`.
            pub fn parse(name: &str) -> Option<Code> {
                match name { $($name => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    UnreadableInput = "unreadable-input", Input,
        "A file, folder or standard input could not be read (missing, not permitted, a symbolic link that leads nowhere, standard input named twice).";
    InputLeftOut = "input-left-out", Input,
        "A walk of an input folder left something out: a hidden entry, a special file, a symbolic link out of the folder (without --follow-symlinks), a folder nested too deep, too many entries.";
    InputEncoding = "input-encoding", Input,
        "The text is not UTF-8 (UTF-32, UTF-16 that does not decode, bytes that are not UTF-8).";
    OverLimit = "over-limit", Input,
        "The input is over a bound of the reader: the size of the file, an object, a line or a scalar, the nesting depth, the number of aliases or what they expand to.";
    InvalidYaml = "invalid-yaml", Input,
        "The text is not valid YAML, or uses YAML in a way Kubernetes does not read (an event outside a document, a recursive alias, a merge key on something other than a mapping).";
    InvalidJson = "invalid-json", Input,
        "The text is not valid JSON.";
    DuplicateKey = "duplicate-key", Input,
        "A mapping or JSON object has the same key twice: which value the cluster would use cannot be known.";
    UnsupportedTag = "unsupported-tag", Input,
        "A YAML tag outside the core schema, or one that does not fit its value: Kubernetes reads YAML as JSON, which has no tags.";
    InvalidValue = "invalid-value", Input,
        "A value does not have the type its field requires, read as the API server reads it (a plain `on` or `4` in a string field, a string where a number belongs, an unknown key in a configuration file).";
    NotOneDocument = "not-one-document", Input,
        "A file that holds one document (a configuration file, a configuration embedded in a ConfigMap) is empty or holds several.";

    NotAnObject = "not-an-object", Cluster,
        "A document is not a Kubernetes object: no apiVersion or kind (with a hint when it looks like another tool's file), not a mapping, a list item whose kind no one names, list items that are not a sequence.";
    RefusedKind = "refused-kind", Cluster,
        "The API server would refuse the object: a kind in the wrong letter case, a version of a built-in kind that is not served, a kind in a group that does not have it, a misspelled kind of a known controller.";
    UnreadApiVersion = "unread-api-version", Cluster,
        "An older version of a DRA kind that ingest does not read: the claims it describes are not resolved.";
    UnrenderedInput = "unrendered-input", Cluster,
        "The input of a tool rather than what it renders (a Kustomization): audit what the tool renders.";
    InvalidQuantity = "invalid-quantity", Cluster,
        "A workload's resource quantity is not a Kubernetes quantity: the API server would reject it.";
    UnjudgedHostPath = "unjudged-host-path", Cluster,
        "A workload mounts a host path gpu-trust cannot judge (not absolute, or with `..`): what it mounts from the host is not known.";
    ConflictingDuplicate = "conflicting-duplicate", Cluster,
        "The same object is read twice with different contents (two files, a base and its patch): which one the cluster runs cannot be judged.";
    UnauditedManifest = "unaudited-manifest", Cluster,
        "An object written as text inside another (an Argo resource template) could not be read; the controller fills it in when it runs, so it is not audited. Nested manifests are not read either.";
    NotAPodTemplate = "not-a-pod-template", Cluster,
        "A value shaped like a pod template in a kind without a reader does not read as one; it is not read.";
    SearchStopped = "search-stopped", Cluster,
        "The search for pod templates in an object stopped at its bounds (depth, nodes visited, templates kept); what is deeper is not read.";
    ControllerUnknown = "controller-unknown", Cluster,
        "A kind gpu-trust has no controller for holds pod templates that request GPUs: they are audited as found by their shape, each counted as the `replicas` beside it, or one.";
    UnreadableGpuWorkload = "unreadable-gpu-workload", Cluster,
        "An object names a GPU resource outside any pod template gpu-trust can read, and no workload of the input is owned by it: what it runs would not be audited.";
    ReadThroughOwned = "read-through-owned", Cluster,
        "An object of a kind gpu-trust has no reader for names a GPU resource outside any pod template, and GPU workloads of the input are owned by it (their `ownerReferences` lead to it): what it runs is audited through them.";
    RuntimeMissing = "runtime-missing", Cluster,
        "A TrainJob's training runtime is not in the input: its trainer nodes are read from the TrainJob alone and tolerate every taint.";
    ServingRuntimeUnknown = "serving-runtime-unknown", Cluster,
        "The serving runtime of a KServe predictor written as `model` is not known: the image it runs, and so the server, is unknown.";
    PatchNotApplied = "patch-not-applied", Cluster,
        "An Argo template's podSpecPatch is not applied: what it changes (resources, security context) is not audited.";
    UnjudgedDevice = "unjudged-device", Cluster,
        "A workload requests a device gpu-trust cannot judge (a MIG compute-instance profile, an NVIDIA device KubeVirt serves that is no whole GPU): whom it shares the device with is not judged.";
    SeveralOperatorConfigs = "several-operator-configs", Cluster,
        "More than one ClusterPolicy or GPUCluster, or both kinds: the GPU Operator uses one, and the one taken is named.";
    MissingNamespace = "missing-namespace", Cluster,
        "Namespaced objects of a file name no metadata.namespace: they are audited in `default`, where `kubectl apply` and Helm may put them elsewhere.";
    InvalidAcceptanceAnnotation = "invalid-acceptance-annotation", Cluster,
        "An `accept.gpu-trust.io/<RULE>` annotation is malformed (its key, a value that is not a string, its end date): it is not applied.";
    ImplausibleGpuCount = "implausible-gpu-count", Node,
        "A node's labels or resources give more GPUs than any node holds: its GPUs are not judged.";

    InvalidDevicePluginConfig = "invalid-device-plugin-config", Node,
        "A device plugin config the plugin would refuse (an unknown version, strategy or key, sharing that contradicts itself): the sharing it sets is unresolved.";
    InvalidMigPartedConfig = "invalid-mig-parted-config", Node,
        "A mig-parted config the MIG manager would refuse (an unknown version, a config without entries, MIG devices that contradict MIG being enabled, a bad device-filter): the MIG layout it sets is unresolved.";
    UnknownConfigKey = "unknown-config-key", Node,
        "A key of the device plugin config that the plugin ignores.";
    LabelsDisagree = "labels-disagree", Node,
        "A node's labels (GPU Feature Discovery, mixed-strategy MIG counts, a platform's) say something other than the configuration in force; the configuration wins.";
    SharedWithoutReplicas = "shared-without-replicas", Node,
        "A node's labels say its GPUs are shared but not how many ways: taken as at least two.";
    MigConfigPending = "mig-config-pending", Node,
        "The node's MIG config is not in state `success`: the layout in force may differ from the config.";
    MigLayoutFromLabels = "mig-layout-from-labels", Node,
        "The mig-parted config is not in the input: the MIG layout of each GPU is inferred from the node's labels.";
    DeviceFilterUnmatched = "device-filter-unmatched", Node,
        "A MIG config has entries with a device-filter, which cannot be matched without a known GPU model.";
    UnknownPartition = "unknown-partition", Node,
        "A platform partitions a node's GPUs into a profile its GPU model does not have.";

    InvalidPolicy = "invalid-policy", Policy,
        "The tenancy policy breaks a rule of its format (the message says which): the audit does not run.";
    UnknownTenant = "unknown-tenant", Policy,
        "An acceptance names a tenant that is neither declared nor found in the namespaces given: it matches no finding.";
    TenantWithoutNamespace = "tenant-without-namespace", Policy,
        "Declared tenants get no namespace of the input: a typo would make their workloads another tenant's or unassigned.";
    NamespaceGlobTie = "namespace-glob-tie", Policy,
        "A namespace matches equally specific globs of several tenants: which tenant owns it is not known.";
    GlobSearchStopped = "glob-search-stopped", Policy,
        "The search for tenants' globs that tie over a namespace stopped at its bound; the audit still refuses a namespace they tie over.";
    InvalidNamespaceName = "invalid-namespace-name", Policy,
        "A namespace name has characters no namespace name can have: the API server refuses it, and a reader may take it for another.";
    LookalikeNamespaces = "lookalike-namespaces", Policy,
        "Namespace names that look alike (Unicode TS #39 skeletons): a reader, or a policy, can take one for another.";
    TenantClaimsPlatform = "tenant-claims-platform", Policy,
        "A tenant claims a namespace that is also a platform or infrastructure namespace: the tenant's claim comes first.";
    AcceptanceExpired = "acceptance-expired", Policy,
        "An acceptance of the policy has expired: it no longer suppresses findings (the audit reports it).";
    AcceptanceWithoutReason = "acceptance-without-reason", Policy,
        "An acceptance of the policy gives no reason: it accepts nothing (the audit reports it).";

    UnknownRule = "unknown-rule", Acceptance,
        "An acceptance names a rule gpu-trust does not have: it is not applied.";
    NotAcceptedByAnnotation = "not-accepted-by-annotation", Acceptance,
        "An annotation accepts a rule whose risk falls on the other tenants of the GPU nodes: only the tenancy policy can accept it.";

    InvalidAdvisoryData = "invalid-advisory-data", Advisory,
        "An advisory data file or a CSAF document breaks a rule of its format (the message says which).";
    AdvisoryDataReplaced = "advisory-data-replaced", Advisory,
        "An advisory data file replaces the built-in data or another file, or a CSAF document replaces versions: only one source of each is used.";
    CsafNotUsed = "csaf-not-used", Advisory,
        "Parts of a CSAF document are not used: products that are no component the audit knows, versions it does not understand, conditions written beside versions.";
    CsafDefinedTwice = "csaf-defined-twice", Advisory,
        "A CSAF document defines a product id twice, which CSAF forbids; both definitions read as the same component and versions, so the product is read once.";
    BulletinNotFetched = "bulletin-not-fetched", Advisory,
        "`gpu-trust advisories update` could not use an index or bulletin of the vendor's repository or mirror (unreachable, an error status, over the size or time bound, a digest other than the published one, or a document that does not read): the last good data stays in use.";

    ClusterUnread = "cluster-unread", Live,
        "A kind could not be listed from the cluster (or its CustomResourceDefinitions could not be read): what it holds is unknown.";
    CustomKindUnread = "custom-kind-unread", Live,
        "A custom kind's schema describes pod templates and a live audit does not list it: a GPU workload in it would not be judged.";

    InvalidPlanFile = "invalid-plan-file", Command,
        "The plan file breaks a rule of its format or does not fit the policy (the message says which).";
    InvalidConfigFile = "invalid-config-file", Command,
        "`.gpu-trust.yaml` breaks a rule of its format (the message says which).";
    UnsupportedEvidence = "unsupported-evidence", Command,
        "Probe evidence of a schema this version does not read.";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `docs/diagnostics.md`: every code with its meaning, grouped by stage.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Diagnostic codes\n\n\
         <!-- Generated from crates/model/src/code.rs; a test fails when this file differs. -->\n\n\
         Every diagnostic gpu-trust prints about its input has a stable code, shown beside its level \
         (`file:line:column: warning[missing-namespace]: ...`), in the JSON report \
         (`skipped[].code`), in SARIF (the notification's `descriptor.id`) and in JUnit. A code \
         names one kind of problem and is never reused for another.\n\n\
         A warning can be silenced by its code: `--silence CODE` (repeatable) or `silence:` in \
         `.gpu-trust.yaml`. Errors are never silenced: a document that cannot be used still makes \
         the run exit 2 (or is listed as skipped with `--skip-invalid`), whatever its code.\n",
    );
    for stage in Stage::ALL {
        out.push_str(&format!(
            "\n## {}\n\n| code | meaning |\n| --- | --- |\n",
            stage.title()
        ));
        for code in Code::ALL.iter().filter(|c| c.stage() == stage) {
            out.push_str(&format!("| `{}` | {} |\n", code.as_str(), code.meaning()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_kebab_case_unique_and_documented() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !name.starts_with('-')
                    && !name.ends_with('-'),
                "{name} is not kebab-case"
            );
            assert_eq!(Code::parse(name), Some(*code));
            assert!(code.meaning().ends_with('.'), "{name}: {}", code.meaning());
            // The serialised spelling is the documented one.
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(serde_json::Value::String(name.to_string()))
            );
        }
        for stage in Stage::ALL {
            assert!(
                Code::ALL.iter().any(|c| c.stage() == stage),
                "no code of {stage:?}"
            );
        }
    }
}

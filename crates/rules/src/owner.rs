//! The workload that owns a pod: what a finding about the pod is really about, named so that a rollout
//! (new pods, a new ReplicaSet) or the next run of a CronJob does not make it a different finding.
//!
//! Facts, each from the Kubernetes documentation:
//!
//! - A Deployment's ReplicaSet is named `<deployment>-<hash>`, and the Deployment controller labels the
//!   ReplicaSet's pod template, hence its pods, `pod-template-hash: <hash>`
//!   (<https://kubernetes.io/docs/concepts/workloads/controllers/deployment/>, "Pod-template-hash
//!   label" and "Creating a Deployment").
//! - That hash is the FNV-32a of the pod template written in decimal and encoded character by
//!   character in the alphabet Kubernetes uses for generated names, which has no vowels: at most 10
//!   characters of `bcdfghjklmnpqrstvwxz2456789` (kubernetes/kubernetes
//!   `pkg/controller/controller_utils.go`, `ComputeHash`; kubernetes/apimachinery
//!   `pkg/util/rand/rand.go`, `SafeEncodeString`). A pod without the label (a hand-written manifest)
//!   is still named by its Deployment when its ReplicaSet's name ends in such a hash.
//! - A CronJob's controller names each Job `<cronjob>-<scheduled time in minutes>` and reserves 11
//!   characters of the name for that suffix
//!   (<https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/>, "Writing a CronJob
//!   spec": the name must be at most 52 characters because the controller appends 11).
//! - A LeaderWorkerSet's controller creates a leader StatefulSet per set and a worker StatefulSet
//!   per group, and labels them and their pods `leaderworkerset.sigs.k8s.io/name: <set>`
//!   (kubernetes-sigs/lws `api/leaderworkerset/v1/leaderworkerset_types.go`, `SetNameLabelKey`:
//!   "record the leaderworkerset name that those resources (Pod/Service/StatefulSets) belong to").

use gpu_trust_model::fleet::{Fleet, Workload, WorkloadId, WorkloadKind};
use std::collections::{BTreeMap, BTreeSet};

/// The label a Deployment's controller puts on its ReplicaSets' pods.
const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// The alphabet of generated names and template hashes (kubernetes/apimachinery
/// `pkg/util/rand/rand.go`).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The lengths a template hash read from a ReplicaSet's name may have: at most 10 (a 32-bit number
/// in decimal); at least 6, since a shorter decimal is one hash in 40,000 while a short last part
/// of a name (`web-v2`) is common.
const HASH_LEN: std::ops::RangeInclusive<usize> = 6..=10;

/// The label a LeaderWorkerSet's controller puts on its StatefulSets' pods (with the set's name).
const LWS_NAME: &str = "leaderworkerset.sigs.k8s.io/name";

/// Characters a CronJob's controller reserves to name a Job: `-` and the scheduled time in minutes.
const CRONJOB_SUFFIX: usize = 11;

/// CronJobs of the input (namespace, name), to recognise their Jobs' pods; and the workload objects
/// (not pods) of the input by their key, to name the owner of a pod by its object.
pub struct Owners {
    cronjobs: BTreeSet<(String, String)>,
    objects: BTreeMap<String, WorkloadId>,
}

impl Owners {
    pub fn new(fleet: &Fleet) -> Owners {
        let mut owners = Owners {
            cronjobs: fleet
                .workloads
                .iter()
                .filter(|w| w.kind == WorkloadKind::CronJob)
                .map(|w| (w.namespace.clone(), w.object.name.clone()))
                .collect(),
            objects: BTreeMap::new(),
        };
        for (id, w) in fleet.workloads.iter().enumerate() {
            if w.kind != WorkloadKind::Pod {
                let key = owners.of(w);
                owners.objects.entry(key).or_insert(id);
            }
        }
        owners
    }

    /// The workload of the input whose object is the owner `key` (`Kind/namespace/name`), when
    /// the input holds it (the first, for a kind with several templates).
    pub fn object(&self, key: &str) -> Option<WorkloadId> {
        self.objects.get(key).copied()
    }

    /// `Kind/namespace/name` of the workload that owns `w`: a pod's Deployment (through its
    /// ReplicaSet), CronJob (through its Job), LeaderWorkerSet (through its StatefulSets),
    /// StatefulSet, DaemonSet or Job; a template itself.
    pub fn of(&self, w: &Workload) -> String {
        let ns = w.namespace.as_str();
        let (kind, name) = match (w.kind, w.owner.as_deref()) {
            (WorkloadKind::Pod, Some(owner)) => match owner.split_once('/') {
                Some((kind, name)) => (kind.to_string(), name.to_string()),
                None => ("Pod".to_string(), w.object.name.clone()),
            },
            (WorkloadKind::Pod, None) => ("Pod".to_string(), w.object.name.clone()),
            _ => (w.object.kind.clone(), w.object.name.clone()),
        };
        match kind.as_str() {
            "ReplicaSet" => match deployment_of(&name, w.labels.get(POD_TEMPLATE_HASH)) {
                Some(deployment) => format!("Deployment/{ns}/{deployment}"),
                None => format!("ReplicaSet/{ns}/{name}"),
            },
            "Job" => match self.cronjob_of(ns, &name) {
                Some(cronjob) => format!("CronJob/{ns}/{cronjob}"),
                None => format!("Job/{ns}/{name}"),
            },
            "StatefulSet" => match w.labels.get(LWS_NAME).filter(|n| !n.is_empty()) {
                Some(set) => format!("LeaderWorkerSet/{ns}/{set}"),
                None => format!("StatefulSet/{ns}/{name}"),
            },
            _ => format!("{kind}/{ns}/{name}"),
        }
    }

    /// The CronJob of the input that a Job of this name in `ns` was created by.
    fn cronjob_of<'j>(&self, ns: &str, job: &'j str) -> Option<&'j str> {
        let (base, digits) = job.rsplit_once('-')?;
        if digits.is_empty()
            || digits.len() >= CRONJOB_SUFFIX
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        self.cronjobs
            .contains(&(ns.to_string(), base.to_string()))
            .then_some(base)
    }
}

/// The Deployment of a ReplicaSet named `<deployment>-<hash>`: the hash is the pods'
/// `pod-template-hash` when they carry it, else a last part of the name that can only be a hash.
fn deployment_of<'n>(replica_set: &'n str, label: Option<&String>) -> Option<&'n str> {
    let (deployment, hash) = replica_set.rsplit_once('-')?;
    let is_hash = match label {
        Some(label) => !label.is_empty() && hash == label,
        None => HASH_LEN.contains(&hash.len()) && hash.bytes().all(|b| NAME_ALPHABET.contains(&b)),
    };
    (is_hash && !deployment.is_empty()).then_some(deployment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::{Location, ObjectRef};

    fn workload(
        kind: WorkloadKind,
        name: &str,
        owner: Option<&str>,
        hash: Option<&str>,
    ) -> Workload {
        let object = ObjectRef {
            kind: format!("{kind:?}"),
            namespace: Some("ns".into()),
            name: name.into(),
            location: Location::new("c.yaml", 1, 1),
        };
        let mut labels = std::collections::BTreeMap::new();
        if let Some(h) = hash {
            labels.insert(POD_TEMPLATE_HASH.to_string(), h.to_string());
        }
        Workload {
            object,
            namespace: "ns".into(),
            kind,
            role: None,
            replicas: 1,
            class: Default::default(),
            labels,
            annotations: Default::default(),
            scheduler_name: None,
            service_account: None,
            gpu: Default::default(),
            containers: Vec::new(),
            pod_security: Default::default(),
            inference: None,
            peak_memory_mib: None,
            placement: Default::default(),
            owner: owner.map(str::to_string),
        }
    }

    #[test]
    fn pods_are_named_by_their_controller() {
        let mut fleet = Fleet::default();
        fleet
            .workloads
            .push(workload(WorkloadKind::CronJob, "memory-soak", None, None));
        let owners = Owners::new(&fleet);
        let pod = |owner, hash| workload(WorkloadKind::Pod, "x-abcde", owner, hash);
        assert_eq!(
            owners.of(&pod(
                Some("ReplicaSet/llm-api-7cb557479"),
                Some("7cb557479")
            )),
            "Deployment/ns/llm-api"
        );
        // Without the label, a last part of the name that can only be a template hash.
        assert_eq!(
            owners.of(&pod(Some("ReplicaSet/tgi-deployment-7d9c6b5f4"), None)),
            "Deployment/ns/tgi-deployment"
        );
        // A ReplicaSet of its own (no hash label and no hash in its name, or a label that does not
        // end its name).
        assert_eq!(
            owners.of(&pod(Some("ReplicaSet/web"), None)),
            "ReplicaSet/ns/web"
        );
        assert_eq!(
            owners.of(&pod(Some("ReplicaSet/web-v2"), None)),
            "ReplicaSet/ns/web-v2"
        );
        assert_eq!(
            owners.of(&pod(Some("ReplicaSet/web-frontend"), None)),
            "ReplicaSet/ns/web-frontend"
        );
        assert_eq!(
            owners.of(&pod(Some("ReplicaSet/web-1"), Some("abc"))),
            "ReplicaSet/ns/web-1"
        );
        assert_eq!(
            owners.of(&pod(Some("Job/memory-soak-29361840"), None)),
            "CronJob/ns/memory-soak"
        );
        assert_eq!(
            owners.of(&pod(Some("Job/train-2024"), None)),
            "Job/ns/train-2024"
        );
        assert_eq!(
            owners.of(&pod(Some("StatefulSet/db"), None)),
            "StatefulSet/ns/db"
        );
        assert_eq!(owners.of(&pod(None, None)), "Pod/ns/x-abcde");
        // A LeaderWorkerSet's leader and worker StatefulSets are named after the set and its
        // groups; the label names the set for both.
        for sts in ["StatefulSet/vllm", "StatefulSet/vllm-0"] {
            let mut p = pod(Some(sts), None);
            p.labels.insert(LWS_NAME.to_string(), "vllm".to_string());
            assert_eq!(owners.of(&p), "LeaderWorkerSet/ns/vllm");
        }
        let template = workload(WorkloadKind::Deployment, "llm-api", None, None);
        assert_eq!(owners.of(&template), "Deployment/ns/llm-api");
    }
}

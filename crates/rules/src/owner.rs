//! The workload that owns a pod: what a finding about the pod is really about, named so that a rollout
//! (new pods, a new ReplicaSet) or the next run of a CronJob does not make it a different finding.
//!
//! Facts, each from the Kubernetes documentation:
//!
//! - A Deployment's ReplicaSet is named `<deployment>-<hash>`, and the Deployment controller labels the
//!   ReplicaSet's pod template, hence its pods, `pod-template-hash: <hash>`
//!   (<https://kubernetes.io/docs/concepts/workloads/controllers/deployment/>, "Pod-template-hash
//!   label" and "Creating a Deployment").
//! - A CronJob's controller names each Job `<cronjob>-<scheduled time in minutes>` and reserves 11
//!   characters of the name for that suffix
//!   (<https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/>, "Writing a CronJob
//!   spec": the name must be at most 52 characters because the controller appends 11).

use gpu_trust_model::fleet::{Fleet, Workload, WorkloadKind};
use std::collections::BTreeSet;

/// The label a Deployment's controller puts on its ReplicaSets' pods.
const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// Characters a CronJob's controller reserves to name a Job: `-` and the scheduled time in minutes.
const CRONJOB_SUFFIX: usize = 11;

/// CronJobs of the input (namespace, name), to recognise their Jobs' pods.
pub struct Owners {
    cronjobs: BTreeSet<(String, String)>,
}

impl Owners {
    pub fn new(fleet: &Fleet) -> Owners {
        Owners {
            cronjobs: fleet
                .workloads
                .iter()
                .filter(|w| w.kind == WorkloadKind::CronJob)
                .map(|w| (w.namespace.clone(), w.object.name.clone()))
                .collect(),
        }
    }

    /// `Kind/namespace/name` of the workload that owns `w`: a pod's Deployment (through its
    /// ReplicaSet), CronJob (through its Job), StatefulSet, DaemonSet or Job; a template itself.
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
            "ReplicaSet" => match w.labels.get(POD_TEMPLATE_HASH) {
                Some(hash) if !hash.is_empty() => match name.strip_suffix(hash.as_str()) {
                    Some(base) if base.len() > 1 && base.ends_with('-') => {
                        format!("Deployment/{ns}/{}", &base[..base.len() - 1])
                    }
                    _ => format!("ReplicaSet/{ns}/{name}"),
                },
                _ => format!("ReplicaSet/{ns}/{name}"),
            },
            "Job" => match self.cronjob_of(ns, &name) {
                Some(cronjob) => format!("CronJob/{ns}/{cronjob}"),
                None => format!("Job/{ns}/{name}"),
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
        // A ReplicaSet of its own (no hash label, or one that does not end its name).
        assert_eq!(
            owners.of(&pod(Some("ReplicaSet/web"), None)),
            "ReplicaSet/ns/web"
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
        let template = workload(WorkloadKind::Deployment, "llm-api", None, None);
        assert_eq!(owners.of(&template), "Deployment/ns/llm-api");
    }
}

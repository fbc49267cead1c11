//! Red Hat OpenShift: the GPU Operator is installed from OperatorHub (the certified bundle) with the
//! Node Feature Discovery Operator, and its facts are read through the ClusterPolicy and GPU Feature
//! Discovery like anywhere else. What differs is where the operator lives: OLM installs it into
//! `nvidia-gpu-operator`, not the Helm chart's `gpu-operator`, and the driver is built per RHCOS
//! kernel by the Driver Toolkit.
//!
//! Sources:
//! - NVIDIA/gpu-operator `bundle/manifests/gpu-operator-certified.clusterserviceversion.yaml`:
//!   `operatorframework.io/suggested-namespace: nvidia-gpu-operator`, the namespace OLM installs into.
//! - openshift/machine-config-operator: nodes carry `node.openshift.io/os_id` (`rhcos`, `rhel`).
//! - Node Feature Discovery: `feature.node.kubernetes.io/pci-10de.present` (see [`super::gfd`]).

use super::{gfd, LabelAdapter, LabelFacts};
use gpu_trust_model::fleet::Platform;
use std::collections::BTreeMap;

pub(crate) const OS_ID: &str = "node.openshift.io/os_id";
/// The namespace OLM installs the certified GPU Operator into.
pub(crate) const OPERATOR_NAMESPACE: &str = "nvidia-gpu-operator";

pub(crate) struct OpenShift;

impl LabelAdapter for OpenShift {
    fn read(&self, labels: &BTreeMap<String, String>) -> Option<LabelFacts> {
        labels.get(OS_ID)?;
        let mut f = LabelFacts::new(Platform::OpenShift);
        f.has_gpu = gfd::says_gpu(labels);
        f.has_gpu.then_some(f)
    }

    /// OpenShift names no GPU of its own: GPU Feature Discovery's product label does.
    #[cfg(test)]
    fn mapped(&self) -> Vec<(BTreeMap<String, String>, &'static str)> {
        Vec::new()
    }
}

/// Whether the labels of any node say the cluster is OpenShift.
pub(crate) fn is_openshift(labels: &BTreeMap<String, String>) -> bool {
    labels.contains_key(OS_ID)
}

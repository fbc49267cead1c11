//! The kinds of the controllers table, the objects embedded in them as text, any other kind
//! searched for pod templates by their shape, and the joins done once every object is read
//! (TrainJobs with their runtimes, KServe predictors with their serving runtimes, KubeVirt VMIs
//! with their VMs).

use super::Collector;
use crate::controllers::{Controller, Reads};
use crate::discover::{self, At, Embedded};
use crate::workload_placement::WorkloadDraft;
use crate::{kserve, kubevirt};
use gpu_trust_model::fleet::{WorkloadClass, WorkloadKind};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use gpu_trust_source::{read_stream, Entry, Format, ReadOptions};
use std::collections::BTreeMap;

/// How many owners up from a workload `read_through` follows (a Pod, its ReplicaSet, their
/// Deployment, the operator's resource, and a few more).
const MAX_OWNER_DEPTH: usize = 8;

impl Collector {
    /// An object of the controllers table.
    pub(super) fn controller(
        &mut self,
        c: &'static Controller,
        root: At<'_, '_>,
        r: ObjectRef,
    ) -> Result<(), Diagnostic> {
        let loc = r.location.clone();
        match c.reads {
            Reads::Holder if c.kind.ends_with("TrainingRuntime") => {
                let namespace = (c.kind == "TrainingRuntime")
                    .then(|| r.namespace.clone())
                    .flatten();
                let runtime = discover::read_runtime(c.kind, namespace, &r.name, root, &loc)?;
                self.runtimes.push(runtime);
            }
            Reads::Holder if c.group == kserve::GROUP && c.kind.ends_with("ServingRuntime") => {
                let namespace = (c.kind == "ServingRuntime")
                    .then(|| r.namespace.clone())
                    .flatten();
                let runtime = kserve::read_runtime(namespace, &r.name, root, &loc)?;
                self.serving_runtimes.push(runtime);
            }
            Reads::Holder if c.group == kubevirt::GROUP && c.kind == "KubeVirt" => {
                for (name, why) in kubevirt::unjudged_devices(root, &loc)? {
                    self.unjudged_devices.push((name, why, loc.clone()));
                }
            }
            Reads::Holder => {}
            Reads::KubeVirt | Reads::VllmRuntime => {
                let found = if matches!(c.reads, Reads::KubeVirt) {
                    kubevirt::read(c.kind, root, &loc)?
                } else {
                    discover::read_vllm_runtime(root, &loc, &r.name)?
                };
                let run_by = (c.kind == "VirtualMachineInstance")
                    .then(|| kubevirt::owner_vm(root))
                    .flatten();
                let first = self.workloads.len();
                for f in found {
                    self.template(
                        r.clone(),
                        c.workload,
                        f.role,
                        f.replicas,
                        &f.template,
                        c.class,
                        false,
                    );
                }
                for d in &mut self.workloads[first..] {
                    d.run_by = run_by.clone();
                }
            }
            Reads::TrainJob => {
                let job = discover::read_train_job(r, root)?;
                self.train_jobs.push(job);
            }
            Reads::Groups(_) => {
                let read = discover::read_groups(c, root, &loc)?;
                // A KServe predictor written as `model` runs the image of a serving runtime: its
                // pods are built once the runtimes are read.
                let model = if c.group == kserve::GROUP && c.kind == "InferenceService" {
                    kserve::read_model(root, &loc)?
                } else {
                    None
                };
                let multinode = root.path("spec.predictor.workerSpec").is_some();
                for f in read.found {
                    if let Some(model) = model
                        .as_ref()
                        .filter(|_| f.role.as_deref() == Some("predictor"))
                    {
                        self.predictors.push(kserve::Predictor {
                            object: r.clone(),
                            kind: c.workload,
                            class: c.class,
                            model: model.clone(),
                            multinode,
                            found: f,
                        });
                        continue;
                    }
                    self.template(
                        r.clone(),
                        c.workload,
                        f.role,
                        f.replicas,
                        &f.template,
                        c.class,
                        f.unknown_constraints,
                    );
                }
                for w in read.warnings {
                    self.report(w);
                }
                self.embedded(read.embedded, &r);
            }
        }
        Ok(())
    }

    /// Objects written as text inside another (Argo resource templates), read as objects of its
    /// namespace. Their own embedded objects are not read further.
    fn embedded(&mut self, items: Vec<Embedded>, owner: &ObjectRef) {
        if items.is_empty() {
            return;
        }
        if self.embedding.is_some() {
            self.report(Diagnostic::warning(
                Code::UnauditedManifest,
                owner.location.clone(),
                format!("{owner}: resource manifests inside a resource manifest are not read"),
            ));
            return;
        }
        let namespace = owner
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let file = owner.location.file.clone();
        let options = ReadOptions {
            limits: self.limits,
            split_key: None,
            format: Format::Yaml,
        };
        self.embedding = Some((owner.clone(), namespace));
        for e in items {
            // Blank lines in front keep the file's line numbers in what is read.
            let mut text =
                "\n".repeat(usize::try_from(e.first_line.saturating_sub(1)).unwrap_or(0));
            text.push_str(&e.text);
            read_stream(&text, &file, &options, &mut |entry| match entry {
                Entry::Object(o) | Entry::Container { object: o, .. } => self.object_any(&o),
                Entry::Invalid { diagnostic, .. } => self.report(diagnostic),
            });
        }
        self.embedding = None;
    }

    /// Any other kind: pod templates found by their shape are audited; a GPU resource named
    /// outside any template is an error, since what the object runs cannot be read, unless the
    /// input holds the GPU workloads it owns (`read_through`).
    pub(super) fn generic(&mut self, root: At<'_, '_>, r: ObjectRef) -> Result<(), Diagnostic> {
        let loc = r.location.clone();
        let (shaped, truncated) = discover::discover(root);
        let mut gpu_paths = Vec::new();
        for s in &shaped {
            let found = match discover::read_shaped(s, &loc) {
                Ok(f) => f,
                Err(e) => {
                    self.report(Diagnostic::warning(
                        Code::NotAPodTemplate,
                        e.location,
                        format!(
                            "{r}: {} is shaped like a pod template but is not one ({}); not read",
                            s.path, e.message
                        ),
                    ));
                    continue;
                }
            };
            let before = self.workloads.len();
            self.template(
                r.clone(),
                WorkloadKind::Custom,
                found.role,
                found.replicas,
                &found.template,
                None,
                false,
            );
            if self.workloads[before..]
                .iter()
                .any(|w| w.workload.requests_gpu())
            {
                gpu_paths.push(found.path);
            }
        }
        if truncated {
            self.report(Diagnostic::warning(Code::SearchStopped,
                loc.clone(),
                format!("{r}: the search for pod templates stopped at its bounds; what is deeper is not read"),
            ));
        }
        if !gpu_paths.is_empty() {
            self.report(Diagnostic::warning(Code::ControllerUnknown,
                loc,
                format!(
                    "{r}: a kind gpu-trust has no controller for; the pod templates found by their shape at {} request GPUs and are audited, each counted as the `replicas` beside it, or one",
                    gpu_paths.join(", ")
                ),
            ));
        } else if shaped.is_empty() {
            if let Some((path, pos)) = discover::gpu_mention(root) {
                let at = match pos {
                    Some(p) => Location::new(loc.file.clone(), p.line, p.column),
                    None => loc,
                };
                let error = Diagnostic::error(Code::UnreadableGpuWorkload,
                    at,
                    format!(
                        "{r} names a GPU resource at {path} but holds no pod template gpu-trust can read, and no workload of the input is owned by it: what it runs would not be audited"
                    ),
                );
                // Inside an embedded manifest the error is the caller's (made a warning there).
                if self.embedding.is_some() {
                    return Err(error);
                }
                self.unreadable.push((r, error));
            }
        }
        Ok(())
    }

    /// VirtualMachineInstances read through their VirtualMachine: dropped where the input holds
    /// that VM, meant to run, with at least the VMI's GPUs (the VM's workload stands for it); read
    /// as they are otherwise.
    pub(super) fn vm_instances(&mut self) {
        let stands_for = |vm: &WorkloadDraft, vmi: &WorkloadDraft| {
            let (vm, vmi) = (&vm.workload, &vmi.workload);
            vm.object.kind == "VirtualMachine"
                && vm.namespace == vmi.namespace
                && vmi.replicas > 0
                && vm.replicas > 0
                && vmi
                    .gpu
                    .resources
                    .iter()
                    .all(|(name, n)| vm.gpu.resources.get(name).is_some_and(|m| m >= n))
        };
        let drop: Vec<bool> = self
            .workloads
            .iter()
            .map(|vmi| {
                vmi.run_by.as_ref().is_some_and(|name| {
                    self.workloads
                        .iter()
                        .any(|vm| vm.workload.object.name == *name && stands_for(vm, vmi))
                })
            })
            .collect();
        let mut drop = drop.into_iter();
        self.workloads.retain(|_| !drop.next().unwrap_or(false));
    }

    /// Objects of a kind with no reader that name a GPU resource outside any pod template (an
    /// operator's custom resource, such as NVIDIA NIM Operator's NIMService, whose Deployment the
    /// operator creates with the NIMService as its controller: NVIDIA/k8s-nim-operator
    /// `internal/controller/platform/standalone/nimservice.go`, `SetControllerReference`): what
    /// they run is read through the GPU workloads of the input whose `ownerReferences` lead to
    /// them, and each is an error only when the input holds none.
    pub(super) fn read_through(&mut self) {
        let pending = std::mem::take(&mut self.unreadable);
        if pending.is_empty() {
            return;
        }
        // (namespace, kind, name) of an object: its owners' kinds and names.
        type Key<'k> = (&'k str, &'k str, &'k str);
        let mut parents: BTreeMap<Key<'_>, Vec<(&str, &str)>> = BTreeMap::new();
        for ((ns, kind, name), (owner_kind, owner_name)) in &self.owners {
            parents
                .entry((ns.as_str(), kind.as_str(), name.as_str()))
                .or_default()
                .push((owner_kind.as_str(), owner_name.as_str()));
        }
        // Every owner a GPU workload leads to (a bounded walk up its owners), with the workload.
        let mut reached: BTreeMap<Key<'_>, &gpu_trust_model::ObjectRef> = BTreeMap::new();
        for d in self.workloads.iter().filter(|d| d.workload.requests_gpu()) {
            let w = &d.workload;
            let mut frontier = vec![(w.object.kind.as_str(), w.object.name.as_str())];
            for _ in 0..MAX_OWNER_DEPTH {
                let mut next = Vec::new();
                for (kind, name) in frontier {
                    for &(ok, on) in parents
                        .get(&(w.namespace.as_str(), kind, name))
                        .into_iter()
                        .flatten()
                    {
                        if reached
                            .insert((w.namespace.as_str(), ok, on), &w.object)
                            .is_none()
                        {
                            next.push((ok, on));
                        }
                    }
                }
                frontier = next;
            }
        }
        let mut diagnostics = Vec::new();
        for (r, error) in pending {
            let key = (
                r.namespace.as_deref().unwrap_or_default(),
                r.kind.as_str(),
                r.name.as_str(),
            );
            match reached.get(&key) {
                Some(owned) => diagnostics.push(Diagnostic::warning(
                    Code::ReadThroughOwned,
                    r.location.clone(),
                    format!(
                        "{r}: a kind gpu-trust has no reader for names a GPU resource outside any pod template; what it runs is audited through {owned}, which it owns"
                    ),
                )),
                None => diagnostics.push(error),
            }
        }
        self.diagnostics.extend(diagnostics);
    }

    /// TrainJobs, with the runtimes they reference: the runtime's jobs with the TrainJob's trainer
    /// settings and patches applied; without the runtime, the trainer nodes alone, permitted
    /// wherever what they request is offered.
    pub(super) fn train_jobs(&mut self) {
        let jobs = std::mem::take(&mut self.train_jobs);
        for job in jobs {
            let ns = job.object.namespace.clone();
            let runtime = self.runtimes.iter().find(|r| {
                r.kind == job.runtime_kind
                    && r.name == job.runtime_name
                    && (r.kind == "ClusterTrainingRuntime" || r.namespace == ns)
            });
            if runtime.is_none() {
                self.diagnostics.push(Diagnostic::warning(Code::RuntimeMissing,
                    job.object.location.clone(),
                    format!(
                        "{}: its {} {} is not in the input; its trainer nodes are read from the TrainJob alone and taken to tolerate every taint (the runtime's scheduling constraints are unknown)",
                        job.object, job.runtime_kind, job.runtime_name
                    ),
                ));
            }
            let found = discover::resolve_train_job(&job, runtime);
            for f in found {
                self.template(
                    job.object.clone(),
                    WorkloadKind::Custom,
                    f.role,
                    f.replicas,
                    &f.template,
                    Some(WorkloadClass::Training),
                    f.unknown_constraints,
                );
            }
        }
    }

    /// KServe predictors written as `model`, with the serving runtime KServe gives each; without
    /// it, the predictor as written (what its server runs is then unknown, and said so).
    pub(super) fn predictors(&mut self) {
        let predictors = std::mem::take(&mut self.predictors);
        for p in predictors {
            let found = match kserve::runtime_for(&p, &self.serving_runtimes)
                .and_then(|runtime| kserve::apply(runtime, &p.found))
            {
                Ok(found) => found,
                Err(why) => {
                    self.diagnostics.push(Diagnostic::warning(Code::ServingRuntimeUnknown,
                        p.object.location.clone(),
                        format!(
                            "{}: {why}; the image of its predictor, and so the server it runs, is unknown",
                            p.object
                        ),
                    ));
                    p.found
                }
            };
            self.template(
                p.object,
                p.kind,
                found.role,
                found.replicas,
                &found.template,
                p.class,
                found.unknown_constraints,
            );
        }
    }
}

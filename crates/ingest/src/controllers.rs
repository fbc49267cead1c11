//! The workload controllers ingest reads: one row per custom resource (or built-in kind without a
//! typed reader) that carries pod templates, saying where its templates are, how many pods each
//! makes, what the pods are called in it (its roles) and, when the controller says so, whether it
//! trains or serves.
//!
//! A new controller is a row here, with the source of its paths, its resource name and its scope
//! (the live reader lists it and the read-only role grants it from the row, through
//! [`crate::api`]), and a fixture under `crates/ingest/tests/fixtures/controllers/` holding an
//! object of the kind (a test below fails until one does; the fixture's snapshot is generated).
//! `deploy/rbac.yaml` is then regenerated with `gpu-trust audit --print-rbac` (the CLI's live tests
//! fail until it matches). Kinds without a row that are not listed as inert are still read:
//! [`crate::discover`] finds pod templates in them by their shape.
//!
//! Paths are dotted field names from the object's root; `*` steps into every item of a sequence or
//! every value of a mapping (the mapping's key is then the role, as Kubeflow's replica types are).
//! Counts are relative to the item a group selects, or to the object's root when they start with
//! `/`. A row matches every version of its group: custom resources change versions per release
//! and install, and the paths below are the same in every version listed in the sources.

use gpu_trust_model::fleet::{WorkloadClass, WorkloadKind};

/// One controller.
#[derive(Debug)]
pub(crate) struct Controller {
    pub group: &'static str,
    pub kind: &'static str,
    /// The resource name in API paths and RBAC rules (`spec.names.plural` of its
    /// CustomResourceDefinition; the Kubernetes API reference for a built-in kind).
    pub resource: &'static str,
    /// Whether its objects live in a namespace (`spec.scope` of its CustomResourceDefinition).
    pub namespaced: bool,
    /// How the workloads it makes are recorded (`Custom` unless the model names the kind).
    pub workload: WorkloadKind,
    /// What its pods do, when the controller says so; `None`: judged from each pod as for a Pod.
    pub class: Option<WorkloadClass>,
    pub reads: Reads,
}

/// How a controller's pods are found.
#[derive(Debug)]
pub(crate) enum Reads {
    /// Groups of pods at fixed paths.
    Groups(&'static [Group]),
    /// Kubeflow Trainer's TrainJob: the pods are those of the training runtime it references, with
    /// the TrainJob's trainer settings and patches applied (resolved once every object is read).
    TrainJob,
    /// vLLM production-stack's VLLMRuntime: one Deployment of a vLLM server built from the
    /// runtime's fields, not from a pod template.
    VllmRuntime,
    /// KubeVirt's VirtualMachine and VirtualMachineInstance: the virt-launcher pod of a VM, built
    /// from its devices and scheduling fields (`kubevirt.rs`).
    KubeVirt,
    /// A template other objects reference, which runs nothing by itself (Kubeflow Trainer's
    /// training runtimes, KServe serving runtimes, Argo cluster workflow templates, PodTemplate,
    /// ControllerRevision): not a workload. Training runtimes are kept for the TrainJobs that use
    /// them.
    Holder,
}

/// One group of identical pods.
#[derive(Debug)]
pub(crate) struct Group {
    /// The items of the group (one template each), from the root.
    pub at: &'static str,
    /// The template, relative to an item (`""`: the item itself).
    pub template: &'static str,
    pub shape: Shape,
    pub role: Role,
    /// Pods per item: the product of these counts (none: one pod).
    pub count: &'static [Count],
    /// A scheduler name for the whole object that templates without one inherit.
    pub scheduler: Option<&'static str>,
}

/// What the template is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// `{metadata, spec: PodSpec}`.
    PodTemplate,
    /// A batch/v1 `JobTemplateSpec`: its pod template is `spec.template` and each Job runs
    /// `spec.parallelism` pods (default 1).
    JobTemplate,
    /// Pod spec fields written inline, with `labels` and `annotations` beside them, plus containers
    /// given one per field (KServe: `model`, `sklearn`... each a container without a name).
    InlinePodSpec { containers: &'static [&'static str] },
    /// An Argo Workflows template: a pod for `container`, `script` or `containerSet`, the pod-level
    /// fields of the workflow under `inherit` merged in, and `resource.manifest` objects read as
    /// objects of the workflow's namespace.
    Argo { inherit: &'static str },
}

/// The name of the pods of one item within the object.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role {
    /// The object has one kind of pod: no role.
    None,
    Fixed(&'static str),
    /// The key of the mapping entry the `*` of `at` stepped into.
    Key,
    /// A string field of the item; `task-<index>` when it is absent.
    Field(&'static str),
}

/// A factor of the pod count.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Count {
    /// An integer field and its default.
    Field(&'static str, i64),
    /// An integer field and its default, less one when the field `when` exists (LeaderWorkerSet:
    /// `size` counts the leader, which has its own template when `leaderTemplate` is set).
    LessOne {
        field: &'static str,
        default: i64,
        when: Option<&'static str>,
    },
}

const fn kubeflow_v1(
    kind: &'static str,
    resource: &'static str,
    workload: WorkloadKind,
    groups: &'static [Group],
) -> Controller {
    Controller {
        group: "kubeflow.org",
        kind,
        resource,
        namespaced: true,
        workload,
        class: Some(WorkloadClass::Training),
        reads: Reads::Groups(groups),
    }
}

/// A Kubeflow training-operator replica map: `replicas` defaults to 1 (`ReplicaSpec` in
/// kubeflow/training-operator `pkg/apis/kubeflow.org/v1/common_types.go`).
const fn replica_specs(at: &'static str) -> Group {
    Group {
        at,
        template: "template",
        shape: Shape::PodTemplate,
        role: Role::Key,
        count: &[Count::Field("replicas", 1)],
        scheduler: None,
    }
}

/// A KubeRay `RayClusterSpec` under `at` (ray-project/kuberay
/// `ray-operator/apis/ray/v1/raycluster_types.go`): one head pod from `headGroupSpec.template`;
/// per worker group, `replicas` (default 0) times `numOfHosts` (default 1) pods from its
/// `template`, named by `groupName`.
macro_rules! ray_cluster {
    ($head:literal, $workers:literal) => {
        [
            Group {
                at: $head,
                template: "template",
                shape: Shape::PodTemplate,
                role: Role::Fixed("head"),
                count: &[],
                scheduler: None,
            },
            Group {
                at: $workers,
                template: "template",
                shape: Shape::PodTemplate,
                role: Role::Field("groupName"),
                count: &[Count::Field("replicas", 0), Count::Field("numOfHosts", 1)],
                scheduler: None,
            },
        ]
    };
}

/// KServe component fields that each describe the serving container of a predictor
/// (kserve/kserve `pkg/apis/serving/v1beta1/predictor.go`, `PredictorSpec`: one framework spec, each
/// an inline `corev1.Container`), and of an explainer (`explainer.go`).
const KSERVE_PREDICTORS: &[&str] = &[
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
    "model",
];
const KSERVE_EXPLAINERS: &[&str] = &["art", "alibi", "aix"];

/// The controllers table. Resource names and scopes: `spec.names.plural` and `spec.scope` of each
/// project's CustomResourceDefinition (kubeflow/training-operator `manifests/base/crds/`,
/// kubeflow/trainer `manifests/base/crds/`, kubernetes-sigs/jobset `config/components/crd/bases/`,
/// volcano-sh/volcano `config/crd/volcano/bases/`, kubernetes-sigs/lws `config/crd/bases/`,
/// ray-project/kuberay `ray-operator/config/crd/bases/`, kserve/kserve `config/crd/full/`,
/// knative/serving `config/core/300-resources/`, argoproj/argo-workflows
/// `manifests/base/crds/minimal/`, vllm-project/production-stack `operator/config/crd/bases/`,
/// kubernetes-sigs/kueue `config/components/crd/bases/`, kubevirt/kubevirt
/// `pkg/virt-operator/resource/generate/components/crds.go`); the Kubernetes API reference for
/// the built-in kinds (https://kubernetes.io/docs/reference/kubernetes-api/).
pub(crate) static CONTROLLERS: &[Controller] = &[
    // Kubeflow training-operator v1 jobs: a map of replica types to `ReplicaSpec`
    // (kubeflow/training-operator `pkg/apis/kubeflow.org/v1/*_types.go`: `pytorchReplicaSpecs`,
    // `tfReplicaSpecs`, `mpiReplicaSpecs`, `paddleReplicaSpecs`, `jaxReplicaSpecs`,
    // `xgbReplicaSpecs`, `mxReplicaSpecs`; MPIJob `v2beta1` in kubeflow/mpi-operator keeps
    // `mpiReplicaSpecs`).
    kubeflow_v1(
        "PyTorchJob",
        "pytorchjobs",
        WorkloadKind::PyTorchJob,
        &[replica_specs("spec.pytorchReplicaSpecs.*")],
    ),
    kubeflow_v1(
        "TFJob",
        "tfjobs",
        WorkloadKind::TFJob,
        &[replica_specs("spec.tfReplicaSpecs.*")],
    ),
    kubeflow_v1(
        "MPIJob",
        "mpijobs",
        WorkloadKind::MPIJob,
        &[replica_specs("spec.mpiReplicaSpecs.*")],
    ),
    kubeflow_v1(
        "PaddleJob",
        "paddlejobs",
        WorkloadKind::Custom,
        &[replica_specs("spec.paddleReplicaSpecs.*")],
    ),
    kubeflow_v1(
        "JAXJob",
        "jaxjobs",
        WorkloadKind::Custom,
        &[replica_specs("spec.jaxReplicaSpecs.*")],
    ),
    kubeflow_v1(
        "XGBoostJob",
        "xgboostjobs",
        WorkloadKind::Custom,
        &[replica_specs("spec.xgbReplicaSpecs.*")],
    ),
    kubeflow_v1(
        "MXJob",
        "mxjobs",
        WorkloadKind::Custom,
        &[replica_specs("spec.mxReplicaSpecs.*")],
    ),
    // JobSet: `spec.replicatedJobs[]`, each `replicas` (default 1) Jobs of a `JobTemplateSpec`
    // (kubernetes-sigs/jobset `api/jobset/v1alpha2/jobset_types.go`, `ReplicatedJob`).
    Controller {
        group: "jobset.x-k8s.io",
        kind: "JobSet",
        resource: "jobsets",
        namespaced: true,
        workload: WorkloadKind::JobSet,
        class: Some(WorkloadClass::Training),
        reads: Reads::Groups(&[Group {
            at: "spec.replicatedJobs.*",
            template: "template",
            shape: Shape::JobTemplate,
            role: Role::Field("name"),
            count: &[Count::Field("replicas", 1)],
            scheduler: None,
        }]),
    },
    // Volcano Job: gang-scheduled `spec.tasks[]`, each `replicas` pods of `template`; the job's
    // `schedulerName` applies to its pods (volcano-sh/apis `pkg/apis/batch/v1alpha1/job.go`,
    // `JobSpec.SchedulerName`, `TaskSpec`). A JobFlow's JobTemplate (`flow.volcano.sh`,
    // volcano-sh/apis `pkg/apis/flow/v1alpha1/jobtemplate_types.go`) holds a Job spec and runs
    // when a JobFlow in its namespace reaches it.
    Controller {
        group: "batch.volcano.sh",
        kind: "Job",
        resource: "jobs",
        namespaced: true,
        workload: WorkloadKind::VolcanoJob,
        class: Some(WorkloadClass::Training),
        reads: Reads::Groups(&VOLCANO_TASKS),
    },
    Controller {
        group: "flow.volcano.sh",
        kind: "JobTemplate",
        resource: "jobtemplates",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Training),
        reads: Reads::Groups(&VOLCANO_TASKS),
    },
    // LeaderWorkerSet: `spec.replicas` groups (default 1) of `leaderWorkerTemplate.size` pods
    // (default 1, the leader included); the leader uses `leaderTemplate`, or `workerTemplate` when
    // it is absent (kubernetes-sigs/lws `api/leaderworkerset/v1/leaderworkerset_types.go`).
    Controller {
        group: "leaderworkerset.x-k8s.io",
        kind: "LeaderWorkerSet",
        resource: "leaderworkersets",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&[
            Group {
                at: "spec.leaderWorkerTemplate",
                template: "leaderTemplate",
                shape: Shape::PodTemplate,
                role: Role::Fixed("leader"),
                count: &[Count::Field("/spec.replicas", 1)],
                scheduler: None,
            },
            Group {
                at: "spec.leaderWorkerTemplate",
                template: "workerTemplate",
                shape: Shape::PodTemplate,
                role: Role::Fixed("worker"),
                count: &[
                    Count::Field("/spec.replicas", 1),
                    Count::LessOne {
                        field: "size",
                        default: 1,
                        when: Some("leaderTemplate"),
                    },
                ],
                scheduler: None,
            },
        ]),
    },
    // KubeRay: RayCluster; RayJob (`spec.rayClusterSpec`, plus the `spec.submitterPodTemplate`
    // pod that runs `ray job submit`, `rayjob_types.go`); RayService (`spec.rayClusterConfig`,
    // `rayservice_types.go`), all in ray-project/kuberay `ray-operator/apis/ray/v1/`.
    Controller {
        group: "ray.io",
        kind: "RayCluster",
        resource: "rayclusters",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&ray_cluster!(
            "spec.headGroupSpec",
            "spec.workerGroupSpecs.*"
        )),
    },
    Controller {
        group: "ray.io",
        kind: "RayJob",
        resource: "rayjobs",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Training),
        reads: Reads::Groups(&RAY_JOB),
    },
    Controller {
        group: "ray.io",
        kind: "RayService",
        resource: "rayservices",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Inference),
        reads: Reads::Groups(&ray_cluster!(
            "spec.rayClusterConfig.headGroupSpec",
            "spec.rayClusterConfig.workerGroupSpecs.*"
        )),
    },
    // Kubeflow Trainer v2 (kubeflow/trainer `pkg/apis/trainer/v1alpha1/trainjob_types.go` and
    // `trainingruntime_types.go`).
    Controller {
        group: "trainer.kubeflow.org",
        kind: "TrainJob",
        resource: "trainjobs",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Training),
        reads: Reads::TrainJob,
    },
    Controller {
        group: "trainer.kubeflow.org",
        kind: "TrainingRuntime",
        resource: "trainingruntimes",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Training),
        reads: Reads::Holder,
    },
    Controller {
        group: "trainer.kubeflow.org",
        kind: "ClusterTrainingRuntime",
        resource: "clustertrainingruntimes",
        namespaced: false,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Training),
        reads: Reads::Holder,
    },
    // KServe InferenceService: predictor, transformer and explainer are each a pod spec written
    // inline with a `ComponentExtensionSpec` (`minReplicas`, default 1; `labels`, `annotations`)
    // beside it; the predictor's `workerSpec` (multi-node) is another inline pod spec whose
    // `pipelineParallelSize` counts the nodes of one replica, the predictor's head included
    // (kserve/kserve `pkg/apis/serving/v1beta1/predictor.go`, `component.go`, `transformer.go`,
    // `explainer.go`; the multi-node runtime's head waits for `PIPELINE_PARALLEL_SIZE` Ray nodes).
    Controller {
        group: "serving.kserve.io",
        kind: "InferenceService",
        resource: "inferenceservices",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Inference),
        reads: Reads::Groups(&[
            Group {
                at: "spec.predictor",
                template: "",
                shape: Shape::InlinePodSpec {
                    containers: KSERVE_PREDICTORS,
                },
                role: Role::Fixed("predictor"),
                count: &[Count::Field("minReplicas", 1)],
                scheduler: None,
            },
            Group {
                at: "spec.predictor.workerSpec",
                template: "",
                shape: Shape::InlinePodSpec { containers: &[] },
                role: Role::Fixed("worker"),
                count: &[
                    Count::Field("/spec.predictor.minReplicas", 1),
                    Count::LessOne {
                        field: "pipelineParallelSize",
                        default: 1,
                        when: None,
                    },
                ],
                scheduler: None,
            },
            Group {
                at: "spec.transformer",
                template: "",
                shape: Shape::InlinePodSpec { containers: &[] },
                role: Role::Fixed("transformer"),
                count: &[Count::Field("minReplicas", 1)],
                scheduler: None,
            },
            Group {
                at: "spec.explainer",
                template: "",
                shape: Shape::InlinePodSpec {
                    containers: KSERVE_EXPLAINERS,
                },
                role: Role::Fixed("explainer"),
                count: &[Count::Field("minReplicas", 1)],
                scheduler: None,
            },
        ]),
    },
    // KServe serving runtimes: containers an InferenceService's model spec runs in
    // (`pkg/apis/serving/v1alpha1/servingruntime_types.go`).
    Controller {
        group: "serving.kserve.io",
        kind: "ServingRuntime",
        resource: "servingruntimes",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Inference),
        reads: Reads::Holder,
    },
    Controller {
        group: "serving.kserve.io",
        kind: "ClusterServingRuntime",
        resource: "clusterservingruntimes",
        namespaced: false,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Inference),
        reads: Reads::Holder,
    },
    // Knative Serving: a Service's or Configuration's `spec.template` is a revision template
    // (`metadata` and an inline pod spec); the autoscaler sets the pod count, one or more when it
    // serves (knative/serving `pkg/apis/serving/v1/service_types.go`,
    // `configuration_types.go`). Revisions are what Configurations stamp out: read through them.
    Controller {
        group: "serving.knative.dev",
        kind: "Service",
        resource: "services",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&KNATIVE_TEMPLATE),
    },
    Controller {
        group: "serving.knative.dev",
        kind: "Configuration",
        resource: "configurations",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&KNATIVE_TEMPLATE),
    },
    Controller {
        group: "serving.knative.dev",
        kind: "Revision",
        resource: "revisions",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Holder,
    },
    // Argo Workflows: each template of `spec.templates` with a `container`, `script` or
    // `containerSet` runs as a pod; the workflow's `nodeSelector`, `affinity`, `tolerations`,
    // `schedulerName`, `serviceAccountName`, `securityContext`, `hostNetwork`, `volumes` and
    // `podMetadata` apply to every pod, a template's own fields first (argoproj/argo-workflows
    // `pkg/apis/workflow/v1alpha1/workflow_types.go`, `WorkflowSpec` and `Template`). A
    // CronWorkflow runs `spec.workflowSpec` on a schedule (`cron_workflow_types.go`); a
    // WorkflowTemplate is run by the workflows of its namespace that reference it.
    Controller {
        group: "argoproj.io",
        kind: "Workflow",
        resource: "workflows",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&[argo("spec.templates.*", "/spec")]),
    },
    Controller {
        group: "argoproj.io",
        kind: "WorkflowTemplate",
        resource: "workflowtemplates",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&[argo("spec.templates.*", "/spec")]),
    },
    Controller {
        group: "argoproj.io",
        kind: "CronWorkflow",
        resource: "cronworkflows",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&[argo("spec.workflowSpec.templates.*", "/spec.workflowSpec")]),
    },
    Controller {
        group: "argoproj.io",
        kind: "ClusterWorkflowTemplate",
        resource: "clusterworkflowtemplates",
        namespaced: false,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Holder,
    },
    // vLLM production-stack operator: a VLLMRuntime becomes a Deployment of
    // `deploymentConfig.replicas` (default 1) vLLM servers (vllm-project/production-stack
    // `operator/api/v1alpha1/vllmruntime_types.go`, `operator/internal/controller/
    // vllmruntime_controller.go`, `deploymentForVLLMRuntime`).
    Controller {
        group: "production-stack.vllm.ai",
        kind: "VLLMRuntime",
        resource: "vllmruntimes",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: Some(WorkloadClass::Inference),
        reads: Reads::VllmRuntime,
    },
    // KubeVirt (kubevirt/kubevirt `staging/src/kubevirt.io/api/core/v1/types.go`): a
    // VirtualMachine runs one VirtualMachineInstance from `spec.template` unless halted; each VMI
    // runs in one virt-launcher pod that requests its GPUs and host devices. The KubeVirt CR
    // configures which host devices VMs may get and runs no VM itself.
    Controller {
        group: "kubevirt.io",
        kind: "VirtualMachine",
        resource: "virtualmachines",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::KubeVirt,
    },
    Controller {
        group: "kubevirt.io",
        kind: "VirtualMachineInstance",
        resource: "virtualmachineinstances",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::KubeVirt,
    },
    Controller {
        group: "kubevirt.io",
        kind: "KubeVirt",
        resource: "kubevirts",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Holder,
    },
    // Kueue's Workload copies the pod sets of the job it admits, which is read itself
    // (kubernetes-sigs/kueue `apis/kueue/v1beta1/workload_types.go`).
    Controller {
        group: "kueue.x-k8s.io",
        kind: "Workload",
        resource: "workloads",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Holder,
    },
    // Built-in kinds without a typed reader: ReplicationController runs `spec.replicas` (default 1)
    // pods of `spec.template`; PodTemplate and ControllerRevision store templates for others
    // (Kubernetes API reference, core/v1 and apps/v1).
    Controller {
        group: "",
        kind: "ReplicationController",
        resource: "replicationcontrollers",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Groups(&[Group {
            at: "spec",
            template: "template",
            shape: Shape::PodTemplate,
            role: Role::None,
            count: &[Count::Field("replicas", 1)],
            scheduler: None,
        }]),
    },
    Controller {
        group: "",
        kind: "PodTemplate",
        resource: "podtemplates",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Holder,
    },
    Controller {
        group: "apps",
        kind: "ControllerRevision",
        resource: "controllerrevisions",
        namespaced: true,
        workload: WorkloadKind::Custom,
        class: None,
        reads: Reads::Holder,
    },
];

static VOLCANO_TASKS: [Group; 1] = [Group {
    at: "spec.tasks.*",
    template: "template",
    shape: Shape::PodTemplate,
    role: Role::Field("name"),
    count: &[Count::Field("replicas", 1)],
    scheduler: Some("/spec.schedulerName"),
}];

static RAY_JOB: [Group; 3] = {
    let [head, workers] = ray_cluster!(
        "spec.rayClusterSpec.headGroupSpec",
        "spec.rayClusterSpec.workerGroupSpecs.*"
    );
    [
        head,
        workers,
        Group {
            at: "spec",
            template: "submitterPodTemplate",
            shape: Shape::PodTemplate,
            role: Role::Fixed("submitter"),
            count: &[],
            scheduler: None,
        },
    ]
};

static KNATIVE_TEMPLATE: [Group; 1] = [Group {
    at: "spec",
    template: "template",
    shape: Shape::PodTemplate,
    role: Role::None,
    count: &[],
    scheduler: None,
}];

const fn argo(at: &'static str, inherit: &'static str) -> Group {
    Group {
        at,
        template: "",
        shape: Shape::Argo { inherit },
        role: Role::Field("name"),
        count: &[],
        scheduler: None,
    }
}

/// The row of a kind (`group` without version).
pub(crate) fn lookup(group: &str, kind: &str) -> Option<&'static Controller> {
    CONTROLLERS
        .iter()
        .find(|c| c.group == group && c.kind == kind)
}

/// A row whose kind differs from `kind` only in letter case: the API server would refuse `kind`.
pub(crate) fn misspelled(group: &str, kind: &str) -> Option<&'static Controller> {
    CONTROLLERS
        .iter()
        .find(|c| c.group == group && c.kind != kind && c.kind.eq_ignore_ascii_case(kind))
}

/// Built-in API groups whose objects never run pods, and the built-in kinds of the core and apps
/// groups that do not either (Kubernetes API reference): read for their namespace only, never
/// searched for pod templates.
const INERT_GROUPS: &[&str] = &[
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io",
    "policy",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
    "internal.apiserver.k8s.io",
    // Queues, quotas and pod groups of batch schedulers: they count GPUs (`minResources`,
    // `nominalQuota`) but run no pod (kubernetes-sigs/kueue `apis/kueue`; volcano-sh/apis
    // `pkg/apis/scheduling`; NVIDIA/KAI-Scheduler `pkg/apis/scheduling`; kubernetes-sigs/
    // scheduler-plugins `apis/scheduling`; kube-batch `scheduling.incubator.k8s.io`).
    "kueue.x-k8s.io",
    "scheduling.volcano.sh",
    "scheduling.run.ai",
    "scheduling.x-k8s.io",
    "scheduling.sigs.k8s.io",
    "scheduling.incubator.k8s.io",
];
const INERT_CORE: &[&str] = &[
    "Binding",
    "ComponentStatus",
    "Endpoints",
    "Event",
    "LimitRange",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "ResourceQuota",
    "Secret",
    "Service",
    "ServiceAccount",
];

/// Whether objects of this kind never run pods.
pub(crate) fn inert(group: &str, kind: &str) -> bool {
    INERT_GROUPS.contains(&group) || (group.is_empty() && INERT_CORE.contains(&kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_unique_and_paths_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CONTROLLERS {
            assert!(seen.insert((c.group, c.kind)), "{} listed twice", c.kind);
            if let Reads::Groups(groups) = &c.reads {
                assert!(!groups.is_empty(), "{}", c.kind);
                for g in *groups {
                    assert!(g.at.matches('*').count() <= 1, "{}: {}", c.kind, g.at);
                    assert!(!g.at.starts_with('/') && !g.at.ends_with('.'), "{}", g.at);
                }
            }
        }
        assert!(lookup("ray.io", "RayJob").is_some());
        assert!(lookup("ray.io", "rayjob").is_none());
        assert_eq!(
            misspelled("ray.io", "rayjob").map(|c| c.kind),
            Some("RayJob")
        );
        assert!(inert("", "Service") && inert("storage.k8s.io", "StorageClass"));
        assert!(!inert("", "ReplicationController") && !inert("example.com", "Service"));
    }

    /// Every row has a fixture: an object of its kind in a file of
    /// `tests/fixtures/controllers/`, whose reading the fixture test snapshots. A row added without
    /// one fails here.
    #[test]
    fn every_row_has_a_fixture() {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Head {
            api_version: Option<String>,
            kind: Option<String>,
        }
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/controllers");
        let options = gpu_trust_source::ReadOptions {
            split_key: Some("items".into()),
            ..Default::default()
        };
        let mut found = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(&dir).expect("the controllers' fixture folder") {
            let path = entry.expect("a folder entry").path();
            let text = std::fs::read_to_string(&path).expect("a fixture");
            let name = path.display().to_string();
            for e in gpu_trust_source::read_all(&text, &name, &options) {
                let gpu_trust_source::Entry::Object(o) = e else {
                    continue;
                };
                let Ok(Head {
                    api_version: Some(api_version),
                    kind: Some(kind),
                }) = o.deserialize::<Head>()
                else {
                    continue;
                };
                let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
                found.insert((group.to_string(), kind));
            }
        }
        let missing: Vec<String> = CONTROLLERS
            .iter()
            .filter(|c| !found.contains(&(c.group.to_string(), c.kind.to_string())))
            .map(|c| format!("{}/{}", c.group, c.kind))
            .collect();
        assert!(
            missing.is_empty(),
            "rows of the controllers table without an object in tests/fixtures/controllers/: {missing:?}"
        );
    }
}

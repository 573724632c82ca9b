//! What `gangwarden rules` and the rule reference add to each rule set's `RULES` table: the
//! kinds a rule applies to and a message it really produces (the e2e fidelity test checks
//! that every example here is produced, word for word, by some case).

use crate::field::ErrorType;

/// The six Kubeflow Training Operator job kinds.
pub const JOBS: &[&str] = &["TFJob", "PyTorchJob", "MPIJob", "JAXJob", "PaddleJob", "XGBoostJob"];

/// A rule's kinds and an example message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleDoc {
    pub id: &'static str,
    /// The kinds the rule checks (Kubeflow jobs: see [`JOBS`]).
    pub kinds: &'static [&'static str],
    /// A message the rule produced on an e2e case or corpus document.
    pub example: &'static str,
    /// The apiserver's (or the upstream webhook's) error type for the check the example
    /// shows, when the rule mirrors an upstream rule; `None` for gangwarden's own rules
    /// (settings, warnings, cluster lookups, checks upstream leaves undone or makes later).
    pub upstream: Option<ErrorType>,
}

/// The documentation of the rule `id`.
pub fn doc(id: &str) -> Option<&'static RuleDoc> {
    DOCS.iter().find(|d| d.id == id)
}

/// The 1.37 `batch/v1` kinds that carry `spec.scheduling`.
pub const BATCH: &[&str] = &["Job", "CronJob"];

/// The Kubeflow Trainer v2 kinds.
pub const TRAINER: &[&str] = &["TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"];
const RUNTIMES: &[&str] = &["TrainingRuntime", "ClusterTrainingRuntime"];

/// Volcano's `batch.volcano.sh/v1alpha1` Job and `scheduling.volcano.sh/v1beta1` PodGroup.
pub const VOLCANO: &[&str] = &["Job (Volcano)", "PodGroup (Volcano)"];
const VOLCANO_JOB: &[&str] = &["Job (Volcano)"];
const VOLCANO_QUEUE_HOLDERS: &[&str] =
    &["TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "Job (Volcano)", "PodGroup (Volcano)"];

const WORKLOAD_AND_PODGROUP: &[&str] = &["Workload", "PodGroup"];
/// Every holder of a group spec a rule about it reads.
const GROUP_HOLDERS: &[&str] = &["Workload", "PodGroup", "Job", "CronJob"];
const GROUP_HOLDERS_AND_KUBEFLOW_AND_TRAINER: &[&str] = &[
    "Workload",
    "PodGroup",
    "Job",
    "CronJob",
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainJob",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
];
const GROUP_HOLDERS_AND_PODS: &[&str] = &["Workload", "PodGroup", "Pod", "Job", "CronJob"];
/// Whatever runs Pods a Kueue pod set is made of.
const KUEUE_POD_SETS: &[&str] = &[
    "Job",
    "CronJob",
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainJob",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
];
/// What makes Pods whose requests are known: the capacity rules' kinds.
const POD_MAKERS: &[&str] = &[
    "Job",
    "CronJob",
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainJob",
    "Job (Volcano)",
];
/// The pod makers, and Volcano's PodGroup (its `minResources`).
const GANG_HOLDERS: &[&str] = &[
    "Job",
    "CronJob",
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainJob",
    "Job (Volcano)",
    "PodGroup (Volcano)",
];
/// What names a Volcano Queue the topology set reads: Volcano's kinds, and Kubeflow v1 jobs
/// whose templates name the volcano scheduler.
const VOLCANO_QUEUED: &[&str] =
    &["TFJob", "PyTorchJob", "MPIJob", "JAXJob", "PaddleJob", "XGBoostJob", "Job (Volcano)", "PodGroup (Volcano)"];
/// What a Kueue queue label is read on (a CronJob's job template's).
const QUEUE_LABELLED: &[&str] =
    &["Job", "CronJob", "TFJob", "PyTorchJob", "MPIJob", "JAXJob", "PaddleJob", "XGBoostJob", "TrainJob"];
const JOBS_AND_TRAINJOB: &[&str] = &["TFJob", "PyTorchJob", "MPIJob", "JAXJob", "PaddleJob", "XGBoostJob", "TrainJob"];
const JOBS_AND_RUNTIMES: &[&str] = &[
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
];
/// Every kind gangwarden guards: what the metadata rules check.
pub const EVERY_KIND: &[&str] = &[
    "Workload",
    "PodGroup",
    "CompositePodGroup",
    "Pod",
    "Job",
    "CronJob",
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainJob",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
];
const NAMESPACED_KINDS: &[&str] = &[
    "Workload",
    "PodGroup",
    "CompositePodGroup",
    "Pod",
    "Job",
    "CronJob",
    "TFJob",
    "PyTorchJob",
    "MPIJob",
    "JAXJob",
    "PaddleJob",
    "XGBoostJob",
    "TrainJob",
    "TrainingRuntime",
];
const PODS_AND_JOB_TEMPLATES: &[&str] = &["Pod", "Job", "CronJob"];
const JOBS_BUT_MPI: &[&str] = &["TFJob", "PyTorchJob", "JAXJob", "PaddleJob", "XGBoostJob"];

pub const DOCS: &[RuleDoc] = &[
    RuleDoc {
        id: "meta.name",
        kinds: EVERY_KIND,
        example: "metadata.name: Invalid value: \"Train_Job\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') [meta.name]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "meta.namespace",
        kinds: NAMESPACED_KINDS,
        example: "metadata.namespace: Invalid value: \"ML_team\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?') [meta.namespace]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "meta.labels",
        kinds: EVERY_KIND,
        example: "metadata.labels: Invalid value: \"nightly run\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') [meta.labels]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "meta.annotations",
        kinds: EVERY_KIND,
        example: "metadata.annotations: Too long: may not be more than 262144 bytes [meta.annotations]",
        upstream: Some(ErrorType::TooLong),
    },
    RuleDoc {
        id: "meta.immutable",
        kinds: EVERY_KIND,
        example: "metadata.name: Invalid value: \"train-workers-1\": field is immutable [meta.immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.workload-templates",
        kinds: &["Workload"],
        example: "spec.podGroupTemplates: Required value [gang.workload-templates]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "gang.template-name",
        kinds: &["Workload"],
        example: "spec.podGroupTemplates[0].name: Required value [gang.template-name]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "gang.template-unique",
        kinds: &["Workload"],
        example: "spec.podGroupTemplates[1]: Duplicate value: {\"name\":\"workers\",\"schedulingPolicy\":{\"basic\":{}}} [gang.template-unique]",
        upstream: Some(ErrorType::Duplicate),
    },
    RuleDoc {
        id: "gang.templates-immutable",
        kinds: &["Workload"],
        example: "spec.podGroupTemplates: Invalid value: [{\"name\":\"workers\",\"schedulingPolicy\":{\"gang\":{\"minCount\":8}}}]: field is immutable [gang.templates-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.controller-ref",
        kinds: &["Workload"],
        example: "spec.controllerRef.kind: Required value [gang.controller-ref]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "gang.policy-union",
        kinds: GROUP_HOLDERS,
        example: "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang` [gang.policy-union]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.min-count",
        kinds: GROUP_HOLDERS,
        example: "spec.schedulingPolicy.gang.minCount: Required value [gang.min-count]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "gang.max-min-count",
        kinds: GROUP_HOLDERS_AND_KUBEFLOW_AND_TRAINER,
        example: "spec.schedulingPolicy.gang.minCount: Invalid value: 32: must be less than or equal to 16 (settings.maxMinCount) [gang.max-min-count]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.policy-immutable",
        kinds: &["PodGroup", "Job"],
        example: "spec.schedulingPolicy: Invalid value: {\"basic\":{}}: field is immutable [gang.policy-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.template-ref",
        kinds: &["PodGroup"],
        example: "spec.podGroupTemplateRef.workload.workloadName: Required value [gang.template-ref]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "gang.template-ref-immutable",
        kinds: &["PodGroup"],
        example: "spec.podGroupTemplateRef: Invalid value: {\"workload\":{\"podGroupTemplateName\":\"launchers\",\"workloadName\":\"train\"}}: field is immutable [gang.template-ref-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.template-ref-exists",
        kinds: &["PodGroup"],
        example: "spec.podGroupTemplateRef.workload.workloadName: Not found: \"train\": Workload \"train\" not found in namespace \"ml\" [gang.template-ref-exists]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.template-consistency",
        kinds: &["PodGroup"],
        example: "spec.disruptionMode: Invalid value: \"PodGroup\": must equal the disruptionMode of Workload \"train\" template \"launcher\": \"Pod\" [gang.template-consistency]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.template-depth",
        kinds: &["Workload"],
        example: "spec.compositePodGroupTemplates[0]: Invalid value: [{\"compositePodGroupTemplates\":[{\"compositePodGroupTemplates\":[{\"name\":\"c4\",\"podGroupTemplates\":[{\"name\":\"leaf\",\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}}],\"schedulingPolicy\":{\"basic\":{}}}],\"name\":\"c3\",\"schedulingPolicy\":{\"basic\":{}}}],\"name\":\"c2\",\"schedu...(26 more bytes): maximum template hierarchy depth is 4 [gang.template-depth]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.composite-children",
        kinds: &["Workload"],
        example: "spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0]: Invalid value: \"empty\": must have at least one child PodGroupTemplate or CompositePodGroupTemplate [gang.composite-children]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.workload-priority",
        kinds: &["Workload"],
        example: "spec: Invalid value: null: detected multiple priority configurations [gang.workload-priority]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.preemption-policy",
        kinds: &["Workload", "PodGroup", "CompositePodGroup"],
        example: "spec.preemptionPolicy: Unsupported value: \"Always\": supported values: \"Never\", \"PreemptLowerPriority\" [gang.preemption-policy]",
        upstream: Some(ErrorType::NotSupported),
    },
    RuleDoc {
        id: "gang.parent-group",
        kinds: &["PodGroup", "CompositePodGroup"],
        example: "spec.parentCompositePodGroupName: Invalid value: \"train-job-1\": field is immutable [gang.parent-group]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.hierarchy",
        kinds: &["PodGroup", "CompositePodGroup"],
        example: "spec.parentCompositePodGroupName: Not found: \"train-job-0\": CompositePodGroup \"train-job-0\" not found in namespace \"ml\" [gang.hierarchy]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.disruption-mode",
        kinds: GROUP_HOLDERS,
        example: "spec.disruptionMode: Invalid value: \"PodGroup\": field is immutable [gang.disruption-mode]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.disruption-mode-basic",
        kinds: GROUP_HOLDERS,
        example: "spec.disruptionMode: Invalid value: \"PodGroup\": a basic schedulingPolicy schedules pods one by one, so the group cannot be disrupted as a whole (use a gang policy or disruptionMode \"Pod\") [gang.disruption-mode-basic]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.priority-class-name",
        kinds: WORKLOAD_AND_PODGROUP,
        example: "spec.priorityClassName: Invalid value: \"high\": field is immutable [gang.priority-class-name]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.priority",
        kinds: WORKLOAD_AND_PODGROUP,
        example: "spec.priority: Invalid value: 2000000000: must be less than or equal to 1000000000 [gang.priority]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.user-priority",
        kinds: WORKLOAD_AND_PODGROUP,
        example: "spec.priority: Forbidden: set priorityClassName instead (the priority is computed from the class at admission) [gang.user-priority]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.scheduling-group",
        kinds: &["Pod"],
        example: "spec.schedulingGroup: Invalid value: {\"podGroupName\":\"train-workers-1\"}: field is immutable [gang.scheduling-group]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.pod-group-exists",
        kinds: &["Pod"],
        example: "spec.schedulingGroup.podGroupName: PodGroup \"train-workers-0\" does not exist in namespace \"ml\" yet; the Pod stays Pending until it is created [gang.pod-group-exists]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.min-available",
        kinds: JOBS,
        example: "spec.runPolicy.schedulingPolicy.minAvailable: Invalid value: 0: must be greater than or equal to 1 [gang.min-available]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.require-gang",
        kinds: JOBS_AND_TRAINJOB,
        example: "spec.runPolicy.schedulingPolicy.minAvailable: Required value: jobs with 8 or more replicas must set it (settings.requireGangForJobsWithAtLeast); this one has 8 [gang.require-gang]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.queue-immutable",
        kinds: JOBS,
        example: "spec.runPolicy.schedulingPolicy.queue: Invalid value: \"batch\": spec.runPolicy.schedulingPolicy.queue is immutable (was null) [gang.queue-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.schedule-timeout",
        kinds: JOBS_AND_RUNTIMES,
        example: "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds: Invalid value: -5: must be greater than or equal to 0 [gang.schedule-timeout]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.scheduler-name",
        kinds: JOBS,
        example: "spec.pytorchReplicaSpecs[Worker].template.spec.schedulerName: \"my-scheduler\" is kept instead of the gang scheduler, so these pods are not gang-scheduled unless \"my-scheduler\" is that scheduler [gang.scheduler-name]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.job-parallelism",
        kinds: BATCH,
        example: "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 8: must be less than or equal to spec.parallelism (4) [gang.job-parallelism]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.job-completions",
        kinds: BATCH,
        example: "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 4: must be less than or equal to spec.completions (3): the Job controller never runs more Pods at once than it has completions to go, so a larger gang never gets all its Pods and stays Pending [gang.job-completions]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.job-parent",
        kinds: &["Job"],
        example: "spec.scheduling: is not what schedules this Job: it is owned by JobSet \"train\", which makes both the Workload and the PodGroup of its Jobs (this Job has no scheduling.k8s.io/group-template-name annotation), so the Job controller makes no Workload from spec.scheduling; set the gang on the JobSet instead [gang.job-parent]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.job-scheduling-group",
        kinds: BATCH,
        example: "spec.scheduling: is not used: spec.template.spec.schedulingGroup is set, so the Job controller makes no Workload or PodGroup from spec.scheduling and the Pods join the group the template names (Kubernetes 1.38 refuses the two together) [gang.job-scheduling-group]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.job-delegated-gang",
        kinds: &["Job"],
        example: "metadata.annotations[scheduling.k8s.io/group-template-name]: names template \"workers\" of Workload \"train\", whose gang.minCount is 4, but this Job runs at most 2 Pods at once: the Job controller makes one PodGroup for each Job that names the template, so this Job's gang never has 4 Pods and stays Pending (for one gang over several Jobs, the parent must make that PodGroup and set the Pods' schedulingGroup) [gang.job-delegated-gang]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.pod-group-policy",
        kinds: TRAINER,
        example: "spec.podGroupPolicy: Invalid value: \"{coscheduling, volcano}\": must specify exactly one of: `coscheduling`, `volcano` (with both, Trainer makes two PodGroups and the job can stay Pending, kubeflow/trainer#4060) [gang.pod-group-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-queue",
        kinds: VOLCANO_QUEUE_HOLDERS,
        example: "spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]: Invalid value: \"\": Volcano queue name must not be empty [gang.volcano-queue]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "gang.trainer-scheduler-name",
        kinds: RUNTIMES,
        example: "spec.template.spec.replicatedJobs[1].template.spec.template.spec.schedulerName: Invalid value: \"default-scheduler\": must be \"scheduler-plugins-scheduler\", the schedulerName of job \"dataset-initializer\": the gang's PodGroup counts the pods of every job, so pods another scheduler places keep it below its minMember and it never starts [gang.trainer-scheduler-name]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.depends-on",
        kinds: RUNTIMES,
        example: "spec.template.spec.replicatedJobs[1].dependsOn[0]: job \"node\" is created only once job \"dataset-initializer\" is Complete, but the gang's minMember (2: dataset-initializer 1 + node 1) counts the pods of both, so the pods of \"dataset-initializer\" wait for pods that do not exist yet and the gang may never start [gang.depends-on]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-tasks",
        kinds: VOLCANO_JOB,
        example: "spec.tasks: Required value: No task specified in job spec [gang.volcano-tasks]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-task-name",
        kinds: VOLCANO_JOB,
        example: "spec.tasks[1].name: Invalid value: \"task-1\": duplicated task name task-1 [gang.volcano-task-name]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-pod-name",
        kinds: VOLCANO_JOB,
        example: "spec.tasks[0].name: Invalid value: \"parameter-server-for-the-embedding-tables-of-the-ranking-model\": create pod with name ranking-parameter-server-for-the-embedding-tables-of-the-ranking-model-0 validate failed [name part must be no more than 63 characters] [gang.volcano-pod-name]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-min-available",
        kinds: VOLCANO,
        example: "spec.minAvailable: Invalid value: 5: job 'minAvailable' should not be greater than total replicas in tasks (4) [gang.volcano-min-available]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-policies",
        kinds: VOLCANO_JOB,
        example: "spec.policies[1].event: Invalid value: \"PodFailed\": duplicate event PodFailed  across different policy [gang.volcano-policies]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-plugins",
        kinds: VOLCANO_JOB,
        example: "spec.plugins[horovod]: Invalid value: \"horovod\": unable to find job plugin: horovod (Volcano's plugins: ssh, env, svc, tensorflow, mpi, pytorch, hcclrank, ray) [gang.volcano-plugins]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-mpi-master",
        kinds: VOLCANO_JOB,
        example: "spec.plugins[mpi]: Invalid value: \"launcher\": The specified mpi master task was not found [gang.volcano-mpi-master]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-depends-on",
        kinds: VOLCANO_JOB,
        example: "spec.tasks[0].dependsOn.name: Invalid value: [\"worker\"]: job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG) [gang.volcano-depends-on]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-network-topology",
        kinds: VOLCANO,
        example: "spec.networkTopology.mode: Unsupported value: \"strict\": supported values: \"hard\", \"soft\" [gang.volcano-network-topology]",
        upstream: Some(ErrorType::NotSupported),
    },
    RuleDoc {
        id: "gang.volcano-partition",
        kinds: VOLCANO_JOB,
        example: "spec.tasks[0].partitionPolicy.totalPartitions: Invalid value: 2: 'Replicas' are not equal to TotalPartitions*PartitionSize in task: worker, job: train [gang.volcano-partition]",
        upstream: None,
    },
    RuleDoc {
        id: "gang.volcano-update",
        kinds: VOLCANO_JOB,
        example: "spec: Forbidden: job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and `PriorityClassName` [gang.volcano-update]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.claim-name",
        kinds: GROUP_HOLDERS,
        example: "spec.resourceClaims[0].name: Required value [claims.claim-name]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "claims.claim-source",
        kinds: GROUP_HOLDERS,
        example: "spec.resourceClaims[0]: Invalid value: \"\": must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "claims.source-name",
        kinds: GROUP_HOLDERS,
        example: "spec.resourceClaims[1].resourceClaimName: Invalid value: \"nic..0\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') [claims.source-name]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "claims.max-claims",
        kinds: GROUP_HOLDERS,
        example: "spec.resourceClaims: Too many: 5: must have at most 4 items [claims.max-claims]",
        upstream: Some(ErrorType::TooMany),
    },
    RuleDoc {
        id: "claims.claim-unique",
        kinds: GROUP_HOLDERS,
        example: "spec.resourceClaims[1]: Duplicate value: {\"name\":\"gpu\",\"resourceClaimName\":\"shared-gpu\"} [claims.claim-unique]",
        upstream: Some(ErrorType::Duplicate),
    },
    RuleDoc {
        id: "claims.claims-immutable",
        kinds: &["PodGroup", "Job"],
        example: "spec.resourceClaims: Invalid value: [{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"big-gpu-template\"}]: field is immutable [claims.claims-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "claims.pod-claim-match",
        kinds: PODS_AND_JOB_TEMPLATES,
        example: "spec.schedulingGroup.podGroupName: PodGroup \"train-workers-0\" does not exist in namespace \"ml\" yet, so this Pod's resourceClaims could not be compared with the group's claims (a Pod shares a group claim only through an identical entry) [claims.pod-claim-match]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.group-claim-requested",
        kinds: PODS_AND_JOB_TEMPLATES,
        example: "spec.resourceClaims[0]: PodGroup \"train-workers-0\" claim \"shared-gpu\" is listed, but no container or init container requests it in resources.claims, so this Pod does not use the group's devices [claims.group-claim-requested]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.pod-claims",
        kinds: PODS_AND_JOB_TEMPLATES,
        example: "spec.resourceClaims[1].name: Duplicate value: \"scratch\" [claims.pod-claims]",
        upstream: Some(ErrorType::Duplicate),
    },
    RuleDoc {
        id: "claims.status-claims",
        kinds: &["PodGroup"],
        example: "status.resourceClaimStatuses[1]: Duplicate value: {\"name\":\"gpu\"} [claims.status-claims]",
        upstream: Some(ErrorType::Duplicate),
    },
    RuleDoc {
        id: "claims.source-exists",
        kinds: GROUP_HOLDERS_AND_PODS,
        example: "spec.resourceClaims[0].resourceClaimName: Not found: \"shared-nic\": no ResourceClaim with this name in namespace \"ml\" (settings.requireClaimSourcesExist) [claims.source-exists]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.device-class-exists",
        kinds: GROUP_HOLDERS_AND_PODS,
        example: "spec.resourceClaims[0].resourceClaimTemplateName: Not found: \"gpu.example.com\": no DeviceClass with this name, named by request \"gpu\" of ResourceClaimTemplate \"gpu-template\" (settings.requireClaimSourcesExist) [claims.device-class-exists]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.template-claims",
        kinds: &["PodGroup"],
        example: "spec.resourceClaims: Invalid value: []: must equal the resourceClaims of Workload \"train\" template \"workers\": [{\"name\":\"shared-gpu\",\"resourceClaimTemplateName\":\"gpu-template\"}] [claims.template-claims]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.direct-claims",
        kinds: GROUP_HOLDERS_AND_PODS,
        example: "spec.resourceClaims[0].resourceClaimName: Forbidden: claim \"scratch-0\" is shared directly, but only resourceClaimTemplateName is allowed (settings.allowDirectClaims is false) [claims.direct-claims]",
        upstream: None,
    },
    RuleDoc {
        id: "claims.allowed-templates",
        kinds: GROUP_HOLDERS_AND_PODS,
        example: "spec.podGroupTemplates[0].resourceClaims[0].resourceClaimTemplateName: Unsupported value: \"h100-template\": supported values: \"gpu-template\", \"fpga-template\" [claims.allowed-templates]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.job-name",
        kinds: JOBS_BUT_MPI,
        example: "metadata.name: Invalid value: \"pytorch-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\": should match: must be no more than 63 characters [run-policy.job-name]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.replica-specs",
        kinds: JOBS,
        example: "spec.tfReplicaSpecs: Required value: must be required [run-policy.replica-specs]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "run-policy.replica-type",
        kinds: JOBS,
        example: "spec.jaxReplicaSpecs[Master]: Unsupported value: \"Master\": supported values: \"Worker\" [run-policy.replica-type]",
        upstream: Some(ErrorType::NotSupported),
    },
    RuleDoc {
        id: "run-policy.containers",
        kinds: JOBS,
        example: "spec.tfReplicaSpecs[Worker].template.spec.containers: Required value: must be specified [run-policy.containers]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "run-policy.image",
        kinds: JOBS,
        example: "spec.tfReplicaSpecs[Worker].template.spec.containers[1].image: Required value: must be required [run-policy.image]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "run-policy.default-container",
        kinds: JOBS,
        example: "spec.mpiReplicaSpecs[Worker].template.spec.containers[1].name: Required value [run-policy.default-container]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "run-policy.master-replicas",
        kinds: &["TFJob", "PyTorchJob", "MPIJob", "XGBoostJob"],
        example: "spec.tfReplicaSpecs[Chief].replicas: Forbidden: must be 1 [run-policy.master-replicas]",
        upstream: Some(ErrorType::Forbidden),
    },
    RuleDoc {
        id: "run-policy.master-required",
        kinds: &["MPIJob", "XGBoostJob"],
        example: "spec.xgbReplicaSpecs[Master]: Required value: must be present [run-policy.master-required]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "run-policy.chief-or-master",
        kinds: &["TFJob"],
        example: "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role [run-policy.chief-or-master]",
        upstream: Some(ErrorType::Forbidden),
    },
    RuleDoc {
        id: "run-policy.replicas",
        kinds: JOBS,
        example: "spec.jaxReplicaSpecs[Worker].replicas: Forbidden: must be at least 1 [run-policy.replicas]",
        upstream: Some(ErrorType::Forbidden),
    },
    RuleDoc {
        id: "run-policy.pytorch-master",
        kinds: &["PyTorchJob"],
        example: "spec.pytorchReplicaSpecs[Master]: a PyTorchJob without elasticPolicy needs a Master: the operator sets MASTER_ADDR, MASTER_PORT and RANK only when one exists, so the workers cannot rendezvous [run-policy.pytorch-master]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.restart-policy",
        kinds: JOBS,
        example: "spec.pytorchReplicaSpecs[Worker].restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\", \"ExitCode\" [run-policy.restart-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.exit-code",
        kinds: JOBS,
        example: "spec.mpiReplicaSpecs[Worker].restartPolicy: ExitCode reads the exit code of the container named \"mpi\", which this replica does not have (it has \"worker\"), so the operator cannot tell permanent from retryable failures [run-policy.exit-code]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.clean-pod-policy",
        kinds: JOBS,
        example: "spec.cleanPodPolicy: Unsupported value: \"Always\": supported values: \"All\", \"None\", \"Running\" [run-policy.clean-pod-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.mpi-clean-pod-policy",
        kinds: &["MPIJob"],
        example: "spec.cleanPodPolicy: is deprecated, use spec.runPolicy.cleanPodPolicy instead [run-policy.mpi-clean-pod-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.success-policy",
        kinds: &["TFJob"],
        example: "spec.successPolicy: Unsupported value: \"AnyWorker\": supported values: \"\", \"AllWorkers\" [run-policy.success-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.ttl",
        kinds: JOBS_AND_RUNTIMES,
        example: "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0 [run-policy.ttl]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.active-deadline",
        kinds: JOBS_AND_TRAINJOB,
        example: "spec.runPolicy.activeDeadlineSeconds: Invalid value: 0: must be greater than or equal to 1 [run-policy.active-deadline]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.backoff-limit",
        kinds: JOBS_AND_RUNTIMES,
        example: "spec.runPolicy.backoffLimit: Invalid value: -3: must be greater than or equal to 0 [run-policy.backoff-limit]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.managed-by",
        kinds: JOBS_AND_TRAINJOB,
        example: "spec.runPolicy.managedBy: Unsupported value: \"kueue.x-k8s.io/multikueue\": supported values: \"kubeflow.org/training-operator\" [run-policy.managed-by]",
        upstream: Some(ErrorType::NotSupported),
    },
    RuleDoc {
        id: "run-policy.managed-by-immutable",
        kinds: JOBS_AND_TRAINJOB,
        example: "spec.runPolicy.managedBy: Invalid value: \"null\": field is immutable [run-policy.managed-by-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.elastic-worker",
        kinds: &["PyTorchJob", "PaddleJob"],
        example: "spec.paddleReplicaSpecs[Worker]: Required value: must be configured if elastic policy is used [run-policy.elastic-worker]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "run-policy.nproc-per-node",
        kinds: &["PyTorchJob"],
        example: "spec.elasticPolicy.nProcPerNode: is deprecated, use spec.nprocPerNode instead [run-policy.nproc-per-node]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.elastic-replicas",
        kinds: &["PyTorchJob", "PaddleJob"],
        example: "spec.elasticPolicy.minReplicas: Invalid value: 0: must be greater than or equal to 1 [run-policy.elastic-replicas]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.elastic-policy",
        kinds: &["PyTorchJob"],
        example: "spec.elasticPolicy.rdzvConf[1].key: Required value [run-policy.elastic-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.slots-per-worker",
        kinds: &["MPIJob"],
        example: "spec.slotsPerWorker: Invalid value: 0: must be greater than or equal to 1 [run-policy.slots-per-worker]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.mpi-implementation",
        kinds: &["MPIJob"],
        example: "spec.mpiImplementation: Unsupported value: \"MVAPICH\": supported values: \"OpenMPI\", \"Intel\", \"MPICH\" [run-policy.mpi-implementation]",
        upstream: Some(ErrorType::NotSupported),
    },
    RuleDoc {
        id: "run-policy.launcher-creation-policy",
        kinds: &["MPIJob"],
        example: "spec.launcherCreationPolicy: Unsupported value: \"WaitForWorkers\": supported values: \"AtStartup\", \"WaitForWorkersReady\" [run-policy.launcher-creation-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.main-container",
        kinds: &["MPIJob"],
        example: "spec.mainContainer: Invalid value: \"trainer\": must name a container of spec.mpiReplicaSpecs[Worker] (\"mpi\", \"sidecar\"): the launcher runs the MPI processes in it [run-policy.main-container]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.default-port",
        kinds: JOBS_BUT_MPI,
        example: "spec.pytorchReplicaSpecs[Master].template.spec.containers[1].ports[0].name: Invalid value: \"pytorchjob-port\": the operator reads this port from the container named \"pytorch\", so declare it there [run-policy.default-port]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.ports",
        kinds: JOBS,
        example: "spec.xgbReplicaSpecs[Worker].template.spec.containers[0].ports[2].name: Duplicate value: \"metrics\" [run-policy.ports]",
        upstream: Some(ErrorType::Duplicate),
    },
    RuleDoc {
        id: "run-policy.trainjob-name",
        kinds: &["TrainJob"],
        example: "metadata.name: Invalid value: \"train.v1\": metadata.name must match RFC 1035 DNS label format [run-policy.trainjob-name]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.runtime-ref",
        kinds: &["TrainJob"],
        example: "spec.runtimeRef: Invalid value: {\"apiGroup\":\"example.com\",\"kind\":\"ClusterTrainingRuntime\",\"name\":\"torch-distributed\"}: unsupported runtime: ClusterTrainingRuntime.example.com [run-policy.runtime-ref]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.runtime-exists",
        kinds: &["TrainJob"],
        example: "spec.runtimeRef: Invalid value: {\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\",\"name\":\"torch-distributed\"}: clustertrainingruntimes.trainer.kubeflow.org \"torch-distributed\" not found: specified clusterTrainingRuntime must be created before the TrainJob is created [run-policy.runtime-exists]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.runtime-deprecated",
        kinds: &["TrainJob", "ClusterTrainingRuntime"],
        example: "spec.runtimeRef: Referenced ClusterTrainingRuntime \"torch-distributed\" is deprecated and will be removed in a future release of Kubeflow Trainer. See runtime deprecation policy: https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy [run-policy.runtime-deprecated]",
        upstream: None,
    },
    RuleDoc {
        id: "run-policy.trainjob-immutable",
        kinds: &["TrainJob"],
        example: "spec.trainer: Invalid value: \"object\": field is immutable [run-policy.trainjob-immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.num-nodes",
        kinds: &["TrainJob"],
        example: "spec.trainer.numNodes: Invalid value: -2: spec.trainer.numNodes in body should be greater than or equal to 0 [run-policy.num-nodes]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.initializers",
        kinds: &["TrainJob"],
        example: "spec.runtimeRef: Invalid value: {\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\",\"name\":\"torch-distributed\"}: must have dataset-initializer job when trainJob is configured with input datasetConfig (ClusterTrainingRuntime \"torch-distributed\") [run-policy.initializers]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.runtime-patches",
        kinds: &["TrainJob"],
        example: "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].name: Invalid value: \"sidecar\": must not have container that doesn't exist in the runtime job node [run-policy.runtime-patches]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.reserved-env",
        kinds: &["TrainJob"],
        example: "spec.trainer.env[1]: Forbidden: DMLC_NUM_WORKER is reserved for the XGBoost runtime [run-policy.reserved-env]",
        upstream: Some(ErrorType::Forbidden),
    },
    RuleDoc {
        id: "run-policy.ml-policy",
        kinds: TRAINER,
        example: "spec.mlPolicy: Invalid value: \"object\": Only one of the policy can be configured [run-policy.ml-policy]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.priority-class",
        kinds: &["TrainJob"],
        example: "spec.runtimeRef: Invalid value: {\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\",\"name\":\"torch-volcano\"}: PriorityClass \"training-high\" doesn't exist: priorityclasses.scheduling.k8s.io \"training-high\" not found (ClusterTrainingRuntime \"torch-volcano\" job \"node\", a Volcano runtime) [run-policy.priority-class]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "run-policy.ancestor-jobs",
        kinds: RUNTIMES,
        example: "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1 [run-policy.ancestor-jobs]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.max-entries",
        kinds: GROUP_HOLDERS,
        example: "spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item [topology.max-entries]",
        upstream: Some(ErrorType::TooMany),
    },
    RuleDoc {
        id: "topology.key",
        kinds: GROUP_HOLDERS,
        example: "spec.schedulingConstraints.topology[0].key: Required value [topology.key]",
        upstream: Some(ErrorType::Required),
    },
    RuleDoc {
        id: "topology.immutable",
        kinds: &["PodGroup", "Job"],
        example: "spec.schedulingConstraints: Invalid value: {\"topology\":[{\"key\":\"topology.kubernetes.io/zone\"}]}: field is immutable [topology.immutable]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.preemption",
        kinds: WORKLOAD_AND_PODGROUP,
        example: "spec.podGroupTemplates[0].schedulingConstraints.topology: is combined with disruptionMode \"PodGroup\", but Kubernetes 1.36 does not run workload-aware preemption for pod groups with scheduling constraints (\"workload aware preemption is not supported for pod groups with scheduling constraints\"), so the scheduler will not preempt other pods to make room for this group [topology.preemption]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.key-on-nodes",
        kinds: GROUP_HOLDERS_AND_KUBEFLOW_AND_TRAINER,
        example: "spec.schedulingConstraints.topology[0].key: Invalid value: \"keyValue\": no node carries the label \"keyValue\" (checked 0 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.domain-size",
        kinds: WORKLOAD_AND_PODGROUP,
        example: "spec.schedulingPolicy.gang.minCount: 3 is larger than the largest \"topology.example.com/rack\" domain (2 nodes): the 4 nodes carrying the label form 3 distinct domains, so the gang can never fit with one pod per node [topology.domain-size]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.pod-fits",
        kinds: POD_MAKERS,
        example: "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: no node can ever run this pod: one pod asks 16 nvidia.com/gpu, and the largest of the 4 eligible nodes has 8 allocatable [topology.pod-fits]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.gang-fits",
        kinds: GANG_HOLDERS,
        example: "spec.scheduling.schedulingPolicy.gang.minCount: the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 4 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.kueue-slice-constraints",
        kinds: KUEUE_POD_SETS,
        example: "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-required-topology-constraints][1].size: Invalid value: 3: must evenly divide the parent layer size 8 [topology.kueue-slice-constraints]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.queue-local-queue",
        kinds: QUEUE_LABELLED,
        example: "metadata.labels[kueue.x-k8s.io/queue-name]: LocalQueue \"team-z\" does not exist in namespace \"ml\": Kueue keeps the job suspended until it does (\"LocalQueue team-z doesn't exist\") [topology.queue-local-queue]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.queue-cluster-queue",
        kinds: QUEUE_LABELLED,
        example: "metadata.labels[kueue.x-k8s.io/queue-name]: LocalQueue \"team-gone\" points to ClusterQueue \"deleted-cq\", which does not exist: Kueue keeps the job suspended until it does (\"ClusterQueue deleted-cq doesn't exist\") [topology.queue-cluster-queue]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.queue-resource",
        kinds: QUEUE_LABELLED,
        example: "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: ClusterQueue \"cpu-cq\" (LocalQueue \"team-cpu\") has no resource group that covers nvidia.com/gpu: Kueue never admits pods that ask for it (\"resource nvidia.com/gpu unavailable in ClusterQueue\") [topology.queue-resource]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.queue-quota",
        kinds: QUEUE_LABELLED,
        example: "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: ClusterQueue \"gpu-cq\" (LocalQueue \"team-a\") can never admit pod set \"main\": its 3 pods ask 24 nvidia.com/gpu in total (8 each), more than the 16 of nvidia.com/gpu its largest flavor (\"a100\") can ever give, outside any cohort (Kueue: \"insufficient quota for nvidia.com/gpu in flavor a100, ... > maximum capacity (16)\"), so the job stays suspended [topology.queue-quota]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.volcano-queue",
        kinds: VOLCANO_QUEUED,
        example: "spec.runPolicy.schedulingPolicy.queue: Volcano Queue \"nightly\" is \"Closed\", and Volcano admits jobs only to queues in state Open (\"can only submit job to queue with state `Open`\"), so it stays Pending [topology.volcano-queue]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.volcano-queue-capability",
        kinds: VOLCANO_QUEUED,
        example: "spec.queue: the job's gang asks at least 24 nvidia.com/gpu at once, and Volcano Queue \"research\" has a capability of 16: its enqueue action keeps the PodGroup Pending (\"queue resource quota insufficient\") however long it waits [topology.volcano-queue-capability]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.basic-policy",
        kinds: GROUP_HOLDERS,
        example: "spec.schedulingConstraints.topology: with a basic schedulingPolicy the scheduler checks the topology only against the pods it has seen so far, so pods created later may find no room in the chosen domain: use a gang policy, or hold the pods with schedulingGates until all of them exist [topology.basic-policy]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.allowed-keys",
        kinds: GROUP_HOLDERS_AND_KUBEFLOW_AND_TRAINER,
        example: "spec.schedulingConstraints.topology[0].key: Unsupported value: \"topology.example.com/rack\": supported values: \"topology.kubernetes.io/zone\" [topology.allowed-keys]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.require-topology",
        kinds: GROUP_HOLDERS,
        example: "spec.schedulingConstraints.topology: Required value: gangs with minCount 16 or more must be kept in one topology domain (settings.requireTopologyForMinCountAtLeast), and this one has minCount 16 [topology.require-topology]",
        upstream: None,
    },
    RuleDoc {
        id: "topology.kueue-one-of",
        kinds: KUEUE_POD_SETS,
        example: "spec.pytorchReplicaSpecs[Master].template.metadata.annotations: Invalid value: must not contain more than one topology annotation: [\"kueue.x-k8s.io/podset-required-topology\", \"kueue.x-k8s.io/podset-preferred-topology\", \"kueue.x-k8s.io/podset-unconstrained-topology\"] [topology.kueue-one-of]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.kueue-value",
        kinds: KUEUE_POD_SETS,
        example: "spec.tfReplicaSpecs[PS].template.metadata.annotations[kueue.x-k8s.io/podset-unconstrained-topology]: Invalid value: \"yes\": must be a boolean value [topology.kueue-value]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.kueue-slice",
        kinds: KUEUE_POD_SETS,
        example: "spec.mpiReplicaSpecs[Worker].template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"0x2\": must be a numeric value [topology.kueue-slice]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.kueue-group",
        kinds: KUEUE_POD_SETS,
        example: "spec.pytorchReplicaSpecs[Worker].template.metadata.annotations[kueue.x-k8s.io/podset-group-name]: Invalid value: \"7\": must not be a number [topology.kueue-group]",
        upstream: Some(ErrorType::Invalid),
    },
    RuleDoc {
        id: "topology.volcano-network-topology",
        kinds: RUNTIMES,
        example: "spec.podGroupPolicy.volcano.networkTopology.mode: Unsupported value: \"strict\": supported values: \"hard\", \"soft\" [topology.volcano-network-topology]",
        upstream: Some(ErrorType::NotSupported),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_one_doc_and_no_doc_is_stray() {
        let ids: Vec<&str> = crate::rules::every_rule().map(|r| r.id).collect();
        for id in &ids {
            assert_eq!(DOCS.iter().filter(|d| d.id == *id).count(), 1, "{id}");
        }
        for d in DOCS {
            assert!(ids.contains(&d.id), "{} documents no rule", d.id);
        }
    }

    #[test]
    fn examples_use_the_upstream_error_type() {
        for d in DOCS {
            let (_, body) = d.example.split_once(": ").unwrap_or_default();
            if let Some(t) = d.upstream {
                assert!(body.starts_with(t.label()), "{}: upstream says {t:?}, the example says {body:?}", d.id);
            }
        }
        // Most rules mirror one: a catalogue that lost its types would pass the loop above.
        let mirrored = DOCS.iter().filter(|d| d.upstream.is_some()).count();
        assert!(mirrored * 2 > DOCS.len(), "{mirrored} of {} rules mirror an upstream rule", DOCS.len());
    }

    #[test]
    fn examples_name_their_rule_and_kinds_are_known() {
        let known = ["Workload", "PodGroup", "CompositePodGroup", "Pod"];
        for d in DOCS {
            assert!(d.example.ends_with(&format!("[{}]", d.id)), "{}: {}", d.id, d.example);
            assert!(!d.kinds.is_empty(), "{}", d.id);
            let is_known = |k: &&str| {
                known.contains(k) || JOBS.contains(k) || BATCH.contains(k) || TRAINER.contains(k) || VOLCANO.contains(k)
            };
            assert!(d.kinds.iter().all(is_known), "{}: {:?}", d.id, d.kinds);
        }
    }
}

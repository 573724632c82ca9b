//! Rule set 4, runPolicy: the replica specs, restart and clean-up policies, run limits,
//! `managedBy`, elastic policy and MPI settings of the six Kubeflow job kinds, with optional
//! defaulting; and the shape of Kubeflow Trainer v2 TrainJobs and their runtimes. Ids and catalogue numbers (rules.md) are listed in [`RULES`].
//!
//! Where the training-operator's webhooks check something, the message is theirs, so users
//! see the same text whichever of the two caught it; MPIJob's controller-only checks and the
//! policy's own rules use apiserver field-error wording.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::cluster::Cluster;
use crate::field::{FieldError, Path};
use crate::kubeflow::{JobKind, KubeflowJob, ReplicaSpec, RunPolicy};
use crate::names;
use crate::pod::Container;
use crate::review::kinds;
use crate::review::{Operation, Resource, Review};
use crate::rules::RuleInfo;
use crate::rules::{Names, RuleSet, names};
use crate::scheduling::GroupSpec;
use crate::trainer::TrainerKind;
use crate::verdict::Verdict;

mod defaults;
mod kubeflow;
mod mpi_operator;
mod trainer;

use defaults::apply_defaults;
use kubeflow::{
    check_elastic_policy, check_kind_fields, check_name, check_replica_specs, check_run_policy, check_update,
    own_clean_pod_policy,
};

const RESTART_POLICIES: [&str; 4] = ["Always", "OnFailure", "Never", "ExitCode"];
const CLEAN_POD_POLICIES: [&str; 3] = ["All", "None", "Running"];
/// What the operator does when `cleanPodPolicy` is unset.
const DEFAULT_CLEAN_POD_POLICY: &str = "None";
const RDZV_BACKENDS: [&str; 3] = ["c10d", "etcd", "etcd-v2"];
const SUCCESS_POLICIES: [&str; 2] = ["", "AllWorkers"];
/// The two controllers the operator's webhooks accept (`pkg/common/util/webhooks.go`).
const UPSTREAM_MANAGED_BY: [&str; 2] = ["kueue.x-k8s.io/multikueue", "kubeflow.org/training-operator"];

pub const JOB_NAME: &str = "run-policy.job-name";
pub const REPLICA_SPECS: &str = "run-policy.replica-specs";
pub const REPLICA_TYPE: &str = "run-policy.replica-type";
pub const CONTAINERS: &str = "run-policy.containers";
pub const IMAGE: &str = "run-policy.image";
pub const DEFAULT_CONTAINER: &str = "run-policy.default-container";
pub const MASTER_REPLICAS: &str = "run-policy.master-replicas";
pub const MASTER_REQUIRED: &str = "run-policy.master-required";
pub const CHIEF_OR_MASTER: &str = "run-policy.chief-or-master";
pub const REPLICAS: &str = "run-policy.replicas";
pub const PYTORCH_MASTER: &str = "run-policy.pytorch-master";
pub const RESTART_POLICY: &str = "run-policy.restart-policy";
pub const EXIT_CODE: &str = "run-policy.exit-code";
pub const CLEAN_POD_POLICY: &str = "run-policy.clean-pod-policy";
pub const MPI_CLEAN_POD_POLICY: &str = "run-policy.mpi-clean-pod-policy";
pub const SUCCESS_POLICY: &str = "run-policy.success-policy";
pub const TTL: &str = "run-policy.ttl";
pub const ACTIVE_DEADLINE: &str = "run-policy.active-deadline";
pub const BACKOFF_LIMIT: &str = "run-policy.backoff-limit";
pub const MANAGED_BY: &str = "run-policy.managed-by";
pub const MANAGED_BY_IMMUTABLE: &str = "run-policy.managed-by-immutable";
pub const ELASTIC_WORKER: &str = "run-policy.elastic-worker";
pub const NPROC_PER_NODE: &str = "run-policy.nproc-per-node";
pub const ELASTIC_REPLICAS: &str = "run-policy.elastic-replicas";
pub const ELASTIC_POLICY: &str = "run-policy.elastic-policy";
pub const SLOTS_PER_WORKER: &str = "run-policy.slots-per-worker";
pub const MAIN_CONTAINER: &str = "run-policy.main-container";
pub const MPI_IMPLEMENTATION: &str = "run-policy.mpi-implementation";
pub const LAUNCHER_CREATION_POLICY: &str = "run-policy.launcher-creation-policy";
pub const NUM_NODES: &str = "run-policy.num-nodes";
pub const DEFAULT_PORT: &str = "run-policy.default-port";
pub const PORTS: &str = "run-policy.ports";
pub const TRAINJOB_NAME: &str = "run-policy.trainjob-name";
pub const RUNTIME_REF: &str = "run-policy.runtime-ref";
pub const RUNTIME_EXISTS: &str = "run-policy.runtime-exists";
pub const RUNTIME_DEPRECATED: &str = "run-policy.runtime-deprecated";
pub const TRAINJOB_IMMUTABLE: &str = "run-policy.trainjob-immutable";
pub const INITIALIZERS: &str = "run-policy.initializers";
pub const RUNTIME_PATCHES: &str = "run-policy.runtime-patches";
pub const RESERVED_ENV: &str = "run-policy.reserved-env";
pub const ML_POLICY: &str = "run-policy.ml-policy";
pub const PRIORITY_CLASS: &str = "run-policy.priority-class";
pub const ANCESTOR_JOBS: &str = "run-policy.ancestor-jobs";

/// Every rule of the set, for documentation and the playground.
pub const RULES: &[RuleInfo] = &[
    RuleInfo { id: JOB_NAME, catalogue: "R-01", summary: "the job name is a DNS-1035 label (all kinds but MPIJob)" },
    RuleInfo { id: REPLICA_SPECS, catalogue: "R-02", summary: "the kind's replica-spec map is present and not empty" },
    RuleInfo { id: REPLICA_TYPE, catalogue: "R-03", summary: "replica types are the kind's own, spelled exactly" },
    RuleInfo { id: CONTAINERS, catalogue: "R-04", summary: "every replica spec has at least one container" },
    RuleInfo { id: IMAGE, catalogue: "R-05", summary: "every container has an image" },
    RuleInfo {
        id: DEFAULT_CONTAINER,
        catalogue: "R-06",
        summary: "each replica has the kind's default-named container (MPIJob: every container is named)",
    },
    RuleInfo {
        id: MASTER_REPLICAS,
        catalogue: "R-07, R-09, R-10",
        summary: "Master (PyTorch, XGBoost), Launcher (MPI), Chief/Master (TF) run exactly one replica",
    },
    RuleInfo { id: MASTER_REQUIRED, catalogue: "R-08, R-09", summary: "XGBoostJob has a Master, MPIJob a Launcher" },
    RuleInfo { id: CHIEF_OR_MASTER, catalogue: "R-10", summary: "a TFJob has at most one Chief or Master role" },
    RuleInfo {
        id: REPLICAS,
        catalogue: "R-11",
        summary: "replicas are not negative, and at least 1 where the kind needs them",
    },
    RuleInfo { id: PYTORCH_MASTER, catalogue: "R-12", summary: "warn when a non-elastic PyTorchJob has no Master" },
    RuleInfo {
        id: RESTART_POLICY,
        catalogue: "R-20",
        summary: "restartPolicy is Always, OnFailure, Never or ExitCode",
    },
    RuleInfo {
        id: EXIT_CODE,
        catalogue: "R-21",
        summary: "warn when ExitCode is used on a replica without the default-named container",
    },
    RuleInfo {
        id: CLEAN_POD_POLICY,
        catalogue: "R-22, setting allowedCleanPodPolicies",
        summary: "cleanPodPolicy is None, Running or All, and one the settings allow",
    },
    RuleInfo {
        id: MPI_CLEAN_POD_POLICY,
        catalogue: "R-23",
        summary: "MPIJob's deprecated spec.cleanPodPolicy agrees with runPolicy.cleanPodPolicy (and is a warning)",
    },
    RuleInfo { id: SUCCESS_POLICY, catalogue: "R-24", summary: "TFJob successPolicy is \"\" or AllWorkers" },
    RuleInfo {
        id: TTL,
        catalogue: "R-30, settings requireTtlSecondsAfterFinished, maxTtlSecondsAfterFinished",
        summary: "ttlSecondsAfterFinished is not negative, required and capped when the settings say so",
    },
    RuleInfo {
        id: ACTIVE_DEADLINE,
        catalogue: "R-30, setting maxActiveDeadlineSeconds",
        summary: "activeDeadlineSeconds is positive and under the cap",
    },
    RuleInfo {
        id: BACKOFF_LIMIT,
        catalogue: "R-30, setting maxBackoffLimit",
        summary: "backoffLimit is not negative and under the cap",
    },
    RuleInfo { id: MANAGED_BY, catalogue: "R-32", summary: "managedBy names an allowed controller (all kinds)" },
    RuleInfo { id: MANAGED_BY_IMMUTABLE, catalogue: "R-33", summary: "managedBy never changes (all kinds)" },
    RuleInfo { id: ELASTIC_WORKER, catalogue: "R-40", summary: "an elastic policy needs a Worker replica spec" },
    RuleInfo {
        id: NPROC_PER_NODE,
        catalogue: "R-41, R-42",
        summary: "elasticPolicy.nProcPerNode is deprecated and never used with spec.nprocPerNode, which is auto, cpu, gpu or a positive integer",
    },
    RuleInfo {
        id: ELASTIC_REPLICAS,
        catalogue: "R-43, R-45",
        summary: "1 <= minReplicas <= maxReplicas, and Worker replicas within them",
    },
    RuleInfo {
        id: ELASTIC_POLICY,
        catalogue: "R-44, R-45",
        summary: "rdzvBackend, rdzvPort, rdzvConf keys and maxRestarts are usable",
    },
    RuleInfo {
        id: SLOTS_PER_WORKER,
        catalogue: "R-50",
        summary: "MPIJob slotsPerWorker is at least 1 (v2beta1: at least 0)",
    },
    RuleInfo { id: MAIN_CONTAINER, catalogue: "R-51", summary: "MPIJob mainContainer names a Worker container" },
    RuleInfo {
        id: MPI_IMPLEMENTATION,
        catalogue: "MPI operator v2beta1",
        summary: "v2beta1 MPIJob: mpiImplementation is OpenMPI, Intel or MPICH",
    },
    RuleInfo {
        id: LAUNCHER_CREATION_POLICY,
        catalogue: "MPI operator v2beta1",
        summary: "v2beta1 MPIJob: launcherCreationPolicy is AtStartup or WaitForWorkersReady (stricter than upstream)",
    },
    RuleInfo {
        id: DEFAULT_PORT,
        catalogue: "R-60",
        summary: "the kind's default-named port is declared on the default container",
    },
    RuleInfo {
        id: PORTS,
        catalogue: "R-61",
        summary: "replica template ports have valid, unique names and numbers 1-65535",
    },
    RuleInfo {
        id: TRAINJOB_NAME,
        catalogue: "V2-01",
        summary: "Trainer v2 TrainJob: metadata.name is an RFC 1035 label of at most 63 characters",
    },
    RuleInfo {
        id: RUNTIME_REF,
        catalogue: "V2-02",
        summary: "TrainJob: runtimeRef names a runtime kind Trainer registers, and never changes",
    },
    RuleInfo {
        id: RUNTIME_EXISTS,
        catalogue: "V2-03",
        summary: "TrainJob: on create, the ClusterTrainingRuntime (or the TrainingRuntime in its namespace) it names exists",
    },
    RuleInfo {
        id: RUNTIME_DEPRECATED,
        catalogue: "V2-04",
        summary: "warn when a ClusterTrainingRuntime labelled trainer.kubeflow.org/support: deprecated is created or named",
    },
    RuleInfo {
        id: TRAINJOB_IMMUTABLE,
        catalogue: "V2-05",
        summary: "TrainJob: trainer, initializer and activeDeadlineSeconds never change once set",
    },
    RuleInfo {
        id: NUM_NODES,
        catalogue: "V2 numNodes",
        summary: "TrainJob: spec.trainer.numNodes is not negative (stricter than v2.3.0, as Trainer's main CRD)",
    },
    RuleInfo {
        id: INITIALIZERS,
        catalogue: "V2-06",
        summary: "TrainJob: storageUri is a URI, and a dataset or model initializer has its job, container and initializer volume in the runtime",
    },
    RuleInfo {
        id: RUNTIME_PATCHES,
        catalogue: "V2-07",
        summary: "TrainJob: each runtimePatches manager is a domain-prefixed path; patches name only jobs and containers the runtime has, set no env for node and initializer containers, and change only while suspended",
    },
    RuleInfo {
        id: RESERVED_ENV,
        catalogue: "V2-08",
        summary: "TrainJob: spec.trainer.env sets none of the env names the runtime's framework reserves (torch, MPI, XGBoost)",
    },
    RuleInfo {
        id: ML_POLICY,
        catalogue: "V2-09",
        summary: "runtime: one mlPolicy source, envInjection rules, Flux numProcPerNode; TrainJob: envInjection targets exist, MPI's launcher/node rule, Flux's numProcPerNode and reserved init container",
    },
    RuleInfo {
        id: PRIORITY_CLASS,
        catalogue: "V2-10",
        summary: "TrainJob on a Volcano runtime: every Pod template's priorityClassName exists (context-aware)",
    },
    RuleInfo {
        id: ANCESTOR_JOBS,
        catalogue: "V2-11",
        summary: "runtime: jobs labelled as trainer or initializer run one replica and have their required container; startupPolicy and dependsOn exclude each other",
    },
];

/// Settings of the runPolicy rule set.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    /// Every job must set `runPolicy.ttlSecondsAfterFinished` (or get it from
    /// `defaultTtlSecondsAfterFinished`), so finished jobs are cleaned up.
    pub require_ttl_seconds_after_finished: bool,
    /// Cap on `runPolicy.ttlSecondsAfterFinished` (when set).
    pub max_ttl_seconds_after_finished: Option<i32>,
    /// Cap on `runPolicy.activeDeadlineSeconds` (when set).
    pub max_active_deadline_seconds: Option<i64>,
    /// Cap on `runPolicy.backoffLimit` (when set).
    pub max_backoff_limit: Option<i32>,
    /// The `cleanPodPolicy` values jobs may use (an unset one counts as the operator's
    /// default `None`, or as `defaultCleanPodPolicy`). Unset: all three.
    pub allowed_clean_pod_policies: Option<Vec<String>>,
    /// The controllers `runPolicy.managedBy` may name.
    #[serde(deserialize_with = "crate::rules::read_names")]
    pub allowed_managed_by: Names,
    /// Filled into `runPolicy.ttlSecondsAfterFinished` when a job leaves it out.
    pub default_ttl_seconds_after_finished: Option<i32>,
    /// Filled into `runPolicy.cleanPodPolicy` when a job leaves it out (MPIJob: and leaves
    /// out the deprecated `spec.cleanPodPolicy` too).
    pub default_clean_pod_policy: Option<String>,
    /// Filled into each replica spec's `restartPolicy` when it is left out.
    pub default_restart_policy: Option<String>,
    /// Reject, rather than warn, when a cluster lookup fails (Trainer v2 runtimes and
    /// PriorityClasses).
    pub fail_on_lookup_error: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            require_ttl_seconds_after_finished: false,
            max_ttl_seconds_after_finished: None,
            max_active_deadline_seconds: None,
            max_backoff_limit: None,
            allowed_clean_pod_policies: None,
            allowed_managed_by: names(&UPSTREAM_MANAGED_BY),
            default_ttl_seconds_after_finished: None,
            default_clean_pod_policy: None,
            default_restart_policy: None,
            fail_on_lookup_error: false,
        }
    }
}

fn quoted<S: AsRef<str>>(values: &[S]) -> String {
    values.iter().map(|v| format!("{:?}", v.as_ref())).collect::<Vec<_>>().join(", ")
}

fn one_of(setting: &str, value: &str, supported: &[&str]) -> Result<(), String> {
    if supported.contains(&value) {
        Ok(())
    } else {
        Err(format!("{setting}: unsupported value {value:?}: supported values: {}", quoted(supported)))
    }
}

fn at_least<T: PartialOrd + std::fmt::Display>(setting: &str, value: Option<T>, min: T) -> Result<(), String> {
    match value {
        Some(v) if v < min => Err(format!("{setting}: must be at least {min}, got {v}")),
        _ => Ok(()),
    }
}

impl Settings {
    /// Whether the settings let a job use `policy` as its clean-pod policy.
    fn allows_clean_pod_policy(&self, policy: &str) -> bool {
        self.allowed_clean_pod_policies.as_ref().is_none_or(|allowed| allowed.iter().any(|a| a == policy))
    }
}

/// R-31's bounds on a run's deadline: a v1 job's `runPolicy.activeDeadlineSeconds`, a
/// TrainJob's `spec.activeDeadlineSeconds`.
fn check_active_deadline(settings: &Settings, path: Path, d: i64, min: i64, v: &mut Verdict) {
    if d < min {
        v.deny(ACTIVE_DEADLINE, FieldError::invalid(path, d, format!("must be greater than or equal to {min}")));
    } else if let Some(max) = settings.max_active_deadline_seconds.filter(|max| d > *max) {
        let detail = format!("must be less than or equal to {max} (settings.maxActiveDeadlineSeconds)");
        v.deny(ACTIVE_DEADLINE, FieldError::invalid(path, d, detail));
    }
}

/// R-31's bounds on retries: a v1 job's `runPolicy.backoffLimit`; a runtime's JobSet
/// `failurePolicy.maxRestarts` and its Job templates' `backoffLimit`.
fn check_backoff_limit(settings: &Settings, path: Path, b: i32, v: &mut Verdict) {
    if b < 0 {
        v.deny(BACKOFF_LIMIT, FieldError::invalid(path, b, "must be greater than or equal to 0"));
    } else if let Some(max) = settings.max_backoff_limit.filter(|max| b > *max) {
        let detail = format!("must be less than or equal to {max} (settings.maxBackoffLimit)");
        v.deny(BACKOFF_LIMIT, FieldError::invalid(path, b, detail));
    }
}

pub struct RunPolicyRules;

impl RuleSet for RunPolicyRules {
    const NAME: &'static str = "runPolicy";
    const KINDS: u32 = kinds::KUBEFLOW | kinds::TRAINER;
    type Settings = Settings;

    fn validate_settings(s: &Settings) -> Result<(), String> {
        at_least("maxTtlSecondsAfterFinished", s.max_ttl_seconds_after_finished, 0)?;
        at_least("maxActiveDeadlineSeconds", s.max_active_deadline_seconds, 1)?;
        at_least("maxBackoffLimit", s.max_backoff_limit, 0)?;
        at_least("defaultTtlSecondsAfterFinished", s.default_ttl_seconds_after_finished, 0)?;
        if let Some(allowed) = &s.allowed_clean_pod_policies {
            if allowed.is_empty() {
                return Err(format!(
                    "allowedCleanPodPolicies: must list at least one of {}",
                    quoted(&CLEAN_POD_POLICIES)
                ));
            }
            for (i, p) in allowed.iter().enumerate() {
                one_of(&format!("allowedCleanPodPolicies[{i}]"), p, &CLEAN_POD_POLICIES)?;
            }
        }
        if s.allowed_managed_by.is_empty() {
            return Err(format!(
                "allowedManagedBy: must list at least one controller (the operator's are {})",
                quoted(&UPSTREAM_MANAGED_BY)
            ));
        }
        if let Some(i) = s.allowed_managed_by.iter().position(|m| m.is_empty()) {
            return Err(format!("allowedManagedBy[{i}]: must not be empty"));
        }
        if let (Some(ttl), Some(max)) = (s.default_ttl_seconds_after_finished, s.max_ttl_seconds_after_finished)
            && ttl > max
        {
            return Err(format!(
                "defaultTtlSecondsAfterFinished: must be at most maxTtlSecondsAfterFinished ({max}), got {ttl}"
            ));
        }
        if let Some(p) = &s.default_clean_pod_policy {
            one_of("defaultCleanPodPolicy", p, &CLEAN_POD_POLICIES)?;
            if !s.allows_clean_pod_policy(p) {
                return Err(format!(
                    "defaultCleanPodPolicy: {p:?} is not in allowedCleanPodPolicies ({})",
                    quoted(s.allowed_clean_pod_policies.as_deref().unwrap_or_default())
                ));
            }
        }
        if let Some(p) = &s.default_restart_policy {
            one_of("defaultRestartPolicy", p, &RESTART_POLICIES)?;
        }
        Ok(())
    }

    /// No run-policy rule reads group specs: none are made for them.
    fn check(settings: &Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
        Self::check_groups(settings, review, &[], cluster)
    }

    fn check_groups(settings: &Settings, review: &Review, _: &[GroupSpec], cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        let old = review.old_object.as_ref();
        match &review.object {
            Resource::TrainJob(job) => {
                let old = match old {
                    Some(Resource::TrainJob(old)) => Some(old.as_ref()),
                    _ => None,
                };
                trainer::check_train_job(settings, job, old, &review.namespace, cluster, &mut v);
                return v;
            }
            Resource::Runtime(runtime) => {
                let kind = TrainerKind::from_kind(&review.kind.kind).unwrap_or(TrainerKind::TrainingRuntime);
                trainer::check_runtime(settings, runtime, kind, review.operation == Operation::Create, &mut v);
                return v;
            }
            _ => {}
        }
        let Resource::Kubeflow(job) = &review.object else { return v };
        if job.is_mpi_operator() {
            mpi_operator::check_name(job, &mut v);
            mpi_operator::check_replica_specs(job, &mut v);
            check_run_policy(settings, job, &mut v);
            mpi_operator::check_kind_fields(job, &mut v);
        } else {
            check_name(job, &mut v);
            check_replica_specs(settings, job, &mut v);
            check_run_policy(settings, job, &mut v);
            check_elastic_policy(job, &mut v);
            check_kind_fields(job, &mut v);
        }
        if let Some(Resource::Kubeflow(old)) = &review.old_object {
            check_update(job, old, &mut v);
        }
        v.mutated_object = apply_defaults(settings, job, &review.raw_object);
        v
    }
}

fn spec_path() -> Path {
    Path::new("spec")
}

fn map_path(kind: JobKind) -> Path {
    spec_path().child(kind.replica_specs_field())
}

fn run_policy_path() -> Path {
    spec_path().child("runPolicy")
}

#[cfg(test)]
mod tests;

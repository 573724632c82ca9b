//! Rule set 4, runPolicy: the replica specs, restart and clean-up policies, run limits,
//! `managedBy`, elastic policy and MPI settings of the six Kubeflow job kinds, with optional
//! defaulting. Ids and catalogue numbers (rules.md) are listed in [`RULES`].
//!
//! Where the training-operator's webhooks check something, the message is theirs, so users
//! see the same text whichever of the two caught it; MPIJob's controller-only checks and the
//! policy's own rules use apiserver field-error wording.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::cluster::Cluster;
use crate::engine::RuleSet;
use crate::field::{FieldError, Path};
use crate::kubeflow::{JobKind, KubeflowJob, ReplicaSpec, RunPolicy};
use crate::names;
use crate::pod::Container;
use crate::review::{Resource, Review};
use crate::rules::RuleInfo;
use crate::verdict::Verdict;

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
pub const DEFAULT_PORT: &str = "run-policy.default-port";
pub const PORTS: &str = "run-policy.ports";

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
    RuleInfo { id: SLOTS_PER_WORKER, catalogue: "R-50", summary: "MPIJob slotsPerWorker is at least 1" },
    RuleInfo { id: MAIN_CONTAINER, catalogue: "R-51", summary: "MPIJob mainContainer names a Worker container" },
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
    pub allowed_managed_by: Vec<String>,
    /// Filled into `runPolicy.ttlSecondsAfterFinished` when a job leaves it out.
    pub default_ttl_seconds_after_finished: Option<i32>,
    /// Filled into `runPolicy.cleanPodPolicy` when a job leaves it out (MPIJob: and leaves
    /// out the deprecated `spec.cleanPodPolicy` too).
    pub default_clean_pod_policy: Option<String>,
    /// Filled into each replica spec's `restartPolicy` when it is left out.
    pub default_restart_policy: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            require_ttl_seconds_after_finished: false,
            max_ttl_seconds_after_finished: None,
            max_active_deadline_seconds: None,
            max_backoff_limit: None,
            allowed_clean_pod_policies: None,
            allowed_managed_by: UPSTREAM_MANAGED_BY.iter().map(|s| s.to_string()).collect(),
            default_ttl_seconds_after_finished: None,
            default_clean_pod_policy: None,
            default_restart_policy: None,
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

pub struct RunPolicyRules;

impl RuleSet for RunPolicyRules {
    const NAME: &'static str = "runPolicy";
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

    fn check(settings: &Settings, review: &Review, _cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        let Resource::Kubeflow(job) = &review.object else { return v };
        check_name(job, &mut v);
        check_replica_specs(settings, job, &mut v);
        check_run_policy(settings, job, &mut v);
        check_elastic_policy(job, &mut v);
        check_kind_fields(job, &mut v);
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

/// R-01. With `generateName` and no name yet (a mutating webhook runs before the apiserver
/// generates the name), the prefix is checked: the generated name is it plus 5 lowercase
/// alphanumerics, with the prefix cut to 58 characters.
fn check_name(job: &KubeflowJob, v: &mut Verdict) {
    // The MPI controller does not check the name; MPIJob names are DNS subdomains.
    if job.kind == JobKind::MPIJob {
        return;
    }
    let meta = &job.metadata;
    let name = meta.name.as_deref().unwrap_or_default();
    let (path, value, errors) = match meta.generate_name.as_deref() {
        Some(prefix) if name.is_empty() && !prefix.is_empty() => {
            let generated: String = prefix.chars().take(58).chain("x0000".chars()).collect();
            (Path::new("metadata").child("generateName"), prefix, names::is_dns1035_label(&generated))
        }
        _ => (Path::new("metadata").child("name"), name, names::is_dns1035_label(name)),
    };
    if !errors.is_empty() {
        v.deny(JOB_NAME, FieldError::invalid(path, value, format!("should match: {}", errors.join(","))));
    }
}

/// R-02..R-12, R-20, R-21, R-60, R-61: the replica-spec map and each replica spec in it.
fn check_replica_specs(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
    let kind = job.kind;
    let map = map_path(kind);
    let Some(specs) = job.replica_specs().filter(|m| m.len_in_object() > 0) else {
        v.deny(REPLICA_SPECS, FieldError::required(map, "must be required"));
        return;
    };
    // Past the maximum only the specs of known replica types were read: one error for the
    // rest, then those specs are checked as usual.
    if specs.is_over_maximum() {
        v.deny(REPLICA_TYPE, FieldError::too_many(map.clone(), specs.len_in_object(), kind.replica_types().len()));
    }
    for (replica_type, spec) in specs {
        let path = map.key(replica_type);
        if !kind.replica_types().contains(&replica_type.as_str()) {
            v.deny(REPLICA_TYPE, FieldError::not_supported(path.clone(), replica_type, kind.replica_types()));
        }
        // Built only when something is reported: a map may hold thousands of replica specs.
        let containers_path = || path.child("template").child("spec").child("containers");
        let containers =
            spec.as_ref().and_then(|s| s.template.spec.as_ref()).map(|p| p.containers.as_slice()).unwrap_or_default();
        if containers.is_empty() {
            v.deny(CONTAINERS, FieldError::required(containers_path(), "must be specified"));
        }
        let restart_policy = spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref())
            .filter(|r| !r.is_empty())
            .or(settings.default_restart_policy.as_deref());
        check_containers(kind, &path, containers_path, containers, restart_policy, v);
        let Some(spec) = spec else { continue };
        check_replica_count(kind, replica_type, spec, &path, v);
        if let Some(r) = spec.restart_policy.as_deref().filter(|r| !r.is_empty() && !RESTART_POLICIES.contains(r)) {
            v.deny(RESTART_POLICY, FieldError::not_supported(path.child("restartPolicy"), r, &RESTART_POLICIES));
        }
    }

    match kind {
        JobKind::XGBoostJob | JobKind::MPIJob => {
            let required = if kind == JobKind::MPIJob { "Launcher" } else { "Master" };
            if !specs.contains_key(required) {
                v.deny(MASTER_REQUIRED, FieldError::required(map.key(required), "must be present"));
            }
        }
        JobKind::TFJob if specs.keys().filter(|t| matches!(t.as_str(), "Chief" | "Master")).count() > 1 => {
            v.deny(CHIEF_OR_MASTER, FieldError::forbidden(map, "must not have more than 1 Chief or Master role"));
        }
        JobKind::PyTorchJob if job.elastic_bounds().is_none() && !specs.contains_key("Master") => v.warn(
            PYTORCH_MASTER,
            map.key("Master"),
            "a PyTorchJob without elasticPolicy needs a Master: the operator sets MASTER_ADDR, MASTER_PORT and RANK only when one exists, so the workers cannot rendezvous",
        ),
        _ => {}
    }
}

/// The kind checks its default container (R-06); MPIJob only needs names on its containers.
fn requires_default_container(kind: JobKind) -> bool {
    kind != JobKind::MPIJob
}

/// R-05, R-06, R-21, R-60, R-61 for one replica's containers.
fn check_containers(
    kind: JobKind,
    replica_path: &Path,
    path: impl Fn() -> Path,
    containers: &[Container],
    restart_policy: Option<&str>,
    v: &mut Verdict,
) {
    let default = kind.default_container_name();
    for (i, c) in containers.iter().enumerate() {
        if c.image.as_deref().is_none_or(str::is_empty) {
            v.deny(IMAGE, FieldError::required(path().index(i).child("image"), "must be required"));
        }
        if !requires_default_container(kind) && c.name.is_empty() {
            v.deny(DEFAULT_CONTAINER, FieldError::required(path().index(i).child("name"), ""));
        }
        if c.ports.as_ref().is_some_and(|p| !p.is_empty()) {
            check_ports(kind, c, &path().index(i), v);
        }
    }
    if containers.iter().any(|c| c.name == default) {
        return;
    }
    if requires_default_container(kind) {
        // The Paddle webhook alone quotes the name.
        let name = if kind == JobKind::PaddleJob { format!("{default:?}") } else { default.to_string() };
        v.deny(
            DEFAULT_CONTAINER,
            FieldError::required(path(), format!("must have at least one container with name {name}")),
        );
    } else if restart_policy == Some("ExitCode") && !containers.is_empty() {
        v.warn(
            EXIT_CODE,
            replica_path.child("restartPolicy"),
            format!(
                "ExitCode reads the exit code of the container named {default:?}, which this replica does not have (it has {}), so the operator cannot tell permanent from retryable failures",
                quoted(containers.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().as_slice())
            ),
        );
    }
}

/// R-60, R-61 for one container (`path` is the container's).
fn check_ports(kind: JobKind, c: &Container, path: &Path, v: &mut Verdict) {
    let default_container = kind.default_container_name();
    let mut seen = std::collections::HashSet::new();
    for (j, port) in c.ports.iter().flatten().enumerate() {
        let path = path.child("ports").index(j);
        if !(1..=65535).contains(&port.container_port) {
            v.deny(
                PORTS,
                FieldError::invalid(
                    path.child("containerPort"),
                    port.container_port,
                    "must be between 1 and 65535, inclusive",
                ),
            );
        }
        let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) else { continue };
        let name_path = path.child("name");
        v.deny_all(PORTS, names::check(&name_path, name, false, names::is_port_name));
        if !seen.insert(name) {
            v.deny(PORTS, FieldError::duplicate(name_path.clone(), name));
        }
        if kind.default_port_name() == Some(name) && c.name != default_container {
            v.deny(
                DEFAULT_PORT,
                FieldError::invalid(
                    name_path,
                    name,
                    format!(
                        "the operator reads this port from the container named {default_container:?}, so declare it there"
                    ),
                ),
            );
        }
    }
}

/// R-07, R-09, R-10 (replicas of the single-pod roles), R-11.
fn check_replica_count(kind: JobKind, replica_type: &str, spec: &ReplicaSpec, path: &Path, v: &mut Verdict) {
    let path = || path.child("replicas");
    let single = match (kind, replica_type) {
        // The webhooks run before defaulting, so an unset count fails there too.
        (JobKind::PyTorchJob | JobKind::XGBoostJob, "Master") => Some(true),
        (JobKind::MPIJob, "Launcher") | (JobKind::TFJob, "Chief" | "Master") => Some(false),
        _ => None,
    };
    if let Some(explicit) = single {
        if spec.replicas.is_some_and(|n| n != 1) || (explicit && spec.replicas.is_none()) {
            v.deny(MASTER_REPLICAS, FieldError::forbidden(path(), "must be 1"));
        }
        return;
    }
    let Some(n) = spec.replicas else { return };
    let needs_one = kind == JobKind::PyTorchJob
        || (replica_type == "Worker"
            && matches!(kind, JobKind::TFJob | JobKind::JAXJob | JobKind::PaddleJob | JobKind::XGBoostJob));
    if needs_one && n < 1 {
        v.deny(REPLICAS, FieldError::forbidden(path(), "must be at least 1"));
    } else if n < 0 {
        v.deny(REPLICAS, FieldError::invalid(path(), n, "must be greater than or equal to 0"));
    }
}

/// The clean-pod policy a job sets, with its path: `runPolicy.cleanPodPolicy`, else MPIJob's
/// deprecated `spec.cleanPodPolicy`.
fn own_clean_pod_policy(job: &KubeflowJob) -> Option<(Path, &str)> {
    if let Some(p) = job.run_policy().and_then(|r| r.clean_pod_policy.as_deref()) {
        return Some((run_policy_path().child("cleanPodPolicy"), p));
    }
    let p = job.as_mpi()?.clean_pod_policy.as_deref()?;
    Some((spec_path().child("cleanPodPolicy"), p))
}

/// R-22, R-23, R-30, R-32 and the organisational limits.
fn check_run_policy(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
    let empty = RunPolicy::default();
    let rp = job.run_policy().unwrap_or(&empty);
    let rp_path = run_policy_path();

    check_clean_pod_policy(settings, job, v);

    let ttl_path = rp_path.child("ttlSecondsAfterFinished");
    match rp.ttl_seconds_after_finished {
        Some(t) if t < 0 => v.deny(TTL, FieldError::invalid(ttl_path, t, "must be greater than or equal to 0")),
        Some(t) => {
            if let Some(max) = settings.max_ttl_seconds_after_finished.filter(|max| t > *max) {
                v.deny(
                    TTL,
                    FieldError::invalid(
                        ttl_path,
                        t,
                        format!("must be less than or equal to {max} (settings.maxTtlSecondsAfterFinished)"),
                    ),
                );
            }
        }
        None if settings.require_ttl_seconds_after_finished
            && settings.default_ttl_seconds_after_finished.is_none() =>
        {
            v.deny(
                TTL,
                FieldError::required(
                    ttl_path,
                    "finished jobs must be cleaned up (settings.requireTtlSecondsAfterFinished)",
                ),
            );
        }
        None => {}
    }

    if let Some(d) = rp.active_deadline_seconds {
        let path = rp_path.child("activeDeadlineSeconds");
        if d < 1 {
            v.deny(ACTIVE_DEADLINE, FieldError::invalid(path, d, "must be greater than or equal to 1"));
        } else if let Some(max) = settings.max_active_deadline_seconds.filter(|max| d > *max) {
            v.deny(
                ACTIVE_DEADLINE,
                FieldError::invalid(
                    path,
                    d,
                    format!("must be less than or equal to {max} (settings.maxActiveDeadlineSeconds)"),
                ),
            );
        }
    }

    if let Some(b) = rp.backoff_limit {
        let path = rp_path.child("backoffLimit");
        if b < 0 {
            v.deny(BACKOFF_LIMIT, FieldError::invalid(path, b, "must be greater than or equal to 0"));
        } else if let Some(max) = settings.max_backoff_limit.filter(|max| b > *max) {
            v.deny(
                BACKOFF_LIMIT,
                FieldError::invalid(path, b, format!("must be less than or equal to {max} (settings.maxBackoffLimit)")),
            );
        }
    }

    if let Some(m) = rp.managed_by.as_deref().filter(|m| !settings.allowed_managed_by.iter().any(|a| a == m)) {
        v.deny(
            MANAGED_BY,
            FieldError::not_supported(rp_path.child("managedBy"), m, settings.allowed_managed_by.as_slice()),
        );
    }
}

/// R-22, R-23 and `allowedCleanPodPolicies`.
fn check_clean_pod_policy(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
    let run_policy_value = job.run_policy().and_then(|r| r.clean_pod_policy.as_deref());
    let rp_path = run_policy_path().child("cleanPodPolicy");
    let deprecated = job.as_mpi().and_then(|m| m.clean_pod_policy.as_deref());
    let deprecated_path = spec_path().child("cleanPodPolicy");

    for (path, value) in [(&rp_path, run_policy_value), (&deprecated_path, deprecated)] {
        if let Some(p) = value.filter(|p| !CLEAN_POD_POLICIES.contains(p)) {
            v.deny(CLEAN_POD_POLICY, FieldError::not_supported(path.clone(), p, &CLEAN_POD_POLICIES));
        }
    }
    if let Some(old) = deprecated {
        v.warn(
            MPI_CLEAN_POD_POLICY,
            deprecated_path.clone(),
            "is deprecated, use spec.runPolicy.cleanPodPolicy instead",
        );
        if let Some(new) = run_policy_value.filter(|new| *new != old) {
            v.deny(
                MPI_CLEAN_POD_POLICY,
                FieldError::invalid(
                    deprecated_path,
                    old,
                    format!("must equal spec.runPolicy.cleanPodPolicy ({new:?}) when both are set"),
                ),
            );
        }
    }

    let Some(allowed) = &settings.allowed_clean_pod_policies else { return };
    match own_clean_pod_policy(job) {
        Some((path, p)) if CLEAN_POD_POLICIES.contains(&p) && !settings.allows_clean_pod_policy(p) => {
            v.deny(
                CLEAN_POD_POLICY,
                FieldError::invalid(
                    path,
                    p,
                    format!("settings.allowedCleanPodPolicies allows only {}", quoted(allowed.as_slice())),
                ),
            );
        }
        Some(_) => {}
        // defaultCleanPodPolicy, when set, is one of the allowed ones (checked at load).
        None if settings.default_clean_pod_policy.is_none()
            && !settings.allows_clean_pod_policy(DEFAULT_CLEAN_POD_POLICY) =>
        {
            v.deny(
                CLEAN_POD_POLICY,
                FieldError::required(
                    rp_path,
                    format!(
                        "unset means {DEFAULT_CLEAN_POD_POLICY:?}, and settings.allowedCleanPodPolicies allows only {}",
                        quoted(allowed.as_slice())
                    ),
                ),
            );
        }
        None => {}
    }
}

/// R-40..R-45: PyTorch and Paddle elastic policies.
fn check_elastic_policy(job: &KubeflowJob, v: &mut Verdict) {
    let ep = spec_path().child("elasticPolicy");
    if let Some(py) = job.as_pytorch() {
        check_nproc_per_node(
            py.elastic_policy.as_ref().and_then(|e| e.n_proc_per_node),
            py.nproc_per_node.as_deref(),
            v,
        );
        if let Some(e) = &py.elastic_policy {
            if let Some(b) = e.rdzv_backend.as_deref().filter(|b| !RDZV_BACKENDS.contains(b)) {
                v.deny(ELASTIC_POLICY, FieldError::not_supported(ep.child("rdzvBackend"), b, &RDZV_BACKENDS));
            }
            if let Some(p) = e.rdzv_port.filter(|p| !(1..=65535).contains(p)) {
                v.deny(
                    ELASTIC_POLICY,
                    FieldError::invalid(ep.child("rdzvPort"), p, "must be between 1 and 65535, inclusive"),
                );
            }
            for (i, c) in e.rdzv_conf.iter().flatten().enumerate() {
                if c.key.as_deref().is_none_or(str::is_empty) {
                    v.deny(ELASTIC_POLICY, FieldError::required(ep.child("rdzvConf").index(i).child("key"), ""));
                }
            }
        }
    }
    let Some(bounds) = job.elastic_bounds() else { return };
    if let Some(n) = job.elastic_max_restarts().filter(|n| *n < 0) {
        v.deny(ELASTIC_POLICY, FieldError::invalid(ep.child("maxRestarts"), n, "must be greater than or equal to 0"));
    }

    let map = map_path(job.kind);
    let worker = job.replica_specs().and_then(|m| m.get("Worker"));
    if worker.is_none() {
        v.deny(ELASTIC_WORKER, FieldError::required(map.key("Worker"), "must be configured if elastic policy is used"));
    }

    let (min, max) = (bounds.min_replicas, bounds.max_replicas);
    let mut usable = true;
    for (field, value) in [("minReplicas", min), ("maxReplicas", max)] {
        if let Some(n) = value.filter(|n| *n < 1) {
            v.deny(ELASTIC_REPLICAS, FieldError::invalid(ep.child(field), n, "must be greater than or equal to 1"));
            usable = false;
        }
    }
    if let (Some(min), Some(max)) = (min, max)
        && usable
        && max < min
    {
        v.deny(
            ELASTIC_REPLICAS,
            FieldError::invalid(
                ep.child("maxReplicas"),
                max,
                format!("must be greater than or equal to spec.elasticPolicy.minReplicas ({min})"),
            ),
        );
        usable = false;
    }
    // Defaulting fills a missing bound from the other one; with neither, both become the
    // Worker count, which then always fits.
    let (Some(low), Some(high)) = (min.or(max), max.or(min)) else { return };
    if let Some(Some(w)) = worker
        && usable
    {
        let n = job.replica_count("Worker", w);
        if n < low || n > high {
            v.deny(
                ELASTIC_REPLICAS,
                FieldError::invalid(
                    map.key("Worker").child("replicas"),
                    n,
                    format!("must be between the elastic policy's minReplicas ({low}) and maxReplicas ({high})"),
                ),
            );
        }
    }
}

/// R-41, R-42.
fn check_nproc_per_node(deprecated: Option<i32>, nproc_per_node: Option<&str>, v: &mut Verdict) {
    let spec = spec_path();
    if let Some(n) = deprecated {
        let path = spec.child("elasticPolicy").child("nProcPerNode");
        v.warn(NPROC_PER_NODE, path.clone(), "is deprecated, use spec.nprocPerNode instead");
        if nproc_per_node.is_some() {
            v.deny(NPROC_PER_NODE, FieldError::forbidden(path, "must not be used with spec.nprocPerNode"));
        } else if n < 1 {
            v.deny(NPROC_PER_NODE, FieldError::invalid(path, n, "must be greater than or equal to 1"));
        }
    }
    if let Some(s) = nproc_per_node
        && !matches!(s, "auto" | "cpu" | "gpu")
        && !s.parse::<i32>().is_ok_and(|n| n > 0)
    {
        v.deny(
            NPROC_PER_NODE,
            FieldError::invalid(
                spec.child("nprocPerNode"),
                s,
                "must be \"auto\", \"cpu\", \"gpu\" or a positive integer",
            ),
        );
    }
}

/// R-24 (TF), R-50, R-51 (MPI).
fn check_kind_fields(job: &KubeflowJob, v: &mut Verdict) {
    let spec = spec_path();
    if let Some(p) = job.as_tf().and_then(|tf| tf.success_policy.as_deref()).filter(|p| !SUCCESS_POLICIES.contains(p)) {
        v.deny(SUCCESS_POLICY, FieldError::not_supported(spec.child("successPolicy"), p, &SUCCESS_POLICIES));
    }
    let Some(mpi) = job.as_mpi() else { return };
    if let Some(n) = mpi.slots_per_worker.filter(|n| *n < 1) {
        v.deny(
            SLOTS_PER_WORKER,
            FieldError::invalid(spec.child("slotsPerWorker"), n, "must be greater than or equal to 1"),
        );
    }
    let Some(main) = mpi.main_container.as_deref().filter(|m| !m.is_empty()) else { return };
    let Some(worker) = job.replicas().find(|(t, _)| t.as_str() == "Worker").map(|(_, s)| s) else { return };
    let names: Vec<&str> =
        worker.template.spec.iter().flat_map(|p| p.containers.iter()).map(|c| c.name.as_str()).collect();
    if !names.is_empty() && !names.contains(&main) {
        v.deny(
            MAIN_CONTAINER,
            FieldError::invalid(
                spec.child("mainContainer"),
                main,
                format!(
                    "must name a container of spec.mpiReplicaSpecs[Worker] ({}): the launcher runs the MPI processes in it",
                    quoted(names.as_slice())
                ),
            ),
        );
    }
}

/// R-33: `managedBy` never changes, for every kind (the PyTorch webhook compares the new
/// object with itself, JAX and MPI have no check).
fn check_update(job: &KubeflowJob, old: &KubeflowJob, v: &mut Verdict) {
    let managed_by = |j: &KubeflowJob| j.run_policy().and_then(|r| r.managed_by.clone());
    let new = managed_by(job);
    if new != managed_by(old) {
        // apimachinery prints an unset pointer as "null".
        let shown = new.unwrap_or_else(|| "null".to_string());
        v.deny(
            MANAGED_BY_IMMUTABLE,
            FieldError::invalid(run_policy_path().child("managedBy"), &shown, "field is immutable"),
        );
    }
}

/// The job with the configured defaults filled in, or `None` when nothing was missing.
/// Edits a copy of the object as received, so the patch holds only the filled-in fields.
fn apply_defaults(settings: &Settings, job: &KubeflowJob, raw: &str) -> Option<Value> {
    // (path to the object, key, value) for each default to set.
    let mut defaults: Vec<(Vec<&str>, &str, Value)> = Vec::new();
    let rp = job.run_policy();
    if let Some(ttl) = settings.default_ttl_seconds_after_finished
        && rp.is_none_or(|r| r.ttl_seconds_after_finished.is_none())
    {
        defaults.push((vec!["spec", "runPolicy"], "ttlSecondsAfterFinished", Value::from(ttl)));
    }
    if let Some(p) = &settings.default_clean_pod_policy
        && own_clean_pod_policy(job).is_none()
    {
        defaults.push((vec!["spec", "runPolicy"], "cleanPodPolicy", Value::from(p.as_str())));
    }
    if let Some(r) = &settings.default_restart_policy {
        let field = job.kind.replica_specs_field();
        for (replica_type, spec) in job.replicas() {
            if spec.restart_policy.as_deref().is_none_or(str::is_empty) {
                defaults.push((vec!["spec", field, replica_type], "restartPolicy", Value::from(r.as_str())));
            }
        }
    }
    if defaults.is_empty() {
        return None;
    }
    // Only now is the object read as JSON: most requests need no default.
    let mut out: Value = serde_json::from_str(raw).ok()?;
    let mut changed = false;
    for (path, key, value) in defaults {
        changed |= set_field(&mut out, &path, key, value);
    }
    changed.then_some(out)
}

/// Sets `key` in the object at `path`, creating missing (or null) objects on the way.
/// Returns false, changing nothing, when something on the way is not an object.
fn set_field(root: &mut Value, path: &[&str], key: &str, value: Value) -> bool {
    let mut current = root;
    for segment in path {
        let Value::Object(map) = current else { return false };
        let next = map.entry(segment.to_string()).or_insert(Value::Null);
        if next.is_null() {
            *next = Value::Object(Map::new());
        }
        current = next;
    }
    let Value::Object(map) = current else { return false };
    map.insert(key.to_string(), value);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::MemoryCluster;
    use crate::engine::parse_settings;
    use crate::kubeflow::MAX_REPLICA_MAP_ENTRIES;
    use serde_json::json;

    fn container(name: &str) -> Value {
        json!({"name": name, "image": "registry.example.com/train:1"})
    }

    fn replica(replicas: i64, container_name: &str) -> Value {
        json!({"replicas": replicas, "template": {"spec": {"containers": [container(container_name)]}}})
    }

    /// A valid job of `kind` (the minimal shapes of rules.md), for tests to break.
    fn valid(kind: &str) -> Value {
        let (map, specs) = match kind {
            "TFJob" => ("tfReplicaSpecs", json!({"Worker": replica(2, "tensorflow")})),
            "PyTorchJob" => {
                ("pytorchReplicaSpecs", json!({"Master": replica(1, "pytorch"), "Worker": replica(2, "pytorch")}))
            }
            "MPIJob" => ("mpiReplicaSpecs", json!({"Launcher": replica(1, "mpi"), "Worker": replica(2, "mpi")})),
            "JAXJob" => ("jaxReplicaSpecs", json!({"Worker": replica(2, "jax")})),
            "PaddleJob" => ("paddleReplicaSpecs", json!({"Worker": replica(2, "paddle")})),
            "XGBoostJob" => {
                ("xgbReplicaSpecs", json!({"Master": replica(1, "xgboost"), "Worker": replica(2, "xgboost")}))
            }
            other => panic!("no such kind {other}"),
        };
        json!({"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "train", "namespace": "ml"},
               "spec": {map: specs}})
    }

    fn review(operation: &str, object: &Value, old: Option<&Value>) -> Review<'static> {
        let request = json!({"operation": operation, "object": object, "oldObject": old});
        crate::review::review_request(&request).unwrap().unwrap()
    }

    fn run_with(settings: Value, object: &Value) -> Verdict {
        let settings = parse_settings::<RunPolicyRules>(&settings).unwrap();
        RunPolicyRules::check(&settings, &review("CREATE", object, None), &MemoryCluster::default())
    }

    fn run(object: &Value) -> Verdict {
        run_with(Value::Null, object)
    }

    fn messages(v: &Verdict) -> Vec<String> {
        v.violations.iter().map(|x| x.to_string()).collect()
    }

    fn warnings(v: &Verdict) -> Vec<String> {
        v.warning_messages()
    }

    #[test]
    fn the_minimal_jobs_pass_clean() {
        for kind in JobKind::ALL {
            let verdict = run(&valid(kind.name()));
            assert_eq!(verdict, Verdict::default(), "{}", kind.name());
        }
    }

    #[test]
    fn job_names_are_dns1035_labels_except_for_mpi() {
        let mut job = valid("TFJob");
        job["metadata"]["name"] = json!("1-train");
        assert_eq!(
            messages(&run(&job)),
            [format!(
                "metadata.name: Invalid value: \"1-train\": should match: {} [run-policy.job-name]",
                names::is_dns1035_label("1-train")[0]
            )]
        );
        job["metadata"]["name"] = json!("A".repeat(64));
        let both = names::is_dns1035_label(&"A".repeat(64)).join(",");
        assert!(both.starts_with("must be no more than 63 characters,a DNS-1035 label"), "{both}");
        assert_eq!(
            messages(&run(&job)),
            [format!(
                "metadata.name: Invalid value: \"{}\": should match: {both} [run-policy.job-name]",
                "A".repeat(64)
            )]
        );
        let mut mpi = valid("MPIJob");
        mpi["metadata"]["name"] = json!("1-train");
        assert!(run(&mpi).accepted());
    }

    #[test]
    fn generate_name_is_checked_when_there_is_no_name_yet() {
        let mut job = valid("PyTorchJob");
        job["metadata"] = json!({"generateName": "train-", "namespace": "ml"});
        assert!(run(&job).accepted());
        job["metadata"]["generateName"] = json!("x".repeat(80));
        assert!(run(&job).accepted(), "the apiserver cuts long prefixes");
        job["metadata"]["generateName"] = json!("9train-");
        let v = run(&job);
        assert_eq!(v.violations.len(), 1);
        assert!(
            messages(&v)[0]
                .starts_with("metadata.generateName: Invalid value: \"9train-\": should match: a DNS-1035 label"),
            "{:?}",
            messages(&v)
        );
        job["metadata"] = json!({"namespace": "ml"});
        assert!(messages(&run(&job))[0].starts_with("metadata.name: Invalid value: \"\": should match: a DNS-1035"));
    }

    #[test]
    fn replica_spec_maps_are_required() {
        for kind in JobKind::ALL {
            let mut job = valid(kind.name());
            job["spec"] = json!({});
            assert_eq!(
                messages(&run(&job)),
                [format!(
                    "spec.{}: Required value: must be required [run-policy.replica-specs]",
                    kind.replica_specs_field()
                )]
            );
            job["spec"][kind.replica_specs_field()] = json!({});
            assert_eq!(run(&job).violations.len(), 1, "an empty map runs nothing");
        }
    }

    #[test]
    fn replica_types_are_the_kinds_own() {
        let mut job = valid("PyTorchJob");
        job["spec"]["pytorchReplicaSpecs"]["worker"] = replica(1, "pytorch");
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.pytorchReplicaSpecs[worker]: Unsupported value: "worker": supported values: "Master", "Worker" [run-policy.replica-type]"#
            ]
        );
        let mut tf = valid("TFJob");
        tf["spec"]["tfReplicaSpecs"]["Trainer"] = replica(1, "tensorflow");
        assert_eq!(
            messages(&run(&tf)),
            [
                r#"spec.tfReplicaSpecs[Trainer]: Unsupported value: "Trainer": supported values: "PS", "Worker", "Chief", "Master", "Evaluator" [run-policy.replica-type]"#
            ]
        );
        let mut mpi = valid("MPIJob");
        mpi["spec"]["mpiReplicaSpecs"]["Master"] = replica(1, "mpi");
        assert_eq!(
            messages(&run(&mpi)),
            [
                r#"spec.mpiReplicaSpecs[Master]: Unsupported value: "Master": supported values: "Launcher", "Worker" [run-policy.replica-type]"#
            ]
        );
        let mut jax = valid("JAXJob");
        jax["spec"]["jaxReplicaSpecs"]["Master"] = replica(1, "jax");
        assert_eq!(run(&jax).violations.len(), 1);
    }

    #[test]
    fn a_map_past_its_maximum_is_too_many_and_its_known_types_are_still_checked() {
        let mut job = valid("PyTorchJob");
        let specs = &mut job["spec"]["pytorchReplicaSpecs"];
        // With its Master and Worker, the map is at the maximum: each unknown type is its own error.
        for i in 0..MAX_REPLICA_MAP_ENTRIES - 2 {
            specs[format!("Worker{i}")] = replica(1, "pytorch");
        }
        let errors = messages(&run(&job));
        assert_eq!(errors.len(), 14, "{errors:?}");
        assert_eq!(
            errors[0],
            r#"spec.pytorchReplicaSpecs[Worker0]: Unsupported value: "Worker0": supported values: "Master", "Worker" [run-policy.replica-type]"#
        );
        // Past it, one error; a known type of another kind is still read and reported, and
        // the kind's own types are checked as usual.
        let specs = &mut job["spec"]["pytorchReplicaSpecs"];
        for i in MAX_REPLICA_MAP_ENTRIES - 2..9_998 {
            specs[format!("Worker{i}")] = replica(1, "pytorch");
        }
        specs["Chief"] = replica(1, "pytorch");
        specs["Worker"]["template"]["spec"]["containers"][0]["image"] = json!("");
        assert_eq!(
            messages(&run(&job)),
            [
                "spec.pytorchReplicaSpecs: Too many: 10001: must have at most 2 items [run-policy.replica-type]",
                r#"spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief": supported values: "Master", "Worker" [run-policy.replica-type]"#,
                "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required [run-policy.image]",
            ]
        );
    }

    #[test]
    fn containers_images_and_default_names_match_the_webhooks() {
        let mut job = valid("XGBoostJob");
        job["spec"]["xgbReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = json!([]);
        // Like the webhook: no containers is both "specified" and "default name" missing.
        assert_eq!(
            messages(&run(&job)),
            [
                "spec.xgbReplicaSpecs[Worker].template.spec.containers: Required value: must be specified [run-policy.containers]",
                "spec.xgbReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name xgboost [run-policy.default-container]",
            ]
        );
        job["spec"]["xgbReplicaSpecs"]["Worker"] = Value::Null;
        assert_eq!(run(&job).violations.len(), 2);
        let mut paddle = valid("PaddleJob");
        paddle["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] =
            json!([{"name": "main", "image": ""}]);
        assert_eq!(
            messages(&run(&paddle)),
            [
                "spec.paddleReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required [run-policy.image]",
                r#"spec.paddleReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name "paddle" [run-policy.default-container]"#,
            ]
        );
    }

    #[test]
    fn mpi_needs_named_containers_not_the_default_name() {
        let mut job = valid("MPIJob");
        job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] =
            json!([{"name": "worker", "image": "horovod/horovod:0.28.1"}, {"name": "", "image": "x"}]);
        assert_eq!(
            messages(&run(&job)),
            [
                "spec.mpiReplicaSpecs[Worker].template.spec.containers[1].name: Required value [run-policy.default-container]"
            ]
        );
        assert!(warnings(&run(&job)).is_empty(), "no ExitCode, no warning");
    }

    #[test]
    fn exit_code_without_the_default_container_is_a_warning() {
        let mut job = valid("MPIJob");
        job["spec"]["mpiReplicaSpecs"]["Worker"] = replica(2, "mpi-worker");
        job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = json!("ExitCode");
        let v = run(&job);
        assert!(v.accepted());
        assert_eq!(
            warnings(&v),
            [
                r#"spec.mpiReplicaSpecs[Worker].restartPolicy: ExitCode reads the exit code of the container named "mpi", which this replica does not have (it has "mpi-worker"), so the operator cannot tell permanent from retryable failures [run-policy.exit-code]"#
            ]
        );
        // A defaulted ExitCode counts too.
        job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = Value::Null;
        assert_eq!(warnings(&run_with(json!({"defaultRestartPolicy": "ExitCode"}), &job)).len(), 1);
        assert!(warnings(&run(&job)).is_empty());
    }

    #[test]
    fn single_pod_roles_run_one_replica() {
        let mut job = valid("PyTorchJob");
        job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!(2);
        assert_eq!(
            messages(&run(&job)),
            ["spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
        );
        job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = Value::Null;
        assert_eq!(run(&job).violations.len(), 1, "the webhook runs before defaulting: unset fails");
        let mut xgb = valid("XGBoostJob");
        xgb["spec"]["xgbReplicaSpecs"]["Master"].as_object_mut().unwrap().remove("replicas");
        assert_eq!(
            messages(&run(&xgb)),
            ["spec.xgbReplicaSpecs[Master].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
        );
        let mut mpi = valid("MPIJob");
        mpi["spec"]["mpiReplicaSpecs"]["Launcher"].as_object_mut().unwrap().remove("replicas");
        assert!(run(&mpi).accepted(), "an unset Launcher count defaults to 1");
        mpi["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = json!(2);
        assert_eq!(
            messages(&run(&mpi)),
            ["spec.mpiReplicaSpecs[Launcher].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
        );
        let mut tf = valid("TFJob");
        tf["spec"]["tfReplicaSpecs"]["Chief"] = replica(3, "tensorflow");
        assert_eq!(
            messages(&run(&tf)),
            ["spec.tfReplicaSpecs[Chief].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
        );
    }

    #[test]
    fn masters_and_launchers_are_required_where_the_kind_needs_them() {
        let mut xgb = valid("XGBoostJob");
        xgb["spec"]["xgbReplicaSpecs"].as_object_mut().unwrap().remove("Master");
        assert_eq!(
            messages(&run(&xgb)),
            ["spec.xgbReplicaSpecs[Master]: Required value: must be present [run-policy.master-required]"]
        );
        let mut mpi = valid("MPIJob");
        mpi["spec"]["mpiReplicaSpecs"].as_object_mut().unwrap().remove("Launcher");
        assert_eq!(
            messages(&run(&mpi)),
            ["spec.mpiReplicaSpecs[Launcher]: Required value: must be present [run-policy.master-required]"]
        );
        let mut tf = valid("TFJob");
        tf["spec"]["tfReplicaSpecs"]["Chief"] = replica(1, "tensorflow");
        tf["spec"]["tfReplicaSpecs"]["Master"] = replica(1, "tensorflow");
        assert_eq!(
            messages(&run(&tf)),
            [
                "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role [run-policy.chief-or-master]"
            ]
        );
    }

    #[test]
    fn replica_counts() {
        let mut job = valid("PyTorchJob");
        job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(0);
        assert_eq!(
            messages(&run(&job)),
            ["spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1 [run-policy.replicas]"]
        );
        let mut mpi = valid("MPIJob");
        mpi["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!(0);
        assert!(run(&mpi).accepted(), "an MPI launcher may run alone");
        mpi["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!(-1);
        assert_eq!(
            messages(&run(&mpi)),
            [
                "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: -1: must be greater than or equal to 0 [run-policy.replicas]"
            ]
        );
        let mut tf = valid("TFJob");
        tf["spec"]["tfReplicaSpecs"]["PS"] = replica(0, "tensorflow");
        assert!(run(&tf).accepted());
        tf["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = json!(0);
        assert_eq!(run(&tf).violations.len(), 1);
    }

    #[test]
    fn a_pytorch_job_without_master_or_elastic_policy_is_warned() {
        let mut job = valid("PyTorchJob");
        job["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap().remove("Master");
        let v = run(&job);
        assert!(v.accepted());
        assert_eq!(
            warnings(&v),
            [
                "spec.pytorchReplicaSpecs[Master]: a PyTorchJob without elasticPolicy needs a Master: the operator sets MASTER_ADDR, MASTER_PORT and RANK only when one exists, so the workers cannot rendezvous [run-policy.pytorch-master]"
            ]
        );
        job["spec"]["elasticPolicy"] = json!({"minReplicas": 1, "maxReplicas": 2});
        assert_eq!(run(&job), Verdict::default());
    }

    #[test]
    fn restart_policies() {
        let mut job = valid("JAXJob");
        job["spec"]["jaxReplicaSpecs"]["Worker"]["restartPolicy"] = json!("Sometimes");
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.jaxReplicaSpecs[Worker].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never", "ExitCode" [run-policy.restart-policy]"#
            ]
        );
        for ok in RESTART_POLICIES.iter().chain(&[""]) {
            job["spec"]["jaxReplicaSpecs"]["Worker"]["restartPolicy"] = json!(ok);
            assert!(run(&job).accepted(), "{ok}");
        }
    }

    #[test]
    fn clean_pod_policies() {
        let mut job = valid("TFJob");
        job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "Sometimes"});
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.runPolicy.cleanPodPolicy: Unsupported value: "Sometimes": supported values: "All", "None", "Running" [run-policy.clean-pod-policy]"#
            ]
        );
        let allow_all = json!({"allowedCleanPodPolicies": ["All", "Running"]});
        job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "None"});
        assert_eq!(
            messages(&run_with(allow_all.clone(), &job)),
            [
                r#"spec.runPolicy.cleanPodPolicy: Invalid value: "None": settings.allowedCleanPodPolicies allows only "All", "Running" [run-policy.clean-pod-policy]"#
            ]
        );
        job["spec"]["runPolicy"] = json!({});
        assert_eq!(
            messages(&run_with(allow_all.clone(), &job)),
            [
                r#"spec.runPolicy.cleanPodPolicy: Required value: unset means "None", and settings.allowedCleanPodPolicies allows only "All", "Running" [run-policy.clean-pod-policy]"#
            ]
        );
        let with_default = json!({"allowedCleanPodPolicies": ["All"], "defaultCleanPodPolicy": "All"});
        assert!(run_with(with_default, &job).accepted());
        job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "Running"});
        assert!(run_with(allow_all, &job).accepted());
    }

    #[test]
    fn mpi_deprecated_clean_pod_policy() {
        let mut job = valid("MPIJob");
        job["spec"]["cleanPodPolicy"] = json!("Running");
        let v = run(&job);
        assert!(v.accepted());
        assert_eq!(
            warnings(&v),
            [
                "spec.cleanPodPolicy: is deprecated, use spec.runPolicy.cleanPodPolicy instead [run-policy.mpi-clean-pod-policy]"
            ]
        );
        job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "Running"});
        assert!(run(&job).accepted());
        job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "All"});
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.cleanPodPolicy: Invalid value: "Running": must equal spec.runPolicy.cleanPodPolicy ("All") when both are set [run-policy.mpi-clean-pod-policy]"#
            ]
        );
        job["spec"]["cleanPodPolicy"] = json!("Never");
        job["spec"]["runPolicy"] = json!({});
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.cleanPodPolicy: Unsupported value: "Never": supported values: "All", "None", "Running" [run-policy.clean-pod-policy]"#
            ]
        );
        // The deprecated field counts for allowedCleanPodPolicies.
        job["spec"]["cleanPodPolicy"] = json!("None");
        assert_eq!(
            messages(&run_with(json!({"allowedCleanPodPolicies": ["All"]}), &job)),
            [
                r#"spec.cleanPodPolicy: Invalid value: "None": settings.allowedCleanPodPolicies allows only "All" [run-policy.clean-pod-policy]"#
            ]
        );
    }

    #[test]
    fn tf_success_policy() {
        let mut job = valid("TFJob");
        job["spec"]["successPolicy"] = json!("AnyWorker");
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.successPolicy: Unsupported value: "AnyWorker": supported values: "", "AllWorkers" [run-policy.success-policy]"#
            ]
        );
        job["spec"]["successPolicy"] = json!("AllWorkers");
        assert!(run(&job).accepted());
    }

    #[test]
    fn run_limits_and_their_settings() {
        let mut job = valid("PaddleJob");
        job["spec"]["runPolicy"] =
            json!({"ttlSecondsAfterFinished": -1, "activeDeadlineSeconds": 0, "backoffLimit": -2});
        assert_eq!(
            messages(&run(&job)),
            [
                "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0 [run-policy.ttl]",
                "spec.runPolicy.activeDeadlineSeconds: Invalid value: 0: must be greater than or equal to 1 [run-policy.active-deadline]",
                "spec.runPolicy.backoffLimit: Invalid value: -2: must be greater than or equal to 0 [run-policy.backoff-limit]",
            ]
        );
        let limits =
            json!({"maxTtlSecondsAfterFinished": 3600, "maxActiveDeadlineSeconds": 86400, "maxBackoffLimit": 3});
        job["spec"]["runPolicy"] =
            json!({"ttlSecondsAfterFinished": 3601, "activeDeadlineSeconds": 86401, "backoffLimit": 4});
        assert_eq!(
            messages(&run_with(limits.clone(), &job)),
            [
                "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: 3601: must be less than or equal to 3600 (settings.maxTtlSecondsAfterFinished) [run-policy.ttl]",
                "spec.runPolicy.activeDeadlineSeconds: Invalid value: 86401: must be less than or equal to 86400 (settings.maxActiveDeadlineSeconds) [run-policy.active-deadline]",
                "spec.runPolicy.backoffLimit: Invalid value: 4: must be less than or equal to 3 (settings.maxBackoffLimit) [run-policy.backoff-limit]",
            ]
        );
        job["spec"]["runPolicy"] =
            json!({"ttlSecondsAfterFinished": 3600, "activeDeadlineSeconds": 86400, "backoffLimit": 3});
        assert!(run_with(limits, &job).accepted());
        job["spec"]["runPolicy"] = json!({});
        assert_eq!(
            messages(&run_with(json!({"requireTtlSecondsAfterFinished": true}), &job)),
            [
                "spec.runPolicy.ttlSecondsAfterFinished: Required value: finished jobs must be cleaned up (settings.requireTtlSecondsAfterFinished) [run-policy.ttl]"
            ]
        );
        let filled = json!({"requireTtlSecondsAfterFinished": true, "defaultTtlSecondsAfterFinished": 600});
        assert!(run_with(filled, &job).accepted());
    }

    #[test]
    fn managed_by_values_and_immutability() {
        let mut job = valid("JAXJob");
        job["spec"]["runPolicy"] = json!({"managedBy": "example.com/other"});
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.runPolicy.managedBy: Unsupported value: "example.com/other": supported values: "kueue.x-k8s.io/multikueue", "kubeflow.org/training-operator" [run-policy.managed-by]"#
            ]
        );
        assert!(run_with(json!({"allowedManagedBy": ["example.com/other"]}), &job).accepted());

        let settings = Settings::default();
        let old = valid("PyTorchJob");
        let mut new = old.clone();
        new["spec"]["runPolicy"] = json!({"managedBy": "kueue.x-k8s.io/multikueue"});
        let update = |new: &Value, old: &Value| {
            messages(&RunPolicyRules::check(&settings, &review("UPDATE", new, Some(old)), &MemoryCluster::default()))
        };
        assert_eq!(
            update(&new, &old),
            [
                r#"spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is immutable [run-policy.managed-by-immutable]"#
            ]
        );
        assert_eq!(
            update(&old, &new),
            [
                r#"spec.runPolicy.managedBy: Invalid value: "null": field is immutable [run-policy.managed-by-immutable]"#
            ]
        );
        assert!(update(&new, &new).is_empty());
    }

    #[test]
    fn elastic_policies() {
        let mut job = valid("PyTorchJob");
        job["spec"]["elasticPolicy"] = json!({"minReplicas": 1, "maxReplicas": 3, "rdzvBackend": "c10d"});
        assert_eq!(run(&job), Verdict::default());
        job["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap().remove("Worker");
        assert_eq!(
            messages(&run(&job)),
            [
                "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy is used [run-policy.elastic-worker]"
            ]
        );
        let mut paddle = valid("PaddleJob");
        paddle["spec"]["elasticPolicy"] = json!({"minReplicas": 3, "maxReplicas": 2});
        assert_eq!(
            messages(&run(&paddle)),
            [
                "spec.elasticPolicy.maxReplicas: Invalid value: 2: must be greater than or equal to spec.elasticPolicy.minReplicas (3) [run-policy.elastic-replicas]"
            ]
        );
        paddle["spec"]["elasticPolicy"] = json!({"minReplicas": 0, "maxRestarts": -1});
        assert_eq!(
            messages(&run(&paddle)),
            [
                "spec.elasticPolicy.maxRestarts: Invalid value: -1: must be greater than or equal to 0 [run-policy.elastic-policy]",
                "spec.elasticPolicy.minReplicas: Invalid value: 0: must be greater than or equal to 1 [run-policy.elastic-replicas]",
            ]
        );
        paddle["spec"]["elasticPolicy"] = json!({"maxReplicas": 4});
        assert_eq!(
            messages(&run(&paddle)),
            [
                "spec.paddleReplicaSpecs[Worker].replicas: Invalid value: 2: must be between the elastic policy's minReplicas (4) and maxReplicas (4) [run-policy.elastic-replicas]"
            ]
        );
        paddle["spec"]["elasticPolicy"] = json!({});
        assert!(run(&paddle).accepted(), "neither bound: both become the Worker count");
    }

    #[test]
    fn rendezvous_settings() {
        let mut job = valid("PyTorchJob");
        job["spec"]["elasticPolicy"] =
            json!({"rdzvBackend": "zookeeper", "rdzvPort": 70000, "rdzvConf": [{"value": "x"}], "maxRestarts": -1});
        assert_eq!(
            messages(&run(&job)),
            [
                r#"spec.elasticPolicy.rdzvBackend: Unsupported value: "zookeeper": supported values: "c10d", "etcd", "etcd-v2" [run-policy.elastic-policy]"#,
                "spec.elasticPolicy.rdzvPort: Invalid value: 70000: must be between 1 and 65535, inclusive [run-policy.elastic-policy]",
                "spec.elasticPolicy.rdzvConf[0].key: Required value [run-policy.elastic-policy]",
                "spec.elasticPolicy.maxRestarts: Invalid value: -1: must be greater than or equal to 0 [run-policy.elastic-policy]",
            ]
        );
    }

    #[test]
    fn nproc_per_node() {
        let mut job = valid("PyTorchJob");
        job["spec"]["elasticPolicy"] = json!({"nProcPerNode": 2});
        let v = run(&job);
        assert!(v.accepted());
        assert_eq!(
            warnings(&v),
            [
                "spec.elasticPolicy.nProcPerNode: is deprecated, use spec.nprocPerNode instead [run-policy.nproc-per-node]"
            ]
        );
        job["spec"]["nprocPerNode"] = json!("2");
        let v = run(&job);
        assert_eq!(
            messages(&v),
            [
                "spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode [run-policy.nproc-per-node]"
            ]
        );
        assert_eq!(v.warnings.len(), 1);
        let mut job = valid("PyTorchJob");
        for ok in ["auto", "cpu", "gpu", "8"] {
            job["spec"]["nprocPerNode"] = json!(ok);
            assert!(run(&job).accepted(), "{ok}");
        }
        for bad in ["0", "-1", "all", ""] {
            job["spec"]["nprocPerNode"] = json!(bad);
            assert_eq!(
                messages(&run(&job)),
                [format!(
                    r#"spec.nprocPerNode: Invalid value: "{bad}": must be "auto", "cpu", "gpu" or a positive integer [run-policy.nproc-per-node]"#
                )]
            );
        }
    }

    #[test]
    fn mpi_slots_and_main_container() {
        let mut job = valid("MPIJob");
        job["spec"]["slotsPerWorker"] = json!(0);
        job["spec"]["mainContainer"] = json!("horovod");
        assert_eq!(
            messages(&run(&job)),
            [
                "spec.slotsPerWorker: Invalid value: 0: must be greater than or equal to 1 [run-policy.slots-per-worker]",
                r#"spec.mainContainer: Invalid value: "horovod": must name a container of spec.mpiReplicaSpecs[Worker] ("mpi"): the launcher runs the MPI processes in it [run-policy.main-container]"#,
            ]
        );
        job["spec"]["slotsPerWorker"] = json!(4);
        job["spec"]["mainContainer"] = json!("mpi");
        assert!(run(&job).accepted());
    }

    #[test]
    fn ports() {
        let mut job = valid("PyTorchJob");
        job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"] = json!([
            {"name": "pytorch", "image": "x", "ports": [{"name": "pytorchjob-port", "containerPort": 23456}]},
            {"name": "sidecar", "image": "y", "ports": [
                {"name": "pytorchjob-port", "containerPort": 23457},
                {"name": "Metrics", "containerPort": 0},
                {"name": "metrics", "containerPort": 9090},
                {"name": "metrics", "containerPort": 9091}
            ]}
        ]);
        let c = "spec.pytorchReplicaSpecs[Master].template.spec.containers[1].ports";
        assert_eq!(
            messages(&run(&job)),
            [
                format!(
                    r#"{c}[0].name: Invalid value: "pytorchjob-port": the operator reads this port from the container named "pytorch", so declare it there [run-policy.default-port]"#
                ),
                format!(
                    "{c}[1].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive [run-policy.ports]"
                ),
                format!(
                    r#"{c}[1].name: Invalid value: "Metrics": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-) [run-policy.ports]"#
                ),
                format!(r#"{c}[3].name: Duplicate value: "metrics" [run-policy.ports]"#),
            ]
        );
        let mut mpi = valid("MPIJob");
        mpi["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = json!([
            {"name": "mpi", "image": "x"}, {"name": "sidecar", "image": "y", "ports": [{"name": "mpi-port", "containerPort": 9999}]}
        ]);
        assert!(run(&mpi).accepted(), "MPIJob has no default port");
    }

    #[test]
    fn defaults_fill_only_what_is_missing() {
        let settings = json!({"defaultTtlSecondsAfterFinished": 600, "defaultCleanPodPolicy": "Running", "defaultRestartPolicy": "OnFailure"});
        let mut job = valid("XGBoostJob");
        job["spec"]["xgbReplicaSpecs"]["Master"]["restartPolicy"] = json!("Never");
        let v = run_with(settings.clone(), &job);
        let mut want = job.clone();
        want["spec"]["runPolicy"] = json!({"ttlSecondsAfterFinished": 600, "cleanPodPolicy": "Running"});
        want["spec"]["xgbReplicaSpecs"]["Worker"]["restartPolicy"] = json!("OnFailure");
        assert_eq!(v.mutated_object, Some(want.clone()));
        // Nothing missing: no mutation.
        assert_eq!(run_with(settings.clone(), &want).mutated_object, None);
        // No defaults configured: never.
        assert_eq!(run(&job).mutated_object, None);
        // MPIJob's deprecated field counts as set.
        let mut mpi = valid("MPIJob");
        mpi["spec"]["cleanPodPolicy"] = json!("All");
        mpi["spec"]["runPolicy"] = json!({"ttlSecondsAfterFinished": 60});
        for r in ["Launcher", "Worker"] {
            mpi["spec"]["mpiReplicaSpecs"][r]["restartPolicy"] = json!("Never");
        }
        assert_eq!(run_with(settings, &mpi).mutated_object, None);
    }

    #[test]
    fn set_field_never_panics_on_odd_shapes() {
        let mut v = json!({"spec": {"runPolicy": null}});
        assert!(set_field(&mut v, &["spec", "runPolicy"], "a", json!(1)));
        assert_eq!(v, json!({"spec": {"runPolicy": {"a": 1}}}));
        let mut v = json!({"spec": "text"});
        assert!(!set_field(&mut v, &["spec", "runPolicy"], "a", json!(1)));
        let mut v = json!([1]);
        assert!(!set_field(&mut v, &["spec"], "a", json!(1)));
    }

    #[test]
    fn settings_are_validated() {
        let err = |s: Value| parse_settings::<RunPolicyRules>(&s).unwrap_err();
        assert_eq!(
            err(json!({"maxTtlSecondsAfterFinished": -1})),
            "invalid runPolicy settings: maxTtlSecondsAfterFinished: must be at least 0, got -1"
        );
        assert_eq!(
            err(json!({"maxActiveDeadlineSeconds": 0})),
            "invalid runPolicy settings: maxActiveDeadlineSeconds: must be at least 1, got 0"
        );
        assert_eq!(
            err(json!({"allowedCleanPodPolicies": ["All", "Sometimes"]})),
            r#"invalid runPolicy settings: allowedCleanPodPolicies[1]: unsupported value "Sometimes": supported values: "All", "None", "Running""#
        );
        assert_eq!(
            err(json!({"allowedCleanPodPolicies": []})),
            r#"invalid runPolicy settings: allowedCleanPodPolicies: must list at least one of "All", "None", "Running""#
        );
        assert!(err(json!({"allowedManagedBy": []})).contains("allowedManagedBy: must list at least one controller"));
        assert_eq!(
            err(json!({"allowedManagedBy": ["a", ""]})),
            "invalid runPolicy settings: allowedManagedBy[1]: must not be empty"
        );
        assert_eq!(
            err(json!({"defaultTtlSecondsAfterFinished": 7200, "maxTtlSecondsAfterFinished": 3600})),
            "invalid runPolicy settings: defaultTtlSecondsAfterFinished: must be at most maxTtlSecondsAfterFinished (3600), got 7200"
        );
        assert_eq!(
            err(json!({"defaultCleanPodPolicy": "None", "allowedCleanPodPolicies": ["All"]})),
            r#"invalid runPolicy settings: defaultCleanPodPolicy: "None" is not in allowedCleanPodPolicies ("All")"#
        );
        assert_eq!(
            err(json!({"defaultRestartPolicy": "Sometimes"})),
            r#"invalid runPolicy settings: defaultRestartPolicy: unsupported value "Sometimes": supported values: "Always", "OnFailure", "Never", "ExitCode""#
        );
        assert!(err(json!({"maxTTL": 1})).contains("unknown field `maxTTL`"));
        assert!(parse_settings::<RunPolicyRules>(&Value::Null).is_ok());
    }

    #[test]
    fn other_kinds_are_left_alone() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}});
        let settings = Settings { default_restart_policy: Some("Never".into()), ..Settings::default() };
        let v = RunPolicyRules::check(&settings, &review("CREATE", &pod, None), &MemoryCluster::default());
        assert_eq!(v, Verdict::default());
    }

    #[test]
    fn every_rule_is_listed_once() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        assert!(ids.iter().all(|id| id.starts_with("run-policy.")));
    }
}

//! Kubeflow Trainer v2 (`trainer.kubeflow.org/v1alpha1`, release v2.3.0): TrainJob,
//! TrainingRuntime and ClusterTrainingRuntime, the parts the rules read.
//!
//! A TrainJob names a runtime (`spec.runtimeRef`); the runtime holds the JobSet template the
//! training Jobs are made from, the framework (`mlPolicy`) and the gang (`podGroupPolicy`).
//! The TrainJob's `runtimePatches` are strategic-merged onto that template, in order. As for
//! Kubeflow v1 jobs, unknown fields are ignored and the Pod templates are read narrowly
//! ([`crate::pod`]). A patch's `trainingRuntimeSpec` is kept as JSON and read through
//! [`patched_jobs`]: it is compared whole on update (patches may change only while the job is
//! suspended), and of its eight levels the rules read a few names and annotations.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::cluster::{Cluster, LookupError, Query};
use crate::decode::{RawJson, compact_list, null_as_default};

/// An opaque part of an object (a TrainJob's `initializer`, a patch's `trainingRuntimeSpec`):
/// taken as raw JSON, then read as a plain `Value`. Read through the path-tracking decoder
/// as a `Value` instead, each would add that decoder's copy of `Value` to every policy module.
fn json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    let Some(raw) = Option::<Box<serde_json::value::RawValue>>::deserialize(d)? else { return Ok(None) };
    serde_json::from_str(raw.get()).map(Some).map_err(serde::de::Error::custom)
}
use crate::field::{BadValue, Path};
use crate::meta::ObjectMeta;
use crate::pod::PodTemplateSpec;

pub const GROUP: &str = "trainer.kubeflow.org";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "trainer.kubeflow.org/v1alpha1";

/// The label that marks a replicated job's role (on the Job template, not the Pod template).
pub const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
pub const ANCESTOR_TRAINER: &str = "trainer";
pub const DATASET_INITIALIZER: &str = "dataset-initializer";
pub const MODEL_INITIALIZER: &str = "model-initializer";
/// The trainer's job and container name (and MPI's node job).
pub const NODE: &str = "node";
/// MPI's launcher job.
pub const LAUNCHER: &str = "launcher";
/// The volume the initializers share with the trainer.
pub const INITIALIZER_VOLUME: &str = "initializer";
/// `trainer.kubeflow.org/support: deprecated` marks a runtime Trainer will remove.
pub const SUPPORT_LABEL: &str = "trainer.kubeflow.org/support";
pub const DEPRECATION_POLICY_URL: &str =
    "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy";
/// The Volcano queue a Volcano runtime's PodGroup goes to (JobSet template annotations).
pub const VOLCANO_QUEUE_ANNOTATION: &str = "scheduling.volcano.sh/queue-name";

/// The three kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainerKind {
    TrainJob,
    TrainingRuntime,
    ClusterTrainingRuntime,
}

impl TrainerKind {
    pub fn from_kind(kind: &str) -> Option<TrainerKind> {
        match kind {
            "TrainJob" => Some(TrainerKind::TrainJob),
            "TrainingRuntime" => Some(TrainerKind::TrainingRuntime),
            "ClusterTrainingRuntime" => Some(TrainerKind::ClusterTrainingRuntime),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TrainerKind::TrainJob => "TrainJob",
            TrainerKind::TrainingRuntime => "TrainingRuntime",
            TrainerKind::ClusterTrainingRuntime => "ClusterTrainingRuntime",
        }
    }
}

/// An object's `labels` and `annotations`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Labels {
    pub labels: Option<BTreeMap<String, String>>,
    pub annotations: Option<BTreeMap<String, String>>,
}

impl Labels {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_ref()?.get(key).map(String::as_str)
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }
}

// ---- TrainJob ----

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TrainJob {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: TrainJobSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TrainJobSpec {
    #[serde(deserialize_with = "null_as_default")]
    pub runtime_ref: RuntimeRef,
    /// Compared whole on update; only `dataset` and `model` are looked at.
    pub initializer: Option<RawJson>,
    pub trainer: Option<TrainerSpec>,
    pub runtime_patches: Option<Vec<RuntimePatch>>,
    pub suspend: Option<bool>,
    pub active_deadline_seconds: Option<i64>,
    pub managed_by: Option<String>,
}

/// `spec.runtimeRef`; the CRD defaults `apiGroup` and `kind`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RuntimeRef {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl RuntimeRef {
    pub fn api_group(&self) -> &str {
        self.api_group.as_deref().unwrap_or(GROUP)
    }

    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("ClusterTrainingRuntime")
    }

    /// The reference as messages show it: as the apiserver holds it once the CRD defaulted
    /// `apiGroup` and `kind`, so a manifest file and a cluster give the same message.
    pub fn shown(&self) -> BadValue {
        let defaulted = RuntimeRef {
            name: self.name.clone(),
            api_group: Some(self.api_group().to_string()),
            kind: Some(self.kind().to_string()),
        };
        BadValue::of(&defaulted)
    }

    /// The runtime kind it names, when it is one Trainer registers.
    pub fn runtime_kind(&self) -> Option<TrainerKind> {
        if self.api_group() != GROUP {
            return None;
        }
        match self.kind() {
            "TrainingRuntime" => Some(TrainerKind::TrainingRuntime),
            "ClusterTrainingRuntime" => Some(TrainerKind::ClusterTrainingRuntime),
            _ => None,
        }
    }
}

/// `spec.trainer`: what a TrainJob sets for its trainer nodes.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TrainerSpec {
    pub image: Option<String>,
    pub command: Option<Vec<String>>,
    pub args: Option<Vec<String>>,
    pub env: Option<Vec<EnvVar>>,
    pub num_nodes: Option<i32>,
    pub num_proc_per_node: Option<i32>,
    pub resources_per_node: Option<RawJson>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EnvVar {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<RawJson>,
}

/// One `spec.runtimePatches` entry.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RuntimePatch {
    #[serde(deserialize_with = "null_as_default")]
    pub manager: String,
    pub time: Option<String>,
    /// The patch itself, read through [`patched_jobs`] and [`RuntimePatch::jobset_annotations`].
    #[serde(deserialize_with = "json")]
    pub training_runtime_spec: Option<Value>,
}

/// What a patch sets for one replicated job.
#[derive(Debug)]
pub struct PatchedJob<'a> {
    /// Its index in the patch's `replicatedJobs`.
    pub index: usize,
    pub name: &'a str,
    /// (name, whether it sets `env`) of each container, then of each init container.
    pub containers: Vec<(&'a str, bool)>,
    pub init_containers: Vec<&'a str>,
    /// The Pod template's annotations (where Kueue's topology annotations go).
    pub pod_annotations: Option<&'a serde_json::Map<String, Value>>,
    /// Whether it sets the Pods' `nodeSelector`, `affinity` or `tolerations` (Kueue's
    /// admission does), which decide the Nodes they may use.
    pub sets_placement: bool,
}

impl RuntimePatch {
    /// The JobSet annotations the patch sets (`trainingRuntimeSpec.template.metadata`).
    pub fn jobset_annotations(&self) -> Option<&serde_json::Map<String, Value>> {
        self.training_runtime_spec.as_ref()?.pointer("/template/metadata/annotations")?.as_object()
    }

    /// One JobSet annotation the patch sets.
    pub fn jobset_annotation(&self, key: &str) -> Option<&str> {
        self.jobset_annotations()?.get(key)?.as_str()
    }

    /// The replicated jobs the patch sets (`trainingRuntimeSpec.template.spec.replicatedJobs`).
    pub fn patched_jobs(&self) -> Vec<PatchedJob<'_>> {
        let jobs = self.training_runtime_spec.as_ref().and_then(|s| s.pointer("/template/spec/replicatedJobs"));
        jobs.and_then(Value::as_array).map(|jobs| patched_jobs(jobs)).unwrap_or_default()
    }
}

/// Reads a patch's replicated jobs.
pub fn patched_jobs(jobs: &[Value]) -> Vec<PatchedJob<'_>> {
    jobs.iter()
        .enumerate()
        .map(|(index, job)| {
            let pod = job.pointer("/template/spec/template");
            let names = |field: &str| -> Vec<&Value> {
                pod.and_then(|p| p.pointer(&format!("/spec/{field}")))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .collect()
            };
            let containers = names("containers")
                .into_iter()
                .map(|c| (c["name"].as_str().unwrap_or_default(), c["env"].as_array().is_some_and(|e| !e.is_empty())))
                .collect();
            let init_containers =
                names("initContainers").into_iter().map(|c| c["name"].as_str().unwrap_or_default()).collect();
            PatchedJob {
                index,
                name: job["name"].as_str().unwrap_or_default(),
                containers,
                init_containers,
                pod_annotations: pod.and_then(|p| p.pointer("/metadata/annotations")).and_then(Value::as_object),
                sets_placement: ["nodeSelector", "affinity", "tolerations"]
                    .iter()
                    .any(|f| pod.and_then(|p| p.get("spec")?.get(*f)).is_some_and(|v| !v.is_null())),
            }
        })
        .collect()
}

impl TrainJob {
    pub fn patches(&self) -> &[RuntimePatch] {
        self.spec.runtime_patches.as_deref().unwrap_or_default()
    }

    /// `spec.trainer.numNodes`, which replaces the runtime's for the trainer job.
    pub fn num_nodes(&self) -> Option<i32> {
        self.spec.trainer.as_ref()?.num_nodes
    }

    pub fn is_suspended(&self) -> bool {
        self.spec.suspend == Some(true)
    }
}

// ---- TrainingRuntime and ClusterTrainingRuntime ----

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Runtime {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: RuntimeMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: RuntimeSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RuntimeMeta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub labels: Option<BTreeMap<String, String>>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RuntimeSpec {
    pub ml_policy: Option<MlPolicy>,
    pub pod_group_policy: Option<PodGroupPolicy>,
    #[serde(deserialize_with = "null_as_default")]
    pub template: JobSetTemplate,
}

/// `mlPolicy`: the framework; at most one source.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MlPolicy {
    pub num_nodes: Option<i32>,
    pub torch: Option<TorchPolicy>,
    pub mpi: Option<MpiPolicy>,
    pub jax: Option<RawJson>,
    pub xgboost: Option<RawJson>,
    pub flux: Option<FluxPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TorchPolicy {
    pub env_injection: Option<EnvInjection>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct EnvInjection {
    #[serde(deserialize_with = "compact_list")]
    pub targets: Vec<EnvInjectionTarget>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EnvInjectionTarget {
    #[serde(deserialize_with = "null_as_default")]
    pub job_name: String,
    #[serde(deserialize_with = "compact_list")]
    pub container_names: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MpiPolicy {
    pub num_proc_per_node: Option<i32>,
    pub run_launcher_as_node: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FluxPolicy {
    pub num_proc_per_node: Option<i32>,
}

impl MlPolicy {
    /// The sources set, by their field names.
    pub fn sources(&self) -> Vec<&'static str> {
        [
            ("torch", self.torch.is_some()),
            ("mpi", self.mpi.is_some()),
            ("jax", self.jax.is_some()),
            ("xgboost", self.xgboost.is_some()),
            ("flux", self.flux.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    pub fn runs_launcher_as_node(&self) -> bool {
        self.mpi.as_ref().and_then(|m| m.run_launcher_as_node) == Some(true)
    }
}

/// `podGroupPolicy`: the gang; the docs say one source, nothing upstream enforces it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PodGroupPolicy {
    pub coscheduling: Option<Coscheduling>,
    pub volcano: Option<VolcanoPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Coscheduling {
    pub schedule_timeout_seconds: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VolcanoPolicy {
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NetworkTopology {
    pub mode: Option<String>,
    pub highest_tier_allowed: Option<i32>,
}

/// `spec.template`: the JobSet template.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct JobSetTemplate {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: Labels,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: JobSetSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobSetSpec {
    #[serde(deserialize_with = "compact_list")]
    pub replicated_jobs: Vec<ReplicatedJob>,
    pub startup_policy: Option<RawJson>,
    pub ttl_seconds_after_finished: Option<i32>,
    pub failure_policy: Option<FailurePolicy>,
}

/// JobSet's `failurePolicy`: how often the whole JobSet is restarted.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FailurePolicy {
    pub max_restarts: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ReplicatedJob {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    /// The CRD defaults it to 1.
    pub replicas: Option<i32>,
    pub depends_on: Option<Vec<DependsOn>>,
    #[serde(deserialize_with = "null_as_default")]
    pub template: JobTemplate,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct DependsOn {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub status: String,
}

/// A replicated job's Job template.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct JobTemplate {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: Labels,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: JobTemplateSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobTemplateSpec {
    pub parallelism: Option<i32>,
    pub completions: Option<i32>,
    pub backoff_limit: Option<i32>,
    #[serde(deserialize_with = "null_as_default")]
    pub template: PodTemplateSpec,
}

impl ReplicatedJob {
    /// Its role, from the ancestor label on its Job template.
    pub fn ancestor(&self) -> Option<&str> {
        self.template.metadata.label(ANCESTOR_LABEL)
    }

    /// The names of its Pod template's containers and init containers.
    pub fn container_names(&self) -> impl Iterator<Item = &str> {
        let spec = self.template.spec.template.spec.as_ref();
        let containers = spec.map(|s| s.containers.as_slice()).unwrap_or_default();
        let init = spec.and_then(|s| s.init_containers.as_deref()).unwrap_or_default();
        init.iter().chain(containers).map(|c| c.name.as_str())
    }

    pub fn has_container(&self, name: &str) -> bool {
        self.template.spec.template.spec.as_ref().is_some_and(|s| s.containers.iter().any(|c| c.name == name))
    }

    pub fn scheduler_name(&self) -> Option<&str> {
        self.template.spec.template.spec.as_ref()?.scheduler_name.as_deref().filter(|s| !s.is_empty())
    }

    pub fn priority_class_name(&self) -> Option<&str> {
        self.template.spec.template.spec.as_ref()?.priority_class_name.as_deref().filter(|s| !s.is_empty())
    }

    pub fn pod_annotations(&self) -> Option<&BTreeMap<String, String>> {
        self.template.spec.template.metadata.as_ref()?.annotations.as_ref()
    }
}

/// One pod set of a training run: a replicated job and the pods it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSet<'a> {
    /// Its index in the runtime's `replicatedJobs`.
    pub index: usize,
    pub name: &'a str,
    /// How many pods Trainer counts for it: its share of the PodGroup's `minMember`.
    pub count: i32,
    /// Kueue's pod-set count: `count` for the job the node count sizes (Trainer sets its
    /// `replicas` to 1), else `replicas × min(parallelism, completions)`.
    pub kueue_count: i32,
}

impl Runtime {
    pub fn jobs(&self) -> &[ReplicatedJob] {
        &self.spec.template.spec.replicated_jobs
    }

    pub fn job(&self, name: &str) -> Option<&ReplicatedJob> {
        self.jobs().iter().find(|j| j.name == name)
    }

    pub fn is_deprecated(&self) -> bool {
        self.metadata.labels.as_ref().and_then(|l| l.get(SUPPORT_LABEL)).is_some_and(|v| v == "deprecated")
    }

    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Whether the runtime asks for a gang (coscheduling or Volcano).
    pub fn has_gang(&self) -> bool {
        self.spec.pod_group_policy.as_ref().is_some_and(|p| p.coscheduling.is_some() || p.volcano.is_some())
    }

    /// The pod sets of a run of this runtime, as Trainer v2.3 counts them
    /// (`pkg/runtime/core/trainingruntime.go` and the MPI plugin): the trainer job runs
    /// `num_nodes` pods (the TrainJob's `spec.trainer.numNodes`, else `mlPolicy.numNodes`,
    /// else 1); with MPI the job named `node` runs `num_nodes` pods, one fewer when the
    /// launcher runs as a node; every other job runs its `parallelism` (default 1). A JobSet
    /// `replicas` count is not multiplied in (kubeflow/trainer#2318).
    pub fn pod_sets(&self, trainjob_num_nodes: Option<i32>) -> Vec<PodSet<'_>> {
        let ml = self.spec.ml_policy.as_ref();
        let num_nodes = trainjob_num_nodes.or(ml.and_then(|m| m.num_nodes)).unwrap_or(1);
        let mpi = ml.and_then(|m| m.mpi.as_ref());
        self.jobs()
            .iter()
            .enumerate()
            .map(|(index, job)| {
                let spec = &job.template.spec;
                let parallelism = spec.parallelism.unwrap_or(1);
                let sized = match (mpi, job.name.as_str(), job.ancestor()) {
                    (Some(_), NODE, _) if ml.is_some_and(MlPolicy::runs_launcher_as_node) => {
                        Some((num_nodes - 1).max(1))
                    }
                    (Some(_), NODE, _) => Some(num_nodes),
                    (Some(_), _, _) => None,
                    (None, _, Some(ANCESTOR_TRAINER)) if ml.is_some() => Some(num_nodes),
                    _ => None,
                };
                let kueue_count = sized.unwrap_or_else(|| {
                    let at_once = spec.completions.filter(|c| *c < parallelism).unwrap_or(parallelism);
                    job.replicas.unwrap_or(1).saturating_mul(at_once)
                });
                PodSet { index, name: &job.name, count: sized.unwrap_or(parallelism), kueue_count }
            })
            .collect()
    }

    /// Where job `index`'s Pod template annotations sit.
    pub fn pod_annotations_path(index: usize) -> Path {
        Self::job_path(index).child("template").child("spec").child("template").child("metadata").child("annotations")
    }

    /// `spec.template.spec.replicatedJobs[index]`.
    pub fn job_path(index: usize) -> Path {
        Path::new("spec").child("template").child("spec").child("replicatedJobs").index(index)
    }
}

/// The fields of a runtime the TrainJob rules read.
const RUNTIME_MASKS: &[&str] = &["metadata.labels", "spec"];

/// A runtime a TrainJob names: which one, where it was looked for, and what came back.
pub struct RuntimeLookup {
    pub kind: TrainerKind,
    /// How the messages name it: `ClusterTrainingRuntime "torch-distributed"`.
    pub what: String,
    pub found: Result<Option<Runtime>, LookupError>,
}

/// Looks up the runtime `job` names: a ClusterTrainingRuntime, or a TrainingRuntime in the
/// TrainJob's namespace. `None` when the reference names no runtime kind Trainer registers.
pub fn lookup_runtime(cluster: &dyn Cluster, job: &TrainJob, namespace: &str) -> Option<RuntimeLookup> {
    let r = &job.spec.runtime_ref;
    let kind = r.runtime_kind()?;
    let query = Query {
        api_version: API_VERSION,
        kind: kind.name(),
        namespace: (kind == TrainerKind::TrainingRuntime).then_some(namespace),
        field_masks: RUNTIME_MASKS,
    };
    let found = cluster.get(&query, &r.name).and_then(|found| {
        found
            .map(|o| crate::decode::from_str::<Runtime>(o.get()))
            .transpose()
            .map_err(|e| LookupError::Failed(format!("cannot decode {} {:?}: {e}", kind.name(), r.name)))
    });
    Some(RuntimeLookup { kind, what: format!("{} {:?}", kind.name(), r.name), found })
}

/// Where a TrainJob's patch `patch` sets job `job`'s Pod template annotations.
pub fn patch_pod_annotations_path(patch: usize, job: usize) -> Path {
    Path::new("spec")
        .child("runtimePatches")
        .index(patch)
        .child("trainingRuntimeSpec")
        .child("template")
        .child("spec")
        .child("replicatedJobs")
        .index(job)
        .child("template")
        .child("spec")
        .child("template")
        .child("metadata")
        .child("annotations")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn runtime(ml: Value, jobs: Value) -> Runtime {
        crate::decode::from_json(&json!({"metadata": {"name": "rt"}, "spec": {"mlPolicy": ml, "template": {"spec": {"replicatedJobs": jobs}}}}))
            .unwrap()
    }

    fn job(name: &str, ancestor: Option<&str>, parallelism: Option<i32>) -> Value {
        let labels = ancestor.map(|a| json!({ANCESTOR_LABEL: a}));
        json!({"name": name, "template": {"metadata": {"labels": labels}, "spec": {"parallelism": parallelism,
               "template": {"spec": {"containers": [{"name": name}]}}}}})
    }

    #[test]
    fn pod_sets_count_as_trainer_counts_them() {
        let torch = runtime(
            json!({"numNodes": 2, "torch": {}}),
            json!([
                job("dataset-initializer", Some("dataset-initializer"), None),
                job("node", Some("trainer"), Some(9))
            ]),
        );
        let counts = |rt: &Runtime, n: Option<i32>| rt.pod_sets(n).iter().map(|p| p.count).collect::<Vec<_>>();
        assert_eq!(counts(&torch, None), [1, 2], "mlPolicy.numNodes replaces the trainer job's parallelism");
        assert_eq!(counts(&torch, Some(8)), [1, 8], "the TrainJob's numNodes replaces both");
        let mpi = runtime(
            json!({"numNodes": 1, "mpi": {"runLauncherAsNode": true}}),
            json!([job("node", None, None), job("launcher", Some("trainer"), None)]),
        );
        assert_eq!(counts(&mpi, Some(4)), [3, 1], "one node runs on the launcher");
        assert_eq!(counts(&mpi, Some(1)), [1, 1]);
        let plain = runtime(Value::Null, json!([job("node", Some("trainer"), Some(3))]));
        assert_eq!(counts(&plain, Some(5)), [3], "without mlPolicy the trainer job keeps its parallelism");
        assert_eq!(torch.pod_sets(None)[1].name, "node");
        let mut sidecar: Value = job("logger", None, Some(4));
        sidecar["replicas"] = json!(2);
        sidecar["template"]["spec"]["completions"] = json!(3);
        let with_sidecar = runtime(json!({"torch": {}}), json!([sidecar, job("node", Some("trainer"), None)]));
        let kueue: Vec<i32> = with_sidecar.pod_sets(Some(4)).iter().map(|p| p.kueue_count).collect();
        assert_eq!(kueue, [6, 4], "Kueue multiplies replicas by the pods a Job runs at once");
        assert_eq!(torch.jobs()[0].container_names().collect::<Vec<_>>(), ["dataset-initializer"]);
    }

    #[test]
    fn patches_are_read_through_their_json() {
        let tj: TrainJob = crate::decode::from_json(&json!({"spec": {"runtimeRef": {"name": "torch"},
            "runtimePatches": [{"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {
                "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "q"}},
                "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
                    "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"}},
                    "spec": {"containers": [{"name": "node", "env": [{"name": "A"}]}], "initContainers": [{"name": "init"}]}}}}}]}}}}]}}))
        .unwrap();
        let r = &tj.spec.runtime_ref;
        assert_eq!(
            (r.api_group(), r.kind(), r.runtime_kind()),
            (GROUP, "ClusterTrainingRuntime", Some(TrainerKind::ClusterTrainingRuntime))
        );
        let patch = &tj.patches()[0];
        assert_eq!(patch.jobset_annotation(VOLCANO_QUEUE_ANNOTATION), Some("q"));
        let jobs = patch.patched_jobs();
        assert_eq!(
            (jobs[0].name, jobs[0].containers.as_slice(), jobs[0].init_containers.as_slice()),
            ("node", &[("node", true)][..], &["init"][..])
        );
        assert_eq!(jobs[0].pod_annotations.as_ref().unwrap()["kueue.x-k8s.io/podset-required-topology"], "rack");
        assert_eq!(
            patch_pod_annotations_path(0, 0).as_str(),
            "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.metadata.annotations"
        );
    }
}

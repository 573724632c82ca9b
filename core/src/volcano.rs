//! Volcano's own gangs: `batch.volcano.sh/v1alpha1` Job (vcjob) and
//! `scheduling.volcano.sh/v1beta1` PodGroup, the parts the shape rules read.
//!
//! Only what a rule reads is decoded; the Pod templates, volumes and the rest are skipped
//! unread. An UPDATE's old vcjob is kept as the spec Volcano compares ([`frozen_spec`]),
//! since Volcano refuses any change outside a few fields.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::decode::{compact_list, null_as_default};
use crate::meta::ObjectMeta;

pub const JOB_GROUP: &str = "batch.volcano.sh";
pub const JOB_VERSION: &str = "v1alpha1";
pub const SCHEDULING_GROUP: &str = "scheduling.volcano.sh";
pub const SCHEDULING_VERSION: &str = "v1beta1";
/// The queue Volcano's CRD and mutating webhook default to.
pub const DEFAULT_QUEUE: &str = "default";

/// A vcjob as Volcano's mutating webhook leaves it ([`VolcanoJob::with_defaults`]).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct VolcanoJob {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: JobSpec,
    /// On the old object of an UPDATE only: its spec as Volcano compares it.
    #[serde(skip)]
    pub frozen: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSpec {
    #[serde(deserialize_with = "null_as_default")]
    pub min_available: i32,
    #[serde(deserialize_with = "compact_list")]
    pub tasks: Vec<Task>,
    #[serde(deserialize_with = "compact_list")]
    pub policies: Vec<LifecyclePolicy>,
    /// Plugin name → its arguments.
    #[serde(deserialize_with = "null_as_default")]
    pub plugins: BTreeMap<String, Option<Vec<String>>>,
    #[serde(deserialize_with = "null_as_default")]
    pub queue: String,
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Task {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub replicas: i32,
    pub min_available: Option<i32>,
    #[serde(deserialize_with = "compact_list")]
    pub policies: Vec<LifecyclePolicy>,
    pub depends_on: Option<DependsOn>,
    pub partition_policy: Option<PartitionPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LifecyclePolicy {
    #[serde(deserialize_with = "null_as_default")]
    pub event: String,
    #[serde(deserialize_with = "compact_list")]
    pub events: Vec<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub action: String,
    pub exit_code: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DependsOn {
    #[serde(deserialize_with = "compact_list")]
    pub name: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PartitionPolicy {
    #[serde(deserialize_with = "null_as_default")]
    pub total_partitions: i32,
    #[serde(deserialize_with = "null_as_default")]
    pub partition_size: i32,
    #[serde(deserialize_with = "null_as_default")]
    pub min_partitions: i32,
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NetworkTopology {
    pub mode: Option<String>,
    pub highest_tier_allowed: Option<i32>,
    #[serde(deserialize_with = "null_as_default")]
    pub highest_tier_name: String,
}

impl VolcanoJob {
    pub fn decode(text: &str) -> Result<VolcanoJob, String> {
        crate::decode::from_str(text)
    }

    /// The old object of an UPDATE: also its spec as Volcano compares it.
    pub fn decode_old(text: &str) -> Result<VolcanoJob, String> {
        let mut job = VolcanoJob::decode(text)?;
        let object: Value = crate::decode::from_str(text)?;
        job.frozen = Some(frozen_spec(&object));
        Ok(job)
    }

    /// The job's name, when it has one (the apiserver names a `generateName` job later).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The job as Volcano's mutating webhook (`mutate_job.go`, CREATE) completes it: an
    /// empty queue is `default`, an empty task name `default<index>`, a task without
    /// `minAvailable` gets `minPartitions*partitionSize` (when minPartitions > 0) or its
    /// replicas, and a job `minAvailable` of 0 the sum of its tasks' (after theirs).
    pub fn with_defaults(&self) -> VolcanoJob {
        let mut job = self.clone();
        if job.spec.queue.is_empty() {
            job.spec.queue = DEFAULT_QUEUE.to_string();
        }
        for (i, task) in job.spec.tasks.iter_mut().enumerate() {
            if task.name.is_empty() {
                task.name = format!("default{i}");
            }
            if task.min_available.is_none() {
                task.min_available = Some(match &task.partition_policy {
                    Some(p) if p.min_partitions > 0 => p.min_partitions.saturating_mul(p.partition_size),
                    _ => task.replicas,
                });
            }
        }
        if job.spec.min_available == 0 {
            job.spec.min_available =
                job.spec.tasks.iter().fold(0i32, |sum, t| sum.saturating_add(t.min_available.unwrap_or(t.replicas)));
        }
        job
    }
}

/// A vcjob's spec as Volcano's UPDATE webhook compares it (`validateJobUpdate`): without the
/// fields it lets change (`minAvailable`, `priorityClassName`, each task's `replicas` and
/// `minAvailable`), a `volumeClaimName` beside a `volumeClaim` (the controller writes it),
/// with the CRD's defaults, and with Go's zero values (`null`, `false`, `0`, `""`, empty
/// lists and maps) read as absent, as a typed Go decode and `Semantic.DeepEqual` read them.
pub fn frozen_spec(object: &Value) -> Value {
    let mut spec = object.get("spec").cloned().unwrap_or(Value::Null);
    if let Value::Object(spec) = &mut spec {
        spec.remove("minAvailable");
        spec.remove("priorityClassName");
        if let Some(Value::Array(tasks)) = spec.get_mut("tasks") {
            for task in tasks.iter_mut().filter_map(Value::as_object_mut) {
                task.remove("replicas");
                task.remove("minAvailable");
            }
        }
        if let Some(Value::Array(volumes)) = spec.get_mut("volumes") {
            for volume in volumes.iter_mut().filter_map(Value::as_object_mut) {
                if volume.get("volumeClaim").is_some_and(|c| !c.is_null()) {
                    volume.remove("volumeClaimName");
                }
            }
        }
        if spec.get("queue").is_none_or(is_zero) {
            spec.insert("queue".into(), DEFAULT_QUEUE.into());
        }
        if spec.get("maxRetry").is_none_or(is_zero) {
            spec.insert("maxRetry".into(), 3.into());
        }
    }
    without_zeros(spec)
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// `v` with every zero-valued map entry removed, at every depth.
fn without_zeros(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, without_zeros(v))).filter(|(_, v)| !is_zero(v)).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(without_zeros).collect()),
        other => other,
    }
}

/// A Volcano PodGroup.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct VolcanoPodGroup {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: PodGroupSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupSpec {
    #[serde(deserialize_with = "null_as_default")]
    pub min_member: i32,
    #[serde(deserialize_with = "null_as_default")]
    pub queue: String,
    pub network_topology: Option<NetworkTopology>,
    #[serde(deserialize_with = "compact_list")]
    pub sub_group_policy: Vec<SubGroupPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SubGroupPolicy {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    pub network_topology: Option<NetworkTopology>,
    pub sub_group_size: Option<i32>,
    pub min_sub_groups: Option<i32>,
}

impl VolcanoPodGroup {
    pub fn decode(text: &str) -> Result<VolcanoPodGroup, String> {
        crate::decode::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_what_volcano_mutates() {
        let job: VolcanoJob = crate::decode::from_json(&json!({"metadata": {"name": "j"}, "spec": {"tasks": [
            {"replicas": 4},
            {"name": "w", "replicas": 6, "partitionPolicy": {"totalPartitions": 3, "partitionSize": 2, "minPartitions": 2}},
            {"name": "ps", "replicas": 2, "minAvailable": 0}]}}))
        .unwrap();
        let job = job.with_defaults();
        assert_eq!(job.spec.queue, "default");
        let tasks: Vec<_> = job.spec.tasks.iter().map(|t| (t.name.as_str(), t.min_available)).collect();
        assert_eq!(tasks, [("default0", Some(4)), ("w", Some(4)), ("ps", Some(0))]);
        assert_eq!(job.spec.min_available, 8);
    }

    #[test]
    fn the_frozen_spec_leaves_out_what_may_change_and_zero_values() {
        let old = json!({"spec": {"minAvailable": 2, "queue": "default", "maxRetry": 3, "tasks": [{"name": "a", "replicas": 2, "template": {"spec": {"hostNetwork": false}}}]}});
        let new = json!({"spec": {"minAvailable": 4, "priorityClassName": "high", "tasks": [{"name": "a", "replicas": 4, "minAvailable": 4, "policies": [], "template": {"spec": {}}}]}});
        assert_eq!(frozen_spec(&old), frozen_spec(&new));
        let renamed = json!({"spec": {"tasks": [{"name": "b", "replicas": 2}]}});
        assert_ne!(frozen_spec(&old), frozen_spec(&renamed));
    }
}

//! Volcano's own gangs: `batch.volcano.sh/v1alpha1` Job (vcjob) and
//! `scheduling.volcano.sh/v1beta1` PodGroup, the parts the shape rules read.
//!
//! The object is read once as a plain JSON value and the few fields the rules use are taken
//! from it by hand: derived decoders for these types would cost the policy modules far more
//! than the rules (each type and each optional field instantiates the tracked reader again).
//! Volcano's CRD schema types every field before any webhook runs, so a field of another type
//! only reaches a local check (CLI, playground); there it reads as unset, a check not made.
//! An UPDATE's old vcjob is kept as the spec Volcano compares ([`frozen_spec`]), since Volcano
//! refuses any change outside a few fields.

use serde_json::Value;

use crate::meta::ObjectMeta;

pub const JOB_GROUP: &str = "batch.volcano.sh";
pub const JOB_VERSION: &str = "v1alpha1";
pub const SCHEDULING_GROUP: &str = "scheduling.volcano.sh";
pub const SCHEDULING_VERSION: &str = "v1beta1";
/// The queue Volcano's CRD and mutating webhook default to.
pub const DEFAULT_QUEUE: &str = "default";

/// The object as JSON, read once: only a syntax error fails (the request was valid JSON).
fn read(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

fn string(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

fn int(v: &Value, key: &str) -> Option<i32> {
    v[key].as_i64().and_then(|n| i32::try_from(n).ok())
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key].as_array().map_or(&[], Vec::as_slice)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    list(v, key).iter().filter_map(Value::as_str).map(String::from).collect()
}

fn metadata(object: &Value) -> ObjectMeta {
    let m = &object["metadata"];
    let text = |key: &str| m[key].as_str().map(String::from);
    ObjectMeta {
        name: text("name"),
        generate_name: text("generateName"),
        namespace: text("namespace"),
        deletion_timestamp: None,
    }
}

/// A vcjob as Volcano's mutating webhook leaves it ([`VolcanoJob::with_defaults`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VolcanoJob {
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
    /// On the old object of an UPDATE only: its spec as Volcano compares it.
    pub frozen: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobSpec {
    pub min_available: i32,
    pub tasks: Vec<Task>,
    pub policies: Vec<LifecyclePolicy>,
    /// Plugin name → its arguments, in name order.
    pub plugins: Vec<(String, Vec<String>)>,
    pub queue: String,
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Task {
    pub name: String,
    pub replicas: i32,
    pub min_available: Option<i32>,
    pub policies: Vec<LifecyclePolicy>,
    /// The task names of `dependsOn.name`, when `dependsOn` is set.
    pub depends_on: Option<Vec<String>>,
    pub partition_policy: Option<PartitionPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LifecyclePolicy {
    pub event: String,
    pub events: Vec<String>,
    pub action: String,
    pub exit_code: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartitionPolicy {
    pub total_partitions: i32,
    pub partition_size: i32,
    pub min_partitions: i32,
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkTopology {
    pub mode: Option<String>,
    pub highest_tier_allowed: Option<i32>,
    pub highest_tier_name: String,
}

impl NetworkTopology {
    fn read(v: &Value) -> Option<NetworkTopology> {
        let v = v.get("networkTopology").filter(|v| v.is_object())?;
        Some(NetworkTopology {
            mode: v["mode"].as_str().map(String::from),
            highest_tier_allowed: int(v, "highestTierAllowed"),
            highest_tier_name: string(v, "highestTierName"),
        })
    }
}

fn policies(v: &Value) -> Vec<LifecyclePolicy> {
    list(v, "policies")
        .iter()
        .map(|p| LifecyclePolicy {
            event: string(p, "event"),
            events: strings(p, "events"),
            action: string(p, "action"),
            exit_code: int(p, "exitCode"),
        })
        .collect()
}

impl Task {
    fn read(t: &Value) -> Task {
        let partition = t.get("partitionPolicy").filter(|p| p.is_object());
        Task {
            name: string(t, "name"),
            replicas: int(t, "replicas").unwrap_or_default(),
            min_available: int(t, "minAvailable"),
            policies: policies(t),
            depends_on: t.get("dependsOn").filter(|d| d.is_object()).map(|d| strings(d, "name")),
            partition_policy: partition.map(|p| PartitionPolicy {
                total_partitions: int(p, "totalPartitions").unwrap_or_default(),
                partition_size: int(p, "partitionSize").unwrap_or_default(),
                min_partitions: int(p, "minPartitions").unwrap_or_default(),
                network_topology: NetworkTopology::read(p),
            }),
        }
    }
}

impl VolcanoJob {
    fn from_value(object: &Value) -> VolcanoJob {
        let spec = &object["spec"];
        let args = |v: &Value| v.as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from).collect();
        let mut plugins: Vec<(String, Vec<String>)> =
            spec["plugins"].as_object().into_iter().flatten().map(|(name, v)| (name.clone(), args(v))).collect();
        plugins.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        VolcanoJob {
            metadata: metadata(object),
            spec: JobSpec {
                min_available: int(spec, "minAvailable").unwrap_or_default(),
                tasks: list(spec, "tasks").iter().map(Task::read).collect(),
                policies: policies(spec),
                plugins,
                queue: string(spec, "queue"),
                network_topology: NetworkTopology::read(spec),
            },
            frozen: None,
        }
    }

    pub fn decode(text: &str) -> Result<VolcanoJob, String> {
        Ok(VolcanoJob::from_value(&read(text)?))
    }

    /// The old object of an UPDATE: also its spec as Volcano compares it.
    pub fn decode_old(text: &str) -> Result<VolcanoJob, String> {
        let object = read(text)?;
        Ok(VolcanoJob { frozen: Some(frozen_spec(&object)), ..VolcanoJob::from_value(&object) })
    }

    /// The arguments of the plugin `name`, when the job names it.
    pub fn plugin(&self, name: &str) -> Option<&[String]> {
        self.spec.plugins.iter().find(|(n, _)| n == name).map(|(_, args)| args.as_slice())
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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VolcanoPodGroup {
    pub min_member: i32,
    pub queue: String,
    pub network_topology: Option<NetworkTopology>,
    /// Each `subGroupPolicy` entry's name and network topology.
    pub sub_groups: Vec<(String, Option<NetworkTopology>)>,
}

impl VolcanoPodGroup {
    pub fn decode(text: &str) -> Result<VolcanoPodGroup, String> {
        let object = read(text)?;
        let spec = &object["spec"];
        Ok(VolcanoPodGroup {
            min_member: int(spec, "minMember").unwrap_or_default(),
            queue: string(spec, "queue"),
            network_topology: NetworkTopology::read(spec),
            sub_groups: list(spec, "subGroupPolicy")
                .iter()
                .map(|s| (string(s, "name"), NetworkTopology::read(s)))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_what_volcano_mutates() {
        let job = VolcanoJob::from_value(&json!({"metadata": {"name": "j"}, "spec": {"tasks": [
            {"replicas": 4},
            {"name": "w", "replicas": 6, "partitionPolicy": {"totalPartitions": 3, "partitionSize": 2, "minPartitions": 2}},
            {"name": "ps", "replicas": 2, "minAvailable": 0}]}}));
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

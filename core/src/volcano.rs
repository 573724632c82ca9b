//! Volcano's own gangs: `batch.volcano.sh/v1alpha1` Job (vcjob) and
//! `scheduling.volcano.sh/v1beta1` PodGroup, the parts the shape rules read.
//!
//! The object is read once as a plain JSON value and the few fields the rules use are taken
//! from it by hand: derived decoders for these types would cost the policy modules far more
//! than the rules (each type and each optional field instantiates the tracked reader again).
//! Volcano's CRD schema types every field before any webhook runs, so a field of another type
//! only reaches a local check (CLI, playground); there it reads as unset, a check not made.
//! An UPDATE's old vcjob keeps its whole spec, since Volcano refuses any change outside a few
//! fields ([`same_spec`]).

use serde_json::Value;

use crate::meta::ObjectMeta;

pub const JOB_GROUP: &str = "batch.volcano.sh";
pub const JOB_VERSION: &str = "v1alpha1";
pub const SCHEDULING_GROUP: &str = "scheduling.volcano.sh";
pub const SCHEDULING_VERSION: &str = "v1beta1";
/// The queue Volcano's CRD and mutating webhook default to.
pub const DEFAULT_QUEUE: &str = "default";
/// The scheduler name Volcano's scheduler answers to.
pub const SCHEDULER: &str = "volcano";

/// The Queue list: every Queue, only its state and capability. One fixed query, shared by
/// every rule that reads Queues (policy-server keeps one store per distinct query).
pub fn queue_query() -> crate::cluster::Query<'static> {
    crate::cluster::Query {
        api_version: "scheduling.volcano.sh/v1beta1",
        kind: "Queue",
        namespace: None,
        field_masks: &["status.state", "spec.capability"],
    }
}

/// Whether `cluster` runs Volcano, as far as one Queue list shows: a cluster that serves
/// Volcano's API always has its `default` and `root` Queues, so a list with no Queue (or a
/// CLI run given none) is one without Volcano. `None`: the list failed.
pub fn serves_queues(cluster: &dyn crate::cluster::Cluster) -> Option<bool> {
    use crate::cluster::LookupError;
    match cluster.list(&queue_query()) {
        Ok(text) => read(&text).ok().map(|list| list["items"].as_array().is_some_and(|items| !items.is_empty())),
        Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => Some(false),
        Err(_) => None,
    }
}

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
    /// On the old object of an UPDATE only: its whole spec, which Volcano compares.
    pub frozen: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobSpec {
    pub min_available: i32,
    pub tasks: Vec<Task>,
    pub policies: Vec<LifecyclePolicy>,
    /// Plugin name → its arguments.
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
    /// `template.spec`, as written: read only by the capacity rules (`decode::from_json`).
    pub pod: Option<Value>,
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
            pod: t["template"].get("spec").filter(|s| s.is_object()).cloned(),
        }
    }
}

impl VolcanoJob {
    fn from_value(object: &Value) -> VolcanoJob {
        let spec = &object["spec"];
        let args = |v: &Value| v.as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from).collect();
        let plugins: Vec<(String, Vec<String>)> =
            spec["plugins"].as_object().into_iter().flatten().map(|(name, v)| (name.clone(), args(v))).collect();
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
        let job = VolcanoJob::from_value(&object);
        let mut object = object;
        Ok(VolcanoJob { frozen: Some(object["spec"].take()), ..job })
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

/// Whether two vcjob specs are the same as Volcano's UPDATE webhook compares them
/// (`validateJobUpdate`): without the fields it lets change (`minAvailable`,
/// `priorityClassName`, each task's `replicas` and `minAvailable`) and a `volumeClaimName`
/// beside a `volumeClaim` (the controller writes it), with the CRD's defaults (`queue`,
/// `maxRetry`), and with Go's zero values (`null`, `false`, `0`, `""`, empty lists and maps)
/// read as unset, as a typed Go decode and `Semantic.DeepEqual` read them. Walks both once.
pub fn same_spec(old: &Value, new: &Value) -> bool {
    same(old, new, Level::Spec)
}

/// Where a map sits in the spec: which of its keys may differ.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Spec,
    Task,
    Volume,
    Other,
}

impl Level {
    fn ignores(self, key: &str, map: &serde_json::Map<String, Value>) -> bool {
        match self {
            Level::Spec => matches!(key, "minAvailable" | "priorityClassName"),
            Level::Task => matches!(key, "replicas" | "minAvailable"),
            Level::Volume => key == "volumeClaimName" && map.get("volumeClaim").is_some_and(|c| !c.is_null()),
            Level::Other => false,
        }
    }

    fn child(self, key: &str) -> Level {
        match (self, key) {
            (Level::Spec, "tasks") => Level::Task,
            (Level::Spec, "volumes") => Level::Volume,
            _ => Level::Other,
        }
    }
}

/// `v` with the CRD's default for a spec field in its place when unset.
fn defaulted<'a>(level: Level, key: &str, v: &'a Value) -> std::borrow::Cow<'a, Value> {
    match (level, key) {
        (Level::Spec, "queue") if is_zero(v) => std::borrow::Cow::Owned(DEFAULT_QUEUE.into()),
        (Level::Spec, "maxRetry") if is_zero(v) => std::borrow::Cow::Owned(3.into()),
        _ => std::borrow::Cow::Borrowed(v),
    }
}

/// `a` and `b` are equal with zero values read as unset; `level` is the kind of map they are
/// (a list's items are at the level of the list's key).
fn same(a: &Value, b: &Value, level: Level) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let differs = |from: &serde_json::Map<String, Value>, other: &serde_json::Map<String, Value>| {
                from.iter().any(|(k, v)| {
                    if level.ignores(k, from) || level.ignores(k, other) {
                        return false;
                    }
                    let w = other.get(k).unwrap_or(&Value::Null);
                    !same(&defaulted(level, k, v), &defaulted(level, k, w), level.child(k))
                })
            };
            !differs(x, y) && !differs(y, x)
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b, level)),
        _ if is_zero(a) && is_zero(b) => true,
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_zero),
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
    /// `minResources`, as written: read only by the capacity rules.
    pub min_resources: Option<Value>,
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
            min_resources: spec.get("minResources").filter(|r| r.is_object()).cloned(),
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
    fn the_spec_is_compared_without_what_may_change_and_zero_values() {
        let old = json!({"minAvailable": 2, "queue": "default", "maxRetry": 3, "tasks": [{"name": "a", "replicas": 2, "template": {"spec": {"hostNetwork": false}}}],
            "volumes": [{"mountPath": "/data", "volumeClaim": {"storageClassName": "x"}, "volumeClaimName": "train-data-abc"}]});
        let new = json!({"minAvailable": 4, "priorityClassName": "high", "tasks": [{"name": "a", "replicas": 4, "minAvailable": 4, "policies": [], "template": {"spec": {}}}],
            "volumes": [{"mountPath": "/data", "volumeClaim": {"storageClassName": "x"}}]});
        assert!(same_spec(&old, &new));
        assert!(!same_spec(&old, &json!({"tasks": [{"name": "b", "replicas": 2}]})));
        assert!(!same_spec(
            &old,
            &json!({"queue": "research", "tasks": [{"name": "a"}], "volumes": [{"mountPath": "/data", "volumeClaim": {"storageClassName": "x"}}]})
        ));
    }
}

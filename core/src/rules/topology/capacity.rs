//! Capacity: whether the pods a Job, a CronJob, a Kubeflow job or a Trainer v2 TrainJob makes
//! can ever fit the cluster's Nodes (`crate::capacity`), from the same Node list as T-09.
//!
//! Checked where pod requests are known: each pod shape against the Nodes it may use, and
//! the pods that must run at once (a Job's gang, a Kubeflow job's `minAvailable`, a TrainJob's
//! pods on a gang runtime, a Kueue pod set with a required topology) against the cluster, or
//! one topology domain where they ask for one. Workloads and PodGroups carry no pod requests
//! and get no capacity claim; a Pod neither (the object that makes the Pods is checked).
//!
//! Each shape's placement is the one its pods will have at the scheduler
//! (`crate::capacity`'s principle): a Kueue-managed object's pods are held to no taint (Kueue
//! merges its flavor's tolerations when it admits them), a RuntimeClass's tolerations count
//! ([`with_runtime_classes`]), and so do the `capacityAddedTolerations` setting's.

use super::*;
use crate::capacity::fit::{Finding, Gang, Shape};
use crate::capacity::placement::Placement;
use crate::capacity::request::{Ask, ContainerOverride, is_checked_resource, is_extended_resource, pod_asks};
use crate::nodes::Node;
use crate::pod::PodSpec;
use crate::quantity::{FINE, fine_units, show};
use crate::trainer;
use crate::volcano::{VolcanoJob, VolcanoPodGroup};

/// Whether capacity findings are reported, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CapacityCheck {
    Off,
    /// A warning: a cluster autoscaler may yet add the Nodes.
    #[default]
    Warn,
    /// A rejection: the cluster's Nodes are all it will have.
    Deny,
}

/// A toleration the cluster's own admission steps add to every Pod (the setting
/// `capacityAddedTolerations`), as a Pod's toleration is written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    pub value: String,
    pub effect: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

impl Toleration {
    /// What the apiserver's `validateTolerations` refuses, with its wording.
    pub(super) fn problem(&self) -> Option<String> {
        if !self.key.is_empty()
            && let Some(msg) = names::is_qualified_name(&self.key).first()
        {
            return Some(format!("key: Invalid value: {:?}: {msg}", self.key));
        }
        if self.key.is_empty() && self.operator != "Exists" {
            return Some(format!(
                "operator: Invalid value: {:?}: operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                self.operator
            ));
        }
        if self.toleration_seconds.is_some() && self.effect != "NoExecute" {
            return Some(format!(
                "effect: Invalid value: {:?}: effect must be 'NoExecute' when `tolerationSeconds` is set",
                self.effect
            ));
        }
        match self.operator.as_str() {
            "" | "Equal" => {
                if let Some(msg) = names::is_label_value(&self.value).first() {
                    return Some(format!("value: Invalid value: {:?}: {msg}", self.value));
                }
            }
            "Exists" if !self.value.is_empty() => {
                return Some(format!(
                    "value: Invalid value: {:?}: value must be empty when `operator` is 'Exists'",
                    self.value
                ));
            }
            "Exists" => {}
            other => {
                return Some(format!(
                    "operator: Unsupported value: {other:?}: supported values: \"Equal\", \"Exists\""
                ));
            }
        }
        match self.effect.as_str() {
            "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute" => None,
            other => Some(format!(
                "effect: Unsupported value: {other:?}: supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\""
            )),
        }
    }
}

/// The names DRA gives the extended resources of DeviceClasses that name none
/// (`deviceclass.resource.kubernetes.io/<class>`): never on a Node's allocatable.
const IMPLICIT_DRA_PREFIX: &str = "deviceclass.resource.kubernetes.io/";

/// The most pod shapes an object is read with (a TrainJob's runtime may list any number of
/// jobs): past it, no capacity claim is made about the object.
const MAX_SHAPES: usize = 64;

/// The label with which Kueue manages an object (`jobframework.QueueNameForObject`).
pub(super) const KUEUE_QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// Kueue's partial admission: the fewest pods a Job may be started with.
const KUEUE_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";

/// The pods an object makes, as the capacity rules see them.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Demand {
    pub(super) shapes: Vec<Shape>,
    pub(super) gangs: Vec<Gang>,
    /// Per shape: the RuntimeClass its pods name, whose tolerations are not counted yet
    /// ([`with_runtime_classes`]).
    pub(super) runtime_classes: Vec<Option<String>>,
    /// Per shape: the claims its pods name (`spec.resourceClaims[i]`, the source's kind and
    /// name, and whether the gang shares one allocation of it).
    pub(super) claims: Vec<Vec<PodClaim>>,
    /// The group claims of the object's gang (a Job's `spec.scheduling.resourceClaims`), as
    /// (entry name, source kind, source name): a pod entry identical to one shares its claim.
    group_claims: Vec<(String, &'static str, String)>,
    /// The object's namespace, where its pods' claims and claim templates are.
    pub(super) namespace: String,
    /// Whether Kueue manages the object: its taints are no proof.
    kueue_managed: bool,
    /// More shapes than [`MAX_SHAPES`]: no claim.
    too_many: bool,
    /// What the whole cluster must offer at once (a Volcano PodGroup's `minResources`).
    pub(super) totals: Vec<Ask>,
}

impl Demand {
    pub(super) fn is_empty(&self) -> bool {
        self.shapes.is_empty() && self.totals.is_empty()
    }

    /// Adds the shape of pods with `spec` (at `spec_path`), unless no claim can be made about
    /// them: a pod pinned to a Node by name, or a placement or requests that cannot be read.
    /// A pod that asks for nothing and names no Node label is not worth a Node list either:
    /// any Node with room for one more pod takes it.
    fn shape(
        &mut self,
        settings: &Settings,
        spec: &PodSpec,
        spec_path: Path,
        name: String,
        over: Option<&ContainerOverride>,
        anywhere: bool,
    ) -> Option<usize> {
        if spec.node_name.as_ref().is_some_and(|n| n.0.get() != "null" && n.0.get() != "\"\"") {
            return None;
        }
        if self.shapes.len() == MAX_SHAPES {
            self.too_many = true;
            return None;
        }
        let mut asks = pod_asks(spec, &spec_path, over)?;
        asks.retain(|a| !a.resource.starts_with(IMPLICIT_DRA_PREFIX) && !ignored(settings, &a.resource));
        let extended: Vec<&str> = asks.iter().map(|a| a.resource.as_str()).collect();
        let mut placement = if anywhere {
            Placement::anywhere()
        } else {
            Placement::read(spec.node_selector.as_ref(), spec.affinity.as_ref(), spec.tolerations.as_ref(), &extended)?
        };
        let mut tolerations_from = Vec::new();
        if !settings.capacity_added_tolerations.is_empty() {
            let added = serde_json::to_value(&settings.capacity_added_tolerations).unwrap_or_default();
            placement.add_tolerations(&added)?;
            tolerations_from.push("capacityAddedTolerations".to_string());
        }
        if self.kueue_managed {
            placement.tolerate_every_taint();
        }
        let claims = pod_claims(spec, &spec_path, &self.group_claims);
        if asks.is_empty() && placement.is_unconstrained() && claims.is_empty() {
            return None;
        }
        let runtime_class = spec.runtime_class_name.as_ref().and_then(|r| match r.value() {
            serde_json::Value::String(name) if !name.is_empty() => Some(name),
            _ => None,
        });
        let claimed = claims.iter().map(|c| format!("{}/{}", c.kind, c.name)).collect();
        self.shapes.push(Shape {
            asks,
            placement,
            spec_path,
            name,
            tolerations_from,
            claims: claimed,
            devices: Vec::new(),
        });
        self.runtime_classes.push(runtime_class);
        self.claims.push(claims);
        Some(self.shapes.len() - 1)
    }

    /// Takes `resources` out of every pod's asks (the Nodes do not show them).
    pub(super) fn without(&mut self, resources: &[String]) {
        for shape in &mut self.shapes {
            shape.asks.retain(|a| !resources.contains(&a.resource));
        }
        self.totals.retain(|a| !resources.contains(&a.resource));
    }
}

/// One claim a pod names.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct PodClaim {
    /// Where it is written: `spec.resourceClaims[i]`.
    pub(super) at: Path,
    pub(super) kind: &'static str,
    pub(super) name: String,
    /// Identical to a group claim: allocated once for the gang and reserved for its PodGroup
    /// (with `DRAWorkloadResourceClaims`; counting it so only helps the pods).
    pub(super) grouped: bool,
}

impl PodClaim {
    /// Allocated once for all the pods that name it: a ResourceClaim, or a group claim.
    pub(super) fn shared(&self) -> bool {
        self.kind == "ResourceClaim" || self.grouped
    }
}

/// The claims a pod names, each with where it is written and its source's kind and name.
fn pod_claims(spec: &PodSpec, spec_path: &Path, group: &[(String, &'static str, String)]) -> Vec<PodClaim> {
    let at = spec_path.child("resourceClaims");
    let claims = spec.resource_claims.iter().flatten().enumerate();
    claims
        .filter_map(|(i, c)| {
            let (kind, name) = match (&c.resource_claim_name, &c.resource_claim_template_name) {
                (Some(name), None) => ("ResourceClaim", name.clone()),
                (None, Some(name)) => ("ResourceClaimTemplate", name.clone()),
                _ => return None,
            };
            let grouped = group.iter().any(|(n, k, s)| *n == c.name && *k == kind && *s == name);
            Some(PodClaim { at: at.index(i), kind, grouped, name })
        })
        .collect()
}

/// Whether the settings say the scheduler ignores `resource` (NodeResourcesFit's
/// `ignoredResources`, or a `<group>/*` entry for its `ignoredResourceGroups`).
fn ignored(settings: &Settings, resource: &str) -> bool {
    settings.capacity_ignored_resources.iter().any(|r| match r.strip_suffix("/*") {
        Some(group) => resource.split_once('/').is_some_and(|(g, _)| g == group),
        None => r == resource,
    })
}

/// The gang of a Job's `spec.scheduling` (a CronJob's job template's): `minCount` pods, or
/// `parallelism`, in one domain of its topology key when it names one.
fn job_demand(settings: &Settings, job: &BatchJob, d: &mut Demand) {
    let Some(spec) = job.spec.template.spec.as_ref() else { return };
    // A Job that runs no pods yet (parallelism 0) is checked when it is scaled up.
    if job.spec.pods_at_once() <= 0 {
        return;
    }
    let template = job.spec_path().child("template");
    let group = job.group_spec().and_then(|g| g.resource_claims).unwrap_or_default();
    d.group_claims = group
        .iter()
        .filter_map(|c| match (c.resource_claim_name, c.resource_claim_template_name) {
            (Some(n), None) => Some((c.name.to_string(), "ResourceClaim", n.to_string())),
            (None, Some(n)) => Some((c.name.to_string(), "ResourceClaimTemplate", n.to_string())),
            _ => None,
        })
        .collect();
    let Some(shape) = d.shape(settings, spec, template.child("spec"), "pod".into(), None, false) else { return };
    let parallelism = u64::try_from(job.spec.parallelism()).unwrap_or(0);
    if let Some(group) = job.group_spec()
        && let Some((size, at)) = group.gang_min_count_at()
        && let Ok(size) = u64::try_from(size)
        && (1..=parallelism).contains(&size)
    {
        let domain = group.topology_keys().next().filter(|k| names::is_qualified_name(k).is_empty());
        d.gangs.push(Gang {
            members: vec![(shape, parallelism)],
            size,
            value: BadValue::from(i64::try_from(size).unwrap_or(i64::MAX)),
            at,
            domain: domain.map(str::to_string),
            what: "the gang",
        });
    }
    let mut sets = job_pod_sets(job);
    // Kueue's partial admission may start fewer pods, down to the annotation's count: only
    // those must share a domain.
    if let Some(min) = job.job_annotation(KUEUE_MIN_PARALLELISM).and_then(|v| v.trim().parse::<i32>().ok()) {
        for set in &mut sets {
            set.count = set.count.map(|c| c.min(min));
        }
    }
    kueue_pod_sets(&sets, &[shape], d);
}

/// A Kubeflow job: each replica type's pods; a gang of `minAvailable` of them when the run
/// policy asks for one.
fn kubeflow_demand(settings: &Settings, job: &KubeflowJob, d: &mut Demand) {
    let map = Path::new("spec").child(job.kind.replica_specs_field());
    let mut members = Vec::new();
    let mut by_type = Vec::new();
    // Pods no claim is made about (asking for nothing, pinned to a Node, unreadable) may fill
    // any number of the gang's places: with one, no gang size is provably too large.
    let mut unclaimed = 0;
    for (replica_type, spec) in job.replicas() {
        let count = u64::try_from(job.replica_count(replica_type, spec)).unwrap_or(0);
        // A replica type of no pods makes none to fit.
        if count == 0 {
            continue;
        }
        let at = map.key(replica_type).child("template").child("spec");
        let shape = spec
            .template
            .spec
            .as_ref()
            .and_then(|pod| d.shape(settings, pod, at, format!("{replica_type} pod"), None, false));
        match shape {
            Some(shape) => {
                members.push((shape, count));
                by_type.push((replica_type.as_str(), shape));
            }
            None => unclaimed += count,
        }
    }
    let total: u64 = members.iter().map(|(_, c)| c).sum();
    let min_available = job.scheduling_policy().and_then(|p| p.min_available).and_then(|n| u64::try_from(n).ok());
    if let Some(size) = min_available.filter(|n| (1..=total).contains(n))
        && !members.is_empty()
        && unclaimed == 0
    {
        let at = Path::new("spec").child("runPolicy").child("schedulingPolicy").child("minAvailable");
        d.gangs.push(Gang {
            members,
            size,
            value: BadValue::from(i64::try_from(size).unwrap_or(i64::MAX)),
            at,
            domain: None,
            what: "the gang",
        });
    }
    let sets = replica_pod_sets(job);
    let shapes: Vec<usize> =
        sets.iter().filter_map(|s| by_type.iter().find(|(t, _)| *t == s.key.as_ref()).map(|(_, i)| *i)).collect();
    if shapes.len() == sets.len() {
        kueue_pod_sets(&sets, &shapes, d);
    }
}

/// A Volcano Job (vcjob), as Volcano's mutating webhook completes it: each task's pods, and
/// the gang as Volcano's scheduler forms it (`job_info.go`): ready with the job's
/// `minAvailable` pods of any tasks and, only when that minimum covers the sum of the tasks'
/// (`CheckTaskValid`), each task's own `minAvailable` pods of that task.
fn volcano_demand(settings: &Settings, job: &VolcanoJob, d: &mut Demand) {
    let job = job.with_defaults();
    let tasks = Path::new("spec").child("tasks");
    let mut members = Vec::new();
    // (shape, pods, the task's minimum, the task's path)
    let mut by_task = Vec::new();
    // Pods no claim is made about may fill any number of the gang's places (as for Kubeflow).
    let mut unclaimed = 0u64;
    let mut with_pods = 0;
    for (i, task) in job.spec.tasks.iter().enumerate() {
        let count = u64::try_from(task.replicas).unwrap_or(0);
        if count == 0 {
            continue;
        }
        with_pods += 1;
        let at = tasks.index(i);
        let pod: Option<PodSpec> = task.pod.as_ref().and_then(|p| crate::decode::from_json(p).ok());
        let spec_path = at.child("template").child("spec");
        let name = format!("{} pod", task.name);
        match pod.and_then(|pod| d.shape(settings, &pod, spec_path, name, None, false)) {
            Some(shape) => {
                members.push((shape, count));
                by_task.push((shape, count, task.min_available.unwrap_or(task.replicas), at));
            }
            None => unclaimed += count,
        }
    }
    let total: u64 = members.iter().map(|(_, c)| c).sum();
    let size = u64::try_from(job.spec.min_available).unwrap_or(0);
    let task_sum = job.spec.tasks.iter().map(|t| i64::from(t.min_available.unwrap_or(t.replicas).max(0))).sum::<i64>();
    let tasks_count = i64::from(job.spec.min_available) >= task_sum;
    // With one task of pods, the job's gang already asks for at least the task's minimum.
    if tasks_count && with_pods > 1 {
        for (shape, count, min, at) in by_task {
            let Some(min) = u64::try_from(min).ok().filter(|m| (1..=count).contains(m)) else { continue };
            d.gangs.push(Gang {
                members: vec![(shape, count)],
                size: min,
                value: BadValue::from(i64::try_from(min).unwrap_or(i64::MAX)),
                at: at.child("minAvailable"),
                domain: None,
                what: "the task's minimum",
            });
        }
    }
    if (1..=total).contains(&size) && unclaimed == 0 {
        d.gangs.push(Gang {
            members,
            size,
            value: BadValue::from(i64::from(job.spec.min_available)),
            at: Path::new("spec").child("minAvailable"),
            domain: None,
            what: "the gang",
        });
    }
}

/// A Volcano PodGroup's `minResources`, which Volcano's enqueue action (the proportion
/// plugin's queue bound, never above the cluster's total allocatable) requires at once. A
/// PodGroup a controller made (from a vcjob, a Kubeflow job) is left alone: the job it came from
/// was checked. Amounts are rounded down, and one that cannot be read asks nothing.
fn volcano_pod_group_demand(review: &Review, group: &VolcanoPodGroup, d: &mut Demand) {
    if review.metadata.controller.is_some() {
        return;
    }
    let at = Path::new("spec").child("minResources");
    let entries = group.min_resources.as_ref().and_then(serde_json::Value::as_object).into_iter().flatten();
    for (resource, amount) in entries.filter(|(r, _)| is_checked_resource(r)) {
        let amount = match amount {
            serde_json::Value::String(s) => fine_units(resource, s),
            serde_json::Value::Number(n) => fine_units(resource, &n.to_string()),
            _ => None,
        };
        let units = u64::try_from(amount.unwrap_or(0) / FINE).unwrap_or(u64::MAX);
        if units > 0 {
            d.totals.push(Ask { resource: resource.clone(), units, at: at.key(resource) });
        }
    }
}

/// The cluster's total allocatable of each of the `totals`' resources, summed one Node at a
/// time (`None`: some Node's is unknown, so the total is).
pub(super) struct ClusterTotals<'d> {
    asks: &'d [Ask],
    slots: Vec<Option<usize>>,
    offered: Vec<Option<u64>>,
    nodes: usize,
}

impl<'d> ClusterTotals<'d> {
    pub(super) fn new(asks: &'d [Ask], resources: &crate::nodes::Wanted) -> Self {
        let slots = asks.iter().map(|a| resources.slot(&a.resource)).collect();
        ClusterTotals { asks, slots, offered: vec![Some(0); asks.len()], nodes: 0 }
    }

    pub(super) fn add(&mut self, node: &Node) {
        self.nodes += 1;
        for (offered, slot) in self.offered.iter_mut().zip(&self.slots) {
            let has = slot.and_then(|s| node.offers(s));
            *offered = offered.zip(has).map(|(a, b)| a.saturating_add(b));
        }
    }

    /// Whether every ask is within the total so far: Nodes read later only add.
    pub(super) fn settled(&self) -> bool {
        self.asks.iter().zip(&self.offered).all(|(a, o)| o.is_none_or(|o| a.units <= o))
    }

    pub(super) fn findings(&self) -> Vec<Finding> {
        if self.nodes == 0 {
            return Vec::new();
        }
        let short =
            self.asks.iter().zip(&self.offered).filter_map(|(a, o)| Some((a, (*o)?)).filter(|(a, o)| a.units > *o));
        short
            .map(|(a, offered)| Finding {
                gang: true,
                at: a.at.clone(),
                value: BadValue::from(show(&a.resource, a.units).as_str()),
                message: format!(
                    "the PodGroup asks {} {} at once, and the cluster's {} have {} allocatable in all, even when empty: Volcano's enqueue action never admits it",
                    show(&a.resource, a.units),
                    a.resource,
                    plural(self.nodes, "node"),
                    show(&a.resource, offered),
                ),
                resources: vec![a.resource.clone()],
            })
            .collect()
    }
}

/// What a vcjob's capacity verdict rests on: its gang's and its tasks' sizes.
fn volcano_counts(job: &VolcanoJob) -> (i32, Vec<(i32, Option<i32>)>) {
    let job = job.with_defaults();
    (job.spec.min_available, job.spec.tasks.iter().map(|t| (t.replicas, t.min_available)).collect())
}

/// Kueue pod sets with a required topology: all their pods in one domain of the level.
fn kueue_pod_sets(sets: &[kueue::PodSet], shapes: &[usize], d: &mut Demand) {
    for (set, shape) in sets.iter().zip(shapes) {
        let Some(level) = set.required_level() else { continue };
        let Some(count) = set.count.and_then(|c| u64::try_from(c).ok()).filter(|c| *c >= 1) else { continue };
        if !names::is_qualified_name(level).is_empty() {
            continue;
        }
        d.gangs.push(Gang {
            members: vec![(*shape, count)],
            size: count,
            at: set.path.key(KUEUE_REQUIRED),
            value: BadValue::from(level),
            domain: Some(level.to_string()),
            what: "the pod set",
        });
    }
}

/// A TrainJob: the pods of each of its runtime's jobs, counted as Trainer counts them, with
/// `resourcesPerNode` merged into the `node` container of the job labelled as the trainer
/// (with an `mlPolicy`) and, with MPI's `runLauncherAsNode`, of the job named `node`
/// (Trainer v2.3 `pkg/runtime/core/trainingruntime.go`); on a coscheduling or Volcano
/// runtime, a gang of every one of them (the PodGroup's `minMember` counts them all).
fn trainjob_demand(settings: &Settings, job: &TrainJob, runtime: &Runtime, d: &mut Demand) {
    let over = resources_per_node(job);
    let pod_sets: Vec<kueue::PodSet> =
        patch_pod_sets(job, Some(runtime)).into_iter().chain(runtime_pod_sets(runtime)).collect();
    let mut members = Vec::new();
    let mut unclaimed = 0u64;
    for (set, rjob) in runtime.pod_sets(job.num_nodes()).iter().zip(runtime.jobs()) {
        let count = u64::try_from(set.count).unwrap_or(0);
        if count == 0 {
            continue;
        }
        // Runtime patches may set the job's nodeSelector, affinity and tolerations (Kueue's
        // do): the placement is then not the runtime's, and none is assumed.
        let patched =
            job.patches().iter().flat_map(|p| p.patched_jobs()).any(|j| j.name == rjob.name && j.sets_placement);
        let at = Runtime::job_path(set.index).child("template").child("spec").child("template").child("spec");
        let over = over.as_ref().filter(|_| gets_resources_per_node(runtime, rjob));
        let shape = rjob
            .template
            .spec
            .template
            .spec
            .as_ref()
            .and_then(|spec| d.shape(settings, spec, at, format!("{} pod", rjob.name), over, patched));
        let Some(shape) = shape else {
            unclaimed += count;
            continue;
        };
        members.push((shape, count));
        // The patch's annotations win over the runtime's: the first set that asks is Kueue's.
        let asked = pod_sets.iter().find(|s| s.job_name() == rjob.name.as_str() && s.required_level().is_some());
        if let Some(first) = asked {
            let first = kueue::PodSet { count: Some(set.kueue_count), ..first.clone() };
            kueue_pod_sets(&[first], &[shape], d);
        }
    }
    let size: u64 = members.iter().map(|(_, c)| c).sum();
    if runtime.has_gang() && size >= 1 && unclaimed == 0 {
        let value = job.num_nodes().map_or_else(BadValue::omitted, BadValue::from);
        d.gangs.push(Gang {
            members,
            size,
            at: Path::new("spec").child("trainer").child("numNodes"),
            value,
            domain: None,
            what: "the gang",
        });
    }
}

/// The TrainJob's `resourcesPerNode`, as Trainer merges it into a job's `node` container.
pub(super) fn resources_per_node(job: &TrainJob) -> Option<ContainerOverride<'_>> {
    let rpn = job.spec.trainer.as_ref().and_then(|t| t.resources_per_node.as_ref());
    rpn.map(|resources| ContainerOverride {
        container: trainer::NODE,
        resources,
        at: Path::new("spec").child("trainer").child("resourcesPerNode"),
    })
}

/// Whether Trainer merges the TrainJob's `resourcesPerNode` into `job`'s `node` container.
pub(super) fn gets_resources_per_node(runtime: &Runtime, job: &trainer::ReplicatedJob) -> bool {
    let ml = runtime.spec.ml_policy.as_ref();
    let trainer_job = job.ancestor() == Some(trainer::ANCESTOR_TRAINER) && ml.is_some();
    let mpi_node = ml.is_some_and(|m| m.mpi.is_some() && m.runs_launcher_as_node()) && job.name == trainer::NODE;
    trainer_job || mpi_node
}

/// The demand of the object under review; on UPDATE, `None` when nothing it rests on changed
/// (checked when written: rechecking against today's Nodes would block unrelated updates),
/// and always for a Kueue-managed object (Kueue's start writes its flavor into the template
/// of a workload that already holds quota: the object was checked when it was created).
pub(super) fn demand(settings: &Settings, review: &Review, runtime: Option<&Runtime>) -> Option<Demand> {
    if settings.capacity_check == CapacityCheck::Off {
        return None;
    }
    let kueue_managed = kueue_queue_name(review).is_some();
    if kueue_managed && review.old_object.is_some() {
        return None;
    }
    let mut d = Demand { kueue_managed, namespace: review.namespace.clone(), ..Demand::default() };
    match (&review.object, review.old_object.as_ref()) {
        (Resource::BatchJob(job), old) => {
            if made_by_a_checked_owner(job) {
                return None;
            }
            job_demand(settings, job, &mut d);
            if let Some(Resource::BatchJob(old)) = old {
                let mut before = Demand { namespace: review.namespace.clone(), ..Demand::default() };
                job_demand(settings, old, &mut before);
                if before == d {
                    return None;
                }
            }
        }
        (Resource::Kubeflow(job), old) => {
            // The old copy holds no Pod templates; what can change a verdict on update is the
            // gang's size and the replica counts.
            if let Some(Resource::Kubeflow(old)) = old {
                let counts = |j: &KubeflowJob| -> Vec<(String, i32)> {
                    j.replicas().map(|(t, s)| (t.clone(), j.replica_count(t, s))).collect()
                };
                let min_available = |j: &KubeflowJob| j.scheduling_policy().and_then(|p| p.min_available);
                if counts(old) == counts(job) && min_available(old) == min_available(job) {
                    return None;
                }
            }
            kubeflow_demand(settings, job, &mut d);
        }
        (Resource::TrainJob(job), None) => trainjob_demand(settings, job, runtime?, &mut d),
        (Resource::VolcanoJob(job), old) => {
            // Volcano lets an update change only counts (and priorityClassName): unchanged
            // counts were checked when written.
            if let Some(Resource::VolcanoJob(old)) = old
                && volcano_counts(old) == volcano_counts(job)
            {
                return None;
            }
            volcano_demand(settings, job, &mut d);
        }
        (Resource::VolcanoPodGroup(group), old) => {
            if let Some(Resource::VolcanoPodGroup(old)) = old
                && old.min_resources == group.min_resources
            {
                return None;
            }
            volcano_pod_group_demand(review, group, &mut d);
        }
        _ => return None,
    }
    (!d.is_empty() && !d.too_many).then_some(d)
}

/// The LocalQueue a Kueue-managed object names: the label on its own metadata, or, for a
/// CronJob (which Kueue does not manage), on its job template, which each Job it makes
/// carries. `None` when the object is not Kueue's.
pub(super) fn kueue_queue_name<'r>(review: &'r Review) -> Option<&'r str> {
    let name = match &review.object {
        Resource::BatchJob(job) if job.kind == crate::batch::BatchKind::CronJob => {
            job.template_label(KUEUE_QUEUE_LABEL)
        }
        _ => review.metadata.labels.iter().find(|(k, _)| k == KUEUE_QUEUE_LABEL).map(|(_, v)| v.as_ref()),
    };
    name.filter(|n| !n.is_empty())
}

/// A Job a CronJob, a JobSet, a TrainJob or the MPI operator (its launcher) made: its owner was
/// checked, as one gang, when it was written.
fn made_by_a_checked_owner(job: &BatchJob) -> bool {
    job.workload_parent().is_some()
        || job
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| matches!((o.group(), o.kind.as_str()), ("batch", "CronJob") | ("kubeflow.org", "MPIJob")))
}

/// Reports `findings` as the settings say: warnings, or rejections.
pub(super) fn report(settings: &Settings, findings: Vec<Finding>, v: &mut Verdict) {
    for f in findings {
        let rule = if f.gang { GANG_FITS } else { POD_FITS };
        match settings.capacity_check {
            CapacityCheck::Off => {}
            CapacityCheck::Warn => v.warn(rule, f.at, f.message),
            CapacityCheck::Deny => v.deny(rule, FieldError::invalid(f.at, f.value, f.message)),
        }
    }
}

/// The extended resources `findings` rest on: a DeviceClass may serve them through DRA
/// (Kubernetes 1.34+, beta in 1.36) on Nodes that do not list them.
pub(super) fn extended_resources(findings: &[Finding]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A pod asks for a few resources: a list is enough to keep each once.
    for r in findings.iter().flat_map(|f| f.resources.iter()).filter(|r| is_extended_resource(r)) {
        if !out.contains(r) {
            out.push(r.clone());
        }
    }
    out
}

/// The RuntimeClass list: every class, only its name and the tolerations it adds.
pub(super) fn runtime_class_query() -> Query<'static> {
    Query {
        api_version: "node.k8s.io/v1",
        kind: "RuntimeClass",
        namespace: None,
        field_masks: &["metadata.name", "scheduling.tolerations"],
    }
}

/// Counts, for each shape whose pods name a RuntimeClass, the class's
/// `scheduling.tolerations` (from `list`, the class list's text): a class that is not listed,
/// a list that cannot be read, or none at all hold its pods to no taint.
pub(super) fn with_runtime_classes(demand: &mut Demand, list: Option<&str>) {
    let list: serde_json::Value = list.and_then(|l| serde_json::from_str(l).ok()).unwrap_or_default();
    let items = list.get("items").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let class = |name: &str| items.iter().find(|c| c.pointer("/metadata/name").and_then(|n| n.as_str()) == Some(name));
    for (shape, name) in demand.shapes.iter_mut().zip(&demand.runtime_classes) {
        let Some(name) = name else { continue };
        let tolerations = class(name).map(|c| c.pointer("/scheduling/tolerations").unwrap_or(&serde_json::Value::Null));
        match tolerations.map(|t| shape.placement.add_tolerations(t)) {
            Some(Some(())) => shape.tolerations_from.insert(0, format!("RuntimeClass {name:?}")),
            _ => shape.placement.tolerate_every_taint(),
        }
    }
    demand.runtime_classes.iter_mut().for_each(|c| *c = None);
}

/// The ResourceSlice list: every slice, with what places and counts its devices.
pub(super) fn resource_slice_query() -> Query<'static> {
    Query {
        api_version: "resource.k8s.io/v1",
        kind: "ResourceSlice",
        namespace: None,
        field_masks: crate::capacity::devices::SLICE_MASKS,
    }
}

/// The extended resources the cluster's DeviceClasses serve, read from a list answer.
pub(super) fn served_by_device_classes(list: &str) -> Result<Vec<String>, String> {
    let list: serde_json::Value = serde_json::from_str(list).map_err(|e| e.to_string())?;
    let items = list.get("items").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(items
        .iter()
        .filter_map(|class| class.get("spec")?.get("extendedResourceName")?.as_str().map(str::to_string))
        .collect())
}

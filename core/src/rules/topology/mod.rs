//! Rule set 2, topology: `schedulingConstraints.topology` on PodGroups, Workload templates and
//! 1.37 Jobs' `spec.scheduling`, the node labels those keys name, Kueue topology annotations
//! on Kubeflow replica templates and Job Pod templates, and capacity: whether the pods a Job,
//! a Kubeflow job or a TrainJob makes can ever fit the cluster's Nodes. Ids and catalogue
//! numbers (rules.md) are listed in [`RULES`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::batch::BatchJob;
use crate::cluster::{Cluster, LookupError, Query};
use crate::field::{BadValue, FieldError, Path, plural};
use crate::kubeflow::{KubeflowJob, ReplicaSpec};
use crate::names::{self, check};
use crate::review::kinds;
use crate::review::{Resource, Review};
use crate::rules::RuleInfo;
use crate::rules::{Names, RuleSet, names};
use crate::scheduling::{Disruption, GroupOrigin, GroupSpec};
use crate::trainer::{Runtime, TrainJob};
use crate::verdict::Verdict;

mod capacity;
mod devices;
mod groups;
mod kueue;
mod nodes;
mod queue;
mod volcano_queue;

pub use capacity::{CapacityCheck, Toleration};
use groups::{check_group_spec, is_allowed, same_constraints};
use kueue::{check_pod_sets, job_pod_sets, patch_pod_sets, replica_pod_sets, runtime_pod_sets};
pub use nodes::node_field_masks;
use nodes::{NodeLookup, check_nodes};
pub use queue::{
    KUEUE_API_VERSIONS, QUEUE_CLUSTER_QUEUE, QUEUE_LOCAL_QUEUE, QUEUE_QUOTA, QUEUE_RESOURCE, QueueCheck,
    cluster_queue_query, local_queue_query,
};
pub use volcano_queue::{VOLCANO_QUEUE, VOLCANO_QUEUE_CAPABILITY};

/// `+k8s:maxItems=1` on `PodGroupSchedulingConstraints.topology` (k8s.io/api v0.36).
const MAX_TOPOLOGY_ENTRIES: usize = 1;

/// Kueue's pod-set annotations (kubernetes-sigs/kueue `apis/kueue/*/topology_types.go`).
pub const KUEUE_REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
pub const KUEUE_PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";
pub const KUEUE_UNCONSTRAINED: &str = "kueue.x-k8s.io/podset-unconstrained-topology";
pub const KUEUE_SLICE_REQUIRED: &str = "kueue.x-k8s.io/podset-slice-required-topology";
pub const KUEUE_SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
pub const KUEUE_GROUP_NAME: &str = "kueue.x-k8s.io/podset-group-name";
pub const KUEUE_SLICE_CONSTRAINTS: &str = "kueue.x-k8s.io/podset-slice-required-topology-constraints";

pub const MAX_ENTRIES: &str = "topology.max-entries";
pub const KEY: &str = "topology.key";
pub const IMMUTABLE: &str = "topology.immutable";
pub const PREEMPTION: &str = "topology.preemption";
pub const KEY_ON_NODES: &str = "topology.key-on-nodes";
pub const DOMAIN_SIZE: &str = "topology.domain-size";
pub const BASIC_POLICY: &str = "topology.basic-policy";
pub const ALLOWED_KEYS: &str = "topology.allowed-keys";
pub const REQUIRE_TOPOLOGY: &str = "topology.require-topology";
pub const KUEUE_ONE_OF: &str = "topology.kueue-one-of";
pub const KUEUE_VALUE: &str = "topology.kueue-value";
pub const KUEUE_SLICE: &str = "topology.kueue-slice";
pub const KUEUE_GROUP: &str = "topology.kueue-group";
pub const KUEUE_SLICE_CONSTRAINTS_RULE: &str = "topology.kueue-slice-constraints";
pub const VOLCANO_NETWORK_TOPOLOGY: &str = "topology.volcano-network-topology";
pub const POD_FITS: &str = "topology.pod-fits";
pub const GANG_FITS: &str = "topology.gang-fits";

/// Every rule of the set, for documentation and the playground.
pub const RULES: &[RuleInfo] = &[
    RuleInfo { id: MAX_ENTRIES, catalogue: "T-01", summary: "schedulingConstraints.topology has at most 1 entry" },
    RuleInfo { id: KEY, catalogue: "T-02, T-03", summary: "topology[].key is set and a valid label key" },
    RuleInfo {
        id: IMMUTABLE,
        catalogue: "T-05",
        summary: "a PodGroup's schedulingConstraints never change (1.37: nor a template's or a CompositePodGroup's)",
    },
    RuleInfo { id: PREEMPTION, catalogue: "T-08", summary: "1.36: warn: topology-constrained groups cannot preempt" },
    RuleInfo { id: KEY_ON_NODES, catalogue: "T-09", summary: "some node carries every topology key used" },
    RuleInfo {
        id: DOMAIN_SIZE,
        catalogue: "T-07, T-09",
        summary: "warn: a gang larger than every domain cannot fit one pod per node",
    },
    RuleInfo { id: BASIC_POLICY, catalogue: "T-10", summary: "warn: topology with a basic policy" },
    RuleInfo {
        id: ALLOWED_KEYS,
        catalogue: "setting allowedTopologyKeys",
        summary: "only the listed topology keys and Kueue levels",
    },
    RuleInfo {
        id: REQUIRE_TOPOLOGY,
        catalogue: "setting requireTopologyForMinCountAtLeast",
        summary: "large gangs must set a topology constraint",
    },
    RuleInfo { id: KUEUE_ONE_OF, catalogue: "T-21", summary: "at most one Kueue topology annotation per replica" },
    RuleInfo {
        id: KUEUE_VALUE,
        catalogue: "T-22",
        summary: "Kueue topology levels are label names, unconstrained is a boolean",
    },
    RuleInfo { id: KUEUE_SLICE, catalogue: "T-23", summary: "Kueue slice annotations come in pairs, size 1..replicas" },
    RuleInfo { id: KUEUE_GROUP, catalogue: "T-24", summary: "Kueue pod-set groups are well formed" },
    RuleInfo {
        id: KUEUE_SLICE_CONSTRAINTS_RULE,
        catalogue: "T-25",
        summary: "Kueue's multi-layer slice annotation: 1 to 3 layers, label names, sizes that divide, first within the pod set",
    },
    RuleInfo {
        id: VOLCANO_NETWORK_TOPOLOGY,
        catalogue: "V2-30",
        summary: "Trainer v2 Volcano runtime: networkTopology mode is hard or soft, highestTierAllowed at least 1",
    },
    RuleInfo {
        id: POD_FITS,
        catalogue: "capacity (setting capacityCheck)",
        summary: "each pod fits some node it may use: its requests within the node's allocatable",
    },
    RuleInfo {
        id: GANG_FITS,
        catalogue: "capacity (setting capacityCheck)",
        summary: "the pods a gang or a Kueue pod set needs at once fit the nodes, or one topology domain",
    },
    RuleInfo {
        id: QUEUE_LOCAL_QUEUE,
        catalogue: "queue (setting queueCheck)",
        summary: "the Kueue LocalQueue named by kueue.x-k8s.io/queue-name exists in the object's namespace",
    },
    RuleInfo {
        id: QUEUE_CLUSTER_QUEUE,
        catalogue: "queue (setting queueCheck)",
        summary: "the ClusterQueue the LocalQueue points to exists",
    },
    RuleInfo {
        id: QUEUE_RESOURCE,
        catalogue: "queue (setting queueCheck)",
        summary: "some resource group of the ClusterQueue covers every resource the pods ask for",
    },
    RuleInfo {
        id: QUEUE_QUOTA,
        catalogue: "queue (setting queueCheck)",
        summary: "no pod set, nor the whole job, asks more than the ClusterQueue can ever give; some flavor of each resource group holds all of the group a pod set asks",
    },
    RuleInfo {
        id: VOLCANO_QUEUE,
        catalogue: "queue (setting queueCheck)",
        summary: "the Volcano Queue a vcjob, Volcano PodGroup or Volcano-scheduled Kubeflow job names exists and is Open",
    },
    RuleInfo {
        id: VOLCANO_QUEUE_CAPABILITY,
        catalogue: "queue (setting queueCheck)",
        summary: "the Volcano Queue's capability holds the least minResources the job's PodGroup can have",
    },
];

/// Settings of the topology rule set.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    /// When set, the only keys `schedulingConstraints.topology[].key` and the Kueue topology
    /// annotations may name.
    pub allowed_topology_keys: Option<Vec<String>>,
    /// Gangs (PodGroups and Workload templates) with at least this `minCount` must carry a
    /// topology constraint.
    pub require_topology_for_min_count_at_least: Option<i32>,
    /// List the cluster's Nodes (labels only, one call per request) and reject keys no node
    /// carries (T-09).
    pub check_node_labels: bool,
    /// Reject, rather than warn, when the Node lookup fails.
    pub fail_on_lookup_error: bool,
    /// Check that the pods of Jobs, Kubeflow jobs and TrainJobs can fit the Nodes: `off`,
    /// `warn` (a cluster autoscaler may add Nodes) or `deny`.
    pub capacity_check: CapacityCheck,
    /// Resources the cluster's scheduler ignores (NodeResourcesFit `ignoredResources`; `<group>/*`
    /// for its `ignoredResourceGroups`): never held against a pod.
    pub capacity_ignored_resources: Vec<String>,
    /// Tolerations the cluster's own admission steps add to every Pod (its mutating webhooks,
    /// PodTolerationRestriction's namespace defaults): counted for every pod; `{operator:
    /// Exists}` holds no pod to any taint.
    pub capacity_added_tolerations: Vec<capacity::Toleration>,
    /// Check that Kueue can ever admit objects labelled `kueue.x-k8s.io/queue-name` (the
    /// LocalQueue and ClusterQueue exist, the quota can hold the pods): `off`, `warn` (the
    /// queue may be created after the job) or `deny`.
    pub queue_check: QueueCheck,
    /// The frameworks the cluster's Kueue manages (its `integrations.frameworks`): a labelled
    /// object of another kind gets no queue finding, since Kueue ignores its label.
    #[serde(deserialize_with = "crate::rules::read_names")]
    pub kueue_frameworks: Names,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            allowed_topology_keys: None,
            require_topology_for_min_count_at_least: None,
            check_node_labels: true,
            fail_on_lookup_error: false,
            capacity_check: CapacityCheck::Warn,
            capacity_ignored_resources: Vec::new(),
            capacity_added_tolerations: Vec::new(),
            queue_check: QueueCheck::Warn,
            kueue_frameworks: names(&queue::KUEUE_DEFAULT_FRAMEWORKS),
        }
    }
}

pub struct Topology;

impl RuleSet for Topology {
    const NAME: &'static str = "topology";
    const KINDS: u32 = kinds::SCHEDULING | kinds::KUBEFLOW | kinds::BATCH | kinds::TRAINER | kinds::VOLCANO;
    type Settings = Settings;

    fn validate_settings(s: &Settings) -> Result<(), String> {
        if let Some(keys) = &s.allowed_topology_keys {
            if keys.is_empty() {
                return Err(
                    "allowedTopologyKeys: must list at least one label key (leave the setting out to allow every key)"
                        .into(),
                );
            }
            for (i, key) in keys.iter().enumerate() {
                if let Some(msg) = names::is_qualified_name(key).first() {
                    return Err(format!("allowedTopologyKeys[{i}]: {key:?} is not a valid label key: {msg}"));
                }
            }
        }
        if let Some(n) = s.require_topology_for_min_count_at_least.filter(|n| *n < 1) {
            return Err(format!("requireTopologyForMinCountAtLeast: must be at least 1, got {n}"));
        }
        for (i, name) in s.capacity_ignored_resources.iter().enumerate() {
            let errors = match name.strip_suffix("/*") {
                Some(group) => names::is_dns1123_subdomain(group),
                None => names::is_qualified_name(name),
            };
            if let Some(msg) = errors.first() {
                return Err(format!(
                    "capacityIgnoredResources[{i}]: {name:?} is not a resource name or a `<group>/*` group: {msg}"
                ));
            }
        }
        for (i, toleration) in s.capacity_added_tolerations.iter().enumerate() {
            if let Some(problem) = toleration.problem() {
                return Err(format!("capacityAddedTolerations[{i}].{problem}"));
            }
        }
        queue::validate_frameworks(&s.kueue_frameworks)
    }

    fn check_groups(settings: &Settings, review: &Review, groups: &[GroupSpec], cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        let mut lookups = Vec::new();
        let mut trainjob_runtime = None;
        let old_groups = review.old_object.as_ref().map(Resource::group_specs).unwrap_or_default();
        // Groups are matched across an update by what identifies them (a template's names
        // from the top; an object's own spec), never by position.
        let old_by_key: HashMap<&str, &GroupSpec> = old_groups.iter().map(|g| (g.key.as_str(), g)).collect();
        for group in groups {
            let old = old_by_key.get(group.key.as_str());
            // Ratchet like the apiserver: a group whose constraint and policy did not change
            // was checked when it was created, and rechecking it (against today's nodes or
            // settings) would block unrelated updates such as finalizer removal.
            if !old.is_some_and(|old| same_constraints(old, group)) {
                check_group_spec(settings, group, &mut v, &mut lookups);
            }
            // T-05: a PodGroup's constraints are immutable; in 1.37 also those of every
            // template, of a CompositePodGroup and of a Job (1.36 templates are immutable as a
            // whole; a CronJob's job template may change).
            if let Some(old) = old
                && old.scheduling_constraints != group.scheduling_constraints
                && (group.origin == GroupOrigin::PodGroup || !group.is_136())
                && group.origin != GroupOrigin::CronJob
            {
                let value = BadValue::of(&group.scheduling_constraints);
                v.deny(IMMUTABLE, FieldError::immutable(group.path.child("schedulingConstraints"), value));
            }
        }
        let old = review.old_object.as_ref();
        match &review.object {
            Resource::Kubeflow(job) => {
                let old = match old {
                    Some(Resource::Kubeflow(old)) => replica_pod_sets(old),
                    _ => Vec::new(),
                };
                check_pod_sets(settings, &replica_pod_sets(job), &old, &mut v, &mut lookups);
            }
            Resource::BatchJob(job) => {
                let old = match old {
                    Some(Resource::BatchJob(old)) => job_pod_sets(old),
                    _ => Vec::new(),
                };
                check_pod_sets(settings, &job_pod_sets(job), &old, &mut v, &mut lookups);
            }
            Resource::Runtime(runtime) => {
                let old = match old {
                    Some(Resource::Runtime(old)) => runtime_pod_sets(old),
                    _ => Vec::new(),
                };
                check_pod_sets(settings, &runtime_pod_sets(runtime), &old, &mut v, &mut lookups);
                check_network_topology(runtime, &mut v);
            }
            Resource::TrainJob(job) => {
                let old = match old {
                    Some(Resource::TrainJob(old)) => Some(old),
                    _ => None,
                };
                // Unchanged patches were checked when they were written; capacity is checked
                // when the job is created (its trainer and runtime never change).
                // The queue check counts its pod sets too.
                let queued = queue::queued(settings, review).is_some();
                let capacity = old.is_none() && (settings.capacity_check != CapacityCheck::Off || queued);
                let runtime = match old {
                    Some(old) if old.spec.runtime_patches == job.spec.runtime_patches => None,
                    _ => train_job_runtime(settings, job, &review.namespace, cluster, capacity, &mut v),
                };
                let old = old.map(|o| patch_pod_sets(o, None)).unwrap_or_default();
                check_pod_sets(settings, &patch_pod_sets(job, runtime.as_ref()), &old, &mut v, &mut lookups);
                trainjob_runtime = runtime;
            }
            _ => {}
        }
        if !settings.check_node_labels {
            lookups.clear();
        }
        let demand = capacity::demand(settings, review, trainjob_runtime.as_ref()).unwrap_or_default();
        check_nodes(settings, &lookups, demand, cluster, &mut v);
        queue::check_queue(settings, review, trainjob_runtime.as_ref(), cluster, &mut v);
        volcano_queue::check_volcano_queue(settings, review, cluster, &mut v);
        v
    }
}

/// The runtime a TrainJob runs on, looked up when a patch sets a Kueue topology annotation
/// (it counts the pod sets a slice must fit), or for the capacity or queue rules (its pod
/// templates).
/// A runtime that is missing is the runPolicy set's business.
fn train_job_runtime(
    settings: &Settings,
    job: &TrainJob,
    namespace: &str,
    cluster: &dyn Cluster,
    capacity: bool,
    v: &mut Verdict,
) -> Option<Runtime> {
    let annotated = job
        .patches()
        .iter()
        .flat_map(|p| p.patched_jobs())
        .any(|j| j.pod_annotations.is_some_and(|a| a.keys().any(|k| k.starts_with("kueue.x-k8s.io/podset-"))));
    if !annotated && !capacity {
        return None;
    }
    let lookup = crate::trainer::lookup_runtime(cluster, job, namespace)?;
    match lookup.found {
        Ok(found) => found,
        Err(e) => {
            let (rule, why) = if annotated {
                (KUEUE_SLICE, "to count the pod sets of the job's Kueue topology annotations")
            } else if settings.capacity_check != CapacityCheck::Off {
                (POD_FITS, "to check that the job's nodes fit the cluster")
            } else {
                (queue::QUEUE_QUOTA, "to count the pod sets its queue must admit")
            };
            let what = format!("{} {why}", lookup.what);
            v.lookup_failed(rule, Path::new("spec").child("runtimeRef"), &what, &e, settings.fail_on_lookup_error);
            None
        }
    }
}

/// A Volcano runtime's `networkTopology`: Volcano's modes, and a tier to go up to.
fn check_network_topology(runtime: &Runtime, v: &mut Verdict) {
    let Some(nt) = runtime.spec.pod_group_policy.as_ref().and_then(|p| p.volcano.as_ref()?.network_topology.as_ref())
    else {
        return;
    };
    let path = Path::new("spec").child("podGroupPolicy").child("volcano").child("networkTopology");
    if let Some(mode) = nt.mode.as_deref().filter(|m| !["hard", "soft"].contains(m)) {
        v.deny(VOLCANO_NETWORK_TOPOLOGY, FieldError::not_supported(path.child("mode"), mode, &["hard", "soft"]));
    }
    if let Some(tier) = nt.highest_tier_allowed.filter(|t| *t < 1) {
        v.deny(
            VOLCANO_NETWORK_TOPOLOGY,
            FieldError::invalid(path.child("highestTierAllowed"), tier, "must be greater than or equal to 1"),
        );
    }
}

#[cfg(test)]
mod tests;

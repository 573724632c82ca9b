//! Rule set 2, topology: `schedulingConstraints.topology` on PodGroups, Workload templates and
//! 1.37 Jobs' `spec.scheduling`, the node labels those keys name, and Kueue topology
//! annotations on Kubeflow replica templates and Job Pod templates. Ids and catalogue numbers (rules.md) are listed in [`RULES`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::batch::BatchJob;
use crate::cluster::{Cluster, LookupError, Query};
use crate::decode::Text;
use crate::engine::RuleSet;
use crate::field::{BadValue, FieldError, Path, plural};
use crate::kubeflow::{KubeflowJob, ReplicaSpec};
use crate::names::{self, check};
use crate::review::{Resource, Review};
use crate::rules::RuleInfo;
use crate::scheduling::{Disruption, GroupOrigin, GroupSpec, group_specs};
use crate::verdict::Verdict;

/// `+k8s:maxItems=1` on `PodGroupSchedulingConstraints.topology` (k8s.io/api v0.36).
const MAX_TOPOLOGY_ENTRIES: usize = 1;

/// Kueue's pod-set annotations (kubernetes-sigs/kueue `apis/kueue/*/topology_types.go`).
pub const KUEUE_REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
pub const KUEUE_PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";
pub const KUEUE_UNCONSTRAINED: &str = "kueue.x-k8s.io/podset-unconstrained-topology";
pub const KUEUE_SLICE_REQUIRED: &str = "kueue.x-k8s.io/podset-slice-required-topology";
pub const KUEUE_SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
pub const KUEUE_GROUP_NAME: &str = "kueue.x-k8s.io/podset-group-name";

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
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            allowed_topology_keys: None,
            require_topology_for_min_count_at_least: None,
            check_node_labels: true,
            fail_on_lookup_error: false,
        }
    }
}

pub struct Topology;

impl RuleSet for Topology {
    const NAME: &'static str = "topology";
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
        Ok(())
    }

    fn check(settings: &Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        let mut lookups = Vec::new();
        let old_groups = review.old_object.as_ref().map(group_specs).unwrap_or_default();
        // Groups are matched across an update by what identifies them (a template's names
        // from the top; an object's own spec), never by position.
        let old_by_key: HashMap<&str, &GroupSpec> = old_groups.iter().map(|g| (g.key.as_str(), g)).collect();
        for group in group_specs(&review.object) {
            let old = old_by_key.get(group.key.as_str());
            // Ratchet like the apiserver: a group whose constraint and policy did not change
            // was checked when it was created, and rechecking it (against today's nodes or
            // settings) would block unrelated updates such as finalizer removal.
            if !old.is_some_and(|old| same_constraints(old, &group)) {
                check_group_spec(settings, &group, &mut v, &mut lookups);
            }
            // T-05: a PodGroup's constraints are immutable; in 1.37 also those of every
            // template, of a CompositePodGroup and of a Job (1.36 templates are immutable as a
            // whole; a CronJob's job template may change).
            if let Some(old) = old
                && old.scheduling_constraints != group.scheduling_constraints
                && (group.origin == GroupOrigin::PodGroup || !group.is_136())
                && group.origin != GroupOrigin::CronJob
            {
                v.deny(IMMUTABLE, FieldError::immutable(group.path.child("schedulingConstraints")));
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
            _ => {}
        }
        if settings.check_node_labels {
            check_nodes(settings, &lookups, cluster, &mut v);
        }
        v
    }
}

/// A topology key to look for on the cluster's nodes.
struct NodeLookup<'a> {
    key: &'a str,
    /// Where the key was written.
    path: Path,
    /// The gang's `minCount` and its path, for the domain-size warning.
    gang: Option<(i32, Path)>,
}

fn same_constraints(old: &GroupSpec, new: &GroupSpec) -> bool {
    old.scheduling_constraints == new.scheduling_constraints && old.scheduling_policy == new.scheduling_policy
}

/// T-01, T-02, T-08, T-10 and the settings, for one group spec: a PodGroup, a
/// CompositePodGroup or a Workload template at any depth.
fn check_group_spec<'a>(settings: &Settings, g: &GroupSpec<'a>, v: &mut Verdict, lookups: &mut Vec<NodeLookup<'a>>) {
    let topology_path = g.path.child("schedulingConstraints").child("topology");
    let entries: Vec<&'a str> = g.topology_keys().collect();
    let gang = g.gang_min_count_at().filter(|(n, _)| *n >= 1);
    let min_count = gang.as_ref().map(|(n, _)| *n);

    if entries.is_empty() {
        if let Some(at_least) = settings.require_topology_for_min_count_at_least
            && let Some(n) = min_count.filter(|n| *n >= at_least)
        {
            v.deny(
                REQUIRE_TOPOLOGY,
                FieldError::required(
                    topology_path,
                    format!("gangs with minCount {at_least} or more must be kept in one topology domain (settings.requireTopologyForMinCountAtLeast), and this one has minCount {n}"),
                ),
            );
        }
        return;
    }
    if entries.len() > MAX_TOPOLOGY_ENTRIES {
        // One error for the list, no per-entry checks or lookups, as the apiserver does.
        v.deny(MAX_ENTRIES, FieldError::too_many(topology_path.clone(), entries.len(), MAX_TOPOLOGY_ENTRIES));
        return;
    }
    for (i, key) in entries.into_iter().enumerate() {
        let path = topology_path.index(i).child("key");
        let errors = check(&path, key, true, names::is_qualified_name);
        if !errors.is_empty() {
            v.deny_all(KEY, errors);
            continue;
        }
        // A key the settings refuse is rejected already; looking it up would only add noise.
        if is_allowed(settings, key, &path, v) {
            lookups.push(NodeLookup { key, path, gang: gang.clone() });
        }
    }

    // A basic composite places whole child groups, which the message is not about.
    if g.is_basic() && !g.origin.is_composite() {
        v.warn(
            BASIC_POLICY,
            topology_path.clone(),
            "with a basic schedulingPolicy the scheduler checks the topology only against the pods it has seen so far, so pods created later may find no room in the chosen domain: use a gang policy, or hold the pods with schedulingGates until all of them exist",
        );
    }
    // Kubernetes 1.37 integrates topology with workload-aware preemption (KEP-5732), so the
    // warning is about 1.36 only.
    if !g.is_136() {
        return;
    }
    let mut expectations = Vec::new();
    if let Some(class) = g.priority_class_name.filter(|c| !c.is_empty()) {
        expectations.push(format!("priorityClassName {class:?}"));
    }
    if let Some(p) = g.priority.filter(|p| *p != 0) {
        expectations.push(format!("priority {p}"));
    }
    if let Some(Disruption::V1alpha2(mode)) = g.disruption_mode.filter(|m| *m == Disruption::V1alpha2("PodGroup")) {
        expectations.push(format!("disruptionMode {mode:?}"));
    }
    if !expectations.is_empty() {
        v.warn(
            PREEMPTION,
            topology_path,
            format!(
                "is combined with {}, but Kubernetes 1.36 does not run workload-aware preemption for pod groups with scheduling constraints (\"workload aware preemption is not supported for pod groups with scheduling constraints\"), so the scheduler will not preempt other pods to make room for this group",
                expectations.join(" and ")
            ),
        );
    }
}

/// `allowedTopologyKeys`: rejects `key` at `path` unless it is listed.
fn is_allowed(settings: &Settings, key: &str, path: &Path, v: &mut Verdict) -> bool {
    match &settings.allowed_topology_keys {
        Some(allowed) if !allowed.iter().any(|a| a == key) => {
            v.deny(ALLOWED_KEYS, FieldError::not_supported(path.clone(), key, allowed));
            false
        }
        _ => true,
    }
}

/// One Kueue pod set's view for the Kueue rules: a Kubeflow replica, or a Job's Pods.
struct PodSet<'a> {
    /// What identifies the pod set across an update: the replica type (empty for a Job).
    replica_type: &'a str,
    /// `spec.<map>[<type>].template.metadata.annotations`, `spec.template.metadata.annotations`
    path: Path,
    annotations: &'a BTreeMap<String, String>,
    /// Kueue's pod-set count: `replicas` (1 when unset), or the Pods a Job runs at once.
    count: i32,
}

impl<'a> PodSet<'a> {
    fn get(&self, annotation: &str) -> Option<&'a str> {
        self.annotations.get(annotation).map(String::as_str)
    }

    /// The topology request Kueue builds: required wins over preferred.
    fn request(&self) -> Option<(&'static str, &'a str)> {
        [KUEUE_REQUIRED, KUEUE_PREFERRED].into_iter().find_map(|a| self.get(a).map(|v| (a, v)))
    }
}

fn replica_pod_sets(job: &KubeflowJob) -> Vec<PodSet<'_>> {
    let map = Path::new("spec").child(job.kind.replica_specs_field());
    job.replicas()
        .filter_map(|(replica_type, spec): (&String, &ReplicaSpec)| {
            let annotations = spec.template.metadata.as_ref()?.annotations.as_ref()?;
            Some(PodSet {
                replica_type,
                path: map.key(replica_type).child("template").child("metadata").child("annotations"),
                annotations,
                count: spec.replicas.unwrap_or(1),
            })
        })
        .collect()
}

/// A Job's one pod set (a CronJob's: its job template's), with Kueue's count for it.
fn job_pod_sets(job: &BatchJob) -> Vec<PodSet<'_>> {
    let template = &job.spec.template;
    let Some(annotations) = template.metadata.as_ref().and_then(|m| m.annotations.as_ref()) else { return Vec::new() };
    let path = job.spec_path().child("template").child("metadata").child("annotations");
    vec![PodSet { replica_type: "", path, annotations, count: job.spec.pods_at_once() }]
}

/// T-21..T-24 for every pod set of a Kubeflow job or a Job, with Kueue's wording
/// (kubernetes-sigs/kueue `pkg/controller/jobframework/tas_validation.go`).
fn check_pod_sets<'a>(
    settings: &Settings,
    sets: &[PodSet<'a>],
    old_sets: &[PodSet],
    v: &mut Verdict,
    lookups: &mut Vec<NodeLookup<'a>>,
) {
    let old_by_type: HashMap<&str, &PodSet> = old_sets.iter().map(|o| (o.replica_type, o)).collect();
    for set in sets {
        let unchanged = |annotation: &str| {
            old_by_type.get(set.replica_type).is_some_and(|o| o.get(annotation) == set.get(annotation))
        };
        check_pod_set(set, v);
        for annotation in [KUEUE_REQUIRED, KUEUE_PREFERRED, KUEUE_SLICE_REQUIRED] {
            let Some(level) = set.get(annotation) else { continue };
            let path = set.path.key(annotation);
            // Settings and nodes are checked for levels this request adds (see `check`).
            if names::is_qualified_name(level).is_empty()
                && !unchanged(annotation)
                && is_allowed(settings, level, &path, v)
            {
                lookups.push(NodeLookup { key: level, path, gang: None });
            }
        }
    }
    check_pod_set_groups(sets, v);
}

fn check_pod_set(set: &PodSet, v: &mut Verdict) {
    let path = &set.path;
    let (required, preferred) = (set.get(KUEUE_REQUIRED), set.get(KUEUE_PREFERRED));
    let unconstrained = set.get(KUEUE_UNCONSTRAINED);
    let (slice_required, slice_size) = (set.get(KUEUE_SLICE_REQUIRED), set.get(KUEUE_SLICE_SIZE));

    if [required, preferred, unconstrained].iter().flatten().count() > 1 {
        v.deny(
            KUEUE_ONE_OF,
            FieldError::invalid(
                path.clone(),
                BadValue::omitted(),
                format!(
                    "must not contain more than one topology annotation: [{KUEUE_REQUIRED:?}, {KUEUE_PREFERRED:?}, {KUEUE_UNCONSTRAINED:?}]"
                ),
            ),
        );
    }
    for (annotation, value) in
        [(KUEUE_REQUIRED, required), (KUEUE_PREFERRED, preferred), (KUEUE_SLICE_REQUIRED, slice_required)]
    {
        let Some(value) = value else { continue };
        // Kueue's ValidateLabelName: an empty value is invalid too, not "required".
        for msg in names::is_qualified_name(value) {
            v.deny(KUEUE_VALUE, FieldError::invalid(path.key(annotation), value, msg));
        }
    }
    if let Some(group) = set.get(KUEUE_GROUP_NAME) {
        let group_path = path.key(KUEUE_GROUP_NAME);
        if !group.is_empty() && group.bytes().all(|b| b.is_ascii_digit()) && group.parse::<u64>().is_ok() {
            v.deny(KUEUE_GROUP, FieldError::invalid(group_path.clone(), group, "must not be a number"));
        }
        for (present, annotation) in [(slice_size, KUEUE_SLICE_SIZE), (slice_required, KUEUE_SLICE_REQUIRED)] {
            if present.is_some() {
                let detail = format!("may not be set when '{annotation}' is specified");
                v.deny(KUEUE_GROUP, FieldError::forbidden(group_path.clone(), detail));
            }
        }
        if required.is_none() && preferred.is_none() {
            let detail = format!("may not be set when neither '{KUEUE_PREFERRED}' nor '{KUEUE_REQUIRED}' is specified");
            v.deny(KUEUE_GROUP, FieldError::forbidden(group_path, detail));
        }
    }
    if let Some(value) = unconstrained.filter(|u| !is_go_bool(u)) {
        v.deny(KUEUE_VALUE, FieldError::invalid(path.key(KUEUE_UNCONSTRAINED), value, "must be a boolean value"));
    }
    if let Some(value) = slice_size {
        let size_path = path.key(KUEUE_SLICE_SIZE);
        match value.parse::<i32>() {
            Err(_) => v.deny(KUEUE_SLICE, FieldError::invalid(size_path, value, "must be a numeric value")),
            Ok(n) if n < 1 => {
                v.deny(KUEUE_SLICE, FieldError::invalid(size_path, value, "must be greater than or equal to 1"))
            }
            Ok(n) if n > set.count => v.deny(
                KUEUE_SLICE,
                FieldError::invalid(size_path, value, format!("must not be greater than pod set count {}", set.count)),
            ),
            Ok(_) => {}
        }
    }
    match (slice_required, slice_size) {
        (Some(_), None) => v.deny(
            KUEUE_SLICE,
            FieldError::required(
                path.key(KUEUE_SLICE_SIZE),
                format!("must be set when '{KUEUE_SLICE_REQUIRED}' is specified"),
            ),
        ),
        (None, Some(_)) => v.deny(
            KUEUE_SLICE,
            FieldError::forbidden(
                path.key(KUEUE_SLICE_SIZE),
                format!("may not be set when '{KUEUE_SLICE_REQUIRED}' is not specified"),
            ),
        ),
        _ => {}
    }
}

/// Go's `strconv.ParseBool`.
fn is_go_bool(s: &str) -> bool {
    matches!(s, "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False")
}

/// T-24, Kueue's `ValidatePodSetGroupingTopology`: replicas sharing a group name (with a
/// required or preferred topology) come in pairs, one of them a single pod, asking for the
/// same topology. Kueue applies this to its grouping-aware integrations; for Kubeflow jobs
/// it admits such groups unchecked, which is why the policy checks them.
fn check_pod_set_groups(sets: &[PodSet], v: &mut Verdict) {
    // Groups in the order they first appear, found by name in constant time.
    let mut groups: Vec<(&str, Vec<&PodSet>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for set in sets.iter().filter(|s| s.request().is_some()) {
        let Some(name) = set.get(KUEUE_GROUP_NAME) else { continue };
        match index.get(name) {
            Some(&i) => groups[i].1.push(set),
            None => {
                index.insert(name, groups.len());
                groups.push((name, vec![set]));
            }
        }
    }
    for (name, members) in groups {
        let [a, b] = members.as_slice() else {
            for m in &members {
                let detail = format!("can only define groups of exactly 2 pod sets, got: {} pod set(s)", members.len());
                v.deny(KUEUE_GROUP, FieldError::invalid(m.path.key(KUEUE_GROUP_NAME), name, detail));
            }
            continue;
        };
        if a.count != 1 && b.count != 1 {
            let detail = format!(
                "can only define groups where at least one pod set has only 1 replica, got: {} replica(s) and {} replica(s) in the group",
                a.count, b.count
            );
            for m in [a, b] {
                v.deny(KUEUE_GROUP, FieldError::invalid(m.path.key(KUEUE_GROUP_NAME), name, detail.clone()));
            }
        }
        if a.request() != b.request() {
            for (m, other) in [(a, b), (b, a)] {
                let detail = format!(
                    "must specify '{KUEUE_REQUIRED}' or '{KUEUE_PREFERRED}' topology consistent with '{}' in group '{name}'",
                    other.path
                );
                v.deny(KUEUE_GROUP, FieldError::invalid(m.path.clone(), BadValue::omitted(), detail));
            }
        }
    }
}

/// How the cluster's nodes carry one label.
#[derive(Default)]
struct LabelStats<'a> {
    nodes: usize,
    /// Nodes per label value (per topology domain).
    domains: HashMap<Cow<'a, str>, usize>,
}

/// The label statistics of a Node list, read straight from the host's JSON answer: only the
/// values of the labels asked about are kept, so the cost is one pass over the text with no
/// allocation per node.
struct NodeLabels<'k, 'a> {
    /// Every label of every Node is looked up here: a few string comparisons against the keys
    /// asked about (usually one or two) cost far less than hashing each label.
    stats: BTreeMap<&'k str, LabelStats<'a>>,
    nodes: usize,
}

impl<'k, 'a> NodeLabels<'k, 'a> {
    fn read(keys: impl Iterator<Item = &'k str>, list: &'a str) -> Result<NodeLabels<'k, 'a>, String> {
        let mut out = NodeLabels { stats: keys.map(|k| (k, LabelStats::default())).collect(), nodes: 0 };
        let mut reader = serde_json::Deserializer::from_str(list);
        let list = NodeItem(&mut out, NodePart::List);
        serde::de::DeserializeSeed::deserialize(list, &mut reader).map_err(|e| e.to_string())?;
        reader.end().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

/// A part of the list answer, read for the labels asked about: the list itself (only `items`
/// is read), its items, a Node (only `metadata`), its metadata (only `labels`) or its labels.
struct NodeItem<'s, 'k, 'a>(&'s mut NodeLabels<'k, 'a>, NodePart);
#[derive(Clone, Copy, PartialEq)]
enum NodePart {
    List,
    Items,
    Object,
    Metadata,
    Labels,
}

impl<'de: 'a, 'a> serde::de::DeserializeSeed<'de> for NodeItem<'_, '_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // `null` (no items, no metadata, no labels) reads as empty.
        d.deserialize_option(self)
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for NodeItem<'_, '_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if self.1 == NodePart::Items { "a list of Nodes" } else { "an object" })
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.1 == NodePart::Items { d.deserialize_seq(self) } else { d.deserialize_map(self) }
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NodeItem(&mut *self.0, NodePart::Object))?.is_some() {
            self.0.nodes += 1;
        }
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let NodeItem(out, part) = self;
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let inner = match (part, key.as_ref()) {
                (NodePart::List, "items") => NodePart::Items,
                (NodePart::Object, "metadata") => NodePart::Metadata,
                (NodePart::Metadata, "labels") => NodePart::Labels,
                (NodePart::Labels, label) => {
                    match out.stats.get_mut(label) {
                        Some(s) => {
                            let value = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0).unwrap_or_default();
                            s.nodes += 1;
                            *s.domains.entry(value).or_default() += 1;
                        }
                        None => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                    continue;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            map.next_value_seed(NodeItem(&mut *out, inner))?;
        }
        Ok(())
    }
}

/// T-09 and the domain-size warning: one list of every Node's labels answers all keys.
fn check_nodes(settings: &Settings, lookups: &[NodeLookup], cluster: &dyn Cluster, v: &mut Verdict) {
    let Some(first) = lookups.first() else { return };
    let query = Query { api_version: "v1", kind: "Node", namespace: None, field_masks: &["metadata.labels"] };
    let list = match cluster.list(&query) {
        Ok(list) => list,
        Err(e) => {
            v.lookup_failed(KEY_ON_NODES, first.path.clone(), "Nodes", &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let labels = match NodeLabels::read(lookups.iter().map(|l| l.key), &list) {
        Ok(labels) => labels,
        Err(e) => {
            let e = LookupError::Failed(format!("cannot read the Node list: {e}"));
            v.lookup_failed(KEY_ON_NODES, first.path.clone(), "Nodes", &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let checked = plural(labels.nodes, "node");
    for lookup in lookups {
        let Some(s) = labels.stats.get(lookup.key) else { continue };
        if s.nodes == 0 {
            v.deny(
                KEY_ON_NODES,
                FieldError::invalid(
                    lookup.path.clone(),
                    lookup.key,
                    format!(
                        "no node carries the label {:?} (checked {checked}), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled",
                        lookup.key
                    ),
                ),
            );
            continue;
        }
        let largest = s.domains.values().copied().max().unwrap_or_default();
        if let Some((min_count, path)) =
            lookup.gang.as_ref().filter(|(n, _)| usize::try_from(*n).is_ok_and(|n| n > largest))
        {
            v.warn(
                DOMAIN_SIZE,
                path.clone(),
                format!(
                    "{min_count} is larger than the largest {:?} domain ({}): the {} carrying the label form {}, so the gang can never fit with one pod per node",
                    lookup.key,
                    plural(largest, "node"),
                    plural(s.nodes, "node"),
                    plural(s.domains.len(), "distinct domain"),
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::MemoryCluster;
    use crate::engine::parse_settings;
    use serde_json::{Value, json};

    const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    fn review(operation: &str, object: Value, old: Value) -> Review<'static> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let request = json!({"operation": operation, "namespace": "ml",
            "kind": {"group": group, "version": version, "kind": object["kind"]},
            "object": object, "oldObject": old});
        crate::review::review_request(&request).unwrap().unwrap()
    }

    fn settings(v: Value) -> Settings {
        parse_settings::<Topology>(&v).unwrap()
    }

    fn pod_group(spec: Value) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": spec})
    }

    fn gang_with_key(min_count: i32, key: &str) -> Value {
        pod_group(json!({"schedulingPolicy": {"gang": {"minCount": min_count}},
            "schedulingConstraints": {"topology": [{"key": key}]}}))
    }

    fn node(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"podCIDR": "x"}})
    }

    /// Four nodes: racks r1 (3 nodes) and r2 (1 node); every node has a zone.
    fn nodes() -> MemoryCluster {
        MemoryCluster::new(vec![
            node("n1", json!({"rack": "r1", "zone": "a"})),
            node("n2", json!({"rack": "r1", "zone": "a"})),
            node("n3", json!({"rack": "r1", "zone": "a"})),
            node("n4", json!({"rack": "r2", "zone": "a"})),
        ])
    }

    fn run(s: &Settings, object: Value, cluster: &MemoryCluster) -> (Vec<String>, Vec<String>) {
        let v = Topology::check(s, &review("CREATE", object, Value::Null), cluster);
        (v.violations.iter().map(|x| x.to_string()).collect(), v.warning_messages())
    }

    #[test]
    fn every_holder_of_a_1_37_tree_is_checked_and_templates_are_immutable() {
        let tree = |leaf_key: &str| {
            json!({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w", "namespace": "ml"},
                "spec": {"compositePodGroupTemplates": [{"name": "job", "schedulingPolicy": {"gang": {"minGroupCount": 9}},
                    "schedulingConstraints": {"topology": [{"key": "zone"}]},
                    "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 3}},
                        "schedulingConstraints": {"topology": [{"key": leaf_key}]}}]}]}})
        };
        // The composite's minGroupCount (9 groups) is no pod count: no domain-size warning for it.
        assert_eq!(run(&Settings::default(), tree("rack"), &nodes()), (Vec::new(), Vec::new()));
        let at = "spec.compositePodGroupTemplates[0].podGroupTemplates[0].schedulingConstraints";
        let (v, _) = run(&Settings::default(), tree("Rack Name"), &nodes());
        assert_eq!(
            v,
            [format!("{at}.topology[0].key: Invalid value: \"Rack Name\": {QUALIFIED_NAME_MSG} [topology.key]")]
        );
        let update = Topology::check(&Settings::default(), &review("UPDATE", tree("zone"), tree("rack")), &nodes());
        let v: Vec<String> = update.violations.iter().map(|x| x.to_string()).collect();
        assert_eq!(v, [format!("{at}: Forbidden: field is immutable [topology.immutable]")]);
    }

    #[test]
    fn settings_are_validated() {
        assert_eq!(settings(Value::Null), Settings::default());
        assert!(Settings::default().check_node_labels);
        let err = |v: Value| parse_settings::<Topology>(&v).unwrap_err();
        assert_eq!(
            err(json!({"allowedTopologyKeys": []})),
            "invalid topology settings: allowedTopologyKeys: must list at least one label key (leave the setting out to allow every key)"
        );
        assert_eq!(
            err(json!({"allowedTopologyKeys": ["zone", "-rack"]})),
            format!(
                "invalid topology settings: allowedTopologyKeys[1]: \"-rack\" is not a valid label key: {QUALIFIED_NAME_MSG}"
            )
        );
        assert_eq!(
            err(json!({"requireTopologyForMinCountAtLeast": 0})),
            "invalid topology settings: requireTopologyForMinCountAtLeast: must be at least 1, got 0"
        );
        assert!(err(json!({"checkNodeLabel": false})).contains("unknown field `checkNodeLabel`"));
        assert!(err(json!({"checkNodeLabels": "yes"})).contains("checkNodeLabels: invalid type: string \"yes\""));
    }

    #[test]
    fn topology_entries_and_keys() {
        let s = Settings { check_node_labels: false, ..Settings::default() };
        // Past the maximum the list gets one error and no per-entry checks.
        let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": ""}, {"key": "x/"}]}}));
        let (violations, warnings) = run(&s, object, &MemoryCluster::default());
        assert_eq!(
            violations,
            vec!["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item [topology.max-entries]"]
        );
        assert!(warnings.is_empty());
        let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": ""}]}}));
        assert_eq!(
            run(&s, object, &MemoryCluster::default()).0,
            vec!["spec.schedulingConstraints.topology[0].key: Required value [topology.key]"]
        );
        let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": "x/"}]}}));
        let (violations, warnings) = run(&s, object, &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![
                "spec.schedulingConstraints.topology[0].key: Invalid value: \"x/\": name part must be non-empty [topology.key]"
                    .to_string(),
                format!("spec.schedulingConstraints.topology[0].key: Invalid value: \"x/\": {QUALIFIED_NAME_MSG} [topology.key]"),
            ]
        );
        assert!(warnings.is_empty());
        // An empty constraint is fine (T-04).
        let empty = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "schedulingConstraints": {}}));
        assert_eq!(run(&s, empty, &MemoryCluster::default()), (vec![], vec![]));
    }

    #[test]
    fn workload_templates_report_their_own_paths() {
        let s = Settings { check_node_labels: false, ..Settings::default() };
        let w = json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
            "spec": {"podGroupTemplates": [
                {"name": "a", "schedulingPolicy": {"gang": {"minCount": 2}}, "schedulingConstraints": {"topology": [{"key": "zone"}]}},
                {"name": "b", "schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": "Bad Key"}]}}]}});
        let (violations, warnings) = run(&s, w, &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![format!(
                "spec.podGroupTemplates[1].schedulingConstraints.topology[0].key: Invalid value: \"Bad Key\": {QUALIFIED_NAME_MSG} [topology.key]"
            )]
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("spec.podGroupTemplates[1].schedulingConstraints.topology: with a basic schedulingPolicy the scheduler checks the topology only against the pods it has seen so far"), "{warnings:?}");
        assert!(warnings[0].ends_with("[topology.basic-policy]"));
    }

    #[test]
    fn preemption_expectations_warn() {
        let s = Settings { check_node_labels: false, ..Settings::default() };
        let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": "zone"}]},
            "priorityClassName": "high", "priority": 1000, "disruptionMode": "PodGroup"}));
        let (violations, warnings) = run(&s, object, &MemoryCluster::default());
        assert!(violations.is_empty());
        assert_eq!(
            warnings,
            vec![
                "spec.schedulingConstraints.topology: is combined with priorityClassName \"high\" and priority 1000 and disruptionMode \"PodGroup\", but Kubernetes 1.36 does not run workload-aware preemption for pod groups with scheduling constraints (\"workload aware preemption is not supported for pod groups with scheduling constraints\"), so the scheduler will not preempt other pods to make room for this group [topology.preemption]"
            ]
        );
        // The defaults (disruptionMode Pod, priority 0, no class) promise nothing.
        let defaults = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": "zone"}]}, "priority": 0, "disruptionMode": "Pod", "priorityClassName": ""}));
        assert_eq!(run(&s, defaults, &MemoryCluster::default()), (vec![], vec![]));
        // Without topology nothing is said.
        let plain = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "high"}));
        assert_eq!(run(&s, plain, &MemoryCluster::default()), (vec![], vec![]));
    }

    #[test]
    fn settings_allow_and_require_keys() {
        let s = settings(
            json!({"allowedTopologyKeys": ["zone", "rack"], "requireTopologyForMinCountAtLeast": 4, "checkNodeLabels": false}),
        );
        let (violations, _) = run(&s, gang_with_key(2, "block"), &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![
                "spec.schedulingConstraints.topology[0].key: Unsupported value: \"block\": supported values: \"zone\", \"rack\" [topology.allowed-keys]"
            ]
        );
        let big = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 4}}}));
        let (violations, _) = run(&s, big, &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![
                "spec.schedulingConstraints.topology: Required value: gangs with minCount 4 or more must be kept in one topology domain (settings.requireTopologyForMinCountAtLeast), and this one has minCount 4 [topology.require-topology]"
            ]
        );
        let small = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 3}}}));
        assert_eq!(run(&s, small, &MemoryCluster::default()), (vec![], vec![]));
        let basic = pod_group(json!({"schedulingPolicy": {"basic": {}}}));
        assert_eq!(run(&s, basic, &MemoryCluster::default()), (vec![], vec![]));
        assert_eq!(run(&s, gang_with_key(8, "rack"), &MemoryCluster::default()), (vec![], vec![]));
    }

    #[test]
    fn keys_must_be_on_some_node() {
        let s = Settings::default();
        let (violations, warnings) = run(&s, gang_with_key(2, "topology.example.com/block"), &nodes());
        assert_eq!(
            violations,
            vec![
                "spec.schedulingConstraints.topology[0].key: Invalid value: \"topology.example.com/block\": no node carries the label \"topology.example.com/block\" (checked 4 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]"
            ]
        );
        assert!(warnings.is_empty());
        let (violations, _) = run(&s, gang_with_key(2, "rack"), &MemoryCluster::new(vec![node("n1", json!({}))]));
        assert!(violations[0].contains("(checked 1 node)"), "{violations:?}");
        assert_eq!(run(&s, gang_with_key(3, "rack"), &nodes()), (vec![], vec![]));
    }

    #[test]
    fn gangs_larger_than_every_domain_warn() {
        let (violations, warnings) = run(&Settings::default(), gang_with_key(4, "rack"), &nodes());
        assert!(violations.is_empty());
        assert_eq!(
            warnings,
            vec![
                "spec.schedulingPolicy.gang.minCount: 4 is larger than the largest \"rack\" domain (3 nodes): the 4 nodes carrying the label form 2 distinct domains, so the gang can never fit with one pod per node [topology.domain-size]"
            ]
        );
        // One zone of four nodes holds it.
        assert_eq!(run(&Settings::default(), gang_with_key(4, "zone"), &nodes()), (vec![], vec![]));
    }

    #[test]
    fn lookups_fail_open_or_closed() {
        let failing = MemoryCluster::failing("connection refused");
        let (violations, warnings) = run(&Settings::default(), gang_with_key(2, "rack"), &failing);
        assert!(violations.is_empty());
        assert_eq!(
            warnings,
            vec![
                "spec.schedulingConstraints.topology[0].key: cannot look up Nodes: connection refused; the check was skipped [topology.key-on-nodes]"
            ]
        );
        let closed = Settings { fail_on_lookup_error: true, ..Settings::default() };
        let (violations, _) = run(&closed, gang_with_key(2, "rack"), &failing);
        assert_eq!(
            violations,
            vec![
                "spec.schedulingConstraints.topology[0].key: Internal error: cannot look up Nodes: connection refused [topology.key-on-nodes]"
            ]
        );
        // No key, no lookup: a failing cluster is never asked.
        let plain = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}}}));
        assert_eq!(run(&closed, plain, &failing), (vec![], vec![]));
    }

    #[test]
    fn pod_group_updates() {
        let old = gang_with_key(2, "rack");
        let changed = gang_with_key(2, "zone");
        let v = Topology::check(&Settings::default(), &review("UPDATE", changed, old.clone()), &nodes());
        assert_eq!(
            v.message().unwrap(),
            "spec.schedulingConstraints: Forbidden: field is immutable [topology.immutable]"
        );
        // Unchanged: not rechecked, even though no node carries the key any more.
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        let v = Topology::check(
            &Settings::default(),
            &review("UPDATE", relabelled, old),
            &MemoryCluster::failing("must not be called"),
        );
        assert_eq!(v, Verdict::default());
    }

    fn job(annotations: Value, replicas: Value) -> Value {
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {
            "Worker": {"replicas": replicas, "template": {"metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "pytorch", "image": "i"}]}}}}}})
    }

    const ANN: &str = "spec.pytorchReplicaSpecs[Worker].template.metadata.annotations";

    #[test]
    fn kueue_annotations() {
        let s = Settings { check_node_labels: false, ..Settings::default() };
        let one_of =
            job(json!({KUEUE_REQUIRED: "rack", KUEUE_PREFERRED: "rack", KUEUE_UNCONSTRAINED: "maybe"}), json!(2));
        let (violations, _) = run(&s, one_of, &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![
                format!(
                    "{ANN}: Invalid value: must not contain more than one topology annotation: [\"kueue.x-k8s.io/podset-required-topology\", \"kueue.x-k8s.io/podset-preferred-topology\", \"kueue.x-k8s.io/podset-unconstrained-topology\"] [topology.kueue-one-of]"
                ),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-unconstrained-topology]: Invalid value: \"maybe\": must be a boolean value [topology.kueue-value]"
                ),
            ]
        );
        let bad_level = job(json!({KUEUE_PREFERRED: "", KUEUE_UNCONSTRAINED: "True"}), json!(2));
        let (violations, _) = run(&s, bad_level, &MemoryCluster::default());
        assert_eq!(violations.len(), 3, "{violations:?}");
        assert_eq!(
            violations[1],
            format!(
                "{ANN}[kueue.x-k8s.io/podset-preferred-topology]: Invalid value: \"\": name part must be non-empty [topology.kueue-value]"
            )
        );
    }

    #[test]
    fn kueue_slices() {
        let s = Settings { check_node_labels: false, ..Settings::default() };
        let cases = [
            (
                json!({KUEUE_REQUIRED: "block", KUEUE_SLICE_REQUIRED: "rack"}),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-slice-size]: Required value: must be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified [topology.kueue-slice]"
                ),
            ),
            (
                json!({KUEUE_SLICE_SIZE: "2"}),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-slice-size]: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not specified [topology.kueue-slice]"
                ),
            ),
            (
                json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "two"}),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"two\": must be a numeric value [topology.kueue-slice]"
                ),
            ),
            (
                json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "0"}),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"0\": must be greater than or equal to 1 [topology.kueue-slice]"
                ),
            ),
            (
                json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "5"}),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"5\": must not be greater than pod set count 4 [topology.kueue-slice]"
                ),
            ),
            (
                json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "2147483648"}),
                format!(
                    "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"2147483648\": must be a numeric value [topology.kueue-slice]"
                ),
            ),
        ];
        for (annotations, want) in cases {
            let (violations, _) = run(&s, job(annotations.clone(), json!(4)), &MemoryCluster::default());
            assert_eq!(violations, vec![want], "{annotations}");
        }
        let ok = job(json!({KUEUE_REQUIRED: "block", KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "+4"}), json!(4));
        assert_eq!(run(&s, ok, &MemoryCluster::default()), (vec![], vec![]));
        // Unset replicas count as 1 pod, as Kueue counts them.
        let (violations, _) = run(
            &s,
            job(json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "2"}), Value::Null),
            &MemoryCluster::default(),
        );
        assert!(violations[0].ends_with("must not be greater than pod set count 1 [topology.kueue-slice]"));
    }

    fn two_replica_job(master: Value, worker: Value, worker_replicas: i32) -> Value {
        let tpl = |a: Value| json!({"metadata": {"annotations": a}, "spec": {"containers": [{"name": "pytorch", "image": "i"}]}});
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": tpl(master)},
            "Worker": {"replicas": worker_replicas, "template": tpl(worker)}}}})
    }

    #[test]
    fn kueue_groups() {
        let s = Settings { check_node_labels: false, ..Settings::default() };
        let m = "spec.pytorchReplicaSpecs[Master].template.metadata.annotations";
        let grouped = |level: &str| json!({KUEUE_REQUIRED: level, KUEUE_GROUP_NAME: "g"});
        assert_eq!(
            run(&s, two_replica_job(grouped("rack"), grouped("rack"), 4), &MemoryCluster::default()),
            (vec![], vec![])
        );
        let (violations, _) = run(&s, two_replica_job(grouped("rack"), grouped("block"), 4), &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![
                format!(
                    "{m}: Invalid value: must specify 'kueue.x-k8s.io/podset-required-topology' or 'kueue.x-k8s.io/podset-preferred-topology' topology consistent with '{ANN}' in group 'g' [topology.kueue-group]"
                ),
                format!(
                    "{ANN}: Invalid value: must specify 'kueue.x-k8s.io/podset-required-topology' or 'kueue.x-k8s.io/podset-preferred-topology' topology consistent with '{m}' in group 'g' [topology.kueue-group]"
                ),
            ]
        );
        let mut two_big = two_replica_job(grouped("rack"), grouped("rack"), 4);
        two_big["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!(2);
        let (violations, _) = run(&s, two_big, &MemoryCluster::default());
        assert_eq!(violations.len(), 2);
        assert_eq!(
            violations[0],
            format!(
                "{m}[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can only define groups where at least one pod set has only 1 replica, got: 2 replica(s) and 4 replica(s) in the group [topology.kueue-group]"
            )
        );
        let (violations, _) = run(&s, two_replica_job(grouped("rack"), json!({}), 4), &MemoryCluster::default());
        assert_eq!(
            violations,
            vec![format!(
                "{m}[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can only define groups of exactly 2 pod sets, got: 1 pod set(s) [topology.kueue-group]"
            )]
        );
        let lone = json!({KUEUE_GROUP_NAME: "42", KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "1"});
        let (violations, _) = run(&s, two_replica_job(json!({}), lone, 4), &MemoryCluster::default());
        let g = format!("{ANN}[kueue.x-k8s.io/podset-group-name]");
        assert_eq!(
            violations,
            vec![
                format!("{g}: Invalid value: \"42\": must not be a number [topology.kueue-group]"),
                format!(
                    "{g}: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-size' is specified [topology.kueue-group]"
                ),
                format!(
                    "{g}: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified [topology.kueue-group]"
                ),
                format!(
                    "{g}: Forbidden: may not be set when neither 'kueue.x-k8s.io/podset-preferred-topology' nor 'kueue.x-k8s.io/podset-required-topology' is specified [topology.kueue-group]"
                ),
            ]
        );
    }

    #[test]
    fn kueue_levels_are_allowed_and_on_nodes() {
        let s = settings(json!({"allowedTopologyKeys": ["rack"]}));
        let (violations, _) = run(&s, job(json!({KUEUE_REQUIRED: "zone"}), json!(2)), &nodes());
        assert_eq!(
            violations,
            vec![format!(
                "{ANN}[kueue.x-k8s.io/podset-required-topology]: Unsupported value: \"zone\": supported values: \"rack\" [topology.allowed-keys]"
            )]
        );
        let (violations, warnings) =
            run(&Settings::default(), job(json!({KUEUE_PREFERRED: "block"}), json!(8)), &nodes());
        assert_eq!(
            violations,
            vec![format!(
                "{ANN}[kueue.x-k8s.io/podset-preferred-topology]: Invalid value: \"block\": no node carries the label \"block\" (checked 4 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]"
            )]
        );
        assert!(warnings.is_empty(), "Kueue pod sets have no minCount: {warnings:?}");
        // A level the job already had is not looked up again on update.
        let old = job(json!({KUEUE_PREFERRED: "block"}), json!(8));
        let new = job(json!({KUEUE_PREFERRED: "block"}), json!(4));
        let v =
            Topology::check(&Settings::default(), &review("UPDATE", new, old), &MemoryCluster::failing("not called"));
        assert_eq!(v, Verdict::default());
    }

    #[test]
    fn the_node_list_is_read_for_the_labels_asked_about() {
        let list = r#"{"kind": "NodeList", "metadata": {"resourceVersion": "7"}, "items": [
            {"metadata": {"name": "a", "labels": {"rack": "r1", "zone": "z1", "other": "x"}}},
            {"metadata": {"labels": {"rack": "r\u0031"}}, "status": {"images": []}},
            {"metadata": {"labels": {"rack": null}}},
            {"metadata": {"labels": null}},
            {"metadata": null},
            null
        ]}"#;
        let read = NodeLabels::read(["rack", "zone"].into_iter(), list).unwrap();
        assert_eq!(read.nodes, 6);
        let rack = &read.stats["rack"];
        assert_eq!(rack.nodes, 3);
        assert_eq!((rack.domains["r1"], rack.domains[""]), (2, 1), "an escaped value is the same domain");
        assert_eq!((read.stats["zone"].nodes, read.stats["zone"].domains.len()), (1, 1));
        assert_eq!(NodeLabels::read(["rack"].into_iter(), r#"{"items": null}"#).unwrap().nodes, 0);
        assert_eq!(NodeLabels::read(["rack"].into_iter(), "{}").unwrap().nodes, 0);
        for bad in
            [r#"{"items": {}}"#, r#"{"items": [7]}"#, r#"{"items": [{"metadata": {"labels": {"rack": 1}}}]}"#, "[", ""]
        {
            assert!(NodeLabels::read(["rack"].into_iter(), bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn other_kinds_are_left_alone() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        assert_eq!(run(&Settings::default(), pod, &MemoryCluster::failing("not called")), (vec![], vec![]));
        assert!(is_go_bool("F") && is_go_bool("1") && !is_go_bool("yes") && !is_go_bool(""));
    }
}

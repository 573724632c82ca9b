//! Queues: whether Kueue can ever admit an object labelled `kueue.x-k8s.io/queue-name`
//! (setting `queueCheck`). The LocalQueue it names exists in its namespace, the ClusterQueue
//! that LocalQueue names exists, and the ClusterQueue's resource groups cover every resource
//! its pod sets ask for and can ever hold them (Kueue's "maximum capacity",
//! `potentialAvailable`).
//!
//! A finding is a proof, as for capacity: the demand is what the pods will ask (the
//! capacity rules' request code, under-counted where in doubt), the supply what Kueue could
//! ever give (over-counted where in doubt), with all its cohort tree can lend it. Kueue gives
//! a pod set one flavor per resource group, so a pod set none of whose flavors can hold all
//! it asks of a group is never admitted, though each resource alone fits some flavor. A
//! cluster that does not serve Kueue's API, or has no ClusterQueue at all, gets no finding;
//! a failed lookup is a warning (or a rejection with `failOnLookupError`), never a finding.

use super::*;
use crate::capacity::request::{Ask, pod_asks};
use crate::decode::Text;
use crate::quantity::{scheduler_units, show};
use capacity::{CapacityCheck, KUEUE_QUEUE_LABEL, kueue_queue_name};
use serde_json::value::RawValue;
use std::collections::HashSet;

pub const QUEUE_LOCAL_QUEUE: &str = "topology.queue-local-queue";
pub const QUEUE_CLUSTER_QUEUE: &str = "topology.queue-cluster-queue";
pub const QUEUE_QUOTA: &str = "topology.queue-quota";
pub const QUEUE_RESOURCE: &str = "topology.queue-resource";

/// Whether queue findings are reported, and how: the same three values as `capacityCheck`.
pub type QueueCheck = CapacityCheck;

/// Kueue's built-in integrations (v0.19.2 `jobframework`): the names `kueueFrameworks` may list,
/// as Kueue's `integrations.frameworks` may.
pub const KUEUE_FRAMEWORKS: [&str; 18] = [
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
];

/// The frameworks Kueue's shipped configuration turns on (v0.19.2 manifests and Helm chart):
/// the Kubeflow v1 kinds are left out there.
pub const KUEUE_DEFAULT_FRAMEWORKS: [&str; 12] = [
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
];

/// The setting `kueueFrameworks`: at least one, each a Kueue framework, none twice.
pub fn validate_frameworks(frameworks: &[Cow<'static, str>]) -> Result<(), String> {
    if frameworks.is_empty() {
        return Err("kueueFrameworks: must list at least one framework (Kueue itself reads an empty \
                    integrations.frameworks as [\"batch/job\"])"
            .into());
    }
    for (i, f) in frameworks.iter().enumerate() {
        if !KUEUE_FRAMEWORKS.contains(&f.as_ref()) {
            let supported: Vec<String> = KUEUE_FRAMEWORKS.iter().map(|k| format!("{k:?}")).collect();
            return Err(format!(
                "kueueFrameworks[{i}]: Unsupported value: {f:?}: supported values: {}",
                supported.join(", ")
            ));
        }
        // Each earlier entry is a distinct known name: at most 18 comparisons.
        if frameworks[..i].contains(f) {
            return Err(format!("kueueFrameworks[{i}]: Duplicate value: {f:?}"));
        }
    }
    Ok(())
}

/// The Kueue framework that would manage the object under review; `None` for a kind Kueue
/// has no integration for (the training operator's `kubeflow.org/v1` MPIJob: Kueue's
/// `kubeflow.org/mpijob` is the MPI operator's v2beta1).
fn framework(object: &Resource) -> Option<&'static str> {
    use crate::kubeflow::JobKind;
    match object {
        Resource::BatchJob(_) => Some("batch/job"),
        Resource::Kubeflow(job) if job.is_mpi_operator() => Some("kubeflow.org/mpijob"),
        Resource::Kubeflow(job) => match job.kind {
            JobKind::TFJob => Some("kubeflow.org/tfjob"),
            JobKind::PyTorchJob => Some("kubeflow.org/pytorchjob"),
            JobKind::JAXJob => Some("kubeflow.org/jaxjob"),
            JobKind::PaddleJob => Some("kubeflow.org/paddlejob"),
            JobKind::XGBoostJob => Some("kubeflow.org/xgboostjob"),
            JobKind::MPIJob => None,
        },
        Resource::TrainJob(_) => Some("trainer.kubeflow.org/trainjob"),
        _ => None,
    }
}

/// The LocalQueue a new object Kueue manages names, when the queue check is on: labelled, and
/// of a kind whose framework `kueueFrameworks` lists (elsewhere Kueue ignores the label).
pub(super) fn queued<'r>(settings: &Settings, review: &'r Review) -> Option<&'r str> {
    if settings.queue_check == CapacityCheck::Off || review.old_object.is_some() {
        return None;
    }
    let framework = framework(&review.object)?;
    if !settings.kueue_frameworks.iter().any(|f| f == framework) {
        return None;
    }
    kueue_queue_name(review)
}

/// Kueue's API versions, the storage version (since Kueue 0.16) first; `v1beta1` is read
/// where only it is served.
pub const KUEUE_API_VERSIONS: [&str; 2] = ["kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1"];

/// The ClusterQueue list: every ClusterQueue, its resource groups and cohort.
pub fn cluster_queue_query(api_version: &str) -> Query<'_> {
    Query {
        api_version,
        kind: "ClusterQueue",
        namespace: None,
        field_masks: &["spec.resourceGroups", "spec.cohortName", "spec.cohort"],
    }
}

/// The LocalQueue list: every LocalQueue in every namespace, only the ClusterQueue it names.
/// One fixed query, whatever namespace the request is in.
pub fn local_queue_query(api_version: &str) -> Query<'_> {
    Query { api_version, kind: "LocalQueue", namespace: None, field_masks: &["spec.clusterQueue"] }
}

/// The most pod sets, resource groups, flavors or resources a queue check reads: past it,
/// no quota claim is made.
const MAX_ITEMS: usize = 256;

/// One Kueue pod set of the object under review, as Kueue counts it.
struct PodSet {
    /// Kueue's pod-set name: `main` for a Job, the lowercased replica type for a Kubeflow job.
    name: String,
    count: u64,
    /// What one pod asks, as the capacity rules read it.
    asks: Vec<Ask>,
}

/// The pod sets of a Job (a CronJob's job template), a Kubeflow job, an MPIJob or a TrainJob
/// on `runtime`; `None` when they cannot be read (or the kind has none this check reads). A
/// pod set whose requests cannot be read asks for nothing: no claim rests on it.
fn pod_sets(review: &Review, runtime: Option<&Runtime>) -> Option<Vec<PodSet>> {
    let mut out = Vec::new();
    match &review.object {
        Resource::BatchJob(job) => {
            let spec = job.spec.template.spec.as_ref()?;
            let mut count = i64::from(job.spec.pods_at_once());
            // Partial admission: Kueue may start as few as the annotation's count.
            if let Some(min) = job.job_annotation(KUEUE_MIN_PARALLELISM) {
                count = count.min(min.trim().parse::<i64>().ok()?);
            }
            let path = job.spec_path().child("template").child("spec");
            let asks = pod_asks(spec, &path, None).unwrap_or_default();
            out.push(PodSet { name: "main".into(), count: u64::try_from(count).unwrap_or(0), asks });
        }
        Resource::Kubeflow(job) => {
            let map = Path::new("spec").child(job.kind.replica_specs_field());
            for (replica_type, spec) in job.replicas() {
                let count = job.replica_count(replica_type, spec).min(spec.replicas.unwrap_or(1));
                let path = map.key(replica_type).child("template").child("spec");
                let asks = spec.template.spec.as_ref().and_then(|s| pod_asks(s, &path, None)).unwrap_or_default();
                out.push(PodSet {
                    name: replica_type.to_ascii_lowercase(),
                    count: u64::try_from(count).unwrap_or(0),
                    asks,
                });
            }
        }
        Resource::TrainJob(job) => {
            // One pod set per job of the JobSet Trainer builds from the runtime and the
            // TrainJob (`numNodes`, `resourcesPerNode`), as the capacity rules read it.
            let runtime = runtime?;
            let over = capacity::resources_per_node(job);
            let runtime_ref = Path::new("spec").child("runtimeRef");
            for (set, rjob) in runtime.pod_sets(job.num_nodes()).iter().zip(runtime.jobs()) {
                let path = Runtime::job_path(set.index).child("template").child("spec").child("template").child("spec");
                let over = over.as_ref().filter(|_| capacity::gets_resources_per_node(runtime, rjob));
                let spec = rjob.template.spec.template.spec.as_ref();
                let mut asks = spec.and_then(|s| pod_asks(s, &path, over)).unwrap_or_default();
                // What the runtime asks is reported at the reference to it, not at its own
                // fields (which are not the TrainJob's).
                for ask in asks.iter_mut().filter(|a| !a.at.as_str().starts_with("spec.trainer.")) {
                    ask.at = runtime_ref.clone();
                }
                out.push(PodSet { name: rjob.name.clone(), count: u64::try_from(set.kueue_count).unwrap_or(0), asks });
            }
        }
        _ => return None,
    }
    (out.len() <= MAX_ITEMS).then_some(out)
}

/// Kueue's partial admission: the fewest pods a Job may be started with.
const KUEUE_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";

/// A quota field: left out, written (in Kueue's units: CPU in millicores, the rest in units),
/// or written in a way that cannot be read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Amount {
    Unset,
    Set(u64),
    Unreadable,
}

impl Amount {
    /// A quota field's JSON text: a quantity string, or a number (int-or-string).
    fn read(resource: &str, value: Option<&RawValue>) -> Amount {
        let Some(text) = value.map(RawValue::get) else { return Amount::Unset };
        let units = match text.as_bytes().first() {
            Some(b'"') => serde_json::from_str::<Text>(text).ok().and_then(|t| scheduler_units(resource, &t.0)),
            _ => serde_json::from_str::<serde_json::Number>(text)
                .ok()
                .and_then(|n| scheduler_units(resource, &n.to_string())),
        };
        units.map_or(Amount::Unreadable, Amount::Set)
    }
}

/// One flavor's quota of one resource in a ClusterQueue or a Cohort.
#[derive(Clone, Copy, Debug)]
struct Quota {
    nominal: Amount,
    borrowing: Amount,
    lending: Amount,
}

/// A ClusterQueue's resource group: what it covers, and per covered resource its flavors'
/// quotas.
struct ResourceGroup<'t> {
    covered: Vec<Cow<'t, str>>,
    /// Per covered resource, each flavor's name and quota.
    quotas: Vec<(Cow<'t, str>, Flavors<'t>)>,
}

/// Each flavor's name and quota of one resource.
type Flavors<'t> = Vec<(Cow<'t, str>, Quota)>;

/// Any level of a ClusterQueue, LocalQueue or Cohort list answer above a flavor, read straight
/// from its text: the list (`items`), an object (`metadata`, `spec`), its metadata (`name`,
/// `namespace`), a spec (cohort, parent, `resourceGroups`, `clusterQueue`) or a resource group
/// (`coveredResources`, `flavors`). Building a `Value` of every listed object cost more than all
/// the rest of the check; one type for these levels keeps one decoder in the module instead of
/// five. Flavors and their quotas, most of what a ClusterQueue lists, are the small
/// [`QuotaJson`]: decoded as this type, each cost eighteen empty fields to make, move and drop.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct QueueJson<'t> {
    #[serde(borrow, default)]
    items: Option<Vec<QueueJson<'t>>>,
    #[serde(borrow, default)]
    metadata: Option<Box<QueueJson<'t>>>,
    /// Kept as text: read only where the check needs it.
    #[serde(borrow, default)]
    spec: Option<&'t RawValue>,
    #[serde(borrow, default)]
    name: Option<Text<'t>>,
    #[serde(borrow, default)]
    namespace: Option<Text<'t>>,
    /// A ClusterQueue's cohort (`v1beta1` `cohort`), a Cohort's parent.
    #[serde(borrow, default)]
    cohort_name: Option<Text<'t>>,
    #[serde(borrow, default)]
    cohort: Option<Text<'t>>,
    #[serde(borrow, default)]
    parent_name: Option<Text<'t>>,
    #[serde(borrow, default)]
    resource_groups: Option<Vec<QueueJson<'t>>>,
    /// A LocalQueue's ClusterQueue.
    #[serde(borrow, default)]
    cluster_queue: Option<Text<'t>>,
    #[serde(borrow, default)]
    covered_resources: Option<Vec<Text<'t>>>,
    #[serde(borrow, default)]
    flavors: Option<Vec<QuotaJson<'t>>>,
    /// A Volcano Queue's `status`, and its `state`.
    #[serde(borrow, default)]
    status: Option<Box<QueueJson<'t>>>,
    #[serde(borrow, default)]
    state: Option<Text<'t>>,
}

/// A flavor of a resource group (`name`, `resources`) or one of its quotas (`name` and its
/// amounts).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuotaJson<'t> {
    #[serde(borrow, default)]
    name: Option<Text<'t>>,
    #[serde(borrow, default)]
    resources: Option<Vec<QuotaJson<'t>>>,
    #[serde(borrow, default)]
    nominal_quota: Option<&'t RawValue>,
    #[serde(borrow, default)]
    borrowing_limit: Option<&'t RawValue>,
    #[serde(borrow, default)]
    lending_limit: Option<&'t RawValue>,
}

impl<'t> QueueJson<'t> {
    /// A listed object's name.
    pub(super) fn name(&self) -> Option<&str> {
        Some(&self.metadata.as_ref()?.name.as_ref()?.0)
    }

    /// A listed Volcano Queue's `status.state`.
    pub(super) fn state(&self) -> Option<String> {
        Some(self.status.as_ref()?.state.as_ref()?.0.to_string())
    }

    /// A listed object's spec as text.
    pub(super) fn spec_text(&self) -> Option<&str> {
        self.spec.map(RawValue::get)
    }

    fn namespace(&self) -> Option<&str> {
        Some(&self.metadata.as_ref()?.namespace.as_ref()?.0)
    }

    /// A listed object's spec; `None` when the text is not a spec of this shape.
    fn spec(&self) -> Option<QueueJson<'t>> {
        match self.spec {
            None => Some(QueueJson::default()),
            Some(text) => crate::decode::from_str(text.get()).ok(),
        }
    }
}

/// Where a ClusterQueue or Cohort sits in its cohort tree.
#[derive(Clone, Debug, PartialEq)]
enum Parent {
    None,
    Named(String),
    /// Its spec cannot be read: it may be in any cohort.
    Unknown,
}

/// What the queue check reads of a ClusterQueue, its names lent by the list's text.
struct ClusterQueue<'t> {
    groups: Vec<ResourceGroup<'t>>,
    /// Its cohort (`spec.cohortName`, v1beta1 `spec.cohort`; a Cohort's `spec.parentName`).
    cohort: Parent,
    /// The resource groups could be read whole.
    readable: bool,
}

impl<'t> ClusterQueue<'t> {
    fn read(object: &QueueJson<'t>) -> ClusterQueue<'t> {
        let Some(spec) = object.spec() else {
            return ClusterQueue { groups: Vec::new(), cohort: Parent::Unknown, readable: false };
        };
        let cohort = [spec.cohort_name, spec.cohort, spec.parent_name]
            .into_iter()
            .flatten()
            .find(|c| !c.0.is_empty())
            .map_or(Parent::None, |c| Parent::Named(c.0.into_owned()));
        let mut readable = true;
        let mut groups = Vec::new();
        let raw_groups = spec.resource_groups.unwrap_or_default();
        if raw_groups.len() > MAX_ITEMS {
            return ClusterQueue { groups, cohort, readable: false };
        }
        for g in raw_groups {
            let covered: Vec<Cow<str>> = g.covered_resources.unwrap_or_default().into_iter().map(|r| r.0).collect();
            let flavors = g.flavors.unwrap_or_default();
            if covered.len() > MAX_ITEMS || flavors.len() > MAX_ITEMS {
                readable = false;
                continue;
            }
            let mut quotas: Vec<(Cow<str>, Flavors)> = covered.iter().map(|r| (r.clone(), Vec::new())).collect();
            for f in flavors {
                let flavor = f.name.map(|n| n.0).unwrap_or_default();
                for r in f.resources.unwrap_or_default().iter().take(MAX_ITEMS) {
                    let Some(name) = r.name.as_ref().map(|n| &*n.0) else { continue };
                    let quota = Quota {
                        nominal: Amount::read(name, r.nominal_quota),
                        borrowing: Amount::read(name, r.borrowing_limit),
                        lending: Amount::read(name, r.lending_limit),
                    };
                    if let Some((_, q)) = quotas.iter_mut().find(|(n, _)| n == name) {
                        q.push((flavor.clone(), quota));
                    }
                }
            }
            groups.push(ResourceGroup { covered, quotas });
        }
        ClusterQueue { groups, cohort, readable }
    }

    fn covers(&self, resource: &str) -> bool {
        self.groups.iter().any(|g| g.covered.iter().any(|c| c == resource))
    }

    /// The flavors that hold `resource`.
    fn flavors(&self, resource: &str) -> Vec<&str> {
        let quotas = self.groups.iter().flat_map(|g| &g.quotas).filter(|(n, _)| n == resource);
        quotas.flat_map(|(_, q)| q).map(|(f, _)| &**f).collect()
    }

    /// The quota of `flavor` and `resource`, when listed.
    fn quota(&self, flavor: &str, resource: &str) -> Option<&Quota> {
        let (_, quotas) = self.groups.iter().flat_map(|g| &g.quotas).find(|(n, _)| n == resource)?;
        quotas.iter().find(|(f, _)| f == flavor).map(|(_, q)| q)
    }
}

/// The most levels of a cohort tree followed up from a ClusterQueue: past it (or in a cycle,
/// which disables every member), no quota claim is made.
const MAX_DEPTH: usize = 32;

/// The cohort tree a ClusterQueue is in, as far as the lists show it: every ClusterQueue and
/// Cohort, each with its parent (a cohort named by no Cohort object is one without quota or
/// parent) and children.
struct Tree<'t> {
    nodes: Vec<TreeNode<'t>>,
}

struct TreeNode<'t> {
    queue: bool,
    data: ClusterQueue<'t>,
    parent: Option<usize>,
    children: Vec<usize>,
}

impl<'t> Tree<'t> {
    /// The tree of `nodes` (ClusterQueues with `true`, Cohorts with `false`, by name), and the
    /// ClusterQueues' indices by name.
    fn build<'n>(nodes: Vec<(bool, &'n str, ClusterQueue<'t>)>) -> (Tree<'t>, HashMap<&'n str, usize>) {
        let mut queues: HashMap<&str, usize> = HashMap::new();
        let mut cohorts: HashMap<&str, usize> = HashMap::new();
        let mut tree = Tree { nodes: Vec::with_capacity(nodes.len()) };
        let mut parents = Vec::with_capacity(nodes.len());
        for (queue, name, data) in nodes {
            let index = tree.nodes.len();
            if queue {
                queues.insert(name, index)
            } else {
                cohorts.insert(name, index)
            };
            parents.push(data.cohort.clone());
            tree.nodes.push(TreeNode { queue, data, parent: None, children: Vec::new() });
        }
        for (child, parent) in parents.iter().enumerate() {
            let Parent::Named(parent) = parent else { continue };
            let index = match cohorts.get(parent.as_str()) {
                Some(index) => *index,
                None => {
                    let empty = ClusterQueue { groups: Vec::new(), cohort: Parent::None, readable: true };
                    tree.nodes.push(TreeNode { queue: false, data: empty, parent: None, children: Vec::new() });
                    cohorts.insert(parent, tree.nodes.len() - 1);
                    tree.nodes.len() - 1
                }
            };
            tree.nodes[child].parent = Some(index);
            tree.nodes[index].children.push(child);
        }
        (tree, queues)
    }

    /// `SubtreeQuota`: a ClusterQueue's nominal quota; a Cohort's own plus what each child
    /// does not keep for itself. `None` when some amount cannot be read, or too deep.
    fn subtree(&self, i: usize, f: &str, r: &str, depth: usize) -> Option<u64> {
        let node = &self.nodes[i];
        if depth > MAX_DEPTH || !node.data.readable {
            return None;
        }
        let mut total = match node.data.quota(f, r).map(|q| q.nominal) {
            None | Some(Amount::Unset) => 0,
            Some(Amount::Set(n)) => n,
            Some(Amount::Unreadable) => return None,
        };
        if !node.queue {
            for child in &node.children {
                let sub = self.subtree(*child, f, r, depth + 1)?;
                let local = self.local(*child, f, r, sub)?;
                total = total.saturating_add(sub - local);
            }
        }
        Some(total)
    }

    /// `localQuota`: what a node keeps from its parent (its subtree over its lendingLimit).
    fn local(&self, i: usize, f: &str, r: &str, subtree: u64) -> Option<u64> {
        match self.nodes[i].data.quota(f, r).map(|q| q.lending) {
            None | Some(Amount::Unset) => Some(0),
            Some(Amount::Set(lending)) => Some(subtree.saturating_sub(lending)),
            Some(Amount::Unreadable) => None,
        }
    }

    /// `potentialAvailable`: the most a node can ever use of `f`/`r`, its own and borrowed.
    fn potential(&self, i: usize, f: &str, r: &str, depth: usize) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let subtree = self.subtree(i, f, r, 0)?;
        let node = &self.nodes[i];
        let Some(parent) = node.parent else { return Some(subtree) };
        let available = self.local(i, f, r, subtree)?.saturating_add(self.potential(parent, f, r, depth + 1)?);
        match node.data.quota(f, r).map(|q| q.borrowing) {
            None | Some(Amount::Unset) => Some(available),
            Some(Amount::Set(limit)) => Some(available.min(subtree.saturating_add(limit))),
            Some(Amount::Unreadable) => None,
        }
    }
}

/// Where findings about the queue label are reported: the label on the object (a CronJob's
/// job template's).
fn label_path(review: &Review) -> Path {
    let meta = match &review.object {
        Resource::BatchJob(job) if job.kind == crate::batch::BatchKind::CronJob => {
            Path::new("spec").child("jobTemplate").child("metadata")
        }
        _ => Path::new("metadata"),
    };
    meta.child("labels").key(KUEUE_QUEUE_LABEL)
}

/// Reports a queue finding as `queueCheck` says.
pub(super) fn report(
    settings: &Settings,
    rule: &'static str,
    at: Path,
    value: BadValue,
    message: String,
    v: &mut Verdict,
) {
    match settings.queue_check {
        CapacityCheck::Off => {}
        CapacityCheck::Warn => v.warn(rule, at, message),
        CapacityCheck::Deny => v.deny(rule, FieldError::invalid(at, value, message)),
    }
}

/// The list answer of `query` as text; `Ok(None)` when the cluster does not serve the kind (or
/// no objects of it were given to the CLI or the playground).
pub(super) fn list_text(cluster: &dyn Cluster, query: &Query) -> Result<Option<String>, LookupError> {
    match cluster.list(query) {
        Ok(text) => Ok(Some(text)),
        Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The items of a list answer.
pub(super) fn items(text: &str) -> Result<Vec<QueueJson<'_>>, LookupError> {
    let list: QueueJson =
        crate::decode::from_str(text).map_err(|e| LookupError::Failed(format!("cannot read the list: {e}")))?;
    Ok(list.items.unwrap_or_default())
}

/// The queue checks of a new object labelled `kueue.x-k8s.io/queue-name`.
/// `runtime`: a TrainJob's runtime, when it was found.
pub(super) fn check_queue(
    settings: &Settings,
    review: &Review,
    runtime: Option<&Runtime>,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let Some(queue) = queued(settings, review) else { return };
    let at = label_path(review);
    let failed = |v: &mut Verdict, what: &str, e: &LookupError| {
        v.lookup_failed(QUEUE_LOCAL_QUEUE, at.clone(), what, e, settings.fail_on_lookup_error)
    };
    // The ClusterQueues, in the first version the cluster serves.
    let mut found = None;
    for api_version in KUEUE_API_VERSIONS {
        match list_text(cluster, &cluster_queue_query(api_version)) {
            Ok(Some(text)) => {
                found = Some((api_version, text));
                break;
            }
            Ok(None) => continue,
            Err(e) => return failed(v, "ClusterQueues", &e),
        }
    }
    let Some((api_version, cluster_queues)) = found else { return };
    let cluster_queues = match items(&cluster_queues) {
        Ok(items) => items,
        Err(e) => return failed(v, "ClusterQueues", &e),
    };
    // No Kueue API, or no ClusterQueue at all: nothing to hold the label against.
    if cluster_queues.is_empty() {
        return;
    }
    let local_queues = match list_text(cluster, &local_queue_query(api_version)) {
        Ok(Some(text)) => text,
        Ok(None) => return,
        Err(e) => return failed(v, "LocalQueues", &e),
    };
    let local_queues = match items(&local_queues) {
        Ok(items) => items,
        Err(e) => return failed(v, "LocalQueues", &e),
    };
    let namespace = review.namespace.as_str();
    let local =
        local_queues.iter().find(|q| q.name() == Some(queue) && q.namespace().unwrap_or("default") == namespace);
    let Some(local) = local else {
        let message = format!(
            "LocalQueue {queue:?} does not exist in namespace {namespace:?}: Kueue keeps the job suspended until it does (\"LocalQueue {queue} doesn't exist\")"
        );
        return report(settings, QUEUE_LOCAL_QUEUE, at, BadValue::from(queue), message, v);
    };
    let Some(cq_name) = local.spec().and_then(|s| s.cluster_queue) else { return };
    let cq_name = &*cq_name.0;
    let Some(cq) = cluster_queues.iter().find(|q| q.name() == Some(cq_name)) else {
        let message = format!(
            "LocalQueue {queue:?} points to ClusterQueue {cq_name:?}, which does not exist: Kueue keeps the job suspended until it does (\"ClusterQueue {cq_name} doesn't exist\")"
        );
        return report(settings, QUEUE_CLUSTER_QUEUE, at, BadValue::from(queue), message, v);
    };
    let Some(sets) = pod_sets(review, runtime) else { return };
    let own = ClusterQueue::read(cq);
    if own.cohort == Parent::None {
        let (tree, _) = Tree::build(vec![(true, cq_name, own)]);
        return check_quota(settings, queue, &tree, 0, cq_name, None, &sets, v);
    }
    // In a cohort: what the queue can borrow, from every ClusterQueue and Cohort listed.
    let cohort_text = match list_text(cluster, &cohort_query(api_version)) {
        Ok(text) => text,
        Err(e) => {
            failed(v, "Cohorts", &e);
            None
        }
    };
    let cohort_items = match cohort_text.as_deref().map(items).transpose() {
        Ok(items) => items,
        Err(e) => {
            failed(v, "Cohorts", &e);
            None
        }
    };
    let nodes: Vec<(bool, &str, ClusterQueue)> = cluster_queues
        .iter()
        .map(|q| (true, q))
        .chain(cohort_items.iter().flatten().map(|c| (false, c)))
        .filter_map(|(queue, o)| Some((queue, o.name()?, ClusterQueue::read(o))))
        .collect();
    // Without the Cohort list, what the cohort's own quota adds is unknown, as it is when some
    // listed object's spec cannot be read (it may be in the cohort): coverage only.
    let known =
        cohort_items.is_some() && nodes.len() <= MAX_TREE && nodes.iter().all(|(_, _, n)| n.cohort != Parent::Unknown);
    let (tree, queues) = Tree::build(nodes);
    let Some(index) = queues.get(cq_name).copied() else { return };
    let cohort = match &tree.nodes[index].data.cohort {
        Parent::Named(c) if known => c.clone(),
        _ => String::new(),
    };
    check_quota(settings, queue, &tree, index, cq_name, Some(&cohort), &sets, v);
}

/// The most ClusterQueues and Cohorts a cohort's quota is computed over: past it, a queue in a
/// cohort gets no quota claim.
const MAX_TREE: usize = 2_000;

/// The Cohort list: every Cohort, its parent and resource groups.
pub fn cohort_query(api_version: &str) -> Query<'_> {
    Query { api_version, kind: "Cohort", namespace: None, field_masks: &["spec.parentName", "spec.resourceGroups"] }
}

/// The resource checks: every resource asked for is covered, and no pod set (nor the whole
/// workload) asks more than the ClusterQueue can ever give. `cohort`: the cohort the queue is
/// in (`Some("")` when what it may borrow cannot be known: no quota claim).
#[allow(clippy::too_many_arguments)]
fn check_quota(
    settings: &Settings,
    queue: &str,
    tree: &Tree,
    index: usize,
    cq_name: &str,
    cohort: Option<&str>,
    sets: &[PodSet],
    v: &mut Verdict,
) {
    let cq = &tree.nodes[index].data;
    if !cq.readable {
        return;
    }
    let known = cohort != Some("");
    let where_ = match cohort {
        None => ", outside any cohort".to_string(),
        Some(c) => format!(", with all that cohort {c:?} can lend it"),
    };
    // The most the queue can ever use of each flavor of `r`, when every figure is known.
    let capacities = |r: &str| -> Option<Vec<(String, u64)>> {
        cq.flavors(r).into_iter().map(|f| Some((f.to_string(), tree.potential(index, f, r, 0)?))).collect()
    };
    let who = format!("ClusterQueue {cq_name:?} (LocalQueue {queue:?})");
    // Workload totals by resource (in the order first asked), with where the first ask is.
    let mut totals: Vec<(String, u64, Path, bool)> = Vec::new();
    for set in sets.iter().filter(|s| s.count > 0) {
        let mut set_reported = false;
        for ask in &set.asks {
            if !cq.covers(&ask.resource) {
                // Reported once per resource, at its first ask.
                if totals.iter().any(|(r, ..)| *r == ask.resource) {
                    continue;
                }
                totals.push((ask.resource.clone(), 0, ask.at.clone(), true));
                let message = format!(
                    "{who} has no resource group that covers {}: Kueue never admits pods that ask for it (\"resource {} unavailable in ClusterQueue\")",
                    ask.resource, ask.resource
                );
                report(settings, QUEUE_RESOURCE, ask.at.clone(), BadValue::from(ask.resource.as_str()), message, v);
                continue;
            }
            let demand = ask.units.saturating_mul(set.count);
            let reported = match totals.iter_mut().find(|(r, ..)| *r == ask.resource) {
                Some(total) => {
                    total.1 = total.1.saturating_add(demand);
                    total.3
                }
                None => {
                    totals.push((ask.resource.clone(), demand, ask.at.clone(), false));
                    false
                }
            };
            if !known || reported {
                continue;
            }
            let Some(quotas) = capacities(&ask.resource) else { continue };
            // One flavor per resource group for the whole pod set: held against the largest.
            let Some((flavor, largest)) = quotas.iter().max_by_key(|(_, q)| *q).cloned() else { continue };
            if demand > largest {
                let r = &ask.resource;
                let message = format!(
                    "{who} can never admit pod set {:?}: its {} {} {} {r} in total ({} each), more than the {} of {r} its largest flavor ({flavor:?}) can ever give{where_} (Kueue: \"insufficient quota for {r} in flavor {flavor}, ... > maximum capacity ({})\"), so the job stays suspended",
                    set.name,
                    plural(usize::try_from(set.count).unwrap_or(usize::MAX), "pod"),
                    if set.count == 1 { "asks" } else { "ask" },
                    show(r, demand),
                    show(r, ask.units),
                    show(r, largest),
                    show(r, largest),
                );
                report(settings, QUEUE_QUOTA, ask.at.clone(), BadValue::from(show(r, ask.units).as_str()), message, v);
                set_reported = true;
                if let Some(total) = totals.iter_mut().find(|(n, ..)| n == r) {
                    total.3 = true;
                }
            }
        }
        // Each resource fits some flavor, but maybe no flavor holds all of a group's at once.
        if known && !set_reported {
            for group in &cq.groups {
                let Some(misfits) = group_misfits(tree, index, group, set) else { continue };
                let (ask, ..) = misfits[0];
                let r = &ask.resource;
                let each: Vec<String> = misfits
                    .iter()
                    .map(|(a, f, demand, cap)| {
                        let r = &a.resource;
                        format!("flavor {f:?} at most {} {r} of the {} {r} they ask", show(r, *cap), show(r, *demand))
                    })
                    .collect();
                let (_, flavor, _, cap) = misfits[0];
                let message = format!(
                    "{who} can never admit pod set {:?}: Kueue gives a pod set one flavor for all of a resource group's resources ({}), and no flavor of the group can ever hold all that its {} ask{where_}: {} (Kueue: \"insufficient quota for {r} in flavor {flavor}, ... > maximum capacity ({})\"), so the job stays suspended",
                    set.name,
                    group.covered.join(", "),
                    plural(usize::try_from(set.count).unwrap_or(usize::MAX), "pod"),
                    each.join(", "),
                    show(r, cap),
                );
                report(settings, QUEUE_QUOTA, ask.at.clone(), BadValue::from(show(r, ask.units).as_str()), message, v);
            }
        }
    }
    if !known {
        return;
    }
    // The whole workload against every flavor together: each pod set takes one flavor, so
    // the pod sets together take at most all of them.
    for (r, demand, at, reported) in totals {
        if reported {
            continue;
        }
        let Some(quotas) = capacities(&r) else { continue };
        let all = quotas.iter().fold(0u64, |a, (_, q)| a.saturating_add(*q));
        if demand > all {
            let message = format!(
                "{who} can never admit the job: its pod sets ask {} {r} in total, more than the {} of {r} all its flavors together can ever give{where_}, so the job stays suspended",
                show(&r, demand),
                show(&r, all),
            );
            report(settings, QUEUE_QUOTA, at, BadValue::from(show(&r, demand).as_str()), message, v);
        }
    }
}

/// Kueue gives a pod set one flavor per resource group (`fitsResourceQuota` in its flavor
/// assigner): a flavor that cannot ever hold one of the group's resources the pod set asks for
/// is no choice. When no flavor of `group` is a choice, each flavor with the first resource it
/// cannot hold: the ask, the flavor, the pod set's demand and the flavor's maximum capacity.
/// `None` when some flavor may hold it all, or a figure is unknown.
fn group_misfits<'a>(
    tree: &Tree,
    index: usize,
    group: &'a ResourceGroup,
    set: &'a PodSet,
) -> Option<Vec<(&'a Ask, &'a str, u64, u64)>> {
    let asked: Vec<(&Ask, &Flavors)> = set
        .asks
        .iter()
        .filter(|a| a.units > 0)
        .filter_map(|a| Some((a, group.quotas.iter().find(|(r, _)| *r == a.resource).map(|(_, q)| q)?)))
        .collect();
    if asked.is_empty() {
        return None;
    }
    // The group's flavors, in the order listed. Kueue requires every flavor to list every
    // covered resource; one that does not is read as a possible choice.
    let mut seen = HashSet::new();
    let flavors: Vec<&str> =
        group.quotas.iter().flat_map(|(_, q)| q).map(|(f, _)| &**f).filter(|f| seen.insert(*f)).collect();
    if flavors.is_empty() {
        return None;
    }
    let mut misfits = Vec::with_capacity(flavors.len());
    for flavor in flavors {
        let mut misfit = None;
        for (ask, quotas) in &asked {
            quotas.iter().find(|(f, _)| f == flavor)?;
            let demand = ask.units.saturating_mul(set.count);
            let cap = tree.potential(index, flavor, &ask.resource, 0)?;
            if demand > cap {
                misfit = Some((*ask, flavor, demand, cap));
                break;
            }
        }
        misfits.push(misfit?);
    }
    Some(misfits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A ClusterQueue or Cohort with `spec` (its text kept for the test's life: the queue
    /// borrows its names from it).
    fn read(spec: &serde_json::Value) -> ClusterQueue<'static> {
        let text: &'static str = Box::leak(json!({"spec": spec}).to_string().into_boxed_str());
        ClusterQueue::read(&serde_json::from_str(text).unwrap())
    }

    /// A ClusterQueue or Cohort with one flavor `red` of `cpu`: nominal, borrowing and lending
    /// limits (CPUs; `None` left out), and its cohort (parent).
    fn node(
        parent: Option<&str>,
        nominal: &str,
        borrowing: Option<&str>,
        lending: Option<&str>,
    ) -> ClusterQueue<'static> {
        let mut quota = json!({"name": "cpu", "nominalQuota": nominal});
        if let Some(b) = borrowing {
            quota["borrowingLimit"] = json!(b);
        }
        if let Some(l) = lending {
            quota["lendingLimit"] = json!(l);
        }
        let mut spec = json!({"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "red", "resources": [quota]}]}]});
        if let Some(p) = parent {
            spec["cohortName"] = json!(p);
        }
        read(&spec)
    }

    fn potentials(
        queues: Vec<(&'static str, ClusterQueue<'static>)>,
        cohorts: Vec<(&'static str, ClusterQueue<'static>)>,
    ) -> BTreeMap<&'static str, Option<u64>> {
        let nodes = queues
            .into_iter()
            .map(|(n, q)| (true, n, q))
            .chain(cohorts.into_iter().map(|(n, c)| (false, n, c)))
            .collect();
        let (tree, queues) = Tree::build(nodes);
        queues.iter().map(|(q, i)| (*q, tree.potential(*i, "red", "cpu", 0))).collect()
    }

    /// A spec read from its text: a figure that is not a quantity is unreadable (no claim rests
    /// on it), and a spec of another shape may be in any cohort, which keeps every queue of a
    /// cohort from a quota claim (`check_queue`'s `known`).
    #[test]
    fn specs_are_read_from_their_text() {
        let q = read(&json!({"cohortName": "org", "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
            "flavors": [{"name": "a", "resources": [{"name": "cpu", "nominalQuota": 8, "lendingLimit": "2"},
                                                    {"name": "nvidia.com/gpu", "nominalQuota": "many", "borrowingLimit": null}]}]}]}));
        assert_eq!(q.cohort, Parent::Named("org".into()));
        assert!(q.readable);
        let cpu = q.quota("a", "cpu").expect("cpu");
        assert_eq!((cpu.nominal, cpu.lending, cpu.borrowing), (Amount::Set(8_000), Amount::Set(2_000), Amount::Unset));
        assert_eq!(q.quota("a", "nvidia.com/gpu").expect("gpu").nominal, Amount::Unreadable);
        let odd = read(&json!({"cohortName": 5, "resourceGroups": []}));
        assert_eq!(odd.cohort, Parent::Unknown);
        assert!(!odd.readable);
        assert_eq!(read(&json!({})).cohort, Parent::None);
    }

    /// kubernetes-sigs/kueue v0.19.2 `pkg/cache/scheduler/resource_test.go` `TestAvailable`:
    /// `wantPotentiallyAvailable` of the hierarchical cases, in millicores.
    #[test]
    fn potential_available_matches_kueues_table() {
        // "hierarchical cohort respects borrowing limit"
        let got = potentials(
            vec![
                ("left-cq1", node(Some("left"), "10", None, None)),
                ("left-cq2", node(Some("left"), "10", Some("5"), None)),
                ("right-cq", node(Some("right"), "10", None, None)),
            ],
            vec![
                ("root", read(&json!({}))),
                ("left", node(Some("root"), "10", Some("5"), None)),
                ("right", node(Some("root"), "10", None, None)),
            ],
        );
        let want = BTreeMap::from([("left-cq1", Some(35_000)), ("left-cq2", Some(15_000)), ("right-cq", Some(50_000))]);
        assert_eq!(got, want);
        // "hierarchical cohort respects lending limit"
        let got = potentials(
            vec![
                ("left-cq1", node(Some("left"), "10", None, Some("5"))),
                ("left-cq2", node(Some("left"), "10", None, None)),
                ("right-cq", node(Some("right"), "0", None, None)),
                ("root-cq", node(Some("root"), "0", None, None)),
            ],
            vec![
                ("root", read(&json!({}))),
                ("left", node(Some("root"), "0", None, Some("5"))),
                ("right", node(Some("root"), "0", None, None)),
            ],
        );
        let want = BTreeMap::from([
            ("left-cq1", Some(20_000)),
            ("left-cq2", Some(15_000)),
            ("right-cq", Some(5_000)),
            ("root-cq", Some(5_000)),
        ]);
        assert_eq!(got, want);
        // An implicit cohort (no Cohort object), a lender's lendingLimit, a borrower's limit,
        // and no cohort at all.
        let got = potentials(
            vec![
                ("a", node(Some("implicit"), "16", None, None)),
                ("lender", node(Some("implicit"), "8", None, Some("4"))),
                ("capped", node(Some("implicit"), "4", Some("4"), None)),
                ("alone", node(None, "16", None, None)),
            ],
            vec![],
        );
        let want = BTreeMap::from([
            ("a", Some(24_000)),
            ("lender", Some(28_000)),
            ("capped", Some(8_000)),
            ("alone", Some(16_000)),
        ]);
        assert_eq!(got, want);
        // A cycle disables every member: no figure, so no claim.
        let got = potentials(
            vec![("q", node(Some("x"), "1", None, None))],
            vec![("x", node(Some("y"), "0", None, None)), ("y", node(Some("x"), "0", None, None))],
        );
        assert_eq!(got, BTreeMap::from([("q", None)]));
    }
}

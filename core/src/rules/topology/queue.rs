//! Queues: whether Kueue can ever admit an object labelled `kueue.x-k8s.io/queue-name`
//! (setting `queueCheck`). The LocalQueue it names exists in its namespace, the ClusterQueue
//! that LocalQueue names exists, and the ClusterQueue's resource groups cover every resource
//! its pod sets ask for and can ever hold them (Kueue's "maximum capacity",
//! `potentialAvailable`).
//!
//! A finding is a proof, as for capacity: the demand is what the pods will ask (the
//! capacity rules' request code, under-counted where in doubt), the supply what Kueue could
//! ever give (over-counted where in doubt). A queue in a cohort gets no quota finding (what
//! it may borrow depends on objects this check does not read); a cluster that does not
//! serve Kueue's API, or has no ClusterQueue at all, gets no finding; a failed lookup is a
//! warning (or a rejection with `failOnLookupError`), never a finding.

use super::*;
use crate::capacity::request::{Ask, pod_asks};
use crate::quantity::{scheduler_units, show};
use capacity::{CapacityCheck, KUEUE_QUEUE_LABEL, kueue_queue_name};

pub const QUEUE_LOCAL_QUEUE: &str = "topology.queue-local-queue";
pub const QUEUE_CLUSTER_QUEUE: &str = "topology.queue-cluster-queue";
pub const QUEUE_QUOTA: &str = "topology.queue-quota";
pub const QUEUE_RESOURCE: &str = "topology.queue-resource";

/// Whether queue findings are reported, and how: the same three values as `capacityCheck`.
pub type QueueCheck = CapacityCheck;

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

/// The pod sets of a Job (a CronJob's job template), a Kubeflow job or an MPIJob; `None` when
/// they cannot be read (or the kind has none this check reads). A pod set whose requests
/// cannot be read asks for nothing: no claim rests on it.
fn pod_sets(review: &Review) -> Option<Vec<PodSet>> {
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
        _ => return None,
    }
    (out.len() <= MAX_ITEMS).then_some(out)
}

/// Kueue's partial admission: the fewest pods a Job may be started with.
const KUEUE_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";

/// One flavor's quota of one resource.
struct Quota {
    flavor: String,
    /// In Kueue's units (CPU in millicores, the rest in units); `None` when unreadable.
    nominal: Option<u64>,
}

/// A ClusterQueue's resource group: what it covers, and per covered resource its flavors'
/// quotas.
struct ResourceGroup {
    covered: Vec<String>,
    quotas: Vec<(String, Vec<Quota>)>,
}

/// What the queue check reads of a ClusterQueue.
struct ClusterQueue {
    groups: Vec<ResourceGroup>,
    /// In a cohort (`spec.cohortName`, v1beta1 `spec.cohort`).
    cohort: Option<String>,
    /// The resource groups could be read whole.
    readable: bool,
}

impl ClusterQueue {
    fn read(item: &serde_json::Value) -> ClusterQueue {
        let spec = item.get("spec");
        let cohort = ["cohortName", "cohort"]
            .iter()
            .find_map(|k| spec?.get(*k)?.as_str())
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        let mut readable = true;
        let mut groups = Vec::new();
        let raw_groups = spec.and_then(|s| s.get("resourceGroups"));
        let empty = Vec::new();
        let raw_groups = match raw_groups {
            None | Some(serde_json::Value::Null) => &empty,
            Some(serde_json::Value::Array(a)) if a.len() <= MAX_ITEMS => a,
            Some(_) => return ClusterQueue { groups, cohort, readable: false },
        };
        for g in raw_groups {
            let covered: Option<Vec<String>> = g
                .get("coveredResources")
                .and_then(|c| c.as_array())
                .map(|c| c.iter().map(|r| r.as_str().map(str::to_string)).collect::<Option<_>>())
                .unwrap_or(Some(Vec::new()));
            let Some(covered) = covered.filter(|c| c.len() <= MAX_ITEMS) else {
                readable = false;
                continue;
            };
            let mut quotas: Vec<(String, Vec<Quota>)> = covered.iter().map(|r| (r.clone(), Vec::new())).collect();
            let flavors = g.get("flavors").and_then(|f| f.as_array()).map(Vec::as_slice).unwrap_or_default();
            if flavors.len() > MAX_ITEMS {
                readable = false;
                continue;
            }
            for f in flavors {
                let flavor = f.get("name").and_then(|n| n.as_str()).unwrap_or_default().to_string();
                let resources = f.get("resources").and_then(|r| r.as_array()).map(Vec::as_slice).unwrap_or_default();
                for r in resources.iter().take(MAX_ITEMS) {
                    let Some(name) = r.get("name").and_then(|n| n.as_str()) else { continue };
                    let nominal = match r.get("nominalQuota") {
                        Some(serde_json::Value::String(s)) => scheduler_units(name, s),
                        Some(serde_json::Value::Number(n)) => scheduler_units(name, &n.to_string()),
                        _ => None,
                    };
                    if let Some((_, q)) = quotas.iter_mut().find(|(n, _)| n == name) {
                        q.push(Quota { flavor: flavor.clone(), nominal });
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

    /// The flavors' quotas of `resource`, when every one of them can be read.
    fn quotas(&self, resource: &str) -> Option<Vec<(&str, u64)>> {
        let (_, quotas) = self.groups.iter().flat_map(|g| &g.quotas).find(|(n, _)| n == resource)?;
        quotas.iter().map(|q| Some((q.flavor.as_str(), q.nominal?))).collect()
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
fn report(settings: &Settings, rule: &'static str, at: Path, value: BadValue, message: String, v: &mut Verdict) {
    match settings.queue_check {
        CapacityCheck::Off => {}
        CapacityCheck::Warn => v.warn(rule, at, message),
        CapacityCheck::Deny => v.deny(rule, FieldError::invalid(at, value, message)),
    }
}

/// The list of `query` as JSON items; `Ok(None)` when the cluster does not serve the kind (or
/// no objects of it were given to the CLI or the playground).
fn list_items(cluster: &dyn Cluster, query: &Query) -> Result<Option<Vec<serde_json::Value>>, LookupError> {
    match cluster.list(query) {
        Ok(text) => {
            let list: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| LookupError::Failed(format!("cannot read the list: {e}")))?;
            Ok(Some(match list.get("items") {
                Some(serde_json::Value::Array(items)) => items.clone(),
                _ => Vec::new(),
            }))
        }
        Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The queue checks of a new object labelled `kueue.x-k8s.io/queue-name`.
pub(super) fn check_queue(settings: &Settings, review: &Review, cluster: &dyn Cluster, v: &mut Verdict) {
    if settings.queue_check == CapacityCheck::Off || review.old_object.is_some() {
        return;
    }
    if !matches!(review.object, Resource::BatchJob(_) | Resource::Kubeflow(_)) {
        return;
    }
    let Some(queue) = kueue_queue_name(review) else { return };
    let at = label_path(review);
    let failed = |v: &mut Verdict, what: &str, e: &LookupError| {
        v.lookup_failed(QUEUE_LOCAL_QUEUE, at.clone(), what, e, settings.fail_on_lookup_error)
    };
    // The ClusterQueues, in the first version the cluster serves.
    let mut found = None;
    for api_version in KUEUE_API_VERSIONS {
        match list_items(cluster, &cluster_queue_query(api_version)) {
            Ok(Some(items)) => {
                found = Some((api_version, items));
                break;
            }
            Ok(None) => continue,
            Err(e) => return failed(v, "ClusterQueues", &e),
        }
    }
    // No Kueue API, or no ClusterQueue at all: nothing to hold the label against.
    let Some((api_version, cluster_queues)) = found.filter(|(_, items)| !items.is_empty()) else { return };
    let local_queues = match list_items(cluster, &local_queue_query(api_version)) {
        Ok(Some(items)) => items,
        Ok(None) => return,
        Err(e) => return failed(v, "LocalQueues", &e),
    };
    let namespace = review.namespace.as_str();
    let name_of = |o: &serde_json::Value| o.pointer("/metadata/name").and_then(|n| n.as_str()).map(str::to_string);
    let local = local_queues.iter().find(|q| {
        name_of(q).as_deref() == Some(queue)
            && q.pointer("/metadata/namespace").and_then(|n| n.as_str()).unwrap_or("default") == namespace
    });
    let Some(local) = local else {
        let message = format!(
            "LocalQueue {queue:?} does not exist in namespace {namespace:?}: Kueue keeps the job suspended until it does (\"LocalQueue {queue} doesn't exist\")"
        );
        return report(settings, QUEUE_LOCAL_QUEUE, at, BadValue::from(queue), message, v);
    };
    let Some(cq_name) = local.pointer("/spec/clusterQueue").and_then(|n| n.as_str()) else { return };
    let Some(cq) = cluster_queues.iter().find(|q| name_of(q).as_deref() == Some(cq_name)) else {
        let message = format!(
            "LocalQueue {queue:?} points to ClusterQueue {cq_name:?}, which does not exist: Kueue keeps the job suspended until it does (\"ClusterQueue {cq_name} doesn't exist\")"
        );
        return report(settings, QUEUE_CLUSTER_QUEUE, at, BadValue::from(queue), message, v);
    };
    let cq = ClusterQueue::read(cq);
    let Some(sets) = pod_sets(review) else { return };
    check_quota(settings, queue, cq_name, &cq, &sets, v);
}

/// The resource checks: every resource asked for is covered, and no pod set (nor the whole
/// workload) asks more than the ClusterQueue can ever give.
fn check_quota(settings: &Settings, queue: &str, cq_name: &str, cq: &ClusterQueue, sets: &[PodSet], v: &mut Verdict) {
    if !cq.readable {
        return;
    }
    let who = format!("ClusterQueue {cq_name:?} (LocalQueue {queue:?})");
    // Workload totals by resource (in the order first asked), with where the first ask is.
    let mut totals: Vec<(String, u64, Path, bool)> = Vec::new();
    for set in sets.iter().filter(|s| s.count > 0) {
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
            // A queue in a cohort may borrow: no claim about its quota.
            if cq.cohort.is_some() || reported {
                continue;
            }
            let Some(quotas) = cq.quotas(&ask.resource) else { continue };
            // One flavor per resource group for the whole pod set: held against the largest.
            let Some((flavor, largest)) = quotas.iter().max_by_key(|(_, q)| *q).copied() else { continue };
            if demand > largest {
                let r = &ask.resource;
                let message = format!(
                    "{who} can never admit pod set {:?}: its {} {} {} {r} in total ({} each), more than the {} of {r} its largest flavor ({flavor:?}) can ever give, outside any cohort (Kueue: \"insufficient quota for {r} in flavor {flavor}, ... > maximum capacity ({})\"), so the job stays suspended",
                    set.name,
                    plural(usize::try_from(set.count).unwrap_or(usize::MAX), "pod"),
                    if set.count == 1 { "asks" } else { "ask" },
                    show(r, demand),
                    show(r, ask.units),
                    show(r, largest),
                    show(r, largest),
                );
                report(settings, QUEUE_QUOTA, ask.at.clone(), BadValue::from(show(r, ask.units).as_str()), message, v);
                if let Some(total) = totals.iter_mut().find(|(n, ..)| n == r) {
                    total.3 = true;
                }
            }
        }
    }
    if cq.cohort.is_some() {
        return;
    }
    // The whole workload against every flavor together: each pod set takes one flavor, so
    // the pod sets together take at most all of them.
    for (r, demand, at, reported) in totals {
        if reported {
            continue;
        }
        let Some(quotas) = cq.quotas(&r) else { continue };
        let all = quotas.iter().fold(0u64, |a, (_, q)| a.saturating_add(*q));
        if demand > all {
            let message = format!(
                "{who} can never admit the job: its pod sets ask {} {r} in total, more than the {} of {r} all its flavors together can ever give, outside any cohort, so the job stays suspended",
                show(&r, demand),
                show(&r, all),
            );
            report(settings, QUEUE_QUOTA, at, BadValue::from(show(&r, demand).as_str()), message, v);
        }
    }
}

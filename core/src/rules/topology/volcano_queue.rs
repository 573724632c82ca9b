//! Volcano's Queues (setting `queueCheck`): whether the `scheduling.volcano.sh/v1beta1` Queue a
//! new vcjob, Volcano PodGroup or Volcano-scheduled Kubeflow v1 job names exists, is Open, and
//! has a `spec.capability` that can ever hold the job's minimum resources. Volcano's `enqueue`
//! action (in its default scheduler configuration) keeps a PodGroup Pending until its
//! `minResources` fit its queue's capability (the proportion plugin's `realCapability`, never
//! above `capability`); a queue that does not exist or is not Open takes nothing.
//!
//! A finding is a proof: the demand is the least the PodGroup's `minResources` can be whichever
//! order Volcano's controller takes the tasks in (it sorts them by PriorityClass), the supply
//! `capability` as written (a cpu or memory capability at or below zero is no limit, as Volcano
//! reads it; `deserved` and `guarantee` are not limits; an ancestor queue's capability is not
//! read). A cluster that does not serve Volcano's API, or lists no Queue, gets no finding; a failed lookup is a
//! warning (or a rejection with `failOnLookupError`), never a finding.

use super::*;
use crate::capacity::request::{Ask, is_checked_resource, pod_asks};
use crate::pod::PodSpec;
use crate::quantity::{FINE, fine_units, scheduler_units, show};
use crate::volcano::{DEFAULT_QUEUE, SCHEDULER as VOLCANO_SCHEDULER, queue_query};
use capacity::CapacityCheck;
use queue::{items, list_text, report};

pub const VOLCANO_QUEUE: &str = "topology.volcano-queue";
pub const VOLCANO_QUEUE_CAPABILITY: &str = "topology.volcano-queue-capability";

/// One kind of pod of a gang: what one pod asks, how many there are, and how many of them
/// the gang must hold at least (its task's minimum, when it counts).
struct Pods {
    asks: Vec<Ask>,
    count: u64,
    at_least: u64,
}

/// What the queue check reads of the object under review: the queue it names (and where), and
/// the least its PodGroup's `minResources` can be, per resource (scheduler units).
struct Queued {
    queue: String,
    at: Path,
    demand: Vec<(String, u64)>,
}

/// The least `size` pods of `pods` (each kind at least its `at_least`) ask of each resource:
/// the cheapest choice, resource by resource. Per-pod amounts are rounded up as Volcano rounds
/// a pod's usage, but its controller sums the pods' quantities exactly and rounds once: for the
/// resources a pod may ask fractions of, one unit per pod is taken back, so the total is never
/// more than Volcano's.
fn least(pods: &[Pods], size: u64) -> Vec<(String, u64)> {
    let mut resources: Vec<&str> = pods.iter().flat_map(|p| p.asks.iter().map(|a| a.resource.as_str())).collect();
    resources.sort_unstable();
    resources.dedup();
    let fixed: u64 = pods.iter().map(|p| p.at_least).fold(0, u64::saturating_add);
    let rest = size.saturating_sub(fixed);
    resources
        .into_iter()
        .map(|r| {
            let of = |p: &Pods| p.asks.iter().find(|a| a.resource == r).map_or(0, |a| a.units);
            let mut total: u64 = pods.iter().map(|p| of(p).saturating_mul(p.at_least)).fold(0, u64::saturating_add);
            let mut others: Vec<(u64, u64)> =
                pods.iter().map(|p| (of(p), p.count.saturating_sub(p.at_least))).collect();
            // The project's one compiled sort (`crate::order`): cheapest pods first.
            crate::order::sort_by(&mut others, |a, b| a.0.cmp(&b.0));
            let mut left = rest;
            for (units, count) in others {
                let take = count.min(left);
                total = total.saturating_add(units.saturating_mul(take));
                left -= take;
            }
            let taken = fixed.saturating_add(rest - left);
            if matches!(r, "cpu" | "memory" | "ephemeral-storage") {
                total = total.saturating_sub(taken);
            }
            (r.to_string(), total)
        })
        .collect()
}

/// A `minResources` map as written, rounded down to scheduler units.
fn written(map: impl Iterator<Item = (String, Option<String>)>) -> Vec<(String, u64)> {
    map.filter(|(r, _)| is_checked_resource(r))
        .map(|(r, amount)| {
            let units =
                amount.and_then(|a| fine_units(&r, &a)).map_or(0, |f| u64::try_from(f / FINE).unwrap_or(u64::MAX));
            (r, units)
        })
        .collect()
}

/// A pod template's asks (none when it cannot be read: no claim rests on them).
fn asks(spec: Option<&PodSpec>, at: Path) -> Vec<Ask> {
    spec.and_then(|s| pod_asks(s, &at, None)).unwrap_or_default()
}

/// The queue a new Volcano-scheduled object names, and its least `minResources`; `None` for
/// other objects, updates (Volcano checks the queue on CREATE only) and objects a controller
/// made (the job they came from was checked).
fn queued(review: &Review) -> Option<Queued> {
    if review.old_object.is_some() || review.metadata.controller.is_some() {
        return None;
    }
    let or_default = |q: &str| if q.is_empty() { DEFAULT_QUEUE.to_string() } else { q.to_string() };
    match &review.object {
        Resource::VolcanoJob(job) => {
            let job = job.with_defaults();
            let tasks = Path::new("spec").child("tasks");
            let sum: i64 = job.spec.tasks.iter().map(|t| i64::from(t.min_available.unwrap_or(0).max(0))).sum();
            let counts = i64::from(job.spec.min_available) >= sum;
            let pods = job
                .spec
                .tasks
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let spec: Option<PodSpec> = t.pod.as_ref().and_then(|p| crate::decode::from_json(p).ok());
                    let count = u64::try_from(t.replicas).unwrap_or(0);
                    let min = u64::try_from(t.min_available.unwrap_or(0)).unwrap_or(0).min(count);
                    Pods {
                        asks: asks(spec.as_ref(), tasks.index(i).child("template").child("spec")),
                        count,
                        at_least: if counts { min } else { 0 },
                    }
                })
                .collect::<Vec<_>>();
            let size = u64::try_from(job.spec.min_available).unwrap_or(0);
            Some(Queued {
                queue: job.spec.queue.clone(),
                at: Path::new("spec").child("queue"),
                demand: least(&pods, size),
            })
        }
        Resource::VolcanoPodGroup(group) => {
            let entries = group.min_resources.as_ref().and_then(serde_json::Value::as_object).into_iter().flatten();
            let amount = |v: &serde_json::Value| match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            };
            let demand = written(entries.map(|(r, v)| (r.clone(), amount(v))));
            Some(Queued { queue: or_default(&group.queue), at: Path::new("spec").child("queue"), demand })
        }
        Resource::Kubeflow(job) if !job.is_mpi_operator() => {
            let to_volcano = job.replicas().any(|(_, s)| {
                s.template.spec.as_ref().and_then(|p| p.scheduler_name.as_deref()) == Some(VOLCANO_SCHEDULER)
            });
            if !to_volcano {
                return None;
            }
            let policy = job.scheduling_policy();
            let at = Path::new("spec").child("runPolicy").child("schedulingPolicy").child("queue");
            let queue = or_default(policy.and_then(|p| p.queue.as_deref()).unwrap_or_default());
            // The training operator's PodGroup: `minResources` as written, else the requests of
            // `minAvailable` (else every) pods.
            let demand = match policy.and_then(|p| p.min_resources.as_ref()) {
                Some(map) => written(map.iter().map(|(r, q)| (r.clone(), Some(q.0.clone())))),
                None => {
                    let map = Path::new("spec").child(job.kind.replica_specs_field());
                    let pods: Vec<Pods> = job
                        .replicas()
                        .map(|(t, s)| Pods {
                            asks: asks(s.template.spec.as_ref(), map.key(t).child("template").child("spec")),
                            count: u64::try_from(job.replica_count(t, s)).unwrap_or(0),
                            at_least: 0,
                        })
                        .collect();
                    let size = policy.and_then(|p| p.min_available).map_or(job.total_replicas(), i64::from);
                    least(&pods, u64::try_from(size).unwrap_or(0))
                }
            };
            Some(Queued { queue, at, demand })
        }
        _ => None,
    }
}

/// A Queue's `spec.capability`: per resource, the most Volcano ever gives the queue's jobs
/// (`None`: no limit: a cpu or memory capability at or below zero, or one that cannot be read).
fn capability(spec: &serde_json::Value, resource: &str) -> Option<u64> {
    let value = spec.get("capability")?.get(resource)?;
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let unlimited = matches!(resource, "cpu" | "memory")
        && (text.trim_start().starts_with('-') || scheduler_units(resource, &text) == Some(0));
    if unlimited { None } else { scheduler_units(resource, &text) }
}

/// The Volcano queue checks of a new vcjob, Volcano PodGroup or Volcano-scheduled Kubeflow job.
pub(super) fn check_volcano_queue(settings: &Settings, review: &Review, cluster: &dyn Cluster, v: &mut Verdict) {
    if settings.queue_check == CapacityCheck::Off {
        return;
    }
    let Some(q) = queued(review) else { return };
    let failed = |v: &mut Verdict, e: &LookupError| {
        v.lookup_failed(VOLCANO_QUEUE, q.at.clone(), "Volcano Queues", e, settings.fail_on_lookup_error)
    };
    let text = match list_text(cluster, &queue_query()) {
        // Volcano's API not served (or no Queue given to the CLI): no finding.
        Ok(None) => return,
        Ok(Some(text)) => text,
        Err(e) => return failed(v, &e),
    };
    let queues = match items(&text) {
        Ok(items) => items,
        Err(e) => return failed(v, &e),
    };
    // A cluster that serves Volcano's API has its `default` and `root` Queues: an empty list
    // is one without Volcano (or a CLI run given no Queue).
    if queues.is_empty() {
        return;
    }
    let name = q.queue.as_str();
    let value = BadValue::from(name);
    let Some(found) = queues.iter().find(|o| o.name() == Some(name)) else {
        let message = format!(
            "Volcano Queue {name:?} does not exist: Volcano refuses the job (unable to find job queue: queue.scheduling.volcano.sh {name:?} not found), and its scheduler ignores a PodGroup whose queue does not exist, so it stays Pending"
        );
        return report(settings, VOLCANO_QUEUE, q.at, value, message, v);
    };
    let state = found.state();
    if state.as_deref() != Some("Open") {
        let state = state.map_or("in no state yet".to_string(), |s| format!("{s:?}"));
        let message = format!(
            "Volcano Queue {name:?} is {state}, and Volcano admits jobs only to queues in state Open (\"can only submit job to queue with state `Open`\"), so it stays Pending"
        );
        return report(settings, VOLCANO_QUEUE, q.at, value, message, v);
    }
    let spec: serde_json::Value = found.spec_text().and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default();
    for (resource, asked) in &q.demand {
        let Some(limit) = capability(&spec, resource) else { continue };
        if *asked > limit {
            let message = format!(
                "the job's gang asks at least {} {resource} at once, and Volcano Queue {name:?} has a capability of {}: its enqueue action keeps the PodGroup Pending (\"queue resource quota insufficient\") however long it waits",
                show(resource, *asked),
                show(resource, limit),
            );
            return report(settings, VOLCANO_QUEUE_CAPABILITY, q.at, value, message, v);
        }
    }
}

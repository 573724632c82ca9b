//! Volcano's own gangs: the shape its admission webhook (`pkg/webhooks/admission/jobs/validate`,
//! `podgroups/validate`, v1.15.1) and its CRD schema give a `batch.volcano.sh/v1alpha1` Job
//! (vcjob) and a `scheduling.volcano.sh/v1beta1` PodGroup, with Volcano's wording.
//!
//! On CREATE the job is first completed as Volcano's mutating webhook completes it
//! ([`VolcanoJob::with_defaults`]), since a policy may see either form. On UPDATE only what
//! Volcano's `validateJobUpdate` checks is checked. The webhook is followed where Volcano's
//! (off by default) CEL admission policy differs.

use super::*;
use crate::volcano::{LifecyclePolicy, NetworkTopology, Task, VolcanoJob, VolcanoPodGroup};

/// The lifecycle events and actions users may write (`util.go`; the others are Volcano's own).
const EVENTS: [&str; 8] =
    ["*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated"];
/// The CRD's enum: the webhook then refuses the internal ones it lists.
const CRD_EVENTS: [&str; 11] = [
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
];
const ACTIONS: [&str; 8] = [
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
];
/// The job plugins Volcano's controller registers (`plugins/factory.go`).
const PLUGINS: [&str; 8] = ["ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"];
const NETWORK_TOPOLOGY_MODES: [&str; 2] = ["hard", "soft"];
const LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const SUBDOMAIN_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

fn spec() -> Path {
    Path::new("spec")
}

/// The apiserver's answer to a CRD `minimum`.
fn below_minimum(path: Path, value: i32, min: i32) -> FieldError {
    let detail = format!("{path} in body should be greater than or equal to {min}");
    FieldError::invalid(path, value, detail)
}

/// The apiserver's answer to a CRD `pattern` and `maxLength`.
fn check_pattern(
    path: Path,
    value: &str,
    max: usize,
    pattern: &str,
    valid: fn(&str) -> Vec<String>,
) -> Option<FieldError> {
    if value.len() > max {
        return Some(FieldError::too_long(path, max));
    }
    if valid(value).is_empty() {
        return None;
    }
    let detail = format!("{path} in body should match '{pattern}'");
    Some(FieldError::invalid(path, value, detail))
}

/// A vcjob: CREATE runs the webhook's `validateJobCreate` on the defaulted job, UPDATE its
/// `validateJobUpdate`.
pub(super) fn check_job(settings: &Settings, job: &VolcanoJob, old: Option<&VolcanoJob>, raw: &str, v: &mut Verdict) {
    match old {
        Some(old) => check_job_update(job, old, raw, v),
        None => check_job_create(settings, &job.with_defaults(), v),
    }
}

fn check_job_create(settings: &Settings, job: &VolcanoJob, v: &mut Verdict) {
    let tasks = &job.spec.tasks;
    if tasks.is_empty() {
        v.deny(VOLCANO_TASKS, FieldError::required(spec().child("tasks"), "No task specified in job spec"));
        return;
    }
    if let Some(args) = job.plugin("mpi") {
        let master = mpi_master(args);
        if !tasks.iter().any(|t| t.name == master) {
            let path = spec().child("plugins").key("mpi");
            v.deny(
                VOLCANO_MPI_MASTER,
                FieldError::invalid(path, master, "The specified mpi master task was not found"),
            );
            return;
        }
    }
    check_network_topology(job.spec.network_topology.as_ref(), spec().child("networkTopology"), "", v);
    let generated = crate::rules::meta::name_as_created(&job.metadata);
    let job_name = generated.as_ref().map_or(job.name(), |(_, _, n)| n.as_str());
    let mut names = HashSet::with_capacity(tasks.len());
    for (i, task) in tasks.iter().enumerate() {
        let path = spec().child("tasks").index(i);
        let above = format!("'minAvailable' is greater than 'replicas' in task: {}, job: {job_name}", task.name);
        check_task_counts(task, &path, &above, v);
        let name_path = path.child("name");
        if let Some(e) = check_pattern(name_path.clone(), &task.name, 63, LABEL_PATTERN, names::is_dns1123_label) {
            v.deny(VOLCANO_TASK_NAME, e);
        }
        if !names.insert(task.name.as_str()) {
            let detail = format!("duplicated task name {}", task.name);
            v.deny(VOLCANO_TASK_NAME, FieldError::invalid(name_path.clone(), &task.name, detail));
        }
        check_policies(&task.policies, &path.child("policies"), v);
        if generated.is_some() {
            // The controller names the task's pods `<job>-<task>-<index>` (the task's index).
            let pod = format!("{job_name}-{}-{i}", task.name);
            let errors = names::is_qualified_name(&pod);
            if !errors.is_empty() {
                let detail = format!("create pod with name {pod} validate failed [{}]", errors.join(" "));
                v.deny(VOLCANO_POD_NAME, FieldError::invalid(name_path, &task.name, detail));
            }
        }
        check_partition(task, job_name, &path, v);
    }
    if let Some((path, value, name)) = &generated {
        let errors = names::is_qualified_name(name);
        if !errors.is_empty() {
            let detail = format!("create job with name {name} validate failed [{}]", errors.join(" "));
            v.deny(VOLCANO_POD_NAME, FieldError::invalid(path.clone(), *value, detail));
        }
    }
    check_job_min_available(job, "job 'minAvailable' should not be greater than total replicas in tasks", v);
    if let Some(max) = settings.max_min_count.filter(|max| job.spec.min_available > *max) {
        let detail = format!("must be less than or equal to {max} (settings.maxMinCount)");
        v.deny(MAX_MIN_COUNT, FieldError::invalid(spec().child("minAvailable"), job.spec.min_available, detail));
    }
    check_policies(&job.spec.policies, &spec().child("policies"), v);
    for (name, _) in job.spec.plugins.iter().filter(|(p, _)| !PLUGINS.contains(&p.as_str())) {
        let detail = format!("unable to find job plugin: {name} (Volcano's plugins: {})", PLUGINS.join(", "));
        v.deny(VOLCANO_PLUGINS, FieldError::invalid(spec().child("plugins").key(name), name, detail));
    }
    check_queue_name(&job.spec.queue, spec().child("queue"), v);
    check_depends_on(tasks, v);
}

/// The master task the `mpi` plugin's arguments name (`--master`, default `master`), read as
/// Go's flag package reads them: up to the first argument that is no flag, or one it does
/// not know.
fn mpi_master(args: &[String]) -> &str {
    let mut master = "master";
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')).filter(|f| !f.is_empty()) else {
            break;
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, None),
        };
        if !matches!(name, "master" | "worker" | "port") {
            break;
        }
        let Some(value) = value.or_else(|| args.next().map(String::as_str)) else { break };
        if name == "master" {
            master = value;
        }
    }
    master
}

/// A task's replicas and `minAvailable`: the CRD's minimums, then the webhook's bound
/// (`above`: its words, which CREATE and UPDATE word differently).
fn check_task_counts(task: &Task, path: &Path, above: &str, v: &mut Verdict) {
    if task.replicas < 0 {
        v.deny(VOLCANO_MIN_AVAILABLE, below_minimum(path.child("replicas"), task.replicas, 0));
    }
    match task.min_available {
        Some(n) if n < 0 => v.deny(VOLCANO_MIN_AVAILABLE, below_minimum(path.child("minAvailable"), n, 0)),
        Some(n) if n > task.replicas => {
            v.deny(VOLCANO_MIN_AVAILABLE, FieldError::invalid(path.child("minAvailable"), n, above));
        }
        _ => {}
    }
}

/// The job's `minAvailable`: not negative (CRD), at most the tasks' replicas (`detail`, which
/// CREATE and UPDATE word differently).
fn check_job_min_available(job: &VolcanoJob, detail: &str, v: &mut Verdict) {
    let path = spec().child("minAvailable");
    let min = job.spec.min_available;
    let total: i64 = job.spec.tasks.iter().map(|t| i64::from(t.replicas)).sum();
    if min < 0 {
        v.deny(VOLCANO_MIN_AVAILABLE, below_minimum(path, min, 0));
    } else if i64::from(min) > total {
        v.deny(VOLCANO_MIN_AVAILABLE, FieldError::invalid(path, min, format!("{detail} ({total})")));
    }
}

/// `partitionPolicy` (`validatePartitionPolicy`): the first broken bound, then its network
/// topology.
fn check_partition(task: &Task, job_name: &str, path: &Path, v: &mut Verdict) {
    let Some(p) = &task.partition_policy else { return };
    let path = path.child("partitionPolicy");
    if p.min_partitions < 0 {
        v.deny(VOLCANO_PARTITION, below_minimum(path.child("minPartitions"), p.min_partitions, 0));
    }
    let at = format!("in task: {}, job: {job_name}", task.name);
    let min_differs = |min: &i32| i64::from(p.min_partitions) * i64::from(p.partition_size) != i64::from(*min);
    let error = if p.total_partitions <= 0 {
        Some((
            path.child("totalPartitions"),
            p.total_partitions,
            format!("'TotalPartitions' must be greater than 0 {at}"),
        ))
    } else if p.partition_size <= 0 {
        Some((path.child("partitionSize"), p.partition_size, format!("'PartitionSize' must be greater than 0 {at}")))
    } else if i64::from(task.replicas) != i64::from(p.total_partitions) * i64::from(p.partition_size) {
        let detail = format!("'Replicas' are not equal to TotalPartitions*PartitionSize {at}");
        Some((path.child("totalPartitions"), p.total_partitions, detail))
    } else if p.min_partitions > 0 && task.min_available.as_ref().is_some_and(min_differs) {
        let detail = format!("'MinAvailable' is not equal to MinPartitions*PartitionSize {at}");
        Some((path.child("minPartitions"), p.min_partitions, detail))
    } else {
        None
    };
    if let Some((path, value, detail)) = error {
        v.deny(VOLCANO_PARTITION, FieldError::invalid(path, value, detail));
    }
    check_network_topology(p.network_topology.as_ref(), path.child("networkTopology"), "", v);
}

/// `networkTopology`: the CRD's mode and `highestTierAllowed` bounds, and the webhook's rule
/// that it names a tier one way only (`prefix`: the PodGroup webhook's, for a sub-group).
fn check_network_topology(nt: Option<&NetworkTopology>, path: Path, prefix: &str, v: &mut Verdict) {
    let Some(nt) = nt else { return };
    if let Some(mode) = nt.mode.as_deref().filter(|m| !NETWORK_TOPOLOGY_MODES.contains(m)) {
        v.deny(VOLCANO_NETWORK_TOPOLOGY, FieldError::not_supported(path.child("mode"), mode, &NETWORK_TOPOLOGY_MODES));
    }
    if let Some(n) = nt.highest_tier_allowed.filter(|n| *n < 0) {
        v.deny(VOLCANO_NETWORK_TOPOLOGY, below_minimum(path.child("highestTierAllowed"), n, 0));
    }
    if nt.highest_tier_allowed.is_some() && !nt.highest_tier_name.is_empty() {
        let detail = format!(
            "{prefix}must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"
        );
        v.deny(VOLCANO_NETWORK_TOPOLOGY, FieldError::forbidden(path.child("highestTierName"), detail));
    }
}

/// The queue name: the CRD's pattern (a DNS subdomain).
fn check_queue_name(queue: &str, path: Path, v: &mut Verdict) {
    if let Some(e) = check_pattern(path, queue, 253, SUBDOMAIN_PATTERN, names::is_dns1123_subdomain) {
        v.deny(VOLCANO_QUEUE, e);
    }
}

/// `validatePolicies`: each list stops at its first broken policy, as Volcano's does. The
/// action is checked with each event only: an exit-code policy takes any action.
fn check_policies(policies: &[LifecyclePolicy], path: &Path, v: &mut Verdict) {
    let mut events: HashSet<&str> = HashSet::new();
    let mut exit_codes: HashSet<i32> = HashSet::new();
    for (i, policy) in policies.iter().enumerate() {
        let path = path.index(i);
        if let Some(error) = policy_error(policy, &path, &mut events, &mut exit_codes) {
            v.deny(VOLCANO_POLICIES, error);
            break;
        }
    }
    if events.contains("*") && events.len() > 1 {
        let detail = "if there's * here, no other policy should be here";
        v.deny(VOLCANO_POLICIES, FieldError::invalid(path.clone(), BadValue::omitted(), detail));
    }
}

fn policy_error<'a>(
    policy: &'a LifecyclePolicy,
    path: &Path,
    seen_events: &mut HashSet<&'a str>,
    exit_codes: &mut HashSet<i32>,
) -> Option<FieldError> {
    let has_event = !policy.event.is_empty() || !policy.events.is_empty();
    match (has_event, policy.exit_code) {
        (true, Some(_)) => {
            let detail = "must not specify event and exitCode simultaneously";
            Some(FieldError::forbidden(path.child("exitCode"), detail))
        }
        (false, None) => Some(FieldError::required(path.clone(), "either event and exitCode should be specified")),
        (false, Some(0)) => Some(FieldError::invalid(path.child("exitCode"), 0, "0 is not a valid error code")),
        (false, Some(code)) => (!exit_codes.insert(code))
            .then(|| FieldError::invalid(path.child("exitCode"), code, format!("duplicate exitCode {code}"))),
        (true, None) => {
            // `events`, then `event`, each once (`getEventList`).
            let listed = policy.events.iter().enumerate().map(|(j, e)| (path.child("events").index(j), e.as_str()));
            let single = (!policy.event.is_empty()).then(|| (path.child("event"), policy.event.as_str()));
            let mut own: HashSet<&str> = HashSet::new();
            for (event_path, event) in listed.chain(single).filter(|(_, e)| own.insert(e)) {
                if !CRD_EVENTS.contains(&event) {
                    return Some(FieldError::not_supported(event_path, event, &CRD_EVENTS));
                }
                if !EVENTS.contains(&event) {
                    let detail = format!("invalid policy event: valid events are {}", EVENTS.join(", "));
                    return Some(FieldError::invalid(event_path, event, detail));
                }
                if !ACTIONS.contains(&policy.action.as_str()) {
                    let detail = format!("invalid policy action: valid actions are {}", ACTIONS.join(", "));
                    return Some(FieldError::invalid(path.child("action"), &policy.action, detail));
                }
                if !seen_events.insert(event) {
                    // Volcano's text, with its two spaces.
                    let detail = format!("duplicate event {event}  across different policy");
                    return Some(FieldError::invalid(event_path, event, detail));
                }
            }
            None
        }
    }
}

/// `dependsOn` forms a DAG (`topoSort`, in linear time): a task waits on the tasks it names,
/// once per name it lists (a repeated or unknown name is never satisfied, as in Volcano).
fn check_depends_on(tasks: &[Task], v: &mut Verdict) {
    if tasks.iter().all(|t| t.depends_on.is_none()) {
        return;
    }
    let index: HashMap<&str, usize> = tasks.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();
    let mut waiting: Vec<usize> = tasks.iter().map(|t| t.depends_on.as_ref().map_or(0, Vec::len)).collect();
    // Each distinct (dependency, task) edge releases the task once: `seen[d] == i` marks
    // dependency d as counted for task i.
    let mut seen = vec![usize::MAX; tasks.len()];
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, task) in tasks.iter().enumerate() {
        for dep in task.depends_on.iter().flatten() {
            if let Some(&d) = index.get(dep.as_str())
                && seen[d] != i
            {
                seen[d] = i;
                next[d].push(i);
            }
        }
    }
    let mut ready: Vec<usize> = (0..tasks.len()).filter(|i| waiting[*i] == 0).collect();
    let mut done = vec![false; tasks.len()];
    while let Some(t) = ready.pop() {
        done[t] = true;
        for &n in &next[t] {
            waiting[n] -= 1;
            if waiting[n] == 0 {
                ready.push(n);
            }
        }
    }
    if let Some(i) = done.iter().position(|d| !d) {
        let path = spec().child("tasks").index(i).child("dependsOn").child("name");
        let names = tasks[i].depends_on.as_deref().unwrap_or_default();
        let detail = "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)";
        v.deny(VOLCANO_DEPENDS_ON, FieldError::invalid(path, BadValue::of(names), detail));
    }
}

/// `validateJobUpdate`: the counts as on CREATE (with its wording), no task added or removed,
/// and nothing changed but `minAvailable`, `priorityClassName` and each task's `replicas`
/// and `minAvailable`.
fn check_job_update(job: &VolcanoJob, old: &VolcanoJob, raw: &str, v: &mut Verdict) {
    for (i, task) in job.spec.tasks.iter().enumerate() {
        let path = spec().child("tasks").index(i);
        check_task_counts(task, &path, &format!("'minAvailable' must be <= 'replicas' in task: {}", task.name), v);
        check_partition(task, job.name(), &path, v);
    }
    check_job_min_available(job, "job 'minAvailable' must not be greater than total replicas", v);
    check_network_topology(job.spec.network_topology.as_ref(), spec().child("networkTopology"), "", v);
    if job.spec.tasks.len() != old.spec.tasks.len() {
        v.deny(VOLCANO_UPDATE, FieldError::forbidden(spec().child("tasks"), "job updates may not add or remove tasks"));
        return;
    }
    let new: Option<serde_json::Value> = serde_json::from_str(raw).ok();
    if let (Some(new), Some(old)) = (new, &old.frozen)
        && !crate::volcano::same_spec(old, &new["spec"])
    {
        let detail = "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and `PriorityClassName`";
        v.deny(VOLCANO_UPDATE, FieldError::forbidden(spec(), detail));
    }
}

/// A Volcano PodGroup, on CREATE (Volcano has no UPDATE rule): the CRD's bounds and the
/// webhook's network-topology rule, for the group and each sub-group. Not `maxMinCount`:
/// controllers make these (the training operator from all of a job's replicas when it sets
/// no `minAvailable`, which that setting leaves alone), and what they make must pass.
pub(super) fn check_pod_group(pg: &VolcanoPodGroup, v: &mut Verdict) {
    let min = pg.min_member;
    if min < 0 {
        v.deny(VOLCANO_MIN_AVAILABLE, below_minimum(spec().child("minMember"), min, 0));
    }
    if !pg.queue.is_empty() {
        check_queue_name(&pg.queue, spec().child("queue"), v);
    }
    check_network_topology(pg.network_topology.as_ref(), spec().child("networkTopology"), "", v);
    for (i, (name, topology)) in pg.sub_groups.iter().enumerate() {
        let path = spec().child("subGroupPolicy").index(i).child("networkTopology");
        check_network_topology(topology.as_ref(), path, &format!("in subGroupPolicy '{name}': "), v);
    }
}

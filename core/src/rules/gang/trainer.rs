//! Kubeflow Trainer v2: the gang a runtime's `podGroupPolicy` asks for (scheduler-plugins
//! coscheduling or Volcano), which Trainer compiles into one PodGroup per TrainJob whose
//! `minMember` counts every pod set, initializers included. Nothing upstream checks that the
//! policy names one scheduler, that the pods all go to it, or the gang's size.

use super::*;
use crate::trainer::{self, PodSet, Runtime, RuntimeLookup, TrainJob, VOLCANO_QUEUE_ANNOTATION};

/// The pod sets of a run as messages show them: `node 8 + dataset-initializer 1`.
fn summary(sets: &[PodSet]) -> String {
    sets.iter().map(|s| format!("{} {}", s.name, s.count)).collect::<Vec<_>>().join(" + ")
}

fn gang_size(sets: &[PodSet]) -> i64 {
    sets.iter().map(|s| i64::from(s.count)).sum()
}

/// Which schedulers the runtime's `podGroupPolicy` names.
fn schedulers(runtime: &Runtime) -> (bool, bool) {
    runtime.spec.pod_group_policy.as_ref().map_or((false, false), |p| (p.coscheduling.is_some(), p.volcano.is_some()))
}

fn is_volcano(runtime: &Runtime) -> bool {
    schedulers(runtime).1
}

/// The rules of a TrainingRuntime or ClusterTrainingRuntime.
pub(super) fn check_runtime(ctx: &Context, runtime: &Runtime, create: bool, v: &mut Verdict) {
    let spec = Path::new("spec");
    let policy_path = spec.child("podGroupPolicy");
    let Some(policy) = runtime.spec.pod_group_policy.as_ref() else { return };
    match schedulers(runtime) {
        (false, false) => v.deny(
            POD_GROUP_POLICY,
            FieldError::invalid(policy_path.clone(), "", "must specify one of: `coscheduling`, `volcano`"),
        ),
        (true, true) => v.deny(
            POD_GROUP_POLICY,
            FieldError::invalid(
                policy_path.clone(),
                "{coscheduling, volcano}",
                "must specify exactly one of: `coscheduling`, `volcano` (with both, Trainer makes two PodGroups and the job can stay Pending, kubeflow/trainer#4060)",
            ),
        ),
        _ => {}
    }
    if let Some(t) = policy.coscheduling.as_ref().and_then(|c| c.schedule_timeout_seconds).filter(|t| *t < 0) {
        let path = policy_path.child("coscheduling").child("scheduleTimeoutSeconds");
        v.deny(SCHEDULE_TIMEOUT, FieldError::invalid(path, t, "must be greater than or equal to 0"));
    }
    if !runtime.has_gang() {
        return;
    }
    if is_volcano(runtime) {
        let path = spec.child("template").child("metadata").child("annotations").key(VOLCANO_QUEUE_ANNOTATION);
        let queue = runtime.spec.template.metadata.annotation(VOLCANO_QUEUE_ANNOTATION);
        if check_queue_name(queue, &path, v) && create {
            check_queue(ctx, queue, &path, v);
        }
    }
    check_schedulers(runtime, v);
    let sets = runtime.pod_sets(None);
    if let Some(max) = ctx.settings.max_min_count.filter(|max| gang_size(&sets) > i64::from(*max)) {
        let num_nodes = runtime.spec.ml_policy.as_ref().and_then(|m| m.num_nodes);
        let (path, value) = match num_nodes {
            Some(n) => (spec.child("mlPolicy").child("numNodes"), BadValue::of(&n)),
            None => (policy_path, BadValue::omitted()),
        };
        let detail = format!(
            "makes a gang of {} pods ({}), more than {max} (settings.maxMinCount)",
            gang_size(&sets),
            summary(&sets)
        );
        v.deny(MAX_MIN_COUNT, FieldError::invalid(path, value, detail));
    }
    check_depends_on(runtime, &sets, v);
}

/// Volcano rejects an empty queue name (Trainer's Volcano plugin, with its wording). Returns
/// whether a name to look up is there.
fn check_queue_name(queue: Option<&str>, path: &Path, v: &mut Verdict) -> bool {
    match queue {
        Some("") => {
            v.deny(VOLCANO_QUEUE, FieldError::invalid(path.clone(), "", "Volcano queue name must not be empty"));
            false
        }
        Some(_) => true,
        None => false,
    }
}

/// A Volcano Queue that is missing or not Open refuses the PodGroup: the TrainJob is admitted
/// and stays Pending, which only a reconcile event shows. A warning: the queue may come later.
fn check_queue(ctx: &Context, queue: Option<&str>, path: &Path, v: &mut Verdict) {
    let Some(queue) = queue else { return };
    let query = Query {
        api_version: "scheduling.volcano.sh/v1beta1",
        kind: "Queue",
        namespace: None,
        field_masks: &["status.state"],
    };
    let state = |o: &serde_json::value::RawValue| -> Option<String> {
        let v: serde_json::Value = serde_json::from_str(o.get()).ok()?;
        v["status"]["state"].as_str().map(String::from)
    };
    match ctx.cluster.get(&query, queue) {
        Ok(None) => v.warn(
            VOLCANO_QUEUE,
            path.clone(),
            format!("Volcano Queue {queue:?} does not exist, so Volcano refuses the job's PodGroup (\"unable to find queue\") and the job stays Pending until the queue is created"),
        ),
        Ok(Some(object)) => match state(&object) {
            Some(s) if s == "Open" => {}
            s => v.warn(
                VOLCANO_QUEUE,
                path.clone(),
                format!(
                    "Volcano Queue {queue:?} is {}, and Volcano admits PodGroups only to queues in state Open, so the job stays Pending",
                    s.map_or("in no state yet".to_string(), |s| format!("{s:?}"))
                ),
            ),
        },
        Err(e) => v.lookup_failed(
            VOLCANO_QUEUE,
            path.clone(),
            &format!("Volcano Queue {queue:?}"),
            &e,
            ctx.settings.fail_on_lookup_error,
        ),
    }
}

/// Every replicated job of a gang runtime goes to one scheduler: the PodGroup counts the pods
/// of every job, and pods another scheduler places keep the gang below its `minMember`.
fn check_schedulers(runtime: &Runtime, v: &mut Verdict) {
    let Some(first) = runtime.jobs().first() else { return };
    const DEFAULT: &str = "default-scheduler";
    let want = first.scheduler_name().unwrap_or(DEFAULT);
    for (i, job) in runtime.jobs().iter().enumerate().skip(1) {
        let have = job.scheduler_name().unwrap_or(DEFAULT);
        if have != want {
            let path = Runtime::job_path(i)
                .child("template")
                .child("spec")
                .child("template")
                .child("spec")
                .child("schedulerName");
            v.deny(
                TRAINER_SCHEDULER_NAME,
                FieldError::invalid(
                    path,
                    have,
                    format!(
                        "must be {want:?}, the schedulerName of job {:?}: the gang's PodGroup counts the pods of every job, so pods another scheduler places keep it below its minMember and it never starts",
                        first.name
                    ),
                ),
            );
        }
    }
}

/// A job that starts only after another (`dependsOn`) has no pods while the other runs, yet
/// the gang's `minMember` counts the pods of both.
fn check_depends_on(runtime: &Runtime, sets: &[PodSet], v: &mut Verdict) {
    for (i, job) in runtime.jobs().iter().enumerate() {
        for (j, dep) in job.depends_on.iter().flatten().enumerate() {
            let path = Runtime::job_path(i).child("dependsOn").index(j);
            v.warn(
                GANG_DEPENDS_ON,
                path,
                format!(
                    "job {:?} is created only once job {:?} is {}, but the gang's minMember ({}: {}) counts the pods of both, so the pods of {:?} wait for pods that do not exist yet and the gang may never start",
                    job.name,
                    dep.name,
                    dep.status,
                    gang_size(sets),
                    summary(sets),
                    dep.name
                ),
            );
        }
    }
}

/// The gang rules of a TrainJob, against the runtime it names (on CREATE). A runtime that
/// is missing is the runPolicy set's business (`run-policy.runtime-exists`).
pub(super) fn check_train_job(ctx: &Context, job: &TrainJob, v: &mut Verdict) {
    let ref_path = Path::new("spec").child("runtimeRef");
    for (i, patch) in job.patches().iter().enumerate() {
        let queue = patch.jobset_annotation(VOLCANO_QUEUE_ANNOTATION);
        let path = Path::new("spec")
            .child("runtimePatches")
            .index(i)
            .child("trainingRuntimeSpec")
            .child("template")
            .child("metadata")
            .child("annotations")
            .key(VOLCANO_QUEUE_ANNOTATION);
        check_queue_name(queue, &path, v);
    }
    let Some(RuntimeLookup { what, found, .. }) = trainer::lookup_runtime(ctx.cluster, job, ctx.namespace) else {
        return;
    };
    let runtime = match found {
        Ok(Some(runtime)) => runtime,
        Ok(None) => return,
        Err(e) => {
            let what = format!("{what} to check the job's gang");
            v.lookup_failed(MAX_MIN_COUNT, ref_path, &what, &e, ctx.settings.fail_on_lookup_error);
            return;
        }
    };
    let shown = job.spec.runtime_ref.shown();
    if schedulers(&runtime) == (true, true) {
        v.deny(
            POD_GROUP_POLICY,
            FieldError::invalid(
                ref_path.clone(),
                shown.clone(),
                format!("{what} sets both coscheduling and volcano in spec.podGroupPolicy, so Trainer makes two PodGroups for the job and it can stay Pending (kubeflow/trainer#4060)"),
            ),
        );
    }
    if is_volcano(&runtime) {
        // The patches' JobSet annotations are applied over the runtime's, in order.
        let from_patches = job.patches().iter().rev().find_map(|p| p.jobset_annotation(VOLCANO_QUEUE_ANNOTATION));
        let queue = from_patches.or(runtime.spec.template.metadata.annotation(VOLCANO_QUEUE_ANNOTATION));
        if queue.is_some_and(|q| !q.is_empty()) {
            check_queue(ctx, queue, &ref_path, v);
        }
    }
    let sets = runtime.pod_sets(job.num_nodes());
    let size = gang_size(&sets);
    let (size_path, size_value) = match job.num_nodes() {
        Some(n) => (Path::new("spec").child("trainer").child("numNodes"), BadValue::of(&n)),
        None => (ref_path.clone(), shown),
    };
    if runtime.has_gang() {
        if let Some(max) = ctx.settings.max_min_count.filter(|max| size > i64::from(*max)) {
            let detail = format!(
                "makes a gang of {size} pods ({}) on {what}, more than {max} (settings.maxMinCount)",
                summary(&sets)
            );
            v.deny(MAX_MIN_COUNT, FieldError::invalid(size_path, size_value, detail));
        }
    } else if let Some(at_least) = ctx.settings.require_gang_for_jobs_with_at_least.filter(|n| size >= i64::from(*n)) {
        let detail = format!(
            "makes {size} pods ({}), and jobs with {at_least} or more must be gang-scheduled (settings.requireGangForJobsWithAtLeast), but {what} sets no podGroupPolicy",
            summary(&sets)
        );
        v.deny(REQUIRE_GANG, FieldError::invalid(size_path, size_value, detail));
    }
}

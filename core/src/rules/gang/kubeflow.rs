//! The gang settings of Kubeflow `kubeflow.org/v1` jobs and the MPI operator's `v2beta1` MPIJob
//! (`spec.runPolicy.schedulingPolicy`).

use super::*;

pub(super) fn scheduling_policy_path() -> Path {
    Path::new("spec").child("runPolicy").child("schedulingPolicy")
}

/// G-40, G-45, G-46 and the gang settings, for Kubeflow jobs.
pub(super) fn check_job(settings: &Settings, job: &KubeflowJob, cluster: &dyn Cluster, v: &mut Verdict) {
    let total = job.total_replicas();
    let sp_path = scheduling_policy_path();
    let Some(sp) = job.scheduling_policy() else {
        if let Some(at_least) = settings.require_gang_for_jobs_with_at_least.filter(|n| total >= i64::from(*n)) {
            v.deny(
                REQUIRE_GANG,
                FieldError::required(
                    sp_path.child("minAvailable"),
                    format!("jobs with {at_least} or more replicas must be gang-scheduled (settings.requireGangForJobsWithAtLeast); this one has {total}"),
                ),
            );
        }
        return;
    };

    let min_path = sp_path.child("minAvailable");
    match sp.min_available {
        None => {
            if let Some(at_least) = settings.require_gang_for_jobs_with_at_least.filter(|n| total >= i64::from(*n)) {
                v.deny(
                    REQUIRE_GANG,
                    FieldError::required(
                        min_path.clone(),
                        format!("jobs with {at_least} or more replicas must set it (settings.requireGangForJobsWithAtLeast); this one has {total}"),
                    ),
                );
            }
        }
        Some(n) if n < 1 => {
            v.deny(MIN_AVAILABLE, FieldError::invalid(min_path.clone(), n, "must be greater than or equal to 1"))
        }
        Some(n) => {
            if i64::from(n) > total {
                v.deny(
                    MIN_AVAILABLE,
                    FieldError::invalid(
                        min_path.clone(),
                        n,
                        format!("must be less than or equal to the job's total replicas ({})", replica_summary(job)),
                    ),
                );
            } else if let Some(elastic_min) = elastic_minimum(job).filter(|m| i64::from(n) > *m) {
                v.deny(
                    MIN_AVAILABLE,
                    FieldError::invalid(
                        min_path.clone(),
                        n,
                        format!("must be less than or equal to {elastic_min}, the pods an elastic job is guaranteed to have (elasticPolicy.minReplicas plus any Master)"),
                    ),
                );
            }
            if let Some(max) = settings.max_min_count.filter(|max| n > *max) {
                v.deny(
                    MAX_MIN_COUNT,
                    FieldError::invalid(
                        min_path.clone(),
                        n,
                        format!("must be less than or equal to {max} (settings.maxMinCount)"),
                    ),
                );
            }
        }
    }
    if let Some(t) = sp.schedule_timeout_seconds.filter(|t| *t < 0) {
        v.deny(
            SCHEDULE_TIMEOUT,
            FieldError::invalid(sp_path.child("scheduleTimeoutSeconds"), t, "must be greater than or equal to 0"),
        );
    }

    let map = Path::new("spec").child(job.kind.replica_specs_field());
    // The training operator hands a gang to Volcano by the templates' `schedulerName:
    // volcano`: that is the gang scheduler where Volcano runs (its Queue list answers). Asked
    // once, only when a template names it.
    let mut volcano_runs = None;
    for (replica_type, spec) in job.replicas() {
        let Some(name) = spec.template.spec.as_ref().and_then(|s| s.scheduler_name.as_ref()).filter(|n| !n.is_empty())
        else {
            continue;
        };
        if name == crate::volcano::SCHEDULER
            && !job.is_mpi_operator()
            && *volcano_runs.get_or_insert_with(|| crate::volcano::serves_queues(cluster)) == Some(true)
        {
            continue;
        }
        // The training operator keeps a template's scheduler; the MPI operator, run with gang
        // scheduling, overwrites it (and says so only in its log).
        let detail = if job.is_mpi_operator() {
            format!(
                "{name:?} is overwritten with the gang scheduler when the MPI operator runs with --gang-scheduling, and without it these pods are not gang-scheduled"
            )
        } else {
            format!(
                "{name:?} is kept instead of the gang scheduler, so these pods are not gang-scheduled unless {name:?} is that scheduler"
            )
        };
        v.warn(SCHEDULER_NAME, map.key(replica_type).child("template").child("spec").child("schedulerName"), detail);
    }
}

/// "Master 1 + Worker 4 = 5", for messages.
pub(super) fn replica_summary(job: &KubeflowJob) -> String {
    let parts: Vec<String> = job.replicas().map(|(t, s)| format!("{t} {}", job.replica_count(t, s))).collect();
    if parts.is_empty() {
        "none: the job has no replica specs".to_string()
    } else {
        format!("{} = {}", parts.join(" + "), job.total_replicas())
    }
}

/// For elastic PyTorch/Paddle jobs, the pods the job is guaranteed to run: the elastic
/// minimum of Workers plus the non-Worker replicas.
pub(super) fn elastic_minimum(job: &KubeflowJob) -> Option<i64> {
    let min = job.elastic_bounds()?.min_replicas?;
    let others: i64 =
        job.replicas().filter(|(t, _)| t.as_str() != "Worker").map(|(t, s)| i64::from(job.replica_count(t, s))).sum();
    Some(i64::from(min) + others)
}

/// G-42: `queue` never changes, including being added or removed.
pub(super) fn check_job_update(job: &KubeflowJob, old: &KubeflowJob, v: &mut Verdict) {
    let queue = |j: &KubeflowJob| j.scheduling_policy().and_then(|s| s.queue.clone());
    let (new_q, old_q) = (queue(job), queue(old));
    if new_q != old_q {
        let path = scheduling_policy_path().child("queue");
        let detail = format!("spec.runPolicy.schedulingPolicy.queue is immutable (was {})", BadValue::of(&old_q));
        v.deny(QUEUE_IMMUTABLE, FieldError::invalid(path, BadValue::of(&new_q), detail));
    }
}

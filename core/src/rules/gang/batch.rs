//! 1.37 `batch/v1` Jobs and CronJobs that ask for a gang in `spec.scheduling`. The spec
//! itself is one more group holder (see [`super::spec`]); what is the Job's own: its size
//! against the Pods it runs, what may change on update, and who compiles its Workload.

use super::*;
use crate::batch::{BatchJob, BatchKind, GROUP_TEMPLATE_ANNOTATION};

/// The rules of a Job's `spec.scheduling` that read the rest of the Job.
pub(super) fn check_batch_job(
    job: &BatchJob,
    old: Option<&BatchJob>,
    group: Option<&GroupSpec>,
    operation: Operation,
    v: &mut Verdict,
) {
    if let Some(group) = group {
        check_size(job, group, v);
    }
    check_scheduling_group(job, v);
    match old {
        // A CronJob's template may change: it shapes only the Jobs created after.
        Some(old) if job.kind == BatchKind::Job => check_update(job, old, v),
        Some(_) => {}
        None if operation == Operation::Create => check_parent(job, v),
        None => {}
    }
}

/// The 1.37 apiserver's `validateGangMinCount` (on create and update, on the final object),
/// and what it leaves out: the Job controller runs at most `completions` Pods at once, so a
/// gang larger than that can never be scheduled.
fn check_size(job: &BatchJob, g: &GroupSpec, v: &mut Verdict) {
    let Some((size, size_path)) = g.gang_min_count_at().filter(|(n, _)| *n >= 1) else { return };
    let spec = job.spec_path();
    let parallelism = job.spec.parallelism();
    let explicit = g.scheduling_policy.gang_size().is_some();
    if explicit && size > parallelism {
        let detail = format!("must be less than or equal to {} ({parallelism})", spec.child("parallelism"));
        v.deny(JOB_PARALLELISM, FieldError::invalid(size_path, size, detail));
        return;
    }
    if let Some(completions) = job.spec.completions.filter(|c| (1..size).contains(c)) {
        let left_out = if explicit {
            String::new()
        } else {
            " (schedulingPolicy.gang.minCount is left out, so the gang's size is the Job's parallelism)".to_string()
        };
        let detail = format!(
            "must be less than or equal to {} ({completions}){left_out}: the Job controller never runs more Pods at once than it has completions to go, so a larger gang never gets all its Pods and stays Pending",
            spec.child("completions")
        );
        v.deny(JOB_COMPLETIONS, FieldError::invalid(size_path, size, detail));
    }
}

/// Whether the JobSpec has both `scheduling` and the Pod template's `schedulingGroup`.
fn has_both(job: &BatchJob) -> bool {
    job.spec.scheduling.is_some() && job.spec.template.spec.as_ref().is_some_and(|s| s.scheduling_group.is_some())
}

/// J-04: `spec.scheduling` next to the Pod template's `schedulingGroup`. A 1.37 apiserver
/// takes both and the Job controller then compiles nothing from `spec.scheduling` (KEP-5547,
/// `manageNone`): the Pods join the group the template names. A 1.38 apiserver refuses the
/// pair before any webhook ([`refused_by_kubernetes_1_38`]), so a policy sees it only from a
/// 1.37 apiserver, or on 1.38 for an object that already had both: a warning either way.
fn check_scheduling_group(job: &BatchJob, v: &mut Verdict) {
    if !has_both(job) {
        return;
    }
    let spec = job.spec_path();
    let group = spec.child("template").child("spec").child("schedulingGroup");
    v.warn(
        JOB_SCHEDULING_GROUP,
        spec.child("scheduling"),
        format!(
            "is not used: {group} is set, so the Job controller makes no Workload or PodGroup from spec.scheduling and the Pods join the group the template names (Kubernetes 1.38 refuses the two together)"
        ),
    );
}

/// What a Kubernetes 1.38 apiserver's built-in validation refuses here (KEP-5547 beta):
/// `spec.scheduling` with the Pod template's `schedulingGroup`, on create and on update
/// unless the old object already had both. The offline faces report it for `--api-version
/// 1.38`, standing in for the apiserver; the policies never see such a request there. The
/// wording is assumed (the 1.38 code cannot be read yet), in the apiserver's field-error form.
pub fn refused_by_kubernetes_1_38(job: &BatchJob, old: Option<&BatchJob>) -> Option<FieldError> {
    if !has_both(job) || old.is_some_and(has_both) {
        return None;
    }
    let spec = job.spec_path();
    let group = spec.child("template").child("spec").child("schedulingGroup");
    Some(FieldError::forbidden(spec.child("scheduling"), format!("may not be set when {group} is set")))
}

/// J-05, Kubernetes 1.38 (KEP-5547 beta): a Job owned by a parent that makes the Workload,
/// naming the parent's template in annotation `scheduling.k8s.io/group-template-name`, gets
/// a PodGroup of its own from that template (one per Job, named after the Job's UID): sibling
/// Jobs naming one template are separate gangs. When the template's `gang.minCount` is more
/// than the Pods this Job runs at once, its gang never forms. The parent's Workload is read
/// by the parent's name (in the versions of `schedulingApiVersions`) and counts only when its
/// `controllerRef` names that parent: anything else, or a failed lookup, proves nothing and
/// is not reported (a warning for the failure, never a rejection: the Job is a
/// controller's). A warning, like the finding it is.
pub(super) fn check_delegated(ctx: &Context, job: &BatchJob, v: &mut Verdict) {
    if job.kind != BatchKind::Job {
        return;
    }
    let (Some(template), Some(parent)) = (job.annotation(GROUP_TEMPLATE_ANNOTATION), job.delegating_parent()) else {
        return;
    };
    if parent.name.is_empty() || template.is_empty() {
        return;
    }
    let Ok(versions) = scheduling::parse_lookup_versions(&ctx.settings.scheduling_api_versions) else { return };
    let at = Path::new("metadata").child("annotations").key(GROUP_TEMPLATE_ANNOTATION);
    let masks = ["spec.controllerRef", "spec.podGroupTemplates", "spec.compositePodGroupTemplates"];
    let found = scheduling::find_in_versions(ctx.cluster, &versions, "Workload", ctx.namespace, &parent.name, &masks)
        .and_then(|found| {
            found
                .map(|(version, object)| Workload::decode(version, object.get()))
                .transpose()
                .map_err(|e| LookupError::Failed(format!("cannot decode Workload {:?}: {e}", parent.name)))
        });
    let workload = match found {
        Ok(Some(Workload::V137(w))) => w,
        Ok(_) => return,
        Err(e) => {
            let what = format!("the Workload of {} {:?}", parent.kind, parent.name);
            v.lookup_failed(JOB_DELEGATED_GANG, at, &what, &e, false);
            return;
        }
    };
    let made_by_parent = workload.spec.controller_ref.as_ref().is_some_and(|r| {
        r.kind == parent.kind && r.name == parent.name && r.api_group.as_deref().unwrap_or_default() == parent.group()
    });
    if !made_by_parent {
        return;
    }
    let templates = workload.group_specs();
    let Some(t) = find_template(&templates, template, GroupOrigin::PodGroup) else { return };
    let Some(min_count) = t.scheduling_policy.gang_size() else { return };
    let pods = job.spec.pods_at_once();
    if min_count > pods {
        v.warn(
            JOB_DELEGATED_GANG,
            at,
            format!(
                "names template {template:?} of Workload {:?}, whose gang.minCount is {min_count}, but this Job runs at most {pods} Pods at once: the Job controller makes one PodGroup for each Job that names the template, so this Job's gang never has {min_count} Pods and stays Pending (for one gang over several Jobs, the parent must make that PodGroup and set the Pods' schedulingGroup)",
                parent.name
            ),
        );
    }
}

/// `+k8s:update=NoSet,NoUnset` on `spec.scheduling`, and the group spec's own update rules
/// (the variant is frozen, only `gang.minCount` may change; `disruptionMode` is immutable).
fn check_update(job: &BatchJob, old: &BatchJob, v: &mut Verdict) {
    let path = job.spec_path().child("scheduling");
    match (job.group_spec(), old.group_spec()) {
        (Some(new), Some(old)) => check_spec_update(&new, &old, PolicyUpdate::Variant, v),
        (Some(_), None) => v.deny(POLICY_IMMUTABLE, FieldError::forbidden(path, "field cannot be set once created")),
        (None, Some(_)) => v.deny(POLICY_IMMUTABLE, FieldError::forbidden(path, "field cannot be cleared once set")),
        (None, None) => {}
    }
}

/// A Job whose parent (a JobSet or a TrainJob) makes the Workload gets none from the Job
/// controller (KEP-5547, KEP-6089): its own `spec.scheduling` does not decide its group.
fn check_parent(job: &BatchJob, v: &mut Verdict) {
    let (Some(parent), Some(_)) = (job.workload_parent(), &job.spec.scheduling) else { return };
    let owner = format!("{} {:?}", parent.kind, parent.name);
    let what = match job.annotation(GROUP_TEMPLATE_ANNOTATION) {
        Some(template) => format!(
            "makes the Workload, and the Job controller makes this Job's PodGroup from the {} Workload's template {template:?} (annotation {GROUP_TEMPLATE_ANNOTATION})",
            parent.kind
        ),
        None => format!(
            "makes both the Workload and the PodGroup of its Jobs (this Job has no {GROUP_TEMPLATE_ANNOTATION} annotation)"
        ),
    };
    v.warn(
        JOB_PARENT,
        job.spec_path().child("scheduling"),
        format!(
            "is not what schedules this Job: it is owned by {owner}, which {what}, so the Job controller makes no Workload from spec.scheduling; set the gang on the {} instead",
            parent.kind
        ),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::cluster::MemoryCluster;

    fn job(spec: Value) -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"}, "spec": spec})
    }

    fn cron_job(spec: Value) -> Value {
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "ml"},
               "spec": {"schedule": "@daily", "jobTemplate": {"spec": spec}}})
    }

    fn run(settings: &Settings, object: Value, old: Option<Value>) -> (Vec<String>, Vec<String>) {
        let op = if old.is_some() { "UPDATE" } else { "CREATE" };
        let request = crate::request::admission_request("u", op, &object, old.as_ref());
        let review = crate::review::review_request(&request).unwrap().unwrap();
        let v = Gang::check(settings, &review, &MemoryCluster::default());
        (v.violations.iter().map(|x| x.to_string()).collect(), v.warning_messages())
    }

    fn violations(object: Value, old: Option<Value>) -> Vec<String> {
        run(&Settings::default(), object, old).0
    }

    fn scheduling(parallelism: i32, scheduling: Value) -> Value {
        json!({"parallelism": parallelism, "scheduling": scheduling, "template": {"spec": {"containers": [{"name": "c"}]}}})
    }

    #[test]
    fn scheduling_next_to_a_scheduling_group_warns_and_is_what_1_38_refuses() {
        let mut spec = scheduling(2, json!({"schedulingPolicy": {"gang": {"minCount": 2}}}));
        spec["template"]["spec"]["schedulingGroup"] = json!({"podGroupName": "g"});
        let warning = |at: &str| {
            format!(
                "{at}.scheduling: is not used: {at}.template.spec.schedulingGroup is set, so the Job controller makes no Workload or PodGroup from spec.scheduling and the Pods join the group the template names (Kubernetes 1.38 refuses the two together) [gang.job-scheduling-group]"
            )
        };
        // The policy's answer is the same on create and update: a warning, never a rejection.
        assert_eq!(run(&Settings::default(), job(spec.clone()), None), (vec![], vec![warning("spec")]));
        assert_eq!(
            run(&Settings::default(), job(spec.clone()), Some(job(spec.clone()))),
            (vec![], vec![warning("spec")])
        );
        assert_eq!(
            run(&Settings::default(), cron_job(spec.clone()), None),
            (vec![], vec![warning("spec.jobTemplate.spec")])
        );
        let decode = |o: Value| {
            BatchJob::decode(BatchKind::from_kind(o["kind"].as_str().unwrap()).unwrap(), &o.to_string()).unwrap()
        };
        let refusal = |o: Value, old: Option<Value>| {
            refused_by_kubernetes_1_38(&decode(o), old.map(decode).as_ref()).map(|e| e.to_string())
        };
        assert_eq!(
            refusal(job(spec.clone()), None).as_deref(),
            Some("spec.scheduling: Forbidden: may not be set when spec.template.spec.schedulingGroup is set")
        );
        assert_eq!(
            refusal(cron_job(spec.clone()), None).as_deref(),
            Some(
                "spec.jobTemplate.spec.scheduling: Forbidden: may not be set when spec.jobTemplate.spec.template.spec.schedulingGroup is set"
            )
        );
        // On update 1.38 keeps an object that already had both; adding the pair is refused.
        assert_eq!(refusal(job(spec.clone()), Some(job(spec.clone()))), None);
        let mut without = spec.clone();
        without["template"]["spec"].as_object_mut().unwrap().remove("schedulingGroup");
        assert!(refusal(job(spec.clone()), Some(job(without.clone()))).is_some());
        assert_eq!(refusal(job(without.clone()), None), None);
        assert_eq!(run(&Settings::default(), job(without), None), (vec![], vec![]));
    }

    #[test]
    fn a_job_without_scheduling_or_with_a_defaulted_policy_passes() {
        assert_eq!(violations(job(json!({"parallelism": 4})), None), Vec::<String>::new());
        assert_eq!(violations(job(scheduling(4, json!({}))), None), Vec::<String>::new());
        assert_eq!(
            violations(job(scheduling(4, json!({"schedulingPolicy": {"gang": {}}}))), None),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_union_and_min_count_at_the_job_paths() {
        assert_eq!(
            violations(job(scheduling(4, json!({"schedulingPolicy": {}}))), None),
            [
                "spec.scheduling.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang` [gang.policy-union]"
            ]
        );
        // minCount is optional: 0 is a value of its own, not "Required".
        assert_eq!(
            violations(cron_job(scheduling(4, json!({"schedulingPolicy": {"gang": {"minCount": 0}}}))), None),
            [
                "spec.jobTemplate.spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or equal to 1 [gang.min-count]"
            ]
        );
        assert_eq!(
            violations(job(scheduling(4, json!({"schedulingPolicy": {"gang": {"minCount": 8}}}))), None),
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 8: must be less than or equal to spec.parallelism (4) [gang.job-parallelism]"
            ]
        );
        // parallelism defaults to 1.
        assert_eq!(
            violations(job(json!({"scheduling": {"schedulingPolicy": {"gang": {"minCount": 2}}}})), None),
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 2: must be less than or equal to spec.parallelism (1) [gang.job-parallelism]"
            ]
        );
    }

    #[test]
    fn the_gang_fits_the_completions() {
        let mut spec = scheduling(4, json!({"schedulingPolicy": {"gang": {}}}));
        spec["completions"] = json!(2);
        assert_eq!(
            violations(job(spec.clone()), None),
            [
                "spec.parallelism: Invalid value: 4: must be less than or equal to spec.completions (2) (schedulingPolicy.gang.minCount is left out, so the gang's size is the Job's parallelism): the Job controller never runs more Pods at once than it has completions to go, so a larger gang never gets all its Pods and stays Pending [gang.job-completions]"
            ]
        );
        spec["scheduling"]["schedulingPolicy"]["gang"]["minCount"] = json!(2);
        assert_eq!(violations(job(spec.clone()), None), Vec::<String>::new());
        spec["completions"] = json!(0);
        spec["scheduling"]["schedulingPolicy"]["gang"]["minCount"] = json!(3);
        assert_eq!(violations(job(spec), None), Vec::<String>::new(), "a Job of no completions runs no Pods at all");
    }

    #[test]
    fn the_cap_counts_parallelism_when_min_count_is_left_out() {
        let settings = Settings { max_min_count: Some(16), ..Settings::default() };
        let (violations, _) = run(&settings, job(scheduling(64, json!({"schedulingPolicy": {"gang": {}}}))), None);
        assert_eq!(
            violations,
            [
                "spec.parallelism: Invalid value: 64: must be less than or equal to 16 (settings.maxMinCount): with schedulingPolicy.gang.minCount left out, the gang's size is the Job's parallelism [gang.max-min-count]"
            ]
        );
        let basic = job(scheduling(64, json!({"schedulingPolicy": {"basic": {}}})));
        assert_eq!(run(&settings, basic, None).0, Vec::<String>::new());
    }

    #[test]
    fn all_needs_a_gang_even_when_the_policy_is_left_out() {
        assert_eq!(
            violations(job(scheduling(4, json!({"disruptionMode": {"all": {}}}))), None),
            [
                "spec.scheduling.disruptionMode: Invalid value: {\"all\":{}}: schedulingPolicy is left out, so the Job controller makes a basic one, which schedules pods one by one, so the group cannot be disrupted as a whole (use a gang policy or disruptionMode {\"single\": {}}) [gang.disruption-mode-basic]"
            ]
        );
    }

    #[test]
    fn updates_keep_the_scheduling_and_its_variant() {
        let gang = |n: i32| job(scheduling(8, json!({"schedulingPolicy": {"gang": {"minCount": n}}})));
        assert_eq!(violations(gang(6), Some(gang(4))), Vec::<String>::new(), "minCount may change");
        assert_eq!(
            violations(job(scheduling(8, json!({"schedulingPolicy": {"basic": {}}}))), Some(gang(4))),
            [
                "spec.scheduling.schedulingPolicy.basic: Invalid value: {}: field is immutable [gang.policy-immutable]",
                "spec.scheduling.schedulingPolicy.gang: Forbidden: field cannot be cleared once set [gang.policy-immutable]"
            ]
        );
        assert_eq!(
            violations(gang(4), Some(job(json!({"parallelism": 8})))),
            ["spec.scheduling: Forbidden: field cannot be set once created [gang.policy-immutable]"]
        );
        assert_eq!(
            violations(job(scheduling(8, json!({}))), Some(gang(4))),
            ["spec.scheduling.schedulingPolicy: Forbidden: field cannot be cleared once set [gang.policy-immutable]"]
        );
        let single = job(scheduling(
            8,
            json!({"schedulingPolicy": {"gang": {"minCount": 4}}, "disruptionMode": {"single": {}}}),
        ));
        assert_eq!(
            violations(single, Some(gang(4))),
            [
                r#"spec.scheduling.disruptionMode: Invalid value: {"single":{}}: field is immutable [gang.disruption-mode]"#
            ]
        );
        // A CronJob's template shapes only the Jobs to come.
        let cron = |policy: Value| cron_job(scheduling(8, json!({"schedulingPolicy": policy})));
        assert_eq!(violations(cron(json!({"basic": {}})), Some(cron(json!({"gang": {}})))), Vec::<String>::new());
    }

    #[test]
    fn a_parent_that_makes_the_workload_is_named() {
        let mut owned = job(scheduling(4, json!({"schedulingPolicy": {"gang": {}}})));
        owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "train", "uid": "1", "controller": true}]);
        let (violations, warnings) = run(&Settings::default(), owned.clone(), None);
        assert!(violations.is_empty());
        assert_eq!(
            warnings,
            [
                "spec.scheduling: is not what schedules this Job: it is owned by JobSet \"train\", which makes both the Workload and the PodGroup of its Jobs (this Job has no scheduling.k8s.io/group-template-name annotation), so the Job controller makes no Workload from spec.scheduling; set the gang on the JobSet instead [gang.job-parent]"
            ]
        );
        owned["metadata"]["annotations"] = json!({"scheduling.k8s.io/group-template-name": "workers"});
        let (_, warnings) = run(&Settings::default(), owned.clone(), None);
        assert!(
            warnings[0].contains(
                "the Job controller makes this Job's PodGroup from the JobSet Workload's template \"workers\""
            ),
            "{warnings:?}"
        );
        // Not on update, and not without spec.scheduling.
        assert!(run(&Settings::default(), owned.clone(), Some(owned.clone())).1.is_empty());
        owned["spec"].as_object_mut().unwrap().remove("scheduling");
        assert!(run(&Settings::default(), owned, None).1.is_empty());
    }
}

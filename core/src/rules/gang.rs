//! Rule set 1, gang: all-or-nothing scheduling for Workloads, PodGroups, the Pods that join
//! them, and the gang settings of Kubeflow jobs. Ids and catalogue numbers (rules.md) are
//! listed in [`RULES`].

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1alpha2::{PodGroup, Workload};
use serde::Deserialize;

use crate::cluster::{Cluster, Query, get_as};
use crate::engine::RuleSet;
use crate::field::{BadValue, FieldError, Path};
use crate::kubeflow::KubeflowJob;
use crate::names::{self, check};
use crate::review::{Resource, Review};
use crate::rules::RuleInfo;
use crate::scheduling::{GroupOrigin, GroupSpec, group_specs};
use crate::verdict::Verdict;

/// Upstream limits (k8s.io/api scheduling/v1alpha2 and core/v1).
const MAX_POD_GROUP_TEMPLATES: usize = 8;
const HIGHEST_USER_DEFINABLE_PRIORITY: i32 = 1_000_000_000;
const DISRUPTION_MODES: [&str; 2] = ["Pod", "PodGroup"];

pub const TEMPLATES: &str = "gang.workload-templates";
pub const TEMPLATE_NAME: &str = "gang.template-name";
pub const TEMPLATE_UNIQUE: &str = "gang.template-unique";
pub const TEMPLATES_IMMUTABLE: &str = "gang.templates-immutable";
pub const CONTROLLER_REF: &str = "gang.controller-ref";
pub const POLICY_UNION: &str = "gang.policy-union";
pub const MIN_COUNT: &str = "gang.min-count";
pub const MAX_MIN_COUNT: &str = "gang.max-min-count";
pub const POLICY_IMMUTABLE: &str = "gang.policy-immutable";
pub const TEMPLATE_REF: &str = "gang.template-ref";
pub const TEMPLATE_REF_IMMUTABLE: &str = "gang.template-ref-immutable";
pub const TEMPLATE_REF_EXISTS: &str = "gang.template-ref-exists";
pub const TEMPLATE_CONSISTENCY: &str = "gang.template-consistency";
pub const DISRUPTION_MODE: &str = "gang.disruption-mode";
pub const DISRUPTION_MODE_BASIC: &str = "gang.disruption-mode-basic";
pub const PRIORITY_CLASS_NAME: &str = "gang.priority-class-name";
pub const PRIORITY: &str = "gang.priority";
pub const USER_PRIORITY: &str = "gang.user-priority";
pub const SCHEDULING_GROUP: &str = "gang.scheduling-group";
pub const POD_GROUP_EXISTS: &str = "gang.pod-group-exists";
pub const MIN_AVAILABLE: &str = "gang.min-available";
pub const REQUIRE_GANG: &str = "gang.require-gang";
pub const QUEUE_IMMUTABLE: &str = "gang.queue-immutable";
pub const SCHEDULE_TIMEOUT: &str = "gang.schedule-timeout";
pub const SCHEDULER_NAME: &str = "gang.scheduler-name";

/// Every rule of the set, for documentation and the playground.
pub const RULES: &[RuleInfo] = &[
    RuleInfo { id: TEMPLATES, catalogue: "G-02, G-03", summary: "a Workload has 1 to 8 podGroupTemplates" },
    RuleInfo { id: TEMPLATE_NAME, catalogue: "G-04", summary: "template names are DNS labels" },
    RuleInfo { id: TEMPLATE_UNIQUE, catalogue: "G-05", summary: "template names are unique" },
    RuleInfo { id: TEMPLATES_IMMUTABLE, catalogue: "G-06", summary: "podGroupTemplates never change after create" },
    RuleInfo { id: CONTROLLER_REF, catalogue: "G-07", summary: "controllerRef is well formed and immutable" },
    RuleInfo { id: POLICY_UNION, catalogue: "G-10", summary: "exactly one of basic or gang" },
    RuleInfo { id: MIN_COUNT, catalogue: "G-12", summary: "gang.minCount is set and at least 1" },
    RuleInfo {
        id: MAX_MIN_COUNT,
        catalogue: "setting maxMinCount",
        summary: "gang sizes stay under the cluster's cap",
    },
    RuleInfo { id: POLICY_IMMUTABLE, catalogue: "G-14", summary: "a PodGroup's schedulingPolicy is immutable" },
    RuleInfo { id: TEMPLATE_REF, catalogue: "G-16", summary: "podGroupTemplateRef names a Workload and a template" },
    RuleInfo { id: TEMPLATE_REF_IMMUTABLE, catalogue: "G-17", summary: "podGroupTemplateRef is immutable" },
    RuleInfo { id: TEMPLATE_REF_EXISTS, catalogue: "G-18", summary: "the referenced Workload and template exist" },
    RuleInfo { id: TEMPLATE_CONSISTENCY, catalogue: "G-19", summary: "a PodGroup matches its template" },
    RuleInfo { id: DISRUPTION_MODE, catalogue: "G-20", summary: "disruptionMode is Pod or PodGroup, immutable" },
    RuleInfo { id: DISRUPTION_MODE_BASIC, catalogue: "G-21", summary: "disruptionMode PodGroup needs a gang" },
    RuleInfo { id: PRIORITY_CLASS_NAME, catalogue: "G-22", summary: "priorityClassName is a DNS subdomain, immutable" },
    RuleInfo { id: PRIORITY, catalogue: "G-23", summary: "priority is at most 1000000000, immutable" },
    RuleInfo { id: USER_PRIORITY, catalogue: "G-25", summary: "users set priorityClassName, not priority" },
    RuleInfo {
        id: SCHEDULING_GROUP,
        catalogue: "G-32, G-33",
        summary: "a Pod's schedulingGroup names a PodGroup, immutable",
    },
    RuleInfo { id: POD_GROUP_EXISTS, catalogue: "G-34", summary: "warn when a Pod's PodGroup does not exist yet" },
    RuleInfo { id: MIN_AVAILABLE, catalogue: "G-40", summary: "Kubeflow minAvailable fits the job's replicas" },
    RuleInfo {
        id: REQUIRE_GANG,
        catalogue: "setting requireGangForJobsWithAtLeast",
        summary: "large jobs must be gangs",
    },
    RuleInfo { id: QUEUE_IMMUTABLE, catalogue: "G-42", summary: "schedulingPolicy.queue never changes" },
    RuleInfo { id: SCHEDULE_TIMEOUT, catalogue: "G-45", summary: "scheduleTimeoutSeconds is not negative" },
    RuleInfo {
        id: SCHEDULER_NAME,
        catalogue: "G-46",
        summary: "warn when a gang job's template picks its own scheduler",
    },
];

/// Settings of the gang rule set.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    /// Cap on `gang.minCount` and Kubeflow `minAvailable`.
    pub max_min_count: Option<i32>,
    /// Kubeflow jobs with at least this many replicas in total must set `minAvailable`.
    pub require_gang_for_jobs_with_at_least: Option<i32>,
    /// Reject `priority` set by users (G-25).
    pub forbid_user_priority: bool,
    /// Reject, rather than warn, when a cluster lookup fails.
    pub fail_on_lookup_error: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_min_count: None,
            require_gang_for_jobs_with_at_least: None,
            forbid_user_priority: true,
            fail_on_lookup_error: false,
        }
    }
}

pub struct Gang;

impl RuleSet for Gang {
    const NAME: &'static str = "gang";
    type Settings = Settings;

    fn validate_settings(s: &Settings) -> Result<(), String> {
        for (name, value) in
            [("maxMinCount", s.max_min_count), ("requireGangForJobsWithAtLeast", s.require_gang_for_jobs_with_at_least)]
        {
            if let Some(v) = value.filter(|v| *v < 1) {
                return Err(format!("{name}: must be at least 1, got {v}"));
            }
        }
        Ok(())
    }

    fn check(settings: &Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        for group in group_specs(&review.object) {
            check_group_spec(settings, &group, &mut v);
        }
        match (&review.object, &review.old_object) {
            (Resource::Workload(w), old) => {
                check_workload(w, &mut v);
                if let Some(Resource::Workload(old)) = old {
                    check_workload_update(w, old, &mut v);
                }
            }
            (Resource::PodGroup(pg), old) => {
                let ref_ok = check_template_ref(pg, &mut v);
                match old {
                    Some(Resource::PodGroup(old)) => check_pod_group_update(pg, old, &mut v),
                    _ if ref_ok => check_against_template(settings, pg, &review.namespace, cluster, &mut v),
                    _ => {}
                }
            }
            (Resource::Pod(pod), old) => {
                let old = match old {
                    Some(Resource::Pod(old)) => Some(old.as_ref()),
                    _ => None,
                };
                check_pod(settings, pod, old, &review.namespace, cluster, &mut v);
            }
            (Resource::Job(job), old) => {
                check_job(settings, job, &mut v);
                if let Some(Resource::Job(old)) = old {
                    check_job_update(job, old, &mut v);
                }
            }
        }
        v
    }
}

/// G-10, G-12, G-20..G-23, G-25 and the minCount cap: the parts of a group spec shared by
/// PodGroups and Workload templates.
fn check_group_spec(settings: &Settings, g: &GroupSpec, v: &mut Verdict) {
    let policy_path = g.path.child("schedulingPolicy");
    let policy = g.scheduling_policy;
    match (&policy.basic, &policy.gang) {
        (None, None) => {
            v.deny(POLICY_UNION, FieldError::invalid(policy_path.clone(), "", "must specify one of: `basic`, `gang`"))
        }
        (Some(_), Some(_)) => v.deny(
            POLICY_UNION,
            FieldError::invalid(policy_path.clone(), "{basic, gang}", "must specify exactly one of: `basic`, `gang`"),
        ),
        _ => {}
    }
    if let Some(gang) = &policy.gang {
        let path = policy_path.child("gang").child("minCount");
        match gang.min_count {
            0 => v.deny(MIN_COUNT, FieldError::required(path, "")),
            n if n < 1 => v.deny(MIN_COUNT, FieldError::invalid(path, n, "must be greater than or equal to 1")),
            n => {
                if let Some(max) = settings.max_min_count.filter(|max| n > *max) {
                    v.deny(
                        MAX_MIN_COUNT,
                        FieldError::invalid(
                            path,
                            n,
                            format!("must be less than or equal to {max} (settings.maxMinCount)"),
                        ),
                    );
                }
            }
        }
    }

    if let Some(mode) = g.disruption_mode {
        if !DISRUPTION_MODES.contains(&mode.as_str()) {
            v.deny(DISRUPTION_MODE, FieldError::not_supported(g.path.child("disruptionMode"), mode, &DISRUPTION_MODES));
        } else if mode == "PodGroup" && g.is_basic() {
            v.deny(
                DISRUPTION_MODE_BASIC,
                FieldError::invalid(
                    g.path.child("disruptionMode"),
                    mode,
                    "a basic schedulingPolicy schedules pods one by one, so the group cannot be disrupted as a whole (use a gang policy or disruptionMode \"Pod\")",
                ),
            );
        }
    }

    if let Some(name) = g.priority_class_name {
        v.deny_all(
            PRIORITY_CLASS_NAME,
            check(&g.path.child("priorityClassName"), name, false, names::is_dns1123_subdomain),
        );
    }
    if let Some(priority) = g.priority {
        let path = g.path.child("priority");
        if priority > HIGHEST_USER_DEFINABLE_PRIORITY {
            v.deny(
                PRIORITY,
                FieldError::invalid(
                    path.clone(),
                    priority,
                    format!("must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}"),
                ),
            );
        }
        // Admission computes a PodGroup's priority from its class (or the global default,
        // which also sets the class); a value with no class and not 0 came from a user.
        let user_set = match g.origin {
            GroupOrigin::WorkloadTemplate => true,
            GroupOrigin::PodGroup => g.priority_class_name.is_none_or(|c| c.is_empty()) && priority != 0,
        };
        if settings.forbid_user_priority && user_set {
            v.deny(
                USER_PRIORITY,
                FieldError::forbidden(
                    path,
                    "set priorityClassName instead (the priority is computed from the class at admission)",
                ),
            );
        }
    }
}

/// G-02..G-05, G-07 (shape).
fn check_workload(w: &Workload, v: &mut Verdict) {
    let path = Path::new("spec").child("podGroupTemplates");
    let templates = &w.spec.pod_group_templates;
    if templates.is_empty() {
        v.deny(TEMPLATES, FieldError::required(path.clone(), ""));
    } else if templates.len() > MAX_POD_GROUP_TEMPLATES {
        v.deny(TEMPLATES, FieldError::too_many(path.clone(), templates.len(), MAX_POD_GROUP_TEMPLATES));
    }
    // Past the maximum the one error above stands for the whole list, as in the apiserver.
    let mut seen = std::collections::HashSet::new();
    for (i, t) in templates.iter().enumerate().take_while(|_| templates.len() <= MAX_POD_GROUP_TEMPLATES) {
        v.deny_all(TEMPLATE_NAME, check(&path.index(i).child("name"), &t.name, true, names::is_dns1123_label));
        if !seen.insert(t.name.as_str()) {
            v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(path.index(i), BadValue::of(t)));
        }
    }
    if let Some(r) = &w.spec.controller_ref {
        let path = Path::new("spec").child("controllerRef");
        v.deny_all(CONTROLLER_REF, check(&path.child("kind"), &r.kind, true, names::is_path_segment_name));
        v.deny_all(CONTROLLER_REF, check(&path.child("name"), &r.name, true, names::is_path_segment_name));
        if let Some(group) = &r.api_group {
            v.deny_all(CONTROLLER_REF, check(&path.child("apiGroup"), group, false, names::is_dns1123_subdomain));
        }
    }
}

/// G-06, G-07 (immutability).
fn check_workload_update(w: &Workload, old: &Workload, v: &mut Verdict) {
    if w.spec.pod_group_templates != old.spec.pod_group_templates {
        v.deny(TEMPLATES_IMMUTABLE, FieldError::immutable(Path::new("spec").child("podGroupTemplates")));
    }
    if w.spec.controller_ref != old.spec.controller_ref {
        v.deny(CONTROLLER_REF, FieldError::immutable(Path::new("spec").child("controllerRef")));
    }
}

/// G-16. Returns whether the reference (if any) is well formed, so it can be looked up.
fn check_template_ref(pg: &PodGroup, v: &mut Verdict) -> bool {
    let Some(r) = &pg.spec.pod_group_template_ref else { return true };
    let path = Path::new("spec").child("podGroupTemplateRef");
    let Some(w) = &r.workload else {
        v.deny(TEMPLATE_REF, FieldError::invalid(path, "", "must specify one of: `workload`"));
        return false;
    };
    let path = path.child("workload");
    let mut errors = check(&path.child("workloadName"), &w.workload_name, true, names::is_dns1123_subdomain);
    errors.extend(check(
        &path.child("podGroupTemplateName"),
        &w.pod_group_template_name,
        true,
        names::is_dns1123_label,
    ));
    let ok = errors.is_empty();
    v.deny_all(TEMPLATE_REF, errors);
    ok
}

/// G-14, G-17, G-20, G-22, G-23 (immutability of a PodGroup's spec fields).
fn check_pod_group_update(pg: &PodGroup, old: &PodGroup, v: &mut Verdict) {
    let (new, old) = (&pg.spec, &old.spec);
    let spec = Path::new("spec");
    if new.scheduling_policy != old.scheduling_policy {
        v.deny(POLICY_IMMUTABLE, FieldError::immutable(spec.child("schedulingPolicy")));
    }
    if new.pod_group_template_ref != old.pod_group_template_ref {
        v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("podGroupTemplateRef")));
    }
    if new.disruption_mode != old.disruption_mode {
        v.deny(DISRUPTION_MODE, FieldError::immutable(spec.child("disruptionMode")));
    }
    if new.priority_class_name != old.priority_class_name {
        v.deny(PRIORITY_CLASS_NAME, FieldError::immutable(spec.child("priorityClassName")));
    }
    if new.priority != old.priority {
        v.deny(PRIORITY, FieldError::immutable(spec.child("priority")));
    }
}

/// G-18, G-19: on create, the referenced Workload and template exist and the PodGroup
/// copies the template's scheduling policy, disruption mode and priority class.
fn check_against_template(settings: &Settings, pg: &PodGroup, namespace: &str, cluster: &dyn Cluster, v: &mut Verdict) {
    let Some(r) = pg.spec.pod_group_template_ref.as_ref().and_then(|r| r.workload.as_ref()) else { return };
    let path = Path::new("spec").child("podGroupTemplateRef").child("workload");
    let query = Query {
        api_version: "scheduling.k8s.io/v1alpha2",
        kind: "Workload",
        namespace: Some(namespace),
        field_masks: &["spec.podGroupTemplates"],
    };
    let workload: Workload = match get_as(cluster, &query, &r.workload_name) {
        Ok(Some(w)) => w,
        Ok(None) => {
            let detail = format!("Workload {:?} not found in namespace {namespace:?}", r.workload_name);
            v.deny(TEMPLATE_REF_EXISTS, FieldError::not_found(path.child("workloadName"), &r.workload_name, detail));
            return;
        }
        Err(e) => {
            let what = format!("Workload {:?}", r.workload_name);
            v.lookup_failed(TEMPLATE_REF_EXISTS, path.child("workloadName"), &what, &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let Some(template) = workload.spec.pod_group_templates.iter().find(|t| t.name == r.pod_group_template_name) else {
        let names: Vec<String> = workload.spec.pod_group_templates.iter().map(|t| format!("{:?}", t.name)).collect();
        let detail = format!("Workload {:?} has no such template (it has {})", r.workload_name, names.join(", "));
        v.deny(
            TEMPLATE_REF_EXISTS,
            FieldError::not_found(path.child("podGroupTemplateName"), &r.pod_group_template_name, detail),
        );
        return;
    };
    let source = format!("Workload {:?} template {:?}", r.workload_name, template.name);
    let spec = Path::new("spec");
    if pg.spec.scheduling_policy != template.scheduling_policy {
        v.deny(
            TEMPLATE_CONSISTENCY,
            FieldError::invalid(
                spec.child("schedulingPolicy"),
                BadValue::of(&pg.spec.scheduling_policy),
                format!("must equal the schedulingPolicy of {source}: {}", BadValue::of(&template.scheduling_policy)),
            ),
        );
    }
    // The template may leave these to defaulting; only a value it sets must be copied.
    for (field, group_value, template_value) in [
        ("disruptionMode", &pg.spec.disruption_mode, &template.disruption_mode),
        ("priorityClassName", &pg.spec.priority_class_name, &template.priority_class_name),
    ] {
        if let Some(want) = template_value.as_ref().filter(|w| group_value.as_ref() != Some(*w)) {
            v.deny(
                TEMPLATE_CONSISTENCY,
                FieldError::invalid(
                    spec.child(field),
                    BadValue::of(group_value),
                    format!("must equal the {field} of {source}: {want:?}"),
                ),
            );
        }
    }
}

/// G-32, G-33, G-34: a Pod joining a PodGroup.
fn check_pod(
    settings: &Settings,
    pod: &Pod,
    old: Option<&Pod>,
    namespace: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let spec_path = Path::new("spec").child("schedulingGroup");
    let group = pod.spec.as_ref().and_then(|s| s.scheduling_group.as_ref());
    if let Some(old) = old {
        let old_group = old.spec.as_ref().and_then(|s| s.scheduling_group.as_ref());
        if group != old_group {
            v.deny(SCHEDULING_GROUP, FieldError::immutable(spec_path.clone()));
        }
        return; // the group was checked when the Pod was created
    }
    let Some(group) = group else { return };
    let Some(name) = group.pod_group_name.as_ref() else {
        v.deny(SCHEDULING_GROUP, FieldError::invalid(spec_path, "", "must specify one of: `podGroupName`"));
        return;
    };
    let path = spec_path.child("podGroupName");
    let errors = check(&path, name, true, names::is_dns1123_subdomain);
    if !errors.is_empty() {
        v.deny_all(SCHEDULING_GROUP, errors);
        return;
    }
    let query = Query {
        api_version: "scheduling.k8s.io/v1alpha2",
        kind: "PodGroup",
        namespace: Some(namespace),
        field_masks: &["metadata.name"],
    };
    match cluster.get(&query, name) {
        Ok(Some(_)) => {}
        Ok(None) => v.warn(
            POD_GROUP_EXISTS,
            path,
            format!("PodGroup {name:?} does not exist in namespace {namespace:?} yet; the Pod stays Pending until it is created"),
        ),
        Err(e) => v.lookup_failed(POD_GROUP_EXISTS, path, &format!("PodGroup {name:?}"), &e, settings.fail_on_lookup_error),
    }
}

fn scheduling_policy_path() -> Path {
    Path::new("spec").child("runPolicy").child("schedulingPolicy")
}

/// G-40, G-45, G-46 and the gang settings, for Kubeflow jobs.
fn check_job(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
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
    for (replica_type, spec) in job.replicas() {
        let Some(name) = spec.template.spec.as_ref().and_then(|s| s.scheduler_name.as_ref()).filter(|n| !n.is_empty())
        else {
            continue;
        };
        v.warn(
            SCHEDULER_NAME,
            map.key(replica_type).child("template").child("spec").child("schedulerName"),
            format!("{name:?} is kept instead of the gang scheduler, so these pods are not gang-scheduled unless {name:?} is that scheduler"),
        );
    }
}

/// "Master 1 + Worker 4 = 5", for messages.
fn replica_summary(job: &KubeflowJob) -> String {
    let parts: Vec<String> = job.replicas().map(|(t, s)| format!("{t} {}", job.replica_count(t, s))).collect();
    if parts.is_empty() {
        "none: the job has no replica specs".to_string()
    } else {
        format!("{} = {}", parts.join(" + "), job.total_replicas())
    }
}

/// For elastic PyTorch/Paddle jobs, the pods the job is guaranteed to run: the elastic
/// minimum of Workers plus the non-Worker replicas.
fn elastic_minimum(job: &KubeflowJob) -> Option<i64> {
    let min = job.elastic_bounds()?.min_replicas?;
    let others: i64 =
        job.replicas().filter(|(t, _)| t.as_str() != "Worker").map(|(t, s)| i64::from(job.replica_count(t, s))).sum();
    Some(i64::from(min) + others)
}

/// G-42: `queue` never changes, including being added or removed.
fn check_job_update(job: &KubeflowJob, old: &KubeflowJob, v: &mut Verdict) {
    let queue = |j: &KubeflowJob| j.scheduling_policy().and_then(|s| s.queue.clone());
    let (new_q, old_q) = (queue(job), queue(old));
    if new_q != old_q {
        let path = scheduling_policy_path().child("queue");
        let detail = format!("spec.runPolicy.schedulingPolicy.queue is immutable (was {})", BadValue::of(&old_q));
        v.deny(QUEUE_IMMUTABLE, FieldError::invalid(path, BadValue::of(&new_q), detail));
    }
}

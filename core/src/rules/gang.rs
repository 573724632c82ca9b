//! Rule set 1, gang: all-or-nothing scheduling for Workloads, PodGroups, CompositePodGroups,
//! the Pods that join them, and the gang settings of Kubeflow jobs. Ids and catalogue numbers
//! (rules.md) are listed in [`RULES`]; where a rule differs between Kubernetes 1.36
//! (`v1alpha2`) and 1.37 (`v1beta1`/`v1alpha3`) its summary says so.

use std::collections::{HashMap, HashSet};

use k8s_openapi_137::api::scheduling::v1beta1 as b1;
use serde::{Deserialize, Serialize};

use crate::cluster::{Cluster, LookupError, Query};
use crate::engine::RuleSet;
use crate::field::{BadValue, FieldError, Path};
use crate::kubeflow::KubeflowJob;
use crate::names::{self, check};
use crate::pod::Pod;
use crate::review::{Resource, Review};
use crate::rules::RuleInfo;
use crate::scheduling::{
    self, COMPOSITE_VERSION, CompositePodGroup, Disruption, GroupOrigin, GroupSpec, PodGroup, TemplateRef, Version,
    Workload, Workload136, Workload137, group_specs,
};
use crate::verdict::Verdict;

/// Upstream limits (k8s.io/api scheduling and core/v1).
const MAX_TEMPLATES_PER_LIST: usize = 8;
const MAX_TREE_DEPTH: usize = 4;
const HIGHEST_USER_DEFINABLE_PRIORITY: i32 = 1_000_000_000;
const DISRUPTION_MODES: [&str; 2] = ["Pod", "PodGroup"];
const PREEMPTION_POLICIES: [&str; 2] = ["Never", "PreemptLowerPriority"];

pub const TEMPLATES: &str = "gang.workload-templates";
pub const TEMPLATE_NAME: &str = "gang.template-name";
pub const TEMPLATE_UNIQUE: &str = "gang.template-unique";
pub const TEMPLATE_DEPTH: &str = "gang.template-depth";
pub const COMPOSITE_CHILDREN: &str = "gang.composite-children";
pub const WORKLOAD_PRIORITY: &str = "gang.workload-priority";
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
pub const PARENT_GROUP: &str = "gang.parent-group";
pub const HIERARCHY: &str = "gang.hierarchy";
pub const COMPOSITE_NAME: &str = "gang.composite-name";
pub const DISRUPTION_MODE: &str = "gang.disruption-mode";
pub const DISRUPTION_MODE_BASIC: &str = "gang.disruption-mode-basic";
pub const PRIORITY_CLASS_NAME: &str = "gang.priority-class-name";
pub const PRIORITY: &str = "gang.priority";
pub const USER_PRIORITY: &str = "gang.user-priority";
pub const PREEMPTION_POLICY: &str = "gang.preemption-policy";
pub const SCHEDULING_GROUP: &str = "gang.scheduling-group";
pub const POD_GROUP_EXISTS: &str = "gang.pod-group-exists";
pub const MIN_AVAILABLE: &str = "gang.min-available";
pub const REQUIRE_GANG: &str = "gang.require-gang";
pub const QUEUE_IMMUTABLE: &str = "gang.queue-immutable";
pub const SCHEDULE_TIMEOUT: &str = "gang.schedule-timeout";
pub const SCHEDULER_NAME: &str = "gang.scheduler-name";

/// Every rule of the set, for documentation and the playground.
pub const RULES: &[RuleInfo] = &[
    RuleInfo {
        id: TEMPLATES,
        catalogue: "G-02, G-03, N1",
        summary: "1.36: a Workload has 1 to 8 podGroupTemplates; 1.37: exactly one of podGroupTemplates or compositePodGroupTemplates, at most 8 per list at every level",
    },
    RuleInfo { id: TEMPLATE_NAME, catalogue: "G-04", summary: "template names (at every level) are DNS labels" },
    RuleInfo {
        id: TEMPLATE_UNIQUE,
        catalogue: "G-05, N2",
        summary: "template names are unique in their list; 1.37: across the whole template tree",
    },
    RuleInfo { id: TEMPLATE_DEPTH, catalogue: "N2", summary: "1.37: the template tree is at most 4 levels deep" },
    RuleInfo {
        id: COMPOSITE_CHILDREN,
        catalogue: "N2",
        summary: "1.37: every CompositePodGroupTemplate has at least one child template",
    },
    RuleInfo {
        id: WORKLOAD_PRIORITY,
        catalogue: "N3",
        summary: "1.37: all templates of a Workload share one priorityClassName and priority",
    },
    RuleInfo {
        id: TEMPLATES_IMMUTABLE,
        catalogue: "G-06, N8",
        summary: "1.36: podGroupTemplates never change after create; 1.37: templates are never added or removed",
    },
    RuleInfo { id: CONTROLLER_REF, catalogue: "G-07", summary: "controllerRef is well formed and immutable" },
    RuleInfo { id: POLICY_UNION, catalogue: "G-10", summary: "exactly one of basic or gang" },
    RuleInfo {
        id: MIN_COUNT,
        catalogue: "G-12, N2",
        summary: "gang.minCount (1.37 composites: gang.minGroupCount) is set and at least 1",
    },
    RuleInfo {
        id: MAX_MIN_COUNT,
        catalogue: "setting maxMinCount",
        summary: "gang sizes stay under the cluster's cap",
    },
    RuleInfo {
        id: POLICY_IMMUTABLE,
        catalogue: "G-14, N8",
        summary: "1.36 PodGroup and 1.37 CompositePodGroup: schedulingPolicy is immutable; 1.37 PodGroup and templates: basic is immutable and gang cannot be set or cleared (minCount may change)",
    },
    RuleInfo {
        id: TEMPLATE_REF,
        catalogue: "G-16, N6",
        summary: "1.36 podGroupTemplateRef / 1.37 workloadRef names a Workload and a template (required on a CompositePodGroup)",
    },
    RuleInfo { id: TEMPLATE_REF_IMMUTABLE, catalogue: "G-17", summary: "the template reference is immutable" },
    RuleInfo {
        id: TEMPLATE_REF_EXISTS,
        catalogue: "G-18",
        summary: "the referenced Workload and template exist (1.37: at any depth, and the Workload is not being deleted)",
    },
    RuleInfo {
        id: TEMPLATE_CONSISTENCY,
        catalogue: "G-19",
        summary: "on create a group matches its template (1.36: policy, disruption mode, priority class; 1.37 also priority, preemption policy and constraints)",
    },
    RuleInfo {
        id: PARENT_GROUP,
        catalogue: "N5",
        summary: "1.37: parentCompositePodGroupName is a DNS subdomain, immutable, and needs workloadRef",
    },
    RuleInfo {
        id: HIERARCHY,
        catalogue: "N7",
        summary: "1.37: a group's parent CompositePodGroup exists, has the same Workload, is made from the parent template, and has the same priority",
    },
    RuleInfo { id: COMPOSITE_NAME, catalogue: "N6", summary: "1.37: a CompositePodGroup's name is a DNS subdomain" },
    RuleInfo {
        id: DISRUPTION_MODE,
        catalogue: "G-20",
        summary: "1.36: disruptionMode is Pod or PodGroup; 1.37: exactly one of single or all; immutable",
    },
    RuleInfo {
        id: DISRUPTION_MODE_BASIC,
        catalogue: "G-21",
        summary: "disruptionMode PodGroup (1.37: all) needs a gang",
    },
    RuleInfo { id: PRIORITY_CLASS_NAME, catalogue: "G-22", summary: "priorityClassName is a DNS subdomain, immutable" },
    RuleInfo { id: PRIORITY, catalogue: "G-23", summary: "priority is at most 1000000000, immutable" },
    RuleInfo { id: USER_PRIORITY, catalogue: "G-25", summary: "users set priorityClassName, not priority" },
    RuleInfo {
        id: PREEMPTION_POLICY,
        catalogue: "N4",
        summary: "1.37: preemptionPolicy is PreemptLowerPriority or Never, immutable",
    },
    RuleInfo {
        id: SCHEDULING_GROUP,
        catalogue: "G-32, G-33",
        summary: "a Pod's schedulingGroup names a PodGroup, immutable",
    },
    RuleInfo {
        id: POD_GROUP_EXISTS,
        catalogue: "G-34",
        summary: "warn when a Pod's PodGroup does not exist yet (looked up through schedulingApiVersions)",
    },
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
    /// The `scheduling.k8s.io` versions a Pod's PodGroup is looked up in, in order.
    pub scheduling_api_versions: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_min_count: None,
            require_gang_for_jobs_with_at_least: None,
            forbid_user_priority: true,
            fail_on_lookup_error: false,
            scheduling_api_versions: scheduling::default_lookup_versions(),
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
        scheduling::parse_lookup_versions(&s.scheduling_api_versions).map(|_| ())
    }

    fn check(settings: &Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        let groups = group_specs(&review.object);
        for group in &groups {
            check_group_spec(settings, group, &mut v);
        }
        let ctx = Context { settings, namespace: &review.namespace, cluster };
        match (&review.object, &review.old_object) {
            (Resource::Workload(w), old) => {
                let old = match old {
                    Some(Resource::Workload(old)) => Some(old.as_ref()),
                    _ => None,
                };
                check_workload(w, old, &groups, &mut v);
            }
            (Resource::PodGroup(pg), old) => {
                let ref_ok = check_pod_group(pg, &mut v);
                match (old, review.scheduling_version()) {
                    (Some(Resource::PodGroup(old)), _) => check_pod_group_update(pg, old, &mut v),
                    (_, Some(version)) if ref_ok => {
                        if let Some(r) = pg.template_ref() {
                            let group = Group { spec: &groups[0], template_ref: r, parent: parent_of(pg) };
                            check_against_template(&ctx, version, &group, &mut v);
                        }
                    }
                    _ => {}
                }
            }
            (Resource::CompositePodGroup(cpg), old) => {
                let ref_ok = check_composite_pod_group(cpg, &mut v);
                match old {
                    Some(Resource::CompositePodGroup(old)) => check_composite_update(cpg, old, &mut v),
                    _ if ref_ok => {
                        if let Some(r) = cpg.template_ref() {
                            let parent = cpg.spec.parent_composite_pod_group_name.as_deref().filter(|p| !p.is_empty());
                            let group = Group { spec: &groups[0], template_ref: r, parent };
                            check_against_template(&ctx, COMPOSITE_VERSION, &group, &mut v);
                        }
                    }
                    _ => {}
                }
            }
            (Resource::Pod(pod), old) => {
                let old = match old {
                    Some(Resource::Pod(old)) => Some(old.as_ref()),
                    _ => None,
                };
                check_pod(&ctx, pod, old, &mut v);
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

/// What the context-aware rules need besides the object.
struct Context<'a> {
    settings: &'a Settings,
    namespace: &'a str,
    cluster: &'a dyn Cluster,
}

/// G-10, G-12, G-20..G-23, G-25, N4 and the minCount cap: the parts of a group spec shared
/// by every holder (PodGroups, CompositePodGroups and Workload templates at any depth).
fn check_group_spec(settings: &Settings, g: &GroupSpec, v: &mut Verdict) {
    let policy_path = g.path.child("schedulingPolicy");
    let policy = g.scheduling_policy;
    let gang_size = policy.gang_size();
    match (policy.has_basic(), gang_size.is_some()) {
        (false, false) => {
            v.deny(POLICY_UNION, FieldError::invalid(policy_path.clone(), "", "must specify one of: `basic`, `gang`"))
        }
        (true, true) => v.deny(
            POLICY_UNION,
            FieldError::invalid(policy_path.clone(), "{basic, gang}", "must specify exactly one of: `basic`, `gang`"),
        ),
        _ => {}
    }
    if let Some(size) = gang_size {
        let path = policy_path.child("gang").child(policy.gang_size_field());
        match size {
            0 => v.deny(MIN_COUNT, FieldError::required(path, "")),
            n if n < 1 => v.deny(MIN_COUNT, FieldError::invalid(path, n, "must be greater than or equal to 1")),
            n => {
                if let Some(max) = settings.max_min_count.filter(|max| n > *max && !g.origin.is_composite()) {
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

    let mode_path = g.path.child("disruptionMode");
    let whole_group = match g.disruption_mode {
        None => false,
        Some(Disruption::V1alpha2(mode)) if !DISRUPTION_MODES.contains(&mode) => {
            v.deny(DISRUPTION_MODE, FieldError::not_supported(mode_path.clone(), mode, &DISRUPTION_MODES));
            false
        }
        Some(Disruption::V1alpha2(mode)) => mode == "PodGroup",
        Some(Disruption::Union { single: false, all: false }) => {
            v.deny(DISRUPTION_MODE, FieldError::invalid(mode_path.clone(), "", "must specify one of: `single`, `all`"));
            false
        }
        Some(Disruption::Union { single: true, all: true }) => {
            v.deny(
                DISRUPTION_MODE,
                FieldError::invalid(mode_path.clone(), "{single, all}", "must specify exactly one of: `single`, `all`"),
            );
            false
        }
        Some(Disruption::Union { all, .. }) => all,
    };
    if let Some(mode) = g.disruption_mode.filter(|_| whole_group && g.is_basic()) {
        let (members, instead) = match mode {
            Disruption::V1alpha2(_) => ("pods", "disruptionMode \"Pod\""),
            Disruption::Union { .. } if g.origin.is_composite() => ("child groups", "disruptionMode {\"single\": {}}"),
            Disruption::Union { .. } => ("pods", "disruptionMode {\"single\": {}}"),
        };
        v.deny(
            DISRUPTION_MODE_BASIC,
            FieldError::invalid(
                mode_path,
                BadValue::of(&mode),
                format!("a basic schedulingPolicy schedules {members} one by one, so the group cannot be disrupted as a whole (use a gang policy or {instead})"),
            ),
        );
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
        // Admission computes a group's priority from its class (or the global default,
        // which also sets the class); a value with no class and not 0 came from a user.
        let user_set = g.origin.is_template() || (g.priority_class_name.is_none_or(|c| c.is_empty()) && priority != 0);
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
    if let Some(p) = g.preemption_policy.filter(|p| !PREEMPTION_POLICIES.contains(&p.as_str())) {
        v.deny(PREEMPTION_POLICY, FieldError::not_supported(g.path.child("preemptionPolicy"), p, &PREEMPTION_POLICIES));
    }
}

/// G-07 (shape): `spec.controllerRef`, the same in every version.
fn check_controller_ref(kind: &str, name: &str, api_group: Option<&String>, v: &mut Verdict) {
    let path = Path::new("spec").child("controllerRef");
    v.deny_all(CONTROLLER_REF, check(&path.child("kind"), kind, true, names::is_path_segment_name));
    v.deny_all(CONTROLLER_REF, check(&path.child("name"), name, true, names::is_path_segment_name));
    if let Some(group) = api_group {
        v.deny_all(CONTROLLER_REF, check(&path.child("apiGroup"), group, false, names::is_dns1123_subdomain));
    }
}

/// The Workload rules of each version.
fn check_workload(w: &Workload, old: Option<&Workload>, groups: &[GroupSpec], v: &mut Verdict) {
    match (w, old) {
        (Workload::V1alpha2(w), old) => {
            check_workload_136(w, v);
            if let Some(Workload::V1alpha2(old)) = old {
                if w.spec.pod_group_templates != old.spec.pod_group_templates {
                    v.deny(TEMPLATES_IMMUTABLE, FieldError::immutable(Path::new("spec").child("podGroupTemplates")));
                }
                if w.spec.controller_ref != old.spec.controller_ref {
                    v.deny(CONTROLLER_REF, FieldError::immutable(Path::new("spec").child("controllerRef")));
                }
            }
        }
        (Workload::V137(w), old) => {
            check_workload_137(w, groups, v);
            if let Some(old) = old {
                check_workload_update_137(w, groups, old, v);
            }
        }
    }
}

/// G-02..G-05, G-07 (shape) for 1.36.
fn check_workload_136(w: &Workload136, v: &mut Verdict) {
    let path = Path::new("spec").child("podGroupTemplates");
    let templates = &w.spec.pod_group_templates;
    if templates.is_empty() {
        v.deny(TEMPLATES, FieldError::required(path.clone(), ""));
    } else if templates.len() > MAX_TEMPLATES_PER_LIST {
        v.deny(TEMPLATES, FieldError::too_many(path.clone(), templates.len(), MAX_TEMPLATES_PER_LIST));
    }
    // Past the maximum the one error above stands for the whole list, as in the apiserver.
    let mut seen = HashSet::with_capacity(MAX_TEMPLATES_PER_LIST);
    for (i, t) in templates.within_maximum().iter().enumerate() {
        v.deny_all(TEMPLATE_NAME, check(&path.index(i).child("name"), &t.name, true, names::is_dns1123_label));
        if !seen.insert(t.name.as_str()) {
            v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(path.index(i), BadValue::of(t)));
        }
    }
    if let Some(r) = &w.spec.controller_ref {
        check_controller_ref(&r.kind, &r.name, r.api_group.as_ref(), v);
    }
}

/// Template names seen so far in the whole tree (1.37 names are unique across it).
type SeenNames<'a> = HashSet<&'a str>;

/// N1, N2, N3, G-04, G-05, G-07 (shape) for 1.37.
fn check_workload_137(w: &Workload137, groups: &[GroupSpec], v: &mut Verdict) {
    let spec = Path::new("spec");
    let s = &w.spec;
    let has_groups = s.pod_group_templates.as_ref().is_some_and(|l| !l.is_empty());
    let has_composites = s.composite_pod_group_templates.as_ref().is_some_and(|l| !l.is_empty());
    match (has_groups, has_composites) {
        (false, false) => v.deny(
            TEMPLATES,
            FieldError::invalid(
                spec.clone(),
                "",
                "must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`",
            ),
        ),
        (true, true) => v.deny(
            TEMPLATES,
            FieldError::invalid(
                spec.clone(),
                "{podGroupTemplates, compositePodGroupTemplates}",
                "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`",
            ),
        ),
        _ => {}
    }
    let mut seen = SeenNames::new();
    check_template_lists(
        s.pod_group_templates.as_deref(),
        s.composite_pod_group_templates.as_deref(),
        &spec,
        1,
        true,
        &mut seen,
        v,
    );
    if let Some(r) = &s.controller_ref {
        check_controller_ref(&r.kind, &r.name, r.api_group.as_ref(), v);
    }
    // HW (c): one priority configuration for the whole Workload; a missing value counts as
    // a value of its own.
    if let Some(first) = groups.first()
        && groups.iter().any(|g| (g.priority_class_name, g.priority) != (first.priority_class_name, first.priority))
    {
        let detail = if has_composites {
            "all priority and priorityClassName values must be identical, detected multiple values"
        } else {
            "detected multiple priority configurations"
        };
        v.deny(WORKLOAD_PRIORITY, FieldError::invalid(spec, BadValue::of(&serde_json::Value::Null), detail));
    }
}

/// The per-list and per-name rules for one level of a 1.37 template tree (and, below it,
/// every deeper level): at most 8 per list, DNS-label names unique in the list and in the
/// tree, composites with children and no deeper than [`MAX_TREE_DEPTH`].
///
/// `declarative` is false below a list that is over its maximum: the apiserver's
/// declarative `maxItems` short-circuits every other declarative check of that list and of
/// what it holds, while its hand-written checks (names unique across the tree, children,
/// depth) still walk the whole tree.
fn check_template_lists<'a>(
    groups: Option<&'a [b1::PodGroupTemplate]>,
    composites: Option<&'a [b1::CompositePodGroupTemplate]>,
    parent: &Path,
    depth: usize,
    declarative: bool,
    seen: &mut SeenNames<'a>,
    v: &mut Verdict,
) {
    let groups = groups.unwrap_or_default();
    check_names(groups, |t| t.name.as_str(), &parent.child("podGroupTemplates"), declarative, seen, v);
    let list = parent.child("compositePodGroupTemplates");
    let composites = composites.unwrap_or_default();
    let declarative = check_names(composites, |t| t.name.as_str(), &list, declarative, seen, v);
    for (i, t) in composites.iter().enumerate() {
        let path = list.index(i);
        let children = (t.pod_group_templates.as_deref().unwrap_or_default().len())
            + t.composite_pod_group_templates.as_deref().unwrap_or_default().len();
        if children == 0 {
            v.deny(
                COMPOSITE_CHILDREN,
                FieldError::invalid(
                    path.clone(),
                    &t.name,
                    "must have at least one child PodGroupTemplate or CompositePodGroupTemplate",
                ),
            );
        } else if depth == MAX_TREE_DEPTH {
            v.deny(
                TEMPLATE_DEPTH,
                FieldError::invalid(
                    path.clone(),
                    &t.name,
                    format!("maximum template hierarchy depth is {MAX_TREE_DEPTH}"),
                ),
            );
        }
        check_template_lists(
            t.pod_group_templates.as_deref(),
            t.composite_pod_group_templates.as_deref(),
            &path,
            depth + 1,
            declarative,
            seen,
            v,
        );
    }
}

/// One list's names: at most 8 entries, DNS labels, unique in the list (reported on the
/// item, as the apiserver's list-map check does) and across the tree (on the name). Past
/// the maximum, or with `declarative` false, only the tree-wide check runs (see
/// [`check_template_lists`]); returns whether the declarative checks ran.
fn check_names<'a, T: Serialize>(
    items: &'a [T],
    name_of: impl Fn(&'a T) -> &'a str,
    list: &Path,
    declarative: bool,
    seen: &mut SeenNames<'a>,
    v: &mut Verdict,
) -> bool {
    let declarative = declarative && {
        let within = items.len() <= MAX_TEMPLATES_PER_LIST;
        if !within {
            v.deny(TEMPLATES, FieldError::too_many(list.clone(), items.len(), MAX_TEMPLATES_PER_LIST));
        }
        within
    };
    let mut in_list = HashSet::with_capacity(items.len().min(MAX_TEMPLATES_PER_LIST));
    for (i, item) in items.iter().enumerate() {
        let name = name_of(item);
        if declarative {
            v.deny_all(TEMPLATE_NAME, check(&list.index(i).child("name"), name, true, names::is_dns1123_label));
            if !in_list.insert(name) {
                v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(list.index(i), BadValue::of(item)));
                continue;
            }
        }
        if !seen.insert(name) {
            v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(list.index(i).child("name"), name));
        }
    }
    declarative
}

/// The path of the list an item path sits in: `spec.podGroupTemplates[2]` → `spec.podGroupTemplates`.
fn list_of(item: &Path) -> Path {
    let s = item.as_str();
    Path::new(s.rfind('[').map_or(s, |i| &s[..i]))
}

/// N8 and the per-field update rules of 1.37 templates: none added or removed (templates
/// are matched by their names from the top), each field as mutable as upstream allows.
fn check_workload_update_137(w: &Workload137, groups: &[GroupSpec], old: &Workload, v: &mut Verdict) {
    let spec = Path::new("spec");
    let (old_groups, old_controller) = match old {
        Workload::V137(old) => (old.group_specs(), old.spec.controller_ref.as_ref()),
        // A version switch does not happen within one object; nothing to compare.
        Workload::V1alpha2(_) => return,
    };
    if w.spec.controller_ref.as_ref() != old_controller {
        v.deny(CONTROLLER_REF, FieldError::immutable(spec.child("controllerRef")));
    }
    let old_by_key: HashMap<&str, &GroupSpec> = old_groups.iter().map(|g| (g.key.as_str(), g)).collect();
    let new_keys: HashSet<&str> = groups.iter().map(|g| g.key.as_str()).collect();
    for g in groups {
        match old_by_key.get(g.key.as_str()) {
            Some(old) => check_spec_update(g, old, PolicyUpdate::Variant, v),
            // Report the topmost added template only.
            None if g.parent.is_none_or(|p| old_by_key.contains_key(groups[p].key.as_str())) => {
                v.deny(TEMPLATES_IMMUTABLE, FieldError::forbidden(g.path.clone(), "item may not be added"));
            }
            None => {}
        }
    }
    let mut reported = HashSet::new();
    for old in &old_groups {
        let parent_kept = old.parent.is_none_or(|p| new_keys.contains(old_groups[p].key.as_str()));
        if !new_keys.contains(old.key.as_str()) && parent_kept {
            let list = list_of(&old.path);
            if reported.insert(list.as_str().to_string()) {
                v.deny(TEMPLATES_IMMUTABLE, FieldError::forbidden(list, "item may not be removed"));
            }
        }
    }
}

/// How much of `schedulingPolicy` may change on update.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PolicyUpdate {
    /// Nothing (1.36 PodGroups, CompositePodGroups).
    Whole,
    /// `basic` is immutable and `gang` cannot be set or cleared; the gang's size may change
    /// (1.37 PodGroups and templates).
    Variant,
}

/// G-14, G-20, G-22, G-23, N4: the immutable fields of one group spec against its old self.
/// Constraints and claims are the topology and claims sets' business.
fn check_spec_update(new: &GroupSpec, old: &GroupSpec, policy: PolicyUpdate, v: &mut Verdict) {
    let policy_path = new.path.child("schedulingPolicy");
    match policy {
        PolicyUpdate::Whole if new.scheduling_policy != old.scheduling_policy => {
            v.deny(POLICY_IMMUTABLE, FieldError::immutable(policy_path));
        }
        PolicyUpdate::Whole => {}
        PolicyUpdate::Variant => {
            let (new_p, old_p) = (new.scheduling_policy, old.scheduling_policy);
            if new_p.has_basic() != old_p.has_basic() {
                v.deny(POLICY_IMMUTABLE, FieldError::immutable(policy_path.child("basic")));
            }
            match (new_p.gang_size().is_some(), old_p.gang_size().is_some()) {
                (true, false) => v.deny(
                    POLICY_IMMUTABLE,
                    FieldError::forbidden(policy_path.child("gang"), "field cannot be set once created"),
                ),
                (false, true) => v.deny(
                    POLICY_IMMUTABLE,
                    FieldError::forbidden(policy_path.child("gang"), "field cannot be cleared once set"),
                ),
                _ => {}
            }
        }
    }
    if new.disruption_mode != old.disruption_mode {
        v.deny(DISRUPTION_MODE, FieldError::immutable(new.path.child("disruptionMode")));
    }
    if new.priority_class_name != old.priority_class_name {
        v.deny(PRIORITY_CLASS_NAME, FieldError::immutable(new.path.child("priorityClassName")));
    }
    if new.priority != old.priority {
        v.deny(PRIORITY, FieldError::immutable(new.path.child("priority")));
    }
    if new.preemption_policy != old.preemption_policy {
        v.deny(PREEMPTION_POLICY, FieldError::immutable(new.path.child("preemptionPolicy")));
    }
}

/// G-16 for the 1.37 `workloadRef` (PodGroups and CompositePodGroups). Returns whether it
/// is well formed, so it can be looked up.
fn check_workload_ref(r: &TemplateRef, v: &mut Verdict) -> bool {
    let mut errors = check(&r.path.child("workloadName"), r.workload_name, true, names::is_dns1123_subdomain);
    errors.extend(check(&r.path.child(r.template_field), r.template_name, true, names::is_dns1123_label));
    let ok = errors.is_empty();
    v.deny_all(TEMPLATE_REF, errors);
    ok
}

/// N5: `parentCompositePodGroupName` is a DNS subdomain. Returns whether it is well formed.
fn check_parent_name(parent: Option<&String>, v: &mut Verdict) -> bool {
    let Some(parent) = parent else { return true };
    let errors =
        check(&Path::new("spec").child("parentCompositePodGroupName"), parent, false, names::is_dns1123_subdomain);
    let ok = errors.is_empty();
    v.deny_all(PARENT_GROUP, errors);
    ok
}

/// The non-empty parent name of a 1.37 PodGroup.
fn parent_of(pg: &PodGroup) -> Option<&str> {
    match pg {
        PodGroup::V1alpha2(_) => None,
        PodGroup::V137(pg) => pg.spec.parent_composite_pod_group_name.as_deref().filter(|p| !p.is_empty()),
    }
}

/// G-16 and N5 for a PodGroup. Returns whether the references are well formed, so they can
/// be looked up.
fn check_pod_group(pg: &PodGroup, v: &mut Verdict) -> bool {
    match pg {
        PodGroup::V1alpha2(pg) => {
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
        PodGroup::V137(inner) => {
            let s = &inner.spec;
            let ref_ok = pg.template_ref().is_none_or(|r| check_workload_ref(&r, v));
            let parent_ok = check_parent_name(s.parent_composite_pod_group_name.as_ref(), v);
            // Stricter than upstream, which only shadows this rule: a parent means nothing
            // without the Workload the hierarchy comes from.
            if parent_of(pg).is_some() && s.workload_ref.is_none() {
                v.deny(
                    PARENT_GROUP,
                    FieldError::required(
                        Path::new("spec").child("workloadRef"),
                        "must be set when spec.parentCompositePodGroupName is set",
                    ),
                );
            }
            ref_ok && parent_ok
        }
    }
}

/// G-14, G-17, G-20, G-22, G-23, N4, N5 (immutability of a PodGroup's spec fields).
fn check_pod_group_update(pg: &PodGroup, old: &PodGroup, v: &mut Verdict) {
    let spec = Path::new("spec");
    match (pg, old) {
        (PodGroup::V1alpha2(new), PodGroup::V1alpha2(old_inner)) => {
            check_spec_update(&pg.group_spec(), &old.group_spec(), PolicyUpdate::Whole, v);
            if new.spec.pod_group_template_ref != old_inner.spec.pod_group_template_ref {
                v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("podGroupTemplateRef")));
            }
        }
        (PodGroup::V137(new), PodGroup::V137(old_inner)) => {
            check_spec_update(&pg.group_spec(), &old.group_spec(), PolicyUpdate::Variant, v);
            if new.spec.workload_ref != old_inner.spec.workload_ref {
                v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("workloadRef")));
            }
            if new.spec.parent_composite_pod_group_name != old_inner.spec.parent_composite_pod_group_name {
                v.deny(PARENT_GROUP, FieldError::immutable(spec.child("parentCompositePodGroupName")));
            }
        }
        // A version switch does not happen within one object; nothing to compare.
        _ => {}
    }
}

/// N6: a CompositePodGroup's name and required `workloadRef`. Returns whether the
/// references are well formed, so they can be looked up.
fn check_composite_pod_group(cpg: &CompositePodGroup, v: &mut Verdict) -> bool {
    let name = cpg.metadata.name.as_deref().unwrap_or_default();
    v.deny_all(COMPOSITE_NAME, check(&Path::new("metadata").child("name"), name, true, names::is_dns1123_subdomain));
    let ref_ok = match cpg.template_ref() {
        Some(r) => check_workload_ref(&r, v),
        None => {
            v.deny(TEMPLATE_REF, FieldError::required(Path::new("spec").child("workloadRef"), ""));
            false
        }
    };
    check_parent_name(cpg.spec.parent_composite_pod_group_name.as_ref(), v) && ref_ok
}

/// N6: a CompositePodGroup's spec is immutable field by field; its policy as a whole.
fn check_composite_update(cpg: &CompositePodGroup, old: &CompositePodGroup, v: &mut Verdict) {
    let spec = Path::new("spec");
    check_spec_update(&cpg.group_spec(), &old.group_spec(), PolicyUpdate::Whole, v);
    if cpg.spec.workload_ref != old.spec.workload_ref {
        v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("workloadRef")));
    }
    if cpg.spec.parent_composite_pod_group_name != old.spec.parent_composite_pod_group_name {
        v.deny(PARENT_GROUP, FieldError::immutable(spec.child("parentCompositePodGroupName")));
    }
}

/// A PodGroup or CompositePodGroup being created from a template.
struct Group<'a> {
    spec: &'a GroupSpec<'a>,
    template_ref: TemplateRef<'a>,
    /// `parentCompositePodGroupName`, when set.
    parent: Option<&'a str>,
}

/// The fields of a Workload the template rules read.
fn workload_masks(version: Version) -> &'static [&'static str] {
    if version.is_137() {
        &["metadata.deletionTimestamp", "spec.podGroupTemplates", "spec.compositePodGroupTemplates"]
    } else {
        &["spec.podGroupTemplates"]
    }
}

/// Reads the Workload a template reference names, in the request's version.
pub(crate) fn get_workload(
    cluster: &dyn Cluster,
    version: Version,
    namespace: &str,
    name: &str,
) -> Result<Option<Workload>, LookupError> {
    let query = Query {
        api_version: version.api_version(),
        kind: "Workload",
        namespace: Some(namespace),
        field_masks: workload_masks(version),
    };
    match cluster.get(&query, name)? {
        None => Ok(None),
        Some(object) => Workload::decode(version, object.get())
            .map(Some)
            .map_err(|e| LookupError::Failed(format!("cannot decode Workload {name:?}: {e}"))),
    }
}

/// The template a reference names, at any depth: a PodGroupTemplate for a PodGroup, a
/// CompositePodGroupTemplate for a CompositePodGroup.
pub(crate) fn find_template<'a, 'b>(
    templates: &'b [GroupSpec<'a>],
    name: &str,
    origin: GroupOrigin,
) -> Option<&'b GroupSpec<'a>> {
    let want = if origin.is_composite() { GroupOrigin::CompositeTemplate } else { GroupOrigin::WorkloadTemplate };
    templates.iter().find(|t| t.origin == want && t.name == Some(name))
}

/// G-18, G-19, N7: on create, the referenced Workload and template exist, the group copies
/// the template, and (1.37) its place in the hierarchy matches the template's.
fn check_against_template(ctx: &Context, version: Version, group: &Group, v: &mut Verdict) {
    let (r, namespace) = (&group.template_ref, ctx.namespace);
    let name_path = r.path.child("workloadName");
    let workload = match get_workload(ctx.cluster, version, namespace, r.workload_name) {
        Ok(Some(w)) => w,
        Ok(None) => {
            let detail = format!("Workload {:?} not found in namespace {namespace:?}", r.workload_name);
            v.deny(TEMPLATE_REF_EXISTS, FieldError::not_found(name_path, r.workload_name, detail));
            return;
        }
        Err(e) => {
            let what = format!("Workload {:?}", r.workload_name);
            v.lookup_failed(TEMPLATE_REF_EXISTS, name_path, &what, &e, ctx.settings.fail_on_lookup_error);
            return;
        }
    };
    if version.is_137() && workload.is_being_deleted() {
        let detail = format!("Workload {:?} is being deleted", r.workload_name);
        v.deny(TEMPLATE_REF_EXISTS, FieldError::invalid(name_path, r.workload_name, detail));
        return;
    }
    let templates = workload.group_specs();
    let Some(template) = find_template(&templates, r.template_name, group.spec.origin) else {
        let want = if group.spec.origin.is_composite() {
            GroupOrigin::CompositeTemplate
        } else {
            GroupOrigin::WorkloadTemplate
        };
        let names: Vec<String> =
            templates.iter().filter(|t| t.origin == want).filter_map(|t| t.name).map(|n| format!("{n:?}")).collect();
        let detail = format!("Workload {:?} has no such template (it has {})", r.workload_name, names.join(", "));
        v.deny(TEMPLATE_REF_EXISTS, FieldError::not_found(r.path.child(r.template_field), r.template_name, detail));
        return;
    };
    let source = format!("Workload {:?} template {:?}", r.workload_name, r.template_name);
    check_copies_template(group.spec, template, &source, version, v);
    if version.is_137() {
        let parent_template = template.parent.map(|p| &templates[p]);
        check_hierarchy(ctx, group, parent_template, v);
    }
}

/// G-19: the fields a group copies from its template on create. Values the template leaves
/// to defaulting need not be copied. 1.36 compares the policy, disruption mode and priority
/// class; 1.37 also the priority, preemption policy and scheduling constraints.
fn check_copies_template(g: &GroupSpec, template: &GroupSpec, source: &str, version: Version, v: &mut Verdict) {
    let spec = Path::new("spec");
    if g.scheduling_policy != template.scheduling_policy {
        v.deny(
            TEMPLATE_CONSISTENCY,
            FieldError::invalid(
                spec.child("schedulingPolicy"),
                BadValue::of(&g.scheduling_policy),
                format!("must equal the schedulingPolicy of {source}: {}", BadValue::of(&template.scheduling_policy)),
            ),
        );
    }
    let mut differs = |field: &str, have: BadValue, want: BadValue| {
        v.deny(
            TEMPLATE_CONSISTENCY,
            FieldError::invalid(spec.child(field), have, format!("must equal the {field} of {source}: {want}")),
        );
    };
    if let Some(want) = template.disruption_mode.filter(|w| g.disruption_mode != Some(*w)) {
        differs("disruptionMode", BadValue::of(&g.disruption_mode), BadValue::of(&want));
    }
    if let Some(want) = template.priority_class_name.filter(|w| g.priority_class_name != Some(*w)) {
        differs("priorityClassName", BadValue::of(&g.priority_class_name), BadValue::of(want));
    }
    if !version.is_137() {
        return;
    }
    if let Some(want) = template.priority.filter(|w| g.priority != Some(*w)) {
        differs("priority", BadValue::of(&g.priority), BadValue::of(&want));
    }
    if let Some(want) = template.preemption_policy.filter(|w| g.preemption_policy != Some(*w)) {
        differs("preemptionPolicy", BadValue::of(&g.preemption_policy), BadValue::of(want));
    }
    // Constraints are not defaulted: the group has exactly the template's topology.
    let (have, want): (Vec<&str>, Vec<&str>) = (g.topology_keys().collect(), template.topology_keys().collect());
    if have != want {
        differs(
            "schedulingConstraints",
            BadValue::of(&g.scheduling_constraints),
            BadValue::of(&template.scheduling_constraints),
        );
    }
}

/// N7: the hierarchy the apiserver leaves to the scheduler (which would mark the group
/// `Invalid`). A group made from a nested template names the CompositePodGroup made from the
/// parent template, of the same Workload and with the same priority. Following the template
/// tree link by link also rules out cycles and depths over 4, which the Workload already
/// cannot have.
fn check_hierarchy(ctx: &Context, group: &Group, parent_template: Option<&GroupSpec>, v: &mut Verdict) {
    let r = &group.template_ref;
    let parent_path = Path::new("spec").child("parentCompositePodGroupName");
    let (parent, parent_template) = match (group.parent, parent_template) {
        (None, None) => return,
        (Some(parent), None) => {
            v.deny(
                HIERARCHY,
                FieldError::invalid(
                    parent_path,
                    parent,
                    format!(
                        "Workload {:?} template {:?} is not nested in a CompositePodGroupTemplate, so the group has no parent",
                        r.workload_name, r.template_name
                    ),
                ),
            );
            return;
        }
        (None, Some(t)) => {
            v.deny(
                HIERARCHY,
                FieldError::required(
                    parent_path,
                    format!(
                        "Workload {:?} template {:?} is nested in CompositePodGroupTemplate {:?}, so the group must name the CompositePodGroup made from it",
                        r.workload_name,
                        r.template_name,
                        t.name.unwrap_or_default()
                    ),
                ),
            );
            return;
        }
        (Some(parent), Some(t)) => (parent, t),
    };
    let query = Query {
        api_version: COMPOSITE_VERSION.api_version(),
        kind: "CompositePodGroup",
        namespace: Some(ctx.namespace),
        field_masks: &["spec.workloadRef", "spec.priorityClassName", "spec.priority"],
    };
    let found = match ctx.cluster.get(&query, parent) {
        Ok(found) => {
            found.map(|object| CompositePodGroup::decode(object.get())).transpose().map_err(LookupError::Failed)
        }
        Err(e) => Err(e),
    };
    let cpg = match found {
        Ok(Some(cpg)) => cpg,
        Ok(None) => {
            let detail = format!("CompositePodGroup {parent:?} not found in namespace {:?}", ctx.namespace);
            v.deny(HIERARCHY, FieldError::not_found(parent_path, parent, detail));
            return;
        }
        Err(e) => {
            let what = format!("CompositePodGroup {parent:?}");
            v.lookup_failed(HIERARCHY, parent_path, &what, &e, ctx.settings.fail_on_lookup_error);
            return;
        }
    };
    let (parent_workload, parent_template_name) =
        cpg.spec.workload_ref.as_ref().map_or(("", ""), |w| (w.workload_name.as_str(), w.template_name.as_str()));
    let want_template = parent_template.name.unwrap_or_default();
    if parent_workload != r.workload_name {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                parent_path,
                parent,
                format!(
                    "CompositePodGroup {parent:?} belongs to Workload {parent_workload:?}, not {:?}",
                    r.workload_name
                ),
            ),
        );
    } else if parent_template_name != want_template {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                parent_path,
                parent,
                format!(
                    "CompositePodGroup {parent:?} is made from template {parent_template_name:?}, but template {:?} is nested in {want_template:?}",
                    r.template_name
                ),
            ),
        );
    }
    let spec = Path::new("spec");
    if group.spec.priority_class_name != cpg.spec.priority_class_name.as_ref() {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                spec.child("priorityClassName"),
                BadValue::of(&group.spec.priority_class_name),
                format!(
                    "must equal the priorityClassName of parent CompositePodGroup {parent:?}: {}",
                    BadValue::of(&cpg.spec.priority_class_name)
                ),
            ),
        );
    } else if group.spec.priority != cpg.spec.priority {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                spec.child("priority"),
                BadValue::of(&group.spec.priority),
                format!(
                    "must equal the priority of parent CompositePodGroup {parent:?}: {}",
                    BadValue::of(&cpg.spec.priority)
                ),
            ),
        );
    }
}

/// G-32, G-33, G-34: a Pod joining a PodGroup.
fn check_pod(ctx: &Context, pod: &Pod, old: Option<&Pod>, v: &mut Verdict) {
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
    let namespace = ctx.namespace;
    // The settings were validated when they were loaded.
    let versions = scheduling::parse_lookup_versions(&ctx.settings.scheduling_api_versions).unwrap_or_default();
    match scheduling::find_pod_group(ctx.cluster, &versions, namespace, name, &["metadata.name"]) {
        Ok(Some(_)) => {}
        Ok(None) => v.warn(
            POD_GROUP_EXISTS,
            path,
            format!("PodGroup {name:?} does not exist in namespace {namespace:?} yet; the Pod stays Pending until it is created"),
        ),
        Err(e) => {
            v.lookup_failed(POD_GROUP_EXISTS, path, &format!("PodGroup {name:?}"), &e, ctx.settings.fail_on_lookup_error)
        }
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::cluster::MemoryCluster;

    const VERSIONS_137: [&str; 2] = ["v1beta1", "v1alpha3"];

    fn review(op: &str, object: Value, old: Option<Value>) -> Review<'static> {
        let request = crate::request::admission_request("u", op, &object, old.as_ref());
        crate::review::review_request(&request).unwrap().unwrap()
    }

    fn run_with(object: Value, old: Option<Value>, cluster: &MemoryCluster) -> (Vec<String>, Vec<String>) {
        let op = if old.is_some() { "UPDATE" } else { "CREATE" };
        let v = Gang::check(&Settings::default(), &review(op, object, old), cluster);
        (v.violations.iter().map(|x| x.to_string()).collect(), v.warning_messages())
    }

    fn violations(object: Value, old: Option<Value>) -> Vec<String> {
        run_with(object, old, &MemoryCluster::default()).0
    }

    fn object(version: &str, kind: &str, name: &str, spec: Value) -> Value {
        json!({"apiVersion": format!("scheduling.k8s.io/{version}"), "kind": kind,
               "metadata": {"name": name, "namespace": "ml"}, "spec": spec})
    }

    fn gang(name: &str) -> Value {
        json!({"name": name, "schedulingPolicy": {"gang": {"minCount": 2}}})
    }

    fn composite(name: &str, children: Value) -> Value {
        json!({"name": name, "schedulingPolicy": {"gang": {"minGroupCount": 1}}, "podGroupTemplates": children})
    }

    /// A Workload with one composite template "job" holding leaf templates "leader" and "workers".
    fn tree_workload(version: &str) -> Value {
        object(
            version,
            "Workload",
            "w",
            json!({"compositePodGroupTemplates": [composite("job", json!([gang("leader"), gang("workers")]))]}),
        )
    }

    #[test]
    fn a_well_formed_tree_is_accepted_in_both_versions() {
        for version in VERSIONS_137 {
            assert_eq!(violations(tree_workload(version), None), Vec::<String>::new(), "{version}");
            let flat = object(version, "Workload", "w", json!({"podGroupTemplates": [gang("a"), gang("b")]}));
            assert_eq!(violations(flat, None), Vec::<String>::new(), "{version}");
        }
    }

    #[test]
    fn the_workload_union_and_list_sizes() {
        for version in VERSIONS_137 {
            assert_eq!(
                violations(object(version, "Workload", "w", json!({})), None),
                [
                    "spec: Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates` [gang.workload-templates]"
                ]
            );
            let both = json!({"podGroupTemplates": [gang("a")],
                "compositePodGroupTemplates": [composite("c", json!([gang("b")]))]});
            assert_eq!(
                violations(object(version, "Workload", "w", both), None),
                [
                    "spec: Invalid value: \"{podGroupTemplates, compositePodGroupTemplates}\": must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates` [gang.workload-templates]"
                ]
            );
            let nine: Vec<Value> = (0..9).map(|i| gang(&format!("t{i}"))).collect();
            let nested = json!({"compositePodGroupTemplates": [composite("c", json!(nine))]});
            assert_eq!(
                violations(object(version, "Workload", "w", nested), None),
                [
                    "spec.compositePodGroupTemplates[0].podGroupTemplates: Too many: 9: must have at most 8 items [gang.workload-templates]"
                ]
            );
        }
    }

    #[test]
    fn past_the_maximum_only_the_tree_wide_checks_run() {
        // `maxItems` short-circuits the list's other declarative checks and those of what it
        // holds; the hand-written tree checks (unique names, children, depth) still run.
        let mut nine: Vec<Value> =
            (0..9).map(|i| composite(&format!("c{i}"), json!([gang(&format!("g{i}"))]))).collect();
        nine[2] = composite("Bad_Name", json!([gang("g2")]));
        nine[4] = composite("c3", json!([gang("g4")]));
        nine[5] = composite("c5", json!([gang("Also_Bad"), gang("g5"), gang("g5")]));
        nine[6] = json!({"name": "c6", "schedulingPolicy": {"gang": {"minGroupCount": 1}}});
        let spec = json!({"compositePodGroupTemplates": nine});
        let c = "spec.compositePodGroupTemplates";
        assert_eq!(
            violations(object("v1beta1", "Workload", "w", spec), None),
            [
                format!("{c}: Too many: 9: must have at most 8 items [gang.workload-templates]"),
                format!("{c}[4].name: Duplicate value: \"c3\" [gang.template-unique]"),
                format!("{c}[5].podGroupTemplates[2].name: Duplicate value: \"g5\" [gang.template-unique]"),
                format!(
                    "{c}[6]: Invalid value: \"c6\": must have at least one child PodGroupTemplate or CompositePodGroupTemplate [gang.composite-children]"
                ),
            ]
        );
    }

    #[test]
    fn names_are_unique_in_the_list_and_across_the_tree() {
        let spec = json!({"compositePodGroupTemplates": [
            composite("a", json!([gang("x"), gang("x")])),
            composite("b", json!([gang("x"), gang("a")])),
        ]});
        let got = violations(object("v1beta1", "Workload", "w", spec), None);
        assert_eq!(
            got,
            [
                "spec.compositePodGroupTemplates[0].podGroupTemplates[1]: Duplicate value: {\"name\":\"x\",\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}} [gang.template-unique]",
                "spec.compositePodGroupTemplates[1].podGroupTemplates[0].name: Duplicate value: \"x\" [gang.template-unique]",
                "spec.compositePodGroupTemplates[1].podGroupTemplates[1].name: Duplicate value: \"a\" [gang.template-unique]",
            ]
        );
    }

    #[test]
    fn depth_children_and_one_priority() {
        // Composite levels 1..4 with a leaf at level 5: one level too deep.
        let mut level = json!({"name": "c4", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [gang("leaf")]});
        for name in ["c3", "c2", "c1"] {
            level = json!({"name": name, "schedulingPolicy": {"basic": {}}, "compositePodGroupTemplates": [level]});
        }
        let deep = object("v1alpha3", "Workload", "w", json!({"compositePodGroupTemplates": [level]}));
        let at = "spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].compositePodGroupTemplates[0].compositePodGroupTemplates[0]";
        assert_eq!(
            violations(deep, None),
            [format!("{at}: Invalid value: \"c4\": maximum template hierarchy depth is 4 [gang.template-depth]")]
        );
        let childless = json!({"compositePodGroupTemplates": [composite("c", json!([]))]});
        assert_eq!(
            violations(object("v1beta1", "Workload", "w", childless), None),
            [
                "spec.compositePodGroupTemplates[0]: Invalid value: \"c\": must have at least one child PodGroupTemplate or CompositePodGroupTemplate [gang.composite-children]"
            ]
        );
        let mut two = gang("b");
        two["priorityClassName"] = json!("high");
        let flat = object("v1beta1", "Workload", "w", json!({"podGroupTemplates": [gang("a"), two]}));
        assert_eq!(
            violations(flat, None),
            ["spec: Invalid value: null: detected multiple priority configurations [gang.workload-priority]"]
        );
    }

    #[test]
    fn composite_policies_and_disruption_modes() {
        let mut c = composite("c", json!([gang("a")]));
        c["schedulingPolicy"] = json!({"gang": {"minGroupCount": 0}});
        c["disruptionMode"] = json!({});
        c["preemptionPolicy"] = json!("Sometimes");
        let w = object("v1beta1", "Workload", "w", json!({"compositePodGroupTemplates": [c]}));
        assert_eq!(
            violations(w, None),
            [
                "spec.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount: Required value [gang.min-count]",
                "spec.compositePodGroupTemplates[0].disruptionMode: Invalid value: \"\": must specify one of: `single`, `all` [gang.disruption-mode]",
                "spec.compositePodGroupTemplates[0].preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"Never\", \"PreemptLowerPriority\" [gang.preemption-policy]",
            ]
        );
        let pg = object(
            "v1alpha3",
            "PodGroup",
            "g",
            json!({"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}}),
        );
        assert_eq!(
            violations(pg, None),
            [
                "spec.disruptionMode: Invalid value: {\"all\":{}}: a basic schedulingPolicy schedules pods one by one, so the group cannot be disrupted as a whole (use a gang policy or disruptionMode {\"single\": {}}) [gang.disruption-mode-basic]"
            ]
        );
        let both = object(
            "v1beta1",
            "PodGroup",
            "g",
            json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}, "single": {}}}),
        );
        assert_eq!(
            violations(both, None),
            [
                "spec.disruptionMode: Invalid value: \"{single, all}\": must specify exactly one of: `single`, `all` [gang.disruption-mode]"
            ]
        );
    }

    #[test]
    fn a_1_36_disruption_mode_string_is_a_clear_error() {
        let pg = object(
            "v1beta1",
            "PodGroup",
            "g",
            json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup"}),
        );
        let request = crate::request::admission_request("u", "CREATE", &pg, None);
        let err = crate::review::review_request(&request).unwrap_err().0;
        assert_eq!(
            err,
            "cannot decode request.object as PodGroup: spec.disruptionMode: invalid type: string \"PodGroup\", expected DisruptionMode (in scheduling.k8s.io/v1beta1 disruptionMode is {\"single\": {}} or {\"all\": {}}; the 1.36 strings \"Pod\" and \"PodGroup\" are gone)"
        );
    }

    #[test]
    fn template_updates_follow_each_field() {
        let old = tree_workload("v1beta1");
        // minCount may change.
        let mut resized = old.clone();
        resized["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] =
            json!(5);
        assert_eq!(violations(resized, Some(old.clone())), Vec::<String>::new());
        // Reordering is not adding or removing.
        let mut reordered = old.clone();
        reordered["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"] =
            json!([gang("workers"), gang("leader")]);
        assert_eq!(violations(reordered, Some(old.clone())), Vec::<String>::new());
        let mut changed = old.clone();
        let leaves = &mut changed["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"];
        leaves[0]["schedulingPolicy"] = json!({"basic": {}});
        leaves[1] = gang("other");
        leaves[1]["priority"] = json!(5);
        let got = violations(changed, Some(old));
        let at = "spec.compositePodGroupTemplates[0].podGroupTemplates";
        assert_eq!(
            got,
            [
                format!("{at}[1].priority: Forbidden: set priorityClassName instead (the priority is computed from the class at admission) [gang.user-priority]"),
                "spec: Invalid value: null: all priority and priorityClassName values must be identical, detected multiple values [gang.workload-priority]".to_string(),
                format!("{at}[0].schedulingPolicy.basic: Forbidden: field is immutable [gang.policy-immutable]"),
                format!("{at}[0].schedulingPolicy.gang: Forbidden: field cannot be cleared once set [gang.policy-immutable]"),
                format!("{at}[1]: Forbidden: item may not be added [gang.templates-immutable]"),
                format!("{at}: Forbidden: item may not be removed [gang.templates-immutable]"),
            ]
        );
    }

    #[test]
    fn pod_group_references_and_updates() {
        let pg = object(
            "v1beta1",
            "PodGroup",
            "g",
            json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "parentCompositePodGroupName": "Job_1",
                   "workloadRef": {"workloadName": "w", "templateName": ""}}),
        );
        assert_eq!(
            violations(pg, None),
            [
                "spec.workloadRef.templateName: Required value [gang.template-ref]".to_string(),
                format!(
                    "spec.parentCompositePodGroupName: Invalid value: \"Job_1\": {} [gang.parent-group]",
                    names::is_dns1123_subdomain("Job_1")[0]
                ),
            ]
        );
        let orphan = object(
            "v1alpha3",
            "PodGroup",
            "g",
            json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "parentCompositePodGroupName": "job"}),
        );
        assert_eq!(
            violations(orphan, None),
            [
                "spec.workloadRef: Required value: must be set when spec.parentCompositePodGroupName is set [gang.parent-group]"
            ]
        );
        let old = object(
            "v1beta1",
            "PodGroup",
            "g",
            json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}},
                   "workloadRef": {"workloadName": "w", "templateName": "t"}}),
        );
        let mut new = old.clone();
        new["spec"]["schedulingPolicy"]["gang"]["minCount"] = json!(3);
        assert_eq!(violations(new.clone(), Some(old.clone())), Vec::<String>::new());
        new["spec"]["disruptionMode"] = json!({"all": {}});
        new["spec"]["preemptionPolicy"] = json!("Never");
        new["spec"]["workloadRef"]["templateName"] = json!("u");
        assert_eq!(
            violations(new, Some(old)),
            [
                "spec.disruptionMode: Forbidden: field is immutable [gang.disruption-mode]",
                "spec.preemptionPolicy: Forbidden: field is immutable [gang.preemption-policy]",
                "spec.workloadRef: Forbidden: field is immutable [gang.template-ref-immutable]",
            ]
        );
    }

    #[test]
    fn composite_pod_groups() {
        let cpg = json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": "Job", "namespace": "ml"}, "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}});
        assert_eq!(
            violations(cpg.clone(), None),
            [
                format!(
                    "metadata.name: Invalid value: \"Job\": {} [gang.composite-name]",
                    names::is_dns1123_subdomain("Job")[0]
                ),
                "spec.workloadRef: Required value [gang.template-ref]".to_string(),
            ]
        );
        let mut old = cpg;
        old["metadata"]["name"] = json!("job");
        old["spec"]["workloadRef"] = json!({"workloadName": "w", "templateName": "job"});
        let mut new = old.clone();
        new["spec"]["schedulingPolicy"]["gang"]["minGroupCount"] = json!(3);
        assert_eq!(
            violations(new, Some(old)),
            ["spec.schedulingPolicy: Forbidden: field is immutable [gang.policy-immutable]"]
        );
        // CompositePodGroup exists only in v1alpha3.
        let beta =
            json!({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "CompositePodGroup", "metadata": {"name": "c"}});
        let request = crate::request::admission_request("u", "CREATE", &beta, None);
        assert_eq!(
            crate::review::review_request(&request).unwrap_err().0,
            format!(
                "unsupported kind scheduling.k8s.io/v1beta1 CompositePodGroup: this policy validates {}",
                scheduling::UNDERSTOOD
            )
        );
    }

    fn leader_group(version: &str, parent: Option<&str>) -> Value {
        let mut spec = json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}},
                              "workloadRef": {"workloadName": "w", "templateName": "leader"}});
        if let Some(p) = parent {
            spec["parentCompositePodGroupName"] = json!(p);
        }
        object(version, "PodGroup", "g", spec)
    }

    fn parent_group(workload: &str, template: &str) -> Value {
        object(
            "v1alpha3",
            "CompositePodGroup",
            "job-1",
            json!({"schedulingPolicy": {"gang": {"minGroupCount": 1}}, "workloadRef": {"workloadName": workload, "templateName": template}}),
        )
    }

    #[test]
    fn a_group_fits_its_place_in_the_hierarchy() {
        for version in VERSIONS_137 {
            let cluster = MemoryCluster::new(vec![tree_workload(version), parent_group("w", "job")]);
            let (v, w) = run_with(leader_group(version, Some("job-1")), None, &cluster);
            assert_eq!((v, w), (Vec::new(), Vec::new()), "{version}");
            let (v, _) = run_with(leader_group(version, None), None, &cluster);
            assert_eq!(
                v,
                [
                    "spec.parentCompositePodGroupName: Required value: Workload \"w\" template \"leader\" is nested in CompositePodGroupTemplate \"job\", so the group must name the CompositePodGroup made from it [gang.hierarchy]"
                ],
                "{version}"
            );
            let other = MemoryCluster::new(vec![tree_workload(version), parent_group("w2", "job")]);
            let (v, _) = run_with(leader_group(version, Some("job-1")), None, &other);
            assert_eq!(
                v,
                [
                    "spec.parentCompositePodGroupName: Invalid value: \"job-1\": CompositePodGroup \"job-1\" belongs to Workload \"w2\", not \"w\" [gang.hierarchy]"
                ]
            );
            let missing = MemoryCluster::new(vec![tree_workload(version)]);
            let (v, _) = run_with(leader_group(version, Some("job-1")), None, &missing);
            assert_eq!(
                v,
                [
                    "spec.parentCompositePodGroupName: Not found: \"job-1\": CompositePodGroup \"job-1\" not found in namespace \"ml\" [gang.hierarchy]"
                ]
            );
        }
    }

    #[test]
    fn lookups_follow_the_request_version_and_tell_not_served_from_missing() {
        // A 1.36 cluster does not serve v1beta1: a failed lookup (a warning), not a missing Workload.
        let old_cluster = MemoryCluster::new(vec![]).serving(["scheduling.k8s.io/v1alpha2"]);
        let (v, w) = run_with(leader_group("v1beta1", Some("job-1")), None, &old_cluster);
        assert_eq!(v, Vec::<String>::new());
        assert_eq!(
            w,
            [
                "spec.workloadRef.workloadName: cannot look up Workload \"w\": the cluster does not serve scheduling.k8s.io/v1beta1/Workload; the check was skipped [gang.template-ref-exists]"
            ]
        );
        // The template is found at any depth; a Workload being deleted is refused.
        let mut deleting = tree_workload("v1beta1");
        deleting["metadata"]["deletionTimestamp"] = json!("2026-09-01T00:00:00Z");
        let (v, _) = run_with(leader_group("v1beta1", Some("job-1")), None, &MemoryCluster::new(vec![deleting]));
        assert_eq!(
            v,
            [
                "spec.workloadRef.workloadName: Invalid value: \"w\": Workload \"w\" is being deleted [gang.template-ref-exists]"
            ]
        );
    }

    fn pod(group: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
               "spec": {"schedulingGroup": {"podGroupName": group}, "containers": [{"name": "c", "image": "i"}]}})
    }

    #[test]
    fn a_pod_finds_its_group_through_the_versions_in_order() {
        let group = object("v1alpha2", "PodGroup", "g", json!({}));
        // 1.36: v1beta1 and v1alpha3 are not served, v1alpha2 answers.
        let old = MemoryCluster::new(vec![group]).serving(["scheduling.k8s.io/v1alpha2"]);
        assert_eq!(run_with(pod("g"), None, &old), (Vec::new(), Vec::new()));
        // 1.37: v1beta1 answers "not found", and that answer wins.
        let new = MemoryCluster::new(vec![]).serving(["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"]);
        let (_, w) = run_with(pod("g"), None, &new);
        assert_eq!(
            w,
            [
                "spec.schedulingGroup.podGroupName: PodGroup \"g\" does not exist in namespace \"ml\" yet; the Pod stays Pending until it is created [gang.pod-group-exists]"
            ]
        );
        // A cluster without any of them (the feature is off) cannot answer.
        let none = MemoryCluster::new(vec![]).serving(["scheduling.k8s.io/v1"]);
        let (_, w) = run_with(pod("g"), None, &none);
        assert_eq!(
            w,
            [
                "spec.schedulingGroup.podGroupName: cannot look up PodGroup \"g\": the cluster serves PodGroups in none of scheduling.k8s.io/v1beta1, scheduling.k8s.io/v1alpha3, scheduling.k8s.io/v1alpha2; the check was skipped [gang.pod-group-exists]"
            ]
        );
    }

    #[test]
    fn the_lookup_versions_setting() {
        let bad = Settings { scheduling_api_versions: vec!["v1beta1".into(), "v1".into()], ..Settings::default() };
        assert_eq!(
            Gang::validate_settings(&bad).unwrap_err(),
            "schedulingApiVersions[1]: Unsupported value: \"v1\": supported values: \"v1beta1\", \"v1alpha3\", \"v1alpha2\""
        );
        let twice =
            Settings { scheduling_api_versions: vec!["v1beta1".into(), "v1beta1".into()], ..Settings::default() };
        assert_eq!(
            Gang::validate_settings(&twice).unwrap_err(),
            "schedulingApiVersions[1]: Duplicate value: \"v1beta1\""
        );
        let empty = Settings { scheduling_api_versions: vec![], ..Settings::default() };
        assert_eq!(
            Gang::validate_settings(&empty).unwrap_err(),
            "schedulingApiVersions: must list at least one version"
        );
    }
}

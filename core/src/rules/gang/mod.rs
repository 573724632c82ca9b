//! Rule set 1, gang: all-or-nothing scheduling for Workloads, PodGroups, CompositePodGroups,
//! the Pods that join them, 1.37 Jobs and CronJobs that ask for a gang, and the gang settings
//! of Kubeflow jobs. Ids and catalogue numbers
//! (rules.md) are listed in [`RULES`]; where a rule differs between Kubernetes 1.36
//! (`v1alpha2`) and 1.37 (`v1beta1`/`v1alpha3`) its summary says so.

use std::collections::{BTreeSet, HashMap, HashSet};

use k8s_openapi_137::api::scheduling::v1beta1 as b1;
use serde::{Deserialize, Serialize};

use crate::cluster::{Cluster, LookupError, Query};
use crate::field::{BadValue, FieldError, Path};
use crate::kubeflow::KubeflowJob;
use crate::names::{self, check};
use crate::pod::Pod;
use crate::review::kinds;
use crate::review::{Operation, Resource, Review};
use crate::rules::RuleInfo;
use crate::rules::{Names, RuleSet, names};
use crate::scheduling::{
    self, COMPOSITE_VERSION, CompositePodGroup, Disruption, GroupOrigin, GroupSpec, PodGroup, TemplateRef, Version,
    Workload, Workload136, Workload137,
};
use crate::verdict::Verdict;

mod batch;
mod group;
mod kubeflow;
mod pod;
mod spec;
mod trainer;
mod volcano;
mod workload;

use batch::check_batch_job;
pub use batch::refused_by_kubernetes_1_38;
use group::{
    Group, check_against_template, check_composite_pod_group, check_composite_update, check_pod_group,
    check_pod_group_update, parent_of,
};
pub(crate) use group::{find_template, get_workload};
use kubeflow::{check_job, check_job_update};
use pod::check_pod;
use spec::{PolicyUpdate, check_group_spec, check_spec_update};
use workload::check_workload;

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
pub const JOB_PARALLELISM: &str = "gang.job-parallelism";
pub const JOB_COMPLETIONS: &str = "gang.job-completions";
pub const JOB_PARENT: &str = "gang.job-parent";
pub const JOB_SCHEDULING_GROUP: &str = "gang.job-scheduling-group";
pub const JOB_DELEGATED_GANG: &str = "gang.job-delegated-gang";
pub const POD_GROUP_POLICY: &str = "gang.pod-group-policy";
pub const VOLCANO_QUEUE: &str = "gang.volcano-queue";
pub const TRAINER_SCHEDULER_NAME: &str = "gang.trainer-scheduler-name";
pub const GANG_DEPENDS_ON: &str = "gang.depends-on";
pub const VOLCANO_TASKS: &str = "gang.volcano-tasks";
pub const VOLCANO_TASK_NAME: &str = "gang.volcano-task-name";
pub const VOLCANO_POD_NAME: &str = "gang.volcano-pod-name";
pub const VOLCANO_MIN_AVAILABLE: &str = "gang.volcano-min-available";
pub const VOLCANO_POLICIES: &str = "gang.volcano-policies";
pub const VOLCANO_PLUGINS: &str = "gang.volcano-plugins";
pub const VOLCANO_MPI_MASTER: &str = "gang.volcano-mpi-master";
pub const VOLCANO_DEPENDS_ON: &str = "gang.volcano-depends-on";
pub const VOLCANO_NETWORK_TOPOLOGY: &str = "gang.volcano-network-topology";
pub const VOLCANO_PARTITION: &str = "gang.volcano-partition";
pub const VOLCANO_UPDATE: &str = "gang.volcano-update";

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
        summary: "gang.minCount (1.37 composites: gang.minGroupCount) is set and at least 1 (1.37 Jobs: at least 1 when set)",
    },
    RuleInfo {
        id: MAX_MIN_COUNT,
        catalogue: "setting maxMinCount",
        summary: "gang sizes stay under the cluster's cap (a 1.37 Job's gang without minCount counts its parallelism; a Trainer v2 gang counts every pod set of the run; a Volcano Job's minAvailable as Volcano defaults it)",
    },
    RuleInfo {
        id: POLICY_IMMUTABLE,
        catalogue: "G-14, N8",
        summary: "1.36 PodGroup and 1.37 CompositePodGroup: schedulingPolicy is immutable; 1.37 PodGroup, templates and Job: basic is immutable and gang cannot be set or cleared (minCount may change); a Job's spec.scheduling and schedulingPolicy are never added or removed",
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
        summary: "large jobs must be gangs (Kubeflow v1: minAvailable; Trainer v2: a runtime with podGroupPolicy)",
    },
    RuleInfo { id: QUEUE_IMMUTABLE, catalogue: "G-42", summary: "schedulingPolicy.queue never changes" },
    RuleInfo {
        id: SCHEDULE_TIMEOUT,
        catalogue: "G-45",
        summary: "scheduleTimeoutSeconds is not negative (Kubeflow v1; Trainer v2 runtimes' coscheduling)",
    },
    RuleInfo {
        id: SCHEDULER_NAME,
        catalogue: "G-46",
        summary: "warn when a gang job's template picks its own scheduler",
    },
    RuleInfo {
        id: JOB_PARALLELISM,
        catalogue: "J-01",
        summary: "1.37 Job and CronJob: spec.scheduling's gang.minCount is at most the Job's parallelism",
    },
    RuleInfo {
        id: JOB_COMPLETIONS,
        catalogue: "J-02",
        summary: "1.37 Job and CronJob: the gang (minCount, or parallelism when it is left out) is at most completions, the most Pods the Job runs at once (stricter than upstream)",
    },
    RuleInfo {
        id: JOB_PARENT,
        catalogue: "J-03",
        summary: "warn when a Job whose JobSet or TrainJob owner makes its Workload also sets spec.scheduling",
    },
    RuleInfo {
        id: JOB_SCHEDULING_GROUP,
        catalogue: "J-04",
        summary: "warn when a Job or CronJob sets spec.scheduling next to the Pod template's schedulingGroup: 1.37 does not use spec.scheduling then (1.38's apiserver refuses the pair before any webhook)",
    },
    RuleInfo {
        id: JOB_DELEGATED_GANG,
        catalogue: "J-05",
        summary: "1.38: warn when a delegated Job (annotation scheduling.k8s.io/group-template-name) runs fewer Pods at once than its parent Workload template's gang.minCount: each Job gets a PodGroup of its own, so that gang never forms (context-aware: the parent's Workload)",
    },
    RuleInfo {
        id: POD_GROUP_POLICY,
        catalogue: "V2-20",
        summary: "Trainer v2 runtime: podGroupPolicy names exactly one of coscheduling and volcano (stricter than upstream, kubeflow/trainer#4060); a TrainJob naming a runtime with both is rejected",
    },
    RuleInfo {
        id: VOLCANO_QUEUE,
        catalogue: "V2-21",
        summary: "Trainer v2 Volcano runtime and TrainJob patches: the queue annotation is not empty; warn when the Queue is missing or not Open (context-aware); a Volcano Job's and PodGroup's queue is a DNS subdomain (Volcano's CRD)",
    },
    RuleInfo {
        id: TRAINER_SCHEDULER_NAME,
        catalogue: "V2-22",
        summary: "Trainer v2 gang runtime: every replicated job's Pods name the same schedulerName",
    },
    RuleInfo {
        id: GANG_DEPENDS_ON,
        catalogue: "V2-23",
        summary: "warn when a gang runtime's job starts only after another (dependsOn) while the gang counts the pods of both",
    },
    RuleInfo { id: VOLCANO_TASKS, catalogue: "VC-01", summary: "a Volcano Job has at least one task" },
    RuleInfo {
        id: VOLCANO_TASK_NAME,
        catalogue: "VC-02",
        summary: "Volcano Job task names (an empty one defaulted to default<index>) are DNS-1123 labels and unique",
    },
    RuleInfo {
        id: VOLCANO_POD_NAME,
        catalogue: "VC-03",
        summary: "a Volcano Job's name and its pods' names (<job>-<task>-<task index>) are qualified names",
    },
    RuleInfo {
        id: VOLCANO_MIN_AVAILABLE,
        catalogue: "VC-04",
        summary: "Volcano Job: replicas and minAvailable not negative, a task's minAvailable at most its replicas, the job's (defaulted to the sum of the tasks') at most all replicas; a Volcano PodGroup's minMember not negative",
    },
    RuleInfo {
        id: VOLCANO_POLICIES,
        catalogue: "VC-05",
        summary: "Volcano Job and task lifecycle policies: event or exitCode, events and actions users may name, no event or exit code twice, 0 is no exit code, * stands alone",
    },
    RuleInfo { id: VOLCANO_PLUGINS, catalogue: "VC-06", summary: "a Volcano Job names only Volcano's job plugins" },
    RuleInfo {
        id: VOLCANO_MPI_MASTER,
        catalogue: "VC-07",
        summary: "a Volcano Job with the mpi plugin has its master task (--master, default master)",
    },
    RuleInfo {
        id: VOLCANO_DEPENDS_ON,
        catalogue: "VC-08",
        summary: "a Volcano Job's task dependencies (dependsOn) form a directed acyclic graph of its own tasks",
    },
    RuleInfo {
        id: VOLCANO_NETWORK_TOPOLOGY,
        catalogue: "VC-09",
        summary: "Volcano networkTopology (job, partition, PodGroup, sub-group): mode hard or soft, highestTierAllowed not negative, not both highestTierAllowed and highestTierName",
    },
    RuleInfo {
        id: VOLCANO_PARTITION,
        catalogue: "VC-10",
        summary: "a Volcano task's partitionPolicy: partitions and their size above 0, replicas = totalPartitions × partitionSize, minAvailable = minPartitions × partitionSize",
    },
    RuleInfo {
        id: VOLCANO_UPDATE,
        catalogue: "VC-11",
        summary: "a Volcano Job update adds or removes no task and changes nothing but minAvailable, priorityClassName and each task's replicas and minAvailable",
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
    #[serde(deserialize_with = "crate::rules::read_names")]
    pub scheduling_api_versions: Names,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_min_count: None,
            require_gang_for_jobs_with_at_least: None,
            forbid_user_priority: true,
            fail_on_lookup_error: false,
            scheduling_api_versions: names(&scheduling::DEFAULT_LOOKUP_VERSIONS),
        }
    }
}

pub struct Gang;

impl RuleSet for Gang {
    const NAME: &'static str = "gang";
    const KINDS: u32 = kinds::ALL;
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

    fn check_groups(settings: &Settings, review: &Review, groups: &[GroupSpec], cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        for group in groups {
            check_group_spec(settings, group, &mut v);
        }
        let ctx = Context { settings, namespace: &review.namespace, cluster };
        match (&review.object, &review.old_object) {
            (Resource::Workload(w), old) => {
                let old = match old {
                    Some(Resource::Workload(old)) => Some(old.as_ref()),
                    _ => None,
                };
                check_workload(w, old, groups, &mut v);
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
            (Resource::Kubeflow(job), old) => {
                check_job(settings, job, cluster, &mut v);
                if let Some(Resource::Kubeflow(old)) = old {
                    check_job_update(job, old, &mut v);
                }
            }
            (Resource::Runtime(runtime), _) => {
                trainer::check_runtime(&ctx, runtime, review.operation == Operation::Create, &mut v);
            }
            (Resource::TrainJob(job), None) => trainer::check_train_job(&ctx, job, &mut v),
            (Resource::TrainJob(_), Some(_)) => {}
            (Resource::VolcanoJob(job), old) => {
                let old = match old {
                    Some(Resource::VolcanoJob(old)) => Some(old.as_ref()),
                    _ => None,
                };
                volcano::check_job(settings, job, old, &review.raw_object, &mut v);
            }
            (Resource::VolcanoPodGroup(pg), None) => volcano::check_pod_group(pg, &mut v),
            (Resource::VolcanoPodGroup(_), Some(_)) => {}
            (Resource::BatchJob(job), old) => {
                let old = match old {
                    Some(Resource::BatchJob(old)) => Some(old.as_ref()),
                    _ => None,
                };
                check_batch_job(job, old, groups.first(), review.operation, &mut v);
                if review.operation == Operation::Create && old.is_none() {
                    batch::check_delegated(&ctx, job, &mut v);
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

#[cfg(test)]
mod tests;

//! One view over the group specs that `scheduling.k8s.io/v1alpha2` repeats in two places:
//! a PodGroup's `spec` and each Workload `spec.podGroupTemplates[i]`. Rules about scheduling
//! policy, topology, claims, disruption and priority are written once against this view.

use k8s_openapi::api::scheduling::v1alpha2::{
    PodGroup, PodGroupResourceClaim, PodGroupSchedulingConstraints, PodGroupSchedulingPolicy, PodGroupTemplate,
    Workload,
};

use crate::field::Path;
use crate::review::Resource;

/// Where a group spec lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupOrigin {
    PodGroup,
    WorkloadTemplate,
}

/// The fields shared by `PodGroupSpec` and `PodGroupTemplate`, with the path they sit at.
#[derive(Clone, Debug)]
pub struct GroupSpec<'a> {
    pub origin: GroupOrigin,
    /// `spec` for a PodGroup, `spec.podGroupTemplates[i]` for a template.
    pub path: Path,
    pub scheduling_policy: &'a PodGroupSchedulingPolicy,
    pub scheduling_constraints: Option<&'a PodGroupSchedulingConstraints>,
    pub resource_claims: Option<&'a Vec<PodGroupResourceClaim>>,
    pub disruption_mode: Option<&'a String>,
    pub priority_class_name: Option<&'a String>,
    pub priority: Option<i32>,
}

impl<'a> GroupSpec<'a> {
    pub fn of_pod_group(pg: &'a PodGroup) -> GroupSpec<'a> {
        let s = &pg.spec;
        GroupSpec {
            origin: GroupOrigin::PodGroup,
            path: Path::new("spec"),
            scheduling_policy: &s.scheduling_policy,
            scheduling_constraints: s.scheduling_constraints.as_ref(),
            resource_claims: s.resource_claims.as_ref(),
            disruption_mode: s.disruption_mode.as_ref(),
            priority_class_name: s.priority_class_name.as_ref(),
            priority: s.priority,
        }
    }

    pub fn of_template(t: &'a PodGroupTemplate, index: usize) -> GroupSpec<'a> {
        GroupSpec {
            origin: GroupOrigin::WorkloadTemplate,
            path: Path::new("spec").child("podGroupTemplates").index(index),
            scheduling_policy: &t.scheduling_policy,
            scheduling_constraints: t.scheduling_constraints.as_ref(),
            resource_claims: t.resource_claims.as_ref(),
            disruption_mode: t.disruption_mode.as_ref(),
            priority_class_name: t.priority_class_name.as_ref(),
            priority: t.priority,
        }
    }

    /// `gang.minCount` when the policy is a gang.
    pub fn gang_min_count(&self) -> Option<i32> {
        self.scheduling_policy.gang.as_ref().map(|g| g.min_count)
    }

    pub fn is_basic(&self) -> bool {
        self.scheduling_policy.basic.is_some() && self.scheduling_policy.gang.is_none()
    }

    pub fn topology_keys(&self) -> impl Iterator<Item = &'a str> {
        self.scheduling_constraints.and_then(|c| c.topology.as_ref()).into_iter().flatten().map(|t| t.key.as_str())
    }
}

/// Every group spec in a Workload or PodGroup (none for other kinds).
pub fn group_specs(resource: &Resource) -> Vec<GroupSpec<'_>> {
    match resource {
        Resource::PodGroup(pg) => vec![GroupSpec::of_pod_group(pg)],
        Resource::Workload(w) => workload_templates(w),
        _ => Vec::new(),
    }
}

/// `WorkloadMaxPodGroupTemplates`: past it the gang rule set reports one `Too many` error and
/// no rule looks at the templates one by one.
pub const MAX_POD_GROUP_TEMPLATES: usize = 8;

/// The Workload's templates as group specs; none when there are more than the apiserver allows.
pub fn workload_templates(w: &Workload) -> Vec<GroupSpec<'_>> {
    let templates = &w.spec.pod_group_templates;
    if templates.len() > MAX_POD_GROUP_TEMPLATES {
        return Vec::new();
    }
    templates.iter().enumerate().map(|(i, t)| GroupSpec::of_template(t, i)).collect()
}

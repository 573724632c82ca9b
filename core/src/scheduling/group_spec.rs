//! [`GroupSpec`]: one view over every holder of a group's scheduling policy, constraints,
//! disruption mode, priority and claims, in every version.

use super::*;

/// Where a group spec lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupOrigin {
    PodGroup,
    /// A PodGroupTemplate, at any depth of a Workload.
    WorkloadTemplate,
    CompositePodGroup,
    /// A CompositePodGroupTemplate, at any depth of a Workload.
    CompositeTemplate,
    /// A 1.37 Job's `spec.scheduling`, which the Job controller compiles into a Workload
    /// template and a PodGroup.
    Job,
    /// A CronJob's `spec.jobTemplate.spec.scheduling`: the Jobs it creates carry it. Unlike a
    /// Job's, it may change on update (it only shapes the Jobs created after).
    CronJob,
}

impl GroupOrigin {
    /// Whether the spec describes a group of groups rather than a group of pods.
    pub fn is_composite(self) -> bool {
        matches!(self, GroupOrigin::CompositePodGroup | GroupOrigin::CompositeTemplate)
    }

    pub fn is_template(self) -> bool {
        matches!(self, GroupOrigin::WorkloadTemplate | GroupOrigin::CompositeTemplate)
    }

    /// Whether the spec is a Job's or a CronJob's `scheduling`.
    pub fn is_job(self) -> bool {
        matches!(self, GroupOrigin::Job | GroupOrigin::CronJob)
    }
}

/// A scheduling policy: `basic` or `gang`, with the gang's size (`minCount` for pods,
/// `minGroupCount` for the child groups of a composite). Serialises as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Policy<'a> {
    V1alpha2(&'a a2::PodGroupSchedulingPolicy),
    Group(&'a b1::PodGroupSchedulingPolicy),
    Composite(&'a b1::CompositePodGroupSchedulingPolicy),
    /// A Job's `schedulingPolicy`; `None` when left out, which the Job controller compiles
    /// as `basic`.
    Job(Option<&'a a3::WorkloadPodGroupSchedulingPolicy>),
}

impl Policy<'_> {
    /// Whether `basic` is written.
    pub fn has_basic(&self) -> bool {
        match self {
            Policy::V1alpha2(p) => p.basic.is_some(),
            Policy::Group(p) => p.basic.is_some(),
            Policy::Composite(p) => p.basic.is_some(),
            Policy::Job(p) => p.is_some_and(|p| p.basic.is_some()),
        }
    }

    /// Whether `gang` is written.
    pub fn has_gang(&self) -> bool {
        match self {
            Policy::Job(p) => p.is_some_and(|p| p.gang.is_some()),
            _ => self.gang_size().is_some(),
        }
    }

    /// The gang's size as written, when the policy has a gang (a Job's gang may leave it to
    /// the controller: see [`GroupSpec::gang_min_count`]).
    pub fn gang_size(&self) -> Option<i32> {
        match self {
            Policy::V1alpha2(p) => p.gang.as_ref().map(|g| g.min_count),
            Policy::Group(p) => p.gang.as_ref().map(|g| g.min_count),
            Policy::Composite(p) => p.gang.as_ref().map(|g| g.min_group_count),
            Policy::Job(p) => p.and_then(|p| p.gang.as_ref()?.min_count),
        }
    }

    /// Whether the gang's size is a required field (0 reads as left out, as in Go); a Job's
    /// `minCount` is optional, so 0 there is a value of its own.
    pub fn gang_size_required(&self) -> bool {
        !matches!(self, Policy::Job(_))
    }

    /// Whether the policy is left out and so defaulted (a Job's, to `basic`).
    pub fn is_defaulted(&self) -> bool {
        matches!(self, Policy::Job(None))
    }

    /// The gang's size field: `minCount` or `minGroupCount`.
    pub fn gang_size_field(&self) -> &'static str {
        match self {
            Policy::Composite(_) => "minGroupCount",
            _ => "minCount",
        }
    }

    /// Whether the group is scheduled pod by pod: `basic` alone, or a Job's policy left out.
    pub fn is_basic(&self) -> bool {
        self.is_defaulted() || (self.has_basic() && !self.has_gang())
    }
}

/// `schedulingConstraints`: the topology keys, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraints<'a> {
    pub topology: Option<Vec<&'a str>>,
}

/// Anything with a `key` field: the topology constraint of every version.
pub(super) trait TopologyKey {
    fn key(&self) -> &str;
}
impl TopologyKey for a2::TopologyConstraint {
    fn key(&self) -> &str {
        &self.key
    }
}
impl TopologyKey for b1::TopologyConstraint {
    fn key(&self) -> &str {
        &self.key
    }
}

impl Serialize for Constraints<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(Serialize)]
        struct Entry<'a> {
            key: &'a str,
        }
        let mut map = s.serialize_map(None)?;
        if let Some(topology) = &self.topology {
            let entries: Vec<Entry> = topology.iter().map(|key| Entry { key }).collect();
            map.serialize_entry("topology", &entries)?;
        }
        map.end()
    }
}

impl<'a> Constraints<'a> {
    pub(super) fn of<T: TopologyKey>(topology: Option<&'a [T]>) -> Constraints<'a> {
        Constraints { topology: topology.map(|t| t.iter().map(TopologyKey::key).collect()) }
    }
}

/// What the apiserver writes into an absent `disruptionMode` of a PodGroup (and, in 1.37, a
/// CompositePodGroup) when it decodes the object, before any validation or webhook: the rules
/// judge that defaulted object. Templates are not defaulted.
pub const DEFAULT_DISRUPTION_136: Disruption<'static> = Disruption::V1alpha2("Pod");
pub const DEFAULT_DISRUPTION_137: Disruption<'static> = Disruption::Union { single: true, all: false };

/// `disruptionMode`: a string in 1.36 (`Pod` | `PodGroup`), the `single`/`all` union in 1.37.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disruption<'a> {
    V1alpha2(&'a str),
    Union { single: bool, all: bool },
}

impl Disruption<'_> {
    pub(super) fn of_137(d: &b1::DisruptionMode) -> Disruption<'static> {
        Disruption::Union { single: d.single.is_some(), all: d.all.is_some() }
    }
}

impl Serialize for Disruption<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Disruption::V1alpha2(mode) => s.serialize_str(mode),
            Disruption::Union { single, all } => {
                let mut map = s.serialize_map(None)?;
                let empty = serde_json::Map::new();
                if *single {
                    map.serialize_entry("single", &empty)?;
                }
                if *all {
                    map.serialize_entry("all", &empty)?;
                }
                map.end()
            }
        }
    }
}

/// One `resourceClaims` entry of a group (or of a Pod). Serialises as the user wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupClaim<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_claim_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_claim_template_name: Option<&'a str>,
}

/// One `status.resourceClaimStatuses` entry. Serialises as the user wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatus<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_claim_name: Option<&'a str>,
}

macro_rules! group_claims {
    ($claims:expr) => {
        $claims.map(|claims| {
            claims
                .iter()
                .map(|c| GroupClaim {
                    name: &c.name,
                    resource_claim_name: c.resource_claim_name.as_deref(),
                    resource_claim_template_name: c.resource_claim_template_name.as_deref(),
                })
                .collect()
        })
    };
}

/// The fields a PodGroupSpec and a PodGroupTemplate share in 1.37.
pub(super) struct GroupFields137<'a> {
    constraints: Option<&'a b1::PodGroupSchedulingConstraints>,
    claims: Option<&'a Vec<b1::PodGroupResourceClaim>>,
    disruption_mode: Option<&'a b1::DisruptionMode>,
    priority_class_name: Option<&'a String>,
    priority: Option<i32>,
    preemption_policy: Option<&'a String>,
}

impl<'a> GroupFields137<'a> {
    pub(super) fn of_template(t: &'a b1::PodGroupTemplate) -> Self {
        GroupFields137 {
            constraints: t.scheduling_constraints.as_ref(),
            claims: t.resource_claims.as_ref(),
            disruption_mode: t.disruption_mode.as_ref(),
            priority_class_name: t.priority_class_name.as_ref(),
            priority: t.priority,
            preemption_policy: t.preemption_policy.as_ref(),
        }
    }

    pub(super) fn of_pod_group(pg: &'a PodGroup137) -> Self {
        let s = &pg.spec;
        GroupFields137 {
            constraints: s.scheduling_constraints.as_ref(),
            claims: s.resource_claims.as_ref(),
            disruption_mode: s.disruption_mode.as_ref(),
            priority_class_name: s.priority_class_name.as_ref(),
            priority: s.priority,
            preemption_policy: s.preemption_policy.as_ref(),
        }
    }
}

/// The fields shared by every holder of a group spec, with the path they sit at.
#[derive(Clone, Debug)]
pub struct GroupSpec<'a> {
    pub origin: GroupOrigin,
    /// `spec` for an object, `spec.podGroupTemplates[i]`,
    /// `spec.compositePodGroupTemplates[i].podGroupTemplates[j]`, ... for a template.
    pub path: Path,
    /// What identifies a template across an update (list items are keyed by name): the
    /// template names from the top, `/a/b`; empty for an object's own spec.
    pub key: String,
    /// A template's name.
    pub name: Option<&'a str>,
    /// The composite template this template sits in (an index into the same list of specs).
    pub parent: Option<usize>,
    /// 1 for a Workload's top-level templates, 0 for an object's own spec.
    pub depth: usize,
    pub scheduling_policy: Policy<'a>,
    pub scheduling_constraints: Option<Constraints<'a>>,
    /// PodGroups and PodGroupTemplates only.
    pub resource_claims: Option<Vec<GroupClaim<'a>>>,
    pub disruption_mode: Option<Disruption<'a>>,
    pub priority_class_name: Option<&'a String>,
    pub priority: Option<i32>,
    /// 1.37 only.
    pub preemption_policy: Option<&'a String>,
    /// A Job's `parallelism` (default 1) and its path: the gang's size when `minCount` is
    /// left out. `None` for every other holder.
    pub job_parallelism: Option<(i32, Path)>,
}

impl<'a> GroupSpec<'a> {
    pub(super) fn of_pod_group_136(pg: &'a PodGroup136) -> GroupSpec<'a> {
        let s = &pg.spec;
        GroupSpec {
            origin: GroupOrigin::PodGroup,
            path: Path::new("spec"),
            key: String::new(),
            name: None,
            parent: None,
            depth: 0,
            scheduling_policy: Policy::V1alpha2(&s.scheduling_policy),
            scheduling_constraints: s.scheduling_constraints.as_ref().map(|c| Constraints::of(c.topology.as_deref())),
            resource_claims: group_claims!(s.resource_claims.as_ref()),
            // Defaulted on decode (with WorkloadAwarePreemption on, which the field needs).
            disruption_mode: s.disruption_mode.as_deref().map(Disruption::V1alpha2).or(Some(DEFAULT_DISRUPTION_136)),
            priority_class_name: s.priority_class_name.as_ref(),
            priority: s.priority,
            preemption_policy: None,
            job_parallelism: None,
        }
    }

    pub(super) fn of_template_136(t: &'a a2::PodGroupTemplate, index: usize) -> GroupSpec<'a> {
        GroupSpec {
            origin: GroupOrigin::WorkloadTemplate,
            path: Path::new("spec").child("podGroupTemplates").index(index),
            key: format!("/{}", t.name),
            name: Some(&t.name),
            parent: None,
            depth: 1,
            scheduling_policy: Policy::V1alpha2(&t.scheduling_policy),
            scheduling_constraints: t.scheduling_constraints.as_ref().map(|c| Constraints::of(c.topology.as_deref())),
            resource_claims: group_claims!(t.resource_claims.as_ref()),
            disruption_mode: t.disruption_mode.as_deref().map(Disruption::V1alpha2),
            priority_class_name: t.priority_class_name.as_ref(),
            priority: t.priority,
            preemption_policy: None,
            job_parallelism: None,
        }
    }

    /// A 1.37 PodGroup's spec (at `path`); templates override origin and place.
    pub(super) fn of_group_137(
        path: Path,
        policy: &'a b1::PodGroupSchedulingPolicy,
        f: GroupFields137<'a>,
    ) -> GroupSpec<'a> {
        GroupSpec {
            origin: GroupOrigin::PodGroup,
            path,
            key: String::new(),
            name: None,
            parent: None,
            depth: 0,
            scheduling_policy: Policy::Group(policy),
            scheduling_constraints: f.constraints.map(|c| Constraints::of(c.topology.as_deref())),
            resource_claims: group_claims!(f.claims),
            disruption_mode: f
                .disruption_mode
                .map(|d| Disruption::Union { single: d.single.is_some(), all: d.all.is_some() }),
            priority_class_name: f.priority_class_name,
            priority: f.priority,
            preemption_policy: f.preemption_policy,
            job_parallelism: None,
        }
    }

    /// A Job's `spec.scheduling`.
    fn of_job(job: &'a BatchJob, s: &'a crate::batch::JobScheduling) -> GroupSpec<'a> {
        let spec = job.spec_path();
        GroupSpec {
            origin: match job.kind {
                crate::batch::BatchKind::Job => GroupOrigin::Job,
                crate::batch::BatchKind::CronJob => GroupOrigin::CronJob,
            },
            path: spec.child("scheduling"),
            key: String::new(),
            name: None,
            parent: None,
            depth: 0,
            scheduling_policy: Policy::Job(s.scheduling_policy.as_ref()),
            scheduling_constraints: s.scheduling_constraints.as_ref().map(|c| Constraints::of(c.topology.as_deref())),
            resource_claims: group_claims!(s.resource_claims.as_ref()),
            disruption_mode: s
                .disruption_mode
                .as_ref()
                .map(|d| Disruption::Union { single: d.single.is_some(), all: d.all.is_some() }),
            priority_class_name: None,
            priority: None,
            preemption_policy: None,
            job_parallelism: Some((job.spec.parallelism(), spec.child("parallelism"))),
        }
    }

    /// Whether the spec is a Kubernetes 1.36 (`v1alpha2`) one.
    pub fn is_136(&self) -> bool {
        matches!(self.scheduling_policy, Policy::V1alpha2(_))
    }

    /// `gang.minCount` when the spec is a gang of pods (not of groups); a Job's gang that
    /// leaves it out has the Job's parallelism (at least 1), as the Job controller compiles it.
    pub fn gang_min_count(&self) -> Option<i32> {
        self.gang_min_count_at().map(|(n, _)| n)
    }

    /// [`GroupSpec::gang_min_count`] and the path of the field that sets it.
    pub fn gang_min_count_at(&self) -> Option<(i32, Path)> {
        let policy = &self.scheduling_policy;
        if self.origin.is_composite() || !policy.has_gang() {
            return None;
        }
        match (policy.gang_size(), &self.job_parallelism) {
            (Some(n), _) => Some((n, self.path.child("schedulingPolicy").child("gang").child("minCount"))),
            (None, Some((parallelism, path))) => Some(((*parallelism).max(1), path.clone())),
            (None, None) => None,
        }
    }

    pub fn is_basic(&self) -> bool {
        self.scheduling_policy.is_basic()
    }

    pub fn topology_keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.scheduling_constraints.iter().flat_map(|c| c.topology.iter().flatten().copied())
    }
}

impl BatchJob {
    /// The Job's `spec.scheduling`, when it asks for workload-aware scheduling.
    pub fn group_spec(&self) -> Option<GroupSpec<'_>> {
        self.spec.scheduling.as_ref().map(|s| GroupSpec::of_job(self, s))
    }
}

//! `scheduling.k8s.io` in every version gangwarden understands, and one view over the group
//! specs those versions repeat.
//!
//! - Kubernetes 1.36 serves `v1alpha2` (k8s-openapi 0.28 types): a Workload holds a flat list
//!   of `podGroupTemplates`; a PodGroup points at one through `spec.podGroupTemplateRef`.
//! - Kubernetes 1.37 serves `v1beta1` and `v1alpha3` with the same shapes (k8s-openapi 0.29
//!   `v1beta1` types read both): a Workload holds either `podGroupTemplates` or a tree of
//!   `compositePodGroupTemplates`; a PodGroup points at its template through `spec.workloadRef`
//!   and at its parent through `spec.parentCompositePodGroupName`; `v1alpha3` also serves the
//!   CompositePodGroup kind.
//!
//! Rules about scheduling policy, topology, claims, disruption and priority are written once
//! against [`GroupSpec`], which every holder of those fields (PodGroup, PodGroupTemplate at any
//! depth, CompositePodGroup, CompositePodGroupTemplate, and a 1.37 `batch/v1` Job's or
//! CronJob's `spec.scheduling`) is read as. Rules that only exist in one version read the
//! typed objects below.

use crate::batch::BatchJob;
use crate::decode::Capped;
use crate::meta::ObjectMeta;
use k8s_openapi::api::scheduling::v1alpha2 as a2;
use k8s_openapi_137::api::scheduling::v1alpha3 as a3;
use k8s_openapi_137::api::scheduling::v1beta1 as b1;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::cluster::{Cluster, LookupError, Query};
use crate::field::Path;

pub const GROUP: &str = "scheduling.k8s.io";

/// A version of `scheduling.k8s.io` gangwarden understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// Kubernetes 1.36.
    V1alpha2,
    /// Kubernetes 1.37, with CompositePodGroup.
    V1alpha3,
    /// Kubernetes 1.37.
    V1beta1,
}

/// The versions a Pod's PodGroup is looked up in by default, newest first.
pub const DEFAULT_LOOKUP_VERSIONS: [&str; 3] = ["v1beta1", "v1alpha3", "v1alpha2"];

/// For messages: what this project reads of the group.
pub const UNDERSTOOD: &str = "scheduling.k8s.io/v1beta1, v1alpha3 and v1alpha2 Workload and PodGroup, scheduling.k8s.io/v1alpha3 CompositePodGroup";

/// The kinds of the group the rules guard.
pub const KINDS: [&str; 3] = ["Workload", "PodGroup", "CompositePodGroup"];

impl Version {
    pub fn parse(version: &str) -> Option<Version> {
        match version {
            "v1alpha2" => Some(Version::V1alpha2),
            "v1alpha3" => Some(Version::V1alpha3),
            "v1beta1" => Some(Version::V1beta1),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1alpha2 => "v1alpha2",
            Version::V1alpha3 => "v1alpha3",
            Version::V1beta1 => "v1beta1",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self {
            Version::V1alpha2 => "scheduling.k8s.io/v1alpha2",
            Version::V1alpha3 => "scheduling.k8s.io/v1alpha3",
            Version::V1beta1 => "scheduling.k8s.io/v1beta1",
        }
    }

    /// Whether this version has the Kubernetes 1.37 shapes.
    pub fn is_137(self) -> bool {
        self != Version::V1alpha2
    }

    /// Whether the version serves `kind` (CompositePodGroup is `v1alpha3` only).
    pub fn serves(self, kind: &str) -> bool {
        match kind {
            "Workload" | "PodGroup" => true,
            "CompositePodGroup" => self == Version::V1alpha3,
            _ => false,
        }
    }
}

/// The only version that serves CompositePodGroups, where parents are looked up.
pub const COMPOSITE_VERSION: Version = Version::V1alpha3;

/// `null` reads as the default, as k8s-openapi reads its own fields.
fn null_as_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A 1.36 Workload (`v1alpha2`), with k8s-openapi's templates. Its template list is
/// [`Capped`]: a Workload with 10,000 templates is rejected for the length alone, so the
/// templates past the maximum are not decoded.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Workload136 {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: WorkloadSpec136,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkloadSpec136 {
    pub controller_ref: Option<a2::TypedLocalObjectReference>,
    pub pod_group_templates: Capped<a2::PodGroupTemplate, MAX_TEMPLATES_PER_LIST>,
}

/// A 1.37 Workload (`v1beta1` or `v1alpha3`). The envelope leaves `apiVersion` to the
/// request, which has checked it, so one type reads both versions.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Workload137 {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: b1::WorkloadSpec,
}

/// A 1.36 PodGroup (`v1alpha2`): k8s-openapi's spec, the narrow metadata, and of the status
/// only the claim statuses (its conditions, and their timestamps, no rule reads).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PodGroup136 {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: a2::PodGroupSpec,
    pub status: Option<PodGroupStatus<a2::PodGroupResourceClaimStatus>>,
}

/// A 1.37 PodGroup (`v1beta1` or `v1alpha3`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PodGroup137 {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: b1::PodGroupSpec,
    pub status: Option<PodGroupStatus<b1::PodGroupResourceClaimStatus>>,
}

/// A PodGroup's `status`, as far as the rules read it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", bound = "S: Deserialize<'de>")]
pub struct PodGroupStatus<S> {
    #[serde(default)]
    pub resource_claim_statuses: Option<Vec<S>>,
}

/// A CompositePodGroup (`v1alpha3` only). Its spec is read with the `v1beta1` building
/// blocks, which have the same shapes, so composite templates and CompositePodGroups share
/// one set of types. Its status holds only conditions, which no rule reads.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CompositePodGroup {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: CompositePodGroupSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CompositePodGroupSpec {
    pub parent_composite_pod_group_name: Option<String>,
    /// Required; `None` when left out.
    pub workload_ref: Option<b1::WorkloadReference>,
    #[serde(deserialize_with = "null_as_default")]
    pub scheduling_policy: b1::CompositePodGroupSchedulingPolicy,
    pub scheduling_constraints: Option<b1::CompositePodGroupSchedulingConstraints>,
    pub disruption_mode: Option<b1::CompositeDisruptionMode>,
    pub priority_class_name: Option<String>,
    pub priority: Option<i32>,
    pub preemption_policy: Option<String>,
}

/// A Workload in any understood version.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    V1alpha2(Workload136),
    V137(Workload137),
}

/// A PodGroup in any understood version.
#[derive(Clone, Debug, PartialEq)]
pub enum PodGroup {
    V1alpha2(PodGroup136),
    V137(PodGroup137),
}

/// Decodes JSON `text`; a 1.36 `disruptionMode` string in a 1.37 object gets a hint.
fn decode<T: DeserializeOwned>(version: Version, text: &str) -> Result<T, String> {
    crate::decode::from_str(text).map_err(|e| {
        if version.is_137() && e.contains("disruptionMode: invalid type: string") {
            format!(
                "{e} (in scheduling.k8s.io/{} disruptionMode is {{\"single\": {{}}}} or {{\"all\": {{}}}}; the 1.36 strings \"Pod\" and \"PodGroup\" are gone)",
                version.as_str()
            )
        } else {
            e
        }
    })
}

impl Workload {
    pub fn decode(version: Version, text: &str) -> Result<Workload, String> {
        Ok(match version {
            Version::V1alpha2 => Workload::V1alpha2(decode(version, text)?),
            _ => Workload::V137(decode(version, text)?),
        })
    }

    pub fn is_137(&self) -> bool {
        matches!(self, Workload::V137(_))
    }

    /// Whether the Workload has a deletion timestamp.
    pub fn is_being_deleted(&self) -> bool {
        match self {
            Workload::V1alpha2(w) => w.metadata.deletion_timestamp.is_some(),
            Workload::V137(w) => w.metadata.deletion_timestamp.is_some(),
        }
    }

    /// Every group spec of the Workload: its templates at every depth.
    pub fn group_specs(&self) -> Vec<GroupSpec<'_>> {
        match self {
            Workload::V1alpha2(w) => w
                .spec
                .pod_group_templates
                .within_maximum()
                .iter()
                .enumerate()
                .map(|(i, t)| GroupSpec::of_template_136(t, i))
                .collect(),
            Workload::V137(w) => w.group_specs(),
        }
    }
}

impl Workload137 {
    /// Every template, depth first: a composite template comes before its children.
    pub fn group_specs(&self) -> Vec<GroupSpec<'_>> {
        let mut out = Vec::new();
        let s = &self.spec;
        walk_templates(
            s.pod_group_templates.as_deref(),
            s.composite_pod_group_templates.as_deref(),
            &Path::new("spec"),
            None,
            &mut out,
        );
        out
    }
}

/// `WorkloadMaxPodGroupTemplates`, the most templates (of each kind) in one list.
pub const MAX_TEMPLATES_PER_LIST: usize = 8;

/// A template list, or nothing when it is longer than the apiserver allows: the gang rule set
/// reports one `Too many` error for it and no rule looks at its templates one by one.
fn within_maximum<T>(list: &[T]) -> &[T] {
    if list.len() > MAX_TEMPLATES_PER_LIST { &[] } else { list }
}

/// Appends the templates of one level (and, depth first, the levels below) to `out`.
fn walk_templates<'a>(
    groups: Option<&'a [b1::PodGroupTemplate]>,
    composites: Option<&'a [b1::CompositePodGroupTemplate]>,
    parent_path: &Path,
    parent: Option<usize>,
    out: &mut Vec<GroupSpec<'a>>,
) {
    let (depth, parent_key) = match parent {
        Some(p) => (out[p].depth + 1, out[p].key.clone()),
        None => (1, String::new()),
    };
    let list = parent_path.child("podGroupTemplates");
    for (i, t) in within_maximum(groups.unwrap_or_default()).iter().enumerate() {
        out.push(GroupSpec {
            origin: GroupOrigin::WorkloadTemplate,
            path: list.index(i),
            key: format!("{parent_key}/{}", t.name),
            name: Some(&t.name),
            parent,
            depth,
            ..GroupSpec::of_group_137(&t.scheduling_policy, GroupFields137::of_template(t))
        });
    }
    let list = parent_path.child("compositePodGroupTemplates");
    for (i, t) in within_maximum(composites.unwrap_or_default()).iter().enumerate() {
        let index = out.len();
        out.push(GroupSpec {
            origin: GroupOrigin::CompositeTemplate,
            path: list.index(i),
            key: format!("{parent_key}/{}", t.name),
            name: Some(&t.name),
            parent,
            depth,
            scheduling_policy: Policy::Composite(&t.scheduling_policy),
            scheduling_constraints: t.scheduling_constraints.as_ref().map(|c| Constraints::of(c.topology.as_deref())),
            resource_claims: None,
            disruption_mode: t
                .disruption_mode
                .as_ref()
                .map(|d| Disruption::Union { single: d.single.is_some(), all: d.all.is_some() }),
            priority_class_name: t.priority_class_name.as_ref(),
            priority: t.priority,
            preemption_policy: t.preemption_policy.as_ref(),
            job_parallelism: None,
        });
        let path = list.index(i);
        walk_templates(
            t.pod_group_templates.as_deref(),
            t.composite_pod_group_templates.as_deref(),
            &path,
            Some(index),
            out,
        );
    }
}

/// A PodGroup's reference to the Workload template it was made from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateRef<'a> {
    pub workload_name: &'a str,
    pub template_name: &'a str,
    /// `spec.podGroupTemplateRef.workload` (1.36) or `spec.workloadRef` (1.37).
    pub path: Path,
    /// `podGroupTemplateName` (1.36) or `templateName` (1.37).
    pub template_field: &'static str,
}

impl<'a> TemplateRef<'a> {
    fn of_137(r: &'a b1::WorkloadReference, path: Path) -> TemplateRef<'a> {
        TemplateRef {
            workload_name: &r.workload_name,
            template_name: &r.template_name,
            path,
            template_field: "templateName",
        }
    }
}

impl PodGroup {
    pub fn decode(version: Version, text: &str) -> Result<PodGroup, String> {
        Ok(match version {
            Version::V1alpha2 => PodGroup::V1alpha2(decode(version, text)?),
            _ => PodGroup::V137(decode(version, text)?),
        })
    }

    /// The spec as the apiserver judges it: an absent `disruptionMode` is its default.
    pub fn group_spec(&self) -> GroupSpec<'_> {
        match self {
            PodGroup::V1alpha2(pg) => GroupSpec::of_pod_group_136(pg),
            PodGroup::V137(pg) => GroupSpec {
                disruption_mode: pg
                    .spec
                    .disruption_mode
                    .as_ref()
                    .map(Disruption::of_137)
                    .or(Some(DEFAULT_DISRUPTION_137)),
                ..GroupSpec::of_group_137(&pg.spec.scheduling_policy, GroupFields137::of_pod_group(pg))
            },
        }
    }

    /// The template reference, when it names a Workload (1.36: the `workload` member of the
    /// union is set).
    pub fn template_ref(&self) -> Option<TemplateRef<'_>> {
        match self {
            PodGroup::V1alpha2(pg) => {
                let w = pg.spec.pod_group_template_ref.as_ref()?.workload.as_ref()?;
                Some(TemplateRef {
                    workload_name: &w.workload_name,
                    template_name: &w.pod_group_template_name,
                    path: Path::new("spec").child("podGroupTemplateRef").child("workload"),
                    template_field: "podGroupTemplateName",
                })
            }
            PodGroup::V137(pg) => {
                pg.spec.workload_ref.as_ref().map(|r| TemplateRef::of_137(r, Path::new("spec").child("workloadRef")))
            }
        }
    }

    /// `spec.resourceClaims`; a missing list and an empty one mean the same.
    pub fn claims(&self) -> Vec<GroupClaim<'_>> {
        self.group_spec().resource_claims.unwrap_or_default()
    }

    /// `status.resourceClaimStatuses` as (name, resourceClaimName).
    pub fn claim_statuses(&self) -> Option<Vec<ClaimStatus<'_>>> {
        match self {
            PodGroup::V1alpha2(pg) => pg.status.as_ref()?.resource_claim_statuses.as_ref().map(|s| {
                s.iter()
                    .map(|s| ClaimStatus { name: &s.name, resource_claim_name: s.resource_claim_name.as_deref() })
                    .collect()
            }),
            PodGroup::V137(pg) => pg.status.as_ref()?.resource_claim_statuses.as_ref().map(|s| {
                s.iter()
                    .map(|s| ClaimStatus { name: &s.name, resource_claim_name: s.resource_claim_name.as_deref() })
                    .collect()
            }),
        }
    }
}

impl CompositePodGroup {
    pub fn decode(text: &str) -> Result<CompositePodGroup, String> {
        decode(COMPOSITE_VERSION, text)
    }

    pub fn group_spec(&self) -> GroupSpec<'_> {
        let s = &self.spec;
        GroupSpec {
            origin: GroupOrigin::CompositePodGroup,
            path: Path::new("spec"),
            key: String::new(),
            name: None,
            parent: None,
            depth: 0,
            scheduling_policy: Policy::Composite(&s.scheduling_policy),
            scheduling_constraints: s.scheduling_constraints.as_ref().map(|c| Constraints::of(c.topology.as_deref())),
            resource_claims: None,
            // Defaulted on decode, as a PodGroup's.
            disruption_mode: s
                .disruption_mode
                .as_ref()
                .map(|d| Disruption::Union { single: d.single.is_some(), all: d.all.is_some() })
                .or(Some(DEFAULT_DISRUPTION_137)),
            priority_class_name: s.priority_class_name.as_ref(),
            priority: s.priority,
            preemption_policy: s.preemption_policy.as_ref(),
            job_parallelism: None,
        }
    }

    pub fn template_ref(&self) -> Option<TemplateRef<'_>> {
        self.spec.workload_ref.as_ref().map(|r| TemplateRef::of_137(r, Path::new("spec").child("workloadRef")))
    }
}

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
trait TopologyKey {
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
    fn of<T: TopologyKey>(topology: Option<&'a [T]>) -> Constraints<'a> {
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
    fn of_137(d: &b1::DisruptionMode) -> Disruption<'static> {
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
struct GroupFields137<'a> {
    constraints: Option<&'a b1::PodGroupSchedulingConstraints>,
    claims: Option<&'a Vec<b1::PodGroupResourceClaim>>,
    disruption_mode: Option<&'a b1::DisruptionMode>,
    priority_class_name: Option<&'a String>,
    priority: Option<i32>,
    preemption_policy: Option<&'a String>,
}

impl<'a> GroupFields137<'a> {
    fn of_template(t: &'a b1::PodGroupTemplate) -> Self {
        GroupFields137 {
            constraints: t.scheduling_constraints.as_ref(),
            claims: t.resource_claims.as_ref(),
            disruption_mode: t.disruption_mode.as_ref(),
            priority_class_name: t.priority_class_name.as_ref(),
            priority: t.priority,
            preemption_policy: t.preemption_policy.as_ref(),
        }
    }

    fn of_pod_group(pg: &'a PodGroup137) -> Self {
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
    fn of_pod_group_136(pg: &'a PodGroup136) -> GroupSpec<'a> {
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

    fn of_template_136(t: &'a a2::PodGroupTemplate, index: usize) -> GroupSpec<'a> {
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

    /// A 1.37 PodGroup's spec; templates override origin, path and place.
    fn of_group_137(policy: &'a b1::PodGroupSchedulingPolicy, f: GroupFields137<'a>) -> GroupSpec<'a> {
        GroupSpec {
            origin: GroupOrigin::PodGroup,
            path: Path::new("spec"),
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

/// Every group spec in a Workload, PodGroup, CompositePodGroup, or a Job's or CronJob's
/// `spec.scheduling` (none for other kinds).
pub fn group_specs(resource: &crate::review::Resource) -> Vec<GroupSpec<'_>> {
    use crate::review::Resource;
    match resource {
        Resource::PodGroup(pg) => vec![pg.group_spec()],
        Resource::CompositePodGroup(cpg) => vec![cpg.group_spec()],
        Resource::Workload(w) => w.group_specs(),
        Resource::BatchJob(job) => job.group_spec().into_iter().collect(),
        Resource::Pod(_) | Resource::Kubeflow(_) | Resource::TrainJob(_) | Resource::Runtime(_) => Vec::new(),
    }
}

/// Looks up a Pod's PodGroup. A Pod names no version, so the versions are tried in order
/// (setting `schedulingApiVersions`): one the cluster does not serve moves on to the next,
/// and the first answer, found or not found, wins (every served version sees the same
/// objects). Returns the version that answered with the object.
pub fn find_pod_group(
    cluster: &dyn Cluster,
    versions: &[Version],
    namespace: &str,
    name: &str,
    field_masks: &[&str],
) -> Result<Option<(Version, Box<RawValue>)>, LookupError> {
    for version in versions {
        let query =
            Query { api_version: version.api_version(), kind: "PodGroup", namespace: Some(namespace), field_masks };
        match cluster.get(&query, name) {
            Ok(found) => return Ok(found.map(|object| (*version, object))),
            Err(LookupError::NotServed { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    let tried: Vec<&str> = versions.iter().map(|v| v.api_version()).collect();
    Err(LookupError::Failed(format!("the cluster serves PodGroups in none of {}", tried.join(", "))))
}

/// Reads the setting `schedulingApiVersions`: known versions, each once, at least one.
pub fn parse_lookup_versions(versions: &[String]) -> Result<Vec<Version>, String> {
    if versions.is_empty() {
        return Err("schedulingApiVersions: must list at least one version".into());
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(versions.len());
    for (i, v) in versions.iter().enumerate() {
        let Some(version) = Version::parse(v) else {
            return Err(format!(
                "schedulingApiVersions[{i}]: Unsupported value: {v:?}: supported values: \"v1beta1\", \"v1alpha3\", \"v1alpha2\""
            ));
        };
        if !seen.insert(version) {
            return Err(format!("schedulingApiVersions[{i}]: Duplicate value: {v:?}"));
        }
        out.push(version);
    }
    Ok(out)
}

/// The default of the setting `schedulingApiVersions`.
pub fn default_lookup_versions() -> Vec<String> {
    DEFAULT_LOOKUP_VERSIONS.iter().map(|v| v.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tree() -> Workload {
        Workload::decode(
            Version::V1beta1,
            &json!({"spec": {"compositePodGroupTemplates": [{
                "name": "job", "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                "schedulingConstraints": {"topology": [{"key": "zone"}]},
                "podGroupTemplates": [{"name": "leader", "schedulingPolicy": {"basic": {}},
                                       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}],
                "compositePodGroupTemplates": [{"name": "inner", "schedulingPolicy": {"basic": {}},
                    "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                           "disruptionMode": {"all": {}}}]}]
            }]}})
            .to_string(),
        )
        .unwrap()
    }

    #[test]
    fn every_template_of_a_tree_is_one_group_spec_with_its_path_and_place() {
        let w = tree();
        let specs = w.group_specs();
        let summary: Vec<(&str, &str, &str, Option<usize>, usize)> = specs
            .iter()
            .map(|g| (g.path.as_str(), g.key.as_str(), g.name.unwrap_or_default(), g.parent, g.depth))
            .collect();
        assert_eq!(
            summary,
            [
                ("spec.compositePodGroupTemplates[0]", "/job", "job", None, 1),
                ("spec.compositePodGroupTemplates[0].podGroupTemplates[0]", "/job/leader", "leader", Some(0), 2),
                ("spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0]", "/job/inner", "inner", Some(0), 2),
                (
                    "spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates[0]",
                    "/job/inner/workers",
                    "workers",
                    Some(2),
                    3
                ),
            ]
        );
        let origins: Vec<GroupOrigin> = specs.iter().map(|g| g.origin).collect();
        assert_eq!(
            origins,
            [
                GroupOrigin::CompositeTemplate,
                GroupOrigin::WorkloadTemplate,
                GroupOrigin::CompositeTemplate,
                GroupOrigin::WorkloadTemplate
            ]
        );
        // A composite's gang counts groups: it is not a pod gang size.
        assert_eq!((specs[0].scheduling_policy.gang_size(), specs[0].gang_min_count()), (Some(2), None));
        assert_eq!(specs[0].topology_keys().collect::<Vec<_>>(), ["zone"]);
        assert_eq!(specs[1].resource_claims.as_ref().map(Vec::len), Some(1));
        assert_eq!(specs[3].disruption_mode, Some(Disruption::Union { single: false, all: true }));
        assert_eq!(serde_json::to_value(specs[3].disruption_mode).unwrap(), json!({"all": {}}));
        assert!(!specs[3].is_136());
    }

    #[test]
    fn v1beta1_and_v1alpha3_read_alike_and_v1alpha2_keeps_its_shapes() {
        let pg = json!({"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "disruptionMode": {"single": {}},
                                 "workloadRef": {"workloadName": "w", "templateName": "t"}}});
        let beta = PodGroup::decode(Version::V1beta1, &pg.to_string()).unwrap();
        let alpha3 = PodGroup::decode(Version::V1alpha3, &pg.to_string()).unwrap();
        assert_eq!(beta, alpha3);
        let r = beta.template_ref().unwrap();
        assert_eq!((r.workload_name, r.template_name, r.path.as_str()), ("w", "t", "spec.workloadRef"));
        let old = PodGroup::decode(
            Version::V1alpha2,
            &json!({"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "disruptionMode": "PodGroup",
                            "podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}}}})
            .to_string(),
        )
        .unwrap();
        let r = old.template_ref().unwrap();
        assert_eq!((r.path.as_str(), r.template_field), ("spec.podGroupTemplateRef.workload", "podGroupTemplateName"));
        assert_eq!(old.group_spec().disruption_mode, Some(Disruption::V1alpha2("PodGroup")));
        assert!(old.group_spec().is_136());
    }

    #[test]
    fn versions_serve_their_kinds() {
        assert!(Version::V1alpha3.serves("CompositePodGroup"));
        assert!(!Version::V1beta1.serves("CompositePodGroup"));
        assert!(Version::V1alpha2.serves("PodGroup") && !Version::V1alpha2.is_137());
        assert_eq!(Version::parse("v1"), None);
        assert_eq!(
            parse_lookup_versions(&default_lookup_versions()).unwrap(),
            [Version::V1beta1, Version::V1alpha3, Version::V1alpha2]
        );
    }
}

//! `scheduling.k8s.io` in every version gangwarden understands, and one view over the group
//! specs those versions repeat.
//!
//! - Kubernetes 1.36 serves `v1alpha2` (k8s-openapi 0.28 types): a Workload holds a flat list
//!   of `podGroupTemplates`; a PodGroup points at one through `spec.podGroupTemplateRef`.
//! - Kubernetes 1.38 is planned to serve them as `v1` too (KEP-4671 GA; KEP-6089 keeps the
//!   JSON): a `v1` Workload or PodGroup is read as the `v1beta1` one, which its JSON is.
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
use crate::decode::{Capped, null_as_default};
use crate::meta::ObjectMeta;
use k8s_openapi::api::scheduling::v1alpha2 as a2;
use k8s_openapi_137::api::scheduling::v1alpha3 as a3;
use k8s_openapi_137::api::scheduling::v1beta1 as b1;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::field::Path;

mod group_spec;
mod lookup;
#[cfg(test)]
mod tests;

pub use group_spec::*;
pub use lookup::*;

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
    /// Kubernetes 1.38 (KEP-4671 GA, KEP-6089): the `v1beta1` JSON, assumed until 1.38's code
    /// can be read; read with the `v1beta1` types.
    V1,
}

/// The versions a Pod's PodGroup is looked up in by default, newest first.
pub const DEFAULT_LOOKUP_VERSIONS: [&str; 4] = ["v1", "v1beta1", "v1alpha3", "v1alpha2"];

/// For messages: what this project reads of the group.
pub const UNDERSTOOD: &str = "scheduling.k8s.io/v1, v1beta1, v1alpha3 and v1alpha2 Workload and PodGroup, scheduling.k8s.io/v1alpha3 CompositePodGroup";

/// The kinds of the group the rules guard.
pub const KINDS: [&str; 3] = ["Workload", "PodGroup", "CompositePodGroup"];

impl Version {
    pub fn parse(version: &str) -> Option<Version> {
        match version {
            "v1alpha2" => Some(Version::V1alpha2),
            "v1alpha3" => Some(Version::V1alpha3),
            "v1beta1" => Some(Version::V1beta1),
            "v1" => Some(Version::V1),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1alpha2 => "v1alpha2",
            Version::V1alpha3 => "v1alpha3",
            Version::V1beta1 => "v1beta1",
            Version::V1 => "v1",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self {
            Version::V1alpha2 => "scheduling.k8s.io/v1alpha2",
            Version::V1alpha3 => "scheduling.k8s.io/v1alpha3",
            Version::V1beta1 => "scheduling.k8s.io/v1beta1",
            Version::V1 => "scheduling.k8s.io/v1",
        }
    }

    /// Whether this version has the Kubernetes 1.37 shapes (1.38's `v1` keeps them).
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
    // Every rule set walks the tree for every request: each string is written once.
    let key = |name: &str| {
        let mut key = String::with_capacity(parent_key.len() + 1 + name.len());
        key.push_str(&parent_key);
        key.push('/');
        key.push_str(name);
        key
    };
    let groups = within_maximum(groups.unwrap_or_default());
    let list = if groups.is_empty() { Path::default() } else { parent_path.child("podGroupTemplates") };
    for (i, t) in groups.iter().enumerate() {
        out.push(GroupSpec {
            origin: GroupOrigin::WorkloadTemplate,
            key: key(&t.name),
            name: Some(&t.name),
            parent,
            depth,
            ..GroupSpec::of_group_137(list.index(i), &t.scheduling_policy, GroupFields137::of_template(t))
        });
    }
    let composites = within_maximum(composites.unwrap_or_default());
    let list = if composites.is_empty() { Path::default() } else { parent_path.child("compositePodGroupTemplates") };
    for (i, t) in composites.iter().enumerate() {
        let index = out.len();
        out.push(GroupSpec {
            origin: GroupOrigin::CompositeTemplate,
            path: list.index(i),
            key: key(&t.name),
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
                ..GroupSpec::of_group_137(
                    Path::new("spec"),
                    &pg.spec.scheduling_policy,
                    GroupFields137::of_pod_group(pg),
                )
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

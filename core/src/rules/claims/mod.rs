//! Rule set 3, claims: the DRA ResourceClaims a PodGroup (a Workload template, a 1.37 Job's
//! `spec.scheduling`) shares with its Pods, and the Pods that are meant to share them. A Pod shares a group claim only when its
//! own claim entry equals the group's in every field; anything else silently gives the Pod a
//! claim of its own (rules.md C-08), which is what most of these rules are about. Ids and
//! catalogue numbers (rules.md) are listed in [`RULES`].

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodResourceClaim;
use serde::Deserialize;

use crate::batch::{BatchJob, BatchKind};
use crate::cluster::{Cluster, LookupError, Query};
use crate::field::{BadValue, FieldError, MAX_VALUE_CHARS, Path, plural, truncated_sorted_list};
use crate::names::{self, check};
use crate::pod::{Pod, PodSpec};
use crate::review::kinds;
use crate::review::{Operation, Resource, Review};
use crate::rules::RuleInfo;
use crate::rules::gang::{find_template, get_workload};
use crate::rules::{Names, RuleSet, names};
use crate::scheduling::{self, GroupClaim as Claim, GroupSpec, PodGroup, Version};
use crate::verdict::Verdict;

mod group;
mod pod;
mod sources;
mod template;
#[cfg(test)]
mod tests;

use group::*;
use pod::*;
use sources::*;
use template::*;

/// `MaxPodGroupResourceClaims` (k8s.io/api scheduling, 1.36 and 1.37).
const MAX_CLAIMS_PER_GROUP: usize = 4;
const RESOURCE_API_VERSION: &str = "resource.k8s.io/v1";

pub const CLAIM_NAME: &str = "claims.claim-name";
pub const CLAIM_SOURCE: &str = "claims.claim-source";
pub const SOURCE_NAME: &str = "claims.source-name";
pub const MAX_CLAIMS: &str = "claims.max-claims";
pub const CLAIM_UNIQUE: &str = "claims.claim-unique";
pub const CLAIMS_IMMUTABLE: &str = "claims.claims-immutable";
pub const POD_CLAIM_MATCH: &str = "claims.pod-claim-match";
pub const GROUP_CLAIM_REQUESTED: &str = "claims.group-claim-requested";
pub const POD_CLAIMS: &str = "claims.pod-claims";
pub const STATUS_CLAIMS: &str = "claims.status-claims";
pub const SOURCE_EXISTS: &str = "claims.source-exists";
pub const TEMPLATE_CLAIMS: &str = "claims.template-claims";
pub const DIRECT_CLAIMS: &str = "claims.direct-claims";
pub const ALLOWED_TEMPLATES: &str = "claims.allowed-templates";
pub const DEVICE_CLASS_EXISTS: &str = "claims.device-class-exists";

/// Every rule of the set, for documentation and the playground.
pub const RULES: &[RuleInfo] = &[
    RuleInfo { id: CLAIM_NAME, catalogue: "C-01", summary: "group claim names are DNS labels" },
    RuleInfo {
        id: CLAIM_SOURCE,
        catalogue: "C-02",
        summary: "a group claim sets exactly one of resourceClaimName or resourceClaimTemplateName",
    },
    RuleInfo { id: SOURCE_NAME, catalogue: "C-03", summary: "claim and template names are DNS subdomains" },
    RuleInfo { id: MAX_CLAIMS, catalogue: "C-04", summary: "a group has at most 4 claims" },
    RuleInfo { id: CLAIM_UNIQUE, catalogue: "C-05", summary: "group claim names are unique" },
    RuleInfo {
        id: CLAIMS_IMMUTABLE,
        catalogue: "C-06",
        summary: "a PodGroup's resourceClaims never change (1.37: nor a Workload template's)",
    },
    RuleInfo {
        id: POD_CLAIM_MATCH,
        catalogue: "C-08, C-09",
        summary: "a Pod's claim that names a group claim equals it, and a group source is not reused under another name",
    },
    RuleInfo {
        id: GROUP_CLAIM_REQUESTED,
        catalogue: "C-10",
        summary: "warn when a Pod does not request one of its group's claims",
    },
    RuleInfo {
        id: POD_CLAIMS,
        catalogue: "C-11",
        summary: "a grouped Pod's own claims are well formed and its containers request only them",
    },
    RuleInfo {
        id: STATUS_CLAIMS,
        catalogue: "C-12",
        summary: "status.resourceClaimStatuses name the PodGroup's claims",
    },
    RuleInfo { id: SOURCE_EXISTS, catalogue: "C-14", summary: "referenced claims and templates exist" },
    RuleInfo {
        id: DEVICE_CLASS_EXISTS,
        catalogue: "C-16",
        summary: "the DeviceClasses the referenced claims' and templates' requests name exist",
    },
    RuleInfo {
        id: TEMPLATE_CLAIMS,
        catalogue: "C-15",
        summary: "a PodGroup copies its template's claims (1.37: the template found through workloadRef at any depth)",
    },
    RuleInfo { id: DIRECT_CLAIMS, catalogue: "setting allowDirectClaims", summary: "claims come from templates only" },
    RuleInfo {
        id: ALLOWED_TEMPLATES,
        catalogue: "setting allowedClaimTemplates",
        summary: "claims come from approved templates only",
    },
];

/// Settings of the claims rule set.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    /// Allow claims that name an existing ResourceClaim (`resourceClaimName`); when false only
    /// `resourceClaimTemplateName` is accepted, so every group gets a claim of its own.
    pub allow_direct_claims: bool,
    /// When set, `resourceClaimTemplateName` must be one of these templates.
    pub allowed_claim_templates: Option<Vec<String>>,
    /// Reject, rather than warn, when a referenced ResourceClaim or ResourceClaimTemplate
    /// does not exist in the namespace, or a DeviceClass their requests name does not exist.
    pub require_claim_sources_exist: bool,
    /// Reject, rather than warn, when a cluster lookup fails.
    pub fail_on_lookup_error: bool,
    /// The `scheduling.k8s.io` versions a Pod's PodGroup is looked up in, in order.
    #[serde(deserialize_with = "crate::rules::read_names")]
    pub scheduling_api_versions: Names,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            allow_direct_claims: true,
            allowed_claim_templates: None,
            require_claim_sources_exist: false,
            fail_on_lookup_error: false,
            scheduling_api_versions: names(&scheduling::DEFAULT_LOOKUP_VERSIONS),
        }
    }
}

pub struct Claims;

impl RuleSet for Claims {
    const NAME: &'static str = "claims";
    const KINDS: u32 = kinds::SCHEDULING | kinds::POD | kinds::BATCH;
    type Settings = Settings;

    fn validate_settings(s: &Settings) -> Result<(), String> {
        for (i, name) in s.allowed_claim_templates.iter().flatten().enumerate() {
            if let Some(msg) = names::is_dns1123_subdomain(name).into_iter().next() {
                return Err(format!("allowedClaimTemplates[{i}]: {name:?} is not a ResourceClaimTemplate name: {msg}"));
            }
        }
        scheduling::parse_lookup_versions(&s.scheduling_api_versions).map(|_| ())
    }

    fn check_groups(settings: &Settings, review: &Review, groups: &[GroupSpec], cluster: &dyn Cluster) -> Verdict {
        let mut v = Verdict::default();
        let ns = review.namespace.as_str();
        // A CronJob's job template may change, and shapes every Job created after: its
        // updates are checked as its creation is.
        let template_of_jobs_to_come = matches!(&review.object, Resource::BatchJob(j) if j.kind == BatchKind::CronJob);
        // Claims of PodGroups, Workload templates, Jobs and Pods are immutable, and the
        // apiserver checked them on create; rejecting an update for them would only block
        // unrelated updates (such as removing the PodGroup's finalizer). Updates only check
        // immutability.
        if review.is_update() && !template_of_jobs_to_come {
            if let Some(old) = &review.old_object {
                check_claims_update(&review.object, old, &mut v);
            }
            return v;
        }
        if review.operation != Operation::Create && !template_of_jobs_to_come {
            return v;
        }
        let mut sources = Vec::new();
        for group in groups {
            sources.extend(check_group_claims(settings, group, &mut v));
        }
        // A Pod template is compared with its Job's claims only when those are well formed:
        // the apiserver rejects the Job otherwise, and the comparison would only repeat it.
        let malformed = [CLAIM_NAME, CLAIM_SOURCE, SOURCE_NAME, MAX_CLAIMS, CLAIM_UNIQUE];
        let group_claims_ok = !v.violations.iter().any(|x| malformed.contains(&x.rule));
        match &review.object {
            Resource::PodGroup(pg) => {
                check_status(pg, &mut v);
                if let Some(version) = review.scheduling_version() {
                    check_against_template(settings, pg, version, ns, cluster, &mut v);
                }
            }
            Resource::Pod(pod) => sources.extend(check_pod(settings, pod, ns, cluster, &mut v)),
            Resource::BatchJob(job) if group_claims_ok => sources.extend(check_job_template(settings, job, &mut v)),
            Resource::BatchJob(_) => {}
            Resource::Workload(_)
            | Resource::CompositePodGroup(_)
            | Resource::Kubeflow(_)
            | Resource::TrainJob(_)
            | Resource::Runtime(_)
            | Resource::VolcanoJob(_)
            | Resource::VolcanoPodGroup(_) => {}
        }
        check_sources_exist(settings, &sources, ns, cluster, &mut v);
        v
    }
}

/// Where a claim's devices come from: an existing ResourceClaim or a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Source<'a> {
    Claim(&'a str),
    Template(&'a str),
}

impl<'a> Source<'a> {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Source::Claim(_) => "ResourceClaim",
            Source::Template(_) => "ResourceClaimTemplate",
        }
    }

    pub(super) fn field(&self) -> &'static str {
        match self {
            Source::Claim(_) => "resourceClaimName",
            Source::Template(_) => "resourceClaimTemplateName",
        }
    }

    pub(super) fn name(&self) -> &'a str {
        match self {
            Source::Claim(n) | Source::Template(n) => n,
        }
    }
}

impl<'a> Claim<'a> {
    /// The source, when exactly one is set.
    pub(super) fn source(&self) -> Option<Source<'a>> {
        match (self.resource_claim_name, self.resource_claim_template_name) {
            (Some(c), None) => Some(Source::Claim(c)),
            (None, Some(t)) => Some(Source::Template(t)),
            _ => None,
        }
    }

    /// The source, when it is well formed enough to look up.
    pub(super) fn valid_source(&self) -> Option<Source<'a>> {
        self.source().filter(|s| names::is_dns1123_subdomain(s.name()).is_empty())
    }
}

/// A source to look up, with the field that names it.
pub(super) type SourceRef<'a> = (Path, Source<'a>);

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
use crate::engine::RuleSet;
use crate::field::{BadValue, FieldError, MAX_VALUE_CHARS, Path, plural, truncated_sorted_list};
use crate::names::{self, check};
use crate::pod::{Pod, PodSpec};
use crate::review::kinds;
use crate::review::{Operation, Resource, Review};
use crate::rules::RuleInfo;
use crate::rules::gang::{find_template, get_workload};
use crate::scheduling::{self, GroupClaim as Claim, GroupSpec, PodGroup, Version, group_specs};
use crate::verdict::Verdict;

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
    /// does not exist in the namespace.
    pub require_claim_sources_exist: bool,
    /// Reject, rather than warn, when a cluster lookup fails.
    pub fail_on_lookup_error: bool,
    /// The `scheduling.k8s.io` versions a Pod's PodGroup is looked up in, in order.
    pub scheduling_api_versions: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            allow_direct_claims: true,
            allowed_claim_templates: None,
            require_claim_sources_exist: false,
            fail_on_lookup_error: false,
            scheduling_api_versions: scheduling::default_lookup_versions(),
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

    fn check(settings: &Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
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
        for group in group_specs(&review.object) {
            sources.extend(check_group_claims(settings, &group, &mut v));
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
            | Resource::Runtime(_) => {}
        }
        check_sources_exist(settings, &sources, ns, cluster, &mut v);
        v
    }
}

// A Pod's claim entries are read as the same [`Claim`] as a group's.
impl<'a> From<&'a PodResourceClaim> for Claim<'a> {
    fn from(c: &'a PodResourceClaim) -> Self {
        Claim {
            name: &c.name,
            resource_claim_name: c.resource_claim_name.as_deref(),
            resource_claim_template_name: c.resource_claim_template_name.as_deref(),
        }
    }
}

/// Where a claim's devices come from: an existing ResourceClaim or a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Source<'a> {
    Claim(&'a str),
    Template(&'a str),
}

impl<'a> Source<'a> {
    fn kind(&self) -> &'static str {
        match self {
            Source::Claim(_) => "ResourceClaim",
            Source::Template(_) => "ResourceClaimTemplate",
        }
    }

    fn field(&self) -> &'static str {
        match self {
            Source::Claim(_) => "resourceClaimName",
            Source::Template(_) => "resourceClaimTemplateName",
        }
    }

    fn name(&self) -> &'a str {
        match self {
            Source::Claim(n) | Source::Template(n) => n,
        }
    }
}

impl<'a> Claim<'a> {
    /// The source, when exactly one is set.
    fn source(&self) -> Option<Source<'a>> {
        match (self.resource_claim_name, self.resource_claim_template_name) {
            (Some(c), None) => Some(Source::Claim(c)),
            (None, Some(t)) => Some(Source::Template(t)),
            _ => None,
        }
    }

    /// The source, when it is well formed enough to look up.
    fn valid_source(&self) -> Option<Source<'a>> {
        self.source().filter(|s| names::is_dns1123_subdomain(s.name()).is_empty())
    }
}

/// A source to look up, with the field that names it.
type SourceRef<'a> = (Path, Source<'a>);

/// C-03 (reported under `rule`) and the source settings, for one entry of any claim list.
fn check_source(settings: &Settings, claim: &Claim, item: &Path, rule: &'static str, v: &mut Verdict) {
    for (field, value) in [
        ("resourceClaimName", claim.resource_claim_name),
        ("resourceClaimTemplateName", claim.resource_claim_template_name),
    ] {
        if let Some(value) = value {
            v.deny_all(rule, names::check_set(&item.child(field), value, names::is_dns1123_subdomain));
        }
    }
    if let Some(name) = claim.resource_claim_name.filter(|_| !settings.allow_direct_claims) {
        v.deny(
            DIRECT_CLAIMS,
            FieldError::forbidden(
                item.child("resourceClaimName"),
                format!("claim {name:?} is shared directly, but only resourceClaimTemplateName is allowed (settings.allowDirectClaims is false)"),
            ),
        );
    }
    if let (Some(name), Some(allowed)) = (claim.resource_claim_template_name, &settings.allowed_claim_templates)
        && !allowed.iter().any(|a| a == name)
    {
        v.deny(ALLOWED_TEMPLATES, FieldError::not_supported(item.child("resourceClaimTemplateName"), name, allowed));
    }
}

/// C-01..C-05 and the source settings for a PodGroup's or Workload template's claims.
/// Returns the well-formed sources, to look up.
fn check_group_claims<'a>(settings: &Settings, g: &GroupSpec<'a>, v: &mut Verdict) -> Vec<SourceRef<'a>> {
    let Some(claims) = &g.resource_claims else { return Vec::new() };
    let path = g.path.child("resourceClaims");
    if claims.len() > MAX_CLAIMS_PER_GROUP {
        // As the apiserver does: one error for the list, no per-item flood.
        v.deny(MAX_CLAIMS, FieldError::too_many(path.clone(), claims.len(), MAX_CLAIMS_PER_GROUP));
        return Vec::new();
    }
    let mut sources = Vec::new();
    let mut seen = HashSet::with_capacity(claims.len());
    for (i, c) in claims.iter().enumerate() {
        let item = path.index(i);
        let claim = *c;
        v.deny_all(CLAIM_NAME, check(&item.child("name"), c.name, true, names::is_dns1123_label));
        match (&c.resource_claim_name, &c.resource_claim_template_name) {
            (None, None) => v.deny(
                CLAIM_SOURCE,
                FieldError::invalid(
                    item.clone(),
                    "",
                    "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
                ),
            ),
            (Some(_), Some(_)) => v.deny(
                CLAIM_SOURCE,
                FieldError::invalid(
                    item.clone(),
                    "{resourceClaimName, resourceClaimTemplateName}",
                    "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`",
                ),
            ),
            _ => {}
        }
        check_source(settings, &claim, &item, SOURCE_NAME, v);
        if !seen.insert(c.name) {
            v.deny(CLAIM_UNIQUE, FieldError::duplicate(item.clone(), BadValue::of(c)));
        }
        if let Some(source) = claim.valid_source() {
            sources.push((item.child(source.field()), source));
        }
    }
    sources
}

/// C-06: a PodGroup's and a Job's claims, and (1.37, where templates may otherwise be edited
/// in place) each Workload template's claims, never change. Templates are matched by their names
/// from the top; an added or removed template is the gang set's business.
fn check_claims_update(new: &Resource, old: &Resource, v: &mut Verdict) {
    match (new, old) {
        (Resource::PodGroup(pg), Resource::PodGroup(old)) if pg.claims() != old.claims() => {
            v.deny(
                CLAIMS_IMMUTABLE,
                FieldError::immutable(Path::new("spec").child("resourceClaims"), BadValue::of(&pg.claims())),
            );
        }
        (Resource::BatchJob(job), Resource::BatchJob(old)) => {
            // `+k8s:immutable`; a missing list and an empty one mean the same.
            fn claims(j: &BatchJob) -> Vec<Claim<'_>> {
                j.group_spec().and_then(|g| g.resource_claims).unwrap_or_default()
            }
            if claims(job) != claims(old) {
                let path = job.spec_path().child("scheduling").child("resourceClaims");
                v.deny(CLAIMS_IMMUTABLE, FieldError::immutable(path, BadValue::of(&claims(job))));
            }
        }
        (Resource::Workload(w), Resource::Workload(old)) if w.is_137() => {
            let old_groups = old.group_specs();
            let old_by_key: HashMap<&str, &GroupSpec> = old_groups.iter().map(|g| (g.key.as_str(), g)).collect();
            for g in w.group_specs() {
                // A missing list and an empty one mean the same.
                if let Some(old) = old_by_key.get(g.key.as_str())
                    && g.resource_claims.as_deref().unwrap_or_default()
                        != old.resource_claims.as_deref().unwrap_or_default()
                {
                    v.deny(
                        CLAIMS_IMMUTABLE,
                        FieldError::immutable(g.path.child("resourceClaims"), BadValue::of(&g.resource_claims)),
                    );
                }
            }
        }
        _ => {}
    }
}

/// C-12: what the resourceclaim controller reports must be about the spec's claims.
fn check_status(pg: &PodGroup, v: &mut Verdict) {
    let Some(statuses) = pg.claim_statuses() else { return };
    let path = Path::new("status").child("resourceClaimStatuses");
    if statuses.len() > MAX_CLAIMS_PER_GROUP {
        v.deny(STATUS_CLAIMS, FieldError::too_many(path.clone(), statuses.len(), MAX_CLAIMS_PER_GROUP));
        return;
    }
    let spec_claims: HashSet<&str> = pg.claims().iter().map(|c| c.name).collect();
    let mut seen = HashSet::with_capacity(statuses.len());
    for (i, s) in statuses.iter().enumerate() {
        let item = path.index(i);
        if !seen.insert(s.name) {
            v.deny(STATUS_CLAIMS, FieldError::duplicate(item.clone(), BadValue::of(s)));
        }
        if !spec_claims.contains(s.name) {
            v.deny(
                STATUS_CLAIMS,
                FieldError::invalid(
                    item.child("name"),
                    s.name,
                    "must match the name of an entry in `spec.resourceClaims`",
                ),
            );
        }
        if let Some(name) = s.resource_claim_name {
            v.deny_all(
                STATUS_CLAIMS,
                names::check_set(&item.child("resourceClaimName"), name, names::is_dns1123_subdomain),
            );
        }
    }
}

/// Claims compared as sets: the list is a map keyed by name, so order carries no meaning.
fn sorted_claims<'a>(claims: &[Claim<'a>]) -> Vec<Claim<'a>> {
    let mut out = claims.to_vec();
    out.sort_by_key(|c| (c.name, c.resource_claim_name, c.resource_claim_template_name));
    out
}

/// C-15: a PodGroup made from a Workload template carries the template's claims (1.37: the
/// template may sit at any depth). A missing Workload or template is the gang set's business
/// (G-18), so it is skipped here.
fn check_against_template(
    settings: &Settings,
    pg: &PodGroup,
    version: Version,
    namespace: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let Some(r) = pg.template_ref() else { return };
    // A malformed reference is rejected by the gang set and cannot be looked up.
    if !names::is_dns1123_subdomain(r.workload_name).is_empty() || !names::is_dns1123_label(r.template_name).is_empty()
    {
        return;
    }
    let workload = match get_workload(cluster, version, namespace, r.workload_name) {
        Ok(Some(w)) => w,
        Ok(None) => return,
        Err(e) => {
            let what = format!("Workload {:?} to compare resourceClaims with its template", r.workload_name);
            v.lookup_failed(TEMPLATE_CLAIMS, r.path.child("workloadName"), &what, &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let templates = workload.group_specs();
    let Some(template) = find_template(&templates, r.template_name, scheduling::GroupOrigin::PodGroup) else {
        return;
    };
    let want = template.resource_claims.clone().unwrap_or_default();
    let have = pg.claims();
    if sorted_claims(&have) != sorted_claims(&want) {
        v.deny(
            TEMPLATE_CLAIMS,
            FieldError::invalid(
                Path::new("spec").child("resourceClaims"),
                BadValue::of(&have),
                format!(
                    "must equal the resourceClaims of Workload {:?} template {:?}: {}",
                    r.workload_name,
                    r.template_name,
                    BadValue::of(&want)
                ),
            ),
        );
    }
}

/// C-11: the core Pod rules for claims (pkg/apis/core/validation), which a Pod that joins a
/// group (or a Job's Pod template) must follow for the comparison with the group to mean
/// anything. `base` is where the Pod spec sits: `spec`, or `spec.template.spec` in a Job.
fn check_pod_claims(spec: &PodSpec, base: &Path, v: &mut Verdict) {
    let path = base.child("resourceClaims");
    let claims = spec.resource_claims.as_deref().unwrap_or_default();
    let mut valid_names = HashSet::with_capacity(claims.len());
    for (i, c) in claims.iter().enumerate() {
        let item = path.index(i);
        let name_path = item.child("name");
        if c.name.is_empty() {
            v.deny(POD_CLAIMS, FieldError::required(name_path, ""));
        } else if valid_names.contains(c.name.as_str()) {
            v.deny(POD_CLAIMS, FieldError::duplicate(name_path, &c.name));
        } else {
            let errors = check(&name_path, &c.name, true, names::is_dns1123_label);
            if errors.is_empty() {
                valid_names.insert(c.name.as_str());
            }
            v.deny_all(POD_CLAIMS, errors);
        }
        match (&c.resource_claim_name, &c.resource_claim_template_name) {
            (Some(_), Some(_)) => v.deny(
                POD_CLAIMS,
                FieldError::invalid(
                    item.clone(),
                    BadValue::of(c),
                    "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
                ),
            ),
            (None, None) => v.deny(
                POD_CLAIMS,
                FieldError::invalid(
                    item.clone(),
                    BadValue::of(c),
                    "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
                ),
            ),
            _ => {}
        }
    }
    // Containers may name any non-empty pod claim name, valid or not (the name itself is
    // reported above).
    let pod_names: HashSet<&str> = claims.iter().map(|c| c.name.as_str()).filter(|n| !n.is_empty()).collect();
    // What an unknown request is told, built at the first one: the names as the apiserver
    // lists them (sorted), cut like a value. Every unknown request repeats it, and a Pod may
    // have thousands of claims and requests.
    let mut unknown_detail: Option<Arc<str>> = None;
    for (field, containers) in
        [("containers", Some(&spec.containers)), ("initContainers", spec.init_containers.as_ref())]
    {
        for (ci, container) in containers.into_iter().flatten().enumerate() {
            let Some(requests) = container.resources.as_ref().and_then(|r| r.claims.as_ref()) else { continue };
            let path = base.child(field).index(ci).child("resources").child("claims");
            let mut seen: HashSet<Cow<str>> = HashSet::with_capacity(requests.len());
            for (j, r) in requests.iter().enumerate() {
                // Built only when something is reported.
                let item = || path.index(j);
                if r.name.is_empty() {
                    v.deny(POD_CLAIMS, FieldError::required(item(), ""));
                    continue;
                }
                let mut key = Cow::Borrowed(r.name.as_str());
                if let Some(request) = r.request.as_ref().filter(|q| !q.is_empty()) {
                    v.deny_all(POD_CLAIMS, check(&item().child("request"), request, true, names::is_dns1123_label));
                    key = Cow::Owned(format!("{}/{request}", r.name));
                }
                if !seen.insert(key.clone()) {
                    v.deny(POD_CLAIMS, FieldError::duplicate(item(), key.as_ref()));
                }
                if !pod_names.contains(r.name.as_str()) {
                    let detail = unknown_detail.get_or_insert_with(|| {
                        if pod_names.is_empty() {
                            return "must be one of the names in pod.spec.resourceClaims which is empty".into();
                        }
                        let listed = truncated_sorted_list(pod_names.iter().copied().collect(), MAX_VALUE_CHARS);
                        format!("must be one of the names in pod.spec.resourceClaims: {listed}").into()
                    });
                    v.deny(POD_CLAIMS, FieldError::not_found(item(), &r.name, detail.clone()));
                }
            }
        }
    }
}

/// The claim names a Pod's containers and init containers request.
fn requested_names(spec: &PodSpec) -> HashSet<&str> {
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .filter_map(|c| c.resources.as_ref().and_then(|r| r.claims.as_ref()))
        .flatten()
        .map(|r| r.name.as_str())
        .collect()
}

/// C-09, C-10, C-11 and the source settings for a Pod that joins a PodGroup. Returns the
/// Pod's well-formed sources, to look up.
fn check_pod<'a>(
    settings: &Settings,
    pod: &'a Pod,
    namespace: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) -> Vec<SourceRef<'a>> {
    let Some(spec) = pod.spec.as_ref() else { return Vec::new() };
    let Some(group_name) = spec.scheduling_group.as_ref().and_then(|g| g.pod_group_name.as_ref()) else {
        return Vec::new();
    };
    // A malformed group name is rejected by the gang set and cannot be looked up.
    if !names::is_dns1123_subdomain(group_name).is_empty() {
        return Vec::new();
    }
    let base = Path::new("spec");
    check_pod_claims(spec, &base, v);
    let claims_path = base.child("resourceClaims");
    let pod_claims: Vec<Claim> = spec.resource_claims.iter().flatten().map(Claim::from).collect();
    let mut sources = Vec::new();
    for (i, claim) in pod_claims.iter().enumerate() {
        let item = claims_path.index(i);
        check_source(settings, claim, &item, POD_CLAIMS, v);
        if let Some(source) = claim.valid_source() {
            sources.push((item.child(source.field()), source));
        }
    }

    let group_path = Path::new("spec").child("schedulingGroup").child("podGroupName");
    // The settings were validated when they were loaded.
    let versions = scheduling::parse_lookup_versions(&settings.scheduling_api_versions).unwrap_or_default();
    let found = scheduling::find_pod_group(cluster, &versions, namespace, group_name, &["spec.resourceClaims"])
        .and_then(|found| {
            found
                .map(|(version, object)| PodGroup::decode(version, object.get()))
                .transpose()
                .map_err(|e| LookupError::Failed(format!("cannot decode PodGroup {group_name:?}: {e}")))
        });
    match found {
        Ok(Some(group)) => {
            let sharer = Sharer { group: format!("PodGroup {group_name:?}"), pods: "this Pod", claims: claims_path };
            compare_with_group(&sharer, &group.claims(), &pod_claims, &requested_names(spec), v)
        }
        Ok(None) => v.warn(
            POD_CLAIM_MATCH,
            group_path,
            format!(
                "PodGroup {group_name:?} does not exist in namespace {namespace:?} yet, so this Pod's resourceClaims could not be compared with the group's claims (a Pod shares a group claim only through an identical entry)"
            ),
        ),
        Err(e) => v.lookup_failed(
            POD_CLAIM_MATCH,
            group_path,
            &format!("PodGroup {group_name:?} to compare this Pod's resourceClaims with the group's"),
            &e,
            settings.fail_on_lookup_error,
        ),
    }
    sources
}

/// Who is meant to share a group's claims, for the messages: a Pod joining a PodGroup, or the
/// Pods a Job creates from its template.
struct Sharer {
    /// `PodGroup "g"`, `the Job's spec.scheduling`.
    group: String,
    /// `this Pod`, `each Pod of the Job`.
    pods: &'static str,
    /// The Pod spec's `resourceClaims`.
    claims: Path,
}

/// C-09 and C-10: a Pod's (or a Job's Pod template's) claims against its group's.
fn compare_with_group(
    sharer: &Sharer,
    group: &[Claim],
    pod_claims: &[Claim],
    requested: &HashSet<&str>,
    v: &mut Verdict,
) {
    let path = &sharer.claims;
    let (owner, pods) = (sharer.group.as_str(), sharer.pods);
    // Group claims whose problem is already reported for this Pod.
    let mut reported = BTreeSet::new();
    for (i, p) in pod_claims.iter().enumerate() {
        // A malformed entry is C-11's to report; comparing it would say the same twice.
        let Some(source) = p.source() else { continue };
        if let Some(g) = group.iter().find(|g| g.name == p.name) {
            reported.insert(g.name);
            if g != p {
                v.deny(
                    POD_CLAIM_MATCH,
                    FieldError::invalid(
                        path.index(i),
                        BadValue::of(p),
                        format!(
                            "has the name of {owner} claim {} but another source, so {pods} would get a claim of its own instead of sharing the group's (copy the group's entry unchanged)",
                            BadValue::of(g)
                        ),
                    ),
                );
            }
        } else if let Some(g) = group.iter().find(|g| g.source() == Some(source)) {
            reported.insert(g.name);
            let consequence = match source {
                Source::Template(_) => format!("{pods} gets a claim of its own generated from the template"),
                Source::Claim(_) => format!("the claim is reserved for {pods} on its own, not through the group"),
            };
            v.warn(
                POD_CLAIM_MATCH,
                path.index(i),
                format!(
                    "{} {:?} is {owner} claim {:?}, but this entry is named {:?}, so {consequence}; name it {:?} to share the group's claim",
                    source.kind(),
                    source.name(),
                    g.name,
                    p.name,
                    g.name
                ),
            );
        }
    }
    for g in group {
        match pod_claims.iter().position(|p| p == g) {
            Some(i) if !requested.contains(g.name) => v.warn(
                GROUP_CLAIM_REQUESTED,
                path.index(i),
                format!(
                    "{owner} claim {:?} is listed, but no container or init container requests it in resources.claims, so {pods} does not use the group's devices",
                    g.name
                ),
            ),
            Some(_) => {}
            None if reported.contains(g.name) => {}
            None => v.warn(
                GROUP_CLAIM_REQUESTED,
                path.clone(),
                format!(
                    "has no entry for {owner} claim {}, so {pods} cannot use the devices allocated for the group; add the entry unchanged and request it in a container's resources.claims",
                    BadValue::of(g)
                ),
            ),
        }
    }
}

/// C-09, C-10, C-11 and the source settings for the Pod template of a 1.37 Job (or a
/// CronJob's job template) that shares claims in `spec.scheduling`: each Pod the Job creates
/// shares a group claim only through an entry equal to it. Returns the template's
/// well-formed sources, to look up.
fn check_job_template<'a>(settings: &Settings, job: &'a BatchJob, v: &mut Verdict) -> Vec<SourceRef<'a>> {
    let Some(group) = job.group_spec() else { return Vec::new() };
    let group_claims = group.resource_claims.unwrap_or_default();
    let Some(spec) = job.spec.template.spec.as_ref().filter(|_| !group_claims.is_empty()) else { return Vec::new() };
    let base = job.spec_path().child("template").child("spec");
    check_pod_claims(spec, &base, v);
    let claims_path = base.child("resourceClaims");
    let pod_claims: Vec<Claim> = spec.resource_claims.iter().flatten().map(Claim::from).collect();
    let mut sources = Vec::new();
    for (i, claim) in pod_claims.iter().enumerate() {
        let item = claims_path.index(i);
        check_source(settings, claim, &item, POD_CLAIMS, v);
        if let Some(source) = claim.valid_source() {
            sources.push((item.child(source.field()), source));
        }
    }
    let sharer = Sharer {
        group: format!("the {}'s {}", job.kind.name(), group.path),
        pods: "each Pod of the Job",
        claims: claims_path,
    };
    compare_with_group(&sharer, &group_claims, &pod_claims, &requested_names(spec), v);
    sources
}

/// The most distinct claim sources one request looks up. A PodGroup has at most 4 claims and
/// a Workload 8 templates of 4, but a Pod's own claims have no upstream maximum, and for
/// policy-server every lookup may be a read from the API server.
pub const MAX_SOURCE_LOOKUPS: usize = 32;

/// C-14: each distinct source is looked up once and reported at its first use; past
/// [`MAX_SOURCE_LOOKUPS`], the rest are reported together as a lookup not made.
fn check_sources_exist(
    settings: &Settings,
    sources: &[SourceRef],
    namespace: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let mut seen = HashSet::with_capacity(sources.len());
    let distinct: Vec<&SourceRef> = sources.iter().filter(|(_, source)| seen.insert(*source)).collect();
    for (path, source) in distinct.iter().take(MAX_SOURCE_LOOKUPS) {
        let query = Query {
            api_version: RESOURCE_API_VERSION,
            kind: source.kind(),
            namespace: Some(namespace),
            field_masks: &["metadata.name"],
        };
        let (kind, name) = (source.kind(), source.name());
        match cluster.get(&query, name) {
            Ok(Some(_)) => {}
            Ok(None) if settings.require_claim_sources_exist => v.deny(
                SOURCE_EXISTS,
                FieldError::not_found(
                    path.clone(),
                    name,
                    format!("no {kind} with this name in namespace {namespace:?} (settings.requireClaimSourcesExist)"),
                ),
            ),
            Ok(None) => v.warn(
                SOURCE_EXISTS,
                path.clone(),
                format!(
                    "{kind} {name:?} does not exist in namespace {namespace:?}, so Pods that use this claim stay Pending until it is created"
                ),
            ),
            Err(e) => {
                v.lookup_failed(SOURCE_EXISTS, path.clone(), &format!("{kind} {name:?}"), &e, settings.fail_on_lookup_error)
            }
        }
    }
    if let Some((path, _)) = distinct.get(MAX_SOURCE_LOOKUPS) {
        let more = distinct.len() - MAX_SOURCE_LOOKUPS;
        let what = plural(more, "more distinct claim source");
        let e = LookupError::Failed(format!("at most {MAX_SOURCE_LOOKUPS} are looked up per request"));
        v.lookup_failed(SOURCE_EXISTS, path.clone(), &what, &e, settings.fail_on_lookup_error);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::cluster::MemoryCluster;
    use crate::engine::parse_settings;

    fn label_msg() -> String {
        names::is_dns1123_label("X").remove(0)
    }

    fn subdomain_msg() -> String {
        names::is_dns1123_subdomain("X").remove(0)
    }

    fn review(op: &str, object: Value, old: Option<Value>) -> Review<'static> {
        let api = object["apiVersion"].as_str().unwrap_or_default().to_string();
        let (group, version) = api.rsplit_once('/').unwrap_or(("", &api));
        let request = json!({
            "operation": op, "namespace": "ml",
            "kind": {"group": group, "version": version, "kind": object["kind"]},
            "object": object, "oldObject": old.unwrap_or(Value::Null),
        });
        crate::review::review_request(&request).unwrap().unwrap()
    }

    fn run(settings: &Settings, object: Value, cluster: &dyn Cluster) -> Verdict {
        Claims::check(settings, &review("CREATE", object, None), cluster)
    }

    fn messages(v: &Verdict) -> Vec<String> {
        v.violations.iter().map(|x| x.to_string()).collect()
    }

    fn pod_group(claims: Value) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
               "metadata": {"name": "train-0", "namespace": "ml"},
               "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": claims}})
    }

    fn workload(claims: Value) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
               "metadata": {"name": "train", "namespace": "ml"},
               "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}},
                                                "resourceClaims": claims}]}})
    }

    fn source(kind: &str, name: &str) -> Value {
        json!({"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": name, "namespace": "ml"}})
    }

    /// A cluster with the sources the examples use.
    fn cluster_with(mut objects: Vec<Value>) -> MemoryCluster {
        objects.push(source("ResourceClaimTemplate", "gpu-template"));
        objects.push(source("ResourceClaim", "shared-nic"));
        MemoryCluster::new(objects).serving(["scheduling.k8s.io/v1alpha2"])
    }

    fn gpu() -> Value {
        json!({"name": "gpu", "resourceClaimTemplateName": "gpu-template"})
    }

    fn pod(claims: Value, requests: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w-0", "namespace": "ml"},
               "spec": {"schedulingGroup": {"podGroupName": "train-0"}, "resourceClaims": claims,
                        "containers": [{"name": "main", "image": "train:1", "resources": {"claims": requests}}]}})
    }

    fn names_of(claims: &[&str]) -> Value {
        Value::Array(claims.iter().map(|n| json!({"name": n})).collect())
    }

    #[test]
    fn well_formed_group_claims_pass_quietly() {
        let claims = json!([gpu(), {"name": "nic", "resourceClaimName": "shared-nic"}]);
        for object in [pod_group(claims.clone()), workload(claims)] {
            let v = run(&Settings::default(), object, &cluster_with(vec![]));
            assert_eq!(v, Verdict::default());
        }
    }

    #[test]
    fn group_claim_shape() {
        // Past the maximum the list gets one error: no per-claim checks, no lookups.
        let six = json!([{"name": "a"}, {"name": "a"}, {"name": "Bad_Name"}, {}, {}, {}]);
        let v = run(&Settings::default(), pod_group(six), &MemoryCluster::default());
        assert_eq!(
            messages(&v),
            vec!["spec.resourceClaims: Too many: 6: must have at most 4 items [claims.max-claims]"]
        );
        assert!(v.warnings.is_empty());

        let claims = json!([
            {"resourceClaimTemplateName": "t"},
            {"name": "Bad_Name", "resourceClaimName": "Bad_Claim"},
            {"name": "none"},
            {"name": "both", "resourceClaimName": "c", "resourceClaimTemplateName": "t"},
        ]);
        let v = run(&Settings::default(), pod_group(claims), &MemoryCluster::default());
        let (label, sub) = (label_msg(), subdomain_msg());
        assert_eq!(
            messages(&v),
            vec![
                "spec.resourceClaims[0].name: Required value [claims.claim-name]".to_string(),
                format!("spec.resourceClaims[1].name: Invalid value: \"Bad_Name\": {label} [claims.claim-name]"),
                format!(
                    "spec.resourceClaims[1].resourceClaimName: Invalid value: \"Bad_Claim\": {sub} [claims.source-name]"
                ),
                "spec.resourceClaims[2]: Invalid value: \"\": must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]".to_string(),
                "spec.resourceClaims[3]: Invalid value: \"{resourceClaimName, resourceClaimTemplateName}\": must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]".to_string(),
            ]
        );
        // Only well-formed sources are looked up, each once: "t" (first used by entry 0), not
        // "c", which shares its entry with a template.
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate \"t\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
            ]
        );

        let claims = json!([
            {"name": "empty", "resourceClaimTemplateName": ""},
            {"name": "none", "resourceClaimTemplateName": "t"},
            {"name": "none", "resourceClaimTemplateName": "t"},
        ]);
        let v = run(&Settings::default(), pod_group(claims), &cluster_with(vec![]));
        assert_eq!(
            messages(&v),
            vec![
                format!("spec.resourceClaims[0].resourceClaimTemplateName: Invalid value: \"\": {sub} [claims.source-name]"),
                "spec.resourceClaims[2]: Duplicate value: {\"name\":\"none\",\"resourceClaimTemplateName\":\"t\"} [claims.claim-unique]".to_string(),
            ]
        );
    }

    #[test]
    fn workload_template_paths() {
        let v = run(&Settings::default(), workload(json!([{"name": "gpu"}])), &MemoryCluster::default());
        assert_eq!(
            messages(&v),
            vec![
                "spec.podGroupTemplates[0].resourceClaims[0]: Invalid value: \"\": must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]"
            ]
        );
        let v = run(&Settings::default(), workload(json!([gpu()])), &MemoryCluster::default());
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.podGroupTemplates[0].resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate \"gpu-template\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
            ]
        );
    }

    #[test]
    fn pod_group_claims_are_immutable_and_updates_check_nothing_else() {
        let failing = MemoryCluster::failing("boom");
        let old = pod_group(json!([gpu()]));
        let changed = pod_group(json!([{"name": "gpu", "resourceClaimTemplateName": "other"}]));
        let v = Claims::check(&Settings::default(), &review("UPDATE", changed, Some(old.clone())), &failing);
        assert_eq!(
            messages(&v),
            vec![
                r#"spec.resourceClaims: Invalid value: [{"name":"gpu","resourceClaimTemplateName":"other"}]: field is immutable [claims.claims-immutable]"#
            ]
        );
        assert!(v.warnings.is_empty());

        // An unchanged object is never blocked (its finalizer must be removable), even when
        // the settings would reject it today, and nothing is looked up.
        let strict = Settings { allowed_claim_templates: Some(vec![]), ..Settings::default() };
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        let v = Claims::check(&strict, &review("UPDATE", labelled, Some(old)), &failing);
        assert_eq!(v, Verdict::default());

        // A missing list and an empty one are the same.
        let none = pod_group(Value::Null);
        let v = Claims::check(&Settings::default(), &review("UPDATE", pod_group(json!([])), Some(none)), &failing);
        assert_eq!(v, Verdict::default());
    }

    #[test]
    fn status_names_match_the_spec() {
        let mut object = pod_group(json!([gpu()]));
        object["status"] = json!({"resourceClaimStatuses": [
            {"name": "gpu", "resourceClaimName": "train-0-gpu-x7k2p"},
            {"name": "nic"},
            {"name": "gpu", "resourceClaimName": "Bad"},
            {"name": "a"},
        ]});
        let v = run(&Settings::default(), object.clone(), &cluster_with(vec![]));
        assert_eq!(
            messages(&v),
            vec![
                "status.resourceClaimStatuses[1].name: Invalid value: \"nic\": must match the name of an entry in `spec.resourceClaims` [claims.status-claims]".to_string(),
                "status.resourceClaimStatuses[2]: Duplicate value: {\"name\":\"gpu\",\"resourceClaimName\":\"Bad\"} [claims.status-claims]".to_string(),
                format!(
                    "status.resourceClaimStatuses[2].resourceClaimName: Invalid value: \"Bad\": {} [claims.status-claims]",
                    subdomain_msg()
                ),
                "status.resourceClaimStatuses[3].name: Invalid value: \"a\": must match the name of an entry in `spec.resourceClaims` [claims.status-claims]".to_string(),
            ]
        );
        object["status"]["resourceClaimStatuses"].as_array_mut().unwrap().push(json!({"name": "b"}));
        let v = run(&Settings::default(), object, &cluster_with(vec![]));
        assert_eq!(
            messages(&v),
            vec!["status.resourceClaimStatuses: Too many: 5: must have at most 4 items [claims.status-claims]"]
        );
    }

    fn from_template(claims: Value) -> Value {
        let mut pg = pod_group(claims);
        pg["spec"]["podGroupTemplateRef"] =
            json!({"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}});
        pg
    }

    #[test]
    fn a_pod_group_copies_its_template_claims() {
        let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
        let cluster = cluster_with(vec![workload(json!([gpu(), nic.clone()]))]);
        // Same claims in another order: the list is keyed by name.
        let v = run(&Settings::default(), from_template(json!([nic.clone(), gpu()])), &cluster);
        assert_eq!(v, Verdict::default());

        let v = run(&Settings::default(), from_template(json!([gpu()])), &cluster);
        assert_eq!(
            messages(&v),
            vec![
                r#"spec.resourceClaims: Invalid value: [{"name":"gpu","resourceClaimTemplateName":"gpu-template"}]: must equal the resourceClaims of Workload "train" template "workers": [{"name":"gpu","resourceClaimTemplateName":"gpu-template"},{"name":"nic","resourceClaimName":"shared-nic"}] [claims.template-claims]"#
            ]
        );

        let cluster = cluster_with(vec![workload(Value::Null)]);
        let v = run(&Settings::default(), from_template(Value::Null), &cluster);
        assert_eq!(v, Verdict::default());
        let v = run(&Settings::default(), from_template(json!([gpu()])), &cluster);
        assert_eq!(
            messages(&v),
            vec![
                r#"spec.resourceClaims: Invalid value: [{"name":"gpu","resourceClaimTemplateName":"gpu-template"}]: must equal the resourceClaims of Workload "train" template "workers": [] [claims.template-claims]"#
            ]
        );
    }

    #[test]
    fn a_missing_workload_or_template_is_left_to_the_gang_set() {
        let v = run(&Settings::default(), from_template(json!([gpu()])), &cluster_with(vec![]));
        assert_eq!(v, Verdict::default());
        let mut other = workload(json!([gpu()]));
        other["spec"]["podGroupTemplates"][0]["name"] = json!("launcher");
        let v = run(&Settings::default(), from_template(json!([])), &cluster_with(vec![other]));
        assert_eq!(v, Verdict::default());
        // A malformed reference is not looked up at all.
        let mut bad = from_template(json!([]));
        bad["spec"]["podGroupTemplateRef"]["workload"]["workloadName"] = json!("Bad");
        let v = run(&Settings::default(), bad, &MemoryCluster::failing("boom"));
        assert_eq!(v, Verdict::default());
    }

    #[test]
    fn failed_lookups_warn_or_fail_closed() {
        let failing = MemoryCluster::failing("connection refused");
        let v = run(&Settings::default(), from_template(json!([gpu()])), &failing);
        assert!(v.violations.is_empty());
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.podGroupTemplateRef.workload.workloadName: cannot look up Workload \"train\" to compare resourceClaims with its template: connection refused; the check was skipped [claims.template-claims]",
                "spec.resourceClaims[0].resourceClaimTemplateName: cannot look up ResourceClaimTemplate \"gpu-template\": connection refused; the check was skipped [claims.source-exists]",
            ]
        );
        let closed = Settings { fail_on_lookup_error: true, ..Settings::default() };
        let v = run(&closed, from_template(json!([gpu()])), &failing);
        assert_eq!(
            messages(&v),
            vec![
                "spec.podGroupTemplateRef.workload.workloadName: Internal error: cannot look up Workload \"train\" to compare resourceClaims with its template: connection refused [claims.template-claims]",
                "spec.resourceClaims[0].resourceClaimTemplateName: Internal error: cannot look up ResourceClaimTemplate \"gpu-template\": connection refused [claims.source-exists]",
            ]
        );
    }

    #[test]
    fn at_most_32_distinct_sources_are_looked_up() {
        // 35 claims, 34 distinct templates (the last repeats the first), none of them there.
        let mut claims: Vec<Value> = (0..34)
            .map(|i| json!({"name": format!("c{i}"), "resourceClaimTemplateName": format!("t{i:02}")}))
            .collect();
        claims.push(json!({"name": "again", "resourceClaimTemplateName": "t00"}));
        let claims = Value::Array(claims);
        let cluster = cluster_with(vec![pod_group(Value::Null)]);
        let v = run(&Settings::default(), pod(claims.clone(), json!([])), &cluster);
        assert!(v.violations.is_empty());
        let warnings: Vec<String> =
            v.warnings.iter().filter(|w| w.rule == SOURCE_EXISTS).map(ToString::to_string).collect();
        assert_eq!(warnings.len(), 33, "{warnings:#?}");
        assert_eq!(
            warnings[31],
            "spec.resourceClaims[31].resourceClaimTemplateName: ResourceClaimTemplate \"t31\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
        );
        assert_eq!(
            warnings[32],
            "spec.resourceClaims[32].resourceClaimTemplateName: cannot look up 2 more distinct claim sources: at most 32 are looked up per request; the check was skipped [claims.source-exists]"
        );
        let closed = Settings { fail_on_lookup_error: true, ..Settings::default() };
        let v = run(&closed, pod(claims, json!([])), &cluster);
        assert_eq!(
            messages(&v),
            vec![
                "spec.resourceClaims[32].resourceClaimTemplateName: Internal error: cannot look up 2 more distinct claim sources: at most 32 are looked up per request [claims.source-exists]"
            ]
        );
    }

    #[test]
    fn missing_sources_warn_or_are_rejected() {
        let claims = json!([{"name": "a", "resourceClaimName": "gone"}, {"name": "b", "resourceClaimName": "gone"}]);
        let v = run(&Settings::default(), pod_group(claims.clone()), &MemoryCluster::default());
        assert!(v.violations.is_empty());
        // Each source is looked up and reported once.
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.resourceClaims[0].resourceClaimName: ResourceClaim \"gone\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
            ]
        );
        let strict = Settings { require_claim_sources_exist: true, ..Settings::default() };
        let v = run(&strict, pod_group(claims), &MemoryCluster::default());
        assert_eq!(
            messages(&v),
            vec![
                "spec.resourceClaims[0].resourceClaimName: Not found: \"gone\": no ResourceClaim with this name in namespace \"ml\" (settings.requireClaimSourcesExist) [claims.source-exists]"
            ]
        );
        // A source in another namespace does not count.
        let mut elsewhere = source("ResourceClaim", "gone");
        elsewhere["metadata"]["namespace"] = json!("other");
        let v = run(
            &strict,
            pod_group(json!([{"name": "a", "resourceClaimName": "gone"}])),
            &MemoryCluster::new(vec![elsewhere]),
        );
        assert_eq!(v.violations.len(), 1);
    }

    fn tree(claims: Value) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "Workload", "metadata": {"name": "train", "namespace": "ml"},
            "spec": {"compositePodGroupTemplates": [{"name": "job", "schedulingPolicy": {"basic": {}},
                "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": claims}]}]}})
    }

    #[test]
    fn nested_templates_in_1_37() {
        let messages = |v: Verdict| v.violations.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let at = "spec.compositePodGroupTemplates[0].podGroupTemplates[0].resourceClaims";
        let update = review("UPDATE", tree(json!([gpu(), gpu()])), Some(tree(json!([gpu()]))));
        assert_eq!(
            messages(Claims::check(&Settings::default(), &update, &cluster_with(vec![]))),
            [format!(
                r#"{at}: Invalid value: [{{"name":"gpu","resourceClaimTemplateName":"gpu-template"}},{{"name":"gpu","resourceClaimTemplateName":"gpu-template"}}]: field is immutable [claims.claims-immutable]"#
            )]
        );
        let created = run(&Settings::default(), tree(json!([gpu(), gpu()])), &cluster_with(vec![]));
        assert_eq!(
            messages(created),
            [format!(
                "{at}[1]: Duplicate value: {{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"gpu-template\"}} [claims.claim-unique]"
            )]
        );
        // A v1alpha3 PodGroup finds its template at depth 2 in the v1alpha3 Workload.
        let pg = json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}},
                     "workloadRef": {"workloadName": "train", "templateName": "workers"}}});
        let v = run(&Settings::default(), pg, &MemoryCluster::new(vec![tree(json!([gpu()]))]));
        assert_eq!(
            messages(v),
            [
                "spec.resourceClaims: Invalid value: []: must equal the resourceClaims of Workload \"train\" template \"workers\": [{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"gpu-template\"}] [claims.template-claims]"
            ]
        );
    }

    #[test]
    fn source_settings() {
        let settings = Settings {
            allow_direct_claims: false,
            allowed_claim_templates: Some(vec!["gpu-template".into(), "fpga-template".into()]),
            ..Settings::default()
        };
        let claims = json!([gpu(), {"name": "nic", "resourceClaimName": "shared-nic"}, {"name": "x", "resourceClaimTemplateName": "other"}]);
        let cluster = cluster_with(vec![source("ResourceClaimTemplate", "other")]);
        let v = run(&settings, pod_group(claims), &cluster);
        assert_eq!(
            messages(&v),
            vec![
                "spec.resourceClaims[1].resourceClaimName: Forbidden: claim \"shared-nic\" is shared directly, but only resourceClaimTemplateName is allowed (settings.allowDirectClaims is false) [claims.direct-claims]",
                "spec.resourceClaims[2].resourceClaimTemplateName: Unsupported value: \"other\": supported values: \"gpu-template\", \"fpga-template\" [claims.allowed-templates]",
            ]
        );
        // The same settings apply to a grouped Pod's own claims.
        let group = pod_group(json!([gpu()]));
        let object = pod(json!([gpu(), {"name": "nic", "resourceClaimName": "shared-nic"}]), names_of(&["gpu", "nic"]));
        let v = run(&settings, object, &cluster_with(vec![group]));
        assert_eq!(
            messages(&v),
            vec![
                "spec.resourceClaims[1].resourceClaimName: Forbidden: claim \"shared-nic\" is shared directly, but only resourceClaimTemplateName is allowed (settings.allowDirectClaims is false) [claims.direct-claims]"
            ]
        );
    }

    #[test]
    fn a_pod_sharing_its_group_claims_passes_quietly() {
        let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
        let cluster = cluster_with(vec![pod_group(json!([gpu(), nic.clone()]))]);
        let mut object =
            pod(json!([gpu(), nic, {"name": "own", "resourceClaimTemplateName": "gpu-template"}]), names_of(&["gpu"]));
        // An init container's request counts too.
        object["spec"]["initContainers"] =
            json!([{"name": "init", "image": "i", "resources": {"claims": [{"name": "nic"}]}}]);
        let v = run(&Settings::default(), object, &cluster);
        assert!(v.violations.is_empty(), "{:?}", messages(&v));
        // "own" reuses the group's template under another name: the one warning.
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.resourceClaims[2]: ResourceClaimTemplate \"gpu-template\" is PodGroup \"train-0\" claim \"gpu\", but this entry is named \"own\", so this Pod gets a claim of its own generated from the template; name it \"gpu\" to share the group's claim [claims.pod-claim-match]"
            ]
        );
    }

    #[test]
    fn a_pod_claim_with_the_group_name_but_another_source_is_rejected() {
        let cluster = cluster_with(vec![pod_group(json!([gpu()])), source("ResourceClaimTemplate", "other")]);
        let object = pod(json!([{"name": "gpu", "resourceClaimTemplateName": "other"}]), names_of(&["gpu"]));
        let v = run(&Settings::default(), object, &cluster);
        assert_eq!(
            messages(&v),
            vec![
                r#"spec.resourceClaims[0]: Invalid value: {"name":"gpu","resourceClaimTemplateName":"other"}: has the name of PodGroup "train-0" claim {"name":"gpu","resourceClaimTemplateName":"gpu-template"} but another source, so this Pod would get a claim of its own instead of sharing the group's (copy the group's entry unchanged) [claims.pod-claim-match]"#
            ]
        );
        // The mismatch is the one report: the group claim is not also called unrequested.
        assert!(v.warnings.is_empty());
    }

    #[test]
    fn a_shared_claim_under_another_name_warns() {
        let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
        let cluster = cluster_with(vec![pod_group(json!([nic]))]);
        let object = pod(json!([{"name": "net", "resourceClaimName": "shared-nic"}]), names_of(&["net"]));
        let v = run(&Settings::default(), object, &cluster);
        assert!(v.violations.is_empty());
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.resourceClaims[0]: ResourceClaim \"shared-nic\" is PodGroup \"train-0\" claim \"nic\", but this entry is named \"net\", so the claim is reserved for this Pod on its own, not through the group; name it \"nic\" to share the group's claim [claims.pod-claim-match]"
            ]
        );
    }

    #[test]
    fn group_claims_a_pod_does_not_request_warn() {
        let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
        let cluster = cluster_with(vec![pod_group(json!([gpu(), nic]))]);
        let v = run(&Settings::default(), pod(json!([gpu()]), json!([])), &cluster);
        assert!(v.violations.is_empty());
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.resourceClaims[0]: PodGroup \"train-0\" claim \"gpu\" is listed, but no container or init container requests it in resources.claims, so this Pod does not use the group's devices [claims.group-claim-requested]",
                r#"spec.resourceClaims: has no entry for PodGroup "train-0" claim {"name":"nic","resourceClaimName":"shared-nic"}, so this Pod cannot use the devices allocated for the group; add the entry unchanged and request it in a container's resources.claims [claims.group-claim-requested]"#,
            ]
        );
    }

    #[test]
    fn a_missing_pod_group_warns_without_rejecting() {
        let v = run(&Settings::default(), pod(json!([gpu()]), names_of(&["gpu"])), &cluster_with(vec![]));
        assert!(v.violations.is_empty());
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.schedulingGroup.podGroupName: PodGroup \"train-0\" does not exist in namespace \"ml\" yet, so this Pod's resourceClaims could not be compared with the group's claims (a Pod shares a group claim only through an identical entry) [claims.pod-claim-match]"
            ]
        );
        let v = run(&Settings::default(), pod(json!([]), json!([])), &MemoryCluster::failing("timeout"));
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.schedulingGroup.podGroupName: cannot look up PodGroup \"train-0\" to compare this Pod's resourceClaims with the group's: timeout; the check was skipped [claims.pod-claim-match]"
            ]
        );
    }

    #[test]
    fn unknown_requests_list_the_pod_claim_names_cut_like_a_value() {
        // 300 claims, two unknown requests: each error names the claims, sorted, but no more
        // than a value's 256 characters (the whole list would be 2,098 bytes per error).
        let claims: Vec<Value> = (0..300)
            .rev()
            .map(|i| json!({"name": format!("c-{i:03}"), "resourceClaimTemplateName": "gpu-template"}))
            .collect();
        let requests = json!([{"name": "c-007"}, {"name": "ghost"}, {"name": "phantom"}]);
        let cluster = cluster_with(vec![pod_group(Value::Null)]);
        let v = run(&Settings::default(), pod(Value::Array(claims), requests), &cluster);
        let first: Vec<String> = (0..36).map(|i| format!("c-{i:03}")).collect();
        let listed = format!("{}, c-03...(1842 more bytes)", first.join(", "));
        assert_eq!(
            messages(&v),
            vec![
                format!(
                    "spec.containers[0].resources.claims[1]: Not found: \"ghost\": must be one of the names in pod.spec.resourceClaims: {listed} [claims.pod-claims]"
                ),
                format!(
                    "spec.containers[0].resources.claims[2]: Not found: \"phantom\": must be one of the names in pod.spec.resourceClaims: {listed} [claims.pod-claims]"
                ),
            ]
        );
    }

    #[test]
    fn pod_core_claim_rules() {
        let claims = json!([
            {"resourceClaimName": "a"},
            {"name": "x", "resourceClaimName": "a", "resourceClaimTemplateName": "t"},
            {"name": "x", "resourceClaimTemplateName": "t"},
            {"name": "Bad", "resourceClaimTemplateName": "T"},
            {"name": "none"},
        ]);
        let requests = json!([{"name": "x"}, {"name": "x"}, {"name": "ghost"}, {}, {"name": "x", "request": "R"}]);
        let cluster = cluster_with(vec![pod_group(Value::Null), source("ResourceClaim", "a")]);
        let v = run(&Settings::default(), pod(claims, requests), &cluster);
        let (label, sub) = (label_msg(), subdomain_msg());
        assert_eq!(
            messages(&v),
            vec![
                "spec.resourceClaims[0].name: Required value [claims.pod-claims]".to_string(),
                r#"spec.resourceClaims[1]: Invalid value: {"name":"x","resourceClaimName":"a","resourceClaimTemplateName":"t"}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified [claims.pod-claims]"#.to_string(),
                "spec.resourceClaims[2].name: Duplicate value: \"x\" [claims.pod-claims]".to_string(),
                format!("spec.resourceClaims[3].name: Invalid value: \"Bad\": {label} [claims.pod-claims]"),
                r#"spec.resourceClaims[4]: Invalid value: {"name":"none"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.pod-claims]"#.to_string(),
                "spec.containers[0].resources.claims[1]: Duplicate value: \"x\" [claims.pod-claims]".to_string(),
                "spec.containers[0].resources.claims[2]: Not found: \"ghost\": must be one of the names in pod.spec.resourceClaims: Bad, none, x [claims.pod-claims]".to_string(),
                "spec.containers[0].resources.claims[3]: Required value [claims.pod-claims]".to_string(),
                format!("spec.containers[0].resources.claims[4].request: Invalid value: \"R\": {label} [claims.pod-claims]"),
                format!("spec.resourceClaims[3].resourceClaimTemplateName: Invalid value: \"T\": {sub} [claims.pod-claims]"),
            ]
        );
        // Well-formed sources are still looked up ("a" exists, "t" does not).
        assert_eq!(
            v.warning_messages(),
            vec![
                "spec.resourceClaims[2].resourceClaimTemplateName: ResourceClaimTemplate \"t\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
            ]
        );
    }

    #[test]
    fn pods_outside_a_group_and_pod_updates_are_left_alone() {
        let failing = MemoryCluster::failing("boom");
        let mut loose = pod(json!([{"name": "x"}]), names_of(&["ghost"]));
        loose["spec"]["schedulingGroup"] = Value::Null;
        assert_eq!(run(&Settings::default(), loose, &failing), Verdict::default());
        // A malformed group name is the gang set's to report, and is not looked up.
        let mut bad = pod(json!([]), json!([]));
        bad["spec"]["schedulingGroup"]["podGroupName"] = json!("Bad Name");
        assert_eq!(run(&Settings::default(), bad, &failing), Verdict::default());
        let p = pod(json!([{"name": "x"}]), json!([]));
        let v = Claims::check(&Settings::default(), &review("UPDATE", p.clone(), Some(p)), &failing);
        assert_eq!(v, Verdict::default());
    }

    #[test]
    fn settings_are_validated() {
        let defaults = parse_settings::<Claims>(&Value::Null).unwrap();
        assert_eq!(defaults, Settings::default());
        assert!(
            defaults.allow_direct_claims && !defaults.require_claim_sources_exist && !defaults.fail_on_lookup_error
        );
        let parsed = parse_settings::<Claims>(&json!({"allowDirectClaims": false, "allowedClaimTemplates": ["gpu"],
            "requireClaimSourcesExist": true, "failOnLookupError": true}))
        .unwrap();
        assert_eq!(
            parsed,
            Settings {
                allow_direct_claims: false,
                allowed_claim_templates: Some(vec!["gpu".into()]),
                require_claim_sources_exist: true,
                fail_on_lookup_error: true,
                scheduling_api_versions: vec!["v1beta1".into(), "v1alpha3".into(), "v1alpha2".into()],
            }
        );
        assert_eq!(
            parse_settings::<Claims>(&json!({"allowedClaimTemplates": ["gpu", "GPU_x"]})).unwrap_err(),
            format!(
                "invalid claims settings: allowedClaimTemplates[1]: \"GPU_x\" is not a ResourceClaimTemplate name: {}",
                subdomain_msg()
            )
        );
        assert_eq!(
            parse_settings::<Claims>(&json!({"allowDirectClaim": false})).unwrap_err(),
            "invalid claims settings: allowDirectClaim: unknown field `allowDirectClaim`, expected one of `allowDirectClaims`, `allowedClaimTemplates`, `requireClaimSourcesExist`, `failOnLookupError`, `schedulingApiVersions`"
        );
        let wrong = parse_settings::<Claims>(&json!({"allowDirectClaims": "no"})).unwrap_err();
        assert_eq!(
            wrong,
            "invalid claims settings: allowDirectClaims: invalid type: string \"no\", expected a boolean"
        );
    }

    #[test]
    fn every_rule_is_listed_once() {
        let ids: BTreeSet<&str> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
        assert!(RULES.iter().all(|r| r.id.starts_with("claims.")));
    }
}

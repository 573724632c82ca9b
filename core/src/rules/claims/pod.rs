//! The claims of a Pod that joins a group, and of a 1.37 Job's Pod template: the core Pod rules
//! for claims, and each entry against the group's (a Pod shares a group claim only through an
//! identical entry).

use super::*;

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

/// C-11: the core Pod rules for claims (pkg/apis/core/validation), which a Pod that joins a
/// group (or a Job's Pod template) must follow for the comparison with the group to mean
/// anything. `base` is where the Pod spec sits: `spec`, or `spec.template.spec` in a Job.
pub(super) fn check_pod_claims(spec: &PodSpec, base: &Path, v: &mut Verdict) {
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
            let errors = check(item.field("name"), &c.name, true, names::is_dns1123_label);
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
                    v.deny_all(POD_CLAIMS, check(item().field("request"), request, true, names::is_dns1123_label));
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
pub(super) fn requested_names(spec: &PodSpec) -> HashSet<&str> {
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .filter_map(|c| c.resources.as_ref().and_then(|r| r.claims.as_ref()))
        .flatten()
        .map(|r| r.name.as_str())
        .collect()
}

/// C-11 and the source settings for the claims of the Pod spec at `base`: its claims, and
/// the well-formed sources among them, to look up.
fn own_claims<'a>(
    settings: &Settings,
    spec: &'a PodSpec,
    base: &Path,
    v: &mut Verdict,
) -> (Vec<Claim<'a>>, Vec<SourceRef<'a>>) {
    check_pod_claims(spec, base, v);
    let claims_path = base.child("resourceClaims");
    let claims: Vec<Claim> = spec.resource_claims.iter().flatten().map(Claim::from).collect();
    let mut sources = Vec::new();
    for (i, claim) in claims.iter().enumerate() {
        let item = claims_path.index(i);
        check_source(settings, claim, &item, POD_CLAIMS, v);
        if let Some(source) = claim.valid_source() {
            sources.push((item.child(source.field()), source));
        }
    }
    (claims, sources)
}

/// C-09, C-10, C-11 and the source settings for a Pod that joins a PodGroup. Returns the
/// Pod's well-formed sources, to look up.
pub(super) fn check_pod<'a>(
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
    let (pod_claims, sources) = own_claims(settings, spec, &base, v);
    let claims_path = base.child("resourceClaims");

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
pub(super) struct Sharer {
    /// `PodGroup "g"`, `the Job's spec.scheduling`.
    group: String,
    /// `this Pod`, `each Pod of the Job`.
    pods: &'static str,
    /// The Pod spec's `resourceClaims`.
    claims: Path,
}

/// C-09 and C-10: a Pod's (or a Job's Pod template's) claims against its group's.
pub(super) fn compare_with_group(
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
pub(super) fn check_job_template<'a>(settings: &Settings, job: &'a BatchJob, v: &mut Verdict) -> Vec<SourceRef<'a>> {
    let Some(group) = job.group_spec() else { return Vec::new() };
    let group_claims = group.resource_claims.unwrap_or_default();
    let Some(spec) = job.spec.template.spec.as_ref().filter(|_| !group_claims.is_empty()) else { return Vec::new() };
    let base = job.spec_path().child("template").child("spec");
    let (pod_claims, sources) = own_claims(settings, spec, &base, v);
    let claims_path = base.child("resourceClaims");
    let sharer = Sharer {
        group: format!("the {}'s {}", job.kind.name(), group.path),
        pods: "each Pod of the Job",
        claims: claims_path,
    };
    compare_with_group(&sharer, &group_claims, &pod_claims, &requested_names(spec), v);
    sources
}

//! The claims a group holds (a PodGroup, a Workload template, a Job's `spec.scheduling`):
//! their names and sources, their count, uniqueness and immutability, and a PodGroup's status.

use super::*;

/// C-03 (reported under `rule`) and the source settings, for one entry of any claim list.
pub(super) fn check_source(settings: &Settings, claim: &Claim, item: &Path, rule: &'static str, v: &mut Verdict) {
    for (field, value) in [
        ("resourceClaimName", claim.resource_claim_name),
        ("resourceClaimTemplateName", claim.resource_claim_template_name),
    ] {
        if let Some(value) = value {
            v.deny_all(rule, names::check_set(item.field(field), value, names::is_dns1123_subdomain));
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
pub(super) fn check_group_claims<'a>(settings: &Settings, g: &GroupSpec<'a>, v: &mut Verdict) -> Vec<SourceRef<'a>> {
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
        v.deny_all(CLAIM_NAME, check(item.field("name"), c.name, true, names::is_dns1123_label));
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
pub(super) fn check_claims_update(new: &Resource, old: &Resource, v: &mut Verdict) {
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
pub(super) fn check_status(pg: &PodGroup, v: &mut Verdict) {
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
                names::check_set(item.field("resourceClaimName"), name, names::is_dns1123_subdomain),
            );
        }
    }
}

/// Claims compared as sets: the list is a map keyed by name, so order carries no meaning.
pub(super) fn sorted_claims<'a>(claims: &[Claim<'a>]) -> Vec<Claim<'a>> {
    let mut out = claims.to_vec();
    let key = |c: &Claim<'a>| (c.name, c.resource_claim_name, c.resource_claim_template_name);
    crate::order::sort_by(&mut out, |a, b| key(a).cmp(&key(b)));
    out
}

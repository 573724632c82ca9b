//! Looking up the ResourceClaims and ResourceClaimTemplates the claims name.

use super::*;

/// The most distinct claim sources one request looks up. A PodGroup has at most 4 claims and
/// a Workload 8 templates of 4, but a Pod's own claims have no upstream maximum, and for
/// policy-server every lookup may be a read from the API server.
pub const MAX_SOURCE_LOOKUPS: usize = 32;

/// C-14: each distinct source is looked up once and reported at its first use; past
/// [`MAX_SOURCE_LOOKUPS`], the rest are reported together as a lookup not made.
pub(super) fn check_sources_exist(
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

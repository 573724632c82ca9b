//! Looking up the ResourceClaims and ResourceClaimTemplates the claims name.

use super::*;
use crate::capacity::devices::{CLAIM_SOURCE_MASKS, device_class_query};

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
    let mut classes: Vec<(&Path, String, String, String)> = Vec::new();
    for (path, source) in distinct.iter().take(MAX_SOURCE_LOOKUPS) {
        let query = Query {
            api_version: RESOURCE_API_VERSION,
            kind: source.kind(),
            namespace: Some(namespace),
            field_masks: CLAIM_SOURCE_MASKS,
        };
        let (kind, name) = (source.kind(), source.name());
        match cluster.get(&query, name) {
            Ok(Some(found)) => {
                let what = format!("{kind} {name:?}");
                for (request, class) in class_names(found.get()) {
                    classes.push((path, what.clone(), request, class));
                }
            }
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
    check_classes_exist(settings, &classes, cluster, v);
}

/// The DeviceClass each request of a claim's (or a template's) spec names, with the request's
/// name (`request/subrequest` for a `firstAvailable` alternative), from the object's JSON text.
fn class_names(object: &str) -> Vec<(String, String)> {
    let Ok(object) = serde_json::from_str::<serde_json::Value>(object) else { return Vec::new() };
    let requests = object.pointer("/spec/devices/requests").or_else(|| object.pointer("/spec/spec/devices/requests"));
    let mut out = Vec::new();
    for r in requests.and_then(|r| r.as_array()).map(Vec::as_slice).unwrap_or_default() {
        let name = r.get("name").and_then(|n| n.as_str()).unwrap_or_default();
        let class = |v: &serde_json::Value| v.get("deviceClassName").and_then(|c| c.as_str()).map(str::to_string);
        if let Some(c) = r.get("exactly").and_then(class) {
            out.push((name.to_string(), c));
        }
        for sub in r.get("firstAvailable").and_then(|f| f.as_array()).map(Vec::as_slice).unwrap_or_default() {
            let sub_name = sub.get("name").and_then(|n| n.as_str()).unwrap_or_default();
            if let Some(c) = class(sub) {
                out.push((format!("{name}/{sub_name}"), c));
            }
        }
    }
    out
}

/// C-16: every DeviceClass a request (or a `firstAvailable` alternative) names exists. The
/// scheduler reports `device class <c> does not exist` and retries when one is created, so a
/// missing class is a warning unless `requireClaimSourcesExist`. The classes are read from one
/// fixed list of every DeviceClass (the topology rules' query: never a name the request
/// supplies), only when some request names one; each distinct class is reported at its first
/// use.
fn check_classes_exist(
    settings: &Settings,
    classes: &[(&Path, String, String, String)],
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let mut seen = HashSet::new();
    let distinct: Vec<_> = classes
        .iter()
        .filter(|(_, _, _, class)| names::is_dns1123_subdomain(class).is_empty() && seen.insert(class))
        .collect();
    if distinct.is_empty() {
        return;
    }
    let listed = cluster.list(&device_class_query()).and_then(|list| {
        listed_names(&list).map_err(|e| LookupError::Failed(format!("cannot read the DeviceClass list: {e}")))
    });
    for (path, what, request, class) in distinct {
        match listed.as_ref().map(|names| names.contains(class)) {
            Ok(true) => {}
            Ok(false) if settings.require_claim_sources_exist => v.deny(
                DEVICE_CLASS_EXISTS,
                FieldError::not_found(
                    (*path).clone(),
                    class.as_str(),
                    format!(
                        "no DeviceClass with this name, named by request {request:?} of {what} (settings.requireClaimSourcesExist)"
                    ),
                ),
            ),
            Ok(false) => v.warn(
                DEVICE_CLASS_EXISTS,
                (*path).clone(),
                format!(
                    "request {request:?} of {what} names DeviceClass {class:?}, which does not exist, so Pods that use this claim stay Pending until it is created"
                ),
            ),
            Err(e) => v.lookup_failed(
                DEVICE_CLASS_EXISTS,
                (*path).clone(),
                &format!("DeviceClass {class:?}"),
                e,
                settings.fail_on_lookup_error,
            ),
        }
    }
}

/// The names of the classes in a list answer.
fn listed_names(list: &str) -> Result<HashSet<String>, String> {
    let list: serde_json::Value = serde_json::from_str(list).map_err(|e| e.to_string())?;
    let items = list.get("items").and_then(|i| i.as_array()).map(Vec::as_slice).unwrap_or_default();
    Ok(items.iter().filter_map(|c| c.pointer("/metadata/name")?.as_str().map(str::to_string)).collect())
}

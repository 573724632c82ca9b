//! Looking up a Pod's PodGroup across the served versions, and the setting that orders them.

use std::borrow::Cow;

use super::*;
use crate::cluster::{Cluster, LookupError, Query};

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
    find_in_versions(cluster, versions, "PodGroup", namespace, name, field_masks)
}

/// Looks up a Workload or PodGroup named by an object that names no version (a Pod's
/// PodGroup, a delegated Job's parent Workload), trying `versions` in order as
/// [`find_pod_group`] says.
pub fn find_in_versions(
    cluster: &dyn Cluster,
    versions: &[Version],
    kind: &str,
    namespace: &str,
    name: &str,
    field_masks: &[&str],
) -> Result<Option<(Version, Box<RawValue>)>, LookupError> {
    for version in versions {
        let query = Query { api_version: version.api_version(), kind, namespace: Some(namespace), field_masks };
        match cluster.get(&query, name) {
            Ok(found) => return Ok(found.map(|object| (*version, object))),
            Err(LookupError::NotServed { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    let tried: Vec<&str> = versions.iter().map(|v| v.api_version()).collect();
    Err(LookupError::Failed(format!("the cluster serves {kind}s in none of {}", tried.join(", "))))
}

/// Reads the setting `schedulingApiVersions`: known versions, each once, at least one.
pub fn parse_lookup_versions(versions: &[Cow<'static, str>]) -> Result<Vec<Version>, String> {
    if versions.is_empty() {
        return Err("schedulingApiVersions: must list at least one version".into());
    }
    let mut out = Vec::with_capacity(versions.len());
    for (i, v) in versions.iter().enumerate() {
        let Some(version) = Version::parse(v) else {
            return Err(format!(
                "schedulingApiVersions[{i}]: Unsupported value: {v:?}: supported values: \"v1\", \"v1beta1\", \"v1alpha3\", \"v1alpha2\""
            ));
        };
        // `out` holds distinct known versions, at most four: no hash set (whose random
        // keys cost a WASI call in every fresh instance) for every request's settings.
        if out.contains(&version) {
            return Err(format!("schedulingApiVersions[{i}]: Duplicate value: {v:?}"));
        }
        out.push(version);
    }
    Ok(out)
}

//! Discovery: `/version`, `/api`, `/apis` and each group version's resource list.

use super::*;

pub(crate) fn version_info() -> Vec<u8> {
    json!({
        "major": "1",
        "minor": "37",
        "emulationMajor": "1",
        "emulationMinor": "37",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "36",
        "gitVersion": "v1.37.0",
        "gitCommit": "7c2d5a1f0e9b8c4d3a2f1e0d9c8b7a6f5e4d3c2b",
        "gitTreeState": "clean",
        "buildDate": "2026-08-25T17:32:11Z",
        "goVersion": "go1.26.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
    .to_string()
    .into_bytes()
}

pub(crate) fn api_versions(addr: SocketAddr) -> Vec<u8> {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr.to_string()}]
    })
    .to_string()
    .into_bytes()
}

/// The served groups and their versions, the preferred (most stable) first.
pub(crate) fn groups(store: &Store) -> BTreeMap<&str, Vec<&str>> {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for api_version in store.resources.keys().filter(|av| av.contains('/')) {
        groups.entry(group_of(api_version)).or_default().push(version_of(api_version));
    }
    for versions in groups.values_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(version_rank(v)));
    }
    groups
}

pub(crate) fn group_json(group: &str, versions: &[&str]) -> Value {
    let entries: Vec<Value> =
        versions.iter().map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v})).collect();
    json!({"name": group, "versions": entries, "preferredVersion": entries.first().cloned().unwrap_or(Value::Null)})
}

pub(crate) fn api_group_list(store: &Store) -> Vec<u8> {
    let groups: Vec<Value> = groups(store).iter().map(|(g, versions)| group_json(g, versions)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}).to_string().into_bytes()
}

pub(crate) fn api_group(store: &Store, group: &str) -> (u16, Vec<u8>) {
    match groups(store).get(group) {
        Some(versions) => {
            let mut body = group_json(group, versions);
            if let Some(map) = body.as_object_mut() {
                map.insert("kind".into(), Value::from("APIGroup"));
                map.insert("apiVersion".into(), Value::from("v1"));
            }
            (200, body.to_string().into_bytes())
        }
        None => not_served(),
    }
}

pub(crate) fn api_resource_list(api_version: &str, resources: &[Resource]) -> Vec<u8> {
    let entries: Vec<Value> = resources
        .iter()
        .map(|r| {
            json!({
                "name": r.plural,
                "singularName": r.kind.to_ascii_lowercase(),
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["get", "list", "watch"],
                "storageVersionHash": fake_uid(&format!("{api_version}/{}", r.kind)).chars().filter(char::is_ascii_alphanumeric).take(11).collect::<String>(),
            })
        })
        .collect();
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version, "resources": entries})
        .to_string()
        .into_bytes()
}

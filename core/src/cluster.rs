//! Cluster lookups: the one door through which rules read other objects.
//!
//! Policies implement [`Cluster`] with Kubewarden's host capabilities, tests and the e2e host
//! with [`MemoryCluster`], the playground with objects the user pasted.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Which objects to read. `namespace: None` means cluster-scoped (get) or all namespaces (list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespace: Option<&'a str>,
    /// Dotted paths of the fields the rule reads; the rest may be left out by the host.
    pub field_masks: &'a [&'a str],
}

/// A lookup that could not be answered (not "not found": that is `Ok(None)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookupError(pub String);

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub trait Cluster {
    /// One object by name; `Ok(None)` when it does not exist.
    fn get(&self, query: &Query, name: &str) -> Result<Option<Value>, LookupError>;
    /// Every object of a kind, in one namespace or in all of them.
    fn list(&self, query: &Query) -> Result<Vec<Value>, LookupError>;
}

/// Typed `get`: an object that does not decode counts as a failed lookup.
pub fn get_as<T: DeserializeOwned>(cluster: &dyn Cluster, query: &Query, name: &str) -> Result<Option<T>, LookupError> {
    match cluster.get(query, name)? {
        None => Ok(None),
        Some(v) => crate::decode::from_value(v)
            .map(Some)
            .map_err(|e| LookupError(format!("cannot decode {} {name:?}: {e}", query.kind))),
    }
}

/// A cluster that holds a fixed set of objects, for tests, the e2e host and the playground.
#[derive(Clone, Debug, Default)]
pub struct MemoryCluster {
    objects: Vec<Value>,
    failure: Option<String>,
    /// Answer with whole objects whatever the field masks say, as a host that does not
    /// support them does (benchmarks measure both).
    ignore_field_masks: bool,
}

impl MemoryCluster {
    pub fn new(objects: Vec<Value>) -> Self {
        MemoryCluster { objects, failure: None, ignore_field_masks: false }
    }

    /// The same objects, answered whole: lookups ignore their field masks.
    pub fn ignoring_field_masks(self) -> Self {
        MemoryCluster { ignore_field_masks: true, ..self }
    }

    fn masks<'a>(&self, query: &'a Query) -> &'a [&'a str] {
        if self.ignore_field_masks { &[] } else { query.field_masks }
    }

    /// A cluster whose every lookup fails with `message`.
    pub fn failing(message: &str) -> Self {
        MemoryCluster { objects: Vec::new(), failure: Some(message.to_string()), ignore_field_masks: false }
    }

    fn matching<'a>(&'a self, query: &'a Query) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |o| {
            o["apiVersion"] == query.api_version
                && o["kind"] == query.kind
                && query.namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str().unwrap_or("default") == ns)
        })
    }

    fn check(&self) -> Result<(), LookupError> {
        match &self.failure {
            Some(m) => Err(LookupError(m.clone())),
            None => Ok(()),
        }
    }
}

impl Cluster for MemoryCluster {
    fn get(&self, query: &Query, name: &str) -> Result<Option<Value>, LookupError> {
        self.check()?;
        Ok(self
            .matching(query)
            .find(|o| o["metadata"]["name"] == name)
            .map(|o| apply_field_masks(o, self.masks(query))))
    }

    fn list(&self, query: &Query) -> Result<Vec<Value>, LookupError> {
        self.check()?;
        Ok(self.matching(query).map(|o| apply_field_masks(o, self.masks(query))).collect())
    }
}

/// Keeps only the masked paths (plus the object's identity), as a host honouring
/// field masks may do; rules must not read anything else.
pub fn apply_field_masks(object: &Value, masks: &[&str]) -> Value {
    if masks.is_empty() {
        return object.clone();
    }
    let mut out = Value::Object(Map::new());
    let identity = ["apiVersion", "kind", "metadata.name", "metadata.namespace"];
    for path in identity.iter().chain(masks) {
        let parts: Vec<&str> = path.split('.').collect();
        if let Some(v) = parts.iter().try_fold(object, |v, p| v.get(p)) {
            insert_at(&mut out, &parts, v.clone());
        }
    }
    out
}

fn insert_at(target: &mut Value, parts: &[&str], value: Value) {
    let Some((last, parents)) = parts.split_last() else { return };
    let mut cur = target;
    for p in parents {
        let Some(map) = cur.as_object_mut() else { return };
        cur = map.entry(p.to_string()).or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(map) = cur.as_object_mut() {
        map.insert(last.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster() -> MemoryCluster {
        MemoryCluster::new(vec![
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}, "uid": "1"}, "spec": {"podCIDR": "x"}}),
            json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"}, "spec": {}}),
        ])
    }

    #[test]
    fn get_finds_by_namespace_and_name() {
        let q = Query {
            api_version: "scheduling.k8s.io/v1alpha2",
            kind: "PodGroup",
            namespace: Some("ml"),
            field_masks: &[],
        };
        assert!(cluster().get(&q, "g").unwrap().is_some());
        assert!(cluster().get(&q, "h").unwrap().is_none());
        let other_ns = Query { namespace: Some("default"), ..q.clone() };
        assert!(cluster().get(&other_ns, "g").unwrap().is_none());
        assert_eq!(MemoryCluster::failing("boom").get(&q, "g"), Err(LookupError("boom".into())));
    }

    #[test]
    fn list_applies_field_masks() {
        let q = Query { api_version: "v1", kind: "Node", namespace: None, field_masks: &["metadata.labels"] };
        let nodes = cluster().list(&q).unwrap();
        assert_eq!(
            nodes,
            vec![json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}})]
        );
    }
}

//! The documents being checked (and any `cluster` files) as the cluster that lookups see,
//! recording each lookup so a report can say what a verdict was based on.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use gangwarden_core::cluster::{
    LookupError, MemoryCluster, ObjectCluster, Query, as_got, canonical_api_version, in_version, serves,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One lookup a rule set made while checking a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lookup {
    pub api_version: String,
    pub kind: String,
    /// `None`: cluster-scoped, or a list across every namespace.
    pub namespace: Option<String>,
    /// `None` for a list.
    pub name: Option<String>,
    pub field_masks: Vec<String>,
    /// `found`, `not found`, `<n> objects`, or `error: <message>`.
    pub result: String,
}

/// Objects indexed by apiVersion and kind (for lists) and also by name (for gets), so a
/// thousand Pods each looking up their PodGroup stay linear.
pub struct DocumentCluster {
    by_kind: HashMap<(String, String), MemoryCluster>,
    by_name: HashMap<(String, String, String), Vec<Value>>,
    whole: bool,
    /// The apiVersions the cluster serves (`None`: all); see [`gangwarden_core::cluster::serves`].
    served: Option<BTreeSet<String>>,
    lookups: RefCell<Vec<Lookup>>,
}

fn namespace_of(object: &Value) -> &str {
    object["metadata"]["namespace"].as_str().unwrap_or("default")
}

impl DocumentCluster {
    /// The objects are the whole cluster: a kind with none of them lists as empty.
    pub fn new(objects: Vec<Value>) -> DocumentCluster {
        DocumentCluster::build(objects, true, None)
    }

    /// The objects are part of the cluster: listing a kind none of them is of fails (the rules
    /// then warn that they skipped the check). Manifests rarely include the cluster's Nodes,
    /// and a cluster without Nodes is not a real one.
    pub fn partial(objects: Vec<Value>) -> DocumentCluster {
        DocumentCluster::build(objects, false, None)
    }

    /// The same cluster, serving only `api_versions` of the API groups they name (a 1.36
    /// cluster serves `scheduling.k8s.io/v1alpha2`, a 1.37 one `v1beta1` and `v1alpha3`).
    pub fn serving(mut self, api_versions: BTreeSet<String>) -> DocumentCluster {
        self.by_kind = self.by_kind.into_iter().map(|(k, c)| (k, c.serving(api_versions.iter().cloned()))).collect();
        self.served = Some(api_versions);
        self
    }

    fn check_served(&self, query: &Query, name: Option<&str>) -> Result<(), LookupError> {
        if self.served.as_ref().is_none_or(|served| serves(served, query.api_version)) {
            return Ok(());
        }
        let error = LookupError::not_served(query);
        self.record(query, name, format!("error: {error}"));
        Err(error)
    }

    fn build(objects: Vec<Value>, whole: bool, served: Option<BTreeSet<String>>) -> DocumentCluster {
        let mut grouped: HashMap<(String, String), Vec<Value>> = HashMap::new();
        let mut by_name: HashMap<(String, String, String), Vec<Value>> = HashMap::new();
        for object in objects {
            let api_version = canonical_api_version(object["apiVersion"].as_str().unwrap_or_default()).to_string();
            let kind = object["kind"].as_str().unwrap_or_default().to_string();
            let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
            by_name.entry((api_version.clone(), kind.clone(), name)).or_default().push(object.clone());
            grouped.entry((api_version, kind)).or_default().push(object);
        }
        let by_kind = grouped.into_iter().map(|(k, objects)| (k, MemoryCluster::new(objects))).collect();
        DocumentCluster { by_kind, by_name, whole, served, lookups: RefCell::new(Vec::new()) }
    }

    /// The lookups made since the last call, oldest first.
    pub fn take_lookups(&self) -> Vec<Lookup> {
        self.lookups.take()
    }

    fn record(&self, query: &Query, name: Option<&str>, result: String) {
        self.lookups.borrow_mut().push(Lookup {
            api_version: query.api_version.to_string(),
            kind: query.kind.to_string(),
            namespace: query.namespace.map(str::to_string),
            name: name.map(str::to_string),
            field_masks: query.field_masks.iter().map(|m| m.to_string()).collect(),
            result,
        });
    }
}

impl ObjectCluster for DocumentCluster {
    fn get_object(&self, query: &Query, name: &str) -> Result<Option<Value>, LookupError> {
        self.check_served(query, Some(name))?;
        let key = (canonical_api_version(query.api_version).to_string(), query.kind.to_string(), name.to_string());
        let found = self
            .by_name
            .get(&key)
            .and_then(|objects| objects.iter().find(|o| query.namespace.is_none_or(|ns| namespace_of(o) == ns)))
            .map(|o| in_version(as_got(o, query.field_masks), query));
        self.record(query, Some(name), if found.is_some() { "found".into() } else { "not found".into() });
        Ok(found)
    }

    fn list_objects(&self, query: &Query) -> Result<Vec<Value>, LookupError> {
        self.check_served(query, None)?;
        let key = (canonical_api_version(query.api_version).to_string(), query.kind.to_string());
        let items = match self.by_kind.get(&key) {
            Some(cluster) => cluster.list_objects(query)?,
            None if self.whole => Vec::new(),
            None => {
                let error =
                    LookupError::NotGiven { api_version: query.api_version.to_string(), kind: query.kind.to_string() };
                self.record(query, None, format!("error: {error}"));
                return Err(error);
            }
        };
        self.record(query, None, format!("{} objects", items.len()));
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_like_the_memory_cluster_and_records() {
        let objects = vec![
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"z": "a"}}, "spec": {}}),
            json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"}}),
            json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"}}),
        ];
        let cluster = DocumentCluster::partial(objects.clone());
        let memory = MemoryCluster::new(objects);
        let pg = Query {
            api_version: "scheduling.k8s.io/v1alpha2",
            kind: "PodGroup",
            namespace: Some("ml"),
            field_masks: &[],
        };
        assert_eq!(cluster.get_object(&pg, "g"), memory.get_object(&pg, "g"));
        let default_ns = Query { namespace: Some("default"), ..pg.clone() };
        assert_eq!(cluster.get_object(&default_ns, "g"), memory.get_object(&default_ns, "g"));
        assert_eq!(cluster.get_object(&pg, "h"), Ok(None));
        let nodes = Query { api_version: "v1", kind: "Node", namespace: None, field_masks: &["metadata.labels"] };
        assert_eq!(cluster.list_objects(&nodes), memory.list_objects(&nodes));
        let lookups = cluster.take_lookups();
        assert_eq!(
            lookups.iter().map(|l| (l.name.clone(), l.result.as_str())).collect::<Vec<_>>(),
            vec![
                (Some("g".into()), "found"),
                (Some("g".into()), "found"),
                (Some("h".into()), "not found"),
                (None, "1 objects")
            ]
        );
        assert_eq!(lookups[3].field_masks, vec!["metadata.labels"]);
        assert!(cluster.take_lookups().is_empty());
    }

    #[test]
    fn kinds_never_given_are_unknown_unless_the_cluster_is_whole() {
        let pods = Query { api_version: "v1", kind: "Pod", namespace: None, field_masks: &[] };
        let partial = DocumentCluster::partial(Vec::new());
        assert_eq!(
            partial.list_objects(&pods).map_err(|e| e.to_string()),
            Err("no v1 Pod objects were given to check against (add them as cluster objects)".into())
        );
        assert_eq!(
            partial.take_lookups()[0].result,
            "error: no v1 Pod objects were given to check against (add them as cluster objects)"
        );
        assert_eq!(DocumentCluster::new(Vec::new()).list_objects(&pods), Ok(Vec::new()));
    }
}

//! Cluster lookups: the one door through which rules read other objects.
//!
//! Policies implement [`Cluster`] with Kubewarden's host capabilities, tests and the e2e host
//! with [`MemoryCluster`], the playground with objects the user pasted.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::decode::to_raw;

/// Which objects to read. `namespace: None` means cluster-scoped (get) or all namespaces (list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespace: Option<&'a str>,
    /// Dotted paths of the fields the rule reads; the rest may be left out by the host.
    pub field_masks: &'a [&'a str],
}
// No label or field selector: policy-server keeps a watch-fed store for each distinct list
// query, forever, so a list's query must be fixed by the module and its settings, never by a
// request. Rules list a kind whole and filter it themselves.

/// A lookup that could not be answered (not "not found": that is `Ok(None)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// The cluster does not serve this apiVersion/kind (or it cannot be discovered): on a
    /// Kubernetes 1.37 cluster, anything in `scheduling.k8s.io/v1alpha2`, for example.
    NotServed { api_version: String, kind: String },
    /// No objects of this apiVersion and kind were given to `gangwarden check` or the
    /// playground, whose documents are then part of the cluster, not all of it: unknown, not
    /// absent. No Kubernetes host answers this.
    NotGiven { api_version: String, kind: String },
    /// Any other failure, with the host's message.
    Failed(String),
}

impl LookupError {
    pub fn not_served(query: &Query) -> LookupError {
        LookupError::NotServed { api_version: query.api_version.to_string(), kind: query.kind.to_string() }
    }
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NotServed { api_version, kind } => {
                write!(f, "the cluster does not serve {api_version}/{kind}")
            }
            LookupError::NotGiven { api_version, kind } => {
                write!(f, "no {api_version} {kind} objects were given to check against (add them as cluster objects)")
            }
            LookupError::Failed(message) => f.write_str(message),
        }
    }
}

/// Answers are JSON text, as the host sends them: rules decode the fields they read straight
/// from it, or nothing at all when the answer's existence is what counts.
pub trait Cluster {
    /// One object by name; `Ok(None)` when it does not exist.
    fn get(&self, query: &Query, name: &str) -> Result<Option<Box<RawValue>>, LookupError>;
    /// Every object of a kind, in one namespace or in all of them: the JSON text of a list
    /// object (`{"kind": "NodeList", ..., "items": [...]}`) whose `items` holds them.
    fn list(&self, query: &Query) -> Result<String, LookupError>;
}

/// What a get answers.
type GetAnswer = Result<Option<Box<RawValue>>, LookupError>;

/// A cluster that answers each distinct get once: the bundle runs several rule sets over one
/// request, and some read the same object (a TrainJob's runtime, for three of them).
pub struct Memo<'c> {
    cluster: &'c dyn Cluster,
    /// Made at the first get: a hash map's random keys cost a WASI call in every fresh
    /// instance, which a request that makes no get need not pay.
    gets: std::cell::RefCell<Option<std::collections::HashMap<String, GetAnswer>>>,
}

impl<'c> Memo<'c> {
    pub fn new(cluster: &'c dyn Cluster) -> Self {
        Memo { cluster, gets: std::cell::RefCell::new(None) }
    }
}

impl Cluster for Memo<'_> {
    fn get(&self, query: &Query, name: &str) -> Result<Option<Box<RawValue>>, LookupError> {
        let key = format!(
            "{}\n{}\n{:?}\n{name}\n{}",
            query.api_version,
            query.kind,
            query.namespace,
            query.field_masks.join(",")
        );
        if let Some(answer) = self.gets.borrow().as_ref().and_then(|gets| gets.get(&key)) {
            return answer.clone();
        }
        let answer = self.cluster.get(query, name);
        self.gets.borrow_mut().get_or_insert_default().insert(key, answer.clone());
        answer
    }

    fn list(&self, query: &Query) -> Result<String, LookupError> {
        self.cluster.list(query)
    }
}

/// A cluster that holds a fixed set of objects, for tests, the e2e host and the playground.
#[derive(Clone, Debug, Default)]
pub struct MemoryCluster {
    /// Shared: clones (one per request in the e2e host) cost nothing to make or drop.
    objects: std::sync::Arc<[Value]>,
    failure: Option<String>,
    /// Answer with whole objects whatever the field masks say, as a host that does not
    /// support them does (benchmarks measure both).
    ignore_field_masks: bool,
    /// The apiVersions the cluster serves in the API groups they name; `None`: every one.
    served: Option<BTreeSet<String>>,
}

impl MemoryCluster {
    pub fn new(objects: Vec<Value>) -> Self {
        MemoryCluster { objects: objects.into(), failure: None, ignore_field_masks: false, served: None }
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
        MemoryCluster {
            objects: Vec::new().into(),
            failure: Some(message.to_string()),
            ignore_field_masks: false,
            served: None,
        }
    }

    /// Serves only these versions of the API groups they name (a 1.36 cluster serves
    /// `scheduling.k8s.io/v1alpha2`, a 1.37 one `scheduling.k8s.io/v1beta1` and `v1alpha3`);
    /// groups not named are served in every version. Lookups of an unserved version get
    /// [`LookupError::NotServed`].
    pub fn serving<S: Into<String>>(mut self, api_versions: impl IntoIterator<Item = S>) -> Self {
        self.served = Some(api_versions.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the cluster serves `query`'s apiVersion.
    pub fn serves(&self, query: &Query) -> bool {
        self.served.as_ref().is_none_or(|served| serves(served, query.api_version))
    }

    fn matching<'a>(&'a self, query: &'a Query) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |o| {
            same_objects(o["apiVersion"].as_str().unwrap_or_default(), query.api_version)
                && o["kind"] == query.kind
                && query.namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str().unwrap_or("default") == ns)
        })
    }

    fn check(&self, query: &Query) -> Result<(), LookupError> {
        match &self.failure {
            Some(m) => Err(LookupError::Failed(m.clone())),
            None if !self.serves(query) => Err(LookupError::not_served(query)),
            None => Ok(()),
        }
    }
}

/// A cluster that holds its objects as values (tests, the e2e host, the CLI and the
/// playground). It answers [`Cluster`] lookups the way a host does, as JSON text: a get with
/// the object, a list with the list object around the items ([`list_answer`]).
pub trait ObjectCluster {
    /// The object a get answers with.
    fn get_object(&self, query: &Query, name: &str) -> Result<Option<Value>, LookupError>;
    /// The objects a list answers with.
    fn list_objects(&self, query: &Query) -> Result<Vec<Value>, LookupError>;
}

impl<C: ObjectCluster> Cluster for C {
    fn get(&self, query: &Query, name: &str) -> Result<Option<Box<RawValue>>, LookupError> {
        Ok(self.get_object(query, name)?.as_ref().map(to_raw))
    }

    fn list(&self, query: &Query) -> Result<String, LookupError> {
        Ok(list_answer(query, self.list_objects(query)?).to_string())
    }
}

impl ObjectCluster for MemoryCluster {
    fn get_object(&self, query: &Query, name: &str) -> Result<Option<Value>, LookupError> {
        self.check(query)?;
        Ok(self
            .matching(query)
            .find(|o| o["metadata"]["name"] == name)
            .map(|o| in_version(as_got(o, self.masks(query)), query)))
    }

    fn list_objects(&self, query: &Query) -> Result<Vec<Value>, LookupError> {
        self.check(query)?;
        Ok(self.matching(query).map(|o| in_version(as_listed(o, self.masks(query)), query)).collect())
    }
}

/// The list object the apiserver answers a list of `query`'s kind with.
pub fn list_answer(query: &Query, items: Vec<Value>) -> Value {
    serde_json::json!({"apiVersion": query.api_version, "kind": format!("{}List", query.kind), "metadata": {}, "items": items})
}

/// Whether a cluster serving `served` serves `api_version`: only the API groups named in
/// `served` are restricted; every other group is served in every version.
pub fn serves(served: &BTreeSet<String>, api_version: &str) -> bool {
    fn group(api_version: &str) -> &str {
        api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }
    let wanted = group(api_version);
    served.contains(api_version) || !served.iter().any(|s| group(s) == wanted)
}

/// The apiVersion that stands for every version serving the same objects (`v1alpha3`
/// reads as `v1beta1`), for indexing objects by version.
pub fn canonical_api_version(api_version: &str) -> &str {
    SAME_OBJECTS.iter().find(|set| set.contains(&api_version)).map_or(api_version, |set| set[0])
}

/// apiVersions that serve the same objects with the same shapes, as the apiserver does:
/// Kubernetes 1.37 serves Workloads and PodGroups as `scheduling.k8s.io/v1beta1` and
/// `v1alpha3`, whichever version created them.
const SAME_OBJECTS: &[&[&str]] = &[&["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"]];

fn same_objects(stored: &str, wanted: &str) -> bool {
    stored == wanted || SAME_OBJECTS.iter().any(|set| set.contains(&stored) && set.contains(&wanted))
}

/// The object as the apiserver returns it: in the version asked for.
pub fn in_version(mut object: Value, query: &Query) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".to_string(), Value::from(query.api_version));
    }
    object
}

/// An object as policy-server 1.35 answers a get: `apiVersion`, `kind` and `metadata` whole,
/// the rest pruned to the field masks (policy-evaluator's `field_mask.rs` prunes a
/// `DynamicObject`'s body, not its metadata). No masks: the whole object.
pub fn as_got(object: &Value, masks: &[&str]) -> Value {
    let mut out = object.clone();
    if let (Some(map), false) = (out.as_object_mut(), masks.is_empty()) {
        let mask = MaskNode::new(masks);
        map.retain(|key, value| match key.as_str() {
            "apiVersion" | "kind" | "metadata" => true,
            _ => mask.keep(key, value),
        });
    }
    out
}

/// An object as policy-server 1.35 answers a list: as a get, and its watch-fed store also
/// empties `metadata.managedFields` and drops the last-applied annotation (`reflector.rs`),
/// which leaves both fields present, as empty values.
pub fn as_listed(object: &Value, masks: &[&str]) -> Value {
    let mut out = as_got(object, masks);
    if let Some(map) = out.as_object_mut() {
        let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert("managedFields".to_string(), Value::Array(Vec::new()));
            let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
            if let Some(annotations) = annotations.as_object_mut() {
                annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
            }
        }
    }
    out
}

/// The field masks as a tree of path parts: a leaf keeps everything below it, arrays are
/// transparent (each item is pruned with the array's node), as policy-evaluator prunes.
#[derive(Default)]
struct MaskNode<'a>(std::collections::BTreeMap<&'a str, MaskNode<'a>>);

impl<'a> MaskNode<'a> {
    fn new(masks: &[&'a str]) -> Self {
        let mut root = MaskNode::default();
        for mask in masks {
            mask.split('.').fold(&mut root, |node, part| node.0.entry(part).or_default());
        }
        root
    }

    /// Whether `key` is kept under this node, pruning `value` to the key's node if it is.
    fn keep(&self, key: &str, value: &mut Value) -> bool {
        self.0.get(key).inspect(|child| child.prune(value)).is_some()
    }

    fn prune(&self, value: &mut Value) {
        if self.0.is_empty() {
            return;
        }
        match value {
            Value::Object(map) => map.retain(|key, value| self.keep(key, value)),
            Value::Array(items) => items.iter_mut().for_each(|item| self.prune(item)),
            _ => {}
        }
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
        assert!(cluster().get_object(&q, "g").unwrap().is_some());
        assert!(cluster().get_object(&q, "h").unwrap().is_none());
        let other_ns = Query { namespace: Some("default"), ..q.clone() };
        // 1.37 serves the same PodGroups as v1beta1 and v1alpha3, returned in the version asked for.
        let alpha3 = MemoryCluster::new(vec![json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "ml"}})]);
        let beta = Query { api_version: "scheduling.k8s.io/v1beta1", ..q.clone() };
        assert_eq!(alpha3.get_object(&beta, "g").unwrap().unwrap()["apiVersion"], "scheduling.k8s.io/v1beta1");
        assert!(alpha3.get_object(&q, "g").unwrap().is_none(), "v1alpha2 is another API");
        assert!(cluster().get_object(&other_ns, "g").unwrap().is_none());
        assert_eq!(MemoryCluster::failing("boom").get_object(&q, "g"), Err(LookupError::Failed("boom".into())));
        let beta = cluster().serving(["scheduling.k8s.io/v1beta1"]);
        let nodes = Query { api_version: "v1", kind: "Node", namespace: None, field_masks: &[] };
        assert_eq!(beta.list_objects(&nodes).map(|n| n.len()), Ok(1), "groups not named are served");
        assert_eq!(
            beta.get_object(&q, "g"),
            Err(LookupError::NotServed { api_version: "scheduling.k8s.io/v1alpha2".into(), kind: "PodGroup".into() })
        );
        assert_eq!(
            beta.get_object(&q, "g").unwrap_err().to_string(),
            "the cluster does not serve scheduling.k8s.io/v1alpha2/PodGroup"
        );
    }

    #[test]
    fn a_memo_asks_once_for_each_object() {
        struct Counting(std::cell::Cell<usize>, MemoryCluster);
        impl Cluster for Counting {
            fn get(&self, query: &Query, name: &str) -> Result<Option<Box<RawValue>>, LookupError> {
                self.0.set(self.0.get() + 1);
                self.1.get(query, name)
            }
            fn list(&self, query: &Query) -> Result<String, LookupError> {
                self.1.list(query)
            }
        }
        let counting = Counting(std::cell::Cell::new(0), cluster());
        let memo = Memo::new(&counting);
        let q = Query {
            api_version: "scheduling.k8s.io/v1alpha2",
            kind: "PodGroup",
            namespace: Some("ml"),
            field_masks: &[],
        };
        assert!(memo.get(&q, "g").unwrap().is_some());
        assert!(memo.get(&q, "g").unwrap().is_some());
        assert!(memo.get(&q, "h").unwrap().is_none());
        assert_eq!(counting.0.get(), 2, "one lookup per distinct object");
    }

    #[test]
    fn answers_are_pruned_as_policy_server_prunes_them() {
        let node = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1", "uid": "1", "labels": {"zone": "a"}, "managedFields": [{"manager": "kubelet"}],
                         "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "ttl": "0"}},
            "spec": {"podCIDR": "x", "taints": [{"key": "k", "effect": "NoSchedule"}]}, "status": {"images": []}});
        // The body is pruned to the masks, `metadata` is kept whole: the mask below names no body field.
        let mut got = node.clone();
        got.as_object_mut().unwrap().retain(|k, _| k != "spec" && k != "status");
        assert_eq!(as_got(&node, &["metadata.labels"]), got);
        assert_eq!(as_got(&node, &[]), node, "no masks: the whole object");
        // Arrays are transparent; a mask's leaf keeps all below it.
        assert_eq!(as_got(&node, &["spec.taints.key", "status"])["spec"], json!({"taints": [{"key": "k"}]}));
        assert_eq!(as_got(&node, &["spec.taints.key", "status"])["status"], json!({"images": []}));
        // A list's store also empties managedFields and drops the last-applied annotation.
        let mut listed = got.clone();
        listed["metadata"]["managedFields"] = json!([]);
        listed["metadata"]["annotations"] = json!({"ttl": "0"});
        assert_eq!(as_listed(&node, &["metadata.labels"]), listed);
        let bare = json!({"apiVersion": "v1", "kind": "Node"});
        assert_eq!(as_listed(&bare, &[])["metadata"], json!({"managedFields": [], "annotations": {}}));
    }
}

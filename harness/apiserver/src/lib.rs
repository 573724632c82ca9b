//! A small Kubernetes API server test double: read-only, in memory, plain HTTP/1.1 on
//! 127.0.0.1, good enough for a real client (kube-rs 3.1, as policy-server 1.35 uses it) to
//! discover resources, get, list (label and field selectors, pagination) and watch them.
//!
//! Objects never change, so a watch only holds its connection open until its timeout. Every
//! stored object is serialized once at start; lists are written by concatenating those bytes,
//! so a list of 15,000 Nodes costs little more than copying them to the socket.
//!
//! `TEST_APISERVER_LOG=1` logs every request (method, target, status, bytes) to stderr.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use base64::Engine as _;
use gangwarden_core::cluster::{canonical_api_version, serves};
use gangwarden_core::request::resource_plural;

use serde_json::{Map, Value, json};

mod client_impl;
mod discovery;
mod http;
mod list;
mod nodes;
mod selectors;
#[cfg(test)]
mod tests;

pub use client_impl::{client, http_post_json};
use discovery::*;
use http::*;
use list::*;
pub use nodes::{fake_uid, realistic_node};
use selectors::*;
pub use selectors::{LabelRequirement, parse_label_selector};

/// The longest a watch stays open (a client's `timeoutSeconds` is capped to it).
const MAX_WATCH_SECONDS: u64 = 300;
/// How often blocked connection threads look at the stop flag.
const TICK: Duration = Duration::from_secs(1);
/// The largest request head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The largest request body read (and discarded) before the connection is closed.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// The most requests [`TestApiServer::requests`] remembers.
const MAX_RECORDED: usize = 100_000;

/// Whether objects of `kind` (in `api_version`) live in a namespace. Cluster-scoped: Node,
/// Namespace, PersistentVolume, PriorityClass, StorageClass, RuntimeClass, the DRA DeviceClass and
/// ResourceSlice, Kubeflow's ClusterTrainingRuntime, Volcano's Queue and Kueue's ClusterQueue,
/// Cohort, ResourceFlavor and Topology. Everything else is namespaced (CompositePodGroup included).
pub fn namespaced(api_version: &str, kind: &str) -> bool {
    let group = group_of(api_version);
    !matches!(
        (group, kind),
        ("", "Node" | "Namespace" | "PersistentVolume")
            | (_, "PriorityClass" | "StorageClass" | "DeviceClass" | "ResourceSlice" | "ClusterTrainingRuntime")
            | ("node.k8s.io", "RuntimeClass")
            | ("scheduling.volcano.sh", "Queue")
            | ("kueue.x-k8s.io", "ClusterQueue" | "Cohort" | "ResourceFlavor" | "Topology")
    )
}

/// The API group of an apiVersion (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

fn version_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or(api_version, |(_, v)| v)
}

/// Kinds Kubernetes 1.37 serves with the same objects in `scheduling.k8s.io/v1beta1` and
/// `v1alpha3` ([`canonical_api_version`]); CompositePodGroup is `v1alpha3` only.
fn aliased_kind(kind: &str) -> bool {
    matches!(kind, "Workload" | "PodGroup")
}

/// The apiVersion under which objects of `kind` read in `api_version` are stored.
fn storage_version(api_version: &str, kind: &str) -> String {
    if aliased_kind(kind) { canonical_api_version(api_version).to_string() } else { api_version.to_string() }
}

/// Every apiVersion serving the same objects as `api_version` (itself included).
fn sibling_versions(api_version: &str, kind: &str) -> Vec<String> {
    const SIBLINGS: &[&str] = &["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"];
    if aliased_kind(kind) && SIBLINGS.contains(&api_version) {
        SIBLINGS.iter().map(|s| s.to_string()).collect()
    } else {
        vec![api_version.to_string()]
    }
}

/// Kubernetes' version order: GA before beta before alpha, higher numbers first.
fn version_rank(version: &str) -> (u8, u32, u32) {
    let Some(rest) = version.strip_prefix('v') else { return (0, 0, 0) };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u32>() else { return (0, 0, 0) };
    let tail = &rest[digits.len()..];
    let (level, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        (0, 0)
    };
    (level, major, minor)
}

/// A discoverable resource of one group/version.
#[derive(Clone, Debug)]
struct Resource {
    kind: String,
    plural: String,
    namespaced: bool,
}

/// A stored object, serialized once.
struct Stored {
    /// `None` for cluster-scoped objects.
    namespace: Option<String>,
    name: String,
    labels: BTreeMap<String, String>,
    /// The object's JSON without `apiVersion` and without its opening brace: `"kind":...}`.
    tail: Vec<u8>,
}

impl Stored {
    fn write_to(&self, out: &mut impl Write, item_head: &[u8]) -> io::Result<()> {
        out.write_all(item_head)?;
        out.write_all(&self.tail)
    }

    fn size(&self, item_head: &[u8]) -> usize {
        item_head.len() + self.tail.len()
    }
}

/// `{"apiVersion":"<api_version>",`: what goes before a stored object's tail.
fn item_head(api_version: &str) -> Vec<u8> {
    format!("{{\"apiVersion\":{},", Value::from(api_version)).into_bytes()
}

struct Store {
    /// Objects by (storage apiVersion, kind), sorted by namespace then name, as etcd keys sort.
    collections: BTreeMap<(String, String), Vec<Stored>>,
    /// The served apiVersions and their resources.
    resources: BTreeMap<String, Vec<Resource>>,
    resource_version: u64,
}

impl Store {
    fn new(
        objects: Vec<Value>,
        served: Option<&BTreeSet<String>>,
        advertised: &[(String, String)],
    ) -> io::Result<Store> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let mut kinds: BTreeSet<(String, String)> =
            ["Node", "Namespace", "Pod"].iter().map(|k| ("v1".to_string(), k.to_string())).collect();
        kinds.extend(advertised.iter().cloned());
        let mut max_rv = 0u64;
        for o in &objects {
            if let Some(rv) = o["metadata"]["resourceVersion"].as_str().and_then(|rv| rv.parse::<u64>().ok()) {
                max_rv = max_rv.max(rv);
            }
        }
        let mut next_rv = max_rv.max(1000);
        let mut collections: BTreeMap<(String, String), Vec<Stored>> = BTreeMap::new();
        for (i, mut object) in objects.into_iter().enumerate() {
            let Some(map) = object.as_object_mut() else {
                return Err(invalid(format!("object {i} is not a JSON object")));
            };
            let api_version = map.remove("apiVersion").and_then(|v| v.as_str().map(str::to_string));
            let kind = map.get("kind").and_then(Value::as_str).map(str::to_string);
            let (Some(api_version), Some(kind)) = (api_version, kind) else {
                return Err(invalid(format!("object {i} has no apiVersion or kind")));
            };
            let is_namespaced = namespaced(&api_version, &kind);
            let metadata = map.entry("metadata").or_insert_with(|| json!({}));
            let Some(metadata) = metadata.as_object_mut() else {
                return Err(invalid(format!("object {i}: metadata is not an object")));
            };
            let Some(name) = metadata.get("name").and_then(Value::as_str).map(str::to_string) else {
                return Err(invalid(format!("object {i} ({api_version}/{kind}) has no metadata.name")));
            };
            let namespace = if is_namespaced {
                let ns = metadata.get("namespace").and_then(Value::as_str).unwrap_or("default").to_string();
                metadata.insert("namespace".into(), Value::from(ns.as_str()));
                Some(ns)
            } else {
                metadata.remove("namespace");
                None
            };
            if !metadata.get("resourceVersion").is_some_and(Value::is_string) {
                next_rv += 1;
                metadata.insert("resourceVersion".into(), Value::from(next_rv.to_string()));
            }
            if !metadata.get("uid").is_some_and(Value::is_string) {
                metadata
                    .insert("uid".into(), Value::from(fake_uid(&format!("{api_version}/{kind}/{namespace:?}/{name}"))));
            }
            let labels = metadata
                .get("labels")
                .and_then(Value::as_object)
                .map(|l| l.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
                .unwrap_or_default();
            let bytes = serde_json::to_vec(&object).map_err(|e| invalid(e.to_string()))?;
            // `{"kind":...}` (apiVersion was removed; kind is always there) → `"kind":...}`.
            let tail = bytes[1..].to_vec();
            kinds.insert((api_version.clone(), kind.clone()));
            collections.entry((storage_version(&api_version, &kind), kind)).or_default().push(Stored {
                namespace,
                name,
                labels,
                tail,
            });
        }
        for ((api_version, kind), objects) in &mut collections {
            objects.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
            if let Some(pair) = objects.windows(2).find(|w| w[0].namespace == w[1].namespace && w[0].name == w[1].name)
            {
                return Err(invalid(format!(
                    "two {api_version}/{kind} objects named {:?} in namespace {:?}",
                    pair[0].name, pair[0].namespace
                )));
            }
        }
        let is_served = |av: &str| served.is_none_or(|s| serves(s, av));
        let mut resources: BTreeMap<String, Vec<Resource>> = BTreeMap::new();
        // A version named in `served` is served, with or without resources.
        for av in served.into_iter().flatten() {
            if av.contains('/') {
                resources.entry(av.clone()).or_default();
            }
        }
        for (api_version, kind) in &kinds {
            for av in sibling_versions(api_version, kind) {
                if !is_served(&av) {
                    continue;
                }
                let list = resources.entry(av.clone()).or_default();
                if !list.iter().any(|r| &r.kind == kind) {
                    list.push(Resource {
                        kind: kind.clone(),
                        plural: resource_plural(kind),
                        namespaced: namespaced(&av, kind),
                    });
                }
            }
        }
        Ok(Store { collections, resources, resource_version: next_rv })
    }

    fn resource(&self, api_version: &str, plural: &str) -> Option<&Resource> {
        self.resources.get(api_version)?.iter().find(|r| r.plural == plural)
    }

    fn objects(&self, api_version: &str, kind: &str) -> &[Stored] {
        self.collections.get(&(storage_version(api_version, kind), kind.to_string())).map_or(&[], Vec::as_slice)
    }
}

/// The kinds of call the server counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `/version`, `/api`, `/apis`, `/api/v1`, `/apis/<group>[/<version>]`.
    Discovery,
    Get,
    List,
    Watch,
    /// Anything else: health checks, unknown paths, methods other than GET.
    Other,
}

/// How many calls of each kind the server answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestCounts {
    pub discovery: u64,
    pub get: u64,
    pub list: u64,
    pub watch: u64,
    pub other: u64,
}

/// One request the server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub method: String,
    /// The path, percent-decoded.
    pub path: String,
    /// The raw query string (empty when there is none).
    pub query: String,
    pub call: Call,
    pub status: u16,
}

struct State {
    store: Store,
    addr: SocketAddr,
    stop: AtomicBool,
    counts: [AtomicU64; 5],
    recorded: Mutex<Vec<Recorded>>,
    log: bool,
}

impl State {
    fn record(&self, request: &Request, call: Call, status: u16, bytes: usize) {
        let index = match call {
            Call::Discovery => 0,
            Call::Get => 1,
            Call::List => 2,
            Call::Watch => 3,
            Call::Other => 4,
        };
        self.counts[index].fetch_add(1, Ordering::Relaxed);
        if self.log {
            eprintln!("test-apiserver: {} {} -> {status} {call:?} ({bytes} bytes)", request.method, request.target);
        }
        if let Ok(mut recorded) = self.recorded.lock()
            && recorded.len() < MAX_RECORDED
        {
            recorded.push(Recorded {
                method: request.method.clone(),
                path: request.path.clone(),
                query: request.raw_query.clone(),
                call,
                status,
            });
        }
    }
}

/// A running test API server on 127.0.0.1; it stops when dropped.
pub struct TestApiServer {
    state: Arc<State>,
    accept: Option<JoinHandle<()>>,
}

impl TestApiServer {
    /// Serves `objects` (each with apiVersion, kind and metadata.name; namespaced kinds
    /// without a namespace go to `default`). `served`: the apiVersions served in the API
    /// groups they name, as [`gangwarden_core::cluster::serves`] reads it (`None`: all).
    pub fn start(objects: Vec<Value>, served: Option<BTreeSet<String>>) -> io::Result<TestApiServer> {
        TestApiServer::start_with(objects, served, Vec::new())
    }

    /// [`TestApiServer::start`], also advertising `advertised` (apiVersion, kind) pairs in
    /// discovery when no object of theirs is stored (policy-server cannot look up a kind
    /// that discovery does not list). Core `v1` always advertises Node, Namespace and Pod.
    pub fn start_with(
        objects: Vec<Value>,
        served: Option<BTreeSet<String>>,
        advertised: Vec<(String, String)>,
    ) -> io::Result<TestApiServer> {
        let store = Store::new(objects, served.as_ref(), &advertised)?;
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            store,
            addr,
            stop: AtomicBool::new(false),
            counts: Default::default(),
            recorded: Mutex::new(Vec::new()),
            log: std::env::var("TEST_APISERVER_LOG").is_ok_and(|v| !v.is_empty() && v != "0"),
        });
        let accept_state = state.clone();
        let accept = thread::Builder::new()
            .name("test-apiserver-accept".into())
            .spawn(move || accept_loop(listener, accept_state))?;
        Ok(TestApiServer { state, accept: Some(accept) })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.state.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.state.addr
    }

    /// A kubeconfig whose current context talks to this server with a dummy bearer token.
    pub fn write_kubeconfig(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }

    /// The text [`TestApiServer::write_kubeconfig`] writes.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n  - name: test-apiserver\n    cluster:\n      server: {}\n\
             users:\n  - name: test-user\n    user:\n      token: test-token\n\
             contexts:\n  - name: test-apiserver\n    context:\n      cluster: test-apiserver\n      user: test-user\n      namespace: default\n\
             current-context: test-apiserver\npreferences: {{}}\n",
            self.url()
        )
    }

    /// How many calls of each kind have been answered so far.
    pub fn counts(&self) -> RequestCounts {
        let c = |i: usize| self.state.counts[i].load(Ordering::Relaxed);
        RequestCounts { discovery: c(0), get: c(1), list: c(2), watch: c(3), other: c(4) }
    }

    /// The requests answered so far (at most the first 100,000), oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.recorded.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The resourceVersion lists and bookmarks report.
    pub fn resource_version(&self) -> u64 {
        self.state.store.resource_version
    }
}

impl Drop for TestApiServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept; connection threads see the flag within a tick.
        if TcpStream::connect_timeout(&self.state.addr, Duration::from_secs(1)).is_ok()
            && let Some(accept) = self.accept.take()
        {
            let _ = accept.join();
        }
    }
}

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

use crate::payloads::fake_uid;
use serde_json::{Map, Value, json};

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
/// Namespace, PersistentVolume, PriorityClass, StorageClass, the DRA DeviceClass and
/// ResourceSlice, Kubeflow's ClusterTrainingRuntime, Volcano's Queue and Kueue's ClusterQueue,
/// ResourceFlavor and Topology. Everything else is namespaced (CompositePodGroup included).
pub fn namespaced(api_version: &str, kind: &str) -> bool {
    let group = group_of(api_version);
    !matches!(
        (group, kind),
        ("", "Node" | "Namespace" | "PersistentVolume")
            | (_, "PriorityClass" | "StorageClass" | "DeviceClass" | "ResourceSlice" | "ClusterTrainingRuntime")
            | ("scheduling.volcano.sh", "Queue")
            | ("kueue.x-k8s.io", "ClusterQueue" | "ResourceFlavor" | "Topology")
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

fn accept_loop(listener: TcpListener, state: Arc<State>) {
    for stream in listener.incoming() {
        if state.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else {
            thread::sleep(Duration::from_millis(10));
            continue;
        };
        let conn_state = state.clone();
        // A connection whose thread cannot start is dropped (closed).
        let _ = thread::Builder::new()
            .name("test-apiserver-conn".into())
            .spawn(move || serve_connection(&conn_state, stream));
    }
}

/// A parsed request head.
struct Request {
    method: String,
    /// The request target as sent.
    target: String,
    /// The path, percent-decoded.
    path: String,
    raw_query: String,
    query: Vec<(String, String)>,
    keep_alive: bool,
}

impl Request {
    fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// What reading a request gave.
enum Incoming {
    Request(Request),
    /// The client closed the connection (or the server is stopping).
    Closed,
    /// A request the server cannot read: answer with this status and close.
    Bad(u16, String),
}

impl Conn {
    /// Reads until a request head is complete; `None`: closed or stopping.
    fn read_head(&mut self, stop: &AtomicBool) -> io::Result<Option<Vec<u8>>> {
        loop {
            // Empty lines before a request line are ignored (RFC 9112 §2.2).
            while self.buf.starts_with(b"\r\n") {
                self.buf.drain(..2);
            }
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                return Ok(Some(self.buf.drain(..end + 4).collect()));
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "request head too large"));
            }
            if !self.fill(stop)? {
                return Ok(None);
            }
        }
    }

    /// Reads more bytes into the buffer; `false` when the client closed or the server stops.
    fn fill(&mut self, stop: &AtomicBool) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads and drops `n` body bytes.
    fn discard(&mut self, mut n: usize, stop: &AtomicBool) -> io::Result<bool> {
        loop {
            let take = n.min(self.buf.len());
            self.buf.drain(..take);
            n -= take;
            if n == 0 {
                return Ok(true);
            }
            if !self.fill(stop)? {
                return Ok(false);
            }
        }
    }

    fn next_request(&mut self, stop: &AtomicBool) -> Incoming {
        let head = match self.read_head(stop) {
            Ok(Some(head)) => head,
            Ok(None) => return Incoming::Closed,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Incoming::Bad(431, e.to_string()),
            Err(_) => return Incoming::Closed,
        };
        let (request, body) = match parse_head(&head) {
            Ok(parsed) => parsed,
            Err(message) => return Incoming::Bad(400, message),
        };
        match body {
            Body::None => Incoming::Request(request),
            Body::Length(n) if n <= MAX_BODY_BYTES => match self.discard(n, stop) {
                Ok(true) => Incoming::Request(request),
                _ => Incoming::Closed,
            },
            Body::Length(_) => Incoming::Bad(413, "request body too large".into()),
            Body::Chunked => Incoming::Bad(
                if request.method == "GET" { 400 } else { 405 },
                "chunked request bodies are not accepted".into(),
            ),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

enum Body {
    None,
    Length(usize),
    Chunked,
}

fn parse_head(head: &[u8]) -> Result<(Request, Body), String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("malformed request line {request_line:?}"));
    };
    if method.is_empty() || !version.starts_with("HTTP/1.") {
        return Err(format!("malformed request line {request_line:?}"));
    }
    let mut keep_alive = version != "HTTP/1.0";
    let mut body = Body::None;
    for line in lines.filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else { return Err(format!("malformed header line {line:?}")) };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "connection" => {
                let tokens: Vec<String> = value.split(',').map(|t| t.trim().to_ascii_lowercase()).collect();
                if tokens.iter().any(|t| t == "close") {
                    keep_alive = false;
                } else if tokens.iter().any(|t| t == "keep-alive") {
                    keep_alive = true;
                }
            }
            "content-length" => {
                let n = value.parse::<usize>().map_err(|_| format!("bad Content-Length {value:?}"))?;
                if !matches!(body, Body::Chunked) && n > 0 {
                    body = Body::Length(n);
                }
            }
            "transfer-encoding" if !value.eq_ignore_ascii_case("identity") => body = Body::Chunked,
            _ => {}
        }
    }
    // An absolute-form target (as sent to a proxy) is read as its path.
    let origin = match target.strip_prefix("http://").or_else(|| target.strip_prefix("https://")) {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let (raw_path, raw_query) = origin.split_once('?').unwrap_or((origin, ""));
    let path = percent_decode(raw_path, false).ok_or_else(|| format!("bad percent-encoding in {raw_path:?}"))?;
    let mut query = Vec::new();
    for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decode(k, true).ok_or_else(|| format!("bad percent-encoding in {k:?}"))?;
        let v = percent_decode(v, true).ok_or_else(|| format!("bad percent-encoding in {v:?}"))?;
        query.push((k, v));
    }
    let request = Request {
        method: method.to_string(),
        target: target.to_string(),
        path,
        raw_query: raw_query.to_string(),
        query,
        keep_alive,
    };
    Ok((request, body))
}

/// Decodes `%XX` escapes (and, in query strings, `+` as a space); `None` when malformed or
/// not UTF-8.
fn percent_decode(s: &str, plus_is_space: bool) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn serve_connection(state: &State, stream: TcpStream) {
    if stream.set_read_timeout(Some(TICK)).is_err() {
        return;
    }
    let _ = stream.set_nodelay(true);
    let mut conn = Conn { stream, buf: Vec::new() };
    loop {
        match conn.next_request(&state.stop) {
            Incoming::Closed => break,
            Incoming::Bad(code, message) => {
                let body = status_body(code, reason_of(code), &message, json!({}));
                let _ = write_response(&conn.stream, code, "application/json", &body, false);
                break;
            }
            Incoming::Request(request) => match handle(state, &mut conn, &request) {
                Ok(true) if request.keep_alive && !state.stop.load(Ordering::SeqCst) => {}
                _ => break,
            },
        }
    }
    let _ = conn.stream.shutdown(Shutdown::Both);
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    }
}

/// The `reason` of a Kubernetes Status for an HTTP status code.
fn reason_of(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        413 => "RequestEntityTooLarge",
        431 => "BadRequest",
        _ => "InternalError",
    }
}

/// A `meta/v1` Status object.
fn status_body(code: u16, reason: &str, message: &str, details: Value) -> Vec<u8> {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if details.as_object().is_some_and(|d| !d.is_empty()) || code == 404 {
        status["details"] = details;
    }
    status.to_string().into_bytes()
}

fn write_head(mut out: impl Write, code: u16, content_type: &str, length: usize, keep_alive: bool) -> io::Result<()> {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    write!(
        out,
        "HTTP/1.1 {code} {}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\nCache-Control: no-cache, private\r\nConnection: {connection}\r\n\r\n",
        reason_phrase(code)
    )
}

fn write_response(stream: &TcpStream, code: u16, content_type: &str, body: &[u8], keep_alive: bool) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, stream);
    write_head(&mut out, code, content_type, body.len(), keep_alive)?;
    out.write_all(body)?;
    out.flush()
}

/// The Status answered for a path or group/version the server does not serve.
fn not_served() -> (u16, Vec<u8>) {
    (404, status_body(404, "NotFound", "the server could not find the requested resource", json!({})))
}

fn bad_request(message: &str) -> (u16, Vec<u8>) {
    (400, status_body(400, "BadRequest", message, json!({})))
}

/// Answers one request; `Ok(false)` when the connection must close.
fn handle(state: &State, conn: &mut Conn, request: &Request) -> io::Result<bool> {
    if request.method != "GET" {
        let body = status_body(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            json!({}),
        );
        state.record(request, Call::Other, 405, body.len());
        write_response(&conn.stream, 405, "application/json", &body, request.keep_alive)?;
        return Ok(true);
    }
    let segments: Vec<&str> = request.path.split('/').filter(|s| !s.is_empty()).collect();
    let (api_version, rest) = match segments.as_slice() {
        ["version"] => return simple(state, conn, request, Call::Discovery, (200, version_info())),
        ["healthz" | "readyz" | "livez"] => {
            state.record(request, Call::Other, 200, 2);
            write_response(&conn.stream, 200, "text/plain; charset=utf-8", b"ok", request.keep_alive)?;
            return Ok(true);
        }
        ["api"] => return simple(state, conn, request, Call::Discovery, (200, api_versions(state.addr))),
        ["apis"] => return simple(state, conn, request, Call::Discovery, (200, api_group_list(&state.store))),
        ["apis", group] => return simple(state, conn, request, Call::Discovery, api_group(&state.store, group)),
        ["api", version, rest @ ..] => (version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return simple(state, conn, request, Call::Other, not_served()),
    };
    let Some(resources) = state.store.resources.get(&api_version) else {
        let call = if rest.is_empty() { Call::Discovery } else { Call::Other };
        return simple(state, conn, request, call, not_served());
    };
    // (namespace, plural, name)
    let (namespace, plural, name) = match rest {
        [] => return simple(state, conn, request, Call::Discovery, (200, api_resource_list(&api_version, resources))),
        ["namespaces", ns, plural] => (Some(*ns), *plural, None),
        ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name)),
        [plural] => (None, *plural, None),
        [plural, name] => (None, *plural, Some(*name)),
        _ => return simple(state, conn, request, Call::Other, not_served()),
    };
    let Some(resource) = state.store.resource(&api_version, plural) else {
        return simple(state, conn, request, Call::Other, not_served());
    };
    // A namespaced path to a cluster-scoped resource, or a get of a namespaced one without
    // its namespace, is not routed by the apiserver.
    if (namespace.is_some() && !resource.namespaced) || (namespace.is_none() && name.is_some() && resource.namespaced) {
        return simple(state, conn, request, Call::Other, not_served());
    }
    let watch = match request.param("watch").map(parse_bool) {
        None => false,
        Some(Some(w)) => w,
        Some(None) => {
            return simple(state, conn, request, Call::Other, bad_request("watch: invalid value, expected a boolean"));
        }
    };
    if let (Some(name), false) = (name, watch) {
        let found = state
            .store
            .objects(&api_version, &resource.kind)
            .iter()
            .find(|o| o.name == name && o.namespace.as_deref() == namespace);
        let answer = match found {
            Some(object) => {
                let mut body = Vec::with_capacity(object.tail.len() + 64);
                object.write_to(&mut body, &item_head(&api_version))?;
                (200, body)
            }
            None => not_found(&api_version, &resource.plural, name),
        };
        return simple(state, conn, request, Call::Get, answer);
    }
    let call = if watch { Call::Watch } else { Call::List };
    let mut filter = match Filter::from_request(request) {
        Ok(filter) => filter,
        Err(message) => return simple(state, conn, request, call, bad_request(&message)),
    };
    filter.namespace = namespace.map(str::to_string);
    filter.name = name.map(str::to_string);
    let objects = state.store.objects(&api_version, &resource.kind);
    if watch {
        return serve_watch(state, conn, request, &api_version, &resource.kind, objects, &filter);
    }
    serve_list(state, conn, request, &api_version, &resource.kind, objects, &filter)
}

/// Writes a small answer and records it.
fn simple(
    state: &State,
    conn: &mut Conn,
    request: &Request,
    call: Call,
    (code, body): (u16, Vec<u8>),
) -> io::Result<bool> {
    state.record(request, call, code, body.len());
    write_response(&conn.stream, code, "application/json", &body, request.keep_alive)?;
    Ok(true)
}

/// Go's `strconv.ParseBool`.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" | "" => Some(false),
        _ => None,
    }
}

fn not_found(api_version: &str, plural: &str, name: &str) -> (u16, Vec<u8>) {
    let group = group_of(api_version);
    let (message, details) = if group.is_empty() {
        (format!("{plural} {name:?} not found"), json!({"name": name, "kind": plural}))
    } else {
        (format!("{plural}.{group} {name:?} not found"), json!({"name": name, "group": group, "kind": plural}))
    };
    (404, status_body(404, "NotFound", &message, details))
}

fn version_info() -> Vec<u8> {
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

fn api_versions(addr: SocketAddr) -> Vec<u8> {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr.to_string()}]
    })
    .to_string()
    .into_bytes()
}

/// The served groups and their versions, the preferred (most stable) first.
fn groups(store: &Store) -> BTreeMap<&str, Vec<&str>> {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for api_version in store.resources.keys().filter(|av| av.contains('/')) {
        groups.entry(group_of(api_version)).or_default().push(version_of(api_version));
    }
    for versions in groups.values_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(version_rank(v)));
    }
    groups
}

fn group_json(group: &str, versions: &[&str]) -> Value {
    let entries: Vec<Value> =
        versions.iter().map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v})).collect();
    json!({"name": group, "versions": entries, "preferredVersion": entries.first().cloned().unwrap_or(Value::Null)})
}

fn api_group_list(store: &Store) -> Vec<u8> {
    let groups: Vec<Value> = groups(store).iter().map(|(g, versions)| group_json(g, versions)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}).to_string().into_bytes()
}

fn api_group(store: &Store, group: &str) -> (u16, Vec<u8>) {
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

fn api_resource_list(api_version: &str, resources: &[Resource]) -> Vec<u8> {
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

// --- selectors ---

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelRequirement {
    Exists(String),
    NotExists(String),
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
}

impl LabelRequirement {
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            LabelRequirement::Exists(k) => labels.contains_key(k),
            LabelRequirement::NotExists(k) => !labels.contains_key(k),
            LabelRequirement::Equals(k, v) => labels.get(k) == Some(v),
            LabelRequirement::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelRequirement::In(k, values) => labels.get(k).is_some_and(|v| values.contains(v)),
            LabelRequirement::NotIn(k, values) => labels.get(k).is_none_or(|v| !values.contains(v)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    Open,
    Close,
    Comma,
    In,
    NotIn,
}

impl Token {
    fn text(&self) -> &str {
        match self {
            Token::Ident(s) => s,
            Token::Not => "!",
            Token::Equals => "=",
            Token::DoubleEquals => "==",
            Token::NotEquals => "!=",
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
            Token::In => "in",
            Token::NotIn => "notin",
        }
    }
}

fn lex(selector: &str) -> Vec<Token> {
    let chars: Vec<char> = selector.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            c if c.is_whitespace() => i += 1,
            '!' if next == Some('=') => {
                tokens.push(Token::NotEquals);
                i += 2;
            }
            '!' => {
                tokens.push(Token::Not);
                i += 1;
            }
            '=' if next == Some('=') => {
                tokens.push(Token::DoubleEquals);
                i += 2;
            }
            '=' => {
                tokens.push(Token::Equals);
                i += 1;
            }
            '(' | ')' | ',' => {
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
                i += 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !matches!(chars[i], '!' | '=' | '(' | ')' | ',') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                tokens.push(match word.as_str() {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    _ => Token::Ident(word),
                });
            }
        }
    }
    tokens
}

/// Parses a label selector as the apiserver does (`key`, `!key`, `key=value`, `key==value`,
/// `key!=value`, `key in (a,b)`, `key notin (a,b)`, requirements joined by commas). The
/// error reads like the apiserver's.
pub fn parse_label_selector(selector: &str) -> Result<Vec<LabelRequirement>, String> {
    let tokens = lex(selector);
    let mut requirements = Vec::new();
    if tokens.is_empty() {
        return Ok(requirements);
    }
    let found = |t: Option<&Token>| t.map_or(String::new(), |t| t.text().to_string());
    let mut i = 0;
    loop {
        let requirement = match tokens.get(i) {
            Some(Token::Not) => {
                i += 1;
                let Some(Token::Ident(key)) = tokens.get(i) else {
                    return Err(format!(
                        "unable to parse requirement: found '{}', expected: identifier",
                        found(tokens.get(i))
                    ));
                };
                i += 1;
                LabelRequirement::NotExists(valid_key(key)?)
            }
            Some(Token::Ident(key)) => {
                let key = valid_key(key)?;
                i += 1;
                match tokens.get(i) {
                    None | Some(Token::Comma) => LabelRequirement::Exists(key),
                    Some(op @ (Token::Equals | Token::DoubleEquals | Token::NotEquals)) => {
                        i += 1;
                        let value = match tokens.get(i) {
                            Some(Token::Ident(v)) => {
                                i += 1;
                                valid_value(v)?
                            }
                            None | Some(Token::Comma) => String::new(),
                            other => {
                                return Err(format!(
                                    "unable to parse requirement: found '{}', expected: identifier",
                                    found(other)
                                ));
                            }
                        };
                        if *op == Token::NotEquals {
                            LabelRequirement::NotEquals(key, value)
                        } else {
                            LabelRequirement::Equals(key, value)
                        }
                    }
                    Some(op @ (Token::In | Token::NotIn)) => {
                        i += 1;
                        if tokens.get(i) != Some(&Token::Open) {
                            return Err(format!(
                                "unable to parse requirement: found '{}', expected: '('",
                                found(tokens.get(i))
                            ));
                        }
                        i += 1;
                        let mut values = BTreeSet::new();
                        let mut expect_value = true;
                        loop {
                            match tokens.get(i) {
                                Some(Token::Ident(v)) if expect_value => {
                                    values.insert(valid_value(v)?);
                                    expect_value = false;
                                }
                                Some(Token::Comma) if !expect_value => expect_value = true,
                                Some(Token::Comma) => {
                                    values.insert(String::new());
                                }
                                Some(Token::Close) => {
                                    if expect_value && !values.is_empty() {
                                        values.insert(String::new());
                                    }
                                    break;
                                }
                                other => {
                                    return Err(format!(
                                        "unable to parse requirement: found '{}', expected: ',', ')' or identifier",
                                        found(other)
                                    ));
                                }
                            }
                            i += 1;
                        }
                        i += 1;
                        if values.is_empty() {
                            return Err(
                                "unable to parse requirement: for 'in', 'notin' operators, values set can't be empty"
                                    .into(),
                            );
                        }
                        if *op == Token::In {
                            LabelRequirement::In(key, values)
                        } else {
                            LabelRequirement::NotIn(key, values)
                        }
                    }
                    Some(other) => {
                        return Err(format!(
                            "unable to parse requirement: found '{}', expected: in, notin, =, ==, !=, gt, lt",
                            other.text()
                        ));
                    }
                }
            }
            other => {
                return Err(format!("unable to parse requirement: found '{}', expected: !, identifier", found(other)));
            }
        };
        requirements.push(requirement);
        match tokens.get(i) {
            None => return Ok(requirements),
            Some(Token::Comma) => {
                i += 1;
                if tokens.get(i).is_none() {
                    return Err("unable to parse requirement: found '', expected: identifier after ','".into());
                }
            }
            Some(other) => return Err(format!("found '{}', expected: ',' or 'end of string'", other.text())),
        }
    }
}

/// A label name part: at most 63 characters, alphanumeric at both ends, `-`, `_` and `.`
/// between.
fn valid_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain (a label key's prefix).
fn valid_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

fn valid_key(key: &str) -> Result<String, String> {
    let ok = match key.split_once('/') {
        Some((prefix, name)) => valid_dns_subdomain(prefix) && valid_name_part(name),
        None => valid_name_part(key),
    };
    if ok {
        Ok(key.to_string())
    } else {
        Err(format!("unable to parse requirement: invalid label key {key:?}: must be a qualified name"))
    }
}

fn valid_value(value: &str) -> Result<String, String> {
    if value.is_empty() || valid_name_part(value) {
        Ok(value.to_string())
    } else {
        Err(format!(
            "unable to parse requirement: invalid label value: {value:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"
        ))
    }
}

/// One requirement of a field selector (`metadata.name` or `metadata.namespace`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct FieldRequirement {
    field: String,
    value: String,
    equal: bool,
}

fn parse_field_selector(selector: &str) -> Result<Vec<FieldRequirement>, String> {
    let mut requirements = Vec::new();
    if selector.trim().is_empty() {
        return Ok(requirements);
    }
    for term in selector.split(',') {
        let (field, value, equal) = if let Some((f, v)) = term.split_once("!=") {
            (f, v, false)
        } else if let Some((f, v)) = term.split_once("==") {
            (f, v, true)
        } else if let Some((f, v)) = term.split_once('=') {
            (f, v, true)
        } else {
            return Err(format!("invalid selector: '{selector}'; can't understand '{term}'"));
        };
        let field = field.trim();
        if !matches!(field, "metadata.name" | "metadata.namespace") {
            return Err(format!("field label not supported: {field}"));
        }
        requirements.push(FieldRequirement { field: field.to_string(), value: value.trim().to_string(), equal });
    }
    Ok(requirements)
}

/// Which stored objects a list or watch answers with.
#[derive(Default)]
struct Filter {
    namespace: Option<String>,
    name: Option<String>,
    labels: Vec<LabelRequirement>,
    fields: Vec<FieldRequirement>,
}

impl Filter {
    fn from_request(request: &Request) -> Result<Filter, String> {
        let labels = parse_label_selector(request.param("labelSelector").unwrap_or_default())?;
        let fields = parse_field_selector(request.param("fieldSelector").unwrap_or_default())?;
        Ok(Filter { namespace: None, name: None, labels, fields })
    }

    fn matches(&self, object: &Stored) -> bool {
        self.namespace.as_ref().is_none_or(|ns| object.namespace.as_ref() == Some(ns))
            && self.name.as_ref().is_none_or(|n| &object.name == n)
            && self.labels.iter().all(|r| r.matches(&object.labels))
            && self.fields.iter().all(|f| {
                let actual = if f.field == "metadata.name" {
                    object.name.as_str()
                } else {
                    object.namespace.as_deref().unwrap_or_default()
                };
                (actual == f.value) == f.equal
            })
    }
}

fn encode_continue(resource_version: u64, offset: usize) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": resource_version, "start": offset.to_string()});
    base64::engine::general_purpose::STANDARD.encode(token.to_string())
}

fn decode_continue(token: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(token).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    value["start"].as_str()?.parse().ok()
}

fn serve_list(
    state: &State,
    conn: &mut Conn,
    request: &Request,
    api_version: &str,
    kind: &str,
    objects: &[Stored],
    filter: &Filter,
) -> io::Result<bool> {
    let limit = match request.param("limit").map(str::parse::<usize>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return simple(
                state,
                conn,
                request,
                Call::List,
                bad_request("limit: invalid value, expected a non-negative integer"),
            );
        }
    };
    let start = match request.param("continue").filter(|c| !c.is_empty()) {
        None => 0,
        Some(token) => match decode_continue(token) {
            Some(offset) => offset,
            None => {
                return simple(
                    state,
                    conn,
                    request,
                    Call::List,
                    bad_request("continue key is not valid: the token cannot be decoded"),
                );
            }
        },
    };
    let matching: Vec<&Stored> = objects.iter().filter(|o| filter.matches(o)).collect();
    let start = start.min(matching.len());
    let end = if limit == 0 { matching.len() } else { start.saturating_add(limit).min(matching.len()) };
    let page = &matching[start..end];
    let rv = state.store.resource_version;
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), Value::from(rv.to_string()));
    if end < matching.len() {
        metadata.insert("continue".into(), Value::from(encode_continue(rv, end)));
        metadata.insert("remainingItemCount".into(), Value::from(matching.len() - end));
    }
    let head = format!(
        "{{\"apiVersion\":{},\"kind\":{},\"metadata\":{},\"items\":[",
        Value::from(api_version),
        Value::from(format!("{kind}List")),
        Value::Object(metadata)
    );
    let item_head = item_head(api_version);
    let length = head.len() + page.iter().map(|o| o.size(&item_head)).sum::<usize>() + page.len().saturating_sub(1) + 2;
    state.record(request, Call::List, 200, length);
    let mut out = BufWriter::with_capacity(256 * 1024, &conn.stream);
    write_head(&mut out, 200, "application/json", length, request.keep_alive)?;
    out.write_all(head.as_bytes())?;
    for (i, object) in page.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        object.write_to(&mut out, &item_head)?;
    }
    out.write_all(b"]}")?;
    out.flush()?;
    Ok(true)
}

fn write_chunk(out: &mut impl Write, data: &[u8]) -> io::Result<()> {
    write!(out, "{:x}\r\n", data.len())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")
}

fn serve_watch(
    state: &State,
    conn: &mut Conn,
    request: &Request,
    api_version: &str,
    kind: &str,
    objects: &[Stored],
    filter: &Filter,
) -> io::Result<bool> {
    let timeout = match request.param("timeoutSeconds").map(str::parse::<u64>) {
        None => MAX_WATCH_SECONDS,
        Some(Ok(n)) => n.min(MAX_WATCH_SECONDS),
        Some(Err(_)) => {
            return simple(
                state,
                conn,
                request,
                Call::Watch,
                bad_request("timeoutSeconds: invalid value, expected a non-negative integer"),
            );
        }
    };
    let send_initial = match request.param("sendInitialEvents").map(parse_bool) {
        None => false,
        Some(Some(b)) => b,
        Some(None) => {
            return simple(
                state,
                conn,
                request,
                Call::Watch,
                bad_request("sendInitialEvents: invalid value, expected a boolean"),
            );
        }
    };
    state.record(request, Call::Watch, 200, 0);
    let deadline = Instant::now() + Duration::from_secs(timeout);
    {
        let mut out = BufWriter::with_capacity(256 * 1024, &conn.stream);
        out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n")?;
        if send_initial {
            let item_head = item_head(api_version);
            for object in objects.iter().filter(|o| filter.matches(o)) {
                let mut event = Vec::with_capacity(object.size(&item_head) + 32);
                event.extend_from_slice(b"{\"type\":\"ADDED\",\"object\":");
                object.write_to(&mut event, &item_head)?;
                event.extend_from_slice(b"}\n");
                write_chunk(&mut out, &event)?;
            }
            let bookmark = json!({
                "type": "BOOKMARK",
                "object": {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {
                        "resourceVersion": state.store.resource_version.to_string(),
                        "annotations": {"k8s.io/initial-events-end": "true"}
                    }
                }
            });
            write_chunk(&mut out, format!("{bookmark}\n").as_bytes())?;
        }
        out.flush()?;
    }
    // Nothing ever changes: wait for the timeout, the client leaving or the server stopping.
    // `peek` blocks at most one read timeout (a tick) and reports a closed connection.
    let mut probe = [0u8; 1];
    loop {
        if state.stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let _ = conn.stream.set_read_timeout(Some(TICK.min(deadline - now).max(Duration::from_millis(1))));
        match conn.stream.peek(&mut probe) {
            Ok(0) => return Ok(false),
            // The client sent something while the watch runs: wait without spinning.
            Ok(_) => thread::sleep(TICK.min(deadline.saturating_duration_since(Instant::now()))),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return Ok(false),
        }
    }
    let _ = conn.stream.set_read_timeout(Some(TICK));
    let mut out = &conn.stream;
    out.write_all(b"0\r\n\r\n")?;
    out.flush()?;
    Ok(true)
}

// --- a tiny HTTP client, for tests ---

/// A minimal HTTP/1.1 client over std's TcpStream (`Connection: close`, `http://` only), for
/// talking to this server and to policy-server in tests.
pub mod client {
    use std::io::{self, Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    fn invalid(message: String) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, message)
    }

    /// Splits `http://host:port/path?query` into (`host:port`, `/path?query`).
    fn split_url(url: &str) -> io::Result<(&str, &str)> {
        let rest = url.strip_prefix("http://").ok_or_else(|| invalid(format!("not an http:// URL: {url}")))?;
        Ok(match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        })
    }

    /// Sends one request and reads the whole answer: (status, body). Chunked bodies are
    /// decoded.
    pub fn request(
        method: &str,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
        timeout: Duration,
    ) -> io::Result<(u16, Vec<u8>)> {
        let (authority, target) = split_url(url)?;
        let mut stream = TcpStream::connect(authority)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let mut head = format!(
            "{method} {target} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\nConnection: close\r\n"
        );
        if let Some(ct) = content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        if !body.is_empty() || method != "GET" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        stream.flush()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer)?;
        parse_response(&answer)
    }

    /// Parses a whole HTTP/1.1 response (read until the connection closed).
    pub fn parse_response(answer: &[u8]) -> io::Result<(u16, Vec<u8>)> {
        let end = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| invalid("no end of the response head".into()))?;
        let head = std::str::from_utf8(&answer[..end]).map_err(|_| invalid("the response head is not UTF-8".into()))?;
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| invalid(format!("bad status line in {head:?}")))?;
        let chunked = head.lines().any(|l| {
            l.split_once(':').is_some_and(|(n, v)| {
                n.trim().eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
            })
        });
        let body = &answer[end + 4..];
        Ok((status, if chunked { dechunk(body)? } else { body.to_vec() }))
    }

    /// Decodes a chunked body.
    pub fn dechunk(mut body: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let line_end =
                body.windows(2).position(|w| w == b"\r\n").ok_or_else(|| invalid("truncated chunk size".into()))?;
            let size_text = std::str::from_utf8(&body[..line_end]).map_err(|_| invalid("bad chunk size".into()))?;
            let size_text = size_text.split(';').next().unwrap_or_default().trim();
            let size =
                usize::from_str_radix(size_text, 16).map_err(|_| invalid(format!("bad chunk size {size_text:?}")))?;
            body = &body[line_end + 2..];
            if size == 0 {
                return Ok(out);
            }
            let chunk = body.get(..size).ok_or_else(|| invalid("truncated chunk".into()))?;
            out.extend_from_slice(chunk);
            body = body.get(size + 2..).ok_or_else(|| invalid("truncated chunk".into()))?;
        }
    }

    /// `GET url`: (status, body).
    pub fn get(url: &str) -> io::Result<(u16, Vec<u8>)> {
        request("GET", url, None, b"", Duration::from_secs(60))
    }

    /// `POST url` with a JSON body: (status, body).
    pub fn post_json(url: &str, body: &serde_json::Value) -> io::Result<(u16, Vec<u8>)> {
        request("POST", url, Some("application/json"), body.to_string().as_bytes(), Duration::from_secs(60))
    }
}

/// [`client::post_json`], the answer read as text.
pub fn http_post_json(url: &str, body: &Value) -> io::Result<(u16, String)> {
    let (status, body) = client::post_json(url, body)?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payloads::realistic_node;

    fn get_json(server: &TestApiServer, path: &str) -> (u16, Value) {
        let (status, body) = client::get(&format!("{}{path}", server.url())).expect("the server answers");
        let value = serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {}", String::from_utf8_lossy(&body)));
        (status, value)
    }

    fn names(list: &Value) -> Vec<&str> {
        list["items"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|o| o["metadata"]["name"].as_str().expect("a name"))
            .collect()
    }

    fn node(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    }

    fn nodes() -> Vec<Value> {
        vec![
            node("n1", json!({"zone": "a", "rack": "r1"})),
            node("n2", json!({"zone": "a", "rack": "r2"})),
            node("n3", json!({"zone": "b"})),
            node("n4", json!({})),
        ]
    }

    fn pod_group(api_version: &str, name: &str, namespace: &str) -> Value {
        json!({"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace}, "spec": {}})
    }

    #[test]
    fn discovery_lists_groups_versions_and_resources() {
        let served: BTreeSet<String> =
            ["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"].iter().map(|s| s.to_string()).collect();
        let advertised = vec![("kubeflow.org/v1".to_string(), "PyTorchJob".to_string())];
        let server = TestApiServer::start_with(
            vec![pod_group("scheduling.k8s.io/v1beta1", "pg", "ml")],
            Some(served),
            advertised,
        )
        .unwrap();
        let (status, version) = get_json(&server, "/version");
        assert_eq!((status, version["gitVersion"].as_str()), (200, Some("v1.37.0")));
        let (_, api) = get_json(&server, "/api");
        assert_eq!(api["kind"], "APIVersions");
        assert_eq!(api["versions"], json!(["v1"]));
        let (_, core) = get_json(&server, "/api/v1");
        assert_eq!(core["kind"], "APIResourceList");
        assert_eq!(core["groupVersion"], "v1");
        let node = core["resources"].as_array().unwrap().iter().find(|r| r["kind"] == "Node").expect("Node listed");
        assert_eq!(node["name"], "nodes");
        assert_eq!(node["singularName"], "node");
        assert_eq!(node["namespaced"], false);
        assert_eq!(node["verbs"], json!(["get", "list", "watch"]));
        for kind in ["Namespace", "Pod"] {
            assert!(core["resources"].as_array().unwrap().iter().any(|r| r["kind"] == kind), "{kind} listed");
        }
        let (_, groups) = get_json(&server, "/apis");
        assert_eq!(groups["kind"], "APIGroupList");
        let scheduling = groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == "scheduling.k8s.io")
            .expect("scheduling group");
        assert_eq!(scheduling["preferredVersion"]["version"], "v1beta1");
        assert_eq!(scheduling["versions"].as_array().unwrap().len(), 2);
        let (_, group) = get_json(&server, "/apis/scheduling.k8s.io");
        assert_eq!((group["kind"].as_str(), group["name"].as_str()), (Some("APIGroup"), Some("scheduling.k8s.io")));
        for version in ["v1beta1", "v1alpha3"] {
            let (status, list) = get_json(&server, &format!("/apis/scheduling.k8s.io/{version}"));
            assert_eq!(status, 200);
            let pg = &list["resources"][0];
            assert_eq!(
                (pg["kind"].as_str(), pg["name"].as_str(), pg["namespaced"].as_bool()),
                (Some("PodGroup"), Some("podgroups"), Some(true))
            );
        }
        let (status, kubeflow) = get_json(&server, "/apis/kubeflow.org/v1");
        assert_eq!(status, 200);
        assert_eq!(kubeflow["resources"][0]["name"], "pytorchjobs");
        assert_eq!(server.counts().discovery, 8);
    }

    #[test]
    fn unserved_versions_answer_404() {
        let served: BTreeSet<String> = ["scheduling.k8s.io/v1beta1".to_string()].into();
        let server = TestApiServer::start(
            vec![
                pod_group("scheduling.k8s.io/v1alpha2", "old", "ml"),
                pod_group("scheduling.k8s.io/v1beta1", "new", "ml"),
            ],
            Some(served),
        )
        .unwrap();
        for path in [
            "/apis/scheduling.k8s.io/v1alpha2",
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/old",
            "/apis/scheduling.k8s.io/v1alpha3",
            "/apis/nothing.example.com/v1",
        ] {
            let (status, body) = get_json(&server, path);
            assert_eq!(status, 404, "{path}");
            assert_eq!(body["kind"], "Status");
            assert_eq!(body["status"], "Failure");
            assert_eq!(body["reason"], "NotFound");
            assert_eq!(body["code"], 404);
            assert_eq!(body["message"], "the server could not find the requested resource");
        }
        let (status, _) = get_json(&server, "/apis/scheduling.k8s.io/v1beta1/namespaces/ml/podgroups/new");
        assert_eq!(status, 200);
        // A served version with no objects of a kind: the kind is not there.
        let (status, _) = get_json(&server, "/apis/scheduling.k8s.io/v1beta1/workloads");
        assert_eq!(status, 404);
    }

    #[test]
    fn get_finds_objects_and_words_404_like_the_apiserver() {
        let server = TestApiServer::start(
            vec![node("n1", json!({})), pod_group("scheduling.k8s.io/v1alpha2", "pg", "ml")],
            None,
        )
        .unwrap();
        let (status, n1) = get_json(&server, "/api/v1/nodes/n1");
        assert_eq!(status, 200);
        assert_eq!((n1["apiVersion"].as_str(), n1["kind"].as_str()), (Some("v1"), Some("Node")));
        assert!(n1["metadata"]["uid"].is_string() && n1["metadata"]["resourceVersion"].is_string());
        assert!(n1["metadata"].get("namespace").is_none());
        let (status, missing) = get_json(&server, "/api/v1/nodes/n9");
        assert_eq!(status, 404);
        assert_eq!(missing["message"], "nodes \"n9\" not found");
        assert_eq!(missing["reason"], "NotFound");
        assert_eq!(missing["details"], json!({"name": "n9", "kind": "nodes"}));
        let (status, pg) = get_json(&server, "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/pg");
        assert_eq!((status, pg["metadata"]["namespace"].as_str()), (200, Some("ml")));
        let (status, missing) = get_json(&server, "/apis/scheduling.k8s.io/v1alpha2/namespaces/other/podgroups/pg");
        assert_eq!(status, 404);
        assert_eq!(missing["message"], "podgroups.scheduling.k8s.io \"pg\" not found");
        assert_eq!(missing["details"], json!({"name": "pg", "group": "scheduling.k8s.io", "kind": "podgroups"}));
        // The core group's namespace objects sit at /api/v1/namespaces/<name>.
        let (status, ns) = get_json(&server, "/api/v1/namespaces/ml");
        assert_eq!((status, ns["message"].as_str()), (404, Some("namespaces \"ml\" not found")));
        assert_eq!(server.counts().get, 5);
    }

    #[test]
    fn lists_filter_by_label_selector() {
        let server = TestApiServer::start(nodes(), None).unwrap();
        let cases = [
            ("", vec!["n1", "n2", "n3", "n4"]),
            ("rack", vec!["n1", "n2"]),
            ("!rack", vec!["n3", "n4"]),
            ("zone%3Da", vec!["n1", "n2"]),
            ("zone%3D%3Db", vec!["n3"]),
            ("zone!%3Da", vec!["n3", "n4"]),
            ("rack+in+(r1%2Cr3)", vec!["n1"]),
            ("rack%20notin%20%28r1%29", vec!["n2", "n3", "n4"]),
            ("zone%3Da,rack%3Dr2", vec!["n2"]),
            ("zone,!rack", vec!["n3"]),
        ];
        for (selector, expected) in cases {
            let (status, list) = get_json(&server, &format!("/api/v1/nodes?labelSelector={selector}"));
            assert_eq!(status, 200, "{selector}");
            assert_eq!(names(&list), expected, "{selector}");
            assert_eq!((list["kind"].as_str(), list["apiVersion"].as_str()), (Some("NodeList"), Some("v1")));
            assert_eq!(list["metadata"]["resourceVersion"], server.resource_version().to_string());
            assert!(list["items"].as_array().unwrap().iter().all(|i| i["kind"] == "Node" && i["apiVersion"] == "v1"));
        }
        for bad in ["zone%3D%3D%3Da", "!", "a,", "rack+in+()", "rack+in+r1", "-bad-", "zone%3Da%20b", "rack+in+(r1"] {
            let (status, body) = get_json(&server, &format!("/api/v1/nodes?labelSelector={bad}"));
            assert_eq!(status, 400, "{bad}: {body}");
            assert_eq!((body["kind"].as_str(), body["reason"].as_str()), (Some("Status"), Some("BadRequest")), "{bad}");
        }
    }

    #[test]
    fn lists_filter_by_field_selector_and_namespace() {
        let objects = vec![
            pod_group("scheduling.k8s.io/v1alpha2", "a", "ml"),
            pod_group("scheduling.k8s.io/v1alpha2", "b", "ml"),
            pod_group("scheduling.k8s.io/v1alpha2", "a", "web"),
        ];
        let server = TestApiServer::start(objects, None).unwrap();
        let base = "/apis/scheduling.k8s.io/v1alpha2";
        let (_, all) = get_json(&server, &format!("{base}/podgroups"));
        assert_eq!(names(&all), ["a", "b", "a"]);
        let (_, ml) = get_json(&server, &format!("{base}/namespaces/ml/podgroups"));
        assert_eq!(names(&ml), ["a", "b"]);
        let (_, named) = get_json(&server, &format!("{base}/podgroups?fieldSelector=metadata.name%3Da"));
        assert_eq!(named["items"].as_array().unwrap().len(), 2);
        let (_, not_ml) = get_json(&server, &format!("{base}/podgroups?fieldSelector=metadata.namespace!%3Dml"));
        assert_eq!(not_ml["items"][0]["metadata"]["namespace"], "web");
        let (_, both) =
            get_json(&server, &format!("{base}/podgroups?fieldSelector=metadata.namespace%3D%3Dml,metadata.name%3Db"));
        assert_eq!(names(&both), ["b"]);
        let (status, bad) = get_json(&server, &format!("{base}/podgroups?fieldSelector=spec.foo%3D1"));
        assert_eq!((status, bad["message"].as_str()), (400, Some("field label not supported: spec.foo")));
        assert_eq!(server.counts().list, 6);
    }

    #[test]
    fn lists_paginate_with_limit_and_continue() {
        let server = TestApiServer::start((0..7).map(|i| node(&format!("n{i}"), json!({}))).collect(), None).unwrap();
        let mut seen = Vec::new();
        let mut path = "/api/v1/nodes?limit=3".to_string();
        let mut pages = 0;
        loop {
            let (status, page) = get_json(&server, &path);
            assert_eq!(status, 200);
            pages += 1;
            seen.extend(names(&page).into_iter().map(str::to_string));
            match page["metadata"]["continue"].as_str() {
                Some(token) => {
                    assert_eq!(page["metadata"]["remainingItemCount"], 7 - seen.len());
                    let token: String = token
                        .bytes()
                        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
                        .collect();
                    path = format!(
                        "/api/v1/nodes?limit=3&continue={token}&resourceVersion=0&resourceVersionMatch=NotOlderThan"
                    );
                }
                None => {
                    assert!(page["metadata"].get("remainingItemCount").is_none());
                    break;
                }
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, ["n0", "n1", "n2", "n3", "n4", "n5", "n6"]);
        let (status, _) = get_json(&server, "/api/v1/nodes?limit=3&continue=bm90IGEgdG9rZW4");
        assert_eq!(status, 400);
        let (status, _) = get_json(&server, "/api/v1/nodes?limit=x");
        assert_eq!(status, 400);
    }

    #[test]
    fn v1beta1_and_v1alpha3_serve_the_same_objects() {
        let objects = vec![
            pod_group("scheduling.k8s.io/v1alpha3", "made-as-alpha", "ml"),
            pod_group("scheduling.k8s.io/v1beta1", "made-as-beta", "ml"),
        ];
        let server = TestApiServer::start(objects, None).unwrap();
        for version in ["v1beta1", "v1alpha3"] {
            let api_version = format!("scheduling.k8s.io/{version}");
            let (_, list) = get_json(&server, &format!("/apis/{api_version}/namespaces/ml/podgroups"));
            assert_eq!(names(&list), ["made-as-alpha", "made-as-beta"], "{version}");
            assert_eq!(list["apiVersion"], api_version);
            assert!(list["items"].as_array().unwrap().iter().all(|i| i["apiVersion"] == api_version));
            for name in ["made-as-alpha", "made-as-beta"] {
                let (status, object) =
                    get_json(&server, &format!("/apis/{api_version}/namespaces/ml/podgroups/{name}"));
                assert_eq!((status, object["apiVersion"].as_str()), (200, Some(api_version.as_str())));
            }
        }
        // v1alpha2 is another API: its objects are not these.
        let (status, _) = get_json(&server, "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups");
        assert_eq!(status, 404);
    }

    /// Sends `requests` on one connection and reads `answers` responses (Content-Length
    /// bodies only).
    fn keep_alive_exchange(server: &TestApiServer, paths: &[&str]) -> Vec<(u16, Value)> {
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut answers = Vec::new();
        let mut buf = Vec::new();
        for path in paths {
            write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n").unwrap();
            let head_end = loop {
                if let Some(end) = find(&buf, b"\r\n\r\n") {
                    break end;
                }
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0, "connection closed early");
                buf.extend_from_slice(&chunk[..n]);
            };
            let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
            let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
            let length: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).unwrap().parse().unwrap();
            while buf.len() < head_end + 4 + length {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0, "connection closed early");
                buf.extend_from_slice(&chunk[..n]);
            }
            let body: Vec<u8> = buf.drain(..head_end + 4 + length).skip(head_end + 4).collect();
            answers.push((status, serde_json::from_slice(&body).unwrap()));
        }
        answers
    }

    #[test]
    fn connections_are_kept_alive() {
        let server = TestApiServer::start(nodes(), None).unwrap();
        let answers =
            keep_alive_exchange(&server, &["/api/v1", "/api/v1/nodes?limit=2", "/api/v1/nodes/n3", "/api/v1/nodes/zz"]);
        let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
        assert_eq!(statuses, [200, 200, 200, 404]);
        assert_eq!(names(&answers[1].1), ["n1", "n2"]);
    }

    #[test]
    fn watches_stream_initial_events_and_end_at_the_timeout() {
        let server = TestApiServer::start(nodes(), None).unwrap();
        let started = Instant::now();
        let url = format!(
            "{}/api/v1/nodes?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=5",
            server.url()
        );
        let (status, body) = client::get(&url).unwrap();
        assert_eq!((status, body.as_slice()), (200, &b""[..]));
        assert!(started.elapsed() < Duration::from_secs(5));
        let url = format!(
            "{}/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1&labelSelector=rack",
            server.url()
        );
        let (status, body) = client::get(&url).unwrap();
        assert_eq!(status, 200);
        let events: Vec<Value> =
            String::from_utf8(body).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0]["type"], "ADDED");
        assert_eq!(events[0]["object"]["metadata"]["name"], "n1");
        assert_eq!(events[1]["object"]["apiVersion"], "v1");
        assert_eq!(events[2]["type"], "BOOKMARK");
        assert_eq!(events[2]["object"]["kind"], "Node");
        assert_eq!(events[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
        assert_eq!(server.counts().watch, 2);
    }

    #[test]
    fn a_dropped_server_ends_its_watches() {
        let server = TestApiServer::start(nodes(), None).unwrap();
        let url = format!("{}/api/v1/nodes?watch=true&timeoutSeconds=120", server.url());
        let watcher = thread::spawn(move || client::get(&url));
        while server.counts().watch == 0 {
            thread::sleep(Duration::from_millis(20));
        }
        let started = Instant::now();
        drop(server);
        let _ = watcher.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    }

    #[test]
    fn bad_requests_get_4xx_not_panics() {
        let server = TestApiServer::start(nodes(), None).unwrap();
        let (status, body) = client::request(
            "POST",
            &format!("{}/api/v1/nodes", server.url()),
            Some("application/json"),
            b"{}",
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(status, 405, "{}", String::from_utf8_lossy(&body));
        for raw in [
            "GARBAGE\r\n\r\n",
            "GET /api/v1/nodes?labelSelector=%zz HTTP/1.1\r\n\r\n",
            "GET /%ff HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nbroken header\r\n\r\n",
        ] {
            let mut stream = TcpStream::connect(server.addr()).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            stream.write_all(raw.as_bytes()).unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).unwrap();
            let (status, _) = client::parse_response(&answer).unwrap();
            assert_eq!(status, 400, "{raw:?}");
        }
        let (status, _) = client::get(&format!("{}/api/v1/nodes?watch=maybe", server.url())).unwrap();
        assert_eq!(status, 400);
        let (status, _) = client::get(&format!("{}/api/v1/pods/x", server.url())).unwrap();
        assert_eq!(status, 404, "a namespaced get without a namespace is not routed");
        let (status, _) = client::get(&format!("{}/api/v1/namespaces/ml/nodes", server.url())).unwrap();
        assert_eq!(status, 404, "cluster-scoped resources have no namespaced path");
    }

    #[test]
    fn kubeconfig_points_at_the_server() {
        let server = TestApiServer::start(Vec::new(), None).unwrap();
        let config: Value = serde_norway::from_str(&server.kubeconfig()).unwrap();
        assert_eq!(config["clusters"][0]["cluster"]["server"], server.url());
        assert_eq!(config["current-context"], "test-apiserver");
        assert_eq!(config["contexts"][0]["context"]["cluster"], "test-apiserver");
    }

    #[test]
    fn realistic_nodes_look_like_cloud_nodes() {
        let node = realistic_node(85);
        let size = node.to_string().len();
        assert!((3_000..=5_500).contains(&size), "{size} bytes");
        assert_eq!(node["metadata"]["name"], "node-85");
        assert_eq!(node["metadata"]["labels"].as_object().unwrap().len(), 7);
        assert_eq!(node["metadata"]["labels"]["topology.example.com/rack"], "rack-2");
        assert_eq!(node["status"]["conditions"].as_array().unwrap().len(), 5);
        assert_eq!(node["status"]["images"].as_array().unwrap().len(), 12);
        assert_ne!(realistic_node(1)["metadata"]["uid"], node["metadata"]["uid"]);
    }

    #[test]
    fn bad_objects_are_refused_at_start() {
        assert!(TestApiServer::start(vec![json!(1)], None).is_err());
        assert!(TestApiServer::start(vec![json!({"kind": "Node", "metadata": {"name": "x"}})], None).is_err());
        assert!(TestApiServer::start(vec![node("x", json!({})), node("x", json!({}))], None).is_err());
    }

    /// `cargo test -p gangwarden-e2e-tests --lib apiserver -- --ignored --nocapture`: how
    /// long 15,000 realistic Nodes take to list, whole and in pages of 500.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn large_node_list_timing() {
        let started = Instant::now();
        let server = TestApiServer::start((0..15_000).map(realistic_node).collect(), None).unwrap();
        println!("start with 15000 nodes: {:?}", started.elapsed());
        let started = Instant::now();
        let (status, body) = client::get(&format!("{}/api/v1/nodes", server.url())).unwrap();
        assert_eq!(status, 200);
        println!("whole list: {} bytes in {:?}", body.len(), started.elapsed());
        let started = Instant::now();
        let mut path = format!("{}/api/v1/nodes?limit=500", server.url());
        let mut pages = 0;
        loop {
            let (_, body) = client::get(&path).unwrap();
            pages += 1;
            let page: Value = serde_json::from_slice(&body).unwrap();
            let Some(token) = page["metadata"]["continue"].as_str() else { break };
            let token: String = token
                .bytes()
                .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
                .collect();
            path = format!("{}/api/v1/nodes?limit=500&continue={token}", server.url());
        }
        println!("{pages} pages of 500 (each parsed by the test): {:?}", started.elapsed());
    }
}

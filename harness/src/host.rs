//! Loading a policy module and calling it through waPC, and the payloads policy-server sends.
//! Only the `host` feature builds the waPC side (`Policy`, on wasmtime); the payloads and the
//! shape of an evaluation need no runtime.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::UserInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
#[cfg(feature = "host")]
use {
    gangwarden_core::cluster::{LookupError, MemoryCluster, ObjectCluster, Query},
    std::collections::BTreeSet,
    std::path::{Path, PathBuf},
    std::sync::{Arc, Mutex},
    std::time::Instant,
    wapc::WapcHost,
    wasmtime_provider::{WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre, wasmtime},
};

#[cfg(feature = "host")]
type HostResult = Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>>;

#[cfg(feature = "host")]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
    /// `namespace/operation` patterns; absent means none, as policy-server reads it.
    #[serde(default)]
    host_capabilities: Vec<String>,
}

#[cfg(feature = "host")]
#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
struct ContextAwareResource {
    api_version: String,
    kind: String,
}

#[cfg(feature = "host")]
/// A compiled policy module, ready to be instantiated once per evaluation.
pub struct Policy {
    pub name: String,
    pub wasm: PathBuf,
    pre: WasmtimeEngineProviderPre,
    allowed: Allowed,
}

#[cfg(feature = "host")]
/// What the policy's `metadata.yml` lets it reach, as policy-server enforces it.
#[derive(Clone, Debug)]
struct Allowed {
    /// `contextAwareResources`: (apiVersion, kind).
    resources: BTreeSet<(String, String)>,
    /// `hostCapabilities` patterns.
    capabilities: Vec<String>,
}

#[cfg(feature = "host")]
impl Allowed {
    /// policy-evaluator's pattern match: `*`, `namespace/*`, `namespace/v1/*` or the exact
    /// `namespace/operation`.
    fn capability(&self, path: &str) -> bool {
        self.capabilities.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => c == path,
        })
    }
}

/// One host call the policy made, as kwctl records it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCall {
    pub operation: String,
    pub request: Value,
    /// The payload answered, or the error as the Kubernetes client gave it (which kwctl
    /// records, and policy-server wraps: see [`callback_failure`]).
    pub response: Result<Value, String>,
}

/// The outcome of one waPC call.
#[derive(Debug)]
pub struct Evaluation {
    /// The guest's answer, or the guest error (policy-server turns that into a 500).
    pub answer: Result<Value, String>,
    pub host_calls: Vec<HostCall>,
    /// How long a fresh instance took: `rehydrate` and `wapc_init`.
    pub instance_time: Duration,
    /// How long the guest call itself took, without instantiating the module.
    pub call_time: Duration,
    /// How much of `call_time` the host spent answering host calls (policy-server answers
    /// them natively from its cache; benchmarks count the policy's own time apart).
    pub host_time: Duration,
}

#[cfg(feature = "host")]
impl Policy {
    /// Loads `<dir>/policy.wasm` and `<dir>/metadata.yml`.
    pub fn load(name: &str, dir: &Path) -> Result<Policy, String> {
        Policy::load_with(name, dir, false)
    }

    /// [`Policy::load`]; with `perf_map`, wasmtime writes `/tmp/perf-<pid>.map` so that
    /// `perf record` names the guest's functions (in a module that keeps its name section).
    pub fn load_with(name: &str, dir: &Path, perf_map: bool) -> Result<Policy, String> {
        let wasm = dir.join("policy.wasm");
        let bytes = std::fs::read(&wasm)
            .map_err(|e| format!("cannot read {}: {e} (run `make policies` first)", wasm.display()))?;
        let metadata_path = dir.join("metadata.yml");
        let metadata: Metadata = serde_norway::from_str(
            &std::fs::read_to_string(&metadata_path)
                .map_err(|e| format!("cannot read {}: {e}", metadata_path.display()))?,
        )
        .map_err(|e| format!("{}: {e}", metadata_path.display()))?;
        let mut builder = WasmtimeEngineProviderBuilder::new().module_bytes(&bytes);
        if perf_map {
            let mut config = wasmtime::Config::new();
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
            let engine = wasmtime::Engine::new(&config).map_err(|e| format!("cannot start wasmtime: {e}"))?;
            builder = builder.engine(engine);
        }
        let pre = builder.build_pre().map_err(|e| format!("cannot compile {}: {e}", wasm.display()))?;
        let allowed = Allowed {
            resources: metadata.context_aware_resources.into_iter().map(|r| (r.api_version, r.kind)).collect(),
            capabilities: metadata.host_capabilities,
        };
        Ok(Policy { name: name.to_string(), wasm, pre, allowed })
    }

    /// Calls `operation` with `payload` in a fresh instance whose lookups see `cluster`.
    pub fn call(&self, operation: &str, payload: &[u8], cluster: MemoryCluster) -> Result<Evaluation, String> {
        let start = Instant::now();
        let instance = self.instance(cluster)?;
        let instance_time = start.elapsed();
        Ok(instance.evaluate(operation, payload, instance_time))
    }

    /// A fresh instance (`rehydrate` and `wapc_init`) whose lookups see `cluster`.
    pub fn instance(&self, cluster: MemoryCluster) -> Result<Instance, String> {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&calls);
        let host_time = Arc::new(Mutex::new(Duration::ZERO));
        let host_timer = Arc::clone(&host_time);
        let allowed = self.allowed.clone();
        let callback = move |_id: u64, binding: &str, namespace: &str, op: &str, payload: &[u8]| -> HostResult {
            let start = Instant::now();
            let answer = answer_host_call(&allowed, &cluster, &recorded, binding, namespace, op, payload);
            if let Ok(mut t) = host_timer.lock() {
                *t += start.elapsed();
            }
            answer
        };
        let engine = self.pre.rehydrate(None).map_err(|e| format!("cannot instantiate {}: {e}", self.name))?;
        let host =
            WapcHost::new(Box::new(engine), Some(Box::new(callback))).map_err(|e| format!("wapc_init failed: {e}"))?;
        Ok(Instance { host, calls, host_time })
    }
}

#[cfg(feature = "host")]
/// One instance of a policy module; each call sees what the calls before it left in its
/// memory, as in `kwctl bench` (policy-server makes a fresh one per request).
pub struct Instance {
    host: WapcHost,
    calls: Arc<Mutex<Vec<HostCall>>>,
    host_time: Arc<Mutex<Duration>>,
}

#[cfg(feature = "host")]
impl Instance {
    /// Calls `operation` with `payload`; `instance_time` is what making the instance took
    /// (zero for a call on an instance used before). The host calls and their time are this
    /// call's alone.
    pub fn evaluate(&self, operation: &str, payload: &[u8], instance_time: Duration) -> Evaluation {
        let (calls, host_time) = (&self.calls, &self.host_time);
        if let (Ok(mut c), Ok(mut t)) = (calls.lock(), host_time.lock()) {
            c.clear();
            *t = Duration::ZERO;
        }
        let host = &self.host;
        let start = Instant::now();
        let result = host.call(operation, payload);
        let call_time = start.elapsed();
        let answer = match result {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("the policy answered something that is not JSON: {e}")),
            Err(e) => Err(format!("guest error: {e}")),
        };
        let host_calls = calls.lock().map(|c| c.clone()).unwrap_or_default();
        let host_time = host_time.lock().map(|t| *t).unwrap_or_default();
        Evaluation { answer, host_calls, instance_time, call_time, host_time }
    }
}

impl Evaluation {
    /// What the request cost as policy-server runs it: a fresh instance and the call, less
    /// the time spent answering host calls. What this host does afterwards (reading the
    /// answer, copying the calls it recorded, freeing the in-memory cluster) is not counted.
    pub fn request_time(&self) -> Duration {
        (self.instance_time + self.call_time).saturating_sub(self.host_time)
    }
}

/// The AdmissionRequest as kwctl and policy-server decode it before calling a policy: `uid`,
/// `kind`, `resource`, `operation` and `userInfo` are required, every other field is optional.
/// Absent and `null` optional fields are left out of what the policy receives.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionRequest {
    uid: String,
    kind: GroupVersionKind,
    resource: GroupVersionResource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_kind: Option<GroupVersionKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_resource: Option<GroupVersionResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    operation: String,
    user_info: UserInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    old_object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    options: Option<Value>,
}

#[derive(Debug, Deserialize, Serialize)]
struct GroupVersionKind {
    group: String,
    version: String,
    kind: String,
}

#[derive(Debug, Deserialize, Serialize)]
struct GroupVersionResource {
    group: String,
    version: String,
    resource: String,
}

/// The request the policy receives for `request` (a bare AdmissionRequest or a whole
/// AdmissionReview), or kwctl's error when kwctl and policy-server cannot build one from it.
pub fn admission_request(request: &Value) -> Result<Value, String> {
    let object = request.as_object().ok_or("Invalid request object")?;
    let request = if object.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        object.get("request").ok_or("invalid AdmissionReview object")?
    } else {
        request
    };
    let built: AdmissionRequest = serde_json::from_value(request.clone())
        .map_err(|e| format!("cannot build AdmissionRequest object from given input: {e}"))?;
    serde_json::to_value(built).map_err(|e| e.to_string())
}

/// The `validate` payload policy-server sends: the request as built above and the settings
/// (always an object: no settings are `{}`).
pub fn validate_payload(request: &Value, settings: &Value) -> Result<Vec<u8>, String> {
    let settings = if settings.is_null() { json!({}) } else { settings.clone() };
    serde_json::to_vec(&json!({"request": admission_request(request)?, "settings": settings}))
        .map_err(|e| e.to_string())
}

#[cfg(feature = "host")]
fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

#[cfg(feature = "host")]
/// Answers one host call the way policy-server does.
fn answer_host_call(
    allowed: &Allowed,
    cluster: &MemoryCluster,
    calls: &Mutex<Vec<HostCall>>,
    binding: &str,
    namespace: &str,
    op: &str,
    payload: &[u8],
) -> HostResult {
    if (binding, namespace, op) == ("kubewarden", "tracing", "log") {
        return Ok(Vec::new());
    }
    if binding != "kubewarden" {
        return Err(format!("unknown binding: {binding}").into());
    }
    let capability = format!("{namespace}/{op}");
    if !allowed.capability(&capability) {
        return Err(format!(
            "Policy has not been granted access to the '{capability}' host capability. The violation has been reported."
        )
        .into());
    }
    if namespace != "kubernetes" {
        return Err(format!("unknown operation: {op}").into());
    }
    let request: Value = serde_json::from_slice(payload)?;
    let (api_version, kind) = (str_field(&request, "api_version"), str_field(&request, "kind"));
    if !allowed.resources.contains(&(api_version.to_string(), kind.to_string())) {
        return Err(format!(
            "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. The violation has been reported."
        )
        .into());
    }
    let response = kubernetes_call(cluster, op, &request);
    if let Ok(mut calls) = calls.lock() {
        calls.push(HostCall { operation: op.to_string(), request, response: response.clone() });
    }
    match response {
        Ok(v) => Ok(serde_json::to_vec(&v)?),
        Err(e) => Err(callback_failure(&e, backtraces_on()).into()),
    }
}

/// How policy-server (and kwctl, replaying a session) words a lookup the Kubernetes client
/// failed: the client's error in `anyhow`'s debug form, which ends in a stack backtrace when
/// the environment asks for one (`RUST_BACKTRACE=1` is common in containers).
pub fn callback_failure(error: &str, backtrace: bool) -> String {
    let trace = if backtrace { "\n\nStack backtrace:\n   0: <unknown>\n   1: start_thread" } else { "" };
    format!("Callback evaluation failure: {error}{trace}")
}

/// Whether a Rust host in this environment captures backtraces (`anyhow`'s rule:
/// `RUST_LIB_BACKTRACE`, else `RUST_BACKTRACE`, anything but `0` meaning yes).
pub fn backtraces_on() -> bool {
    let var = std::env::var("RUST_LIB_BACKTRACE").or_else(|_| std::env::var("RUST_BACKTRACE"));
    var.is_ok_and(|v| v != "0")
}

#[cfg(feature = "host")]
/// A `kubernetes` host call answered from the cluster, or the Kubernetes client's error.
fn kubernetes_call(cluster: &MemoryCluster, op: &str, req: &Value) -> Result<Value, String> {
    let (api_version, kind) = (str_field(req, "api_version"), str_field(req, "kind"));
    let masks: Vec<String> =
        req["field_masks"].as_array().into_iter().flatten().filter_map(|m| m.as_str().map(String::from)).collect();
    let masks: Vec<&str> = masks.iter().map(String::as_str).collect();
    let namespace = req["namespace"].as_str();
    let query = Query { api_version, kind, namespace, field_masks: &masks };
    match op {
        "get_resource" => {
            let name = str_field(req, "name");
            match cluster.get_object(&query, name).map_err(host_error)? {
                Some(object) => Ok(object),
                None => {
                    Err(format!("Cannot find {api_version}/{kind} named '{name}' inside of namespace '{namespace:?}'"))
                }
            }
        }
        "list_resources_by_namespace" | "list_resources_all" => {
            let query = if op == "list_resources_all" { Query { namespace: None, ..query } } else { query };
            // policy-server passes a selector on to the API server; the rules never send one,
            // but a host must honour it (the baseline policy's list can carry one).
            let selector =
                gangwarden_test_apiserver::parse_label_selector(req["label_selector"].as_str().unwrap_or_default())?;
            let mut items = cluster.list_objects(&query).map_err(host_error)?;
            items.retain(|item| selector.iter().all(|r| r.matches(&labels_of(item))));
            Ok(gangwarden_core::cluster::list_answer(&query, items))
        }
        other => Err(format!("unknown operation: {other}")),
    }
}

#[cfg(feature = "host")]
fn labels_of(object: &Value) -> std::collections::BTreeMap<String, String> {
    let labels = object["metadata"]["labels"].as_object().into_iter().flatten();
    labels.map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect()
}

#[cfg(feature = "host")]
/// A failed lookup as policy-server words it: a kind the cluster does not serve (or cannot
/// discover) is `Cannot find resource <apiVersion>/<kind>`.
fn host_error(e: LookupError) -> String {
    match e {
        LookupError::NotServed { api_version, kind } => format!("Cannot find resource {api_version}/{kind}"),
        // Only the CLI's and the playground's clusters answer this; a host never does.
        e @ LookupError::NotGiven { .. } => e.to_string(),
        LookupError::Failed(message) => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_built_as_kwctl_builds_them() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
        let full = gangwarden_core::request::admission_request("u", "CREATE", &pod, None);
        let built = admission_request(&full).unwrap();
        // null optional fields are left out, the rest passes through unchanged.
        assert!(built.get("oldObject").is_none());
        assert_eq!((&built["object"], &built["resource"]), (&full["object"], &full["resource"]));
        let review = json!({"kind": "AdmissionReview", "request": full});
        assert_eq!(admission_request(&review).unwrap(), built);
        // unknown fields are not passed on.
        let mut extra = full.clone();
        extra["surprise"] = json!(1);
        assert!(admission_request(&extra).unwrap().get("surprise").is_none());
        let mut no_user = full.clone();
        no_user.as_object_mut().unwrap().remove("userInfo");
        assert_eq!(
            admission_request(&no_user).unwrap_err(),
            "cannot build AdmissionRequest object from given input: missing field `userInfo`"
        );
        assert_eq!(admission_request(&json!([])).unwrap_err(), "Invalid request object");
        assert_eq!(
            validate_payload(&full, &Value::Null)
                .map(|p| serde_json::from_slice::<Value>(&p).unwrap()["settings"].clone()),
            Ok(json!({}))
        );
    }

    #[test]
    #[cfg(feature = "host")]
    fn capabilities_match_as_policy_evaluator_matches_them() {
        let allowed = Allowed {
            resources: BTreeSet::new(),
            capabilities: vec!["kubernetes/get_resource".into(), "oci/v1/*".into()],
        };
        assert!(allowed.capability("kubernetes/get_resource"));
        assert!(!allowed.capability("kubernetes/list_resources_all"));
        assert!(allowed.capability("oci/v1/manifest_digest") && !allowed.capability("oci/v2/verify"));
        let everything = Allowed { resources: BTreeSet::new(), capabilities: vec!["*".into()] };
        assert!(everything.capability("net/v1/dns_lookup_host"));
        let none = Allowed { resources: BTreeSet::new(), capabilities: Vec::new() };
        assert!(!none.capability("kubernetes/get_resource"));
        assert_eq!(callback_failure("timeout", false), "Callback evaluation failure: timeout");
        assert!(
            callback_failure("timeout", true).starts_with("Callback evaluation failure: timeout\n\nStack backtrace:")
        );
    }
}

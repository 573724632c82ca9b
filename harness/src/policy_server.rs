//! The real Kubewarden policy-server (1.35) as a test harness (`make e2e-policy-server`, the
//! policy-server rows of `make bench`).
//!
//! - [`policies_yml`] builds the `policies.yml` the Kubewarden 1.35 controller writes into the
//!   PolicyServer's ConfigMap for the given deploy manifests (see the controller's
//!   `internal/controller/policyserver_controller_configmap.go`), each `module:` pointing at
//!   the locally annotated module of its policy ([`annotate_all`]).
//! - [`PolicyServer::start`] runs policy-server on 127.0.0.1 with that file, against a
//!   kubeconfig (the test API server, `gangwarden-test-apiserver`) or none, and stops it when dropped.
//! - [`judge`] and [`judge_group`] check policy-server's AdmissionReview answers against the
//!   e2e cases' expectations, as `crate::kwctl::judge` checks kwctl's.
//!
//! The tools are found through `POLICY_SERVER` and `KWCTL`, else on `PATH` ([`tool`]); a test
//! without one skips, or fails in CI ([`missing`]).

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::{POLICIES, metadata, repo_root};
use gangwarden_test_apiserver::client;

mod verdict;
pub use verdict::{GroupExpect, answer_from_response, expect_from_answer, group_members, judge, judge_group};

/// How long policy-server may take to compile its modules and answer `/readiness`.
pub const READY_WITHIN: Duration = Duration::from_secs(90);
/// How long one AdmissionReview may take to be answered.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);
/// The host capabilities the controller grants every cluster-wide policy.
const CLUSTER_WIDE_CAPABILITIES: &[&str] = &["*"];

/// A tool from `$env_var` (a path) or, when that is unset or empty, the first `name` on
/// `PATH`.
pub fn tool(env_var: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env_var).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// Whether this is a CI run: `CI` is set and not empty (`.ci/run` sets `CI=true`, as GitHub
/// Actions does).
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The one decision for a test (`test`) that cannot run because something it needs is missing
/// (`why`): in CI that is a failure, returned as `Err`, so a run without the tools cannot pass;
/// on a user's machine it prints `skipped: <test> (<why>)` and returns `Ok(())`, and the
/// caller returns having run nothing.
pub fn missing(test: &str, why: &str) -> Result<(), String> {
    let skip = skip_or_fail(in_ci(), test, why)?;
    println!("{skip}");
    Ok(())
}

/// [`missing`]'s decision: the line a skip prints, or the failure.
fn skip_or_fail(ci: bool, test: &str, why: &str) -> Result<String, String> {
    if ci {
        Err(format!("{test}: {why}; CI is set, so a missing tool fails the run instead of skipping it"))
    } else {
        Ok(format!("skipped: {test} ({why})"))
    }
}

/// A tool `test` needs, from [`tool`]: `Ok(None)` when it is missing and the test skips,
/// `Err` when it is missing in CI ([`missing`]).
pub fn needed_tool(test: &str, env_var: &str, name: &str) -> Result<Option<PathBuf>, String> {
    match tool(env_var, name) {
        Some(path) => Ok(Some(path)),
        None => missing(test, &format!("{name} not found: put it on PATH or set {env_var}")).map(|()| None),
    }
}

/// A fresh folder under the system's temporary folder, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(prefix: &str) -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Annotated modules and policies.yml

/// `kwctl annotate` of `<dir>/policy.wasm` with `<dir>/metadata.yml` (and `<dir>/README.md`
/// when there is one) into `out`. Any `WARN` kwctl prints (a host capability used but not
/// declared, or declared but unused) is an error.
pub fn annotate(kwctl: &Path, dir: &Path, out: &Path) -> Result<(), String> {
    let mut cmd = Command::new(kwctl);
    cmd.arg("annotate").arg("-m").arg(dir.join("metadata.yml"));
    if dir.join("README.md").is_file() {
        cmd.arg("-u").arg(dir.join("README.md"));
    }
    let output =
        cmd.arg("-o").arg(out).arg(dir.join("policy.wasm")).output().map_err(|e| format!("cannot run kwctl: {e}"))?;
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() || said.contains("WARN") {
        return Err(format!("kwctl annotate {}: {said}", dir.display()));
    }
    Ok(())
}

/// Annotates each (name, folder) into `out_dir/<name>.wasm`; returns name → annotated module.
pub fn annotate_all(
    kwctl: &Path,
    policies: &[(&str, PathBuf)],
    out_dir: &Path,
) -> Result<BTreeMap<String, PathBuf>, String> {
    let mut modules = BTreeMap::new();
    for (name, dir) in policies {
        let out = out_dir.join(format!("{name}.wasm"));
        annotate(kwctl, dir, &out)?;
        modules.insert(name.to_string(), out);
    }
    Ok(modules)
}

/// Every policy of [`POLICIES`] with its folder, as [`annotate_all`] takes them.
pub fn project_policies() -> Vec<(&'static str, PathBuf)> {
    POLICIES.iter().map(|(name, dir)| (*name, repo_root().join(dir))).collect()
}

/// A manifest file (YAML) as JSON.
pub fn read_manifest(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The policy (a name of [`POLICIES`]) a manifest's `module:` names: the one whose
/// `metadata.yml` makes the image `registry://<ociUrl>:v<version>`.
pub fn module_policy(module: &str) -> Result<&'static str, String> {
    for (name, dir) in POLICIES {
        if format!("registry://{}", metadata::read_metadata(dir)?.image()?) == module {
            return Ok(name);
        }
    }
    Err(format!("no policy of this repository is published as {module}"))
}

/// The module policy-server loads for a manifest's `module:`: a `file://` one as it is, a
/// `registry://` one of this repository's policies as `file://` of its annotated module.
fn local_module(module: &str, modules: &BTreeMap<String, PathBuf>) -> Result<String, String> {
    if module.starts_with("file://") {
        return Ok(module.to_string());
    }
    let policy = module_policy(module)?;
    let path = modules.get(policy).ok_or(format!("no annotated module for policy {policy:?} ({module})"))?;
    Ok(format!("file://{}", path.display()))
}

fn name_of(manifest: &Value) -> Result<&str, String> {
    manifest["metadata"]["name"].as_str().ok_or_else(|| "a manifest without metadata.name".to_string())
}

/// The key the controller gives a manifest in `policies.yml`, which is also the policy id of
/// `/validate/<id>`: `clusterwide-<name>`, `clusterwide-group-<name>`.
pub fn entry_id(manifest: &Value) -> Result<String, String> {
    let name = name_of(manifest)?;
    match manifest["kind"].as_str() {
        Some("ClusterAdmissionPolicy") => Ok(format!("clusterwide-{name}")),
        Some("ClusterAdmissionPolicyGroup") => Ok(format!("clusterwide-group-{name}")),
        other => Err(format!("{name}: kind {other:?} is not a cluster-wide policy or policy group")),
    }
}

/// A copy of a policy manifest under another name with other settings: an extra entry, e.g.
/// run-policy with defaulting settings.
pub fn with_settings(manifest: &Value, name: &str, settings: &Value) -> Value {
    let mut copy = manifest.clone();
    copy["metadata"]["name"] = json!(name);
    copy["spec"]["settings"] = settings.clone();
    copy
}

/// Fields the controller writes only when set (Go's `omitempty`).
fn insert_if_set(entry: &mut Map<String, Value>, key: &str, value: &Value) {
    let empty = match value {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    if !empty {
        entry.insert(key.to_string(), value.clone());
    }
}

/// The `policies.yml` the Kubewarden 1.35 controller writes for `manifests` (cluster-wide
/// policies and policy groups), with every `registry://` module of this repository replaced
/// by `file://` of its annotated module in `modules` (policy name → path). The controller
/// writes it as JSON, which policy-server reads as YAML.
pub fn policies_yml(manifests: &[Value], modules: &BTreeMap<String, PathBuf>) -> Result<Value, String> {
    policies_yml_with(manifests, |module| local_module(module, modules))
}

/// [`policies_yml`] with each manifest's `module:` replaced by `module_url(module)`, e.g. a
/// `registry://` of a local registry.
pub fn policies_yml_with(
    manifests: &[Value],
    module_url: impl Fn(&str) -> Result<String, String>,
) -> Result<Value, String> {
    let capabilities = json!(CLUSTER_WIDE_CAPABILITIES);
    let mut out = Map::new();
    for manifest in manifests {
        let id = entry_id(manifest)?;
        let name = name_of(manifest)?;
        let spec = &manifest["spec"];
        let mut entry = Map::new();
        entry.insert("namespacedName".into(), json!({"Namespace": "", "Name": name}));
        // The CRD defaults `mode` to protect.
        let mode = spec["mode"].as_str().unwrap_or("protect");
        if manifest["kind"] == "ClusterAdmissionPolicyGroup" {
            entry.insert("policyMode".into(), json!(mode));
            let members = spec["policies"].as_object().ok_or(format!("{name}: spec.policies is not a map"))?;
            let mut policies = Map::new();
            for (member, m) in members {
                let module = m["module"].as_str().ok_or(format!("{name}: member {member} has no module"))?;
                let mut p = Map::new();
                p.insert("module".into(), json!(module_url(module)?));
                // runtime.RawExtension: `null` when absent, never left out.
                p.insert("settings".into(), m["settings"].clone());
                insert_if_set(&mut p, "contextAwareResources", &m["contextAwareResources"]);
                insert_if_set(&mut p, "timeoutEvalSeconds", &m["timeoutEvalSeconds"]);
                p.insert("hostCapabilities".into(), capabilities.clone());
                policies.insert(member.clone(), Value::Object(p));
            }
            entry.insert("policies".into(), Value::Object(policies));
            entry.insert("expression".into(), json!(spec["expression"].as_str().unwrap_or_default()));
            entry.insert("message".into(), json!(spec["message"].as_str().unwrap_or_default()));
        } else {
            let module = spec["module"].as_str().ok_or(format!("{name}: no spec.module"))?;
            entry.insert("module".into(), json!(module_url(module)?));
            entry.insert("policyMode".into(), json!(mode));
            entry.insert("allowedToMutate".into(), json!(spec["mutating"].as_bool().unwrap_or(false)));
            insert_if_set(&mut entry, "contextAwareResources", &spec["contextAwareResources"]);
            entry.insert("settings".into(), spec["settings"].clone());
            insert_if_set(&mut entry, "message", &spec["message"]);
            insert_if_set(&mut entry, "timeoutEvalSeconds", &spec["timeoutEvalSeconds"]);
            entry.insert("hostCapabilities".into(), capabilities.clone());
        }
        if out.insert(id.clone(), Value::Object(entry)).is_some() {
            return Err(format!("two manifests make the policies.yml entry {id}"));
        }
    }
    Ok(Value::Object(out))
}

pub use crate::payloads::audit_request;

/// Every (apiVersion, kind) the manifests' policies and group members may look up: what a
/// test API server must list in discovery for policy-server to find the kind.
pub fn context_aware_resources(manifests: &[Value]) -> Vec<(String, String)> {
    let mut lists: Vec<&Value> = manifests.iter().map(|m| &m["spec"]["contextAwareResources"]).collect();
    for m in manifests {
        lists.extend(m["spec"]["policies"].as_object().into_iter().flatten().map(|(_, p)| &p["contextAwareResources"]));
    }
    let mut out: Vec<(String, String)> = lists
        .into_iter()
        .flat_map(|l| l.as_array().into_iter().flatten())
        .filter_map(|r| Some((r["apiVersion"].as_str()?.to_string(), r["kind"].as_str()?.to_string())))
        .collect();
    out.sort();
    out.dedup();
    out
}

// ---------------------------------------------------------------------------------------------
// The process

/// How policy-server is started besides its policies.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--log-level`; default `$POLICY_SERVER_LOG_LEVEL`, else `info`.
    pub log_level: String,
    /// `--workers`; `None`: policy-server's default (one per core).
    pub workers: Option<usize>,
    /// More arguments, e.g. `--sources-path FILE`, `--verification-path FILE`.
    pub extra_args: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            log_level: std::env::var("POLICY_SERVER_LOG_LEVEL").unwrap_or_else(|_| "info".into()),
            workers: None,
            extra_args: Vec::new(),
        }
    }
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// A running policy-server on 127.0.0.1, killed when dropped.
pub struct PolicyServer {
    child: Child,
    log: PathBuf,
    port: u16,
    /// How long it took to answer `/readiness`.
    pub ready_after: Duration,
    // Last: removed after the process is gone.
    _dir: TempDir,
}

impl PolicyServer {
    /// Writes `policies_yml` into a temporary folder and starts policy-server on it; with a
    /// kubeconfig its lookups go to that cluster, without one it starts with
    /// `--ignore-kubernetes-connection-failure` (and every lookup fails). Returns once
    /// `/readiness` answers, or policy-server's output when it exits or is not ready within
    /// [`READY_WITHIN`].
    pub fn start(policies_yml: &Value, kubeconfig: Option<&Path>) -> Result<PolicyServer, String> {
        PolicyServer::start_with(policies_yml, kubeconfig, &Options::default())
    }

    pub fn start_with(
        policies_yml: &Value,
        kubeconfig: Option<&Path>,
        options: &Options,
    ) -> Result<PolicyServer, String> {
        let binary = tool("POLICY_SERVER", "policy-server")
            .ok_or("policy-server not found (set POLICY_SERVER or put policy-server on PATH)")?;
        let dir = TempDir::new("gangwarden-policy-server")?;
        let policies = dir.path().join("policies.yml");
        let text = serde_json::to_string_pretty(policies_yml).map_err(|e| e.to_string())?;
        std::fs::write(&policies, text).map_err(|e| format!("{}: {e}", policies.display()))?;
        let (port, readiness_port) = (free_port()?, free_port()?);
        let log = dir.path().join("policy-server.log");
        let log_file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let log_err = log_file.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&binary);
        cmd.arg("--policies")
            .arg(&policies)
            .args(["--addr", "127.0.0.1", "--port", &port.to_string()])
            .args(["--readiness-probe-port", &readiness_port.to_string()])
            .arg("--policies-download-dir")
            .arg(dir.path().join("downloads"))
            .arg("--sigstore-cache-dir")
            .arg(dir.path().join("sigstore"))
            .args(["--log-level", &options.log_level, "--log-no-color"]);
        if let Some(workers) = options.workers {
            cmd.args(["--workers", &workers.to_string()]);
        }
        cmd.args(&options.extra_args);
        match kubeconfig {
            Some(path) => cmd.env("KUBECONFIG", path),
            // A kubeconfig that does not exist, so no ~/.kube/config is picked up either.
            None => {
                cmd.arg("--ignore-kubernetes-connection-failure").env("KUBECONFIG", dir.path().join("no-kubeconfig"))
            }
        };
        for var in ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
            cmd.env_remove(var).env_remove(var.to_ascii_lowercase());
        }
        cmd.env("NO_PROXY", "127.0.0.1,localhost").stdin(Stdio::null()).stdout(log_file).stderr(log_err);
        let child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut server = PolicyServer { child, log, port, ready_after: Duration::ZERO, _dir: dir };
        let started = Instant::now();
        let readiness = format!("http://127.0.0.1:{readiness_port}/readiness");
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("policy-server exited ({status}) before it was ready:\n{}", server.log_tail(40)));
            }
            if matches!(client::request("GET", &readiness, None, b"", Duration::from_secs(2)), Ok((200, _))) {
                server.ready_after = started.elapsed();
                return Ok(server);
            }
            if started.elapsed() > READY_WITHIN {
                return Err(format!("policy-server was not ready within {READY_WITHIN:?}:\n{}", server.log_tail(40)));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Everything policy-server printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `lines` lines policy-server printed.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = self.log();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// POSTs `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request": …}` to
    /// `/validate/<policy_id>`; returns policy-server's AdmissionReview (its `response` holds
    /// the answer), or why there is none (an HTTP error, or policy-server's output when it
    /// died).
    pub fn validate(&self, policy_id: &str, admission_request: &Value) -> Result<Value, String> {
        self.post("validate", policy_id, admission_request)
    }

    /// As [`PolicyServer::validate`], to `/audit/<policy_id>`, where the audit scanner sends
    /// each existing object.
    pub fn audit(&self, policy_id: &str, admission_request: &Value) -> Result<Value, String> {
        self.post("audit", policy_id, admission_request)
    }

    fn post(&self, endpoint: &str, policy_id: &str, admission_request: &Value) -> Result<Value, String> {
        let review =
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": admission_request});
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let url = format!("{}/{endpoint}/{policy_id}", self.url());
        let (status, answer) = client::request("POST", &url, Some("application/json"), &body, ANSWER_WITHIN)
            .map_err(|e| format!("POST {url}: {e}\npolicy-server output:\n{}", self.log_tail(20)))?;
        let text = String::from_utf8_lossy(&answer);
        if status != 200 {
            return Err(format!("POST {url}: HTTP {status}: {text}"));
        }
        serde_json::from_slice(&answer).map_err(|e| format!("POST {url}: the answer is not JSON ({e}): {text}"))
    }

    /// The process's resident set size in KiB (`VmRSS` of `/proc/<pid>/status`).
    pub fn rss_kib(&self) -> Result<u64, String> {
        let path = format!("/proc/{}/status", self.pid());
        let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .ok_or(format!("{path} has no VmRSS"))
    }
}

impl Drop for PolicyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_skips_on_a_users_machine_and_fails_in_ci() {
        let why = "kwctl not found: put it on PATH or set KWCTL";
        assert_eq!(skip_or_fail(false, "e2e-kwctl", why).unwrap(), format!("skipped: e2e-kwctl ({why})"));
        assert_eq!(
            skip_or_fail(true, "e2e-kwctl", why).unwrap_err(),
            format!("e2e-kwctl: {why}; CI is set, so a missing tool fails the run instead of skipping it")
        );
    }

    fn modules() -> BTreeMap<String, PathBuf> {
        POLICIES.iter().map(|(name, _)| (name.to_string(), PathBuf::from(format!("/m/{name}.wasm")))).collect()
    }

    #[test]
    fn policies_yml_is_what_the_controller_writes() {
        let gang = read_manifest(&crate::deploy_manifest("gang")).unwrap();
        let group = read_manifest(&repo_root().join("deploy/gang-topology-group.yaml")).unwrap();
        let extra = with_settings(&gang, "gang-strict", &json!({"maxMinCount": 8}));
        let yml = policies_yml(&[gang.clone(), group, extra], &modules()).unwrap();
        let entry = &yml["clusterwide-gangwarden-gang"];
        assert_eq!(entry["namespacedName"], json!({"Namespace": "", "Name": "gangwarden-gang"}));
        assert_eq!(entry["module"], "file:///m/gang.wasm");
        assert_eq!((&entry["policyMode"], &entry["allowedToMutate"]), (&json!("protect"), &json!(false)));
        assert_eq!(entry["settings"], gang["spec"]["settings"]);
        assert_eq!(entry["contextAwareResources"], gang["spec"]["contextAwareResources"]);
        assert_eq!(entry["hostCapabilities"], json!(["*"]));
        assert!(entry.get("message").is_none() && entry.get("timeoutEvalSeconds").is_none());
        let group = &yml["clusterwide-group-gangwarden-gang-topology"];
        assert_eq!(group["expression"], "gang() && topology()");
        assert_eq!(group["message"], metadata::GROUP_MESSAGE);
        assert_eq!(group["policies"]["topology"]["module"], "file:///m/topology.wasm");
        assert_eq!(group["policies"]["topology"]["hostCapabilities"], json!(["*"]));
        assert!(group.get("hostCapabilities").is_none() && group.get("module").is_none());
        assert_eq!(yml["clusterwide-gang-strict"]["settings"], json!({"maxMinCount": 8}));
        assert!(policies_yml(&[gang.clone(), gang], &modules()).unwrap_err().contains("two manifests"));
        assert_eq!(module_policy("registry://ghcr.io/gangwarden/policies/gangwarden:v0.1.0"), Ok("bundle"));
        assert!(module_policy("registry://example.com/other:v1").is_err());
    }
}

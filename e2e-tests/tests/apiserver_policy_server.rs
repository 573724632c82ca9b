//! The real Kubewarden policy-server runs the topology policy against the test API server:
//! its context-aware Node lookup goes through kube-rs (discovery, a paged list, a watch) to
//! `gangwarden_test_apiserver::TestApiServer`.
//!
//! Needs `policy-server` and `kwctl` (from the environment variables `POLICY_SERVER` and
//! `KWCTL`, or on `PATH`) and `policies/topology/policy.wasm` (`make policies`); skipped, saying
//! so, when one is missing, and failing instead when `CI` is set.

use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gangwarden_core::request::admission_request;
use gangwarden_harness::policy_server::{missing, needed_tool};
use gangwarden_harness::repo_root;
use gangwarden_test_apiserver::realistic_node;
use gangwarden_test_apiserver::{Call, TestApiServer, client};
use serde_json::{Value, json};

fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0)).and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// A fresh folder under the system's temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("gangwarden-apiserver-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// policy-server, killed when dropped; its output is printed when the test fails.
struct PolicyServer {
    child: Child,
    log: PathBuf,
}

impl PolicyServer {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for PolicyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- policy-server output ---\n{}", self.log());
        }
    }
}

fn pod_group(key: &str) -> Value {
    json!({
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "train-workers-0", "namespace": "ml"},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": key}]}
        }
    })
}

/// POSTs an AdmissionReview for `object` to policy-server and returns its `response`.
fn review(port: u16, object: &Value) -> Value {
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": admission_request("uid-1", "CREATE", object, None),
    });
    let (status, body) = client::post_json(&format!("http://127.0.0.1:{port}/validate/topology"), &review)
        .expect("policy-server answers");
    let text = String::from_utf8_lossy(&body);
    assert_eq!(status, 200, "policy-server answered {status}: {text}");
    let answer: Value = serde_json::from_slice(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    answer["response"].clone()
}

fn annotate(kwctl: &Path, out: &Path) -> io::Result<std::process::Output> {
    let dir = repo_root().join("policies/topology");
    Command::new(kwctl)
        .arg("annotate")
        .arg("-m")
        .arg(dir.join("metadata.yml"))
        .arg("-u")
        .arg(dir.join("README.md"))
        .arg("-o")
        .arg(out)
        .arg(dir.join("policy.wasm"))
        .output()
}

#[test]
fn policy_server_lists_nodes_from_the_test_apiserver() {
    const TEST: &str = "policy-server against the test API server";
    let need = |var, name| needed_tool(TEST, var, name).unwrap_or_else(|e| panic!("{e}"));
    let Some(policy_server) = need("POLICY_SERVER", "policy-server") else { return };
    // It annotates the module: policy-server needs annotated modules.
    let Some(kwctl) = need("KWCTL", "kwctl") else { return };
    let wasm = repo_root().join("policies/topology/policy.wasm");
    if !wasm.is_file() {
        let why = format!("{} not found (run `make policies`)", wasm.display());
        return missing(TEST, &why).unwrap_or_else(|e| panic!("{e}"));
    }

    let tmp = TempDir::new();
    let module = tmp.0.join("topology.wasm");
    let annotated = annotate(&kwctl, &module).expect("kwctl runs");
    assert!(annotated.status.success(), "kwctl annotate failed: {}", String::from_utf8_lossy(&annotated.stderr));

    let server = TestApiServer::start((0..3).map(realistic_node).collect(), None).expect("the test API server starts");
    let kubeconfig = tmp.0.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("the kubeconfig is written");
    let policies = tmp.0.join("policies.yml");
    let policies_yaml = format!(
        "topology:\n  module: file://{}\n  policyMode: protect\n  allowedToMutate: false\n  settings: {{}}\n  \
         contextAwareResources:\n    - apiVersion: v1\n      kind: Node\n  hostCapabilities: [\"*\"]\n",
        module.display()
    );
    std::fs::write(&policies, policies_yaml).expect("policies.yml is written");

    let (port, readiness_port) = (free_port(), free_port());
    let log = tmp.0.join("policy-server.log");
    let log_file = std::fs::File::create(&log).expect("a log file");
    let log_level = std::env::var("POLICY_SERVER_LOG_LEVEL").unwrap_or_else(|_| "info".into());
    let child = Command::new(&policy_server)
        .arg("--policies")
        .arg(&policies)
        .args([
            "--addr",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--readiness-probe-port",
            &readiness_port.to_string(),
        ])
        .arg("--policies-download-dir")
        .arg(tmp.0.join("dl"))
        .arg("--sigstore-cache-dir")
        .arg(tmp.0.join("sigstore"))
        .args(["--workers", "2", "--log-level", &log_level, "--log-no-color"])
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("a log file"))
        .stderr(log_file)
        .spawn()
        .expect("policy-server starts");
    let mut policy_server = PolicyServer { child, log };

    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = policy_server.child.try_wait() {
            panic!("policy-server exited ({status}) before it was ready");
        }
        if matches!(client::get(&format!("http://127.0.0.1:{readiness_port}/readiness")), Ok((200, _))) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "policy-server was not ready within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("policy-server ready after {:?}", started.elapsed());

    let accepted = review(port, &pod_group("topology.example.com/rack"));
    assert_eq!(accepted["allowed"], true, "{accepted}");
    assert!(accepted["warnings"].as_array().is_none_or(Vec::is_empty), "unexpected warnings: {accepted}");

    let rejected = review(port, &pod_group("topology.example.com/rak"));
    assert_eq!(rejected["allowed"], false, "{rejected}");
    let message = rejected["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("no node carries the label \"topology.example.com/rak\" (checked 3 nodes)"),
        "unexpected message: {rejected}"
    );

    let requests = server.requests();
    for r in &requests {
        println!(
            "test-apiserver saw: {:?} {} {}{}{} -> {}",
            r.call,
            r.method,
            r.path,
            if r.query.is_empty() { "" } else { "?" },
            r.query,
            r.status
        );
    }
    assert!(
        requests
            .iter()
            .any(|r| matches!(r.call, Call::List | Call::Watch) && r.path == "/api/v1/nodes" && r.status == 200),
        "no list or watch of nodes reached the test API server: {requests:?}"
    );
    println!("counts: {:?}", server.counts());
    drop(policy_server);
}

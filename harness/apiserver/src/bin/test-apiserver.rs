//! A read-only Kubernetes API server test double on 127.0.0.1 (see the `gangwarden-test-apiserver` crate):
//!
//! ```text
//! test-apiserver [--objects FILE.json|FILE.yaml] [--nodes N] --kubeconfig OUT
//!                [--serve APIVERSION]... [--advertise APIVERSION/KIND]...
//! ```
//!
//! `--objects`: a JSON array (or a `kind: List`) of objects, or multi-document YAML;
//! `--nodes N`: N generated realistic Nodes (`node-0` ... `node-<N-1>`); `--serve`: the
//! apiVersions served in the groups they name (repeatable; default: every version);
//! `--advertise`: a kind discovery lists without stored objects (e.g.
//! `scheduling.k8s.io/v1beta1/Workload`). Writes a kubeconfig for the server to OUT, prints
//! the server's URL and serves until killed. `TEST_APISERVER_LOG=1` logs each request.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gangwarden_test_apiserver::{TestApiServer, realistic_node};
use serde::Deserialize;
use serde_json::Value;

const USAGE: &str = "usage: test-apiserver [--objects FILE.json|FILE.yaml] [--nodes N] --kubeconfig OUT \
                     [--serve APIVERSION]... [--advertise APIVERSION/KIND]...";

/// The objects in a JSON or YAML file: an array, a `List`'s items, or one object per document.
fn read_objects(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let is_json = path.extension().is_some_and(|e| e == "json");
    let documents: Vec<Value> = if is_json {
        vec![serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?]
    } else {
        let mut documents = Vec::new();
        for document in serde_norway::Deserializer::from_str(&text) {
            documents.push(Value::deserialize(document).map_err(|e| format!("{}: {e}", path.display()))?);
        }
        documents
    };
    let mut objects = Vec::new();
    for document in documents {
        match document {
            Value::Null => {}
            Value::Array(items) => objects.extend(items),
            Value::Object(ref map)
                if map.get("items").is_some_and(Value::is_array)
                    && map.get("metadata").is_none_or(|m| m.get("name").is_none()) =>
            {
                if let Some(Value::Array(items)) = document.get("items") {
                    objects.extend(items.iter().cloned());
                }
            }
            other => objects.push(other),
        }
    }
    Ok(objects)
}

fn run() -> Result<(), String> {
    let mut objects_path: Option<PathBuf> = None;
    let mut nodes = 0usize;
    let mut kubeconfig: Option<PathBuf> = None;
    let mut served: Option<BTreeSet<String>> = None;
    let mut advertised = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--objects" => objects_path = Some(PathBuf::from(value()?)),
            "--nodes" => nodes = value()?.parse().map_err(|e| format!("--nodes: {e}"))?,
            "--kubeconfig" => kubeconfig = Some(PathBuf::from(value()?)),
            "--serve" => {
                served.get_or_insert_with(BTreeSet::new).insert(value()?);
            }
            "--advertise" => {
                let v = value()?;
                let (api_version, kind) =
                    v.rsplit_once('/').ok_or_else(|| format!("--advertise {v}: expected APIVERSION/KIND"))?;
                advertised.push((api_version.to_string(), kind.to_string()));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    let kubeconfig = kubeconfig.ok_or_else(|| format!("--kubeconfig is required\n{USAGE}"))?;
    let mut objects = match &objects_path {
        Some(path) => read_objects(path)?,
        None => Vec::new(),
    };
    objects.extend((0..nodes).map(realistic_node));
    let count = objects.len();
    let server = TestApiServer::start_with(objects, served, advertised).map_err(|e| format!("cannot start: {e}"))?;
    server.write_kubeconfig(&kubeconfig).map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    println!("{}", server.url());
    eprintln!("test-apiserver: serving {count} objects at {}; kubeconfig in {}", server.url(), kubeconfig.display());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn main() {
    if let Err(message) = run() {
        eprintln!("test-apiserver: {message}");
        std::process::exit(2);
    }
}

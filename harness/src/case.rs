//! Case files: a request, settings, cluster objects and the expected answer.
//!
//! ```yaml
//! description: a gang PodGroup with minCount 0 is rejected
//! operation: CREATE            # default CREATE; the request is built around `object`
//! object: {apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, ...}
//! oldObject: {...}             # for UPDATE
//! request: {...}               # instead of object: a whole AdmissionRequest, built and sent
//!                              # as kwctl and policy-server build it (see `host::admission_request`)
//! rawPayload: "not json"       # instead of both: the exact bytes of the validate payload, for
//!                              # robustness against bytes no Kubewarden host would send
//! settings: {maxMinCount: 8}
//! cluster: [{apiVersion: ..., kind: Workload, ...}]   # what lookups see
//! nodeSets:                    # Nodes generated into the cluster (for thousands of them):
//!   - {name: rack, count: 5000, domainSizes: {topology.example.com/rack: 40},
//!      allocatable: {cpu: "64", nvidia.com/gpu: "8", pods: "110"}}
//!                              # rack-0..rack-4999; node i has the label with value "d<i/40>"
//!                              # and, when given, that status.allocatable
//! clusterError: "connection refused"                 # every lookup fails with this
//! servedApiVersions: [scheduling.k8s.io/v1beta1, scheduling.k8s.io/v1alpha3]
//!                              # the versions served of the groups named (a 1.37 cluster here;
//!                              # a 1.36 one serves scheduling.k8s.io/v1alpha2); other groups
//!                              # are served in every version. Default: every apiVersion.
//!                              # Lookups of others get "Cannot find resource <apiVersion>/<kind>"
//! expect:
//!   accepted: false
//!   code: 400                  # exact; leave out for rule violations (no code)
//!   message: ["spec.schedulingPolicy.gang.minCount: Required value [gang.min-count]"]
//!   warnings: []               # one substring per warning, all of them
//!   hostCalls: 1               # how many lookups the policy made
//!   mutated: {...}             # the exact mutated object; leave out for none
//!   settingsError: "..."       # validate_settings must refuse the settings with this text
//!   requestError: "..."        # kwctl and policy-server refuse to build the request with this
//!                              # text (e.g. a required field is missing); the policy is not called
//! ```
//! `message` holds one substring per violation: the answer must have exactly that many.
//!
//! Kubernetes 1.37 serves Workload and PodGroup as `scheduling.k8s.io/v1beta1` and `v1alpha3`
//! with the same shapes, so a case whose object is a `v1beta1` Workload or PodGroup also runs as
//! `v1alpha3` (every `scheduling.k8s.io/v1beta1` in its objects and expectations reads
//! `v1alpha3`): the two versions must be accepted or rejected alike. A case whose cluster serves
//! only one of the two versions is about that difference and runs as written only. Kubernetes
//! 1.38 is planned to serve them as `v1` with the same JSON, so such a case also runs as `v1`
//! (its cluster serving `v1` where it served `v1beta1`).

use std::collections::BTreeMap;
use std::path::Path;

use gangwarden_core::cluster::MemoryCluster;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::host::Evaluation;
#[cfg(feature = "host")]
use crate::host::Policy;

const BETA: &str = "scheduling.k8s.io/v1beta1";

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    pub description: String,
    #[serde(default)]
    pub operation: Option<String>,
    #[serde(default)]
    pub object: Option<Value>,
    #[serde(default)]
    pub old_object: Option<Value>,
    #[serde(default)]
    pub request: Option<Value>,
    #[serde(default)]
    pub raw_payload: Option<String>,
    #[serde(default)]
    pub settings: Value,
    #[serde(default)]
    pub cluster: Vec<Value>,
    #[serde(default)]
    pub cluster_error: Option<String>,
    #[serde(default)]
    pub served_api_versions: Option<Vec<String>>,
    #[serde(default)]
    pub node_sets: Vec<NodeSet>,
    #[serde(default)]
    pub expect: Option<Expect>,
}

/// `count` Nodes named `<name>-<i>`. Each `domainSizes` entry labels node `i` with value
/// `d<i / size>`: the label splits the set into domains of `size` nodes (the last may be
/// smaller). A case with thousands of nodes stays a few readable lines.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeSet {
    pub name: String,
    pub count: usize,
    #[serde(default)]
    pub domain_sizes: BTreeMap<String, usize>,
    /// Each Node's `status.allocatable`, when given.
    #[serde(default)]
    pub allocatable: Option<BTreeMap<String, String>>,
}

impl NodeSet {
    pub fn nodes(&self) -> impl Iterator<Item = Value> + '_ {
        (0..self.count).map(|i| {
            let labels: serde_json::Map<String, Value> = self
                .domain_sizes
                .iter()
                .map(|(key, size)| (key.clone(), Value::from(format!("d{}", i / (*size).max(1)))))
                .collect();
            let mut node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("{}-{i}", self.name), "labels": labels}});
            if let Some(allocatable) = &self.allocatable {
                node["status"] = json!({"allocatable": allocatable});
            }
            node
        })
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    pub accepted: bool,
    #[serde(default)]
    pub code: Option<u16>,
    #[serde(default)]
    pub message: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub host_calls: Option<usize>,
    #[serde(default)]
    pub mutated: Option<Value>,
    #[serde(default)]
    pub settings_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_error: Option<String>,
}

/// The case files of one policy, `e2e-tests/cases/<policy>/*.yaml`, sorted.
pub fn case_files(policy: &str) -> Vec<std::path::PathBuf> {
    let dir = crate::repo_root().join("e2e-tests").join("cases").join(policy);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "yaml")).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

impl Case {
    pub fn load(path: &Path) -> Result<Case, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The same case with every `scheduling.k8s.io/v1beta1` read as `v1alpha3`, when its
    /// object is a `v1beta1` Workload or PodGroup sent as an object.
    pub fn as_v1alpha3(&self) -> Option<Case> {
        let served = self.served_api_versions.as_deref().unwrap_or_default();
        let serves = |v: &str| served.iter().any(|s| s == v);
        if serves(BETA) != serves("scheduling.k8s.io/v1alpha3") {
            return None;
        }
        self.as_version("scheduling.k8s.io/v1alpha3")
    }

    /// The same case with every `scheduling.k8s.io/v1beta1` read as `v1`, the version
    /// Kubernetes 1.38 is planned to serve with the same JSON, when its object is a `v1beta1`
    /// Workload or PodGroup sent as an object: the cluster serves `v1` where it served
    /// `v1beta1`.
    pub fn as_v1(&self) -> Option<Case> {
        self.as_version("scheduling.k8s.io/v1")
    }

    fn as_version(&self, to: &str) -> Option<Case> {
        let object = self.object.as_ref()?;
        if self.request.is_some()
            || self.raw_payload.is_some()
            || object["apiVersion"] != BETA
            || !matches!(object["kind"].as_str(), Some("Workload" | "PodGroup"))
        {
            return None;
        }
        let swap = |v: &Value| -> Value {
            let text = v.to_string().replace(BETA, to);
            serde_json::from_str(&text).unwrap_or(Value::Null)
        };
        let strings = |list: &[String]| -> Vec<String> { list.iter().map(|s| s.replace(BETA, to)).collect() };
        let version = to.rsplit('/').next().unwrap_or(to);
        Some(Case {
            description: format!("{} (as {version})", self.description),
            object: Some(swap(object)),
            old_object: self.old_object.as_ref().map(swap),
            cluster: self.cluster.iter().map(swap).collect(),
            served_api_versions: self.served_api_versions.as_ref().map(|s| {
                let mut served = strings(s);
                served.dedup();
                served
            }),
            expect: self.expect.as_ref().map(|e| Expect {
                message: strings(&e.message),
                warnings: strings(&e.warnings),
                ..e.clone()
            }),
            ..self.clone()
        })
    }

    /// The AdmissionRequest the case sends (built around `object` unless given whole).
    pub fn admission_request(&self, uid: &str) -> Value {
        if let Some(request) = &self.request {
            return request.clone();
        }
        let object = self.object.clone().unwrap_or(Value::Null);
        gangwarden_core::request::admission_request(
            uid,
            self.operation.as_deref().unwrap_or("CREATE"),
            &object,
            self.old_object.as_ref(),
        )
    }

    /// The bytes of the `validate` payload, or why kwctl and policy-server would not build it.
    pub fn payload(&self, uid: &str, settings: &Value) -> Result<Vec<u8>, String> {
        match &self.raw_payload {
            Some(raw) => Ok(raw.as_bytes().to_vec()),
            None => crate::host::validate_payload(&self.admission_request(uid), settings),
        }
    }

    pub fn cluster(&self) -> MemoryCluster {
        let cluster = match &self.cluster_error {
            Some(message) => MemoryCluster::failing(message),
            None => MemoryCluster::new(
                self.cluster.iter().cloned().chain(self.node_sets.iter().flat_map(NodeSet::nodes)).collect(),
            ),
        };
        match &self.served_api_versions {
            Some(served) => cluster.serving(served.iter().cloned()),
            None => cluster,
        }
    }

    #[cfg(feature = "host")]
    /// Runs the case against `policy` with `settings` (the case's own, or the bundle's
    /// wrapping of them) and checks every expectation.
    pub fn run(&self, policy: &Policy, uid: &str, settings: &Value) -> Result<(), String> {
        let expect = self.expect.as_ref().ok_or("the case has no `expect`")?;
        let payload = match (self.payload(uid, settings), &expect.request_error) {
            (Ok(payload), None) => payload,
            (Err(refused), Some(want)) if refused.contains(want.as_str()) => return Ok(()),
            (built, want) => {
                let got = built.err().unwrap_or_else(|| "the request was built".into());
                return Err(format!("expected requestError {want:?}, got {got:?}"));
            }
        };
        // policy-server always hands settings over as an object.
        let settings = if settings.is_null() { &json!({}) } else { settings };
        let settings_payload = serde_json::to_vec(settings).map_err(|e| e.to_string())?;
        let answer = policy.call("validate_settings", &settings_payload, MemoryCluster::default())?.answer?;
        match (&expect.settings_error, answer["valid"].as_bool()) {
            (None, Some(true)) => {}
            // kwctl prints the message right after its own prefix, so a case names its start.
            (Some(want), Some(false)) if answer["message"].as_str().is_some_and(|m| m.starts_with(want.as_str())) => {
                return Ok(());
            }
            _ => {
                return Err(format!(
                    "validate_settings answered {answer}, expected settingsError {:?}",
                    expect.settings_error
                ));
            }
        }
        let evaluation = policy.call("validate", &payload, self.cluster())?;
        check(expect, &evaluation)
    }
}

/// Matches each expected substring to a distinct actual item; the counts must agree.
fn match_all(what: &str, expected: &[String], actual: &[String]) -> Result<(), String> {
    let mut unused: Vec<&String> = actual.iter().collect();
    for want in expected {
        match unused.iter().position(|a| a.contains(want.as_str())) {
            Some(i) => {
                unused.remove(i);
            }
            None => return Err(format!("no {what} contains {want:?}; got {actual:#?}")),
        }
    }
    if unused.is_empty() { Ok(()) } else { Err(format!("unexpected {what}s: {unused:#?}")) }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect()
}

/// Checks an evaluation against what the case expects.
pub fn check(expect: &Expect, evaluation: &Evaluation) -> Result<(), String> {
    let answer = evaluation.answer.as_ref().map_err(|e| format!("the policy must never fail: {e}"))?;
    let fail = |why: String| Err(format!("{why}\nanswer: {answer:#}"));
    if answer["accepted"].as_bool() != Some(expect.accepted) {
        return fail(format!("expected accepted={}", expect.accepted));
    }
    let code = answer["code"].as_u64().map(|c| c as u16);
    if code != expect.code {
        return fail(format!("expected code {:?}, got {code:?}", expect.code));
    }
    let message = answer["message"].as_str().unwrap_or_default();
    if expect.accepted && !answer["message"].is_null() {
        return fail("an accepted request carries no message".into());
    }
    // A rule rejection lists violations, each ending in its `[rule-id]`, joined with "; ";
    // a bad request is one message.
    let violations: Vec<String> = match (expect.accepted, code) {
        (true, _) => Vec::new(),
        (false, Some(_)) => vec![message.to_string()],
        (false, None) => {
            message.split("]; ").map(|v| if v.ends_with(']') { v.to_string() } else { format!("{v}]") }).collect()
        }
    };
    if let Err(e) = match_all("violation", &expect.message, &violations) {
        return fail(e);
    }
    if let Err(e) = match_all("warning", &expect.warnings, &strings(&answer["warnings"])) {
        return fail(e);
    }
    match (&expect.mutated, &answer["mutated_object"]) {
        (None, Value::Null) => {}
        (Some(want), got) if want == got => {}
        (want, got) => return fail(format!("expected mutated object {want:?}, got {got}")),
    }
    if let Some(n) = expect.host_calls.filter(|n| *n != evaluation.host_calls.len()) {
        return fail(format!("expected {n} host calls, got {:#?}", evaluation.host_calls));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_sets_split_into_domains() {
        let set = NodeSet {
            name: "n".into(),
            count: 5,
            domain_sizes: BTreeMap::from([("rack".to_string(), 2), ("zone".to_string(), 0)]),
            allocatable: None,
        };
        let nodes: Vec<Value> = set.nodes().collect();
        let racks: Vec<&str> = nodes.iter().map(|n| n["metadata"]["labels"]["rack"].as_str().unwrap()).collect();
        assert_eq!(racks, ["d0", "d0", "d1", "d1", "d2"]);
        assert_eq!(nodes[4]["metadata"]["name"], "n-4");
        // A size of 0 is read as 1 rather than dividing by zero.
        assert_eq!(nodes[3]["metadata"]["labels"]["zone"], "d3");
        assert!(nodes[0].get("status").is_none());
        let gpus =
            NodeSet { allocatable: Some(BTreeMap::from([("nvidia.com/gpu".to_string(), "8".to_string())])), ..set };
        assert_eq!(gpus.nodes().next().unwrap()["status"], json!({"allocatable": {"nvidia.com/gpu": "8"}}));
    }
}

//! The requests `make bench`, the hostile-input tests and the native benchmarks send: everyday
//! ~1 KB objects, the same objects blown up to 10,000-element lists and 3 MiB, and payloads
//! that are not what a policy expects at all.
//!
//! Only `serde_json` and `gangwarden-core` are used here, so the native criterion bench in
//! `core/benches` includes this file as it is and measures exactly the same requests.

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::request::admission_request;
use serde_json::{Value, json};

/// One request to time: the policy (a key of `POLICIES`), the `validate` payload and what
/// lookups see.
#[derive(Clone)]
pub struct Scenario {
    pub name: String,
    pub policy: &'static str,
    pub payload: Vec<u8>,
    pub cluster: MemoryCluster,
}

/// `{"request": <AdmissionRequest for object>, "settings": settings}` as bytes.
pub fn validate_payload(operation: &str, object: &Value, old: Option<&Value>, settings: &Value) -> Vec<u8> {
    let request = admission_request("bench", operation, object, old);
    serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap_or_default()
}

/// The baseline's request: a Pod whose payload is `len` bytes long (or as close above as the
/// smallest Pod allows), so a policy and the baseline read the same amount of JSON.
pub fn baseline_payload(len: usize) -> Vec<u8> {
    let pod = |pad: usize| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "bench", "namespace": "ml", "annotations": {"pad": "x".repeat(pad)}},
               "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]}})
    };
    let empty = validate_payload("CREATE", &pod(0), None, &json!({})).len();
    validate_payload("CREATE", &pod(len.saturating_sub(empty)), None, &json!({}))
}

fn labels() -> Value {
    json!({"app.kubernetes.io/name": "train", "app.kubernetes.io/part-of": "llm-pretraining",
           "team": "research", "cost-center": "ml-4711"})
}

fn pod_group(spec: Value) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
           "metadata": {"name": "train-workers-0", "namespace": "ml", "labels": labels()}, "spec": spec})
}

fn workload(templates: Value) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
           "metadata": {"name": "train", "namespace": "ml", "labels": labels()},
           "spec": {"podGroupTemplates": templates}})
}

fn container(name: &str) -> Value {
    json!({"name": name, "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
           "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"cpu": "16", "memory": "64Gi"}}})
}

fn replica(replicas: usize) -> Value {
    json!({"replicas": replicas, "restartPolicy": "OnFailure",
           "template": {"spec": {"containers": [container("pytorch")]}}})
}

fn pytorch_job(specs: Value) -> Value {
    json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "train", "namespace": "ml", "labels": labels()},
           "spec": {"pytorchReplicaSpecs": specs}})
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "train-worker-0", "namespace": "ml", "labels": labels()}, "spec": spec})
}

/// A gang PodGroup of 4 with a rack topology constraint and two claims: every rule set has
/// something to read.
pub fn everyday_pod_group() -> Value {
    pod_group(json!({
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": "topology.example.com/rack"}]},
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "eight-gpus"},
                           {"name": "fabric", "resourceClaimName": "rdma-fabric"}],
        "priorityClassName": "high-priority",
    }))
}

/// A Kubernetes 1.37 Job asking for a gang of its 4 Pods, kept on one rack, sharing a claim
/// its Pod template carries unchanged.
pub fn everyday_gang_job() -> Value {
    let mut trainer = container("pytorch");
    trainer["resources"]["claims"] = json!([{"name": "gpus"}]);
    json!({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "finetune", "namespace": "ml", "labels": labels()},
           "spec": {"parallelism": 4, "completions": 4, "completionMode": "Indexed",
                    "scheduling": {"schedulingPolicy": {"gang": {"minCount": 4}},
                                   "schedulingConstraints": {"topology": [{"key": "topology.example.com/rack"}]},
                                   "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "eight-gpus"}]},
                    "template": {"spec": {"restartPolicy": "Never", "containers": [trainer],
                                          "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "eight-gpus"}]}}}})
}

/// A Kubeflow Trainer v2 ClusterTrainingRuntime: torch, a coscheduling gang, one node job.
pub fn everyday_runtime() -> Value {
    json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "metadata": {"name": "torch-gang", "labels": {"trainer.kubeflow.org/framework": "torch"}},
           "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                    "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 120}},
                    "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {
                        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                        "spec": {"template": {"spec": {"containers": [container("node")]}}}}}]}}}})
}

/// A TrainJob of 4 nodes on `runtime`, with a Kueue patch as Kueue writes it.
pub fn everyday_train_job(runtime: &str) -> Value {
    json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": "llama-finetune", "namespace": "ml", "labels": labels()},
           "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": runtime},
                    "trainer": {"numNodes": 4, "image": "registry.example.com/llama-finetune:1.0",
                                "command": ["torchrun", "finetune.py"], "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]},
                    "runtimePatches": [{"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {"spec": {
                        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
                            "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": "topology.example.com/rack"}},
                            "spec": {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}}}}}}]}}}}]}})
}

/// A PyTorchJob with a Master and 2 Workers.
pub fn everyday_pytorch_job() -> Value {
    pytorch_job(json!({"Master": replica(1), "Worker": replica(2)}))
}

/// A handful of Nodes carrying the rack label.
pub fn everyday_nodes() -> Vec<Value> {
    (0..8).map(|i| node(i, false)).collect()
}

/// Node `i`; `full` gives it what a real Node carries besides labels (status, images), which
/// is what a host that ignores field masks sends.
pub fn node(i: usize, full: bool) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": format!("node-{i}"), "topology.example.com/rack": format!("r{}", i / 40),
                            "topology.kubernetes.io/zone": format!("z{}", i / 1000), "node.kubernetes.io/instance-type": "gpu-8x"});
    if !full {
        return json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{i}"), "labels": labels}});
    }
    labels["kubernetes.io/os"] = json!("linux");
    labels["kubernetes.io/arch"] = json!("amd64");
    let images: Vec<Value> = (0..12)
        .map(|k| {
            json!({"names": [format!("registry.example.com/team/image-{k}@sha256:{:064x}", k * 7919 + i),
                                  format!("registry.example.com/team/image-{k}:v1.{k}")], "sizeBytes": 734_003_200 + k})
        })
        .collect();
    let conditions: Vec<Value> = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|t| {
            json!({"type": t, "status": if *t == "Ready" { "True" } else { "False" },
                        "lastHeartbeatTime": "2026-11-30T10:00:00Z", "lastTransitionTime": "2026-11-01T10:00:00Z",
                        "reason": format!("Kubelet{t}"), "message": format!("kubelet reports {t}")})
        })
        .collect();
    let capacity =
        json!({"cpu": "96", "memory": "1056Gi", "nvidia.com/gpu": "8", "pods": "110", "ephemeral-storage": "3500Gi"});
    json!({"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": format!("node-{i}"), "uid": format!("{:032x}", i), "resourceVersion": "123456",
                        "labels": labels, "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
           "spec": {"podCIDR": format!("10.{}.{}.0/24", i / 256, i % 256), "providerID": format!("cloud:///node-{i}")},
           "status": {"capacity": capacity, "allocatable": capacity, "conditions": conditions, "images": images,
                      "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 256, i % 256)},
                                    {"type": "Hostname", "address": format!("node-{i}")}],
                      "nodeInfo": {"kubeletVersion": "v1.36.0", "containerRuntimeVersion": "containerd://2.1.0",
                                   "osImage": "Ubuntu 24.04", "kernelVersion": "6.8.0", "architecture": "amd64",
                                   "operatingSystem": "linux", "machineID": format!("{:032x}", i), "systemUUID": format!("{:032x}", i),
                                   "bootID": format!("{:032x}", i), "kubeProxyVersion": "", "containerRuntime": ""}}})
}

/// The everyday requests, about 1 KB each: each single policy on the kind it guards, and the
/// bundle on a PodGroup and a PyTorchJob.
pub fn request_scenarios() -> Vec<Scenario> {
    let pg = everyday_pod_group();
    let job = everyday_pytorch_job();
    let gang_job = everyday_gang_job();
    let nodes = MemoryCluster::new(everyday_nodes());
    let scenario = |name: &str, policy: &'static str, object: &Value| Scenario {
        name: name.to_string(),
        policy,
        payload: validate_payload("CREATE", object, None, &json!({})),
        cluster: nodes.clone(),
    };
    // The same check without its lookup: how much of the topology row is the Node list.
    let no_lookup = Scenario {
        payload: validate_payload("CREATE", &pg, None, &json!({"checkNodeLabels": false})),
        ..scenario("topology, PodGroup, checkNodeLabels off (no lookup)", "topology", &pg)
    };
    vec![
        scenario("gang, PodGroup", "gang", &pg),
        scenario("claims, PodGroup", "claims", &pg),
        scenario("topology, PodGroup (Node list of 8)", "topology", &pg),
        no_lookup,
        scenario("run-policy, PyTorchJob (Master + 2 Workers)", "run-policy", &job),
        scenario("gang, PyTorchJob", "gang", &job),
        scenario("bundle, PodGroup", "bundle", &pg),
        scenario("bundle, PyTorchJob", "bundle", &job),
        scenario("gang, Job (gang of 4)", "gang", &gang_job),
        scenario("claims, Job (gang of 4)", "claims", &gang_job),
        scenario("bundle, Job (gang of 4)", "bundle", &gang_job),
        train_job("run-policy"),
        train_job("gang"),
        train_job("topology"),
        train_job("bundle"),
    ]
}

/// A TrainJob through `policy`, with its runtime lookup (and topology's Node list).
fn train_job(policy: &'static str) -> Scenario {
    let mut objects = everyday_nodes();
    objects.push(everyday_runtime());
    Scenario {
        name: format!("{policy}, TrainJob (runtime lookup)"),
        policy,
        payload: validate_payload("CREATE", &everyday_train_job("torch-gang"), None, &json!({})),
        cluster: MemoryCluster::new(objects),
    }
}

/// The everyday runtime with 1 MiB of environment on its node container.
pub fn huge_runtime() -> Value {
    let mut runtime = everyday_runtime();
    runtime["metadata"]["name"] = json!("torch-huge");
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
        ["env"] = (0..(1 << 20) / 100)
        .map(|i| json!({"name": format!("SETTING_{i:06}"), "value": format!("{:070}", i)}))
        .collect::<Vec<_>>()
        .into();
    runtime
}

/// How many elements the long lists have.
pub const LONG: usize = 10_000;

/// A payload of about 3 MiB.
pub const HUGE_BYTES: usize = 3 << 20;

/// Objects with a 10,000-element list (or map) in every place a rule walks, a 3 MiB object
/// and deeply nested JSON.
pub fn large_objects() -> Vec<(String, Value)> {
    let n = LONG;
    let templates: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": format!("group-{i}"), "schedulingPolicy": {"gang": {"minCount": 2}},
                        "schedulingConstraints": {"topology": [{"key": "topology.example.com/rack"}]},
                        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "eight-gpus"}]})
        })
        .collect();
    let claims: Vec<Value> =
        (0..n).map(|i| json!({"name": format!("claim-{i}"), "resourceClaimTemplateName": "eight-gpus"})).collect();
    let topology: Vec<Value> = (0..n).map(|i| json!({"key": format!("topology.example.com/level-{i}")})).collect();
    let replica_specs: serde_json::Map<String, Value> =
        (0..n).map(|i| (format!("Worker{i}"), replica(1))).chain([("Master".to_string(), replica(1))]).collect();
    let containers: Vec<Value> = (0..n).map(|i| container(&format!("c-{i}"))).collect();
    let ports: Vec<Value> = (0..n).map(|i| json!({"name": format!("p{i}"), "containerPort": 1024 + i})).collect();
    let pod_claims: Vec<Value> =
        (0..n).map(|i| json!({"name": format!("claim-{i}"), "resourceClaimTemplateName": "eight-gpus"})).collect();
    // Every claim from its own template: a lookup each, past the first 32 not made.
    let distinct_sources: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("claim-{i}"), "resourceClaimTemplateName": format!("template-{i}")}))
        .collect();
    // Each request of an unknown claim is an error that lists the Pod's claim names.
    let unknown_requests: Vec<Value> = (0..n).map(|i| json!({"name": format!("unknown-{i}")})).collect();
    let mut requesting = container("app");
    requesting["resources"]["claims"] = Value::Array(unknown_requests);
    let mut ported = container("pytorch");
    ported["ports"] = Value::Array(ports);
    let mut big_annotation = everyday_pod_group();
    big_annotation["metadata"]["annotations"] = json!({"example.com/blob": "x".repeat(HUGE_BYTES)});
    let mut many_labels = pod(json!({"containers": [container("app")]}));
    many_labels["metadata"]["labels"] = (0..HUGE_BYTES / 100)
        .map(|i| (format!("example.com/label-{i:06}"), Value::from(format!("{:070}", i))))
        .collect::<serde_json::Map<_, _>>()
        .into();
    let mut nested = json!("bottom");
    for _ in 0..100 {
        nested = json!([nested]);
    }
    let mut deep = everyday_pod_group();
    deep["spec"]["schedulingPolicy"]["gang"]["unknownField"] = nested;
    // A Job whose Pod template carries 3 MiB of environment, as generated configuration does.
    let mut big_template = everyday_gang_job();
    big_template["spec"]["template"]["spec"]["containers"][0]["env"] = (0..HUGE_BYTES / 100)
        .map(|i| json!({"name": format!("SETTING_{i:06}"), "value": format!("{:070}", i)}))
        .collect::<Vec<_>>()
        .into();
    vec![
        ("Workload, 10,000 podGroupTemplates".into(), workload(Value::Array(templates))),
        (
            "PodGroup, 10,000 resourceClaims".into(),
            pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 4}}, "resourceClaims": claims})),
        ),
        (
            "PodGroup, 10,000 topology entries".into(),
            pod_group(
                json!({"schedulingPolicy": {"gang": {"minCount": 4}}, "schedulingConstraints": {"topology": topology}}),
            ),
        ),
        ("PyTorchJob, 10,000 replica specs".into(), pytorch_job(Value::Object(replica_specs))),
        (
            "PyTorchJob, Worker with 10,000 containers".into(),
            pytorch_job(json!({"Master": replica(1),
            "Worker": {"replicas": 2, "template": {"spec": {"containers": containers.clone()}}}})),
        ),
        (
            "PyTorchJob, container with 10,000 ports".into(),
            pytorch_job(json!({"Master": replica(1),
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [ported.clone()]}}}})),
        ),
        (
            "Pod, 10,000 containers".into(),
            pod(json!({"containers": containers, "schedulingGroup": {"podGroupName": "train-workers-0"}})),
        ),
        (
            "Pod, 10,000 resourceClaims".into(),
            pod(json!({"containers": [container("app")], "resourceClaims": pod_claims.clone(),
            "schedulingGroup": {"podGroupName": "train-workers-0"}})),
        ),
        (
            "Pod, 10,000 resourceClaims from distinct templates".into(),
            pod(json!({"containers": [container("app")], "resourceClaims": distinct_sources,
            "schedulingGroup": {"podGroupName": "train-workers-0"}})),
        ),
        (
            "Pod, 10,000 resourceClaims, 10,000 unknown requests".into(),
            pod(json!({"containers": [requesting], "resourceClaims": pod_claims,
            "schedulingGroup": {"podGroupName": "train-workers-0"}})),
        ),
        ("PodGroup, one 3 MiB annotation".into(), big_annotation),
        ("Pod, 3 MiB of labels".into(), many_labels),
        ("PodGroup, JSON nested 100 deep".into(), deep),
        ("Job, 3 MiB Pod template".into(), big_template),
        ("ClusterTrainingRuntime, 1 MiB".into(), huge_runtime()),
        // Its lookup reads the 1 MiB runtime (in the large scenarios' cluster).
        ("TrainJob on a 1 MiB runtime".into(), everyday_train_job("torch-huge")),
    ]
}

/// The large objects as CREATE requests to the bundle (every rule set), and as UPDATEs of
/// themselves (the immutability rules compare every list with its old copy).
pub fn large_scenarios() -> Vec<Scenario> {
    let mut objects = everyday_nodes();
    objects.push(huge_runtime());
    let cluster = MemoryCluster::new(objects);
    let mut out = Vec::new();
    for (name, object) in large_objects() {
        out.push(Scenario {
            name: format!("{name}, CREATE"),
            policy: "bundle",
            payload: validate_payload("CREATE", &object, None, &json!({})),
            cluster: cluster.clone(),
        });
        out.push(Scenario {
            name: format!("{name}, UPDATE"),
            policy: "bundle",
            payload: validate_payload("UPDATE", &object, Some(&object), &json!({})),
            cluster: cluster.clone(),
        });
    }
    out
}

/// How many Nodes the topology lookup reads in the Node scenarios.
pub const NODES: usize = 5_000;

/// The topology policy on a PodGroup whose key is checked against 5,000 Nodes, as a host that
/// honours the `metadata.labels` field mask answers (labels only) and as one that ignores it
/// (whole Nodes, ~3 KB each).
pub fn node_scenarios() -> Vec<Scenario> {
    let payload = validate_payload("CREATE", &everyday_pod_group(), None, &json!({}));
    let masked = MemoryCluster::new((0..NODES).map(|i| node(i, true)).collect());
    let unmasked = masked.clone().ignoring_field_masks();
    vec![
        Scenario {
            name: format!("topology, {NODES} Nodes, field masks honoured"),
            policy: "topology",
            payload: payload.clone(),
            cluster: masked,
        },
        Scenario {
            name: format!("topology, {NODES} Nodes, field masks ignored"),
            policy: "topology",
            payload,
            cluster: unmasked,
        },
    ]
}

/// What a policy must answer to a hostile payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A clean verdict: accepted, or rejected for a rule.
    Verdict,
    /// Rejected with code 400: the payload cannot be read.
    BadRequest,
    /// Rejected with code 400 by a policy that reads the object's kind (its fields cannot be
    /// read); accepted untouched by one that does not (it never decodes them).
    BadObject,
    /// Accepted untouched (a kind or operation no rule reviews).
    Accepted,
}

/// A payload that is not what a policy expects, and what every policy must answer.
pub struct Hostile {
    pub name: &'static str,
    pub payload: Vec<u8>,
    pub answer: Answer,
}

fn raw_request(request: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"request": request, "settings": {}})).unwrap_or_default()
}

/// Replaces the first occurrence of `from` in `bytes` with `to`.
fn splice(bytes: &[u8], from: &str, to: &[u8]) -> Vec<u8> {
    let from = from.as_bytes();
    match bytes.windows(from.len()).position(|w| w == from) {
        Some(at) => [&bytes[..at], to, &bytes[at + from.len()..]].concat(),
        None => bytes.to_vec(),
    }
}

/// Numbers, encodings and shapes that a Go apiserver would never send but a policy must
/// still answer cleanly.
pub fn hostile_payloads() -> Vec<Hostile> {
    let pg = everyday_pod_group();
    let job = everyday_pytorch_job();
    let gang_job = everyday_gang_job();
    let create = |object: &Value| validate_payload("CREATE", object, None, &json!({}));
    let with_min_count = |raw: &str| splice(&create(&pg), "\"minCount\":4", format!("\"minCount\":{raw}").as_bytes());
    let mut request = admission_request("bench", "CREATE", &pg, None);
    let mut out = vec![
        Hostile { name: "minCount past int32", payload: with_min_count("2147483648"), answer: Answer::BadObject },
        Hostile {
            name: "minCount past int64",
            payload: with_min_count("9223372036854775808"),
            answer: Answer::BadObject,
        },
        Hostile { name: "minCount past u64", payload: with_min_count("1e400"), answer: Answer::BadObject },
        Hostile { name: "minCount a float", payload: with_min_count("4.5"), answer: Answer::BadObject },
        Hostile { name: "minCount 4.0", payload: with_min_count("4.0"), answer: Answer::BadObject },
        // serde_json reads `-0` as the float -0.0, which is no int32.
        Hostile { name: "minCount -0", payload: with_min_count("-0"), answer: Answer::BadObject },
        Hostile {
            name: "replicas a float",
            payload: splice(&create(&job), "\"replicas\":2", b"\"replicas\":2.5"),
            answer: Answer::BadObject,
        },
        Hostile {
            name: "Job parallelism past int32",
            payload: splice(&create(&gang_job), "\"parallelism\":4", b"\"parallelism\":4294967296"),
            answer: Answer::BadObject,
        },
        Hostile {
            name: "Job gang minCount a string",
            payload: splice(&create(&gang_job), "\"minCount\":4", b"\"minCount\":\"4\""),
            answer: Answer::BadObject,
        },
        // Duplicate keys (the apiserver never sends them; what matters is a clean answer). In
        // k8s-openapi's types the last one wins, as in Go's encoding/json: minCount 0 then
        // breaks a gang rule. The request's own fields are read strictly: a repeated one is a
        // bad request.
        Hostile {
            name: "duplicate keys in the object",
            payload: splice(&create(&pg), "\"minCount\":4", b"\"minCount\":4,\"minCount\":0"),
            answer: Answer::Verdict,
        },
        Hostile {
            name: "duplicate request key",
            payload: splice(
                &create(&pg),
                "\"operation\":\"CREATE\"",
                b"\"operation\":\"CREATE\",\"operation\":\"DELETE\"",
            ),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "invalid UTF-8 in a string",
            payload: splice(&create(&pg), "train-workers-0\"", b"train-\xff\xfe-0\""),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "lone surrogate escape",
            payload: splice(&create(&pg), "train-workers-0\"", b"train-\\ud800-0\""),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "NUL escape in a name",
            payload: splice(&create(&pg), "train-workers-0\"", b"train-\\u0000-0\""),
            answer: Answer::Verdict,
        },
        Hostile { name: "empty payload", payload: Vec::new(), answer: Answer::BadRequest },
        Hostile { name: "payload truncated", payload: create(&pg)[..200].to_vec(), answer: Answer::BadRequest },
        Hostile {
            name: "trailing garbage",
            payload: [create(&pg), b"}}".to_vec()].concat(),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "object a string",
            payload: raw_request({
                let mut r = request.clone();
                r["object"] = json!("PodGroup");
                r
            }),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "object a list",
            payload: raw_request({
                let mut r = request.clone();
                r["object"] = json!([pg]);
                r
            }),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "spec a list",
            payload: create(&{
                let mut o = pg.clone();
                o["spec"] = json!([1, 2]);
                o
            }),
            answer: Answer::BadObject,
        },
        Hostile {
            name: "request kind Pod, body PodGroup",
            payload: raw_request({
                let mut r = request.clone();
                r["kind"] = json!({"group": "", "version": "v1", "kind": "Pod"});
                r
            }),
            answer: Answer::BadRequest,
        },
        Hostile {
            name: "request kind PodGroup, body with no kind",
            payload: raw_request({
                let mut r = request.clone();
                r["object"].as_object_mut().map(|o| o.remove("kind"));
                r
            }),
            answer: Answer::Verdict,
        },
        Hostile {
            name: "request kind PyTorchJob, body a PodGroup without apiVersion/kind",
            payload: raw_request({
                let mut r = admission_request("bench", "CREATE", &job, None);
                let mut body = pg.clone();
                body.as_object_mut().map(|o| {
                    o.remove("kind");
                    o.remove("apiVersion")
                });
                r["object"] = body;
                r
            }),
            answer: Answer::Verdict,
        },
        Hostile {
            name: "DELETE with the old object",
            payload: raw_request(admission_request("bench", "DELETE", &Value::Null, Some(&pg))),
            answer: Answer::Accepted,
        },
        Hostile {
            name: "CONNECT",
            payload: raw_request({
                let mut r = request.clone();
                r["operation"] = json!("CONNECT");
                r["object"] = json!({"apiVersion": "v1", "kind": "PodExecOptions", "command": ["sh"]});
                r
            }),
            answer: Answer::Accepted,
        },
        // An unknown field is skipped unread however deep it nests: serde_json skips values
        // with a counter, not by recursing, so depth costs no stack.
        Hostile {
            name: "JSON nested 100,000 deep",
            payload: splice(
                &create(&pg),
                "\"minCount\":4",
                format!("\"minCount\":4,\"x\":{}{}", "[".repeat(100_000), "]".repeat(100_000)).as_bytes(),
            ),
            answer: Answer::Accepted,
        },
    ];
    request["operation"] = json!("UPDATE");
    request["oldObject"] = json!(17);
    out.push(Hostile { name: "oldObject a number", payload: raw_request(request), answer: Answer::BadRequest });
    out
}

/// A scenario's id in the native (criterion) bench: its name in lower case, words joined by `-`.
pub fn bench_id(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    words.join("-")
}

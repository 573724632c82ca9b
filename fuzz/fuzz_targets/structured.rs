//! Structured objects: `arbitrary` builds JSON trees whose keys are mostly the field names the
//! rules read, so the fuzzer reaches past the decoder into every rule, as CREATE and as an
//! UPDATE from a second tree.
#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::request::admission_request;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

static CLUSTER: OnceLock<MemoryCluster> = OnceLock::new();

const KINDS: &[(&str, &str)] = &[
    ("scheduling.k8s.io/v1alpha2", "PodGroup"),
    ("scheduling.k8s.io/v1alpha2", "Workload"),
    ("v1", "Pod"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v1", "TFJob"),
    ("kubeflow.org/v1", "MPIJob"),
    ("kubeflow.org/v1", "JAXJob"),
    ("kubeflow.org/v1", "PaddleJob"),
    ("kubeflow.org/v1", "XGBoostJob"),
    ("kubeflow.org/v2beta1", "MPIJob"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
    ("batch.volcano.sh/v1alpha1", "Job"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"),
];

/// Field names of the guarded kinds (and a few values the rules compare against).
const WORDS: &[&str] = &[
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "schedulingPolicy",
    "gang",
    "basic",
    "minCount",
    "podGroupTemplates",
    "podGroupTemplateRef",
    "workload",
    "workloadName",
    "podGroupTemplateName",
    "schedulingConstraints",
    "topology",
    "key",
    "disruptionMode",
    "priorityClassName",
    "priority",
    "resourceClaims",
    "resourceClaimName",
    "resourceClaimTemplateName",
    "schedulingGroup",
    "podGroupName",
    "containers",
    "initContainers",
    "image",
    "resources",
    "claims",
    "request",
    "runPolicy",
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "backoffLimit",
    "suspend",
    "managedBy",
    "minAvailable",
    "queue",
    "scheduleTimeoutSeconds",
    "minResources",
    "elasticPolicy",
    "minReplicas",
    "maxReplicas",
    "nProcPerNode",
    "maxRestarts",
    "rdzvBackend",
    "pytorchReplicaSpecs",
    "tfReplicaSpecs",
    "mpiReplicaSpecs",
    "jaxReplicaSpecs",
    "paddleReplicaSpecs",
    "xgbReplicaSpecs",
    "Master",
    "Worker",
    "Launcher",
    "Chief",
    "PS",
    "Evaluator",
    "replicas",
    "restartPolicy",
    "template",
    "slotsPerWorker",
    "mpiImplementation",
    "launcherCreationPolicy",
    "runLauncherAsWorker",
    "sshAuthMountPath",
    "mpiImplementation",
    "Pod",
    "OnFailure",
    "Never",
    "All",
    "Running",
    "topology.example.com/rack",
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-slice-size",
    "kueue.x-k8s.io/podset-group-name",
    "pytorch",
    "tensorflow",
    "train",
    "workers",
    "g",
    "gpus",
    "t",
    "ml",
    // Volcano's Job and PodGroup.
    "tasks",
    "dependsOn",
    "policies",
    "event",
    "events",
    "exitCode",
    "action",
    "plugins",
    "partitionPolicy",
    "totalPartitions",
    "partitionSize",
    "minPartitions",
    "networkTopology",
    "highestTierAllowed",
    "highestTierName",
    "subGroupPolicy",
    "minMember",
    // Jobs, TrainJobs and what the capacity rules read.
    "parallelism",
    "completions",
    "scheduling",
    "jobTemplate",
    "runtimeRef",
    "apiGroup",
    "trainer.kubeflow.org",
    "ClusterTrainingRuntime",
    "torch-gang",
    "trainer",
    "numNodes",
    "resourcesPerNode",
    "requests",
    "limits",
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "hugepages-2Mi",
    "overhead",
    "nodeSelector",
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
    "matchExpressions",
    "operator",
    "values",
    "In",
    "Exists",
    "tolerations",
    "effect",
    "NoSchedule",
    "sku",
    "runtimeClassName",
    "nvidia",
    "nodeName",
    "Always",
    "kueue.x-k8s.io/queue-name",
    "kueue.x-k8s.io/job-min-parallelism",
    "500m",
    "8",
    "16",
    "64Gi",
    "0.5",
    "-1",
    "1e3",
];

fn word(u: &mut Unstructured) -> arbitrary::Result<String> {
    if u.ratio(1, 8)? { String::arbitrary(u) } else { Ok(u.choose(WORDS)?.to_string()) }
}

/// A JSON value at most `depth` levels deep, objects biased towards known keys.
fn value(u: &mut Unstructured, depth: u32) -> arbitrary::Result<Value> {
    let leaf = depth == 0 || u.is_empty();
    Ok(match u.int_in_range(0..=if leaf { 5 } else { 7 })? {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(u)?),
        2 => Value::from(*u.choose(&[0i64, 1, -1, 2, 4, 8, 9, i32::MAX as i64, i32::MAX as i64 + 1, i64::MIN])?),
        3 => Value::from(i64::arbitrary(u)?),
        4 => serde_json::Number::from_f64(f64::arbitrary(u)?).map_or(Value::Null, Value::Number),
        5 => Value::String(word(u)?),
        6 => {
            let n = u.int_in_range(0..=4)?;
            Value::Array((0..n).map(|_| value(u, depth - 1)).collect::<arbitrary::Result<_>>()?)
        }
        _ => {
            let n = u.int_in_range(0..=6)?;
            let mut map = Map::new();
            for _ in 0..n {
                map.insert(word(u)?, value(u, depth - 1)?);
            }
            Value::Object(map)
        }
    })
}

/// An object of one of the guarded kinds, its body arbitrary.
fn object(u: &mut Unstructured, kind: (&str, &str)) -> arbitrary::Result<Value> {
    let mut body = match value(u, 8)? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    body.insert("apiVersion".into(), json!(kind.0));
    body.insert("kind".into(), json!(kind.1));
    Ok(Value::Object(body))
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(kind) = u.choose(KINDS).copied() else { return };
    let Ok(new) = object(&mut u, kind) else { return };
    let cluster = CLUSTER.get_or_init(gangwarden_fuzz::cluster);
    let settings = json!({});
    let create = json!({"request": admission_request("fuzz", "CREATE", &new, None), "settings": settings});
    gangwarden_fuzz::evaluate_everywhere(&serde_json::to_vec(&create).unwrap_or_default(), cluster);
    if let Ok(old) = object(&mut u, kind) {
        let update = json!({"request": admission_request("fuzz", "UPDATE", &new, Some(&old)), "settings": settings});
        gangwarden_fuzz::evaluate_everywhere(&serde_json::to_vec(&update).unwrap_or_default(), cluster);
    }
});

use super::defaults::set_field;
use super::*;
use crate::cluster::MemoryCluster;
use crate::engine::parse_settings;
use crate::kubeflow::MAX_REPLICA_MAP_ENTRIES;
use serde_json::json;

fn container(name: &str) -> Value {
    json!({"name": name, "image": "registry.example.com/train:1"})
}

fn replica(replicas: i64, container_name: &str) -> Value {
    json!({"replicas": replicas, "template": {"spec": {"containers": [container(container_name)]}}})
}

/// A valid job of `kind` (the minimal shapes of rules.md), for tests to break.
fn valid(kind: &str) -> Value {
    let (map, specs) = match kind {
        "TFJob" => ("tfReplicaSpecs", json!({"Worker": replica(2, "tensorflow")})),
        "PyTorchJob" => {
            ("pytorchReplicaSpecs", json!({"Master": replica(1, "pytorch"), "Worker": replica(2, "pytorch")}))
        }
        "MPIJob" => ("mpiReplicaSpecs", json!({"Launcher": replica(1, "mpi"), "Worker": replica(2, "mpi")})),
        "JAXJob" => ("jaxReplicaSpecs", json!({"Worker": replica(2, "jax")})),
        "PaddleJob" => ("paddleReplicaSpecs", json!({"Worker": replica(2, "paddle")})),
        "XGBoostJob" => ("xgbReplicaSpecs", json!({"Master": replica(1, "xgboost"), "Worker": replica(2, "xgboost")})),
        other => panic!("no such kind {other}"),
    };
    json!({"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "train", "namespace": "ml"},
           "spec": {map: specs}})
}

fn review(operation: &str, object: &Value, old: Option<&Value>) -> Review<'static> {
    let request = json!({"operation": operation, "object": object, "oldObject": old});
    crate::review::review_request(&request).unwrap().unwrap()
}

fn run_with(settings: Value, object: &Value) -> Verdict {
    let settings = parse_settings::<RunPolicyRules>(&settings).unwrap();
    RunPolicyRules::check(&settings, &review("CREATE", object, None), &MemoryCluster::default())
}

fn run(object: &Value) -> Verdict {
    run_with(Value::Null, object)
}

fn messages(v: &Verdict) -> Vec<String> {
    v.violations.iter().map(|x| x.to_string()).collect()
}

fn warnings(v: &Verdict) -> Vec<String> {
    v.warning_messages()
}

#[test]
fn the_minimal_jobs_pass_clean() {
    for kind in JobKind::ALL {
        let verdict = run(&valid(kind.name()));
        assert_eq!(verdict, Verdict::default(), "{}", kind.name());
    }
}

#[test]
fn job_names_are_dns1035_labels_except_for_mpi() {
    let mut job = valid("TFJob");
    job["metadata"]["name"] = json!("1-train");
    assert_eq!(
        messages(&run(&job)),
        [format!(
            "metadata.name: Invalid value: \"1-train\": should match: {} [run-policy.job-name]",
            names::is_dns1035_label("1-train")[0]
        )]
    );
    job["metadata"]["name"] = json!("a".repeat(64));
    assert_eq!(
        messages(&run(&job)),
        [format!(
            "metadata.name: Invalid value: \"{}\": should match: must be no more than 63 characters [run-policy.job-name]",
            "a".repeat(64)
        )]
    );
    // A name the apiserver refuses (not a DNS subdomain) is the metadata rules' alone.
    job["metadata"]["name"] = json!("A".repeat(64));
    assert!(run(&job).accepted());
    let mut mpi = valid("MPIJob");
    mpi["metadata"]["name"] = json!("1-train");
    assert!(run(&mpi).accepted());
}

#[test]
fn generate_name_is_checked_when_there_is_no_name_yet() {
    let mut job = valid("PyTorchJob");
    job["metadata"] = json!({"generateName": "train-", "namespace": "ml"});
    assert!(run(&job).accepted());
    job["metadata"]["generateName"] = json!("x".repeat(80));
    assert!(run(&job).accepted(), "the apiserver cuts long prefixes");
    job["metadata"]["generateName"] = json!("9train-");
    let v = run(&job);
    assert_eq!(v.violations.len(), 1);
    assert!(
        messages(&v)[0]
            .starts_with("metadata.generateName: Invalid value: \"9train-\": should match: a DNS-1035 label"),
        "{:?}",
        messages(&v)
    );
    // No name at all is the metadata rules' `Required value`.
    job["metadata"] = json!({"namespace": "ml"});
    assert!(run(&job).accepted());
}

#[test]
fn replica_spec_maps_are_required() {
    for kind in JobKind::ALL {
        let mut job = valid(kind.name());
        job["spec"] = json!({});
        assert_eq!(
            messages(&run(&job)),
            [format!(
                "spec.{}: Required value: must be required [run-policy.replica-specs]",
                kind.replica_specs_field()
            )]
        );
        job["spec"][kind.replica_specs_field()] = json!({});
        assert_eq!(run(&job).violations.len(), 1, "an empty map runs nothing");
    }
}

#[test]
fn replica_types_are_the_kinds_own() {
    let mut job = valid("PyTorchJob");
    job["spec"]["pytorchReplicaSpecs"]["worker"] = replica(1, "pytorch");
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.pytorchReplicaSpecs[worker]: Unsupported value: "worker": supported values: "Master", "Worker" [run-policy.replica-type]"#
        ]
    );
    let mut tf = valid("TFJob");
    tf["spec"]["tfReplicaSpecs"]["Trainer"] = replica(1, "tensorflow");
    assert_eq!(
        messages(&run(&tf)),
        [
            r#"spec.tfReplicaSpecs[Trainer]: Unsupported value: "Trainer": supported values: "PS", "Worker", "Chief", "Master", "Evaluator" [run-policy.replica-type]"#
        ]
    );
    let mut mpi = valid("MPIJob");
    mpi["spec"]["mpiReplicaSpecs"]["Master"] = replica(1, "mpi");
    assert_eq!(
        messages(&run(&mpi)),
        [
            r#"spec.mpiReplicaSpecs[Master]: Unsupported value: "Master": supported values: "Launcher", "Worker" [run-policy.replica-type]"#
        ]
    );
    let mut jax = valid("JAXJob");
    jax["spec"]["jaxReplicaSpecs"]["Master"] = replica(1, "jax");
    assert_eq!(run(&jax).violations.len(), 1);
}

#[test]
fn a_map_past_its_maximum_is_too_many_and_its_known_types_are_still_checked() {
    let mut job = valid("PyTorchJob");
    let specs = &mut job["spec"]["pytorchReplicaSpecs"];
    // With its Master and Worker, the map is at the maximum: each unknown type is its own error.
    for i in 0..MAX_REPLICA_MAP_ENTRIES - 2 {
        specs[format!("Worker{i}")] = replica(1, "pytorch");
    }
    let errors = messages(&run(&job));
    assert_eq!(errors.len(), 14, "{errors:?}");
    assert_eq!(
        errors[0],
        r#"spec.pytorchReplicaSpecs[Worker0]: Unsupported value: "Worker0": supported values: "Master", "Worker" [run-policy.replica-type]"#
    );
    // Past it, one error; a known type of another kind is still read and reported, and
    // the kind's own types are checked as usual.
    let specs = &mut job["spec"]["pytorchReplicaSpecs"];
    for i in MAX_REPLICA_MAP_ENTRIES - 2..9_998 {
        specs[format!("Worker{i}")] = replica(1, "pytorch");
    }
    specs["Chief"] = replica(1, "pytorch");
    specs["Worker"]["template"]["spec"]["containers"][0]["image"] = json!("");
    assert_eq!(
        messages(&run(&job)),
        [
            "spec.pytorchReplicaSpecs: Too many: 10001: must have at most 2 items [run-policy.replica-type]",
            r#"spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief": supported values: "Master", "Worker" [run-policy.replica-type]"#,
            "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required [run-policy.image]",
        ]
    );
}

#[test]
fn containers_images_and_default_names_match_the_webhooks() {
    let mut job = valid("XGBoostJob");
    job["spec"]["xgbReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = json!([]);
    // Like the webhook: no containers is both "specified" and "default name" missing.
    assert_eq!(
        messages(&run(&job)),
        [
            "spec.xgbReplicaSpecs[Worker].template.spec.containers: Required value: must be specified [run-policy.containers]",
            "spec.xgbReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name xgboost [run-policy.default-container]",
        ]
    );
    job["spec"]["xgbReplicaSpecs"]["Worker"] = Value::Null;
    assert_eq!(run(&job).violations.len(), 2);
    let mut paddle = valid("PaddleJob");
    paddle["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] =
        json!([{"name": "main", "image": ""}]);
    assert_eq!(
        messages(&run(&paddle)),
        [
            "spec.paddleReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required [run-policy.image]",
            r#"spec.paddleReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name "paddle" [run-policy.default-container]"#,
        ]
    );
}

#[test]
fn mpi_needs_named_containers_not_the_default_name() {
    let mut job = valid("MPIJob");
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] =
        json!([{"name": "worker", "image": "horovod/horovod:0.28.1"}, {"name": "", "image": "x"}]);
    assert_eq!(
        messages(&run(&job)),
        [
            "spec.mpiReplicaSpecs[Worker].template.spec.containers[1].name: Required value [run-policy.default-container]"
        ]
    );
    assert!(warnings(&run(&job)).is_empty(), "no ExitCode, no warning");
}

#[test]
fn exit_code_without_the_default_container_is_a_warning() {
    let mut job = valid("MPIJob");
    job["spec"]["mpiReplicaSpecs"]["Worker"] = replica(2, "mpi-worker");
    job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = json!("ExitCode");
    let v = run(&job);
    assert!(v.accepted());
    assert_eq!(
        warnings(&v),
        [
            r#"spec.mpiReplicaSpecs[Worker].restartPolicy: ExitCode reads the exit code of the container named "mpi", which this replica does not have (it has "mpi-worker"), so the operator cannot tell permanent from retryable failures [run-policy.exit-code]"#
        ]
    );
    // A defaulted ExitCode counts too.
    job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = Value::Null;
    assert_eq!(warnings(&run_with(json!({"defaultRestartPolicy": "ExitCode"}), &job)).len(), 1);
    assert!(warnings(&run(&job)).is_empty());
}

#[test]
fn single_pod_roles_run_one_replica() {
    let mut job = valid("PyTorchJob");
    job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!(2);
    assert_eq!(
        messages(&run(&job)),
        ["spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
    );
    job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = Value::Null;
    assert_eq!(run(&job).violations.len(), 1, "the webhook runs before defaulting: unset fails");
    let mut xgb = valid("XGBoostJob");
    xgb["spec"]["xgbReplicaSpecs"]["Master"].as_object_mut().unwrap().remove("replicas");
    assert_eq!(
        messages(&run(&xgb)),
        ["spec.xgbReplicaSpecs[Master].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
    );
    let mut mpi = valid("MPIJob");
    mpi["spec"]["mpiReplicaSpecs"]["Launcher"].as_object_mut().unwrap().remove("replicas");
    assert!(run(&mpi).accepted(), "an unset Launcher count defaults to 1");
    mpi["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = json!(2);
    assert_eq!(
        messages(&run(&mpi)),
        ["spec.mpiReplicaSpecs[Launcher].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
    );
    let mut tf = valid("TFJob");
    tf["spec"]["tfReplicaSpecs"]["Chief"] = replica(3, "tensorflow");
    assert_eq!(
        messages(&run(&tf)),
        ["spec.tfReplicaSpecs[Chief].replicas: Forbidden: must be 1 [run-policy.master-replicas]"]
    );
}

#[test]
fn masters_and_launchers_are_required_where_the_kind_needs_them() {
    let mut xgb = valid("XGBoostJob");
    xgb["spec"]["xgbReplicaSpecs"].as_object_mut().unwrap().remove("Master");
    assert_eq!(
        messages(&run(&xgb)),
        ["spec.xgbReplicaSpecs[Master]: Required value: must be present [run-policy.master-required]"]
    );
    let mut mpi = valid("MPIJob");
    mpi["spec"]["mpiReplicaSpecs"].as_object_mut().unwrap().remove("Launcher");
    assert_eq!(
        messages(&run(&mpi)),
        ["spec.mpiReplicaSpecs[Launcher]: Required value: must be present [run-policy.master-required]"]
    );
    let mut tf = valid("TFJob");
    tf["spec"]["tfReplicaSpecs"]["Chief"] = replica(1, "tensorflow");
    tf["spec"]["tfReplicaSpecs"]["Master"] = replica(1, "tensorflow");
    assert_eq!(
        messages(&run(&tf)),
        ["spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role [run-policy.chief-or-master]"]
    );
}

#[test]
fn replica_counts() {
    let mut job = valid("PyTorchJob");
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(0);
    assert_eq!(
        messages(&run(&job)),
        ["spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1 [run-policy.replicas]"]
    );
    let mut mpi = valid("MPIJob");
    mpi["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!(0);
    assert!(run(&mpi).accepted(), "an MPI launcher may run alone");
    mpi["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!(-1);
    assert_eq!(
        messages(&run(&mpi)),
        [
            "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: -1: must be greater than or equal to 0 [run-policy.replicas]"
        ]
    );
    let mut tf = valid("TFJob");
    tf["spec"]["tfReplicaSpecs"]["PS"] = replica(0, "tensorflow");
    assert!(run(&tf).accepted());
    tf["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = json!(0);
    assert_eq!(run(&tf).violations.len(), 1);
}

#[test]
fn a_pytorch_job_without_master_or_elastic_policy_is_warned() {
    let mut job = valid("PyTorchJob");
    job["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap().remove("Master");
    let v = run(&job);
    assert!(v.accepted());
    assert_eq!(
        warnings(&v),
        [
            "spec.pytorchReplicaSpecs[Master]: a PyTorchJob without elasticPolicy needs a Master: the operator sets MASTER_ADDR, MASTER_PORT and RANK only when one exists, so the workers cannot rendezvous [run-policy.pytorch-master]"
        ]
    );
    job["spec"]["elasticPolicy"] = json!({"minReplicas": 1, "maxReplicas": 2});
    assert_eq!(run(&job), Verdict::default());
}

#[test]
fn restart_policies() {
    let mut job = valid("JAXJob");
    job["spec"]["jaxReplicaSpecs"]["Worker"]["restartPolicy"] = json!("Sometimes");
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.jaxReplicaSpecs[Worker].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never", "ExitCode" [run-policy.restart-policy]"#
        ]
    );
    for ok in RESTART_POLICIES.iter().chain(&[""]) {
        job["spec"]["jaxReplicaSpecs"]["Worker"]["restartPolicy"] = json!(ok);
        assert!(run(&job).accepted(), "{ok}");
    }
}

#[test]
fn clean_pod_policies() {
    let mut job = valid("TFJob");
    job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "Sometimes"});
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.runPolicy.cleanPodPolicy: Unsupported value: "Sometimes": supported values: "All", "None", "Running" [run-policy.clean-pod-policy]"#
        ]
    );
    let allow_all = json!({"allowedCleanPodPolicies": ["All", "Running"]});
    job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "None"});
    assert_eq!(
        messages(&run_with(allow_all.clone(), &job)),
        [
            r#"spec.runPolicy.cleanPodPolicy: Invalid value: "None": settings.allowedCleanPodPolicies allows only "All", "Running" [run-policy.clean-pod-policy]"#
        ]
    );
    job["spec"]["runPolicy"] = json!({});
    assert_eq!(
        messages(&run_with(allow_all.clone(), &job)),
        [
            r#"spec.runPolicy.cleanPodPolicy: Required value: unset means "None", and settings.allowedCleanPodPolicies allows only "All", "Running" [run-policy.clean-pod-policy]"#
        ]
    );
    let with_default = json!({"allowedCleanPodPolicies": ["All"], "defaultCleanPodPolicy": "All"});
    assert!(run_with(with_default, &job).accepted());
    job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "Running"});
    assert!(run_with(allow_all, &job).accepted());
}

#[test]
fn mpi_deprecated_clean_pod_policy() {
    let mut job = valid("MPIJob");
    job["spec"]["cleanPodPolicy"] = json!("Running");
    let v = run(&job);
    assert!(v.accepted());
    assert_eq!(
        warnings(&v),
        [
            "spec.cleanPodPolicy: is deprecated, use spec.runPolicy.cleanPodPolicy instead [run-policy.mpi-clean-pod-policy]"
        ]
    );
    job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "Running"});
    assert!(run(&job).accepted());
    job["spec"]["runPolicy"] = json!({"cleanPodPolicy": "All"});
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.cleanPodPolicy: Invalid value: "Running": must equal spec.runPolicy.cleanPodPolicy ("All") when both are set [run-policy.mpi-clean-pod-policy]"#
        ]
    );
    job["spec"]["cleanPodPolicy"] = json!("Never");
    job["spec"]["runPolicy"] = json!({});
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.cleanPodPolicy: Unsupported value: "Never": supported values: "All", "None", "Running" [run-policy.clean-pod-policy]"#
        ]
    );
    // The deprecated field counts for allowedCleanPodPolicies.
    job["spec"]["cleanPodPolicy"] = json!("None");
    assert_eq!(
        messages(&run_with(json!({"allowedCleanPodPolicies": ["All"]}), &job)),
        [
            r#"spec.cleanPodPolicy: Invalid value: "None": settings.allowedCleanPodPolicies allows only "All" [run-policy.clean-pod-policy]"#
        ]
    );
}

#[test]
fn tf_success_policy() {
    let mut job = valid("TFJob");
    job["spec"]["successPolicy"] = json!("AnyWorker");
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.successPolicy: Unsupported value: "AnyWorker": supported values: "", "AllWorkers" [run-policy.success-policy]"#
        ]
    );
    job["spec"]["successPolicy"] = json!("AllWorkers");
    assert!(run(&job).accepted());
}

#[test]
fn run_limits_and_their_settings() {
    let mut job = valid("PaddleJob");
    job["spec"]["runPolicy"] = json!({"ttlSecondsAfterFinished": -1, "activeDeadlineSeconds": 0, "backoffLimit": -2});
    assert_eq!(
        messages(&run(&job)),
        [
            "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0 [run-policy.ttl]",
            "spec.runPolicy.activeDeadlineSeconds: Invalid value: 0: must be greater than or equal to 1 [run-policy.active-deadline]",
            "spec.runPolicy.backoffLimit: Invalid value: -2: must be greater than or equal to 0 [run-policy.backoff-limit]",
        ]
    );
    let limits = json!({"maxTtlSecondsAfterFinished": 3600, "maxActiveDeadlineSeconds": 86400, "maxBackoffLimit": 3});
    job["spec"]["runPolicy"] =
        json!({"ttlSecondsAfterFinished": 3601, "activeDeadlineSeconds": 86401, "backoffLimit": 4});
    assert_eq!(
        messages(&run_with(limits.clone(), &job)),
        [
            "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: 3601: must be less than or equal to 3600 (settings.maxTtlSecondsAfterFinished) [run-policy.ttl]",
            "spec.runPolicy.activeDeadlineSeconds: Invalid value: 86401: must be less than or equal to 86400 (settings.maxActiveDeadlineSeconds) [run-policy.active-deadline]",
            "spec.runPolicy.backoffLimit: Invalid value: 4: must be less than or equal to 3 (settings.maxBackoffLimit) [run-policy.backoff-limit]",
        ]
    );
    job["spec"]["runPolicy"] =
        json!({"ttlSecondsAfterFinished": 3600, "activeDeadlineSeconds": 86400, "backoffLimit": 3});
    assert!(run_with(limits, &job).accepted());
    job["spec"]["runPolicy"] = json!({});
    assert_eq!(
        messages(&run_with(json!({"requireTtlSecondsAfterFinished": true}), &job)),
        [
            "spec.runPolicy.ttlSecondsAfterFinished: Required value: finished jobs must be cleaned up (settings.requireTtlSecondsAfterFinished) [run-policy.ttl]"
        ]
    );
    let filled = json!({"requireTtlSecondsAfterFinished": true, "defaultTtlSecondsAfterFinished": 600});
    assert!(run_with(filled, &job).accepted());
}

#[test]
fn managed_by_values_and_immutability() {
    let mut job = valid("JAXJob");
    job["spec"]["runPolicy"] = json!({"managedBy": "example.com/other"});
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.runPolicy.managedBy: Unsupported value: "example.com/other": supported values: "kueue.x-k8s.io/multikueue", "kubeflow.org/training-operator" [run-policy.managed-by]"#
        ]
    );
    assert!(run_with(json!({"allowedManagedBy": ["example.com/other"]}), &job).accepted());

    let settings = Settings::default();
    let old = valid("PyTorchJob");
    let mut new = old.clone();
    new["spec"]["runPolicy"] = json!({"managedBy": "kueue.x-k8s.io/multikueue"});
    let update = |new: &Value, old: &Value| {
        messages(&RunPolicyRules::check(&settings, &review("UPDATE", new, Some(old)), &MemoryCluster::default()))
    };
    assert_eq!(
        update(&new, &old),
        [
            r#"spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is immutable [run-policy.managed-by-immutable]"#
        ]
    );
    assert_eq!(
        update(&old, &new),
        [r#"spec.runPolicy.managedBy: Invalid value: "null": field is immutable [run-policy.managed-by-immutable]"#]
    );
    assert!(update(&new, &new).is_empty());
}

#[test]
fn elastic_policies() {
    let mut job = valid("PyTorchJob");
    job["spec"]["elasticPolicy"] = json!({"minReplicas": 1, "maxReplicas": 3, "rdzvBackend": "c10d"});
    assert_eq!(run(&job), Verdict::default());
    job["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap().remove("Worker");
    assert_eq!(
        messages(&run(&job)),
        [
            "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy is used [run-policy.elastic-worker]"
        ]
    );
    let mut paddle = valid("PaddleJob");
    paddle["spec"]["elasticPolicy"] = json!({"minReplicas": 3, "maxReplicas": 2});
    assert_eq!(
        messages(&run(&paddle)),
        [
            "spec.elasticPolicy.maxReplicas: Invalid value: 2: must be greater than or equal to spec.elasticPolicy.minReplicas (3) [run-policy.elastic-replicas]"
        ]
    );
    paddle["spec"]["elasticPolicy"] = json!({"minReplicas": 0, "maxRestarts": -1});
    assert_eq!(
        messages(&run(&paddle)),
        [
            "spec.elasticPolicy.maxRestarts: Invalid value: -1: must be greater than or equal to 0 [run-policy.elastic-policy]",
            "spec.elasticPolicy.minReplicas: Invalid value: 0: must be greater than or equal to 1 [run-policy.elastic-replicas]",
        ]
    );
    paddle["spec"]["elasticPolicy"] = json!({"maxReplicas": 4});
    assert_eq!(
        messages(&run(&paddle)),
        [
            "spec.paddleReplicaSpecs[Worker].replicas: Invalid value: 2: must be between the elastic policy's minReplicas (4) and maxReplicas (4) [run-policy.elastic-replicas]"
        ]
    );
    paddle["spec"]["elasticPolicy"] = json!({});
    assert!(run(&paddle).accepted(), "neither bound: both become the Worker count");
}

#[test]
fn rendezvous_settings() {
    let mut job = valid("PyTorchJob");
    job["spec"]["elasticPolicy"] =
        json!({"rdzvBackend": "zookeeper", "rdzvPort": 70000, "rdzvConf": [{"value": "x"}], "maxRestarts": -1});
    assert_eq!(
        messages(&run(&job)),
        [
            r#"spec.elasticPolicy.rdzvBackend: Unsupported value: "zookeeper": supported values: "c10d", "etcd", "etcd-v2" [run-policy.elastic-policy]"#,
            "spec.elasticPolicy.rdzvPort: Invalid value: 70000: must be between 1 and 65535, inclusive [run-policy.elastic-policy]",
            "spec.elasticPolicy.rdzvConf[0].key: Required value [run-policy.elastic-policy]",
            "spec.elasticPolicy.maxRestarts: Invalid value: -1: must be greater than or equal to 0 [run-policy.elastic-policy]",
        ]
    );
}

#[test]
fn nproc_per_node() {
    let mut job = valid("PyTorchJob");
    job["spec"]["elasticPolicy"] = json!({"nProcPerNode": 2});
    let v = run(&job);
    assert!(v.accepted());
    assert_eq!(
        warnings(&v),
        ["spec.elasticPolicy.nProcPerNode: is deprecated, use spec.nprocPerNode instead [run-policy.nproc-per-node]"]
    );
    job["spec"]["nprocPerNode"] = json!("2");
    let v = run(&job);
    assert_eq!(
        messages(&v),
        [
            "spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode [run-policy.nproc-per-node]"
        ]
    );
    assert_eq!(v.warnings.len(), 1);
    let mut job = valid("PyTorchJob");
    for ok in ["auto", "cpu", "gpu", "8"] {
        job["spec"]["nprocPerNode"] = json!(ok);
        assert!(run(&job).accepted(), "{ok}");
    }
    for bad in ["0", "-1", "all", ""] {
        job["spec"]["nprocPerNode"] = json!(bad);
        assert_eq!(
            messages(&run(&job)),
            [format!(
                r#"spec.nprocPerNode: Invalid value: "{bad}": must be "auto", "cpu", "gpu" or a positive integer [run-policy.nproc-per-node]"#
            )]
        );
    }
}

#[test]
fn mpi_slots_and_main_container() {
    let mut job = valid("MPIJob");
    job["spec"]["slotsPerWorker"] = json!(0);
    job["spec"]["mainContainer"] = json!("horovod");
    assert_eq!(
        messages(&run(&job)),
        [
            "spec.slotsPerWorker: Invalid value: 0: must be greater than or equal to 1 [run-policy.slots-per-worker]",
            r#"spec.mainContainer: Invalid value: "horovod": must name a container of spec.mpiReplicaSpecs[Worker] ("mpi"): the launcher runs the MPI processes in it [run-policy.main-container]"#,
        ]
    );
    job["spec"]["slotsPerWorker"] = json!(4);
    job["spec"]["mainContainer"] = json!("mpi");
    assert!(run(&job).accepted());
}

#[test]
fn ports() {
    let mut job = valid("PyTorchJob");
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"] = json!([
        {"name": "pytorch", "image": "x", "ports": [{"name": "pytorchjob-port", "containerPort": 23456}]},
        {"name": "sidecar", "image": "y", "ports": [
            {"name": "pytorchjob-port", "containerPort": 23457},
            {"name": "Metrics", "containerPort": 0},
            {"name": "metrics", "containerPort": 9090},
            {"name": "metrics", "containerPort": 9091}
        ]}
    ]);
    let c = "spec.pytorchReplicaSpecs[Master].template.spec.containers[1].ports";
    assert_eq!(
        messages(&run(&job)),
        [
            format!(
                r#"{c}[0].name: Invalid value: "pytorchjob-port": the operator reads this port from the container named "pytorch", so declare it there [run-policy.default-port]"#
            ),
            format!(
                "{c}[1].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive [run-policy.ports]"
            ),
            format!(
                r#"{c}[1].name: Invalid value: "Metrics": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-) [run-policy.ports]"#
            ),
            format!(r#"{c}[3].name: Duplicate value: "metrics" [run-policy.ports]"#),
        ]
    );
    let mut mpi = valid("MPIJob");
    mpi["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = json!([
        {"name": "mpi", "image": "x"}, {"name": "sidecar", "image": "y", "ports": [{"name": "mpi-port", "containerPort": 9999}]}
    ]);
    assert!(run(&mpi).accepted(), "MPIJob has no default port");
}

#[test]
fn defaults_fill_only_what_is_missing() {
    let settings = json!({"defaultTtlSecondsAfterFinished": 600, "defaultCleanPodPolicy": "Running", "defaultRestartPolicy": "OnFailure"});
    let mut job = valid("XGBoostJob");
    job["spec"]["xgbReplicaSpecs"]["Master"]["restartPolicy"] = json!("Never");
    let v = run_with(settings.clone(), &job);
    let mut want = job.clone();
    want["spec"]["runPolicy"] = json!({"ttlSecondsAfterFinished": 600, "cleanPodPolicy": "Running"});
    want["spec"]["xgbReplicaSpecs"]["Worker"]["restartPolicy"] = json!("OnFailure");
    assert_eq!(v.mutated_object, Some(want.clone()));
    // Nothing missing: no mutation.
    assert_eq!(run_with(settings.clone(), &want).mutated_object, None);
    // No defaults configured: never.
    assert_eq!(run(&job).mutated_object, None);
    // MPIJob's deprecated field counts as set.
    let mut mpi = valid("MPIJob");
    mpi["spec"]["cleanPodPolicy"] = json!("All");
    mpi["spec"]["runPolicy"] = json!({"ttlSecondsAfterFinished": 60});
    for r in ["Launcher", "Worker"] {
        mpi["spec"]["mpiReplicaSpecs"][r]["restartPolicy"] = json!("Never");
    }
    assert_eq!(run_with(settings, &mpi).mutated_object, None);
}

#[test]
fn set_field_never_panics_on_odd_shapes() {
    let mut v = json!({"spec": {"runPolicy": null}});
    assert!(set_field(&mut v, &["spec", "runPolicy"], "a", json!(1)));
    assert_eq!(v, json!({"spec": {"runPolicy": {"a": 1}}}));
    let mut v = json!({"spec": "text"});
    assert!(!set_field(&mut v, &["spec", "runPolicy"], "a", json!(1)));
    let mut v = json!([1]);
    assert!(!set_field(&mut v, &["spec"], "a", json!(1)));
}

#[test]
fn settings_are_validated() {
    let err = |s: Value| parse_settings::<RunPolicyRules>(&s).unwrap_err();
    assert_eq!(
        err(json!({"maxTtlSecondsAfterFinished": -1})),
        "invalid runPolicy settings: maxTtlSecondsAfterFinished: must be at least 0, got -1"
    );
    assert_eq!(
        err(json!({"maxActiveDeadlineSeconds": 0})),
        "invalid runPolicy settings: maxActiveDeadlineSeconds: must be at least 1, got 0"
    );
    assert_eq!(
        err(json!({"allowedCleanPodPolicies": ["All", "Sometimes"]})),
        r#"invalid runPolicy settings: allowedCleanPodPolicies[1]: unsupported value "Sometimes": supported values: "All", "None", "Running""#
    );
    assert_eq!(
        err(json!({"allowedCleanPodPolicies": []})),
        r#"invalid runPolicy settings: allowedCleanPodPolicies: must list at least one of "All", "None", "Running""#
    );
    assert!(err(json!({"allowedManagedBy": []})).contains("allowedManagedBy: must list at least one controller"));
    assert_eq!(
        err(json!({"allowedManagedBy": ["a", ""]})),
        "invalid runPolicy settings: allowedManagedBy[1]: must not be empty"
    );
    assert_eq!(
        err(json!({"defaultTtlSecondsAfterFinished": 7200, "maxTtlSecondsAfterFinished": 3600})),
        "invalid runPolicy settings: defaultTtlSecondsAfterFinished: must be at most maxTtlSecondsAfterFinished (3600), got 7200"
    );
    assert_eq!(
        err(json!({"defaultCleanPodPolicy": "None", "allowedCleanPodPolicies": ["All"]})),
        r#"invalid runPolicy settings: defaultCleanPodPolicy: "None" is not in allowedCleanPodPolicies ("All")"#
    );
    assert_eq!(
        err(json!({"defaultRestartPolicy": "Sometimes"})),
        r#"invalid runPolicy settings: defaultRestartPolicy: unsupported value "Sometimes": supported values: "Always", "OnFailure", "Never", "ExitCode""#
    );
    assert!(err(json!({"maxTTL": 1})).contains("unknown field `maxTTL`"));
    assert!(parse_settings::<RunPolicyRules>(&Value::Null).is_ok());
}

#[test]
fn other_kinds_are_left_alone() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}});
    let settings = Settings { default_restart_policy: Some("Never".into()), ..Settings::default() };
    let v = RunPolicyRules::check(&settings, &review("CREATE", &pod, None), &MemoryCluster::default());
    assert_eq!(v, Verdict::default());
}

#[test]
fn every_rule_is_listed_once() {
    let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), RULES.len());
    assert!(ids.iter().all(|id| id.starts_with("run-policy.")));
}

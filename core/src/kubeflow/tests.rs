use super::*;
use serde_json::{Value, json};

fn decode(kind: JobKind, job: Value) -> Result<KubeflowJob, String> {
    KubeflowJob::decode(kind, KubeflowVersion::V1, &job.to_string())
}

#[test]
fn decodes_every_kind_with_its_own_map() {
    let job = decode(
        JobKind::PyTorchJob,
        json!({"metadata": {"name": "p"}, "spec": {
            "runPolicy": {"schedulingPolicy": {"minAvailable": 3, "minResources": {"cpu": 2}}},
            "elasticPolicy": {"minReplicas": 1, "maxReplicas": 4, "rdzvConf": [{"key": "a", "value": "b"}]},
            "pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 2}, "Extra": null},
            "somethingNew": true
        }}),
    )
    .unwrap();
    assert_eq!(job.total_replicas(), 3);
    assert_eq!(job.scheduling_policy().unwrap().min_available, Some(3));
    assert_eq!(job.elastic_bounds(), Some(ElasticBounds { min_replicas: Some(1), max_replicas: Some(4) }));
    assert_eq!(job.replica_specs().unwrap().len(), 3);

    let mpi = decode(JobKind::MPIJob, json!({"spec": {"mpiReplicaSpecs": {"Launcher": {}, "Worker": {}}}})).unwrap();
    assert_eq!(mpi.total_replicas(), 1, "MPI Worker defaults to 0 replicas, the Launcher to 1");
    // Another kind's map is not this kind's map.
    let tf = decode(JobKind::TFJob, json!({"spec": {"pytorchReplicaSpecs": {"Worker": {}}}})).unwrap();
    assert!(tf.replica_specs().is_none());
}

#[test]
fn the_old_copy_keeps_what_update_rules_compare() {
    let text = json!({"metadata": {"name": "p"}, "spec": {
        "runPolicy": {"managedBy": "kubeflow.org/training-operator", "schedulingPolicy": {"queue": "q"}},
        "elasticPolicy": {"minReplicas": 1},
        "pytorchReplicaSpecs": {
            "Worker": {"replicas": 2, "restartPolicy": "Never", "template": {
                "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"}},
                "spec": {"containers": [{"name": 7}]}}},
            "Master": null}
    }})
    .to_string();
    let old = KubeflowJob::decode_old(JobKind::PyTorchJob, KubeflowVersion::V1, &text).unwrap();
    assert_eq!(old.metadata.name.as_deref(), Some("p"));
    assert_eq!(old.scheduling_policy().unwrap().queue.as_deref(), Some("q"));
    assert_eq!(old.run_policy().unwrap().managed_by.as_deref(), Some("kubeflow.org/training-operator"));
    assert_eq!(old.elastic_bounds(), None, "not compared on update");
    let specs = old.replica_specs().unwrap();
    assert_eq!(specs.get("Master"), Some(&None));
    let worker = specs.get("Worker").unwrap().as_ref().unwrap();
    assert_eq!(worker.replicas, Some(2));
    assert_eq!(worker.restart_policy, None);
    assert_eq!(worker.template.spec, None, "the Pod spec is skipped unread");
    let annotations = worker.template.metadata.as_ref().unwrap().annotations.as_ref().unwrap();
    assert_eq!(annotations["kueue.x-k8s.io/podset-required-topology"], "rack");
    // The full decode reads the same text's Pod spec, and the misplaced name fails it.
    assert!(KubeflowJob::decode(JobKind::PyTorchJob, KubeflowVersion::V1, &text).is_err());
    let err = KubeflowJob::decode_old(
        JobKind::PyTorchJob,
        KubeflowVersion::V1,
        &json!({"spec": {"runPolicy": {"managedBy": 1}}}).to_string(),
    )
    .unwrap_err();
    assert!(err.starts_with("spec.runPolicy.managedBy: invalid type: integer `1`"), "{err}");
}

#[test]
fn each_mpijob_version_reads_only_its_own_fields() {
    assert_eq!(KubeflowVersion::of("v2beta1", JobKind::MPIJob), Some(KubeflowVersion::V2beta1));
    assert_eq!(KubeflowVersion::of("v2beta1", JobKind::TFJob), None);
    assert_eq!(KubeflowVersion::of("v1", JobKind::TFJob), Some(KubeflowVersion::V1));
    let text = json!({"spec": {"slotsPerWorker": 2, "mainContainer": "m", "cleanPodPolicy": "All",
        "mpiImplementation": "Intel", "launcherCreationPolicy": "AtStartup", "sshAuthMountPath": "/s",
        "runLauncherAsWorker": true}})
    .to_string();
    let fields = |version| {
        let job = KubeflowJob::decode(JobKind::MPIJob, version, &text).unwrap();
        assert_eq!(job.is_mpi_operator(), version == KubeflowVersion::V2beta1);
        let m = job.as_mpi().unwrap().clone();
        (m.slots_per_worker, m.main_container, m.clean_pod_policy, m.mpi_implementation, m.run_launcher_as_worker)
    };
    assert_eq!(fields(KubeflowVersion::V1), (Some(2), Some("m".into()), Some("All".into()), None, None));
    assert_eq!(fields(KubeflowVersion::V2beta1), (Some(2), None, None, Some("Intel".into()), Some(true)));
}

#[test]
fn replica_specs_are_sorted_by_type_and_a_repeated_type_keeps_its_last_spec() {
    let text = r#"{"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1}, "PS": null, "Chief": {"replicas": 2},
        "Worker": {"replicas": 3}, "Evaluator": {}, "Worker": {"replicas": 4}}}}"#;
    let job = KubeflowJob::decode(JobKind::TFJob, KubeflowVersion::V1, text).unwrap();
    let specs = job.replica_specs().unwrap();
    assert_eq!(specs.keys().map(String::as_str).collect::<Vec<_>>(), ["Chief", "Evaluator", "PS", "Worker"]);
    assert_eq!(specs.get("Worker").unwrap().as_ref().unwrap().replicas, Some(4));
    assert_eq!(specs.get("PS"), Some(&None));
    assert_eq!((specs.get("Master"), specs.contains_key("Master"), specs.contains_key("Chief")), (None, false, true));
    assert_eq!(job.total_replicas(), 2 + 1 + 4);
    // The old copy reads the map the same way.
    let old = KubeflowJob::decode_old(JobKind::TFJob, KubeflowVersion::V1, text).unwrap();
    let old_specs = old.replica_specs().unwrap();
    assert_eq!(old_specs.keys().collect::<Vec<_>>(), specs.keys().collect::<Vec<_>>());
    assert_eq!(old_specs.get("Worker").unwrap().as_ref().unwrap().replicas, Some(4));
    let err =
        KubeflowJob::decode(JobKind::TFJob, KubeflowVersion::V1, r#"{"spec": {"tfReplicaSpecs": [1]}}"#).unwrap_err();
    assert_eq!(err, "spec.tfReplicaSpecs: invalid type: sequence, expected a map");
}

#[test]
fn a_map_past_its_maximum_keeps_only_known_replica_types() {
    // The first 16 entries are read before the map is known to be too long, and dropped
    // unless their type is known; past them, specs of unknown types are skipped unread.
    let mut specs: serde_json::Map<String, Value> =
        (0..16).map(|i| (format!("A{i:02}"), json!({"replicas": 1}))).collect();
    specs.extend((0..4).map(|i| (format!("Z{i}"), json!({"replicas": "not a number"}))));
    specs.insert("Worker".into(), json!({"replicas": 3}));
    specs.insert("Chief".into(), json!({"replicas": 1}));
    specs.insert("Launcher".into(), json!(null));
    let job = json!({"spec": {"pytorchReplicaSpecs": specs}});
    let text = job.to_string();
    for job in [
        decode(JobKind::PyTorchJob, job).unwrap(),
        KubeflowJob::decode_old(JobKind::PyTorchJob, KubeflowVersion::V1, &text).unwrap(),
    ] {
        let map = job.replica_specs().unwrap();
        assert_eq!(map.keys().map(String::as_str).collect::<Vec<_>>(), ["Chief", "Launcher", "Worker"]);
        assert_eq!((map.len(), map.len_in_object(), map.is_over_maximum()), (3, 23, true));
        assert_eq!(job.total_replicas(), 1 + 3);
    }
    // Up to the maximum every entry is read, and one that does not decode is an error.
    let mut specs: serde_json::Map<String, Value> =
        (0..MAX_REPLICA_MAP_ENTRIES).map(|i| (format!("Worker{i:02}"), json!({"replicas": 1}))).collect();
    let job = decode(JobKind::PyTorchJob, json!({"spec": {"pytorchReplicaSpecs": specs.clone()}})).unwrap();
    let map = job.replica_specs().unwrap();
    assert_eq!((map.len(), map.len_in_object(), map.is_over_maximum()), (16, 16, false));
    specs.insert("Worker15".into(), json!({"replicas": "x"}));
    assert_eq!(
        decode(JobKind::PyTorchJob, json!({"spec": {"pytorchReplicaSpecs": specs}})).unwrap_err(),
        "spec.pytorchReplicaSpecs.Worker15.replicas: invalid type: string \"x\", expected i32"
    );
    // Repeated keys count as the entries they are.
    let text = format!(r#"{{"spec": {{"jaxReplicaSpecs": {{{}}}}}}}"#, vec![r#""Worker": {}"#; 17].join(", "));
    let map =
        KubeflowJob::decode(JobKind::JAXJob, KubeflowVersion::V1, &text).unwrap().replica_specs().unwrap().clone();
    assert_eq!((map.len(), map.len_in_object(), map.is_over_maximum()), (1, 17, true));
    // Skipped entries are still JSON: a syntax error in one is reported.
    let text = format!(
        r#"{{"spec": {{"jaxReplicaSpecs": {{{}, "W99": {{"a": tru}}}}}}}}"#,
        (0..17).map(|i| format!(r#""W{i}": {{}}"#)).collect::<Vec<_>>().join(", ")
    );
    assert!(KubeflowJob::decode(JobKind::JAXJob, KubeflowVersion::V1, &text).unwrap_err().contains("expected ident"));
}

#[test]
fn reports_where_a_field_has_the_wrong_type() {
    let err = decode(JobKind::TFJob, json!({"spec": {"tfReplicaSpecs": {"Worker": {"replicas": "two"}}}})).unwrap_err();
    assert!(err.starts_with("spec.tfReplicaSpecs.Worker.replicas: invalid type: string \"two\""), "{err}");
}

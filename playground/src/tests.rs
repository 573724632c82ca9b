//! The engine API the page calls, natively: exact verdicts, positions, errors and settings
//! answers. (That every verdict equals the built `.wasm` policies' is the e2e fidelity test.)

use serde_json::{Value, json};

use super::*;

const BROKEN_PODGROUP: &str = "\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata:
  name: broken
  namespace: ml
spec:
  disruptionMode: All
  priority: 5000
  schedulingPolicy:
    gang:
      minCount: 0
";

const TFJOB: &str = "\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: train, namespace: ml}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {name: tensorflow, image: 'kubeflow/tf-mnist:latest'}
";

fn input(manifests: &str, settings: Value, rule_sets: &[&str]) -> String {
    json!({"files": [{"name": "manifests.yaml", "text": manifests}], "settings": settings, "ruleSets": rule_sets})
        .to_string()
}

fn run(input: &str) -> Value {
    serde_json::from_str(&evaluate_json(input, None)).unwrap()
}

fn result<'a>(doc: &'a Value, rule_set: &str) -> &'a Value {
    doc["results"].as_array().unwrap().iter().find(|r| r["ruleSet"] == rule_set).unwrap()
}

#[test]
fn the_default_example_is_rejected_by_gang_with_located_violations() {
    let report = run(&input(BROKEN_PODGROUP, Value::Null, &[]));
    let doc = &report["documents"][0];
    assert_eq!(
        (doc["kind"].as_str(), doc["name"].as_str(), doc["operation"].as_str()),
        (Some("PodGroup"), Some("broken"), Some("CREATE"))
    );
    let gang = result(doc, "gang");
    assert_eq!(gang["accepted"], false);
    let located: Vec<(String, u64, u64)> = gang["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["rule"].as_str().unwrap().to_string(), v["line"].as_u64().unwrap(), v["column"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        located,
        [
            ("gang.min-count".to_string(), 11, 7),
            ("gang.disruption-mode".to_string(), 7, 3),
            ("gang.user-priority".to_string(), 8, 3)
        ]
    );
    assert_eq!(
        gang["violations"][0]["message"],
        "spec.schedulingPolicy.gang.minCount: Required value [gang.min-count]"
    );
    assert_eq!(
        gang["message"].as_str().unwrap().split("; ").count(),
        3,
        "the message joins the three violations as the policy does"
    );
    for other in ["topology", "claims", "runPolicy"] {
        assert_eq!(result(doc, other)["accepted"], true, "{other}");
    }
    // Without a clock no time is reported; the object is attached only to mutated documents.
    assert_eq!(gang["elapsedMicros"], Value::Null);
    assert_eq!(doc["object"], Value::Null);
}

#[test]
fn a_v2beta1_mpijob_is_checked_by_each_rule_set_at_its_lines() {
    let mpijob = "\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: pi, namespace: ml}
spec:
  launcherCreationPolicy: WaitForWorkers
  runPolicy:
    schedulingPolicy: {minAvailable: 4}
  mpiReplicaSpecs:
    Launcher:
      template: {spec: {containers: [{name: launcher, image: 'mpioperator/mpi-pi:openmpi'}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: worker, image: 'mpioperator/mpi-pi:openmpi'}]}}
";
    let report = run(&input(mpijob, Value::Null, &[]));
    let doc = &report["documents"][0];
    let located = |rule_set: &str| -> Vec<(String, u64)> {
        result(doc, rule_set)["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["message"].as_str().unwrap().to_string(), v["line"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(
        located("gang"),
        [("spec.runPolicy.schedulingPolicy.minAvailable: Invalid value: 4: must be less than or equal to the job's total replicas (Launcher 1 + Worker 2 = 3) [gang.min-available]".to_string(), 7)]
    );
    assert_eq!(
        located("runPolicy"),
        [("spec.launcherCreationPolicy: Unsupported value: \"WaitForWorkers\": supported values: \"AtStartup\", \"WaitForWorkersReady\" [run-policy.launcher-creation-policy]".to_string(), 5)]
    );
    for accepted in ["topology", "claims"] {
        assert_eq!(result(doc, accepted)["accepted"], true, "{accepted}");
    }
}

#[test]
fn a_volcano_job_is_checked_by_gang_at_its_lines_and_left_to_the_others() {
    let vcjob = "\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: llm-pretrain, namespace: ml}
spec:
  minAvailable: 5
  plugins: {mpi: ['--master=launcher']}
  tasks:
  - name: launcher
    replicas: 1
    template: {spec: {containers: [{name: c, image: busybox}]}}
  - name: worker
    replicas: 3
    dependsOn: {name: [worker]}
    template: {spec: {containers: [{name: c, image: busybox}]}}
";
    let report = run(&input(vcjob, Value::Null, &[]));
    let doc = &report["documents"][0];
    let located: Vec<(String, u64)> = result(doc, "gang")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["message"].as_str().unwrap().to_string(), v["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        located,
        [
            ("spec.minAvailable: Invalid value: 5: job 'minAvailable' should not be greater than total replicas in tasks (4) [gang.volcano-min-available]".to_string(), 5),
            ("spec.tasks[1].dependsOn.name: Invalid value: [\"worker\"]: job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG) [gang.volcano-depends-on]".to_string(), 13),
        ]
    );
    for accepted in ["topology", "claims", "runPolicy"] {
        assert_eq!(result(doc, accepted)["accepted"], true, "{accepted}");
    }
}

#[test]
fn a_clock_times_each_rule_set() {
    let mut now = 0.0;
    let mut clock = || {
        now += 250.0;
        now
    };
    let report: Value =
        serde_json::from_str(&evaluate_json(&input(BROKEN_PODGROUP, Value::Null, &["gang"]), Some(&mut clock)))
            .unwrap();
    assert_eq!(result(&report["documents"][0], "gang")["elapsedMicros"], 250.0);
}

#[test]
fn a_mutation_comes_with_its_patch_and_the_original_object() {
    let settings = json!({"runPolicy": {"defaultCleanPodPolicy": "All"}});
    let report = run(&input(TFJOB, settings, &["runPolicy"]));
    let doc = &report["documents"][0];
    let run_policy = result(doc, "runPolicy");
    assert_eq!(run_policy["accepted"], true);
    assert_eq!(
        run_policy["patch"],
        json!([{"op": "add", "path": "/spec/runPolicy", "value": {"cleanPodPolicy": "All"}}])
    );
    assert_eq!(doc["object"]["spec"]["runPolicy"], Value::Null);
    assert_eq!(run_policy["mutatedObject"]["spec"]["runPolicy"]["cleanPodPolicy"], "All");
}

#[test]
fn unreadable_input_is_an_error_with_its_position() {
    let report = run(&input("kind: PodGroup\nkind: Pod\n", Value::Null, &[]));
    let error = &report["errors"][0];
    assert_eq!((error["file"].as_str(), error["line"].as_u64()), (Some("manifests.yaml"), Some(2)));
    assert!(error["message"].as_str().unwrap().contains("duplicate"), "{error}");

    let report = run("{\"files\": 3}");
    assert_eq!(report["errors"][0]["file"], "input");
}

#[test]
fn a_document_over_3_mib_is_refused() {
    let big =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  k: {}\n", "x".repeat(4 << 20));
    let report = run(&input(&big, Value::Null, &[]));
    assert_eq!(
        report["errors"],
        json!([{"file": "manifests.yaml", "line": 1, "column": 1, "message": "document is 4.0 MiB, over the 3 MiB the Kubernetes API accepts"}])
    );
}

#[test]
fn settings_are_validated_as_the_policies_do() {
    assert_eq!(
        serde_json::from_str::<Value>(&validate_settings_json("gang", r#"{"maxMinCount": 0}"#)).unwrap(),
        json!({"valid": false, "message": "invalid gang settings: maxMinCount: must be at least 1, got 0"})
    );
    assert_eq!(validate_settings_json("runPolicy", r#"{"defaultRestartPolicy": "Never"}"#), r#"{"valid":true}"#);
    assert_eq!(validate_settings_json("claims", ""), r#"{"valid":true}"#);
    let unknown: Value = serde_json::from_str(&validate_settings_json("gang", r#"{"maxMinCont": 3}"#)).unwrap();
    assert!(unknown["message"].as_str().unwrap().contains("unknown field `maxMinCont`"), "{unknown}");
    let bad_set: Value = serde_json::from_str(&validate_settings_json("scheduling", "{}")).unwrap();
    assert_eq!(bad_set["message"], "unknown rule set \"scheduling\": use gang, topology, claims or runPolicy");
    // The same settings inside an evaluation are an input error with the same message.
    let report = run(&input(BROKEN_PODGROUP, json!({"gang": {"maxMinCount": 0}}), &[]));
    assert_eq!(report["errors"][0]["message"], "invalid gang settings: maxMinCount: must be at least 1, got 0");
}

#[test]
fn version_info_lists_the_rule_sets_and_their_rules() {
    let info: Value = serde_json::from_str(&version_info_json()).unwrap();
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    let names: Vec<&str> = info["ruleSets"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["gang", "topology", "claims", "runPolicy"]);
    assert!(info["ruleSets"][0]["rules"].as_array().unwrap().contains(&json!("gang.min-count")));
    assert_eq!(info["kubernetes"][0]["schedulingVersions"], json!(["v1alpha2"]));
}

#[test]
fn the_kubernetes_version_adds_what_its_apiserver_refuses_to_the_same_policy_verdict() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  parallelism: 2\n  scheduling:\n    schedulingPolicy: {gang: {minCount: 2}}\n  template:\n    spec:\n      schedulingGroup: {podGroupName: g}\n      containers: [{name: c, image: i}]\n";
    let report = |version: Option<&str>| -> Value {
        let mut i: Value = serde_json::from_str(&input(job, Value::Null, &["gang"])).unwrap();
        if let Some(v) = version {
            i["kubernetesVersion"] = json!(v);
        }
        serde_json::from_str(&evaluate_json(&i.to_string(), None)).unwrap()
    };
    let (none, on137, on138) = (report(None), report(Some("1.37")), report(Some("1.38")));
    for r in [&none, &on137, &on138] {
        assert_eq!(r["documents"][0]["results"][0]["accepted"], true);
        assert_eq!(r["documents"][0]["results"][0]["warnings"][0]["rule"], "gang.job-scheduling-group");
    }
    assert_eq!(none["refused"], json!([]));
    assert_eq!(on137["refused"], json!([]));
    assert_eq!(
        on138["refused"][0]["message"],
        "spec.scheduling: Forbidden: may not be set when spec.template.spec.schedulingGroup is set"
    );
    assert_eq!((on138["refused"][0]["line"].as_u64(), on138["summary"]["refused"].as_u64()), (Some(6), Some(1)));
}

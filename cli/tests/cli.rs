//! The `gangwarden` binary, run as users run it: exit codes, positions, every output format.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use gangwarden_harness::corpus::{self, FileExpectation};
use gangwarden_harness::repo_root;
use serde_json::{Value, json};

fn gangwarden(args: &[&str]) -> Output {
    run(args, None)
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangwarden"))
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangwarden");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin.unwrap_or_default().as_bytes()).expect("write stdin");
    drop(pipe);
    child.wait_with_output().expect("wait")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

const PODGROUP_BAD: &str = "\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata:
  name: g
  namespace: ml
spec:
  schedulingPolicy:
    gang:
      minCount: 0
";

#[test]
fn examples_are_reported_at_their_lines() {
    let o = gangwarden(&["check", "examples/"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        vec![
            "examples/kueue/queue.yaml:46:22: warning: Job ml/pretrain-queued: spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: ClusterQueue \"gpu-cq\" (LocalQueue \"team-a\") can never admit pod set \"main\": its 3 pods ask 24 nvidia.com/gpu in total (8 each), more than the 16 of nvidia.com/gpu its largest flavor (\"a100\") can ever give, outside any cohort (Kueue: \"insufficient quota for nvidia.com/gpu in flavor a100, ... > maximum capacity (16)\"), so the job stays suspended [topology.queue-quota]",
            "examples/kueue/queue.yaml:90:24: warning: Job ml/preprocess-queued: spec.template.spec.containers[0].resources.requests[cpu]: ClusterQueue \"mem-cq\" (LocalQueue \"team-mem\") can never admit pod set \"main\": Kueue gives a pod set one flavor for all of a resource group's resources (cpu, memory), and no flavor of the group can ever hold all that its 2 pods ask, outside any cohort: flavor \"highmem\" at most 8 cpu of the 16 cpu they ask, flavor \"highcpu\" at most 64Gi memory of the 128Gi memory they ask (Kueue: \"insufficient quota for cpu in flavor highmem, ... > maximum capacity (8)\"), so the job stays suspended [topology.queue-quota]",
            "examples/kueue/queue.yaml:134:16: warning: TrainJob ml/llama-queued: spec.trainer.resourcesPerNode.limits[nvidia.com/gpu]: ClusterQueue \"gpu-cq\" (LocalQueue \"team-a\") can never admit pod set \"node\": its 3 pods ask 24 nvidia.com/gpu in total (8 each), more than the 16 of nvidia.com/gpu its largest flavor (\"a100\") can ever give, outside any cohort (Kueue: \"insufficient quota for nvidia.com/gpu in flavor a100, ... > maximum capacity (16)\"), so the job stays suspended [topology.queue-quota]",
            "examples/manifests/capacity.yaml:16:9: warning: Job ml/pretrain: spec.scheduling.schedulingPolicy.gang.minCount: the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
            "examples/manifests/capacity.yaml:41:15: warning: Job ml/one-big-pod: spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: no node can ever run this pod: one pod asks 16 nvidia.com/gpu, and the largest of the 6 eligible nodes has 8 allocatable [topology.pod-fits]",
            "examples/manifests/capacity.yaml:76:7: warning: PyTorchJob ml/llama-70b: spec.runPolicy.schedulingPolicy.minAvailable: the gang of 8 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
            "examples/manifests/capacity.yaml:106:3: warning: Job ml/llm-pretrain: spec.minAvailable: the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
            "examples/manifests/dra.yaml:14:9: warning: Job ml/dra-pretrain: spec.template.spec.resourceClaims[0]: no node can ever run this pod: in its claim from ResourceClaimTemplate \"sixteen-gpus\", request \"gpus\" asks for 16 devices of DeviceClass \"gpu.nvidia.com\" (8 at most) on any of the 6 nodes it may use, counting the devices of the ResourceSlices that reach each node (checked 6 nodes and 4 ResourceSlices) [topology.pod-fits]",
            "examples/manifests/drifted.yaml:13:3: error: PodGroup ml/train-workers-retry: spec.schedulingPolicy: Invalid value: {\"gang\":{\"minCount\":4}}: must equal the schedulingPolicy of Workload \"train\" template \"workers\": {\"gang\":{\"minCount\":2}} [gang.template-consistency]",
            "examples/manifests/drifted.yaml:18:9: error: PodGroup ml/train-workers-retry: spec.schedulingConstraints.topology[0].key: Invalid value: \"topology.kubernetes.io/zon\": no node carries the label \"topology.kubernetes.io/zon\" (checked 6 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]",
            "examples/manifests/drifted.yaml:28:5: warning: Pod ml/eval-0: spec.schedulingGroup.podGroupName: PodGroup \"eval\" does not exist in namespace \"ml\" yet; the Pod stays Pending until it is created [gang.pod-group-exists]",
            "examples/manifests/drifted.yaml:28:5: warning: Pod ml/eval-0: spec.schedulingGroup.podGroupName: PodGroup \"eval\" does not exist in namespace \"ml\" yet, so this Pod's resourceClaims could not be compared with the group's claims (a Pod shares a group claim only through an identical entry) [claims.pod-claim-match]",
            "examples/manifests/jobs.yaml:15:9: error: Job ml/finetune: spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 8: must be less than or equal to spec.parallelism (4) [gang.job-parallelism]",
            "examples/manifests/jobs.yaml:35:11: error: Job ml/eval: spec.scheduling.schedulingConstraints.topology[0].key: Invalid value: \"topology.kubernetes.io/zome\": no node carries the label \"topology.kubernetes.io/zome\" (checked 6 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]",
            "examples/manifests/mpijob.yaml:21:5: error: MPIJob ml/horovod-mnist: spec.mpiReplicaSpecs[Worker].replicas: Invalid value: 0: must be greater than or equal to 1 [run-policy.replicas]",
            "examples/manifests/pytorchjob.yaml:12:7: error: PyTorchJob ml/resnet: spec.runPolicy.schedulingPolicy.minAvailable: Invalid value: 8: must be less than or equal to the job's total replicas (Master 1 + Worker 3 = 4) [gang.min-available]",
            "examples/manifests/pytorchjob.yaml:24:7: error: PyTorchJob ml/resnet: spec.pytorchReplicaSpecs[Worker].restartPolicy: Unsupported value: \"OnFaliure\": supported values: \"Always\", \"OnFailure\", \"Never\", \"ExitCode\" [run-policy.restart-policy]",
            "examples/manifests/trainjob.yaml:14:3: error: ClusterTrainingRuntime torch-gang: spec.podGroupPolicy: Invalid value: \"{coscheduling, volcano}\": must specify exactly one of: `coscheduling`, `volcano` (with both, Trainer makes two PodGroups and the job can stay Pending, kubeflow/trainer#4060) [gang.pod-group-policy]",
            "examples/manifests/trainjob.yaml:42:3: error: TrainJob ml/llama-finetune: spec.runtimeRef: Invalid value: {\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\",\"name\":\"torch-gang\"}: ClusterTrainingRuntime \"torch-gang\" sets both coscheduling and volcano in spec.podGroupPolicy, so Trainer makes two PodGroups for the job and it can stay Pending (kubeflow/trainer#4060) [gang.pod-group-policy]",
            "examples/manifests/trainjob.yaml:54:3: error: TrainJob ml/llama-eval: spec.runtimeRef: Invalid value: {\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\",\"name\":\"torch-distributed\"}: clustertrainingruntimes.trainer.kubeflow.org \"torch-distributed\" not found: specified clusterTrainingRuntime must be created before the TrainJob is created [run-policy.runtime-exists]",
            "examples/manifests/volcano-queues.yaml:32:3: warning: Job ml/pretrain: spec.queue: the job's gang asks at least 24 nvidia.com/gpu at once, and Volcano Queue \"research\" has a capability of 16: its enqueue action keeps the PodGroup Pending (\"queue resource quota insufficient\") however long it waits [topology.volcano-queue-capability]",
            "examples/manifests/volcano.yaml:41:3: error: Job ml/llm-pretrain: spec.minAvailable: Invalid value: 5: job 'minAvailable' should not be greater than total replicas in tasks (4) [gang.volcano-min-available]",
            "examples/manifests/volcano.yaml:45:16: error: Job ml/llm-pretrain: spec.policies[1].events[0]: Invalid value: \"PodEvicted\": duplicate event PodEvicted  across different policy [gang.volcano-policies]",
            "examples/manifests/volcano.yaml:40:3: warning: Job ml/llm-pretrain: spec.queue: the job's gang asks at least 32 nvidia.com/gpu at once, and Volcano Queue \"research\" has a capability of 16: its enqueue action keeps the PodGroup Pending (\"queue resource quota insufficient\") however long it waits [topology.volcano-queue-capability]",
            "28 documents checked in 34 files: 19 accepted, 9 rejected, 12 warnings; 41 documents skipped (no rule set guards them)",
        ]
    );
    assert!(!out.contains('\x1b'), "no colour when stdout is not a terminal");
}

#[test]
fn the_readme_shows_the_real_output() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    let mut shown = 0;
    for (start, _) in readme.match_indices("$ gangwarden check ") {
        let line_end = start + readme[start..].find('\n').expect("end of the command line");
        let args: Vec<&str> = readme[start + 2..line_end].split_whitespace().skip(1).collect();
        let block = &readme[line_end + 1..];
        let block = &block[..block.find("```").expect("end of the block")];
        assert_eq!(
            block,
            stdout(&gangwarden(&args)),
            "README output of `gangwarden {}` drifted: update it",
            args.join(" ")
        );
        shown += 1;
    }
    assert!(shown >= 2, "the README shows `gangwarden check examples/` and the Trainer example");
}

#[test]
fn the_trainer_corpus_passes_but_the_upstream_example_trainer_rejects() {
    let o = gangwarden(&["check", "e2e-tests/corpus/kubeflow-trainer/"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(
        stdout(&o).lines().collect::<Vec<_>>(),
        vec![
            "e2e-tests/corpus/kubeflow-trainer/example-05-multi-step.yaml:79:3: error: TrainJob default/multi-step-example: spec.runtimeRef: Invalid value: {\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"TrainingRuntime\",\"name\":\"torch-with-dataset-init\"}: must have volumeMount with name - initializer in container dataset-initializer of the dataset-initializer job (TrainingRuntime \"torch-with-dataset-init\") [run-policy.initializers]",
            "12 documents checked in 10 files: 11 accepted, 1 rejected, 0 warnings",
        ]
    );
}

#[test]
fn a_pod_group_named_train_job_gets_the_apiservers_answer() {
    let dir = temp();
    let file = write(
        dir.path(),
        "pg.yaml",
        "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n  name: Train_Job\n  namespace: ml\nspec:\n  schedulingPolicy:\n    gang: {minCount: 2}\n",
    );
    let o = gangwarden(&["check", &file]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let out = stdout(&o);
    let error = format!(
        "{file}:4:3: error: PodGroup ml/Train_Job: metadata.name: Invalid value: \"Train_Job\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') [meta.name]"
    );
    // Every rule set runs the metadata rules; the finding is shown once.
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [error.as_str(), "1 document checked in 1 file: 0 accepted, 1 rejected, 0 warnings"]
    );
}

#[test]
fn valid_manifests_pass() {
    let o = gangwarden(&["check", "examples/manifests/training.yaml", "examples/manifests/nodes.yaml"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "4 documents checked in 2 files: 4 accepted, 0 rejected, 0 warnings; 6 documents skipped (no rule set guards them)\n"
    );
}

/// Every corpus file, as a user would check it: the scheduler_perf templates instantiated,
/// the objects the harness creates first given with --cluster.
#[test]
fn the_corpus_checks_as_its_expectations_say() {
    let dir = corpus::corpus_dir();
    let text = std::fs::read_to_string(dir.join("expectations.yaml")).expect("expectations");
    let expectations: BTreeMap<String, FileExpectation> = serde_norway::from_str(&text).expect("expectations yaml");
    let tmp = temp();
    let mut checked = 0;
    for (rel, exp) in &expectations {
        let raw = std::fs::read_to_string(dir.join(rel)).expect("corpus file");
        let manifest = if exp.unparseable { raw } else { corpus::instantiate(&raw, &exp.params).expect("instantiate") };
        let file = write(tmp.path(), &rel.replace('/', "__"), &manifest);
        let cluster = write(
            tmp.path(),
            &format!("{}.cluster.json", rel.replace('/', "__")),
            &json!({"apiVersion": "v1", "kind": "List", "items": exp.cluster}).to_string(),
        );
        // The expectations' cluster is all there is (no Nodes means none).
        let o = gangwarden(&["check", &file, "--cluster", &cluster, "--whole-cluster"]);
        let (out, err) = (stdout(&o), stderr(&o));
        if exp.unparseable {
            assert_eq!(code(&o), 2, "{rel}: {out}{err}");
            assert!(err.contains(&format!("{file}:")) && err.contains("not valid YAML"), "{rel}: {err}");
        } else if exp.valid {
            assert_eq!(code(&o), 0, "{rel}: {out}{err}");
        } else {
            let rejected = exp.expect.values().any(|e| !e.accepted);
            assert_eq!(code(&o), if rejected { 1 } else { 0 }, "{rel}: {out}{err}");
            for want in exp.expect.values().flat_map(|e| e.message.iter().chain(&e.warnings)) {
                assert!(out.contains(want.as_str()), "{rel}: no {want:?} in\n{out}");
            }
        }
        checked += 1;
    }
    assert!(checked > 40, "only {checked} corpus files");
}

#[test]
fn unreadable_input_exits_2_naming_the_file() {
    let o = gangwarden(&["check", "no/such/file.yaml"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).starts_with("error: no/such/file.yaml: cannot read: "), "{}", stderr(&o));

    let tmp = temp();
    let path = tmp.path().join("latin1.yaml");
    std::fs::write(&path, b"kind: Pod\nmetadata:\n  name: caf\xe9\n").expect("write");
    let o = gangwarden(&["check", &path.display().to_string()]);
    assert_eq!(code(&o), 2);
    assert_eq!(stderr(&o), format!("error: {}:3:12: not UTF-8 text\n", path.display()));
}

#[test]
fn bad_yaml_exits_2_with_its_position() {
    let tmp = temp();
    let file = write(tmp.path(), "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [x}\n");
    let o = gangwarden(&["check", &file]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).starts_with(&format!("error: {file}:3:")), "{}", stderr(&o));
    assert!(stderr(&o).contains(": not valid YAML: "), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
}

#[test]
fn duplicate_keys_exit_2() {
    let tmp = temp();
    let file = write(tmp.path(), "dup.yaml", &format!("{PODGROUP_BAD}  schedulingPolicy: {{}}\n"));
    let o = gangwarden(&["check", &file]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        format!("error: {file}:10:3: duplicate key \"schedulingPolicy\" (first at line 7, column 3)\n")
    );
}

#[test]
fn a_4_mib_document_exits_2() {
    let tmp = temp();
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n");
    let line = "x".repeat(1000);
    for i in 0..4200 {
        text.push_str(&format!("  k{i}: {line}\n"));
    }
    assert!(text.len() > 4 * 1024 * 1024);
    let file = write(tmp.path(), "big.yaml", &text);
    let o = gangwarden(&["check", &file]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        format!("error: {file}:1:1: document is 4.0 MiB, over the 3 MiB the Kubernetes API accepts\n")
    );
}

#[test]
fn reads_stdin() {
    let o = run(&["check", "-"], Some(PODGROUP_BAD));
    assert_eq!(code(&o), 1);
    assert_eq!(
        stdout(&o),
        "<stdin>:9:7: error: PodGroup ml/g: spec.schedulingPolicy.gang.minCount: Required value [gang.min-count]\n\
         1 document checked in 1 file: 0 accepted, 1 rejected, 0 warnings\n"
    );
}

#[test]
fn old_versions_make_an_update() {
    let tmp = temp();
    let old = write(tmp.path(), "old.yaml", &PODGROUP_BAD.replace("minCount: 0", "minCount: 2"));
    let new = write(tmp.path(), "new.yaml", &PODGROUP_BAD.replace("minCount: 0", "minCount: 3"));
    assert_eq!(code(&gangwarden(&["check", &new])), 0);
    let o = gangwarden(&["check", &new, "--old", &old, "--output", "json"]);
    assert_eq!(code(&o), 1);
    let report: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let doc = &report["documents"][0];
    assert_eq!(doc["operation"], "UPDATE");
    assert_eq!(doc["oldSource"], format!("{old}:1:1"));
    let gang = &doc["results"][0];
    assert_eq!(gang["ruleSet"], "gang");
    assert_eq!(gang["violations"][0]["rule"], "gang.policy-immutable");
    assert_eq!((gang["violations"][0]["line"].as_u64(), gang["violations"][0]["column"].as_u64()), (Some(7), Some(3)));
}

#[test]
fn json_output_has_the_report_fields() {
    let o = gangwarden(&["check", "examples/manifests", "--output", "json"]);
    assert_eq!(code(&o), 1);
    let report: Value = serde_json::from_str(&stdout(&o)).expect("json");
    for field in ["ruleSets", "documents", "skipped", "unserved", "refused", "summary"] {
        assert!(report.get(field).is_some(), "no {field}");
    }
    assert_eq!(
        report["summary"],
        json!({"documents": 39, "checked": 24, "accepted": 15, "rejected": 9, "warnings": 9, "mutated": 0, "skipped": 15, "unserved": 0, "refused": 0})
    );
    for doc in report["documents"].as_array().expect("documents") {
        for field in
            ["file", "document", "line", "column", "apiVersion", "kind", "namespace", "name", "operation", "results"]
        {
            assert!(doc.get(field).is_some(), "document without {field}: {doc}");
        }
        for result in doc["results"].as_array().expect("results") {
            for field in [
                "ruleSet",
                "accepted",
                "code",
                "message",
                "violations",
                "warnings",
                "patch",
                "mutatedObject",
                "lookups",
            ] {
                assert!(result.get(field).is_some(), "result without {field}: {result}");
            }
        }
    }
    let job = report["documents"].as_array().unwrap().iter().find(|d| d["name"] == "resnet").expect("job");
    let run_policy =
        job["results"].as_array().unwrap().iter().find(|r| r["ruleSet"] == "runPolicy").expect("runPolicy");
    assert_eq!(run_policy["violations"][0]["path"], "spec.pytorchReplicaSpecs[Worker].restartPolicy");
    assert_eq!(run_policy["violations"][0]["line"], 24);
}

#[test]
fn sarif_output_meets_the_schema_requirements() {
    let o = gangwarden(&["check", "examples/manifests", "--output", "sarif"]);
    assert_eq!(code(&o), 1);
    let log: Value = serde_json::from_str(&stdout(&o)).expect("json");
    // sarif-2.1.0 schema: sarifLog requires version and runs; run requires tool; tool requires
    // driver; driver requires name; result requires message; message requires text (or id).
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "gangwarden");
    let rules = driver["rules"].as_array().expect("rules");
    assert!(rules.iter().all(|r| r["id"].is_string() && r["shortDescription"]["text"].is_string()));
    let results = runs[0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 21);
    for r in results {
        assert!(r["message"]["text"].is_string(), "{r}");
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], r["ruleId"], "ruleIndex points at the rule");
        assert!(matches!(r["level"].as_str(), Some("error" | "warning")));
        let location = &r["locations"][0]["physicalLocation"];
        assert!(location["artifactLocation"]["uri"].as_str().is_some_and(|u| u.starts_with("examples/manifests/")));
        assert!(location["region"]["startLine"].as_u64().is_some_and(|l| l >= 1));
        assert!(location["region"]["startColumn"].as_u64().is_some_and(|c| c >= 1));
    }
    let restart = results.iter().find(|r| r["ruleId"] == "run-policy.restart-policy").expect("restart policy");
    assert_eq!(restart["locations"][0]["physicalLocation"]["region"], json!({"startLine": 24, "startColumn": 7}));
    assert_eq!(results.iter().filter(|r| r["level"] == "warning").count(), 9);
}

#[test]
fn junit_output_is_xml_with_a_failure_per_rejection() {
    let o = gangwarden(&["check", "examples/manifests", "--output", "junit"]);
    assert_eq!(code(&o), 1);
    let xml = stdout(&o);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suite = root.children().find(|n| n.has_tag_name("testsuite")).expect("testsuite");
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    // 24 documents x 4 rule sets, and the 15 cluster objects skipped (the 6 Nodes; dra.yaml's
    // DeviceClasses, ResourceSlices and claim template; volcano-queues.yaml's 2 Queues).
    assert_eq!(cases.len(), 111);
    assert_eq!(suite.attribute("tests"), Some("111"));
    let failures: Vec<_> = cases.iter().filter_map(|c| c.children().find(|n| n.has_tag_name("failure"))).collect();
    // One per rule set that rejects a document (the Volcano job: gang only).
    assert_eq!(failures.len(), 11);
    assert_eq!(suite.attribute("failures"), Some("11"));
    assert_eq!(cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("skipped"))).count(), 15);
    let restart = cases
        .iter()
        .find(|c| c.attribute("name") == Some("PyTorchJob ml/resnet [runPolicy]"))
        .expect("the job's runPolicy case");
    assert_eq!(restart.attribute("classname"), Some("examples/manifests/pytorchjob.yaml:3:1"));
    let failure = restart.children().find(|n| n.has_tag_name("failure")).expect("failure");
    assert!(failure.text().is_some_and(|t| t.starts_with(
        "examples/manifests/pytorchjob.yaml:24:7: spec.pytorchReplicaSpecs[Worker].restartPolicy: Unsupported value"
    )));
}

#[test]
fn strict_fails_on_warnings() {
    let tmp = temp();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  schedulingGroup: {podGroupName: missing}\n  containers: [{name: c, image: x}]\n";
    let file = write(tmp.path(), "pod.yaml", pod);
    let o = gangwarden(&["check", &file]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains(":5:21: warning: Pod default/p: "), "{}", stdout(&o));
    assert_eq!(code(&gangwarden(&["check", "--strict", &file])), 1);
}

#[test]
fn capacity_is_checked_against_the_nodes_given() {
    let lines = |o: &Output| stdout(o).lines().map(str::to_string).collect::<Vec<_>>();
    // `kubectl get nodes -o yaml` as --cluster objects: the GPU jobs that never fit warn (exit
    // 0, a warning), the one that fits does not.
    let args =
        ["check", "examples/manifests/capacity.yaml", "--cluster", "examples/manifests/nodes.yaml", "--whole-cluster"];
    let o = gangwarden(&args);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        lines(&o),
        [
            "examples/manifests/capacity.yaml:16:9: warning: Job ml/pretrain: spec.scheduling.schedulingPolicy.gang.minCount: the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
            "examples/manifests/capacity.yaml:41:15: warning: Job ml/one-big-pod: spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: no node can ever run this pod: one pod asks 16 nvidia.com/gpu, and the largest of the 6 eligible nodes has 8 allocatable [topology.pod-fits]",
            "examples/manifests/capacity.yaml:76:7: warning: PyTorchJob ml/llama-70b: spec.runPolicy.schedulingPolicy.minAvailable: the gang of 8 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
            "examples/manifests/capacity.yaml:106:3: warning: Job ml/llm-pretrain: spec.minAvailable: the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]",
            "5 documents checked in 1 file: 5 accepted, 0 rejected, 4 warnings",
        ]
    );
    // A fixed cluster: capacityCheck deny rejects them.
    let tmp = temp();
    let settings = write(tmp.path(), "settings.yaml", "topology:\n  capacityCheck: deny\n");
    let o = gangwarden(&[&args[..], &["--settings", &settings]].concat());
    assert_eq!(code(&o), 1);
    assert_eq!(
        lines(&o)[0],
        "examples/manifests/capacity.yaml:16:9: error: Job ml/pretrain: spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 5: the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 6 nodes hold at most 4 of them, even when empty [topology.gang-fits]"
    );
    // Without Nodes there is nothing to check the pods against, and nothing is said of them
    // (the topology key a Job names is another matter: that lookup was asked for).
    let o = gangwarden(&["check", "examples/manifests/capacity.yaml"]);
    assert_eq!(
        lines(&o),
        [
            "examples/manifests/capacity.yaml:58:11: warning: Job ml/tokenize: spec.scheduling.schedulingConstraints.topology[0].key: cannot look up Nodes: no v1 Node objects were given to check against (add them as cluster objects); the check was skipped [topology.key-on-nodes]",
            "5 documents checked in 1 file: 5 accepted, 0 rejected, 1 warning",
        ]
    );
}

#[test]
fn rule_sets_and_settings_are_chosen() {
    let o = gangwarden(&[
        "check",
        "--rule-set",
        "runPolicy",
        "--rule-set",
        "topology",
        "examples/manifests/pytorchjob.yaml",
    ]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(out.contains("[run-policy.restart-policy]") && !out.contains("[gang.min-available]"), "{out}");
    let o = gangwarden(&["check", "--rule-set", "bogus", "examples/"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("unknown rule set \"bogus\""), "{}", stderr(&o));

    let tmp = temp();
    let settings = write(tmp.path(), "settings.yaml", "gang:\n  maxMinCount: 1\n");
    let job_ok = PODGROUP_BAD.replace("minCount: 0", "minCount: 2");
    let pg = write(tmp.path(), "pg.yaml", &job_ok);
    let o = gangwarden(&["check", "--settings", &settings, &pg]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains(":9:7: error: PodGroup ml/g: spec.schedulingPolicy.gang.minCount: Invalid value: 2: must be less than or equal to 1 (settings.maxMinCount) [gang.max-min-count]"), "{}", stdout(&o));
    let bad = write(
        tmp.path(),
        "bad-settings.yaml",
        "gang:\n  maxMinCount: 1\nrunPolicy:\n  defaultRestartPolicy: Sometimes\n",
    );
    let o = gangwarden(&["check", "--settings", &bad, &pg]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).starts_with(&format!("error: {bad}:4:3: invalid runPolicy settings: defaultRestartPolicy: ")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn group_claims_get_a_note_on_their_feature_gate() {
    let dir = temp();
    let job = "apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  parallelism: 2
  scheduling:
    schedulingPolicy: {gang: {minCount: 2}}
    resourceClaims:
    - {name: gpus, resourceClaimTemplateName: eight-gpus}
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: eight-gpus}
      containers:
      - {name: t, image: i, resources: {claims: [{name: gpus}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: eight-gpus, namespace: ml}
spec: {spec: {devices: {requests: [{name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
";
    let path = write(dir.path(), "job.yaml", job);
    let o = gangwarden(&["check", &path]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "{path}:8:5: note: Job ml/train: spec.scheduling.resourceClaims: the apiserver drops these group claims where the DRAWorkloadResourceClaims feature gate is off (beta, off by default in Kubernetes 1.36 to 1.38): the pods then get their own claims from the templates, and a ResourceClaim they name is reserved for each of them (at most 256) [DRAWorkloadResourceClaims]\n1 document checked in 1 file: 1 accepted, 0 rejected, 0 warnings; 2 documents skipped (no rule set guards them)\n"
        )
    );
    let json: Value = serde_json::from_slice(&gangwarden(&["check", &path, "--output", "json"]).stdout).expect("json");
    assert_eq!(json["notes"][0]["path"], "spec.scheduling.resourceClaims");
    // Without group claims, no note.
    let plain = write(
        dir.path(),
        "plain.yaml",
        &job.replace("    resourceClaims:\n    - {name: gpus, resourceClaimTemplateName: eight-gpus}\n", ""),
    );
    assert!(!stdout(&gangwarden(&["check", &plain])).contains("note:"));
}

#[test]
fn api_version_reports_unserved_versions() {
    let tmp = temp();
    let file = write(
        tmp.path(),
        "w.yaml",
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {podGroupTemplates: [{name: a, schedulingPolicy: {basic: {}}}]}\n",
    );
    assert_eq!(code(&gangwarden(&["check", &file])), 0);
    assert_eq!(code(&gangwarden(&["check", "--api-version", "1.37", &file])), 0);
    let o = gangwarden(&["check", "--api-version", "1.36", &file]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        stdout(&o).lines().next(),
        Some(format!("{file}:1:1: error: Workload default/w: apiVersion: Unsupported value: \"scheduling.k8s.io/v1beta1\": Kubernetes 1.36 serves scheduling.k8s.io Workload in: \"scheduling.k8s.io/v1alpha2\" [api-version]").as_str())
    );
    assert_eq!(code(&gangwarden(&["check", "--api-version", "1.99", &file])), 2);
    // Kubernetes 1.38 as planned serves v1 next to v1beta1; 1.37 does not serve v1.
    assert_eq!(code(&gangwarden(&["check", "--api-version", "1.38", &file])), 0);
    let v1 = write(
        tmp.path(),
        "w1.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: Workload\nmetadata: {name: w}\nspec: {podGroupTemplates: [{name: a, schedulingPolicy: {basic: {}}}]}\n",
    );
    assert_eq!(code(&gangwarden(&["check", "--api-version", "1.38", &v1])), 0);
    assert_eq!(code(&gangwarden(&["check", &v1])), 0);
    let o = gangwarden(&["check", "--api-version", "1.37", &v1]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        stdout(&o).lines().next(),
        Some(format!("{v1}:1:1: error: Workload default/w: apiVersion: Unsupported value: \"scheduling.k8s.io/v1\": Kubernetes 1.37 serves scheduling.k8s.io Workload in: \"scheduling.k8s.io/v1beta1\", \"scheduling.k8s.io/v1alpha3\" [api-version]").as_str())
    );
}

#[test]
fn api_version_1_38_adds_the_apiservers_refusal_of_scheduling_next_to_a_scheduling_group() {
    let tmp = temp();
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  parallelism: 2\n  scheduling:\n    schedulingPolicy: {gang: {minCount: 2}}\n  template:\n    spec:\n      schedulingGroup: {podGroupName: g}\n      restartPolicy: Never\n      containers: [{name: c, image: i}]\n";
    let file = write(tmp.path(), "job.yaml", job);
    let warning = format!(
        "{file}:6:3: warning: Job ml/train: spec.scheduling: is not used: spec.template.spec.schedulingGroup is set, so the Job controller makes no Workload or PodGroup from spec.scheduling and the Pods join the group the template names (Kubernetes 1.38 refuses the two together) [gang.job-scheduling-group]"
    );
    // The policy verdict is the same on every release: a warning.
    for args in [vec!["check", &file], vec!["check", "--api-version", "1.37", &file]] {
        let o = gangwarden(&args);
        assert_eq!(code(&o), 0, "{}", stdout(&o));
        assert_eq!(stdout(&o).lines().next(), Some(warning.as_str()));
    }
    let o = gangwarden(&["check", "--api-version", "1.38", &file]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            warning.as_str(),
            &format!(
                "{file}:6:3: error: Job ml/train: spec.scheduling: Forbidden: may not be set when spec.template.spec.schedulingGroup is set [apiserver]"
            ),
            "1 document checked in 1 file: 1 accepted, 0 rejected, 1 refused by the Kubernetes 1.38 apiserver, 1 warning",
        ]
    );
    let json: Value =
        serde_json::from_str(&stdout(&gangwarden(&["check", "-o", "json", "--api-version", "1.38", &file])))
            .expect("json");
    assert_eq!(json["refused"][0]["path"], "spec.scheduling");
    assert_eq!(json["summary"]["refused"], 1);
    let sarif: Value =
        serde_json::from_str(&stdout(&gangwarden(&["check", "-o", "sarif", "--api-version", "1.38", &file])))
            .expect("sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(results.iter().any(|r| r["ruleId"] == "apiserver" && r["level"] == "error"), "{results:?}");
    let junit = stdout(&gangwarden(&["check", "-o", "junit", "--api-version", "1.38", &file]));
    assert!(junit.contains("<testcase name=\"Job ml/train [apiserver]\""), "{junit}");
    // On update 1.38 keeps a Job that already had both: only the warning.
    let o = gangwarden(&["check", "--api-version", "1.38", "--old", &file, &file]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(stdout(&o).lines().next(), Some(warning.as_str()));
}

#[test]
fn the_rule_reference_is_generated() {
    let o = gangwarden(&["rules", "--output", "markdown"]);
    assert_eq!(code(&o), 0);
    let checked_in = std::fs::read_to_string(repo_root().join("docs/rules.md")).expect("docs/rules.md");
    assert_eq!(stdout(&o), checked_in, "docs/rules.md drifted: run `make docs`");
    let json: Value = serde_json::from_str(&stdout(&gangwarden(&["rules", "--output", "json"]))).expect("json");
    let count = gangwarden_core::rules::every_rule().count();
    assert_eq!(json.as_array().map(Vec::len), Some(count));
    assert_eq!(json[0]["id"], "gang.workload-templates");
    assert_eq!(json[0]["kinds"], json!(["Workload"]));
    let claims: Value =
        serde_json::from_str(&stdout(&gangwarden(&["rules", "--rule-set", "claims", "-o", "json"]))).expect("json");
    assert!(claims.as_array().expect("rules").iter().all(|r| r["ruleSet"] == "claims"));
}

#[test]
fn policy_request_prints_what_kwctl_takes() {
    let tmp = temp();
    let new = write(tmp.path(), "new.yaml", PODGROUP_BAD);
    let old = write(tmp.path(), "old.yaml", &PODGROUP_BAD.replace("minCount: 0", "minCount: 2"));
    let o = gangwarden(&["policy-request", &new]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let request: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["kind"], json!({"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"}));
    assert_eq!(request["resource"]["resource"], "podgroups");
    assert_eq!(request["object"]["spec"]["schedulingPolicy"]["gang"]["minCount"], 0);
    assert_eq!(request["oldObject"], Value::Null);
    let request: Value =
        serde_json::from_str(&stdout(&gangwarden(&["policy-request", &new, "--old", &old]))).expect("json");
    assert_eq!(request["operation"], "UPDATE");
    assert_eq!(request["oldObject"]["spec"]["schedulingPolicy"]["gang"]["minCount"], 2);
    let two = write(tmp.path(), "two.yaml", &format!("{PODGROUP_BAD}---\n{PODGROUP_BAD}"));
    let o = gangwarden(&["policy-request", &two]);
    assert_eq!(code(&o), 2);
    assert_eq!(stderr(&o), format!("error: {two}:11:1: holds more than one object; give one\n"));
}

#[test]
fn directories_are_searched_for_manifests_only() {
    let tmp = temp();
    std::fs::create_dir_all(tmp.path().join("a/b")).expect("dirs");
    write(&tmp.path().join("a/b"), "pg.yml", PODGROUP_BAD);
    write(&tmp.path().join("a"), "notes.txt", "not: [yaml");
    write(tmp.path(), "pg.json", &serde_json::to_string(&json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "j"}, "spec": {"schedulingPolicy": {"basic": {}}}})).expect("json"));
    let o = gangwarden(&["check", &tmp.path().display().to_string()]);
    assert_eq!(code(&o), 1);
    let expected_file: PathBuf = tmp.path().join("a/b/pg.yml");
    assert!(
        stdout(&o).starts_with(&format!("{}:9:7: error: PodGroup ml/g: ", expected_file.display())),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).ends_with("2 documents checked in 2 files: 1 accepted, 1 rejected, 0 warnings\n"),
        "{}",
        stdout(&o)
    );
}

use super::kueue::is_go_bool;
use super::*;
use crate::cluster::MemoryCluster;
use crate::engine::parse_settings;
use serde_json::{Value, json};

const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn review(operation: &str, object: Value, old: Value) -> Review<'static> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let request = json!({"operation": operation, "namespace": "ml",
        "kind": {"group": group, "version": version, "kind": object["kind"]},
        "object": object, "oldObject": old});
    crate::review::review_request(&request).unwrap().unwrap()
}

fn settings(v: Value) -> Settings {
    parse_settings::<Topology>(&v).unwrap()
}

fn pod_group(spec: Value) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": spec})
}

fn gang_with_key(min_count: i32, key: &str) -> Value {
    pod_group(json!({"schedulingPolicy": {"gang": {"minCount": min_count}},
        "schedulingConstraints": {"topology": [{"key": key}]}}))
}

fn node(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"podCIDR": "x"}})
}

/// Four nodes: racks r1 (3 nodes) and r2 (1 node); every node has a zone.
fn nodes() -> MemoryCluster {
    MemoryCluster::new(vec![
        node("n1", json!({"rack": "r1", "zone": "a"})),
        node("n2", json!({"rack": "r1", "zone": "a"})),
        node("n3", json!({"rack": "r1", "zone": "a"})),
        node("n4", json!({"rack": "r2", "zone": "a"})),
    ])
}

fn run(s: &Settings, object: Value, cluster: &MemoryCluster) -> (Vec<String>, Vec<String>) {
    let v = Topology::check(s, &review("CREATE", object, Value::Null), cluster);
    (v.violations.iter().map(|x| x.to_string()).collect(), v.warning_messages())
}

#[test]
fn every_holder_of_a_1_37_tree_is_checked_and_templates_are_immutable() {
    let tree = |leaf_key: &str| {
        json!({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w", "namespace": "ml"},
            "spec": {"compositePodGroupTemplates": [{"name": "job", "schedulingPolicy": {"gang": {"minGroupCount": 9}},
                "schedulingConstraints": {"topology": [{"key": "zone"}]},
                "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 3}},
                    "schedulingConstraints": {"topology": [{"key": leaf_key}]}}]}]}})
    };
    // The composite's minGroupCount (9 groups) is no pod count: no domain-size warning for it.
    assert_eq!(run(&Settings::default(), tree("rack"), &nodes()), (Vec::new(), Vec::new()));
    let at = "spec.compositePodGroupTemplates[0].podGroupTemplates[0].schedulingConstraints";
    let (v, _) = run(&Settings::default(), tree("Rack Name"), &nodes());
    assert_eq!(v, [format!("{at}.topology[0].key: Invalid value: \"Rack Name\": {QUALIFIED_NAME_MSG} [topology.key]")]);
    let update = Topology::check(&Settings::default(), &review("UPDATE", tree("zone"), tree("rack")), &nodes());
    let v: Vec<String> = update.violations.iter().map(|x| x.to_string()).collect();
    assert_eq!(
        v,
        [format!(r#"{at}: Invalid value: {{"topology":[{{"key":"zone"}}]}}: field is immutable [topology.immutable]"#)]
    );
}

#[test]
fn settings_are_validated() {
    assert_eq!(settings(Value::Null), Settings::default());
    assert!(Settings::default().check_node_labels);
    let err = |v: Value| parse_settings::<Topology>(&v).unwrap_err();
    assert_eq!(
        err(json!({"allowedTopologyKeys": []})),
        "invalid topology settings: allowedTopologyKeys: must list at least one label key (leave the setting out to allow every key)"
    );
    assert_eq!(
        err(json!({"allowedTopologyKeys": ["zone", "-rack"]})),
        format!(
            "invalid topology settings: allowedTopologyKeys[1]: \"-rack\" is not a valid label key: {QUALIFIED_NAME_MSG}"
        )
    );
    assert_eq!(
        err(json!({"requireTopologyForMinCountAtLeast": 0})),
        "invalid topology settings: requireTopologyForMinCountAtLeast: must be at least 1, got 0"
    );
    assert!(err(json!({"checkNodeLabel": false})).contains("unknown field `checkNodeLabel`"));
    assert!(err(json!({"checkNodeLabels": "yes"})).contains("checkNodeLabels: invalid type: string \"yes\""));
}

#[test]
fn topology_entries_and_keys() {
    let s = Settings { check_node_labels: false, ..Settings::default() };
    // Past the maximum the list gets one error and no per-entry checks.
    let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
        "schedulingConstraints": {"topology": [{"key": ""}, {"key": "x/"}]}}));
    let (violations, warnings) = run(&s, object, &MemoryCluster::default());
    assert_eq!(
        violations,
        vec!["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item [topology.max-entries]"]
    );
    assert!(warnings.is_empty());
    let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
        "schedulingConstraints": {"topology": [{"key": ""}]}}));
    assert_eq!(
        run(&s, object, &MemoryCluster::default()).0,
        vec!["spec.schedulingConstraints.topology[0].key: Required value [topology.key]"]
    );
    let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
        "schedulingConstraints": {"topology": [{"key": "x/"}]}}));
    let (violations, warnings) = run(&s, object, &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![
            "spec.schedulingConstraints.topology[0].key: Invalid value: \"x/\": name part must be non-empty [topology.key]"
                .to_string(),
            format!("spec.schedulingConstraints.topology[0].key: Invalid value: \"x/\": {QUALIFIED_NAME_MSG} [topology.key]"),
        ]
    );
    assert!(warnings.is_empty());
    // An empty constraint is fine (T-04).
    let empty = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "schedulingConstraints": {}}));
    assert_eq!(run(&s, empty, &MemoryCluster::default()), (vec![], vec![]));
}

#[test]
fn workload_templates_report_their_own_paths() {
    let s = Settings { check_node_labels: false, ..Settings::default() };
    let w = json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
        "spec": {"podGroupTemplates": [
            {"name": "a", "schedulingPolicy": {"gang": {"minCount": 2}}, "schedulingConstraints": {"topology": [{"key": "zone"}]}},
            {"name": "b", "schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": "Bad Key"}]}}]}});
    let (violations, warnings) = run(&s, w, &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![format!(
            "spec.podGroupTemplates[1].schedulingConstraints.topology[0].key: Invalid value: \"Bad Key\": {QUALIFIED_NAME_MSG} [topology.key]"
        )]
    );
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("spec.podGroupTemplates[1].schedulingConstraints.topology: with a basic schedulingPolicy the scheduler checks the topology only against the pods it has seen so far"), "{warnings:?}");
    assert!(warnings[0].ends_with("[topology.basic-policy]"));
}

#[test]
fn preemption_expectations_warn() {
    let s = Settings { check_node_labels: false, ..Settings::default() };
    let object = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
        "schedulingConstraints": {"topology": [{"key": "zone"}]},
        "priorityClassName": "high", "priority": 1000, "disruptionMode": "PodGroup"}));
    let (violations, warnings) = run(&s, object, &MemoryCluster::default());
    assert!(violations.is_empty());
    assert_eq!(
        warnings,
        vec![
            "spec.schedulingConstraints.topology: is combined with priorityClassName \"high\" and priority 1000 and disruptionMode \"PodGroup\", but Kubernetes 1.36 does not run workload-aware preemption for pod groups with scheduling constraints (\"workload aware preemption is not supported for pod groups with scheduling constraints\"), so the scheduler will not preempt other pods to make room for this group [topology.preemption]"
        ]
    );
    // The defaults (disruptionMode Pod, priority 0, no class) promise nothing.
    let defaults = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}},
        "schedulingConstraints": {"topology": [{"key": "zone"}]}, "priority": 0, "disruptionMode": "Pod", "priorityClassName": ""}));
    assert_eq!(run(&s, defaults, &MemoryCluster::default()), (vec![], vec![]));
    // Without topology nothing is said.
    let plain = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "high"}));
    assert_eq!(run(&s, plain, &MemoryCluster::default()), (vec![], vec![]));
}

#[test]
fn settings_allow_and_require_keys() {
    let s = settings(
        json!({"allowedTopologyKeys": ["zone", "rack"], "requireTopologyForMinCountAtLeast": 4, "checkNodeLabels": false}),
    );
    let (violations, _) = run(&s, gang_with_key(2, "block"), &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![
            "spec.schedulingConstraints.topology[0].key: Unsupported value: \"block\": supported values: \"zone\", \"rack\" [topology.allowed-keys]"
        ]
    );
    let big = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 4}}}));
    let (violations, _) = run(&s, big, &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![
            "spec.schedulingConstraints.topology: Required value: gangs with minCount 4 or more must be kept in one topology domain (settings.requireTopologyForMinCountAtLeast), and this one has minCount 4 [topology.require-topology]"
        ]
    );
    let small = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 3}}}));
    assert_eq!(run(&s, small, &MemoryCluster::default()), (vec![], vec![]));
    let basic = pod_group(json!({"schedulingPolicy": {"basic": {}}}));
    assert_eq!(run(&s, basic, &MemoryCluster::default()), (vec![], vec![]));
    assert_eq!(run(&s, gang_with_key(8, "rack"), &MemoryCluster::default()), (vec![], vec![]));
}

#[test]
fn keys_must_be_on_some_node() {
    let s = Settings::default();
    let (violations, warnings) = run(&s, gang_with_key(2, "topology.example.com/block"), &nodes());
    assert_eq!(
        violations,
        vec![
            "spec.schedulingConstraints.topology[0].key: Invalid value: \"topology.example.com/block\": no node carries the label \"topology.example.com/block\" (checked 4 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]"
        ]
    );
    assert!(warnings.is_empty());
    let (violations, _) = run(&s, gang_with_key(2, "rack"), &MemoryCluster::new(vec![node("n1", json!({}))]));
    assert!(violations[0].contains("(checked 1 node)"), "{violations:?}");
    assert_eq!(run(&s, gang_with_key(3, "rack"), &nodes()), (vec![], vec![]));
}

#[test]
fn gangs_larger_than_every_domain_warn() {
    let (violations, warnings) = run(&Settings::default(), gang_with_key(4, "rack"), &nodes());
    assert!(violations.is_empty());
    assert_eq!(
        warnings,
        vec![
            "spec.schedulingPolicy.gang.minCount: 4 is larger than the largest \"rack\" domain (3 nodes): the 4 nodes carrying the label form 2 distinct domains, so the gang can never fit with one pod per node [topology.domain-size]"
        ]
    );
    // One zone of four nodes holds it.
    assert_eq!(run(&Settings::default(), gang_with_key(4, "zone"), &nodes()), (vec![], vec![]));
}

#[test]
fn lookups_fail_open_or_closed() {
    let failing = MemoryCluster::failing("connection refused");
    let (violations, warnings) = run(&Settings::default(), gang_with_key(2, "rack"), &failing);
    assert!(violations.is_empty());
    assert_eq!(
        warnings,
        vec![
            "spec.schedulingConstraints.topology[0].key: cannot look up Nodes: connection refused; the check was skipped [topology.key-on-nodes]"
        ]
    );
    let closed = Settings { fail_on_lookup_error: true, ..Settings::default() };
    let (violations, _) = run(&closed, gang_with_key(2, "rack"), &failing);
    assert_eq!(
        violations,
        vec![
            "spec.schedulingConstraints.topology[0].key: Internal error: cannot look up Nodes: connection refused [topology.key-on-nodes]"
        ]
    );
    // No key, no lookup: a failing cluster is never asked.
    let plain = pod_group(json!({"schedulingPolicy": {"gang": {"minCount": 2}}}));
    assert_eq!(run(&closed, plain, &failing), (vec![], vec![]));
}

#[test]
fn pod_group_updates() {
    let old = gang_with_key(2, "rack");
    let changed = gang_with_key(2, "zone");
    let v = Topology::check(&Settings::default(), &review("UPDATE", changed, old.clone()), &nodes());
    assert_eq!(
        v.message().unwrap(),
        r#"spec.schedulingConstraints: Invalid value: {"topology":[{"key":"zone"}]}: field is immutable [topology.immutable]"#
    );
    // Unchanged: not rechecked, even though no node carries the key any more.
    let mut relabelled = old.clone();
    relabelled["metadata"]["labels"] = json!({"a": "b"});
    let v = Topology::check(
        &Settings::default(),
        &review("UPDATE", relabelled, old),
        &MemoryCluster::failing("must not be called"),
    );
    assert_eq!(v, Verdict::default());
}

fn job(annotations: Value, replicas: Value) -> Value {
    json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {
        "Worker": {"replicas": replicas, "template": {"metadata": {"annotations": annotations},
            "spec": {"containers": [{"name": "pytorch", "image": "i"}]}}}}}})
}

const ANN: &str = "spec.pytorchReplicaSpecs[Worker].template.metadata.annotations";

#[test]
fn kueue_annotations() {
    let s = Settings { check_node_labels: false, ..Settings::default() };
    let one_of = job(json!({KUEUE_REQUIRED: "rack", KUEUE_PREFERRED: "rack", KUEUE_UNCONSTRAINED: "maybe"}), json!(2));
    let (violations, _) = run(&s, one_of, &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![
            format!(
                "{ANN}: Invalid value: must not contain more than one topology annotation: [\"kueue.x-k8s.io/podset-required-topology\", \"kueue.x-k8s.io/podset-preferred-topology\", \"kueue.x-k8s.io/podset-unconstrained-topology\"] [topology.kueue-one-of]"
            ),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-unconstrained-topology]: Invalid value: \"maybe\": must be a boolean value [topology.kueue-value]"
            ),
        ]
    );
    let bad_level = job(json!({KUEUE_PREFERRED: "", KUEUE_UNCONSTRAINED: "True"}), json!(2));
    let (violations, _) = run(&s, bad_level, &MemoryCluster::default());
    assert_eq!(violations.len(), 3, "{violations:?}");
    assert_eq!(
        violations[1],
        format!(
            "{ANN}[kueue.x-k8s.io/podset-preferred-topology]: Invalid value: \"\": name part must be non-empty [topology.kueue-value]"
        )
    );
}

#[test]
fn kueue_slices() {
    let s = Settings { check_node_labels: false, ..Settings::default() };
    let cases = [
        (
            json!({KUEUE_REQUIRED: "block", KUEUE_SLICE_REQUIRED: "rack"}),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-slice-size]: Required value: must be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified [topology.kueue-slice]"
            ),
        ),
        (
            json!({KUEUE_SLICE_SIZE: "2"}),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-slice-size]: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not specified [topology.kueue-slice]"
            ),
        ),
        (
            json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "two"}),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"two\": must be a numeric value [topology.kueue-slice]"
            ),
        ),
        (
            json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "0"}),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"0\": must be greater than or equal to 1 [topology.kueue-slice]"
            ),
        ),
        (
            json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "5"}),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"5\": must not be greater than pod set count 4 [topology.kueue-slice]"
            ),
        ),
        (
            json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "2147483648"}),
            format!(
                "{ANN}[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"2147483648\": must be a numeric value [topology.kueue-slice]"
            ),
        ),
    ];
    for (annotations, want) in cases {
        let (violations, _) = run(&s, job(annotations.clone(), json!(4)), &MemoryCluster::default());
        assert_eq!(violations, vec![want], "{annotations}");
    }
    let ok = job(json!({KUEUE_REQUIRED: "block", KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "+4"}), json!(4));
    assert_eq!(run(&s, ok, &MemoryCluster::default()), (vec![], vec![]));
    // Unset replicas count as 1 pod, as Kueue counts them.
    let (violations, _) = run(
        &s,
        job(json!({KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "2"}), Value::Null),
        &MemoryCluster::default(),
    );
    assert!(violations[0].ends_with("must not be greater than pod set count 1 [topology.kueue-slice]"));
}

fn two_replica_job(master: Value, worker: Value, worker_replicas: i32) -> Value {
    let tpl =
        |a: Value| json!({"metadata": {"annotations": a}, "spec": {"containers": [{"name": "pytorch", "image": "i"}]}});
    json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": tpl(master)},
        "Worker": {"replicas": worker_replicas, "template": tpl(worker)}}}})
}

#[test]
fn kueue_groups() {
    let s = Settings { check_node_labels: false, ..Settings::default() };
    let m = "spec.pytorchReplicaSpecs[Master].template.metadata.annotations";
    let grouped = |level: &str| json!({KUEUE_REQUIRED: level, KUEUE_GROUP_NAME: "g"});
    assert_eq!(
        run(&s, two_replica_job(grouped("rack"), grouped("rack"), 4), &MemoryCluster::default()),
        (vec![], vec![])
    );
    let (violations, _) = run(&s, two_replica_job(grouped("rack"), grouped("block"), 4), &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![
            format!(
                "{m}: Invalid value: must specify 'kueue.x-k8s.io/podset-required-topology' or 'kueue.x-k8s.io/podset-preferred-topology' topology consistent with '{ANN}' in group 'g' [topology.kueue-group]"
            ),
            format!(
                "{ANN}: Invalid value: must specify 'kueue.x-k8s.io/podset-required-topology' or 'kueue.x-k8s.io/podset-preferred-topology' topology consistent with '{m}' in group 'g' [topology.kueue-group]"
            ),
        ]
    );
    let mut two_big = two_replica_job(grouped("rack"), grouped("rack"), 4);
    two_big["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!(2);
    let (violations, _) = run(&s, two_big, &MemoryCluster::default());
    assert_eq!(violations.len(), 2);
    assert_eq!(
        violations[0],
        format!(
            "{m}[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can only define groups where at least one pod set has only 1 replica, got: 2 replica(s) and 4 replica(s) in the group [topology.kueue-group]"
        )
    );
    let (violations, _) = run(&s, two_replica_job(grouped("rack"), json!({}), 4), &MemoryCluster::default());
    assert_eq!(
        violations,
        vec![format!(
            "{m}[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can only define groups of exactly 2 pod sets, got: 1 pod set(s) [topology.kueue-group]"
        )]
    );
    let lone = json!({KUEUE_GROUP_NAME: "42", KUEUE_SLICE_REQUIRED: "rack", KUEUE_SLICE_SIZE: "1"});
    let (violations, _) = run(&s, two_replica_job(json!({}), lone, 4), &MemoryCluster::default());
    let g = format!("{ANN}[kueue.x-k8s.io/podset-group-name]");
    assert_eq!(
        violations,
        vec![
            format!("{g}: Invalid value: \"42\": must not be a number [topology.kueue-group]"),
            format!(
                "{g}: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-size' is specified [topology.kueue-group]"
            ),
            format!(
                "{g}: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified [topology.kueue-group]"
            ),
            format!(
                "{g}: Forbidden: may not be set when neither 'kueue.x-k8s.io/podset-preferred-topology' nor 'kueue.x-k8s.io/podset-required-topology' is specified [topology.kueue-group]"
            ),
        ]
    );
}

#[test]
fn kueue_levels_are_allowed_and_on_nodes() {
    let s = settings(json!({"allowedTopologyKeys": ["rack"]}));
    let (violations, _) = run(&s, job(json!({KUEUE_REQUIRED: "zone"}), json!(2)), &nodes());
    assert_eq!(
        violations,
        vec![format!(
            "{ANN}[kueue.x-k8s.io/podset-required-topology]: Unsupported value: \"zone\": supported values: \"rack\" [topology.allowed-keys]"
        )]
    );
    let (violations, warnings) = run(&Settings::default(), job(json!({KUEUE_PREFERRED: "block"}), json!(8)), &nodes());
    assert_eq!(
        violations,
        vec![format!(
            "{ANN}[kueue.x-k8s.io/podset-preferred-topology]: Invalid value: \"block\": no node carries the label \"block\" (checked 4 nodes), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled [topology.key-on-nodes]"
        )]
    );
    assert!(warnings.is_empty(), "Kueue pod sets have no minCount: {warnings:?}");
    // A level the job already had is not looked up again on update.
    let old = job(json!({KUEUE_PREFERRED: "block"}), json!(8));
    let new = job(json!({KUEUE_PREFERRED: "block"}), json!(4));
    let v = Topology::check(&Settings::default(), &review("UPDATE", new, old), &MemoryCluster::failing("not called"));
    assert_eq!(v, Verdict::default());
}

#[test]
fn other_kinds_are_left_alone() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}});
    assert_eq!(run(&Settings::default(), pod, &MemoryCluster::failing("not called")), (vec![], vec![]));
    assert!(is_go_bool("F") && is_go_bool("1") && !is_go_bool("yes") && !is_go_bool(""));
}

/// A Job of `parallelism` pods, each naming the claim templates `templates`.
fn job_with_claims(templates: &[&str]) -> Value {
    let claims: Vec<Value> = templates
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"name": format!("c{i}"), "resourceClaimTemplateName": t}))
        .collect();
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "resourceClaims": claims,
            "containers": [{"name": "t", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}}})
}

fn claim_template(name: &str, requests: Value) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": "ml"},
        "spec": {"spec": {"devices": {"requests": requests}}}})
}

fn gpus(class: &str, count: u64) -> Value {
    json!([{"name": "gpus", "exactly": {"deviceClassName": class, "count": count}}])
}

fn device_class(name: &str, expression: &str) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression}}]}})
}

/// A slice of pool `pool` (generation, slice count) with `devices`, reaching what `reach` says.
fn slice(driver: &str, pool: (&str, i64, u64), reach: Value, devices: Vec<Value>) -> Value {
    let mut spec = json!({"driver": driver, "pool": {"name": pool.0, "generation": pool.1, "resourceSliceCount": pool.2},
        "devices": devices});
    spec.as_object_mut().unwrap().extend(reach.as_object().unwrap().clone());
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": format!("{}-{}", pool.0, pool.1)},
        "spec": spec})
}

fn gpu_device(i: usize, product: &str, kind: &str) -> Value {
    json!({"name": format!("gpu-{i}"), "attributes": {"type": {"string": kind}, "productName": {"string": product}},
        "capacity": {"memory": {"value": "80Gi"}}})
}

const GPU_CLASS: &str = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
const MIG_CLASS: &str = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";

/// Four nodes of 8 GPUs each, published by NVIDIA's DRA driver: rack r1 H100, rack r2 H200.
fn gpu_cluster(extra: Vec<Value>) -> MemoryCluster {
    let mut objects = vec![device_class("gpu.nvidia.com", GPU_CLASS), device_class("mig.nvidia.com", MIG_CLASS)];
    for (i, (rack, product)) in [("r1", "H100"), ("r1", "H100"), ("r2", "H200"), ("r2", "H200")].into_iter().enumerate()
    {
        let name = format!("n{i}");
        objects.push(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"rack": rack}},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}));
        let devices = (0..8).map(|d| gpu_device(d, product, "gpu")).collect();
        objects.push(slice("gpu.nvidia.com", (&name, 1, 1), json!({"nodeName": name}), devices));
    }
    objects.extend(extra);
    MemoryCluster::new(objects)
}

fn warn_settings() -> Settings {
    settings(json!({"capacityCheck": "warn"}))
}

#[test]
fn dra_claims_are_counted_against_the_devices_each_node_offers() {
    let s = warn_settings();
    let fits = gpu_cluster(vec![claim_template("eight", gpus("gpu.nvidia.com", 8))]);
    assert_eq!(run(&s, job_with_claims(&["eight"]), &fits), (vec![], vec![]));
    let sixteen = gpu_cluster(vec![claim_template("sixteen", gpus("gpu.nvidia.com", 16))]);
    let (_, warnings) = run(&s, job_with_claims(&["sixteen"]), &sixteen);
    assert_eq!(
        warnings,
        [
            r#"spec.template.spec.resourceClaims[0]: no node can ever run this pod: in its claim from ResourceClaimTemplate "sixteen", request "gpus" asks for 16 devices of DeviceClass "gpu.nvidia.com" (8 at most) on any of the 4 nodes it may use, counting the devices of the ResourceSlices that reach each node (checked 4 nodes and 4 ResourceSlices) [topology.pod-fits]"#
        ]
    );
    // Two claims of 8 GPUs each: every node has 8.
    let (_, warnings) = run(&s, job_with_claims(&["eight", "eight"]), &fits);
    assert_eq!(
        warnings,
        [
            "spec.template.spec.resourceClaims: no node can ever run this pod: each request of its claims has enough matching devices somewhere, but no node it may use has them all at once (checked 4 nodes and 4 ResourceSlices) [topology.pod-fits]"
        ]
    );
    // A product no device has; the pod's own placement narrows the nodes.
    let b200 = json!([{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com",
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'B200'"}}]}}]);
    let cluster = gpu_cluster(vec![claim_template("b200", b200)]);
    let (_, warnings) = run(&s, job_with_claims(&["b200"]), &cluster);
    assert!(
        warnings[0].contains(r#"request "gpus" asks for 1 device of DeviceClass "gpu.nvidia.com" (0 at most)"#),
        "{warnings:?}"
    );
    let h200 = json!([{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8,
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'H200'"}}]}}]);
    let cluster = gpu_cluster(vec![claim_template("h200", h200)]);
    let mut on_r1 = job_with_claims(&["h200"]);
    assert_eq!(run(&s, on_r1.clone(), &cluster), (vec![], vec![]));
    on_r1["spec"]["template"]["spec"]["nodeSelector"] = json!({"rack": "r1"});
    let (_, warnings) = run(&s, on_r1, &cluster);
    assert!(warnings[0].contains("(0 at most) on any of the 2 nodes it may use"), "{warnings:?}");
    // Denied with capacityCheck: deny.
    let (violations, _) = run(&settings(json!({"capacityCheck": "deny"})), job_with_claims(&["sixteen"]), &sixteen);
    assert_eq!(violations.len(), 1);
    assert!(
        violations[0].starts_with(r#"spec.template.spec.resourceClaims[0]: Invalid value: "sixteen": no node can ever run this pod: in its claim from ResourceClaimTemplate "sixteen", request "gpus""#),
        "{violations:?}"
    );
}

#[test]
fn dra_supply_is_never_under_counted() {
    let s = warn_settings();
    let quiet = (vec![], vec![]);
    // A MIG node: the mig class matches only its MIG devices.
    let mig_devices = (0..7).map(|d| gpu_device(d, "H100", "mig")).collect();
    let mig = slice("gpu.nvidia.com", ("n0-mig", 1, 1), json!({"nodeName": "n0"}), mig_devices);
    let cluster = gpu_cluster(vec![mig, claim_template("migs", gpus("mig.nvidia.com", 7))]);
    assert_eq!(run(&s, job_with_claims(&["migs"]), &cluster), quiet);
    let cluster = gpu_cluster(vec![claim_template("migs", gpus("mig.nvidia.com", 1))]);
    assert!(!run(&s, job_with_claims(&["migs"]), &cluster).1.is_empty(), "no MIG device anywhere");
    // NICs in a pool selected by nodeSelector (rack r2), and one reaching every node.
    let nic = |i: usize| json!({"name": format!("nic-{i}"), "attributes": {"type": {"string": "nic"}}});
    let nics = |reach: Value, pool: &str| slice("nic.example.com", (pool, 1, 1), reach, (0..4).map(nic).collect());
    let selector = json!({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r2"]}]}]}});
    let nic_claim = claim_template("nics", gpus("nic", 4));
    let nic_class = device_class("nic", "device.driver == 'nic.example.com'");
    let both = json!([{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8}},
                      {"name": "nics", "exactly": {"deviceClassName": "nic", "count": 4}}]);
    let cluster = gpu_cluster(vec![
        nics(selector.clone(), "r2-nics"),
        nic_class.clone(),
        nic_claim.clone(),
        claim_template("both", both.clone()),
    ]);
    assert_eq!(run(&s, job_with_claims(&["nics"]), &cluster), quiet);
    assert_eq!(run(&s, job_with_claims(&["both"]), &cluster), quiet);
    let mut on_r1 = job_with_claims(&["nics"]);
    on_r1["spec"]["template"]["spec"]["nodeSelector"] = json!({"rack": "r1"});
    assert!(!run(&s, on_r1.clone(), &cluster).1.is_empty(), "the NIC pool reaches rack r2 only");
    let all = gpu_cluster(vec![nics(json!({"allNodes": true}), "all-nics"), nic_class.clone(), nic_claim.clone()]);
    assert_eq!(run(&s, on_r1.clone(), &all), quiet);
    // An incomplete newer generation beside a complete older one: no limit.
    let newer = slice("nic.example.com", ("r2-nics", 2, 2), selector.clone(), vec![nic(0)]);
    let cluster = gpu_cluster(vec![nics(selector.clone(), "r2-nics"), newer, nic_class.clone(), nic_claim.clone()]);
    assert_eq!(run(&s, on_r1.clone(), &cluster), quiet);
    // A complete newer generation with fewer devices: the older one no longer counts.
    let newer = slice("nic.example.com", ("r2-nics", 2, 1), selector.clone(), vec![nic(0)]);
    let cluster = gpu_cluster(vec![nics(selector, "r2-nics"), newer, nic_class.clone(), nic_claim]);
    let (_, warnings) = run(&s, job_with_claims(&["nics"]), &cluster);
    assert!(warnings[0].contains(r#"4 devices of DeviceClass "nic" (1 at most)"#), "{warnings:?}");
    // Shared devices and admin access are unbounded.
    let shared = json!({"name": "nic-0", "allowMultipleAllocations": true, "attributes": {}});
    let many = claim_template("many", gpus("nic", 30));
    let cluster = gpu_cluster(vec![
        slice("nic.example.com", ("p", 1, 1), json!({"allNodes": true}), vec![shared]),
        nic_class.clone(),
        many,
    ]);
    assert_eq!(run(&s, job_with_claims(&["many"]), &cluster), quiet);
    let admin =
        json!([{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 16, "adminAccess": true}}]);
    let cluster = gpu_cluster(vec![claim_template("admin", admin)]);
    assert_eq!(run(&s, job_with_claims(&["admin"]), &cluster), quiet);
    // firstAvailable: any alternative.
    let first = json!([{"name": "gpus", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 16},
        {"name": "small", "deviceClassName": "gpu.nvidia.com", "count": 4}]}]);
    let cluster = gpu_cluster(vec![claim_template("first", first)]);
    assert_eq!(run(&s, job_with_claims(&["first"]), &cluster), quiet);
    // A class that does not exist, a template that does not exist: no claim.
    let cluster = gpu_cluster(vec![claim_template("ghost", gpus("no-such-class", 16))]);
    assert_eq!(run(&s, job_with_claims(&["ghost", "missing"]), &cluster), quiet);
    // A shared claim already allocated needs no device now.
    let mut allocated = claim_template("shared", gpus("gpu.nvidia.com", 16));
    allocated["kind"] = json!("ResourceClaim");
    allocated["spec"] = allocated["spec"]["spec"].clone();
    let mut job = job_with_claims(&[]);
    job["spec"]["template"]["spec"]["resourceClaims"] = json!([{"name": "c", "resourceClaimName": "shared"}]);
    let (_, warnings) = run(&s, job.clone(), &gpu_cluster(vec![allocated.clone()]));
    assert!(
        warnings[0].contains(r#"in its claim from ResourceClaim "shared", request "gpus" asks for 16"#),
        "{warnings:?}"
    );
    // Two entries naming one ResourceClaim: allocated once, its 8 GPUs counted once.
    let mut eight = claim_template("shared", gpus("gpu.nvidia.com", 8));
    eight["kind"] = json!("ResourceClaim");
    eight["spec"] = eight["spec"]["spec"].clone();
    let mut twice = job_with_claims(&[]);
    twice["spec"]["template"]["spec"]["resourceClaims"] =
        json!([{"name": "a", "resourceClaimName": "shared"}, {"name": "b", "resourceClaimName": "shared"}]);
    assert_eq!(run(&s, twice, &gpu_cluster(vec![eight])), quiet);
    allocated["status"] = json!({"allocation": {"nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}}});
    assert_eq!(run(&s, job, &gpu_cluster(vec![allocated])), quiet);
    // `All` needs one matching device.
    let all_mode = json!([{"name": "gpus", "exactly": {"deviceClassName": "mig.nvidia.com", "allocationMode": "All"}}]);
    let cluster = gpu_cluster(vec![claim_template("all", all_mode)]);
    let (_, warnings) = run(&s, job_with_claims(&["all"]), &cluster);
    assert!(
        warnings[0].contains("all devices of DeviceClass \"mig.nvidia.com\" (at least one) (0 at most)"),
        "{warnings:?}"
    );
}

#[test]
fn dra_lookups_are_fixed_and_fail_open() {
    let s = warn_settings();
    // No slice at all: the driver is not installed yet, nothing is known.
    let mut objects = vec![node("n0", json!({}))];
    objects.push(claim_template("sixteen", gpus("gpu.nvidia.com", 16)));
    assert_eq!(run(&s, job_with_claims(&["sixteen"]), &MemoryCluster::new(objects)), (vec![], vec![]));
    // More than one allocation holds: a proof without any slice.
    let cluster = MemoryCluster::new(vec![node("n0", json!({})), claim_template("forty", gpus("gpu.nvidia.com", 40))]);
    let (_, warnings) = run(&s, job_with_claims(&["forty"]), &cluster);
    assert_eq!(
        warnings,
        [
            r#"spec.template.spec.resourceClaims[0]: no pod can ever be allocated this claim: its requests ask for at least 40 devices, and one allocation holds at most 32 [topology.pod-fits]"#
        ]
    );
    // A failed lookup is a warning, never a finding.
    let (violations, warnings) = run(&s, job_with_claims(&["sixteen"]), &MemoryCluster::failing("boom"));
    assert!(violations.is_empty());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("cannot look up Nodes: boom"), "{warnings:?}");
}

/// Four nodes of 8 GPUs each.
fn eight_gpu_nodes() -> MemoryCluster {
    MemoryCluster::new(
        (0..4)
            .map(|i| {
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("n{i}")},
                    "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}}})
            })
            .collect(),
    )
}

/// A vcjob with `tasks` of (name, replicas, minAvailable, GPUs per pod).
fn vcjob(min_available: Option<i32>, tasks: &[(&str, i32, Option<i32>, u32)]) -> Value {
    let tasks: Vec<Value> = tasks
        .iter()
        .map(|(name, replicas, min, gpus)| {
            let mut task = json!({"name": name, "replicas": replicas, "template": {"spec": {"containers": [
                {"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": gpus.to_string()}}}]}}});
            if let Some(min) = min {
                task["minAvailable"] = json!(min);
            }
            task
        })
        .collect();
    let mut spec = json!({"tasks": tasks});
    if let Some(min) = min_available {
        spec["minAvailable"] = json!(min);
    }
    json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
        "spec": spec})
}

#[test]
fn vcjob_tasks_and_gangs_are_held_to_the_nodes() {
    let (s, cluster) = (warn_settings(), eight_gpu_nodes());
    // Four 8-GPU pods, all needed at once (the defaults): the four nodes hold them.
    assert_eq!(run(&s, vcjob(None, &[("worker", 4, None, 8)]), &cluster), (vec![], vec![]));
    // Five: no.
    let (_, warnings) = run(&s, vcjob(None, &[("worker", 5, None, 8)]), &cluster);
    assert_eq!(
        warnings,
        [
            "spec.minAvailable: the gang of 5 pods can never run at once: each worker pod asks 8 nvidia.com/gpu, and the cluster's 4 nodes hold at most 4 of them, even when empty [topology.gang-fits]"
        ]
    );
    // A job minimum of 4 of the 5: fits.
    assert_eq!(run(&s, vcjob(Some(4), &[("worker", 5, Some(4), 8)]), &cluster), (vec![], vec![]));
    // A pod no node holds.
    let (_, warnings) = run(&s, vcjob(Some(1), &[("big", 1, None, 16)]), &cluster);
    assert_eq!(
        warnings,
        [
            "spec.tasks[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: no node can ever run this big pod: one big pod asks 16 nvidia.com/gpu, and the largest of the 4 eligible nodes has 8 allocatable [topology.pod-fits]"
        ]
    );
    // A task's own minimum counts when the job's minimum covers the tasks' sum: five 8-GPU
    // workers at once, whatever the cheap launchers do.
    let tasks = [("launcher", 4, Some(0), 0), ("worker", 6, Some(5), 8)];
    let (_, warnings) = run(&s, vcjob(Some(5), &tasks), &cluster);
    assert_eq!(
        warnings,
        [
            "spec.tasks[1].minAvailable: the task's minimum of 5 pods can never run at once: each worker pod asks 8 nvidia.com/gpu, and the cluster's 4 nodes hold at most 4 of them, even when empty [topology.gang-fits]"
        ]
    );
    // Not when the job's minimum is below the sum: Volcano then takes any 5 pods.
    let tasks = [("launcher", 4, Some(1), 0), ("worker", 6, Some(5), 8)];
    assert_eq!(run(&s, vcjob(Some(5), &tasks), &cluster), (vec![], vec![]));
    // Launchers that ask nothing may fill the gang: no claim about the job's gang.
    let tasks = [("launcher", 4, Some(0), 0), ("worker", 6, Some(4), 8)];
    assert_eq!(run(&s, vcjob(Some(8), &tasks), &cluster), (vec![], vec![]));
    // Denied with capacityCheck: deny.
    let (violations, _) = run(&settings(json!({"capacityCheck": "deny"})), vcjob(None, &[("w", 5, None, 8)]), &cluster);
    assert_eq!(violations.len(), 1, "{violations:?}");
    // An update that changes no count is not checked again; one that scales up is.
    let old = vcjob(Some(5), &[("worker", 5, None, 8)]);
    let mut priority = old.clone();
    priority["spec"]["priorityClassName"] = json!("high");
    let v = Topology::check(&s, &review("UPDATE", priority, old.clone()), &cluster);
    assert!(v.warnings.is_empty(), "{:?}", v.warning_messages());
    let v = Topology::check(&s, &review("UPDATE", vcjob(Some(6), &[("worker", 6, None, 8)]), old), &cluster);
    assert_eq!(v.warnings.len(), 1, "{:?}", v.warning_messages());
}

fn volcano_pod_group(min_resources: Value) -> Value {
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ml"},
        "spec": {"minMember": 4, "minResources": min_resources}})
}

#[test]
fn a_volcano_pod_group_asks_no_more_than_the_whole_cluster() {
    let (s, cluster) = (warn_settings(), eight_gpu_nodes());
    // The cluster's whole allocatable, spread over nodes: Volcano's enqueue takes it.
    let fits = volcano_pod_group(json!({"nvidia.com/gpu": "32", "cpu": "256", "memory": "2Ti", "pods": 1000}));
    assert_eq!(run(&s, fits, &cluster), (vec![], vec![]));
    let (_, warnings) = run(&s, volcano_pod_group(json!({"nvidia.com/gpu": 33, "cpu": "256001m"})), &cluster);
    assert_eq!(
        warnings,
        [
            "spec.minResources[cpu]: the PodGroup asks 256001m cpu at once, and the cluster's 4 nodes have 256 allocatable in all, even when empty: Volcano's enqueue action never admits it [topology.gang-fits]",
            "spec.minResources[nvidia.com/gpu]: the PodGroup asks 33 nvidia.com/gpu at once, and the cluster's 4 nodes have 32 allocatable in all, even when empty: Volcano's enqueue action never admits it [topology.gang-fits]",
        ]
    );
    // A node whose allocatable is unknown may hold anything.
    let mut objects: Vec<Value> = (0..4)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("n{i}")},
            "status": {"allocatable": {"nvidia.com/gpu": "8"}}})
        })
        .collect();
    objects.push(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "new"}}));
    let unknown = MemoryCluster::new(objects);
    assert_eq!(run(&s, volcano_pod_group(json!({"nvidia.com/gpu": 33})), &unknown), (vec![], vec![]));
    // A PodGroup a controller made: its job was checked.
    let mut made = volcano_pod_group(json!({"nvidia.com/gpu": 64}));
    made["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j",
        "uid": "u", "controller": true}]);
    assert_eq!(run(&s, made, &cluster), (vec![], vec![]));
    // An update that leaves minResources alone is not checked again.
    let big = volcano_pod_group(json!({"nvidia.com/gpu": 64}));
    let v = Topology::check(&s, &review("UPDATE", big.clone(), big), &cluster);
    assert!(v.warnings.is_empty(), "{:?}", v.warning_messages());
}

fn volcano_queue(name: &str, state: Option<&str>, capability: Value) -> Value {
    let mut q = json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
        "spec": {"weight": 1, "capability": capability}});
    if let Some(state) = state {
        q["status"] = json!({"state": state});
    }
    q
}

fn queue_cluster(queues: Vec<Value>) -> MemoryCluster {
    MemoryCluster::new(queues)
}

#[test]
fn volcano_queues_exist_are_open_and_can_hold_the_gang() {
    let s = Settings { capacity_check: CapacityCheck::Off, ..Settings::default() };
    let mut job = vcjob(Some(3), &[("worker", 3, None, 8)]);
    job["spec"]["queue"] = json!("research");
    let open = |cap: Value| queue_cluster(vec![volcano_queue("research", Some("Open"), cap)]);
    // 24 GPUs within a capability of 24: no word; cpu and memory at 0 are no limit.
    assert_eq!(
        run(&s, job.clone(), &open(json!({"nvidia.com/gpu": 24, "cpu": "0", "memory": "-1"}))),
        (vec![], vec![])
    );
    let (_, warnings) = run(&s, job.clone(), &open(json!({"nvidia.com/gpu": "16"})));
    assert_eq!(
        warnings,
        [
            "spec.queue: the job's gang asks at least 24 nvidia.com/gpu at once, and Volcano Queue \"research\" has a capability of 16: its enqueue action keeps the PodGroup Pending (\"queue resource quota insufficient\") however long it waits [topology.volcano-queue-capability]"
        ]
    );
    // A Queue that is Closed, or has no state yet.
    let (_, warnings) =
        run(&s, job.clone(), &queue_cluster(vec![volcano_queue("research", Some("Closed"), json!({}))]));
    assert_eq!(
        warnings,
        [
            "spec.queue: Volcano Queue \"research\" is \"Closed\", and Volcano admits jobs only to queues in state Open (\"can only submit job to queue with state `Open`\"), so it stays Pending [topology.volcano-queue]"
        ]
    );
    // No such Queue.
    let (_, warnings) = run(&s, job.clone(), &queue_cluster(vec![volcano_queue("default", Some("Open"), json!({}))]));
    assert_eq!(
        warnings,
        [
            "spec.queue: Volcano Queue \"research\" does not exist: Volcano refuses the job (unable to find job queue: queue.scheduling.volcano.sh \"research\" not found), and its scheduler ignores a PodGroup whose queue does not exist, so it stays Pending [topology.volcano-queue]"
        ]
    );
    // No Volcano API (nothing listed): no word; queueCheck off: no list.
    assert_eq!(run(&s, job.clone(), &MemoryCluster::new(vec![])), (vec![], vec![]));
    let off = Settings { queue_check: CapacityCheck::Off, ..s.clone() };
    assert_eq!(run(&off, job.clone(), &MemoryCluster::failing("not called")), (vec![], vec![]));
    // A failed lookup is a warning, never a finding.
    let (_, warnings) = run(&s, job.clone(), &MemoryCluster::failing("connection refused"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("spec.queue: cannot look up Volcano Queues: "), "{warnings:?}");
    // The least minResources: any 2 of the 3 pods when the job minimum is below the tasks'.
    let mut two = vcjob(Some(2), &[("a", 2, Some(2), 8), ("b", 1, Some(1), 1)]);
    two["spec"]["queue"] = json!("research");
    assert_eq!(run(&s, two.clone(), &open(json!({"nvidia.com/gpu": 9}))), (vec![], vec![]));
    // With a job minimum covering the tasks', each task's own minimum counts.
    let mut three = vcjob(Some(3), &[("a", 2, Some(2), 8), ("b", 1, Some(1), 1)]);
    three["spec"]["queue"] = json!("research");
    assert_eq!(run(&s, three, &open(json!({"nvidia.com/gpu": 16}))).1.len(), 1);
}

#[test]
fn volcano_pod_groups_and_kubeflow_jobs_name_their_queue() {
    let s = Settings { capacity_check: CapacityCheck::Off, ..Settings::default() };
    let queues = queue_cluster(vec![volcano_queue("default", Some("Open"), json!({"nvidia.com/gpu": 16}))]);
    // A PodGroup's minResources, in the default queue.
    let (_, warnings) = run(&s, volcano_pod_group(json!({"nvidia.com/gpu": 24})), &queues);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("at least 24 nvidia.com/gpu"), "{warnings:?}");
    assert_eq!(run(&s, volcano_pod_group(json!({"nvidia.com/gpu": 16})), &queues), (vec![], vec![]));
    // A PyTorchJob whose templates name Volcano's scheduler: its minAvailable pods' requests.
    let template = |gpus: u32| {
        json!({"spec": {"schedulerName": "volcano", "containers": [{"name": "pytorch", "image": "i",
            "resources": {"limits": {"nvidia.com/gpu": gpus.to_string()}}}]}})
    };
    let pytorch = |queue: &str, min: i32| {
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p", "namespace": "ml"},
            "spec": {"runPolicy": {"schedulingPolicy": {"queue": queue, "minAvailable": min}},
                "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template(8)},
                    "Worker": {"replicas": 3, "template": template(8)}}}})
    };
    assert_eq!(run(&s, pytorch("default", 2), &queues), (vec![], vec![]));
    let (_, warnings) = run(&s, pytorch("default", 3), &queues);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("spec.runPolicy.schedulingPolicy.queue: the job's gang asks at least 24"),
        "{warnings:?}"
    );
    let (_, warnings) = run(&s, pytorch("nightly", 1), &queues);
    assert!(warnings[0].contains("Volcano Queue \"nightly\" does not exist"), "{warnings:?}");
    // Not Volcano's: no lookup.
    let mut other = pytorch("nightly", 1);
    other["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["schedulerName"] = json!("default-scheduler");
    other["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] = json!("default-scheduler");
    assert_eq!(run(&s, other, &MemoryCluster::failing("not called")), (vec![], vec![]));
}

/// `job` made a gang of `parallelism` pods, all at once (`minCount`), in one rack when `rack`.
fn gang_job(mut job: Value, parallelism: u64, rack: bool) -> Value {
    job["spec"]["parallelism"] = json!(parallelism);
    job["spec"]["scheduling"] = json!({"schedulingPolicy": {"gang": {"minCount": parallelism}}});
    if rack {
        job["spec"]["scheduling"]["schedulingConstraints"] = json!({"topology": [{"key": "rack"}]});
    }
    job
}

fn resource_claim(name: &str, requests: Value) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": requests}}})
}

#[test]
fn dra_gangs_count_each_pods_own_devices() {
    let s = warn_settings();
    let quiet = (vec![], vec![]);
    let eight = gpu_cluster(vec![claim_template("eight", gpus("gpu.nvidia.com", 8))]);
    // Five pods of 8 GPUs each, on four nodes of 8: one pod per node.
    let (_, warnings) = run(&s, gang_job(job_with_claims(&["eight"]), 5, false), &eight);
    assert_eq!(
        warnings,
        [
            r#"spec.scheduling.schedulingPolicy.gang.minCount: the gang of 5 pods can never run at once: each pod asks 1 cpu and 8 devices of DeviceClass "gpu.nvidia.com", and the cluster's 4 nodes hold at most 4 of them, even when empty, counting the devices of the ResourceSlices that reach each node [topology.gang-fits]"#
        ]
    );
    assert_eq!(run(&s, gang_job(job_with_claims(&["eight"]), 4, false), &eight), quiet);
    // In one rack: two nodes, two pods.
    let (_, warnings) = run(&s, gang_job(job_with_claims(&["eight"]), 3, true), &eight);
    assert!(
        warnings[0].contains(r#"in one "rack" domain: each pod asks 1 cpu and 8 devices of DeviceClass "gpu.nvidia.com", and the largest domain, "r1" (2 nodes), holds at most 2 of them"#),
        "{warnings:?}"
    );
    assert_eq!(run(&s, gang_job(job_with_claims(&["eight"]), 2, true), &eight), quiet);
    // Four GPUs each: two pods to a node.
    let four = gpu_cluster(vec![claim_template("four", gpus("gpu.nvidia.com", 4))]);
    assert_eq!(run(&s, gang_job(job_with_claims(&["four"]), 8, false), &four), quiet);
    assert_eq!(run(&s, gang_job(job_with_claims(&["four"]), 9, false), &four).1.len(), 1);
    // A group claim (a pod entry identical to the Job's `spec.scheduling` claim) is allocated
    // once for the gang: five pods share its 8 GPUs on one node.
    let mut grouped = gang_job(job_with_claims(&["eight"]), 5, false);
    grouped["spec"]["scheduling"]["resourceClaims"] = json!([{"name": "c0", "resourceClaimTemplateName": "eight"}]);
    assert_eq!(run(&s, grouped.clone(), &eight), quiet);
    // ... but those GPUs are node-local: every pod on one node, and one node holds one pod of
    // 64 CPUs.
    grouped["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    let (_, warnings) = run(&s, grouped, &eight);
    assert_eq!(
        warnings,
        [
            r#"spec.scheduling.schedulingPolicy.gang.minCount: the gang of 5 pods can never run at once: each pod asks 64 cpu; they share ResourceClaimTemplate "eight", whose every matching device is local to one node, so they must all run on one node, and the cluster's 4 nodes hold at most 1 of them, even when empty, counting the devices of the ResourceSlices that reach each node [topology.gang-fits]"#
        ]
    );
    // A ResourceClaim named by every pod: the same. NICs that reach every node: no pin.
    let nic_class = device_class("nic", "device.driver == 'nic.example.com'");
    let nics = (0..2).map(|i| json!({"name": format!("nic-{i}"), "attributes": {}})).collect();
    let all_nodes = slice("nic.example.com", ("fabric", 1, 1), json!({"allNodes": true}), nics);
    let mut shared = gang_job(job_with_claims(&[]), 4, false);
    shared["spec"]["template"]["spec"]["resourceClaims"] = json!([{"name": "c", "resourceClaimName": "link"}]);
    shared["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    let cluster = gpu_cluster(vec![all_nodes, nic_class.clone(), resource_claim("link", gpus("nic", 2))]);
    assert_eq!(run(&s, shared.clone(), &cluster), quiet);
    let cluster = gpu_cluster(vec![resource_claim("link", gpus("gpu.nvidia.com", 1))]);
    let (_, warnings) = run(&s, shared, &cluster);
    assert!(
        warnings[0].contains(r#"they share ResourceClaim "link", whose every matching device is local to one node"#),
        "{warnings:?}"
    );
    // NICs shared by many claims (allowMultipleAllocations): no limit on the pods per node.
    let shared_nic = json!({"name": "nic-0", "allowMultipleAllocations": true, "attributes": {}});
    let cluster = gpu_cluster(vec![
        slice("nic.example.com", ("n0-nics", 1, 1), json!({"nodeName": "n0"}), vec![shared_nic]),
        nic_class,
        claim_template("nic", gpus("nic", 1)),
    ]);
    let mut on_n0 = gang_job(job_with_claims(&["nic"]), 50, false);
    on_n0["spec"]["template"]["spec"]["nodeSelector"] = json!({"rack": "r1"});
    assert_eq!(run(&s, on_n0, &cluster), quiet);
    // A MIG node: seven MIG devices serve seven pods of one each, not eight.
    let mig_devices = (0..7).map(|d| gpu_device(d, "H100", "mig")).collect();
    let mig = slice("gpu.nvidia.com", ("n0-mig", 1, 1), json!({"nodeName": "n0"}), mig_devices);
    let cluster = gpu_cluster(vec![mig, claim_template("mig", gpus("mig.nvidia.com", 1))]);
    assert_eq!(run(&s, gang_job(job_with_claims(&["mig"]), 7, false), &cluster), quiet);
    assert_eq!(run(&s, gang_job(job_with_claims(&["mig"]), 8, false), &cluster).1.len(), 1);
    // `All` takes every matching device of a node: one pod per node.
    let all_mode = json!([{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}]);
    let cluster = gpu_cluster(vec![claim_template("all", all_mode)]);
    assert_eq!(run(&s, gang_job(job_with_claims(&["all"]), 4, false), &cluster), quiet);
    let (_, warnings) = run(&s, gang_job(job_with_claims(&["all"]), 5, false), &cluster);
    assert!(warnings[0].contains(r#"all devices of DeviceClass "gpu.nvidia.com" (at least one)"#), "{warnings:?}");
    let admin = json!([{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All", "adminAccess": true}}]);
    let cluster = gpu_cluster(vec![claim_template("all", admin)]);
    assert_eq!(run(&s, gang_job(job_with_claims(&["all"]), 5, false), &cluster), quiet);
    // firstAvailable: 8 H100s or 8 H200s, each alternative serving its own nodes.
    let either = json!([{"name": "gpus", "firstAvailable": [
        {"name": "h100", "deviceClassName": "gpu.nvidia.com", "count": 8, "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'H100'"}}]},
        {"name": "h200", "deviceClassName": "gpu.nvidia.com", "count": 8, "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'H200'"}}]}]}]);
    let cluster = gpu_cluster(vec![claim_template("either", either)]);
    assert_eq!(run(&s, gang_job(job_with_claims(&["either"]), 4, false), &cluster), quiet);
    assert_eq!(run(&s, gang_job(job_with_claims(&["either"]), 5, false), &cluster).1.len(), 1);
}

#[test]
fn more_gang_pods_on_one_claim_than_it_reserves_for() {
    let s = warn_settings();
    let mut job = gang_job(job_with_claims(&[]), 300, false);
    job["spec"]["template"]["spec"]["resourceClaims"] = json!([{"name": "c", "resourceClaimName": "link"}]);
    // No cluster read is needed: the limit holds whatever the claim asks.
    let cluster = MemoryCluster::new(vec![node("n0", json!({}))]);
    let (_, warnings) = run(&s, job.clone(), &cluster);
    assert_eq!(
        warnings,
        [
            r#"spec.template.spec.resourceClaims[0]: the gang of 300 pods can never run at once: at least 300 of them name ResourceClaim "link" through their own entry, and a claim is reserved for at most 256 pods at once (status.reservedFor); a PodGroup's claim is reserved for the PodGroup instead [topology.gang-fits]"#
        ]
    );
    let (violations, _) = run(&settings(json!({"capacityCheck": "deny"})), job.clone(), &cluster);
    assert!(
        violations[0]
            .starts_with(r#"spec.template.spec.resourceClaims[0]: Invalid value: "link": the gang of 300 pods"#),
        "{violations:?}"
    );
    assert_eq!(run(&settings(json!({"capacityCheck": "off"})), job.clone(), &cluster), (vec![], vec![]));
    // 256 at once: each is reserved.
    let mut small = job.clone();
    small["spec"]["scheduling"]["schedulingPolicy"]["gang"]["minCount"] = json!(256);
    assert_eq!(run(&s, small, &cluster), (vec![], vec![]));
    // The same claim as a group claim: reserved for the PodGroup.
    let mut grouped = job.clone();
    grouped["spec"]["scheduling"]["resourceClaims"] = json!([{"name": "c", "resourceClaimName": "link"}]);
    assert_eq!(run(&s, grouped, &cluster), (vec![], vec![]));
    // A template: one claim per pod.
    let templated = gang_job(job_with_claims(&["link"]), 300, false);
    assert_eq!(run(&s, templated, &cluster), (vec![], vec![]));
    // A PyTorchJob: 1 Master and 299 Workers, the Workers naming the claim, all at once; with
    // 44 pods that do not name it, 256 do.
    let replica = |count: i32, claims: Value| {
        json!({"replicas": count, "restartPolicy": "OnFailure", "template": {"spec": {
        "resourceClaims": claims, "containers": [{"name": "pytorch", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}})
    };
    let link = json!([{"name": "c", "resourceClaimName": "link"}]);
    let pytorch = |master: i32, workers: i32, min: i32| {
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "p", "namespace": "ml"}, "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": min}},
        "pytorchReplicaSpecs": {"Master": replica(master, json!([])), "Worker": replica(workers, link.clone())}}})
    };
    let (_, warnings) = run(&s, pytorch(1, 299, 300), &cluster);
    assert!(warnings[0].contains("at least 299 of them name ResourceClaim \"link\""), "{warnings:?}");
    assert_eq!(run(&s, pytorch(44, 299, 300), &cluster), (vec![], vec![]));
}

/// Each Node is matched against at most 64 selector-reached slices: beyond that they are all
/// taken to reach every Node (supply over-estimated, so linear and still sound).
#[test]
fn many_selector_slices_are_taken_to_reach_every_node() {
    let s = warn_settings();
    let nowhere = |i: usize| {
        let selector = json!({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "rack", "operator": "In", "values": [format!("absent-{i}")]}]}]}});
        slice("gpu.nvidia.com", (&format!("sel-{i}"), 1, 1), selector, vec![gpu_device(i, "H100", "gpu")])
    };
    let cluster = |slices: usize| {
        let mut extra: Vec<Value> = (0..slices).map(nowhere).collect();
        extra.push(claim_template("nine", gpus("gpu.nvidia.com", 9)));
        gpu_cluster(extra)
    };
    // 64 slices no Node matches: every Node still holds 8 of the 9 GPUs asked.
    let (_, warnings) = run(&s, job_with_claims(&["nine"]), &cluster(64));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].ends_with("[topology.pod-fits]"), "{warnings:?}");
    // 65: taken to reach every Node, which then may hold 8 + 65; no finding.
    assert_eq!(run(&s, job_with_claims(&["nine"]), &cluster(65)), (vec![], vec![]));
}

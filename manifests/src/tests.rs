use serde_json::json;

use super::*;

fn input(files: &[(&str, &str)]) -> Input {
    Input { files: files.iter().map(|(n, t)| SourceFile::new(*n, *t)).collect(), ..Input::default() }
}

fn result(report: &Report, document: usize, rule_set: RuleSetName) -> &RuleSetResult {
    report.documents[document].results.iter().find(|r| r.rule_set == rule_set).expect("rule set ran")
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
fn rejects_with_the_policy_message_and_the_field_position() {
    let report = check(&input(&[("pg.yaml", PODGROUP_BAD)])).unwrap();
    let doc = &report.documents[0];
    assert_eq!(
        (doc.kind.as_str(), doc.namespace.as_str(), doc.name.as_str(), doc.operation.as_str()),
        ("PodGroup", "ml", "g", "CREATE")
    );
    assert_eq!((doc.line, doc.column), (1, 1));
    let gang = result(&report, 0, RuleSetName::Gang);
    assert!(!gang.accepted);
    assert_eq!(gang.code, None);
    assert_eq!(gang.message.as_deref(), Some("spec.schedulingPolicy.gang.minCount: Required value [gang.min-count]"));
    assert_eq!(
        gang.violations,
        vec![Finding {
            rule: "gang.min-count".into(),
            path: "spec.schedulingPolicy.gang.minCount".into(),
            message: gang.message.clone().unwrap(),
            line: 9,
            column: 7,
        }]
    );
    assert!(result(&report, 0, RuleSetName::Topology).accepted);
    assert_eq!(report.summary, Summary { documents: 1, checked: 1, rejected: 1, ..Summary::default() });
    assert!(report.rejected());
}

#[test]
fn metadata_is_checked_as_the_apiserver_checks_it_by_every_rule_set() {
    let text = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n  name: Train_Job\n  namespace: ml\n  labels: {run: nightly run}\nspec:\n  schedulingPolicy:\n    gang: {minCount: 2}\n";
    let report = check(&input(&[("pg.yaml", text)])).unwrap();
    for rule_set in RuleSetName::ALL.into_iter().filter(|r| *r != RuleSetName::RunPolicy) {
        let r = result(&report, 0, rule_set);
        let found: Vec<(&str, &str, usize, usize)> =
            r.violations.iter().map(|f| (f.rule.as_str(), f.path.as_str(), f.line, f.column)).collect();
        assert_eq!(
            found,
            [("meta.name", "metadata.name", 4, 3), ("meta.labels", "metadata.labels", 6, 3)],
            "{rule_set}"
        );
        assert!(
            r.violations[0]
                .message
                .starts_with("metadata.name: Invalid value: \"Train_Job\": a lowercase RFC 1123 subdomain")
        );
    }
    // The runPolicy set reads no scheduling kinds, as its policy is sent none.
    assert!(result(&report, 0, RuleSetName::RunPolicy).accepted);
}

#[test]
fn the_documents_are_the_cluster() {
    let workload = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: train, namespace: ml}\nspec:\n  podGroupTemplates:\n  - name: workers\n    schedulingPolicy: {gang: {minCount: 4}}\n";
    let podgroup = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: train-1, namespace: ml}\nspec:\n  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}\n  schedulingPolicy: {gang: {minCount: 2}}\n";
    let report = check(&input(&[("pg.yaml", podgroup), ("w.yaml", workload)])).unwrap();
    assert_eq!(report.documents.len(), 2);
    let gang = result(&report, 0, RuleSetName::Gang);
    assert!(!gang.accepted, "{gang:#?}");
    assert_eq!(gang.violations[0].rule, "gang.template-consistency");
    assert_eq!((gang.violations[0].line, gang.violations[0].column), (6, 3));
    assert_eq!(gang.lookups[0].kind, "Workload");
    assert_eq!(gang.lookups[0].name.as_deref(), Some("train"));
    assert_eq!(gang.lookups[0].namespace.as_deref(), Some("ml"));
    assert_eq!(gang.lookups[0].result, "found");
    // Without the Workload the reference points at nothing.
    let alone = check(&input(&[("pg.yaml", podgroup)])).unwrap();
    let gang = result(&alone, 0, RuleSetName::Gang);
    assert_eq!(gang.lookups[0].result, "not found");
    assert!(gang.violations.iter().any(|v| v.rule == "gang.template-ref-exists"), "{gang:#?}");
}

#[test]
fn old_files_make_an_update() {
    let old = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec:\n  schedulingPolicy: {gang: {minCount: 2}}\n";
    let new = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec:\n  schedulingPolicy: {gang: {minCount: 3}}\n";
    let mut i = input(&[("new.yaml", new)]);
    i.old = vec![SourceFile::new("old.yaml", old)];
    let report = check(&i).unwrap();
    let doc = &report.documents[0];
    assert_eq!(doc.operation, "UPDATE");
    assert_eq!(doc.old_source.as_deref(), Some("old.yaml:1:1"));
    let gang = result(&report, 0, RuleSetName::Gang);
    assert_eq!(gang.violations[0].rule, "gang.policy-immutable");
    assert_eq!((gang.violations[0].line, gang.violations[0].column), (5, 3));
    // The same change as a CREATE is fine.
    assert!(check(&input(&[("new.yaml", new)])).unwrap().documents[0].accepted());
}

#[test]
fn mutations_come_with_a_json_patch() {
    let job = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: j}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n        spec:\n          containers: [{name: pytorch, image: x}]\n";
    let mut i = input(&[("job.yaml", job)]);
    i.settings = json!({"runPolicy": {"defaultTtlSecondsAfterFinished": 600}});
    i.rule_sets = vec![RuleSetName::RunPolicy];
    let report = check(&i).unwrap();
    let run = result(&report, 0, RuleSetName::RunPolicy);
    assert!(run.accepted, "{run:#?}");
    assert_eq!(
        run.patch,
        Some(json!([{"op": "add", "path": "/spec/runPolicy", "value": {"ttlSecondsAfterFinished": 600}}]))
    );
    assert_eq!(run.mutated_object.as_ref().unwrap()["spec"]["runPolicy"]["ttlSecondsAfterFinished"], 600);
    assert_eq!(report.rule_sets, vec![RuleSetName::RunPolicy]);
    assert_eq!(report.summary.mutated, 1);
}

#[test]
fn skips_what_no_rule_set_guards() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\nfoo: bar\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n";
    let report = check(&input(&[("misc.yaml", text)])).unwrap();
    assert!(report.documents.is_empty());
    let reasons: Vec<(usize, &str)> = report.skipped.iter().map(|s| (s.line, s.reason.as_str())).collect();
    assert_eq!(
        reasons,
        vec![
            (1, "no rule set guards v1 ConfigMap"),
            (5, "not a Kubernetes object: it has no kind"),
            (7, "no rule set guards scheduling.k8s.io/v1 PriorityClass"),
        ]
    );
    assert_eq!(report.summary, Summary { documents: 3, skipped: 3, ..Summary::default() });
    assert!(!report.rejected());
}

#[test]
fn objects_that_do_not_decode_are_refused_at_the_field() {
    let text = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\nspec:\n  schedulingPolicy:\n    gang: {minCount: \"4\"}\n";
    let report = check(&input(&[("pg.yaml", text)])).unwrap();
    let gang = result(&report, 0, RuleSetName::Gang);
    assert_eq!(gang.code, Some(400));
    let message = gang.message.clone().unwrap();
    assert!(
        message.starts_with("cannot decode request.object as PodGroup: spec.schedulingPolicy.gang.minCount: "),
        "{message}"
    );
    assert_eq!(gang.violations.len(), 1);
    let finding = &gang.violations[0];
    assert_eq!((finding.rule.as_str(), finding.path.as_str()), ("request", "spec.schedulingPolicy.gang.minCount"));
    assert_eq!((finding.line, finding.column), (6, 12));
}

#[test]
fn list_items_are_checked_one_by_one() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: scheduling.k8s.io/v1alpha2\n  kind: PodGroup\n  metadata: {name: a}\n  spec: {schedulingPolicy: {basic: {}}}\n- apiVersion: scheduling.k8s.io/v1alpha2\n  kind: PodGroup\n  metadata: {name: b}\n  spec: {schedulingPolicy: {}}\n";
    let report = check(&input(&[("list.yaml", text)])).unwrap();
    assert_eq!(
        report.documents.iter().map(|d| (d.item, d.line, d.accepted())).collect::<Vec<_>>(),
        vec![(Some(0), 4, true), (Some(1), 8, false)]
    );
    let gang = result(&report, 1, RuleSetName::Gang);
    assert_eq!((gang.violations[0].line, gang.violations[0].column), (11, 10));
}

#[test]
fn input_errors_name_file_line_and_column() {
    let errors = check(&input(&[("a.yaml", "a: [1\n"), ("b.yaml", "x: 1\nx: 2\n")])).unwrap_err();
    let rendered: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(rendered.len(), 2);
    assert!(rendered[0].starts_with("a.yaml:2:1: not valid YAML: "), "{rendered:?}");
    assert_eq!(rendered[1], "b.yaml:2:1: duplicate key \"x\" (first at line 1, column 1)");
}

#[test]
fn two_documents_for_one_object_are_both_checked() {
    let pg = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}}\n";
    let report = check(&input(&[("a.yaml", pg), ("b.yaml", pg)])).unwrap();
    assert_eq!(report.documents.iter().map(|d| d.file.as_str()).collect::<Vec<_>>(), vec!["a.yaml", "b.yaml"]);
}

#[test]
fn settings_are_validated_by_the_rule_sets() {
    let mut i = input(&[("pg.yaml", PODGROUP_BAD)]);
    i.settings_file =
        Some(SourceFile::new("settings.yaml", "gang:\n  maxMinCount: 0\ntopology:\n  checkNodeLabels: maybe\n"));
    let errors: Vec<String> = check(&i).unwrap_err().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("settings.yaml:2:3: invalid gang settings: maxMinCount: "), "{errors:?}");
    assert!(errors[1].starts_with("settings.yaml:4:3: invalid topology settings: checkNodeLabels: "), "{errors:?}");
    i.settings_file = Some(SourceFile::new("settings.yaml", "# bundle settings\ngangs: {}\n"));
    let errors = check(&i).unwrap_err();
    assert_eq!((errors[0].line, errors[0].column), (2, 1));
    assert!(errors[0].message.starts_with("invalid bundle settings: gangs: unknown field `gangs`"), "{errors:?}");
    i.settings_file = None;
    i.settings = json!({"claims": {"nope": 1}});
    let errors = check(&i).unwrap_err();
    assert_eq!(errors[0].file, "settings");
    assert!(
        errors[0].to_string().starts_with("settings: invalid claims settings: nope: unknown field `nope`"),
        "{errors:?}"
    );
}

#[test]
fn settings_change_verdicts() {
    let pg = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: 100}}}\n";
    let mut i = input(&[("pg.yaml", pg)]);
    assert!(check(&i).unwrap().documents[0].accepted());
    i.settings = json!({"gang": {"maxMinCount": 64}});
    let report = check(&i).unwrap();
    assert_eq!(result(&report, 0, RuleSetName::Gang).violations[0].rule, "gang.max-min-count");
}

#[test]
fn kubernetes_version_reports_unserved_api_versions() {
    let text = "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {}\n";
    let mut i = input(&[("w.yaml", text)]);
    // 1.37 serves v1beta1: the Workload is checked (and its empty spec rejected).
    i.kubernetes_version = Some(KubernetesVersion::V1_37);
    let report = check(&i).unwrap();
    assert!(report.unserved.is_empty() && report.skipped.is_empty());
    assert_eq!(report.documents[0].kind, "Workload");
    i.kubernetes_version = Some(KubernetesVersion::V1_36);
    let report = check(&i).unwrap();
    assert_eq!(
        report.unserved[0].message,
        "apiVersion: Unsupported value: \"scheduling.k8s.io/v1beta1\": Kubernetes 1.36 serves scheduling.k8s.io Workload in: \"scheduling.k8s.io/v1alpha2\""
    );
    assert!(report.rejected());
}

#[test]
fn input_is_json_friendly() {
    let i: Input = serde_json::from_value(json!({
        "files": [{"name": "pg.yaml", "text": PODGROUP_BAD}],
        "ruleSets": ["gang", "runPolicy"],
        "settings": {"gang": {"maxMinCount": 8}},
        "kubernetesVersion": "1.36"
    }))
    .unwrap();
    assert_eq!(i.rule_sets, vec![RuleSetName::Gang, RuleSetName::RunPolicy]);
    let report = serde_json::to_value(check(&i).unwrap()).unwrap();
    assert_eq!(report["documents"][0]["results"][0]["ruleSet"], "gang");
    assert_eq!(report["documents"][0]["results"][0]["violations"][0]["line"], 9);
    assert_eq!(report["summary"]["rejected"], 1);
    assert_eq!(report["kubernetesVersion"], "1.36");
}

#[test]
fn a_clock_times_each_rule_set() {
    let mut now = 0.0;
    let mut clock = || {
        now += 5.0;
        now
    };
    let report = check_with_clock(&input(&[("pg.yaml", PODGROUP_BAD)]), &mut clock).unwrap();
    assert!(report.documents[0].results.iter().all(|r| r.elapsed_micros == Some(5.0)));
    assert_eq!(check(&input(&[("pg.yaml", PODGROUP_BAD)])).unwrap().documents[0].results[0].elapsed_micros, None);
}

#[test]
fn rule_set_names() {
    assert_eq!(RuleSetName::parse("run-policy"), Some(RuleSetName::RunPolicy));
    assert_eq!(RuleSetName::parse("runPolicy"), Some(RuleSetName::RunPolicy));
    assert_eq!(RuleSetName::parse("bundle"), None);
    assert_eq!(KubernetesVersion::parse("v1.36"), Some(KubernetesVersion::V1_36));
}

#[test]
fn node_label_checks_need_nodes() {
    let pg = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\nspec:\n  schedulingPolicy: {gang: {minCount: 2}}\n  schedulingConstraints:\n    topology: [{key: topology.kubernetes.io/zon}]\n";
    let nodes = "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}\n- metadata: {name: n2, labels: {topology.kubernetes.io/zone: b}}\n";
    // No Nodes given, and the documents are not the whole cluster: the check is skipped
    // with a warning, not failed.
    let mut partial = input(&[("pg.yaml", pg)]);
    partial.partial_cluster = true;
    let report = check(&partial).unwrap();
    let topology = result(&report, 0, RuleSetName::Topology);
    assert!(topology.accepted, "{topology:#?}");
    assert_eq!(topology.warnings[0].rule, "topology.key-on-nodes");
    assert!(topology.warnings[0].message.contains("no v1 Node objects were given"), "{topology:#?}");
    // With the Nodes the typo is caught, at the key.
    let mut i = partial.clone();
    i.cluster = vec![SourceFile::new("nodes.yaml", nodes)];
    let report = check(&i).unwrap();
    let topology = result(&report, 0, RuleSetName::Topology);
    assert_eq!(topology.violations[0].rule, "topology.key-on-nodes");
    assert_eq!((topology.violations[0].line, topology.violations[0].column), (7, 17));
    // One list of every Node, whatever the key, with what the capacity rules read too.
    let lists: Vec<(&str, Vec<&str>, &str)> = topology
        .lookups
        .iter()
        .map(|l| (l.kind.as_str(), l.field_masks.iter().map(String::as_str).collect(), l.result.as_str()))
        .collect();
    assert_eq!(lists, [("Node", vec!["metadata.labels", "spec.taints", "status.allocatable"], "2 objects")]);
    // As the whole cluster (the default), no Nodes means none.
    assert!(!check(&input(&[("pg.yaml", pg)])).unwrap().documents[0].accepted());
}

use serde_json::{Value, json};

use super::*;
use crate::cluster::MemoryCluster;

const VERSIONS_137: [&str; 2] = ["v1beta1", "v1alpha3"];

fn review(op: &str, object: Value, old: Option<Value>) -> Review<'static> {
    let request = crate::request::admission_request("u", op, &object, old.as_ref());
    crate::review::review_request(&request).unwrap().unwrap()
}

fn run_with(object: Value, old: Option<Value>, cluster: &MemoryCluster) -> (Vec<String>, Vec<String>) {
    let op = if old.is_some() { "UPDATE" } else { "CREATE" };
    let v = Gang::check(&Settings::default(), &review(op, object, old), cluster);
    (v.violations.iter().map(|x| x.to_string()).collect(), v.warning_messages())
}

fn violations(object: Value, old: Option<Value>) -> Vec<String> {
    run_with(object, old, &MemoryCluster::default()).0
}

fn object(version: &str, kind: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("scheduling.k8s.io/{version}"), "kind": kind,
           "metadata": {"name": name, "namespace": "ml"}, "spec": spec})
}

fn gang(name: &str) -> Value {
    json!({"name": name, "schedulingPolicy": {"gang": {"minCount": 2}}})
}

fn composite(name: &str, children: Value) -> Value {
    json!({"name": name, "schedulingPolicy": {"gang": {"minGroupCount": 1}}, "podGroupTemplates": children})
}

/// A Workload with one composite template "job" holding leaf templates "leader" and "workers".
fn tree_workload(version: &str) -> Value {
    object(
        version,
        "Workload",
        "w",
        json!({"compositePodGroupTemplates": [composite("job", json!([gang("leader"), gang("workers")]))]}),
    )
}

#[test]
fn a_well_formed_tree_is_accepted_in_both_versions() {
    for version in VERSIONS_137 {
        assert_eq!(violations(tree_workload(version), None), Vec::<String>::new(), "{version}");
        let flat = object(version, "Workload", "w", json!({"podGroupTemplates": [gang("a"), gang("b")]}));
        assert_eq!(violations(flat, None), Vec::<String>::new(), "{version}");
    }
}

#[test]
fn the_workload_union_and_list_sizes() {
    for version in VERSIONS_137 {
        assert_eq!(
            violations(object(version, "Workload", "w", json!({})), None),
            [
                "spec: Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates` [gang.workload-templates]"
            ]
        );
        let both = json!({"podGroupTemplates": [gang("a")],
            "compositePodGroupTemplates": [composite("c", json!([gang("b")]))]});
        assert_eq!(
            violations(object(version, "Workload", "w", both), None),
            [
                "spec: Invalid value: \"{podGroupTemplates, compositePodGroupTemplates}\": must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates` [gang.workload-templates]"
            ]
        );
        let nine: Vec<Value> = (0..9).map(|i| gang(&format!("t{i}"))).collect();
        let nested = json!({"compositePodGroupTemplates": [composite("c", json!(nine))]});
        assert_eq!(
            violations(object(version, "Workload", "w", nested), None),
            [
                "spec.compositePodGroupTemplates[0].podGroupTemplates: Too many: 9: must have at most 8 items [gang.workload-templates]"
            ]
        );
    }
}

#[test]
fn past_the_maximum_only_the_tree_wide_checks_run() {
    // `maxItems` short-circuits the list's other declarative checks and those of what it
    // holds; the hand-written tree checks (unique names, children, depth) still run.
    let mut nine: Vec<Value> = (0..9).map(|i| composite(&format!("c{i}"), json!([gang(&format!("g{i}"))]))).collect();
    nine[2] = composite("Bad_Name", json!([gang("g2")]));
    nine[4] = composite("c3", json!([gang("g4")]));
    nine[5] = composite("c5", json!([gang("Also_Bad"), gang("g5"), gang("g5")]));
    nine[6] = json!({"name": "c6", "schedulingPolicy": {"gang": {"minGroupCount": 1}}});
    let spec = json!({"compositePodGroupTemplates": nine});
    let c = "spec.compositePodGroupTemplates";
    assert_eq!(
        violations(object("v1beta1", "Workload", "w", spec), None),
        [
            format!("{c}: Too many: 9: must have at most 8 items [gang.workload-templates]"),
            format!("{c}[4].name: Duplicate value: \"c3\" [gang.template-unique]"),
            format!("{c}[5].podGroupTemplates[2].name: Duplicate value: \"g5\" [gang.template-unique]"),
            format!(
                "{c}[6]: Invalid value: \"c6\": must have at least one child PodGroupTemplate or CompositePodGroupTemplate [gang.composite-children]"
            ),
        ]
    );
}

#[test]
fn names_are_unique_in_the_list_and_across_the_tree() {
    let spec = json!({"compositePodGroupTemplates": [
        composite("a", json!([gang("x"), gang("x")])),
        composite("b", json!([gang("x"), gang("a")])),
    ]});
    let got = violations(object("v1beta1", "Workload", "w", spec), None);
    assert_eq!(
        got,
        [
            "spec.compositePodGroupTemplates[0].podGroupTemplates[1]: Duplicate value: {\"name\":\"x\",\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}} [gang.template-unique]",
            "spec.compositePodGroupTemplates[1].podGroupTemplates[0].name: Duplicate value: \"x\" [gang.template-unique]",
            "spec.compositePodGroupTemplates[1].podGroupTemplates[1].name: Duplicate value: \"a\" [gang.template-unique]",
        ]
    );
}

#[test]
fn depth_children_and_one_priority() {
    // Composite levels 1..4 with a leaf at level 5: one level too deep.
    let mut level = json!({"name": "c4", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [gang("leaf")]});
    for name in ["c3", "c2", "c1"] {
        level = json!({"name": name, "schedulingPolicy": {"basic": {}}, "compositePodGroupTemplates": [level]});
    }
    let deep = object("v1alpha3", "Workload", "w", json!({"compositePodGroupTemplates": [level]}));
    // Reported once, on the top-level composite, with its children, as the apiserver does.
    let v = violations(deep, None);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].starts_with(r#"spec.compositePodGroupTemplates[0]: Invalid value: [{"compositePodGroupTemplates":[{"#),
        "{v:?}"
    );
    assert!(v[0].ends_with("...(26 more bytes): maximum template hierarchy depth is 4 [gang.template-depth]"), "{v:?}");
    let childless = json!({"compositePodGroupTemplates": [composite("c", json!([]))]});
    assert_eq!(
        violations(object("v1beta1", "Workload", "w", childless), None),
        [
            "spec.compositePodGroupTemplates[0]: Invalid value: \"c\": must have at least one child PodGroupTemplate or CompositePodGroupTemplate [gang.composite-children]"
        ]
    );
    let mut two = gang("b");
    two["priorityClassName"] = json!("high");
    let flat = object("v1beta1", "Workload", "w", json!({"podGroupTemplates": [gang("a"), two]}));
    assert_eq!(
        violations(flat, None),
        ["spec: Invalid value: null: detected multiple priority configurations [gang.workload-priority]"]
    );
}

#[test]
fn composite_policies_and_disruption_modes() {
    let mut c = composite("c", json!([gang("a")]));
    c["schedulingPolicy"] = json!({"gang": {"minGroupCount": 0}});
    c["disruptionMode"] = json!({});
    c["preemptionPolicy"] = json!("Sometimes");
    let w = object("v1beta1", "Workload", "w", json!({"compositePodGroupTemplates": [c]}));
    assert_eq!(
        violations(w, None),
        [
            "spec.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount: Required value [gang.min-count]",
            "spec.compositePodGroupTemplates[0].disruptionMode: Invalid value: \"\": must specify one of: `single`, `all` [gang.disruption-mode]",
            "spec.compositePodGroupTemplates[0].preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"Never\", \"PreemptLowerPriority\" [gang.preemption-policy]",
        ]
    );
    let pg =
        object("v1alpha3", "PodGroup", "g", json!({"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}}));
    assert_eq!(
        violations(pg, None),
        [
            "spec.disruptionMode: Invalid value: {\"all\":{}}: a basic schedulingPolicy schedules pods one by one, so the group cannot be disrupted as a whole (use a gang policy or disruptionMode {\"single\": {}}) [gang.disruption-mode-basic]"
        ]
    );
    let both = object(
        "v1beta1",
        "PodGroup",
        "g",
        json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}, "single": {}}}),
    );
    assert_eq!(
        violations(both, None),
        [
            "spec.disruptionMode: Invalid value: \"{single, all}\": must specify exactly one of: `single`, `all` [gang.disruption-mode]"
        ]
    );
}

#[test]
fn a_1_36_disruption_mode_string_is_a_clear_error() {
    let pg = object(
        "v1beta1",
        "PodGroup",
        "g",
        json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup"}),
    );
    let request = crate::request::admission_request("u", "CREATE", &pg, None);
    let err = crate::review::review_request(&request).unwrap_err().0;
    assert_eq!(
        err,
        "cannot decode request.object as PodGroup: spec.disruptionMode: invalid type: string \"PodGroup\", expected DisruptionMode (in scheduling.k8s.io/v1beta1 disruptionMode is {\"single\": {}} or {\"all\": {}}; the 1.36 strings \"Pod\" and \"PodGroup\" are gone)"
    );
}

#[test]
fn template_updates_follow_each_field() {
    let old = tree_workload("v1beta1");
    // minCount may change.
    let mut resized = old.clone();
    resized["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] =
        json!(5);
    assert_eq!(violations(resized, Some(old.clone())), Vec::<String>::new());
    // Reordering is not adding or removing.
    let mut reordered = old.clone();
    reordered["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"] = json!([gang("workers"), gang("leader")]);
    assert_eq!(violations(reordered, Some(old.clone())), Vec::<String>::new());
    let mut changed = old.clone();
    let leaves = &mut changed["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"];
    leaves[0]["schedulingPolicy"] = json!({"basic": {}});
    leaves[1] = gang("other");
    leaves[1]["priority"] = json!(5);
    let got = violations(changed, Some(old));
    let at = "spec.compositePodGroupTemplates[0].podGroupTemplates";
    assert_eq!(
        got,
        [
            format!("{at}[1].priority: Forbidden: set priorityClassName instead (the priority is computed from the class at admission) [gang.user-priority]"),
            "spec: Invalid value: null: all priority and priorityClassName values must be identical, detected multiple values [gang.workload-priority]".to_string(),
            format!("{at}[0].schedulingPolicy.basic: Invalid value: {{}}: field is immutable [gang.policy-immutable]"),
            format!("{at}[0].schedulingPolicy.gang: Forbidden: field cannot be cleared once set [gang.policy-immutable]"),
            format!("{at}[1]: Forbidden: item may not be added [gang.templates-immutable]"),
            format!("{at}: Forbidden: item may not be removed [gang.templates-immutable]"),
        ]
    );
}

#[test]
fn pod_group_references_and_updates() {
    let pg = object(
        "v1beta1",
        "PodGroup",
        "g",
        json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "parentCompositePodGroupName": "Job_1",
               "workloadRef": {"workloadName": "w", "templateName": ""}}),
    );
    assert_eq!(
        violations(pg, None),
        [
            "spec.workloadRef.templateName: Required value [gang.template-ref]".to_string(),
            format!(
                "spec.parentCompositePodGroupName: Invalid value: \"Job_1\": {} [gang.parent-group]",
                names::is_dns1123_subdomain("Job_1")[0]
            ),
        ]
    );
    let orphan = object(
        "v1alpha3",
        "PodGroup",
        "g",
        json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "parentCompositePodGroupName": "job"}),
    );
    assert_eq!(
        violations(orphan, None),
        [
            "spec.workloadRef: Required value: must be set when spec.parentCompositePodGroupName is set [gang.parent-group]"
        ]
    );
    let old = object(
        "v1beta1",
        "PodGroup",
        "g",
        json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}},
               "workloadRef": {"workloadName": "w", "templateName": "t"}}),
    );
    let mut new = old.clone();
    new["spec"]["schedulingPolicy"]["gang"]["minCount"] = json!(3);
    assert_eq!(violations(new.clone(), Some(old.clone())), Vec::<String>::new());
    new["spec"]["disruptionMode"] = json!({"all": {}});
    new["spec"]["preemptionPolicy"] = json!("Never");
    new["spec"]["workloadRef"]["templateName"] = json!("u");
    assert_eq!(
        violations(new, Some(old)),
        [
            r#"spec.disruptionMode: Invalid value: {"all":{}}: field is immutable [gang.disruption-mode]"#,
            r#"spec.preemptionPolicy: Invalid value: "Never": field is immutable [gang.preemption-policy]"#,
            r#"spec.workloadRef: Invalid value: {"templateName":"u","workloadName":"w"}: field is immutable [gang.template-ref-immutable]"#,
        ]
    );
}

#[test]
fn composite_pod_groups() {
    let cpg = json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
        "metadata": {"name": "Job", "namespace": "ml"}, "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}});
    assert_eq!(
        violations(cpg.clone(), None),
        // The name is the metadata rules' (crate::rules::meta), which the engine runs.
        ["spec.workloadRef: Required value [gang.template-ref]".to_string()]
    );
    let mut old = cpg;
    old["metadata"]["name"] = json!("job");
    old["spec"]["workloadRef"] = json!({"workloadName": "w", "templateName": "job"});
    let mut new = old.clone();
    new["spec"]["schedulingPolicy"]["gang"]["minGroupCount"] = json!(3);
    assert_eq!(
        violations(new, Some(old)),
        [
            r#"spec.schedulingPolicy: Invalid value: {"gang":{"minGroupCount":3}}: field is immutable [gang.policy-immutable]"#
        ]
    );
    // CompositePodGroup exists only in v1alpha3.
    let beta =
        json!({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "CompositePodGroup", "metadata": {"name": "c"}});
    let request = crate::request::admission_request("u", "CREATE", &beta, None);
    assert_eq!(
        crate::review::review_request(&request).unwrap_err().0,
        format!(
            "unsupported kind scheduling.k8s.io/v1beta1 CompositePodGroup: this policy validates {}",
            scheduling::UNDERSTOOD
        )
    );
}

fn leader_group(version: &str, parent: Option<&str>) -> Value {
    let mut spec = json!({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}},
                          "workloadRef": {"workloadName": "w", "templateName": "leader"}});
    if let Some(p) = parent {
        spec["parentCompositePodGroupName"] = json!(p);
    }
    object(version, "PodGroup", "g", spec)
}

fn parent_group(workload: &str, template: &str) -> Value {
    object(
        "v1alpha3",
        "CompositePodGroup",
        "job-1",
        json!({"schedulingPolicy": {"gang": {"minGroupCount": 1}}, "workloadRef": {"workloadName": workload, "templateName": template}}),
    )
}

#[test]
fn a_group_fits_its_place_in_the_hierarchy() {
    for version in VERSIONS_137 {
        let cluster = MemoryCluster::new(vec![tree_workload(version), parent_group("w", "job")]);
        let (v, w) = run_with(leader_group(version, Some("job-1")), None, &cluster);
        assert_eq!((v, w), (Vec::new(), Vec::new()), "{version}");
        let (v, _) = run_with(leader_group(version, None), None, &cluster);
        assert_eq!(
            v,
            [
                "spec.parentCompositePodGroupName: Required value: Workload \"w\" template \"leader\" is nested in CompositePodGroupTemplate \"job\", so the group must name the CompositePodGroup made from it [gang.hierarchy]"
            ],
            "{version}"
        );
        let other = MemoryCluster::new(vec![tree_workload(version), parent_group("w2", "job")]);
        let (v, _) = run_with(leader_group(version, Some("job-1")), None, &other);
        assert_eq!(
            v,
            [
                "spec.parentCompositePodGroupName: Invalid value: \"job-1\": CompositePodGroup \"job-1\" belongs to Workload \"w2\", not \"w\" [gang.hierarchy]"
            ]
        );
        let missing = MemoryCluster::new(vec![tree_workload(version)]);
        let (v, _) = run_with(leader_group(version, Some("job-1")), None, &missing);
        assert_eq!(
            v,
            [
                "spec.parentCompositePodGroupName: Not found: \"job-1\": CompositePodGroup \"job-1\" not found in namespace \"ml\" [gang.hierarchy]"
            ]
        );
    }
}

#[test]
fn lookups_follow_the_request_version_and_tell_not_served_from_missing() {
    // A 1.36 cluster does not serve v1beta1: a failed lookup (a warning), not a missing Workload.
    let old_cluster = MemoryCluster::new(vec![]).serving(["scheduling.k8s.io/v1alpha2"]);
    let (v, w) = run_with(leader_group("v1beta1", Some("job-1")), None, &old_cluster);
    assert_eq!(v, Vec::<String>::new());
    assert_eq!(
        w,
        [
            "spec.workloadRef.workloadName: cannot look up Workload \"w\": the cluster does not serve scheduling.k8s.io/v1beta1/Workload; the check was skipped [gang.template-ref-exists]"
        ]
    );
    // The template is found at any depth; a Workload being deleted is refused.
    let mut deleting = tree_workload("v1beta1");
    deleting["metadata"]["deletionTimestamp"] = json!("2026-09-01T00:00:00Z");
    let (v, _) = run_with(leader_group("v1beta1", Some("job-1")), None, &MemoryCluster::new(vec![deleting]));
    assert_eq!(
        v,
        [
            "spec.workloadRef.workloadName: Invalid value: \"w\": Workload \"w\" is being deleted [gang.template-ref-exists]"
        ]
    );
}

fn pod(group: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
           "spec": {"schedulingGroup": {"podGroupName": group}, "containers": [{"name": "c", "image": "i"}]}})
}

#[test]
fn a_pod_finds_its_group_through_the_versions_in_order() {
    let group = object("v1alpha2", "PodGroup", "g", json!({}));
    // 1.36: v1beta1 and v1alpha3 are not served, v1alpha2 answers.
    let old = MemoryCluster::new(vec![group]).serving(["scheduling.k8s.io/v1alpha2"]);
    assert_eq!(run_with(pod("g"), None, &old), (Vec::new(), Vec::new()));
    // 1.37: v1beta1 answers "not found", and that answer wins.
    let new = MemoryCluster::new(vec![]).serving(["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"]);
    let (_, w) = run_with(pod("g"), None, &new);
    assert_eq!(
        w,
        [
            "spec.schedulingGroup.podGroupName: PodGroup \"g\" does not exist in namespace \"ml\" yet; the Pod stays Pending until it is created [gang.pod-group-exists]"
        ]
    );
    // 1.38 as planned: v1 answers first.
    let planned = MemoryCluster::new(vec![object("v1", "PodGroup", "g", json!({}))])
        .serving(["scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1"]);
    assert_eq!(run_with(pod("g"), None, &planned), (Vec::new(), Vec::new()));
    // A cluster without any of them (the feature is off) cannot answer.
    let none = MemoryCluster::new(vec![]).serving(["scheduling.k8s.io/v1alpha1"]);
    let (_, w) = run_with(pod("g"), None, &none);
    assert_eq!(
        w,
        [
            "spec.schedulingGroup.podGroupName: cannot look up PodGroup \"g\": the cluster serves PodGroups in none of scheduling.k8s.io/v1, scheduling.k8s.io/v1beta1, scheduling.k8s.io/v1alpha3, scheduling.k8s.io/v1alpha2; the check was skipped [gang.pod-group-exists]"
        ]
    );
}

#[test]
fn the_lookup_versions_setting() {
    let bad = Settings { scheduling_api_versions: vec!["v1beta1".into(), "v2".into()], ..Settings::default() };
    assert_eq!(
        Gang::validate_settings(&bad).unwrap_err(),
        "schedulingApiVersions[1]: Unsupported value: \"v2\": supported values: \"v1\", \"v1beta1\", \"v1alpha3\", \"v1alpha2\""
    );
    let twice = Settings { scheduling_api_versions: vec!["v1beta1".into(), "v1beta1".into()], ..Settings::default() };
    assert_eq!(Gang::validate_settings(&twice).unwrap_err(), "schedulingApiVersions[1]: Duplicate value: \"v1beta1\"");
    let empty = Settings { scheduling_api_versions: vec![], ..Settings::default() };
    assert_eq!(Gang::validate_settings(&empty).unwrap_err(), "schedulingApiVersions: must list at least one version");
}

/// The apiserver defaults a PodGroup's (and a CompositePodGroup's) `disruptionMode` when it
/// decodes the object, before validation and every webhook; templates are not defaulted. The
/// rules judge the defaulted object, so a manifest that leaves the field out reads as the
/// apiserver stores it.
#[test]
fn an_absent_disruption_mode_is_judged_as_its_default() {
    let templates = json!({"podGroupTemplates": [
        {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "Pod"},
        {"name": "leaders", "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup"},
    ]});
    let cluster = MemoryCluster::new(vec![object("v1alpha2", "Workload", "train", templates)]);
    let from = |template: &str, mode: Option<&str>| {
        let mut spec = json!({"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": template}},
                              "schedulingPolicy": {"gang": {"minCount": 2}}});
        if let Some(mode) = mode {
            spec["disruptionMode"] = json!(mode);
        }
        object("v1alpha2", "PodGroup", &format!("train-{template}-0"), spec)
    };
    // Left out, it is "Pod", which is what the template says ...
    assert_eq!(run_with(from("workers", None), None, &cluster).0, Vec::<String>::new());
    // ... and not what this one says: the message shows the defaulted value.
    assert_eq!(
        run_with(from("leaders", None), None, &cluster).0,
        [
            r#"spec.disruptionMode: Invalid value: "Pod": must equal the disruptionMode of Workload "train" template "leaders": "PodGroup" [gang.template-consistency]"#
        ]
    );
    // An update that writes the default out, or leaves it out again, changes nothing.
    assert!(violations(from("workers", Some("Pod")), Some(from("workers", None))).is_empty());
    assert!(violations(from("workers", None), Some(from("workers", Some("Pod")))).is_empty());
    assert_eq!(
        violations(from("workers", Some("PodGroup")), Some(from("workers", None))),
        [r#"spec.disruptionMode: Invalid value: "PodGroup": field is immutable [gang.disruption-mode]"#]
    );

    for version in VERSIONS_137 {
        let templates = json!({"podGroupTemplates": [
            {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}}},
        ]});
        let cluster = MemoryCluster::new(vec![object(version, "Workload", "train", templates)]);
        let group = object(
            version,
            "PodGroup",
            "train-workers-0",
            json!({"workloadRef": {"workloadName": "train", "templateName": "workers"},
                   "schedulingPolicy": {"gang": {"minCount": 2}}}),
        );
        assert_eq!(run_with(group.clone(), None, &cluster).0, Vec::<String>::new(), "{version}");
        let mut explicit = group.clone();
        explicit["spec"]["disruptionMode"] = json!({"single": {}});
        assert!(violations(explicit, Some(group)).is_empty(), "{version}");
    }
    // A template is not defaulted: a group from a template that leaves the mode out is free.
    let cluster = MemoryCluster::new(vec![object(
        "v1alpha2",
        "Workload",
        "train",
        json!({"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}),
    )]);
    assert!(run_with(from("workers", Some("PodGroup")), None, &cluster).0.is_empty());
}

fn vcjob(spec: Value) -> Value {
    json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"}, "spec": spec})
}

fn vc_task(name: &str, replicas: i32) -> Value {
    json!({"name": name, "replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}})
}

#[test]
fn volcano_jobs_are_checked_as_volcano_defaults_them() {
    // Defaults: the empty name becomes default0, task minAvailable its replicas, the job's their sum.
    let ok = vcjob(json!({"tasks": [{"replicas": 2}, vc_task("worker", 4)], "plugins": {"ssh": [], "svc": []}}));
    assert_eq!(violations(ok, None), Vec::<String>::new());
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (vcjob(json!({})), vec!["spec.tasks: Required value: No task specified in job spec [gang.volcano-tasks]"]),
        (
            vcjob(json!({"minAvailable": 5, "tasks": [vc_task("a", 2), vc_task("b", 2)]})),
            vec![
                "spec.minAvailable: Invalid value: 5: job 'minAvailable' should not be greater than total replicas in tasks (4) [gang.volcano-min-available]",
            ],
        ),
        (
            vcjob(json!({"tasks": [{"name": "a", "replicas": 2, "minAvailable": 3}]})),
            vec![
                "spec.tasks[0].minAvailable: Invalid value: 3: 'minAvailable' is greater than 'replicas' in task: a, job: train [gang.volcano-min-available]",
                "spec.minAvailable: Invalid value: 3: job 'minAvailable' should not be greater than total replicas in tasks (2) [gang.volcano-min-available]",
            ],
        ),
        (
            vcjob(json!({"tasks": [vc_task("a", 1), vc_task("a", 1), vc_task("Bad", 1)]})),
            vec![
                "spec.tasks[1].name: Invalid value: \"a\": duplicated task name a [gang.volcano-task-name]",
                "spec.tasks[2].name: Invalid value: \"Bad\": spec.tasks[2].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' [gang.volcano-task-name]",
            ],
        ),
        (
            vcjob(json!({"tasks": [vc_task("a", 1)], "plugins": {"mpi": ["--master=head"], "magic": []}})),
            vec![
                "spec.plugins[mpi]: Invalid value: \"head\": The specified mpi master task was not found [gang.volcano-mpi-master]",
            ],
        ),
        (
            vcjob(json!({"tasks": [vc_task("a", 1)], "plugins": {"magic": []}})),
            vec![
                "spec.plugins[magic]: Invalid value: \"magic\": unable to find job plugin: magic (Volcano's plugins: ssh, env, svc, tensorflow, mpi, pytorch, hcclrank, ray) [gang.volcano-plugins]",
            ],
        ),
        (
            vcjob(json!({"tasks": [vc_task("a", 1)], "policies": [
                {"event": "PodFailed", "action": "RestartJob"}, {"events": ["PodFailed"], "action": "AbortJob"}]})),
            vec![
                "spec.policies[1].events[0]: Invalid value: \"PodFailed\": duplicate event PodFailed  across different policy [gang.volcano-policies]",
            ],
        ),
        (
            vcjob(json!({"tasks": [vc_task("a", 1)], "policies": [{"event": "OutOfSync", "action": "RestartJob"}]})),
            vec![
                "spec.policies[0].event: Invalid value: \"OutOfSync\": invalid policy event: valid events are *, PodFailed, PodEvicted, PodPending, Unknown, TaskCompleted, TaskFailed, JobUpdated [gang.volcano-policies]",
            ],
        ),
        (
            vcjob(
                json!({"tasks": [vc_task("a", 1)], "policies": [{"event": "PodFailed", "action": "SyncJob"}, {"exitCode": 0}]}),
            ),
            vec![
                "spec.policies[0].action: Invalid value: \"SyncJob\": invalid policy action: valid actions are AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, CompleteJob, ResumeJob [gang.volcano-policies]",
            ],
        ),
        (
            vcjob(
                json!({"tasks": [vc_task("a", 1)], "policies": [{"exitCode": 3, "action": "Anything"}, {"exitCode": 3}]}),
            ),
            vec!["spec.policies[1].exitCode: Invalid value: 3: duplicate exitCode 3 [gang.volcano-policies]"],
        ),
        (
            vcjob(
                json!({"tasks": [vc_task("a", 1)], "policies": [{"event": "*", "action": "RestartJob"}, {"event": "PodEvicted", "action": "AbortJob"}]}),
            ),
            vec![
                "spec.policies: Invalid value: if there's * here, no other policy should be here [gang.volcano-policies]",
            ],
        ),
        (
            vcjob(json!({"tasks": [
                {"name": "a", "replicas": 1, "dependsOn": {"name": ["c"]}},
                {"name": "b", "replicas": 1, "dependsOn": {"name": ["a"]}},
                {"name": "c", "replicas": 1, "dependsOn": {"name": ["b"]}}]})),
            vec![
                "spec.tasks[0].dependsOn.name: Invalid value: [\"c\"]: job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG) [gang.volcano-depends-on]",
            ],
        ),
        (
            vcjob(
                json!({"tasks": [vc_task("a", 1)], "queue": "Research", "networkTopology": {"mode": "strict", "highestTierAllowed": 1, "highestTierName": "spine"}}),
            ),
            vec![
                "spec.networkTopology.mode: Unsupported value: \"strict\": supported values: \"hard\", \"soft\" [gang.volcano-network-topology]",
                "spec.networkTopology.highestTierName: Forbidden: must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously [gang.volcano-network-topology]",
                "spec.queue: Invalid value: \"Research\": spec.queue in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' [gang.volcano-queue]",
            ],
        ),
        (
            vcjob(
                json!({"tasks": [{"name": "a", "replicas": 6, "partitionPolicy": {"totalPartitions": 2, "partitionSize": 2}}]}),
            ),
            vec![
                "spec.tasks[0].partitionPolicy.totalPartitions: Invalid value: 2: 'Replicas' are not equal to TotalPartitions*PartitionSize in task: a, job: train [gang.volcano-partition]",
            ],
        ),
        (
            vcjob(json!({"tasks": [vc_task("a-very-long-task-name-that-is-fine-as-a-label-of-sixty-chars", 1)]})),
            vec![
                "spec.tasks[0].name: Invalid value: \"a-very-long-task-name-that-is-fine-as-a-label-of-sixty-chars\": create pod with name train-a-very-long-task-name-that-is-fine-as-a-label-of-sixty-chars-0 validate failed [name part must be no more than 63 characters] [gang.volcano-pod-name]",
            ],
        ),
    ];
    for (job, expected) in cases {
        assert_eq!(violations(job.clone(), None), expected, "{job}");
    }
}

#[test]
fn volcano_dependencies_are_a_dag_of_known_tasks() {
    let chain = vcjob(json!({"tasks": [
        {"name": "c", "replicas": 1, "dependsOn": {"name": ["b", "a"]}},
        {"name": "a", "replicas": 1},
        {"name": "b", "replicas": 1, "dependsOn": {"name": ["a"]}}]}));
    assert_eq!(violations(chain, None), Vec::<String>::new());
    // A repeated or unknown name is never satisfied, as in Volcano's topoSort.
    for deps in [json!(["a", "a"]), json!(["x"])] {
        let job = vcjob(json!({"tasks": [vc_task("a", 1), {"name": "b", "replicas": 1, "dependsOn": {"name": deps}}]}));
        assert_eq!(violations(job, None).len(), 1);
    }
}

#[test]
fn volcano_updates_change_only_counts() {
    let old = vcjob(json!({"minAvailable": 2, "queue": "default", "tasks": [vc_task("a", 2)]}));
    let scaled = vcjob(
        json!({"minAvailable": 4, "priorityClassName": "high", "tasks": [{"name": "a", "replicas": 4, "minAvailable": 4, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}]}),
    );
    assert_eq!(violations(scaled, Some(old.clone())), Vec::<String>::new());
    let requeued = vcjob(json!({"minAvailable": 2, "queue": "research", "tasks": [vc_task("a", 2)]}));
    assert_eq!(
        violations(requeued, Some(old.clone())),
        [
            "spec: Forbidden: job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and `PriorityClassName` [gang.volcano-update]"
        ]
    );
    let grown = vcjob(json!({"minAvailable": 2, "tasks": [vc_task("a", 2), vc_task("b", 1)]}));
    assert_eq!(
        violations(grown, Some(old.clone())),
        ["spec.tasks: Forbidden: job updates may not add or remove tasks [gang.volcano-update]"]
    );
    let over = vcjob(json!({"minAvailable": 3, "tasks": [vc_task("a", 2)]}));
    assert_eq!(
        violations(over, Some(old)),
        [
            "spec.minAvailable: Invalid value: 3: job 'minAvailable' must not be greater than total replicas (2) [gang.volcano-min-available]"
        ]
    );
}

#[test]
fn volcano_pod_groups_get_the_crd_bounds_and_the_network_topology_rule() {
    let pg = |spec: Value| json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ml"}, "spec": spec});
    assert_eq!(violations(pg(json!({"minMember": 3, "queue": "default"})), None), Vec::<String>::new());
    assert_eq!(
        violations(
            pg(json!({"minMember": -1, "networkTopology": {"highestTierAllowed": -1},
                "subGroupPolicy": [{"name": "s", "networkTopology": {"highestTierAllowed": 1, "highestTierName": "t"}}]})),
            None
        ),
        [
            "spec.minMember: Invalid value: -1: spec.minMember in body should be greater than or equal to 0 [gang.volcano-min-available]",
            "spec.networkTopology.highestTierAllowed: Invalid value: -1: spec.networkTopology.highestTierAllowed in body should be greater than or equal to 0 [gang.volcano-network-topology]",
            "spec.subGroupPolicy[0].networkTopology.highestTierName: Forbidden: in subGroupPolicy 's': must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously [gang.volcano-network-topology]",
        ]
    );
}

#[test]
fn a_volcano_scheduler_name_is_the_gang_scheduler_where_volcano_runs() {
    let template = json!({"spec": {"schedulerName": "volcano", "containers": [{"name": "pytorch", "image": "i"}]}});
    let job = json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 3}},
            "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template.clone()},
            "Worker": {"replicas": 2, "template": template}}}});
    let queue = json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
        "status": {"state": "Open"}});
    // Volcano's Queues listed: no word.
    assert_eq!(run_with(job.clone(), None, &MemoryCluster::new(vec![queue])), (vec![], vec![]));
    // No Queue (no Volcano), or a list that fails: the warning stays, once per template.
    let (_, warnings) = run_with(job.clone(), None, &MemoryCluster::new(vec![]));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("\"volcano\" is kept instead of the gang scheduler"), "{warnings:?}");
    assert!(warnings[0].ends_with("[gang.scheduler-name]"), "{warnings:?}");
    let (_, warnings) = run_with(job, None, &MemoryCluster::failing("connection refused"));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}

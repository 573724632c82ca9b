use serde_json::{Value, json};

use super::*;
use crate::cluster::MemoryCluster;
use crate::engine::parse_settings;

fn label_msg() -> String {
    names::is_dns1123_label("X").remove(0)
}

fn subdomain_msg() -> String {
    names::is_dns1123_subdomain("X").remove(0)
}

fn review(op: &str, object: Value, old: Option<Value>) -> Review<'static> {
    let api = object["apiVersion"].as_str().unwrap_or_default().to_string();
    let (group, version) = api.rsplit_once('/').unwrap_or(("", &api));
    let request = json!({
        "operation": op, "namespace": "ml",
        "kind": {"group": group, "version": version, "kind": object["kind"]},
        "object": object, "oldObject": old.unwrap_or(Value::Null),
    });
    crate::review::review_request(&request).unwrap().unwrap()
}

fn run(settings: &Settings, object: Value, cluster: &dyn Cluster) -> Verdict {
    Claims::check(settings, &review("CREATE", object, None), cluster)
}

fn messages(v: &Verdict) -> Vec<String> {
    v.violations.iter().map(|x| x.to_string()).collect()
}

fn pod_group(claims: Value) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
           "metadata": {"name": "train-0", "namespace": "ml"},
           "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": claims}})
}

fn workload(claims: Value) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
           "metadata": {"name": "train", "namespace": "ml"},
           "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}},
                                            "resourceClaims": claims}]}})
}

fn source(kind: &str, name: &str) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": name, "namespace": "ml"}})
}

/// A cluster with the sources the examples use.
fn cluster_with(mut objects: Vec<Value>) -> MemoryCluster {
    objects.push(source("ResourceClaimTemplate", "gpu-template"));
    objects.push(source("ResourceClaim", "shared-nic"));
    MemoryCluster::new(objects).serving(["scheduling.k8s.io/v1alpha2"])
}

fn gpu() -> Value {
    json!({"name": "gpu", "resourceClaimTemplateName": "gpu-template"})
}

fn pod(claims: Value, requests: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w-0", "namespace": "ml"},
           "spec": {"schedulingGroup": {"podGroupName": "train-0"}, "resourceClaims": claims,
                    "containers": [{"name": "main", "image": "train:1", "resources": {"claims": requests}}]}})
}

fn names_of(claims: &[&str]) -> Value {
    Value::Array(claims.iter().map(|n| json!({"name": n})).collect())
}

#[test]
fn well_formed_group_claims_pass_quietly() {
    let claims = json!([gpu(), {"name": "nic", "resourceClaimName": "shared-nic"}]);
    for object in [pod_group(claims.clone()), workload(claims)] {
        let v = run(&Settings::default(), object, &cluster_with(vec![]));
        assert_eq!(v, Verdict::default());
    }
}

#[test]
fn group_claim_shape() {
    // Past the maximum the list gets one error: no per-claim checks, no lookups.
    let six = json!([{"name": "a"}, {"name": "a"}, {"name": "Bad_Name"}, {}, {}, {}]);
    let v = run(&Settings::default(), pod_group(six), &MemoryCluster::default());
    assert_eq!(messages(&v), vec!["spec.resourceClaims: Too many: 6: must have at most 4 items [claims.max-claims]"]);
    assert!(v.warnings.is_empty());

    let claims = json!([
        {"resourceClaimTemplateName": "t"},
        {"name": "Bad_Name", "resourceClaimName": "Bad_Claim"},
        {"name": "none"},
        {"name": "both", "resourceClaimName": "c", "resourceClaimTemplateName": "t"},
    ]);
    let v = run(&Settings::default(), pod_group(claims), &MemoryCluster::default());
    let (label, sub) = (label_msg(), subdomain_msg());
    assert_eq!(
        messages(&v),
        vec![
            "spec.resourceClaims[0].name: Required value [claims.claim-name]".to_string(),
            format!("spec.resourceClaims[1].name: Invalid value: \"Bad_Name\": {label} [claims.claim-name]"),
            format!(
                "spec.resourceClaims[1].resourceClaimName: Invalid value: \"Bad_Claim\": {sub} [claims.source-name]"
            ),
            "spec.resourceClaims[2]: Invalid value: \"\": must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]".to_string(),
            "spec.resourceClaims[3]: Invalid value: \"{resourceClaimName, resourceClaimTemplateName}\": must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]".to_string(),
        ]
    );
    // Only well-formed sources are looked up, each once: "t" (first used by entry 0), not
    // "c", which shares its entry with a template.
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate \"t\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
        ]
    );

    let claims = json!([
        {"name": "empty", "resourceClaimTemplateName": ""},
        {"name": "none", "resourceClaimTemplateName": "t"},
        {"name": "none", "resourceClaimTemplateName": "t"},
    ]);
    let v = run(&Settings::default(), pod_group(claims), &cluster_with(vec![]));
    assert_eq!(
        messages(&v),
        vec![
            format!("spec.resourceClaims[0].resourceClaimTemplateName: Invalid value: \"\": {sub} [claims.source-name]"),
            "spec.resourceClaims[2]: Duplicate value: {\"name\":\"none\",\"resourceClaimTemplateName\":\"t\"} [claims.claim-unique]".to_string(),
        ]
    );
}

#[test]
fn workload_template_paths() {
    let v = run(&Settings::default(), workload(json!([{"name": "gpu"}])), &MemoryCluster::default());
    assert_eq!(
        messages(&v),
        vec![
            "spec.podGroupTemplates[0].resourceClaims[0]: Invalid value: \"\": must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.claim-source]"
        ]
    );
    let v = run(&Settings::default(), workload(json!([gpu()])), &MemoryCluster::default());
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.podGroupTemplates[0].resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate \"gpu-template\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
        ]
    );
}

#[test]
fn pod_group_claims_are_immutable_and_updates_check_nothing_else() {
    let failing = MemoryCluster::failing("boom");
    let old = pod_group(json!([gpu()]));
    let changed = pod_group(json!([{"name": "gpu", "resourceClaimTemplateName": "other"}]));
    let v = Claims::check(&Settings::default(), &review("UPDATE", changed, Some(old.clone())), &failing);
    assert_eq!(
        messages(&v),
        vec![
            r#"spec.resourceClaims: Invalid value: [{"name":"gpu","resourceClaimTemplateName":"other"}]: field is immutable [claims.claims-immutable]"#
        ]
    );
    assert!(v.warnings.is_empty());

    // An unchanged object is never blocked (its finalizer must be removable), even when
    // the settings would reject it today, and nothing is looked up.
    let strict = Settings { allowed_claim_templates: Some(vec![]), ..Settings::default() };
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    let v = Claims::check(&strict, &review("UPDATE", labelled, Some(old)), &failing);
    assert_eq!(v, Verdict::default());

    // A missing list and an empty one are the same.
    let none = pod_group(Value::Null);
    let v = Claims::check(&Settings::default(), &review("UPDATE", pod_group(json!([])), Some(none)), &failing);
    assert_eq!(v, Verdict::default());
}

#[test]
fn status_names_match_the_spec() {
    let mut object = pod_group(json!([gpu()]));
    object["status"] = json!({"resourceClaimStatuses": [
        {"name": "gpu", "resourceClaimName": "train-0-gpu-x7k2p"},
        {"name": "nic"},
        {"name": "gpu", "resourceClaimName": "Bad"},
        {"name": "a"},
    ]});
    let v = run(&Settings::default(), object.clone(), &cluster_with(vec![]));
    assert_eq!(
        messages(&v),
        vec![
            "status.resourceClaimStatuses[1].name: Invalid value: \"nic\": must match the name of an entry in `spec.resourceClaims` [claims.status-claims]".to_string(),
            "status.resourceClaimStatuses[2]: Duplicate value: {\"name\":\"gpu\",\"resourceClaimName\":\"Bad\"} [claims.status-claims]".to_string(),
            format!(
                "status.resourceClaimStatuses[2].resourceClaimName: Invalid value: \"Bad\": {} [claims.status-claims]",
                subdomain_msg()
            ),
            "status.resourceClaimStatuses[3].name: Invalid value: \"a\": must match the name of an entry in `spec.resourceClaims` [claims.status-claims]".to_string(),
        ]
    );
    object["status"]["resourceClaimStatuses"].as_array_mut().unwrap().push(json!({"name": "b"}));
    let v = run(&Settings::default(), object, &cluster_with(vec![]));
    assert_eq!(
        messages(&v),
        vec!["status.resourceClaimStatuses: Too many: 5: must have at most 4 items [claims.status-claims]"]
    );
}

fn from_template(claims: Value) -> Value {
    let mut pg = pod_group(claims);
    pg["spec"]["podGroupTemplateRef"] =
        json!({"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}});
    pg
}

#[test]
fn a_pod_group_copies_its_template_claims() {
    let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
    let cluster = cluster_with(vec![workload(json!([gpu(), nic.clone()]))]);
    // Same claims in another order: the list is keyed by name.
    let v = run(&Settings::default(), from_template(json!([nic.clone(), gpu()])), &cluster);
    assert_eq!(v, Verdict::default());

    let v = run(&Settings::default(), from_template(json!([gpu()])), &cluster);
    assert_eq!(
        messages(&v),
        vec![
            r#"spec.resourceClaims: Invalid value: [{"name":"gpu","resourceClaimTemplateName":"gpu-template"}]: must equal the resourceClaims of Workload "train" template "workers": [{"name":"gpu","resourceClaimTemplateName":"gpu-template"},{"name":"nic","resourceClaimName":"shared-nic"}] [claims.template-claims]"#
        ]
    );

    let cluster = cluster_with(vec![workload(Value::Null)]);
    let v = run(&Settings::default(), from_template(Value::Null), &cluster);
    assert_eq!(v, Verdict::default());
    let v = run(&Settings::default(), from_template(json!([gpu()])), &cluster);
    assert_eq!(
        messages(&v),
        vec![
            r#"spec.resourceClaims: Invalid value: [{"name":"gpu","resourceClaimTemplateName":"gpu-template"}]: must equal the resourceClaims of Workload "train" template "workers": [] [claims.template-claims]"#
        ]
    );
}

#[test]
fn a_missing_workload_or_template_is_left_to_the_gang_set() {
    let v = run(&Settings::default(), from_template(json!([gpu()])), &cluster_with(vec![]));
    assert_eq!(v, Verdict::default());
    let mut other = workload(json!([gpu()]));
    other["spec"]["podGroupTemplates"][0]["name"] = json!("launcher");
    let v = run(&Settings::default(), from_template(json!([])), &cluster_with(vec![other]));
    assert_eq!(v, Verdict::default());
    // A malformed reference is not looked up at all.
    let mut bad = from_template(json!([]));
    bad["spec"]["podGroupTemplateRef"]["workload"]["workloadName"] = json!("Bad");
    let v = run(&Settings::default(), bad, &MemoryCluster::failing("boom"));
    assert_eq!(v, Verdict::default());
}

#[test]
fn failed_lookups_warn_or_fail_closed() {
    let failing = MemoryCluster::failing("connection refused");
    let v = run(&Settings::default(), from_template(json!([gpu()])), &failing);
    assert!(v.violations.is_empty());
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.podGroupTemplateRef.workload.workloadName: cannot look up Workload \"train\" to compare resourceClaims with its template: connection refused; the check was skipped [claims.template-claims]",
            "spec.resourceClaims[0].resourceClaimTemplateName: cannot look up ResourceClaimTemplate \"gpu-template\": connection refused; the check was skipped [claims.source-exists]",
        ]
    );
    let closed = Settings { fail_on_lookup_error: true, ..Settings::default() };
    let v = run(&closed, from_template(json!([gpu()])), &failing);
    assert_eq!(
        messages(&v),
        vec![
            "spec.podGroupTemplateRef.workload.workloadName: Internal error: cannot look up Workload \"train\" to compare resourceClaims with its template: connection refused [claims.template-claims]",
            "spec.resourceClaims[0].resourceClaimTemplateName: Internal error: cannot look up ResourceClaimTemplate \"gpu-template\": connection refused [claims.source-exists]",
        ]
    );
}

#[test]
fn at_most_32_distinct_sources_are_looked_up() {
    // 35 claims, 34 distinct templates (the last repeats the first), none of them there.
    let mut claims: Vec<Value> =
        (0..34).map(|i| json!({"name": format!("c{i}"), "resourceClaimTemplateName": format!("t{i:02}")})).collect();
    claims.push(json!({"name": "again", "resourceClaimTemplateName": "t00"}));
    let claims = Value::Array(claims);
    let cluster = cluster_with(vec![pod_group(Value::Null)]);
    let v = run(&Settings::default(), pod(claims.clone(), json!([])), &cluster);
    assert!(v.violations.is_empty());
    let warnings: Vec<String> =
        v.warnings.iter().filter(|w| w.rule == SOURCE_EXISTS).map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 33, "{warnings:#?}");
    assert_eq!(
        warnings[31],
        "spec.resourceClaims[31].resourceClaimTemplateName: ResourceClaimTemplate \"t31\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
    );
    assert_eq!(
        warnings[32],
        "spec.resourceClaims[32].resourceClaimTemplateName: cannot look up 2 more distinct claim sources: at most 32 are looked up per request; the check was skipped [claims.source-exists]"
    );
    let closed = Settings { fail_on_lookup_error: true, ..Settings::default() };
    let v = run(&closed, pod(claims, json!([])), &cluster);
    assert_eq!(
        messages(&v),
        vec![
            "spec.resourceClaims[32].resourceClaimTemplateName: Internal error: cannot look up 2 more distinct claim sources: at most 32 are looked up per request [claims.source-exists]"
        ]
    );
}

#[test]
fn missing_sources_warn_or_are_rejected() {
    let claims = json!([{"name": "a", "resourceClaimName": "gone"}, {"name": "b", "resourceClaimName": "gone"}]);
    let v = run(&Settings::default(), pod_group(claims.clone()), &MemoryCluster::default());
    assert!(v.violations.is_empty());
    // Each source is looked up and reported once.
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[0].resourceClaimName: ResourceClaim \"gone\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
        ]
    );
    let strict = Settings { require_claim_sources_exist: true, ..Settings::default() };
    let v = run(&strict, pod_group(claims), &MemoryCluster::default());
    assert_eq!(
        messages(&v),
        vec![
            "spec.resourceClaims[0].resourceClaimName: Not found: \"gone\": no ResourceClaim with this name in namespace \"ml\" (settings.requireClaimSourcesExist) [claims.source-exists]"
        ]
    );
    // A source in another namespace does not count.
    let mut elsewhere = source("ResourceClaim", "gone");
    elsewhere["metadata"]["namespace"] = json!("other");
    let v = run(
        &strict,
        pod_group(json!([{"name": "a", "resourceClaimName": "gone"}])),
        &MemoryCluster::new(vec![elsewhere]),
    );
    assert_eq!(v.violations.len(), 1);
}

fn tree(claims: Value) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "Workload", "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"compositePodGroupTemplates": [{"name": "job", "schedulingPolicy": {"basic": {}},
            "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": claims}]}]}})
}

#[test]
fn nested_templates_in_1_37() {
    let messages = |v: Verdict| v.violations.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let at = "spec.compositePodGroupTemplates[0].podGroupTemplates[0].resourceClaims";
    let update = review("UPDATE", tree(json!([gpu(), gpu()])), Some(tree(json!([gpu()]))));
    assert_eq!(
        messages(Claims::check(&Settings::default(), &update, &cluster_with(vec![]))),
        [format!(
            r#"{at}: Invalid value: [{{"name":"gpu","resourceClaimTemplateName":"gpu-template"}},{{"name":"gpu","resourceClaimTemplateName":"gpu-template"}}]: field is immutable [claims.claims-immutable]"#
        )]
    );
    let created = run(&Settings::default(), tree(json!([gpu(), gpu()])), &cluster_with(vec![]));
    assert_eq!(
        messages(created),
        [format!(
            "{at}[1]: Duplicate value: {{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"gpu-template\"}} [claims.claim-unique]"
        )]
    );
    // A v1alpha3 PodGroup finds its template at depth 2 in the v1alpha3 Workload.
    let pg = json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}},
                 "workloadRef": {"workloadName": "train", "templateName": "workers"}}});
    let v = run(&Settings::default(), pg, &MemoryCluster::new(vec![tree(json!([gpu()]))]));
    assert_eq!(
        messages(v),
        [
            "spec.resourceClaims: Invalid value: []: must equal the resourceClaims of Workload \"train\" template \"workers\": [{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"gpu-template\"}] [claims.template-claims]"
        ]
    );
}

#[test]
fn source_settings() {
    let settings = Settings {
        allow_direct_claims: false,
        allowed_claim_templates: Some(vec!["gpu-template".into(), "fpga-template".into()]),
        ..Settings::default()
    };
    let claims = json!([gpu(), {"name": "nic", "resourceClaimName": "shared-nic"}, {"name": "x", "resourceClaimTemplateName": "other"}]);
    let cluster = cluster_with(vec![source("ResourceClaimTemplate", "other")]);
    let v = run(&settings, pod_group(claims), &cluster);
    assert_eq!(
        messages(&v),
        vec![
            "spec.resourceClaims[1].resourceClaimName: Forbidden: claim \"shared-nic\" is shared directly, but only resourceClaimTemplateName is allowed (settings.allowDirectClaims is false) [claims.direct-claims]",
            "spec.resourceClaims[2].resourceClaimTemplateName: Unsupported value: \"other\": supported values: \"gpu-template\", \"fpga-template\" [claims.allowed-templates]",
        ]
    );
    // The same settings apply to a grouped Pod's own claims.
    let group = pod_group(json!([gpu()]));
    let object = pod(json!([gpu(), {"name": "nic", "resourceClaimName": "shared-nic"}]), names_of(&["gpu", "nic"]));
    let v = run(&settings, object, &cluster_with(vec![group]));
    assert_eq!(
        messages(&v),
        vec![
            "spec.resourceClaims[1].resourceClaimName: Forbidden: claim \"shared-nic\" is shared directly, but only resourceClaimTemplateName is allowed (settings.allowDirectClaims is false) [claims.direct-claims]"
        ]
    );
}

#[test]
fn a_pod_sharing_its_group_claims_passes_quietly() {
    let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
    let cluster = cluster_with(vec![pod_group(json!([gpu(), nic.clone()]))]);
    let mut object =
        pod(json!([gpu(), nic, {"name": "own", "resourceClaimTemplateName": "gpu-template"}]), names_of(&["gpu"]));
    // An init container's request counts too.
    object["spec"]["initContainers"] =
        json!([{"name": "init", "image": "i", "resources": {"claims": [{"name": "nic"}]}}]);
    let v = run(&Settings::default(), object, &cluster);
    assert!(v.violations.is_empty(), "{:?}", messages(&v));
    // "own" reuses the group's template under another name: the one warning.
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[2]: ResourceClaimTemplate \"gpu-template\" is PodGroup \"train-0\" claim \"gpu\", but this entry is named \"own\", so this Pod gets a claim of its own generated from the template; name it \"gpu\" to share the group's claim [claims.pod-claim-match]"
        ]
    );
}

#[test]
fn a_pod_claim_with_the_group_name_but_another_source_is_rejected() {
    let cluster = cluster_with(vec![pod_group(json!([gpu()])), source("ResourceClaimTemplate", "other")]);
    let object = pod(json!([{"name": "gpu", "resourceClaimTemplateName": "other"}]), names_of(&["gpu"]));
    let v = run(&Settings::default(), object, &cluster);
    assert_eq!(
        messages(&v),
        vec![
            r#"spec.resourceClaims[0]: Invalid value: {"name":"gpu","resourceClaimTemplateName":"other"}: has the name of PodGroup "train-0" claim {"name":"gpu","resourceClaimTemplateName":"gpu-template"} but another source, so this Pod would get a claim of its own instead of sharing the group's (copy the group's entry unchanged) [claims.pod-claim-match]"#
        ]
    );
    // The mismatch is the one report: the group claim is not also called unrequested.
    assert!(v.warnings.is_empty());
}

#[test]
fn a_shared_claim_under_another_name_warns() {
    let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
    let cluster = cluster_with(vec![pod_group(json!([nic]))]);
    let object = pod(json!([{"name": "net", "resourceClaimName": "shared-nic"}]), names_of(&["net"]));
    let v = run(&Settings::default(), object, &cluster);
    assert!(v.violations.is_empty());
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[0]: ResourceClaim \"shared-nic\" is PodGroup \"train-0\" claim \"nic\", but this entry is named \"net\", so the claim is reserved for this Pod on its own, not through the group; name it \"nic\" to share the group's claim [claims.pod-claim-match]"
        ]
    );
}

#[test]
fn group_claims_a_pod_does_not_request_warn() {
    let nic = json!({"name": "nic", "resourceClaimName": "shared-nic"});
    let cluster = cluster_with(vec![pod_group(json!([gpu(), nic]))]);
    let v = run(&Settings::default(), pod(json!([gpu()]), json!([])), &cluster);
    assert!(v.violations.is_empty());
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[0]: PodGroup \"train-0\" claim \"gpu\" is listed, but no container or init container requests it in resources.claims, so this Pod does not use the group's devices [claims.group-claim-requested]",
            r#"spec.resourceClaims: has no entry for PodGroup "train-0" claim {"name":"nic","resourceClaimName":"shared-nic"}, so this Pod cannot use the devices allocated for the group; add the entry unchanged and request it in a container's resources.claims [claims.group-claim-requested]"#,
        ]
    );
}

#[test]
fn a_missing_pod_group_warns_without_rejecting() {
    let v = run(&Settings::default(), pod(json!([gpu()]), names_of(&["gpu"])), &cluster_with(vec![]));
    assert!(v.violations.is_empty());
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.schedulingGroup.podGroupName: PodGroup \"train-0\" does not exist in namespace \"ml\" yet, so this Pod's resourceClaims could not be compared with the group's claims (a Pod shares a group claim only through an identical entry) [claims.pod-claim-match]"
        ]
    );
    let v = run(&Settings::default(), pod(json!([]), json!([])), &MemoryCluster::failing("timeout"));
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.schedulingGroup.podGroupName: cannot look up PodGroup \"train-0\" to compare this Pod's resourceClaims with the group's: timeout; the check was skipped [claims.pod-claim-match]"
        ]
    );
}

#[test]
fn unknown_requests_list_the_pod_claim_names_cut_like_a_value() {
    // 300 claims, two unknown requests: each error names the claims, sorted, but no more
    // than a value's 256 characters (the whole list would be 2,098 bytes per error).
    let claims: Vec<Value> = (0..300)
        .rev()
        .map(|i| json!({"name": format!("c-{i:03}"), "resourceClaimTemplateName": "gpu-template"}))
        .collect();
    let requests = json!([{"name": "c-007"}, {"name": "ghost"}, {"name": "phantom"}]);
    let cluster = cluster_with(vec![pod_group(Value::Null)]);
    let v = run(&Settings::default(), pod(Value::Array(claims), requests), &cluster);
    let first: Vec<String> = (0..36).map(|i| format!("c-{i:03}")).collect();
    let listed = format!("{}, c-03...(1842 more bytes)", first.join(", "));
    assert_eq!(
        messages(&v),
        vec![
            format!(
                "spec.containers[0].resources.claims[1]: Not found: \"ghost\": must be one of the names in pod.spec.resourceClaims: {listed} [claims.pod-claims]"
            ),
            format!(
                "spec.containers[0].resources.claims[2]: Not found: \"phantom\": must be one of the names in pod.spec.resourceClaims: {listed} [claims.pod-claims]"
            ),
        ]
    );
}

#[test]
fn pod_core_claim_rules() {
    let claims = json!([
        {"resourceClaimName": "a"},
        {"name": "x", "resourceClaimName": "a", "resourceClaimTemplateName": "t"},
        {"name": "x", "resourceClaimTemplateName": "t"},
        {"name": "Bad", "resourceClaimTemplateName": "T"},
        {"name": "none"},
    ]);
    let requests = json!([{"name": "x"}, {"name": "x"}, {"name": "ghost"}, {}, {"name": "x", "request": "R"}]);
    let cluster = cluster_with(vec![pod_group(Value::Null), source("ResourceClaim", "a")]);
    let v = run(&Settings::default(), pod(claims, requests), &cluster);
    let (label, sub) = (label_msg(), subdomain_msg());
    assert_eq!(
        messages(&v),
        vec![
            "spec.resourceClaims[0].name: Required value [claims.pod-claims]".to_string(),
            r#"spec.resourceClaims[1]: Invalid value: {"name":"x","resourceClaimName":"a","resourceClaimTemplateName":"t"}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified [claims.pod-claims]"#.to_string(),
            "spec.resourceClaims[2].name: Duplicate value: \"x\" [claims.pod-claims]".to_string(),
            format!("spec.resourceClaims[3].name: Invalid value: \"Bad\": {label} [claims.pod-claims]"),
            r#"spec.resourceClaims[4]: Invalid value: {"name":"none"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName` [claims.pod-claims]"#.to_string(),
            "spec.containers[0].resources.claims[1]: Duplicate value: \"x\" [claims.pod-claims]".to_string(),
            "spec.containers[0].resources.claims[2]: Not found: \"ghost\": must be one of the names in pod.spec.resourceClaims: Bad, none, x [claims.pod-claims]".to_string(),
            "spec.containers[0].resources.claims[3]: Required value [claims.pod-claims]".to_string(),
            format!("spec.containers[0].resources.claims[4].request: Invalid value: \"R\": {label} [claims.pod-claims]"),
            format!("spec.resourceClaims[3].resourceClaimTemplateName: Invalid value: \"T\": {sub} [claims.pod-claims]"),
        ]
    );
    // Well-formed sources are still looked up ("a" exists, "t" does not).
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[2].resourceClaimTemplateName: ResourceClaimTemplate \"t\" does not exist in namespace \"ml\", so Pods that use this claim stay Pending until it is created [claims.source-exists]"
        ]
    );
}

#[test]
fn pods_outside_a_group_and_pod_updates_are_left_alone() {
    let failing = MemoryCluster::failing("boom");
    let mut loose = pod(json!([{"name": "x"}]), names_of(&["ghost"]));
    loose["spec"]["schedulingGroup"] = Value::Null;
    assert_eq!(run(&Settings::default(), loose, &failing), Verdict::default());
    // A malformed group name is the gang set's to report, and is not looked up.
    let mut bad = pod(json!([]), json!([]));
    bad["spec"]["schedulingGroup"]["podGroupName"] = json!("Bad Name");
    assert_eq!(run(&Settings::default(), bad, &failing), Verdict::default());
    let p = pod(json!([{"name": "x"}]), json!([]));
    let v = Claims::check(&Settings::default(), &review("UPDATE", p.clone(), Some(p)), &failing);
    assert_eq!(v, Verdict::default());
}

#[test]
fn settings_are_validated() {
    let defaults = parse_settings::<Claims>(&Value::Null).unwrap();
    assert_eq!(defaults, Settings::default());
    assert!(defaults.allow_direct_claims && !defaults.require_claim_sources_exist && !defaults.fail_on_lookup_error);
    let parsed = parse_settings::<Claims>(&json!({"allowDirectClaims": false, "allowedClaimTemplates": ["gpu"],
        "requireClaimSourcesExist": true, "failOnLookupError": true}))
    .unwrap();
    assert_eq!(
        parsed,
        Settings {
            allow_direct_claims: false,
            allowed_claim_templates: Some(vec!["gpu".into()]),
            require_claim_sources_exist: true,
            fail_on_lookup_error: true,
            scheduling_api_versions: vec!["v1".into(), "v1beta1".into(), "v1alpha3".into(), "v1alpha2".into()],
        }
    );
    assert_eq!(
        parse_settings::<Claims>(&json!({"allowedClaimTemplates": ["gpu", "GPU_x"]})).unwrap_err(),
        format!(
            "invalid claims settings: allowedClaimTemplates[1]: \"GPU_x\" is not a ResourceClaimTemplate name: {}",
            subdomain_msg()
        )
    );
    assert_eq!(
        parse_settings::<Claims>(&json!({"allowDirectClaim": false})).unwrap_err(),
        "invalid claims settings: allowDirectClaim: unknown field `allowDirectClaim`, expected one of `allowDirectClaims`, `allowedClaimTemplates`, `requireClaimSourcesExist`, `failOnLookupError`, `schedulingApiVersions`"
    );
    let wrong = parse_settings::<Claims>(&json!({"allowDirectClaims": "no"})).unwrap_err();
    assert_eq!(wrong, "invalid claims settings: allowDirectClaims: invalid type: string \"no\", expected a boolean");
}

#[test]
fn every_rule_is_listed_once() {
    let ids: BTreeSet<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), RULES.len());
    assert!(RULES.iter().all(|r| r.id.starts_with("claims.")));
}

#[test]
fn missing_device_classes_warn_or_are_rejected() {
    let mut template = source("ResourceClaimTemplate", "gpus");
    template["spec"] = json!({"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
        {"name": "nic", "firstAvailable": [{"name": "fast", "deviceClassName": "rdma.example.com"},
                                           {"name": "slow", "deviceClassName": "gpu.nvidia.com"}]}]}}});
    let mut claim = source("ResourceClaim", "shared");
    claim["spec"] =
        json!({"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}});
    let class =
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"}});
    let claims =
        json!([{"name": "a", "resourceClaimTemplateName": "gpus"}, {"name": "b", "resourceClaimName": "shared"}]);
    let cluster = MemoryCluster::new(vec![template, claim, class]);
    let v = run(&Settings::default(), pod_group(claims.clone()), &cluster);
    assert!(v.violations.is_empty());
    // Each class is looked up and reported once, at the first claim that names it.
    assert_eq!(
        v.warning_messages(),
        vec![
            "spec.resourceClaims[0].resourceClaimTemplateName: request \"nic/fast\" of ResourceClaimTemplate \"gpus\" names DeviceClass \"rdma.example.com\", which does not exist, so Pods that use this claim stay Pending until it is created [claims.device-class-exists]"
        ]
    );
    let strict = Settings { require_claim_sources_exist: true, ..Settings::default() };
    assert_eq!(
        messages(&run(&strict, pod_group(claims.clone()), &cluster)),
        vec![
            "spec.resourceClaims[0].resourceClaimTemplateName: Not found: \"rdma.example.com\": no DeviceClass with this name, named by request \"nic/fast\" of ResourceClaimTemplate \"gpus\" (settings.requireClaimSourcesExist) [claims.device-class-exists]"
        ]
    );
    // The classes come from one fixed list, never a GET by a name the request supplies; a
    // failed list is a warning per class (or a rejection with failOnLookupError), never a finding.
    struct NoClasses(MemoryCluster, std::cell::RefCell<Vec<String>>);
    impl Cluster for NoClasses {
        fn get(&self, q: &Query, name: &str) -> Result<Option<Box<serde_json::value::RawValue>>, LookupError> {
            assert_ne!(q.kind, "DeviceClass", "a DeviceClass is never read by name");
            self.0.get(q, name)
        }
        fn list(&self, q: &Query) -> Result<String, LookupError> {
            self.1.borrow_mut().push(format!("{q:?}"));
            Err(LookupError::Failed("boom".into()))
        }
    }
    let failing = NoClasses(cluster, Default::default());
    let v = run(&strict, pod_group(claims), &failing);
    assert!(v.violations.is_empty(), "{:?}", messages(&v));
    assert_eq!(
        v.warning_messages(),
        [
            "spec.resourceClaims[0].resourceClaimTemplateName: cannot look up DeviceClass \"gpu.nvidia.com\": boom; the check was skipped [claims.device-class-exists]",
            "spec.resourceClaims[0].resourceClaimTemplateName: cannot look up DeviceClass \"rdma.example.com\": boom; the check was skipped [claims.device-class-exists]"
        ]
    );
    assert_eq!(*failing.1.borrow(), [format!("{:?}", crate::capacity::devices::device_class_query())]);
}

use serde_json::json;

use super::*;

fn tree() -> Workload {
    Workload::decode(
        Version::V1beta1,
        &json!({"spec": {"compositePodGroupTemplates": [{
            "name": "job", "schedulingPolicy": {"gang": {"minGroupCount": 2}},
            "schedulingConstraints": {"topology": [{"key": "zone"}]},
            "podGroupTemplates": [{"name": "leader", "schedulingPolicy": {"basic": {}},
                                   "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}],
            "compositePodGroupTemplates": [{"name": "inner", "schedulingPolicy": {"basic": {}},
                "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                       "disruptionMode": {"all": {}}}]}]
        }]}})
        .to_string(),
    )
    .unwrap()
}

#[test]
fn every_template_of_a_tree_is_one_group_spec_with_its_path_and_place() {
    let w = tree();
    let specs = w.group_specs();
    let summary: Vec<(&str, &str, &str, Option<usize>, usize)> = specs
        .iter()
        .map(|g| (g.path.as_str(), g.key.as_str(), g.name.unwrap_or_default(), g.parent, g.depth))
        .collect();
    assert_eq!(
        summary,
        [
            ("spec.compositePodGroupTemplates[0]", "/job", "job", None, 1),
            ("spec.compositePodGroupTemplates[0].podGroupTemplates[0]", "/job/leader", "leader", Some(0), 2),
            ("spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0]", "/job/inner", "inner", Some(0), 2),
            (
                "spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates[0]",
                "/job/inner/workers",
                "workers",
                Some(2),
                3
            ),
        ]
    );
    let origins: Vec<GroupOrigin> = specs.iter().map(|g| g.origin).collect();
    assert_eq!(
        origins,
        [
            GroupOrigin::CompositeTemplate,
            GroupOrigin::WorkloadTemplate,
            GroupOrigin::CompositeTemplate,
            GroupOrigin::WorkloadTemplate
        ]
    );
    // A composite's gang counts groups: it is not a pod gang size.
    assert_eq!((specs[0].scheduling_policy.gang_size(), specs[0].gang_min_count()), (Some(2), None));
    assert_eq!(specs[0].topology_keys().collect::<Vec<_>>(), ["zone"]);
    assert_eq!(specs[1].resource_claims.as_ref().map(Vec::len), Some(1));
    assert_eq!(specs[3].disruption_mode, Some(Disruption::Union { single: false, all: true }));
    assert_eq!(serde_json::to_value(specs[3].disruption_mode).unwrap(), json!({"all": {}}));
    assert!(!specs[3].is_136());
}

#[test]
fn v1beta1_and_v1alpha3_read_alike_and_v1alpha2_keeps_its_shapes() {
    let pg = json!({"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "disruptionMode": {"single": {}},
                             "workloadRef": {"workloadName": "w", "templateName": "t"}}});
    let beta = PodGroup::decode(Version::V1beta1, &pg.to_string()).unwrap();
    let alpha3 = PodGroup::decode(Version::V1alpha3, &pg.to_string()).unwrap();
    assert_eq!(beta, alpha3);
    let r = beta.template_ref().unwrap();
    assert_eq!((r.workload_name, r.template_name, r.path.as_str()), ("w", "t", "spec.workloadRef"));
    let old = PodGroup::decode(
        Version::V1alpha2,
        &json!({"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "disruptionMode": "PodGroup",
                        "podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}}}})
        .to_string(),
    )
    .unwrap();
    let r = old.template_ref().unwrap();
    assert_eq!((r.path.as_str(), r.template_field), ("spec.podGroupTemplateRef.workload", "podGroupTemplateName"));
    assert_eq!(old.group_spec().disruption_mode, Some(Disruption::V1alpha2("PodGroup")));
    assert!(old.group_spec().is_136());
}

#[test]
fn versions_serve_their_kinds() {
    assert!(Version::V1alpha3.serves("CompositePodGroup"));
    assert!(!Version::V1beta1.serves("CompositePodGroup"));
    assert!(Version::V1alpha2.serves("PodGroup") && !Version::V1alpha2.is_137());
    // Kubernetes 1.38's v1 is read as v1beta1 (the same JSON); CompositePodGroup stays v1alpha3.
    assert_eq!(Version::parse("v1"), Some(Version::V1));
    assert!(Version::V1.is_137() && Version::V1.serves("PodGroup") && !Version::V1.serves("CompositePodGroup"));
    assert_eq!(Version::V1.api_version(), "scheduling.k8s.io/v1");
    assert_eq!(Version::parse("v2"), None);
    assert_eq!(
        parse_lookup_versions(&crate::rules::names(&DEFAULT_LOOKUP_VERSIONS)).unwrap(),
        [Version::V1, Version::V1beta1, Version::V1alpha3, Version::V1alpha2]
    );
}

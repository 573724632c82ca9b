//! What a policy asks the cluster for is fixed by the module and its settings, never by the
//! request: policy-server keeps a watch-fed store for each distinct list query for its whole
//! life, so a query built from request data would let any tenant open watches at will.
//!
//! Objects naming 200 distinct made-up topology keys (in every place a key can be written) go
//! through every built module in the waPC host; every list they make must be one and the same
//! query, and every other lookup a plain get. The same through the real policy-server, counting
//! the watches its API server sees, is `make e2e-policy-server`.

use std::collections::BTreeSet;

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_harness::host::{Policy, validate_payload};
use gangwarden_harness::payloads;
use gangwarden_harness::{POLICIES, repo_root};
use serde_json::json;

const KEYS: usize = 200;

#[test]
fn two_hundred_made_up_keys_make_one_list_query() {
    let nodes = MemoryCluster::new(payloads::everyday_nodes());
    let mut lists: BTreeSet<String> = BTreeSet::new();
    let mut rejections = 0;
    for (name, dir) in POLICIES {
        let policy = match Policy::load(name, &repo_root().join(dir)) {
            Ok(policy) => policy,
            Err(e) => panic!("{e}"),
        };
        let mut policy_lists = 0;
        for i in 0..KEYS {
            let object = payloads::object_with_made_up_key(i);
            let payload = validate_payload(
                &gangwarden_core::request::admission_request(&format!("uid-{i}"), "CREATE", &object, None),
                &json!({}),
            )
            .expect("a payload");
            let evaluation = policy.call("validate", &payload, nodes.clone()).expect("the module runs");
            let answer = evaluation.answer.expect("a verdict, not a guest error");
            let key = payloads::made_up_key(i);
            let message = answer["message"].as_str().unwrap_or_default();
            if message.contains(&format!("no node carries the label \"{key}\"")) {
                rejections += 1;
            }
            for call in &evaluation.host_calls {
                match call.operation.as_str() {
                    "list_resources_all" | "list_resources_by_namespace" => {
                        policy_lists += 1;
                        lists.insert(format!("{} {}", call.operation, call.request));
                    }
                    "get_resource" => {}
                    other => panic!("{name}: unexpected host call {other}"),
                }
                assert!(
                    !call.request.to_string().contains(&key),
                    "{name}: the request's key reached a lookup: {}",
                    call.request
                );
            }
        }
        // The topology policy and the bundle look every key up; gang, claims and run-policy
        // list nothing.
        let looks_up = matches!(*name, "topology" | "bundle");
        assert_eq!(policy_lists, if looks_up { KEYS } else { 0 }, "{name}: one list per request that names a key");
    }
    assert_eq!(rejections, 2 * KEYS, "topology and the bundle reject every made-up key");
    let node_list = json!({"api_version": "v1", "kind": "Node", "label_selector": null, "field_selector": null,
        "field_masks": gangwarden_core::rules::topology::node_field_masks(&Default::default())});
    assert_eq!(
        lists.into_iter().collect::<Vec<_>>(),
        [format!("list_resources_all {node_list}")],
        "every list of every policy is the one Node query, whatever the keys"
    );
}

/// The claims policy (and the bundle) checks the DeviceClasses that claim templates name from
/// one list of every class, the topology rules' query: 200 made-up class names make one list
/// query, and no class is ever read by name.
#[test]
fn two_hundred_made_up_device_classes_make_one_list_query() {
    let mut lists: BTreeSet<String> = BTreeSet::new();
    for (name, dir) in POLICIES.iter().filter(|(name, _)| matches!(*name, "claims" | "bundle")) {
        let policy = Policy::load(name, &repo_root().join(dir)).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..KEYS {
            let class = format!("made-up-{i}.example.com");
            let template = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpus", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": class}}]}}}});
            let object = json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                "metadata": {"name": "g", "namespace": "ml"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}]}});
            let payload = validate_payload(
                &gangwarden_core::request::admission_request(&format!("uid-{i}"), "CREATE", &object, None),
                &json!({}),
            )
            .expect("a payload");
            let evaluation =
                policy.call("validate", &payload, MemoryCluster::new(vec![template])).expect("the module runs");
            let answer = evaluation.answer.expect("a verdict, not a guest error");
            assert!(answer["warnings"].to_string().contains(&class), "{name}: {answer}");
            for call in &evaluation.host_calls {
                assert!(
                    !call.request.to_string().contains(&class),
                    "{name}: the class reached a lookup: {}",
                    call.request
                );
                if call.operation.starts_with("list_") {
                    lists.insert(format!("{} {}", call.operation, call.request));
                }
            }
        }
    }
    let query = gangwarden_core::capacity::devices::device_class_query();
    let class_list = json!({"api_version": query.api_version, "kind": query.kind, "label_selector": null,
        "field_selector": null, "field_masks": query.field_masks});
    assert_eq!(lists.into_iter().collect::<Vec<_>>(), [format!("list_resources_all {class_list}")]);
}

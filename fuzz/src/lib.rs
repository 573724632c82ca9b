//! What every fuzz target checks: each rule set answers any input without panicking, with a
//! well-formed response, in under 50 ms for inputs up to 64 KiB.

use std::time::{Duration, Instant};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::engine::{self, Response, RuleSet};
use gangwarden_core::rules::bundle::Bundle;
use gangwarden_core::rules::claims::Claims;
use gangwarden_core::rules::gang::Gang;
use gangwarden_core::rules::run_policy::RunPolicyRules;
use gangwarden_core::rules::topology::Topology;
use serde_json::json;

/// The bound on one evaluation of an input of at most [`BOUNDED_LEN`] bytes.
pub const MAX_TIME: Duration = Duration::from_millis(50);
pub const BOUNDED_LEN: usize = 64 * 1024;

/// Objects for the lookups to find: Nodes (with taints and allocatable resources, for the
/// capacity rules), a Workload, a PodGroup, a claim template, a Trainer runtime and a
/// RuntimeClass.
pub fn cluster() -> MemoryCluster {
    let mut objects: Vec<serde_json::Value> = (0..8)
        .map(|i| {
            let taints = if i % 3 == 0 { json!([{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]) } else { json!([]) };
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{i}"),
                        "labels": {"topology.example.com/rack": format!("r{}", i / 4)}},
                   "spec": {"taints": taints},
                   "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": format!("{}", i % 2 * 8),
                                              "ephemeral-storage": "1Ti", "hugepages-2Mi": "1Gi", "pods": "110"}}})
        })
        .collect();
    objects.push(json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-gang"},
        "spec": {"mlPolicy": {"numNodes": 2, "torch": {}}, "podGroupPolicy": {"coscheduling": {}},
            "template": {"spec": {"replicatedJobs": [{"name": "node",
                "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "t",
                        "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}}}}]}}}}));
    objects.push(json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
        "handler": "nvidia", "scheduling": {"tolerations": [{"key": "sku", "operator": "Exists"}]}}));
    objects.push(json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}}]}}));
    objects.push(json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ml"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "t"}]}}));
    objects.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ml"}, "spec": {}}));
    MemoryCluster::new(objects)
}

fn well_formed(r: &Response) {
    assert_eq!(r.accepted, r.message.is_none(), "an answer has a message exactly when it rejects: {r:?}");
    if let Some(code) = r.code {
        assert!(code == 400 || code == 500, "unexpected code {code}");
    }
}

fn timed<R: RuleSet>(payload: &[u8], cluster: &MemoryCluster) {
    let start = Instant::now();
    let response = engine::evaluate::<R>(payload, cluster);
    let took = start.elapsed();
    well_formed(&response);
    if payload.len() <= BOUNDED_LEN {
        assert!(took < MAX_TIME, "{} took {took:?} on {} bytes", R::NAME, payload.len());
    }
}

/// The `validate` payload through every rule set and the bundle.
pub fn evaluate_everywhere(payload: &[u8], cluster: &MemoryCluster) {
    timed::<Gang>(payload, cluster);
    timed::<Claims>(payload, cluster);
    timed::<Topology>(payload, cluster);
    timed::<RunPolicyRules>(payload, cluster);
    timed::<Bundle>(payload, cluster);
}

/// The `validate_settings` payload through every rule set: an answer, never a panic.
pub fn settings_everywhere(payload: &[u8]) {
    let _ = engine::validate_settings::<Gang>(payload);
    let _ = engine::validate_settings::<Claims>(payload);
    let _ = engine::validate_settings::<Topology>(payload);
    let _ = engine::validate_settings::<RunPolicyRules>(payload);
    let _ = engine::validate_settings::<Bundle>(payload);
}

//! The native cost of the checks `make bench` times in wasm: the same requests through
//! `engine::evaluate`, and the floor, parsing the payload alone. `make bench` reads the
//! medians from criterion's output.

use criterion::{Criterion, criterion_group, criterion_main};
use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::engine::evaluate;
use gangwarden_core::rules::bundle::Bundle;
use gangwarden_core::rules::claims::Claims;
use gangwarden_core::rules::gang::Gang;
use gangwarden_core::rules::run_policy::RunPolicyRules;
use gangwarden_core::rules::topology::Topology;
use std::hint::black_box;

// The e2e bench's requests, shared as source so both measure the same bytes.
#[path = "../../harness/src/payloads.rs"]
#[allow(dead_code, reason = "the hostile payloads and large objects are used by the e2e side only")]
mod payloads;

fn evaluate_as(policy: &str, payload: &[u8], cluster: &MemoryCluster) -> bool {
    let response = match policy {
        "gang" => evaluate::<Gang>(payload, cluster),
        "claims" => evaluate::<Claims>(payload, cluster),
        "topology" => evaluate::<Topology>(payload, cluster),
        "run-policy" => evaluate::<RunPolicyRules>(payload, cluster),
        _ => evaluate::<Bundle>(payload, cluster),
    };
    response.accepted
}

fn native(c: &mut Criterion) {
    let mut group = c.benchmark_group("native");
    let floor = payloads::baseline_payload(1024);
    group.bench_function("floor-decode", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&floor)).is_ok())
    });
    let (labelled, unlabelled) = payloads::queue_scenarios();
    for s in payloads::request_scenarios().into_iter().chain([labelled, unlabelled]) {
        assert!(evaluate_as(s.policy, &s.payload, &s.cluster), "{} must be accepted", s.name);
        group.bench_function(payloads::bench_id(&s.name), |b| {
            b.iter(|| evaluate_as(s.policy, black_box(&s.payload), &s.cluster))
        });
    }
    group.finish();
}

criterion_group!(benches, native);
criterion_main!(benches);

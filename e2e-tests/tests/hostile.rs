//! Hostile and huge payloads through every built module: each gets a clean answer (400 when it
//! cannot be read), never a trap or a guest error, and the answer stays short however many
//! items break a rule. How long each takes is measured by `make bench` / `make bench-check`.

use gangwarden_core::request::resource_plural;
use gangwarden_harness::host::Policy;
use gangwarden_harness::payloads::{self, Answer};
use gangwarden_harness::{POLICIES, metadata, repo_root};
use serde_json::Value;

fn policies() -> Vec<Policy> {
    POLICIES
        .iter()
        .map(|(name, dir)| Policy::load(name, &repo_root().join(dir)).expect("run `make policies` first"))
        .collect()
}

/// Whether the policy's webhook rules send it the payload's kind (its `metadata.yml`).
fn registers(policy: &str, payload: &[u8]) -> bool {
    let dir = POLICIES.iter().find(|(name, _)| *name == policy).map(|(_, dir)| *dir).expect("a policy");
    let metadata = metadata::read_metadata(dir).expect("metadata.yml");
    // Only the request's kind is read: the rest may be numbers no Value holds.
    #[derive(Default, serde::Deserialize)]
    struct Kind {
        #[serde(default)]
        group: String,
        #[serde(default)]
        kind: String,
    }
    #[derive(Default, serde::Deserialize)]
    struct Request {
        #[serde(default)]
        kind: Kind,
    }
    #[derive(Default, serde::Deserialize)]
    struct Payload {
        #[serde(default)]
        request: Request,
    }
    let payload: Payload = serde_json::from_slice(payload).unwrap_or_default();
    let (group, resource) = (payload.request.kind.group, resource_plural(&payload.request.kind.kind));
    metadata.rules.iter().any(|r| r.api_groups.contains(&group) && r.resources.contains(&resource))
}

/// The policy's answer; a guest error (a trap or an `Err` from the guest) fails the test.
fn answer(policy: &Policy, payload: &[u8], what: &str) -> Value {
    let cluster = gangwarden_core::cluster::MemoryCluster::new(payloads::everyday_nodes());
    let evaluation = policy.call("validate", payload, cluster).expect("instantiate");
    let answer = evaluation.answer.unwrap_or_else(|e| panic!("{} on {what}: {e}", policy.name));
    assert!(answer["accepted"].is_boolean(), "{} on {what}: {answer}", policy.name);
    answer
}

/// Messages and warnings stay short: at most 20 listed items of at most 1 KiB, then a count.
fn assert_bounded(policy: &Policy, answer: &Value, what: &str) {
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.len() <= 24 * 1024, "{} on {what}: a {} byte message", policy.name, message.len());
    let warnings = answer["warnings"].as_array().map_or(0, Vec::len);
    assert!(warnings <= 21, "{} on {what}: {warnings} warnings", policy.name);
}

#[test]
fn hostile_payloads_get_clean_answers() {
    let policies = policies();
    let mut wrong = Vec::new();
    for hostile in payloads::hostile_payloads() {
        for policy in &policies {
            let answer = answer(policy, &hostile.payload, hostile.name);
            assert_bounded(policy, &answer, hostile.name);
            let (accepted, code) = (answer["accepted"].as_bool(), answer["code"].as_u64());
            let ok = match hostile.answer {
                Answer::BadRequest => accepted == Some(false) && code == Some(400),
                Answer::BadObject if registers(&policy.name, &hostile.payload) => {
                    accepted == Some(false) && code == Some(400)
                }
                Answer::BadObject => accepted == Some(true) && answer["message"].is_null(),
                Answer::Accepted => accepted == Some(true) && answer["message"].is_null(),
                Answer::Verdict => code.is_none(),
            };
            if !ok {
                wrong.push(format!("{} on {}: expected {:?}, got {answer}", policy.name, hostile.name, hostile.answer));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// What the bundle answers to each large object: the one `Too many` error where upstream caps
/// the list, otherwise a verdict on the items.
#[test]
fn large_objects_get_bounded_answers() {
    let policies = policies();
    for scenario in payloads::large_scenarios() {
        for policy in &policies {
            let answer = answer(policy, &scenario.payload, &scenario.name);
            assert_bounded(policy, &answer, &scenario.name);
            assert!(answer["code"].is_null(), "{} on {}: {answer}", policy.name, scenario.name);
        }
    }
}

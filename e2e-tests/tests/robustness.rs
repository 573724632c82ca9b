//! No input makes a policy panic (a trap, in wasm) or fail with a guest error.
//!
//! Every corpus document and case object is mutated field by field (each value replaced by
//! null, numbers at the edges of i32/i64, strings, lists and maps) and run through the bundle's
//! rule sets natively, as CREATE and as UPDATE against the original; a sample of the mutants
//! also goes through the built bundle module.

use std::panic::{AssertUnwindSafe, catch_unwind};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::engine::{Response, evaluate};
use gangwarden_core::request::admission_request;
use gangwarden_core::rules::bundle::Bundle;
use gangwarden_harness::case::{Case, case_files};
use gangwarden_harness::corpus;
use gangwarden_harness::host::Policy;
use gangwarden_harness::{POLICIES, repo_root};
use serde_json::{Value, json};

fn replacements() -> Vec<Value> {
    vec![Value::Null, json!(-1), json!(2147483648_i64), json!(1.5), json!("x"), json!([null]), json!({})]
}

/// Every path in `v` (object keys and list indexes), depth first.
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                prefix.push(Value::from(k.as_str()));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                prefix.push(Value::from(i));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn set_at(root: &mut Value, path: &[Value], value: Value) {
    let mut cur = root;
    for step in path {
        cur = match (cur, step) {
            (Value::Object(map), Value::String(k)) => match map.get_mut(k) {
                Some(next) => next,
                None => return,
            },
            (Value::Array(items), Value::Number(i)) => match i.as_u64().and_then(|i| items.get_mut(i as usize)) {
                Some(next) => next,
                None => return,
            },
            _ => return,
        };
    }
    *cur = value;
}

fn objects() -> Vec<Value> {
    let mut out = Vec::new();
    for c in corpus::cases("bundle").expect("corpus") {
        out.extend(c.case.object);
    }
    for (policy, _) in POLICIES {
        for path in case_files(policy) {
            let case = Case::load(&path).expect("case");
            out.extend(case.object);
            out.extend(case.old_object);
        }
    }
    // Many cases share objects; each distinct one is enough.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|o| seen.insert(o.to_string()));
    out
}

fn payload(operation: &str, object: &Value, old: Option<&Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({"request": admission_request("fuzz", operation, object, old), "settings": {}}))
        .expect("payload")
}

fn well_formed(r: &Response) -> bool {
    r.accepted == r.message.is_none()
}

#[test]
fn mutated_objects_never_panic() {
    let cluster = MemoryCluster::new(objects());
    let mut mutants = 0;
    for original in objects() {
        let mut all = Vec::new();
        paths(&original, &mut Vec::new(), &mut all);
        for path in &all {
            for replacement in replacements() {
                let mut mutant = original.clone();
                set_at(&mut mutant, path, replacement.clone());
                // UPDATE runs the immutability rules; null is the replacement they trip on.
                let update = replacement.is_null().then_some(("UPDATE", Some(&original)));
                for (op, old) in [("CREATE", None)].into_iter().chain(update) {
                    let payload = payload(op, &mutant, old);
                    let result = catch_unwind(AssertUnwindSafe(|| evaluate::<Bundle>(&payload, &cluster)));
                    match result {
                        Ok(r) => assert!(well_formed(&r), "ill-formed answer {r:?} for {path:?} = {replacement}"),
                        Err(_) => panic!("panicked with {path:?} = {replacement} in {original}"),
                    }
                    mutants += 1;
                }
            }
        }
    }
    assert!(mutants > 10_000, "only {mutants} mutants: the corpus or cases went missing");
    println!("{mutants} mutants evaluated");
}

#[test]
fn mutated_objects_never_make_the_module_fail() {
    let bundle = Policy::load("bundle", &repo_root()).expect("run `make policies` first");
    let cluster = MemoryCluster::new(objects());
    let mut calls = 0;
    for (n, original) in objects().into_iter().enumerate() {
        let mut all = Vec::new();
        paths(&original, &mut Vec::new(), &mut all);
        // A sample: every path of every 7th object, with three kinds of bad value.
        if n % 7 != 0 {
            continue;
        }
        for path in &all {
            for replacement in [Value::Null, json!(-9223372036854775808_i64), json!([null])] {
                let mut mutant = original.clone();
                set_at(&mut mutant, path, replacement);
                let evaluation =
                    bundle.call("validate", &payload("CREATE", &mutant, None), cluster.clone()).expect("call");
                let answer = evaluation.answer.unwrap_or_else(|e| panic!("{path:?}: {e}"));
                assert!(answer["accepted"].is_boolean(), "{path:?}: {answer}");
                calls += 1;
            }
        }
    }
    assert!(calls > 300, "only {calls} calls");
}

/// A policy keeps nothing from one request to the next: every bundle case answered again and
/// again on one instance (as `kwctl bench` calls it, and `bench-case --one-instance`) gets the
/// answer and the host calls of a fresh instance (as policy-server calls it), each time.
#[test]
fn one_instance_answers_every_request_as_a_fresh_one() {
    let bundle = Policy::load("bundle", &repo_root()).expect("run `make policies` first");
    let mut cases = 0;
    for file in case_files("bundle") {
        let case = Case::load(&file).expect("case");
        let payload = case.payload("one-instance", &case.settings).expect("payload");
        let fresh = bundle.call("validate", &payload, case.cluster()).expect("call");
        let instance = bundle.instance(case.cluster()).expect("instance");
        for round in 0..3 {
            let again = instance.evaluate("validate", &payload, std::time::Duration::ZERO);
            assert_eq!(again.answer, fresh.answer, "{}: call {round}", file.display());
            assert_eq!(again.host_calls, fresh.host_calls, "{}: call {round}", file.display());
        }
        cases += 1;
    }
    assert!(cases > 50, "only {cases} bundle cases");
}

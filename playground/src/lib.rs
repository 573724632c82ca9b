//! The browser playground's engine: [`gangwarden_manifests`] behind three calls that take and
//! return JSON text, exported to JavaScript with wasm-bindgen. No rule or reading of manifests
//! lives here; the functions only translate, so the native tests and the e2e fidelity test call
//! exactly what the page calls.

use gangwarden_core::engine;
use gangwarden_core::rules::claims::Claims;
use gangwarden_core::rules::gang::Gang;
use gangwarden_core::rules::run_policy::RunPolicyRules;
use gangwarden_core::rules::topology::Topology;
use gangwarden_manifests::{Input, InputError, KubernetesVersion, RuleSetName, read_documents};
use serde_json::{Value, json};
use wasm_bindgen::prelude::wasm_bindgen;

/// Checks the manifests of `input` (the JSON form of [`Input`]) and returns the report as JSON:
/// the engine's [`gangwarden_manifests::Report`], where each document some rule set mutated
/// also carries its `object` as read (for showing the mutation as a diff); or
/// `{"errors": [{file, line, column, message}]}` when the input cannot be checked.
/// `clock` gives microseconds; with one, each rule set's time is reported.
pub fn evaluate_json(input: &str, clock: Option<&mut dyn FnMut() -> f64>) -> String {
    let input: Input = match serde_json::from_str(input) {
        Ok(i) => i,
        Err(e) => return errors(vec![InputError { file: "input".into(), line: 0, column: 0, message: e.to_string() }]),
    };
    let report = match clock {
        Some(clock) => gangwarden_manifests::check_with_clock(&input, clock),
        None => gangwarden_manifests::check(&input),
    };
    match report {
        Err(e) => errors(e),
        Ok(report) => {
            let mut value = serde_json::to_value(&report).unwrap_or(Value::Null);
            attach_mutated_originals(&input, &mut value);
            value.to_string()
        }
    }
}

fn errors(errors: Vec<InputError>) -> String {
    json!({ "errors": errors }).to_string()
}

/// Adds `object` (the document as read) to each document report that has a mutation.
fn attach_mutated_originals(input: &Input, report: &mut Value) {
    let Some(documents) = report["documents"].as_array_mut() else { return };
    for doc in documents {
        let mutated = doc["results"].as_array().is_some_and(|rs| rs.iter().any(|r| !r["mutatedObject"].is_null()));
        if !mutated {
            continue;
        }
        let Some(file) = input.files.iter().find(|f| doc["file"] == f.name.as_str()) else { continue };
        let original = read_documents(file).ok().and_then(|docs| {
            docs.into_iter().find(|d| doc["document"] == d.index && doc["item"] == json!(d.item)).map(|d| d.value)
        });
        doc["object"] = original.unwrap_or(Value::Null);
    }
}

/// Validates one rule set's settings (`ruleSet`: `gang`, `topology`, `claims`, `runPolicy`)
/// with the policy's own `validate_settings`, answering as the policy does:
/// `{"valid": true}` or `{"valid": false, "message": "..."}`.
pub fn validate_settings_json(rule_set: &str, settings: &str) -> String {
    let payload = settings.as_bytes();
    let result = match RuleSetName::parse(rule_set) {
        Some(RuleSetName::Gang) => engine::validate_settings::<Gang>(payload),
        Some(RuleSetName::Topology) => engine::validate_settings::<Topology>(payload),
        Some(RuleSetName::Claims) => engine::validate_settings::<Claims>(payload),
        Some(RuleSetName::RunPolicy) => engine::validate_settings::<RunPolicyRules>(payload),
        None => Err(format!("unknown rule set {rule_set:?}: use gang, topology, claims or runPolicy")),
    };
    match result {
        Ok(()) => json!({"valid": true}),
        Err(message) => json!({"valid": false, "message": message}),
    }
    .to_string()
}

/// What this engine is: the gangwarden version, the rule sets with their rule ids, and the
/// Kubernetes releases whose scheduling API versions it knows.
pub fn version_info_json() -> String {
    let rule_sets: Vec<Value> = RuleSetName::ALL
        .into_iter()
        .map(|r| {
            let rules = gangwarden_core::rules::ALL
                .iter()
                .find(|(policy, _)| *policy == r.policy())
                .map(|(_, rules)| rules.iter().map(|i| i.id).collect::<Vec<_>>())
                .unwrap_or_default();
            json!({"name": r.as_str(), "policy": r.policy(), "rules": rules})
        })
        .collect();
    let kubernetes: Vec<Value> = KubernetesVersion::ALL
        .into_iter()
        .map(|v| json!({"release": v.as_str(), "schedulingVersions": v.scheduling_versions()}))
        .collect();
    json!({"version": env!("CARGO_PKG_VERSION"), "ruleSets": rule_sets, "kubernetes": kubernetes}).to_string()
}

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: a page and a worker both have it.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// [`evaluate_json`] for JavaScript, timed with `performance.now()`.
#[wasm_bindgen]
pub fn evaluate(input: &str) -> String {
    let mut clock = || performance_now() * 1000.0;
    evaluate_json(input, Some(&mut clock))
}

/// [`validate_settings_json`] for JavaScript.
#[wasm_bindgen]
pub fn validate_settings(rule_set: &str, settings: &str) -> String {
    validate_settings_json(rule_set, settings)
}

/// [`version_info_json`] for JavaScript.
#[wasm_bindgen]
pub fn version_info() -> String {
    version_info_json()
}

#[cfg(test)]
mod tests;

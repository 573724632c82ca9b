//! Fidelity of the browser playground: every e2e case, corpus document and example that can
//! be written as manifests goes through the playground's own entry point
//! (`gangwarden_playground::evaluate_json`, what the page's worker calls) as the page would
//! send it, and through the built `.wasm` policy in the waPC host. Accepted, code, message,
//! warnings, mutated object and patch must be identical; so must a settings refusal.
//! Each comparison is its own test, named `fidelity::<policy>::<case>`.

use std::sync::{Arc, OnceLock};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_harness::case::{Case, case_files};
use gangwarden_harness::host::Policy;
use gangwarden_harness::playground::{State, case_state, engine_input, rule_set_of};
use gangwarden_harness::{POLICIES, corpus, repo_root};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};

type Shared = Arc<OnceLock<Result<Policy, String>>>;

/// The bundle runs its rule sets in this order and joins their answers.
const BUNDLE_ORDER: [&str; 4] = ["gang", "claims", "runPolicy", "topology"];

/// The parts of a policy answer the playground must reproduce.
fn answer_parts(answer: &Value) -> Value {
    let warnings = if answer["warnings"].is_null() { json!([]) } else { answer["warnings"].clone() };
    json!({
        "accepted": answer["accepted"],
        "code": answer["code"],
        "message": answer["message"],
        "warnings": warnings,
        "mutated_object": answer["mutated_object"],
    })
}

/// The engine's per-rule-set results for the one checked document, as the policy (one rule
/// set, or the bundle's merge of all four) answers.
fn playground_answer(policy: &str, report: &Value) -> Result<Value, String> {
    if let Some(errors) = report.get("errors") {
        return Err(format!("the playground refused the input: {errors}"));
    }
    let documents = report["documents"].as_array().cloned().unwrap_or_default();
    let [doc] = documents.as_slice() else {
        return Err(format!("expected one checked document, got {}: {report}", documents.len()));
    };
    let results = doc["results"].as_array().cloned().unwrap_or_default();
    let find = |name: &str| results.iter().find(|r| r["ruleSet"] == name);
    check_patch(doc, &results)?;
    if let Some(key) = rule_set_of(policy) {
        let r = find(key).ok_or_else(|| format!("no {key} result in {doc}"))?;
        return Ok(json!({
            "accepted": r["accepted"], "code": r["code"], "message": r["message"],
            "warnings": r["warnings"].as_array().into_iter().flatten().map(|w| w["message"].clone()).collect::<Vec<_>>(),
            "mutated_object": r["mutatedObject"],
        }));
    }
    let ordered: Vec<&Value> =
        BUNDLE_ORDER.iter().map(|k| find(k).ok_or_else(|| format!("no {k} result"))).collect::<Result<_, _>>()?;
    if let Some(refused) = ordered.iter().find(|r| !r["code"].is_null()) {
        return Ok(
            json!({"accepted": false, "code": refused["code"], "message": refused["message"], "warnings": [], "mutated_object": null}),
        );
    }
    let accepted = ordered.iter().all(|r| r["accepted"] == true);
    // The bundle runs the metadata rules once, before its rule sets; each rule set's own
    // result lists them too (every policy runs them), so they are taken from the first.
    let is_meta = |v: &Value| v["rule"].as_str().is_some_and(|r| r.starts_with("meta."));
    let meta: Vec<&str> = ordered
        .first()
        .and_then(|r| r["violations"].as_array())
        .into_iter()
        .flatten()
        .filter(|v| is_meta(v))
        .filter_map(|v| v["message"].as_str())
        .collect();
    let messages: Vec<&str> = if meta.is_empty() {
        ordered.iter().filter_map(|r| r["message"].as_str()).collect()
    } else {
        let own = ordered.iter().flat_map(|r| r["violations"].as_array().into_iter().flatten().filter(|v| !is_meta(v)));
        meta.into_iter().chain(own.filter_map(|v| v["message"].as_str())).collect()
    };
    let warnings: Vec<Value> = ordered
        .iter()
        .flat_map(|r| r["warnings"].as_array().cloned().unwrap_or_default())
        .map(|w| w["message"].clone())
        .collect();
    let mutated = if accepted {
        ordered.iter().rev().find(|r| !r["mutatedObject"].is_null()).map_or(Value::Null, |r| r["mutatedObject"].clone())
    } else {
        Value::Null
    };
    Ok(json!({
        "accepted": accepted,
        "code": null,
        "message": if messages.is_empty() { Value::Null } else { Value::from(messages.join("; ")) },
        "warnings": warnings,
        "mutated_object": mutated,
    }))
}

/// Each reported patch turns the document as read into the reported mutated object.
fn check_patch(doc: &Value, results: &[Value]) -> Result<(), String> {
    for r in results.iter().filter(|r| !r["mutatedObject"].is_null()) {
        let patch: json_patch::Patch =
            serde_json::from_value(r["patch"].clone()).map_err(|e| format!("the patch is not RFC 6902: {e}"))?;
        let mut object = doc["object"].clone();
        json_patch::patch(&mut object, &patch).map_err(|e| format!("the patch does not apply: {e}"))?;
        if object != r["mutatedObject"] {
            return Err(format!("the patch gives {object}, not the mutated object {}", r["mutatedObject"]));
        }
    }
    Ok(())
}

/// How the bundle names a rule set's settings error (`invalid bundle settings: gang.<detail>`).
fn bundle_settings_message(message: &str) -> String {
    for (key, _) in gangwarden_harness::playground::RULE_SETS {
        if let Some(detail) = message.strip_prefix(&format!("invalid {key} settings: ")) {
            return format!("invalid bundle settings: {key}.{detail}");
        }
    }
    message.to_string()
}

/// Whether the policy's `metadata.yml` rules (what its webhook is sent) match `object`.
fn webhook_sends(policy_dir: &str, object: &Value) -> Result<bool, String> {
    let path = repo_root().join(policy_dir).join("metadata.yml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let metadata: Value = serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let resource = gangwarden_core::request::resource_plural(object["kind"].as_str().unwrap_or_default());
    let has = |rule: &Value, key: &str, want: &str| {
        rule[key].as_array().into_iter().flatten().any(|v| v.as_str().is_some_and(|v| v == want || v == "*"))
    };
    Ok(metadata["rules"].as_array().into_iter().flatten().any(|rule| {
        has(rule, "apiGroups", group) && has(rule, "apiVersions", version) && has(rule, "resources", &resource)
    }))
}

fn compare(policy_name: &str, dir: &str, policy: &Policy, uid: &str, case: &Case, state: &State) -> Result<(), String> {
    let input = engine_input(state)?;
    let report: Value = serde_json::from_str(&gangwarden_playground::evaluate_json(&input.to_string(), None))
        .map_err(|e| format!("the playground answered something that is not JSON: {e}"))?;
    let skipped = report["skipped"].as_array().map_or(0, Vec::len);
    if report["documents"].as_array().is_some_and(Vec::is_empty) && skipped == 1 {
        // The playground leaves out what no rule set guards. That is faithful only when the
        // apiserver would not send the object to the policy at all.
        let object = case.object.clone().unwrap_or_default();
        return if webhook_sends(dir, &object)? {
            Err(format!("the playground skips an object the policy's webhook rules send it: {report}"))
        } else {
            Ok(())
        };
    }
    let settings = serde_json::to_vec(&case.settings).map_err(|e| e.to_string())?;
    let validity = policy.call("validate_settings", &settings, MemoryCluster::default())?.answer?;
    if validity["valid"] == false {
        let want = validity["message"].as_str().unwrap_or_default();
        let got: Vec<String> = report["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["message"].as_str())
            .map(|m| if rule_set_of(policy_name).is_some() { m.to_string() } else { bundle_settings_message(m) })
            .collect();
        return if got == [want] {
            Ok(())
        } else {
            Err(format!("the policy refuses the settings with {want:?}; the playground reported {got:?}"))
        };
    }
    let answer = policy.call("validate", &case.payload(uid, &case.settings)?, case.cluster())?.answer?;
    let want = answer_parts(&answer);
    let got = playground_answer(policy_name, &report)?;
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "the .wasm policy answered\n{want:#}\nthe playground answered\n{got:#}\nfrom the panes\n{state:#?}"
        ))
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let mut not_manifests = Vec::new();
    let mut add = |trials: &mut Vec<Trial>,
                   shared: &Shared,
                   policy: &'static str,
                   dir: &'static str,
                   name: String,
                   case: Case| {
        match case_state(policy, &case) {
            Ok(state) => {
                let shared = Arc::clone(shared);
                let uid = name.clone();
                trials.push(Trial::test(format!("fidelity::{policy}::{name}"), move || {
                    let loaded = shared.get_or_init(|| Policy::load(policy, &repo_root().join(dir)));
                    let p = loaded.as_ref().map_err(|e| Failed::from(e.clone()))?;
                    compare(policy, dir, p, &uid, &case, &state)
                        .map_err(|e| Failed::from(format!("{}\n{e}", case.description)))
                }));
            }
            Err(why) => not_manifests.push(format!("{policy}::{name}: {why}")),
        }
    };
    for &(policy, dir) in POLICIES {
        let shared: Shared = Arc::new(OnceLock::new());
        for path in case_files(policy) {
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            match Case::load(&path) {
                Ok(case) => add(&mut trials, &shared, policy, dir, stem, case),
                Err(e) => trials.push(Trial::test(format!("fidelity::{policy}::{stem}"), move || Err(Failed::from(e)))),
            }
        }
        match corpus::cases(policy) {
            Ok(cases) => {
                for c in cases {
                    add(&mut trials, &shared, policy, dir, format!("corpus::{}", c.name), c.case);
                }
            }
            Err(e) => trials.push(Trial::test(format!("fidelity::{policy}::corpus"), move || Err(Failed::from(e)))),
        }
        if policy == "bundle" {
            let mut examples: Vec<_> = std::fs::read_dir(repo_root().join("examples"))
                .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            examples.sort();
            for path in examples.into_iter().filter(|p| p.extension().is_some_and(|e| e == "yaml")) {
                let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
                match Case::load(&path) {
                    Ok(case) => add(&mut trials, &shared, policy, dir, format!("examples::{stem}"), case),
                    Err(e) => {
                        trials.push(Trial::test(format!("fidelity::examples::{stem}"), move || Err(Failed::from(e))))
                    }
                }
            }
        }
    }
    // Cases that test the waPC transport itself (raw bytes, hand-made requests, DELETE,
    // failing lookups) have no manifest form; the e2e suite covers them against the modules.
    eprintln!(
        "playground fidelity: {} comparisons; {} cases have no manifest form (set GW_LIST_NOT_MANIFESTS=1 to list them)",
        trials.len(),
        not_manifests.len()
    );
    if std::env::var_os("GW_LIST_NOT_MANIFESTS").is_some() {
        for n in &not_manifests {
            eprintln!("  {n}");
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

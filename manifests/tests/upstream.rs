//! The apiserver's own validation cases for Workload, PodGroup and CompositePodGroup (1.36
//! and 1.37), written as manifests in `tests/upstream/*.yaml` with the field paths and error
//! types the upstream tests expect. gangwarden's answer (what every face gives: the metadata
//! rules and the four rule sets, default settings) must be the apiserver's, field by field
//! and type by type, unless the case lists the difference with its reason and gangwarden's
//! answer. A listed difference that no longer occurs fails too, so the list stays true.

use std::collections::BTreeMap;
use std::path::Path;

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::engine::{check, parse_settings};
use gangwarden_core::request::admission_request;
use gangwarden_core::review::review_request;
use gangwarden_core::rules::bundle::Bundle;
use gangwarden_manifests::{SourceFile, read_documents};
use serde_json::{Map, Value};

/// Why gangwarden may answer otherwise than the upstream test expects (see the tables' header).
const REASONS: &[&str] = &["feature-gate", "stricter", "defaulted", "declarative"];

/// RFC 7386: objects merge, `null` removes, anything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else { return };
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// `(path, type)` pairs, sorted: the upstream matcher's view of an error list.
fn errors(list: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (e["path"].as_str().unwrap_or_default().to_string(), e["type"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    out.sort();
    out
}

/// gangwarden's violations on `object` (an UPDATE from `old`), less the ignored rules, each
/// distinct one once (every rule set runs the metadata rules; the bundle runs them once).
fn gangwarden(
    object: &Value,
    old: Option<&Value>,
    ignore: &Map<String, Value>,
) -> Result<Vec<(String, String)>, String> {
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    let request = admission_request("upstream", operation, object, old);
    let review = review_request(&request).map_err(|e| e.0)?.ok_or("not reviewed")?;
    let settings = parse_settings::<Bundle>(&Value::Null)?;
    let verdict = check::<Bundle>(&settings, &review, &MemoryCluster::default());
    let mut out: Vec<(String, String)> = verdict
        .violations
        .iter()
        .filter(|v| !ignore.contains_key(v.rule))
        .map(|v| (v.error.path.to_string(), format!("{:?}", v.error.error_type())))
        .collect();
    out.sort();
    Ok(out)
}

fn shown(list: &[(String, String)]) -> String {
    let items: Vec<String> = list.iter().map(|(p, t)| format!("{{path: {p}, type: {t}}}")).collect();
    format!("[{}]", items.join(", "))
}

#[test]
fn gangwarden_answers_the_apiservers_validation_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstream");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("tests/upstream").map(|e| e.expect("entry").path()).collect();
    files.sort();
    let (mut failures, mut agreed, mut reasons) = (Vec::new(), 0, BTreeMap::<String, usize>::new());
    let mut total = 0;
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).expect("read");
        let table = read_documents(&SourceFile::new(&name, text)).expect("a YAML table").remove(0).value;
        let ignore = table["ignore"].as_object().cloned().unwrap_or_default();
        for case in table["cases"].as_array().expect("cases") {
            total += 1;
            let label = format!("{name}: {}", case["name"].as_str().unwrap_or("?"));
            let mut object = table["base"].clone();
            if let Some(patch) = case.get("patch") {
                merge_patch(&mut object, patch);
            }
            let old = case.get("old").map(|patch| {
                let mut old = table["base"].clone();
                merge_patch(&mut old, patch);
                old
            });
            let got = match gangwarden(&object, old.as_ref(), &ignore) {
                Ok(got) => got,
                Err(e) => {
                    failures.push(format!("{label}: not checked: {e}"));
                    continue;
                }
            };
            let apiserver = errors(&case["apiserver"]);
            let differs = &case["differs"];
            if differs.is_null() {
                if got == apiserver {
                    agreed += 1;
                } else {
                    failures.push(format!(
                        "{label}: the apiserver expects {}, gangwarden answers {}; fix the rule, or list the difference with its reason",
                        shown(&apiserver),
                        shown(&got)
                    ));
                }
                continue;
            }
            let reason = differs["reason"].as_str().unwrap_or_default();
            let listed = errors(&differs["gangwarden"]);
            if !REASONS.contains(&reason) || differs["why"].as_str().is_none_or(str::is_empty) {
                failures.push(format!("{label}: a difference needs a reason ({REASONS:?}) and a why"));
            } else if reason == "feature-gate"
                && !case["gates"].as_object().is_some_and(|g| g.values().any(|v| v == false))
            {
                failures.push(format!("{label}: a feature-gate difference names the gate the case turns off"));
            } else if listed == apiserver {
                failures.push(format!("{label}: the listed difference is no difference; remove it"));
            } else if got != listed {
                failures.push(format!(
                    "{label}: the table lists gangwarden's answer as {}, it is {} (the apiserver expects {})",
                    shown(&listed),
                    shown(&got),
                    shown(&apiserver)
                ));
            } else {
                *reasons.entry(reason.to_string()).or_default() += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{} of {total} upstream cases:\n{}", failures.len(), failures.join("\n"));
    assert!(total >= 150, "only {total} upstream cases: tables went missing");
    println!(
        "{total} upstream validation cases: {agreed} answered as the apiserver does; listed differences {reasons:?}"
    );
}

#[test]
fn merge_patches_follow_rfc_7386() {
    let mut v = serde_json::json!({"a": {"b": 1, "c": [1]}, "d": 2});
    merge_patch(&mut v, &serde_json::json!({"a": {"b": null, "c": [2]}, "e": {"f": 3}}));
    assert_eq!(v, serde_json::json!({"a": {"c": [2]}, "d": 2, "e": {"f": 3}}));
}

//! The manifest engine (what `gangwarden check` and the playground run) answers exactly as
//! the built `.wasm` policies do: for every e2e case object and every corpus document, each
//! rule set's `accepted`, `code`, `message`, `warnings` and mutated object are compared with
//! the answer of that rule set's policy module, given the same object, settings and cluster.
//!
//! It also proves that every rule's example message in `gangwarden rules` (and the rule
//! reference) is one the rule really produces on some case.

use std::collections::{BTreeMap, BTreeSet};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::request::{admission_request, resource_plural};
use gangwarden_core::review::GroupVersionKind;
use gangwarden_core::rules::catalog;
use gangwarden_harness::case::{Case, case_files};
use gangwarden_harness::host::Policy;
use gangwarden_harness::{POLICIES, corpus, repo_root};
use gangwarden_manifests::{Input, RuleSetName, RuleSetResult, SourceFile, check};
use serde_json::{Value, json};

/// One object to compare, with what both sides are given.
struct Subject {
    name: String,
    object: Value,
    old_object: Option<Value>,
    cluster: Vec<Value>,
    /// Bundle-format settings.
    settings: Value,
    rule_sets: Vec<RuleSetName>,
    /// The apiVersions the case's cluster serves (empty: every version).
    served_api_versions: Vec<String>,
}

fn rule_sets_of(policy: &str) -> Vec<RuleSetName> {
    match RuleSetName::parse(policy) {
        Some(r) => vec![r],
        None => RuleSetName::ALL.to_vec(),
    }
}

/// The case settings in the bundle's format.
fn bundle_settings(policy: &str, settings: &Value) -> Value {
    match RuleSetName::parse(policy) {
        Some(r) if !settings.is_null() => json!({ r.as_str(): settings }),
        _ => settings.clone(),
    }
}

/// Why a case is not a manifest the engine can be given, if it is not.
fn not_a_manifest(case: &Case) -> Option<&'static str> {
    let expect = case.expect.as_ref()?;
    if case.request.is_some() || case.raw_payload.is_some() {
        return Some("a whole request or raw payload, not an object");
    }
    if case.cluster_error.is_some() {
        return Some("a failing cluster: the engine's cluster is the given documents");
    }
    if expect.settings_error.is_some() {
        return Some("settings the policies refuse: an input error for the engine");
    }
    let object = case.object.as_ref()?;
    if object["kind"].as_str().unwrap_or_default().is_empty() {
        return Some("an object with no kind is not a manifest");
    }
    let name = |o: &Value| (o["kind"].clone(), o["metadata"]["name"].clone(), o["metadata"]["namespace"].clone());
    match (case.operation.as_deref().unwrap_or("CREATE"), &case.old_object) {
        ("CREATE", None) => None,
        ("UPDATE", Some(old)) if name(old) == name(object) => None,
        _ => Some("an operation a manifest pair does not express"),
    }
}

fn subjects() -> (Vec<Subject>, usize) {
    let mut out = Vec::new();
    let mut left_out = 0;
    for (policy, _) in POLICIES {
        for path in case_files(policy) {
            let case = Case::load(&path).expect("case");
            if not_a_manifest(&case).is_some() {
                left_out += 1;
                continue;
            }
            let stem = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
            out.push(Subject {
                name: format!("{policy}::{stem}"),
                object: case.object.clone().expect("object"),
                old_object: case.old_object.clone(),
                cluster: cluster_objects(&case),
                settings: bundle_settings(policy, &case.settings),
                rule_sets: rule_sets_of(policy),
                served_api_versions: case.served_api_versions.clone().unwrap_or_default(),
            });
        }
    }
    for c in corpus::cases("bundle").expect("corpus") {
        if not_a_manifest(&c.case).is_some() {
            left_out += 1;
            continue;
        }
        out.push(Subject {
            name: format!("corpus::{}", c.name),
            object: c.case.object.clone().expect("object"),
            old_object: None,
            cluster: cluster_objects(&c.case),
            settings: Value::Null,
            rule_sets: RuleSetName::ALL.to_vec(),
            served_api_versions: c.case.served_api_versions.clone().unwrap_or_default(),
        });
    }
    (out, left_out)
}

/// The engine's own findings, as (rule, kind, message), on the cases a manifest pair cannot
/// express (an UPDATE that renames the object): the catalogue check below counts them, as
/// the e2e cases hold the modules to the same messages.
fn findings_of_other_operations() -> Vec<(String, String, String)> {
    use gangwarden_core::engine::{check, parse_settings};
    use gangwarden_core::review::review_request;
    use gangwarden_core::rules::bundle::Bundle;
    let mut out = Vec::new();
    for (policy, _) in POLICIES {
        for path in case_files(policy) {
            let case = Case::load(&path).expect("case");
            if not_a_manifest(&case) != Some("an operation a manifest pair does not express") {
                continue;
            }
            let (Some(object), Ok(settings)) =
                (&case.object, parse_settings::<Bundle>(&bundle_settings(policy, &case.settings)))
            else {
                continue;
            };
            let operation = case.operation.as_deref().unwrap_or("CREATE");
            let request = admission_request("case", operation, object, case.old_object.as_ref());
            let Ok(Some(review)) = review_request(&request) else { continue };
            let cluster = MemoryCluster::new(cluster_objects(&case));
            let kind = review.kind.kind.clone();
            for v in check::<Bundle>(&settings, &review, &cluster).violations {
                out.push((v.rule.to_string(), kind.clone(), v.to_string()));
            }
        }
    }
    out
}

fn cluster_objects(case: &Case) -> Vec<Value> {
    case.cluster.iter().cloned().chain(case.node_sets.iter().flat_map(|n| n.nodes())).collect()
}

/// Whether the policy's webhook rules (its metadata.yml) send it objects of this kind.
fn routed(policy: &str, object: &Value) -> bool {
    let path = repo_root().join("policies").join(policy).join("metadata.yml");
    let metadata: Value = serde_norway::from_str(&std::fs::read_to_string(&path).expect("metadata.yml")).expect("yaml");
    let gvk = GroupVersionKind::of_object(object);
    let plural = resource_plural(&gvk.kind);
    let has = |list: &Value, item: &str| list.as_array().into_iter().flatten().any(|v| v == item || v == "*");
    metadata["rules"].as_array().into_iter().flatten().any(|rule| {
        has(&rule["apiGroups"], &gvk.group)
            && has(&rule["apiVersions"], &gvk.version)
            && has(&rule["resources"], &plural)
    })
}

fn json_file(name: &str, value: &Value) -> SourceFile {
    SourceFile::new(name, serde_json::to_string_pretty(value).expect("json"))
}

/// What a policy module answered, in the engine's terms.
#[derive(Debug, PartialEq)]
struct Answer {
    accepted: bool,
    code: Option<u64>,
    message: Option<String>,
    warnings: Vec<String>,
    mutated_object: Option<Value>,
}

fn engine_answer(r: &RuleSetResult) -> Answer {
    Answer {
        accepted: r.accepted,
        code: r.code.map(u64::from),
        message: r.message.clone(),
        warnings: r.warnings.iter().map(|w| w.message.clone()).collect(),
        mutated_object: r.mutated_object.clone(),
    }
}

fn module_answer(answer: &Value) -> Answer {
    Answer {
        accepted: answer["accepted"].as_bool().unwrap_or(false),
        code: answer["code"].as_u64(),
        message: answer["message"].as_str().map(String::from),
        warnings: answer["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(String::from))
            .collect(),
        mutated_object: answer.get("mutated_object").filter(|m| !m.is_null()).cloned(),
    }
}

/// Compares one subject, counting the answers compared; returns the engine's findings as
/// (rule, kind, message).
fn compare(
    subject: &Subject,
    policies: &BTreeMap<RuleSetName, Policy>,
    answers: &mut usize,
) -> Result<Vec<(String, String, String)>, String> {
    let input = Input {
        files: vec![json_file("object.json", &subject.object)],
        old: subject.old_object.iter().map(|o| json_file("old.json", o)).collect(),
        cluster: vec![json_file(
            "cluster.json",
            &json!({"apiVersion": "v1", "kind": "List", "items": subject.cluster}),
        )],
        settings: subject.settings.clone(),
        rule_sets: subject.rule_sets.clone(),
        served_api_versions: Some(subject.served_api_versions.clone()),
        ..Input::default()
    };
    let report = check(&input).map_err(|e| format!("the engine refused the input: {e:?}"))?;
    let operation = if subject.old_object.is_some() { "UPDATE" } else { "CREATE" };
    let request = admission_request(&subject.name, operation, &subject.object, subject.old_object.as_ref());
    let mut cluster = subject.cluster.clone();
    cluster.push(subject.object.clone());
    let mut findings = Vec::new();
    for rule_set in &subject.rule_sets {
        let policy = &policies[rule_set];
        let settings = &subject.settings[rule_set.as_str()];
        let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).expect("payload");
        let cluster = MemoryCluster::new(cluster.clone()).serving(subject.served_api_versions.iter().cloned());
        let evaluation = policy.call("validate", &payload, cluster)?;
        let module = module_answer(&evaluation.answer?);
        let engine = match report.documents.first() {
            Some(doc) => {
                if doc.operation != operation {
                    return Err(format!("the engine checked a {} instead of a {operation}", doc.operation));
                }
                let result = doc.results.iter().find(|r| r.rule_set == *rule_set).ok_or("rule set missing")?;
                findings.extend(
                    result
                        .violations
                        .iter()
                        .chain(&result.warnings)
                        .map(|f| (f.rule.clone(), doc.kind.clone(), f.message.clone())),
                );
                engine_answer(result)
            }
            // A kind no rule set guards: the module lets it through untouched, or its webhook
            // rules never send it that kind.
            None if !routed(rule_set.policy(), &subject.object) => continue,
            None => Answer { accepted: true, code: None, message: None, warnings: Vec::new(), mutated_object: None },
        };
        if engine != module {
            return Err(format!("{rule_set}: the engine answered\n{engine:#?}\nthe module answered\n{module:#?}"));
        }
        *answers += 1;
    }
    Ok(findings)
}

#[test]
fn the_engine_answers_as_the_modules_do() {
    let root = repo_root();
    let policies: BTreeMap<RuleSetName, Policy> = RuleSetName::ALL
        .into_iter()
        .map(|r| {
            let dir = root.join("policies").join(r.policy());
            (r, Policy::load(r.policy(), &dir).expect("run `make policies` first"))
        })
        .collect();
    let (subjects, left_out) = subjects();
    let mut failures = Vec::new();
    // rule id -> kinds it was reported on, and the messages it produced
    let mut produced: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    let mut compared = 0;
    for subject in &subjects {
        match compare(subject, &policies, &mut compared) {
            Ok(findings) => {
                for (rule, kind, message) in findings {
                    let entry = produced.entry(rule).or_default();
                    entry.0.insert(kind);
                    entry.1.insert(message);
                }
            }
            Err(e) => failures.push(format!("{}: {e}", subject.name)),
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), subjects.len(), failures.join("\n\n"));
    assert!(subjects.len() > 300, "only {} objects compared: cases or corpus went missing", subjects.len());
    println!("{} objects, {compared} rule-set answers identical; {left_out} cases are not manifests", subjects.len());
    for (rule, kind, message) in findings_of_other_operations() {
        let entry = produced.entry(rule).or_default();
        entry.0.insert(kind);
        entry.1.insert(message);
    }
    for doc in catalog::DOCS {
        let messages = produced.get(doc.id).map(|(_, m)| m);
        assert!(
            messages.is_some_and(|m| m.contains(doc.example)),
            "{}: the example message in core/src/rules/catalog.rs is produced by no case; it produced {messages:#?}",
            doc.id
        );
    }
    // GANGWARDEN_DUMP_MESSAGES=<file>: every rule's kinds and messages, to pick examples from.
    if let Ok(path) = std::env::var("GANGWARDEN_DUMP_MESSAGES") {
        std::fs::write(path, serde_json::to_string_pretty(&produced).expect("json")).expect("dump");
    }
}

//! The files that ship with each policy agree with each other and with the code: metadata.yml,
//! questions-ui.yml and the Settings types, artifacthub-pkg.yml, the deploy/ manifests, the
//! READMEs' rule tables and `kwctl run` examples. Most of them are generated (`make packaging`);
//! these tests fail when one is out of date or says something the policy does not accept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::rules::ALL;
use gangwarden_harness::host::{Policy, admission_request};
use gangwarden_harness::kwctl::parse_session;
use gangwarden_harness::metadata::{self, Metadata, Question};
use gangwarden_harness::packaging;
use gangwarden_harness::{POLICIES, deploy_manifest, repo_root};
use serde_json::{Value, json};

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every built module, compiled once for all the tests here.
fn modules() -> &'static BTreeMap<&'static str, Policy> {
    static MODULES: OnceLock<BTreeMap<&'static str, Policy>> = OnceLock::new();
    MODULES.get_or_init(|| {
        POLICIES
            .iter()
            .map(|(name, dir)| (*name, Policy::load(name, &repo_root().join(dir)).unwrap_or_else(|e| panic!("{e}"))))
            .collect()
    })
}

fn load_policy(name: &str) -> &'static Policy {
    &modules()[name]
}

/// What the policy's own `validate_settings`, run in the built module, says about `settings`.
fn validate_settings(policy: &Policy, settings: &Value) -> Result<(), String> {
    let payload = serde_json::to_vec(settings).expect("settings");
    let answer = policy.call("validate_settings", &payload, MemoryCluster::default())?.answer?;
    if answer["valid"] == true { Ok(()) } else { Err(format!("{settings} refused: {}", answer["message"])) }
}

#[test]
fn generated_files_are_up_to_date() {
    let stale: Vec<String> = packaging::stale_files().expect("generate").iter().map(|p| metadata::shown(p)).collect();
    assert!(stale.is_empty(), "out of date, run `make packaging`: {stale:?}");
}

#[test]
fn questions_cover_exactly_the_settings_with_their_defaults() {
    for (name, dir) in POLICIES {
        let (defaults, serde_names) = metadata::settings_truth(name).expect("settings");
        let listed: Vec<&str> = defaults.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(
            listed.iter().copied().collect::<BTreeSet<_>>(),
            serde_names.iter().copied().collect::<BTreeSet<_>>(),
            "{name}: the defaults list other settings than the Settings type reads"
        );
        let questions = metadata::read_questions(dir).unwrap_or_else(|e| panic!("{e}"));
        let asked: BTreeMap<String, Question> = metadata::leaf_questions(&questions.questions);
        let truth = metadata::leaves(&defaults);
        assert_eq!(
            asked.keys().collect::<Vec<_>>(),
            truth.keys().collect::<Vec<_>>(),
            "{name}: questions-ui.yml must ask for every setting and nothing else"
        );
        let policy = load_policy(name);
        for (variable, q) in &asked {
            assert_eq!(&q.default, &truth[variable], "{name}: default of {variable}");
            assert!(!q.label.is_empty() && !q.description.is_empty() && !q.group.is_empty(), "{name}: {variable}");
            let type_fits = match q.kind.as_str() {
                "boolean" => q.default.is_boolean(),
                "int" => q.default.is_null() || q.default.is_i64(),
                "string" => q.default.is_null() || q.default.is_string(),
                "enum" => {
                    q.options.as_ref().is_some_and(|o| !o.is_empty()) && (q.default.is_null() || q.default.is_string())
                }
                "array[" => q.default.is_null() || q.default.is_array(),
                "sequence[" => q.default.is_array() && q.sequence_questions.as_ref().is_some_and(|f| !f.is_empty()),
                _ => false,
            };
            assert!(type_fits, "{name}: {variable} has type {:?} and default {}", q.kind, q.default);
            if let Some(fields) = &q.sequence_questions {
                check_sequence_item(name, policy, q, fields);
            }
            for option in q.options.iter().flatten() {
                let settings = metadata::settings_from_questions(&[Question { default: json!(option), ..q.clone() }]);
                validate_settings(policy, &settings).unwrap_or_else(|e| panic!("{name}: option of {variable}: {e}"));
            }
        }
        let form = metadata::settings_from_questions(&questions.questions);
        assert_eq!(form, defaults, "{name}: the form's defaults");
        validate_settings(policy, &form).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The item a `sequence[` form adds (its fields' defaults, a required text field filled in)
/// validates, and so does the item with each option of each field.
fn check_sequence_item(name: &str, policy: &Policy, q: &Question, fields: &[Question]) {
    let mut item = serde_json::Map::new();
    for field in fields {
        assert!(!field.label.is_empty() && !field.description.is_empty(), "{name}: {}.{}", q.variable, field.variable);
        let filled = field.required == Some(true) && field.default == json!("");
        item.insert(field.variable.clone(), if filled { json!("example.com/key") } else { field.default.clone() });
    }
    let settings_with =
        |item: Value| metadata::settings_from_questions(&[Question { default: json!([item]), ..q.clone() }]);
    validate_settings(policy, &settings_with(Value::Object(item.clone())))
        .unwrap_or_else(|e| panic!("{name}: the default item of {}: {e}", q.variable));
    for field in fields {
        for option in field.options.iter().flatten() {
            let mut with_option = item.clone();
            with_option.insert(field.variable.clone(), json!(option));
            validate_settings(policy, &settings_with(Value::Object(with_option)))
                .unwrap_or_else(|e| panic!("{name}: option {option:?} of {}.{}: {e}", q.variable, field.variable));
        }
    }
}

/// Which policy a `registry://<ociUrl>:v<version>` module is, by the metadata that names it.
fn policy_of_module(module: &str, metadata: &BTreeMap<&str, Metadata>) -> &'static str {
    let (name, _) = POLICIES
        .iter()
        .find(|(name, _)| metadata[name].image().is_ok_and(|image| module == format!("registry://{image}")))
        .unwrap_or_else(|| panic!("module {module} is no policy of this repository at its current version"));
    name
}

fn check_rules_and_resources(what: &str, spec: &Value, m: &Metadata) {
    let resources = serde_json::to_value(&m.context_aware_resources).expect("resources");
    let declared = |v: &Value| if v.is_null() { json!([]) } else { v.clone() };
    assert_eq!(
        declared(&spec["contextAwareResources"]),
        resources,
        "{what}: contextAwareResources differ from metadata.yml"
    );
}

#[test]
fn deploy_manifests_match_metadata_and_their_settings_validate() {
    let metadata: BTreeMap<&str, Metadata> =
        POLICIES.iter().map(|(n, d)| (*n, metadata::read_metadata(d).unwrap_or_else(|e| panic!("{e}")))).collect();
    let modules = modules();
    let mut modes_seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut files: Vec<_> = std::fs::read_dir(repo_root().join("deploy"))
        .expect("deploy/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for path in files {
        let file = metadata::shown(&path);
        assert!(path.extension().is_some_and(|e| e == "yaml"), "{file}: deploy/ holds only .yaml manifests");
        let manifest = yaml(&path);
        assert_eq!(manifest["apiVersion"], "policies.kubewarden.io/v1", "{file}");
        let spec = &manifest["spec"];
        let mode = spec["mode"].as_str().unwrap_or("protect");
        assert!(metadata::MODES.contains(&mode), "{file}: mode {mode}");
        // A version of a guarded kind the rules do not list (a newer scheduling.k8s.io) still
        // reaches the policy, converted by the apiserver.
        assert_eq!(spec["matchPolicy"], "Equivalent", "{file}: matchPolicy");
        let rules = serde_json::to_value(spec["rules"].clone()).expect("rules");
        match manifest["kind"].as_str() {
            Some("ClusterAdmissionPolicy") => {
                let policy = policy_of_module(spec["module"].as_str().unwrap_or_default(), &metadata);
                let m = &metadata[policy];
                assert_eq!(
                    rules,
                    serde_json::to_value(&m.rules).expect("rules"),
                    "{file}: rules differ from metadata.yml"
                );
                assert_eq!(spec["mutating"], json!(m.mutating), "{file}: mutating");
                assert_eq!(spec["backgroundAudit"], json!(m.background_audit), "{file}: backgroundAudit");
                check_rules_and_resources(&file, spec, m);
                validate_settings(&modules[policy], &spec["settings"]).unwrap_or_else(|e| panic!("{file}: {e}"));
                modes_seen.insert((policy.to_string(), mode.to_string()));
            }
            Some("ClusterAdmissionPolicyGroup") => {
                assert!(spec["mutating"].is_null(), "{file}: groups cannot mutate");
                let members = spec["policies"].as_object().unwrap_or_else(|| panic!("{file}: no policies"));
                let mut member_metadata = Vec::new();
                for (member, entry) in members {
                    let policy = policy_of_module(entry["module"].as_str().unwrap_or_default(), &metadata);
                    let m = &metadata[policy];
                    assert!(!m.mutating, "{file}: {member} mutates, which a group does not allow");
                    check_rules_and_resources(&format!("{file}: {member}"), entry, m);
                    validate_settings(&modules[policy], &entry["settings"])
                        .unwrap_or_else(|e| panic!("{file}: {member}: {e}"));
                    assert!(
                        spec["expression"].as_str().unwrap_or_default().contains(&format!("{member}()")),
                        "{file}: {member} is not in the expression"
                    );
                    member_metadata.push(m.clone());
                }
                assert_eq!(
                    rules,
                    serde_json::to_value(metadata::group_rules(&member_metadata)).expect("rules"),
                    "{file}: the group's rules are not its members' rules"
                );
                assert!(!spec["message"].as_str().unwrap_or_default().is_empty(), "{file}: a group needs a message");
                modes_seen.insert((format!("group {}", manifest["metadata"]["name"]), mode.to_string()));
            }
            other => panic!("{file}: kind {other:?}"),
        }
    }
    for (name, _) in POLICIES {
        for mode in metadata::MODES {
            assert!(modes_seen.contains(&(name.to_string(), mode.to_string())), "no {mode} manifest for {name}");
        }
        assert!(deploy_manifest(name).exists(), "{name}");
    }
}

#[test]
fn artifacthub_packages_carry_metadata_and_questions() {
    for (name, dir) in POLICIES {
        let m = metadata::read_metadata(dir).unwrap_or_else(|e| panic!("{e}"));
        let package = yaml(&repo_root().join(dir).join("artifacthub-pkg.yml"));
        assert_eq!(package["version"].as_str(), m.version().ok(), "{name}: version");
        assert_eq!(package["containersImages"][0]["image"].as_str(), m.image().ok().as_deref(), "{name}: image");
        let created = package["createdAt"].as_str().unwrap_or_default();
        assert!(
            created.len() == 20 && created.ends_with('Z') && created.as_bytes()[10] == b'T',
            "{name}: createdAt {created:?}"
        );
        let annotations = &package["annotations"];
        let rules: Value =
            serde_norway::from_str(annotations["kubewarden/rules"].as_str().unwrap_or_default()).expect("rules");
        assert_eq!(rules, serde_json::to_value(&m.rules).expect("rules"), "{name}: rules");
        let questions = std::fs::read_to_string(metadata::questions_path(dir)).expect("questions-ui.yml");
        assert_eq!(annotations["kubewarden/questions-ui"].as_str(), Some(questions.as_str()), "{name}: questions");
        assert_eq!(
            annotations["kubewarden/mutation"].as_str(),
            Some(if m.mutating { "true" } else { "false" }),
            "{name}"
        );
    }
}

#[test]
fn readmes_show_a_kwctl_run_that_works_on_test_data() {
    for (name, dir) in POLICIES {
        let command = packaging::kwctl_example(name).unwrap_or_else(|e| panic!("{e}"));
        let readme = std::fs::read_to_string(repo_root().join(dir).join("README.md")).expect("README");
        // Shell line continuations and line breaks read as one space.
        let one_line = |s: &str| s.replace("\\\n", " ").split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(one_line(&readme).contains(&command), "{name}: the README does not show `{command}`");
        let words: Vec<&str> = command.split_whitespace().collect();
        let arg = |flag: &str| words.iter().position(|w| *w == flag).map(|i| repo_root().join(words[i + 1]));
        let request = arg("--request-path").expect("--request-path");
        let request: Value = serde_json::from_str(&std::fs::read_to_string(&request).expect("request")).expect("JSON");
        admission_request(&request).unwrap_or_else(|e| panic!("{name}: kwctl would refuse the README's request: {e}"));
        if let Some(session) = arg("--replay-host-capabilities-interactions") {
            parse_session(&std::fs::read_to_string(&session).expect("session"))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        if let Some(settings) = arg("--settings-path") {
            let settings: Value =
                serde_json::from_str(&std::fs::read_to_string(&settings).expect("settings")).expect("JSON");
            validate_settings(load_policy(name), &settings).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert_eq!(
            words.last().copied(),
            Some(metadata::shown(&repo_root().join(dir).join("annotated-policy.wasm")).trim_start_matches("./")),
            "{name}"
        );
    }
}

#[test]
fn each_readme_documents_every_rule_of_its_set() {
    for (name, rules) in ALL {
        let readme_path = repo_root().join("policies").join(name).join("README.md");
        let readme = std::fs::read_to_string(&readme_path).unwrap_or_else(|e| panic!("{}: {e}", readme_path.display()));
        // The metadata rules run in every policy, so every README lists them too.
        let missing: Vec<&str> = rules
            .iter()
            .chain(gangwarden_core::rules::METADATA)
            .map(|r| r.id)
            .filter(|id| !readme.contains(&format!("`{id}`")))
            .collect();
        assert!(missing.is_empty(), "{name} README does not document {missing:?}");
    }
}

#[test]
fn rule_ids_are_unique_and_prefixed_by_their_set() {
    let mut seen = BTreeSet::new();
    for (name, rules) in ALL {
        for rule in *rules {
            assert!(seen.insert(rule.id), "rule id {} appears twice", rule.id);
            assert!(rule.id.starts_with(&format!("{name}.")), "rule id {} is not in the {name} set", rule.id);
        }
    }
}

#[test]
fn the_run_policy_parity_table_names_real_cases() {
    let readme = std::fs::read_to_string(repo_root().join("policies/run-policy/README.md")).expect("README");
    let table = readme.split("## Parity").nth(1).and_then(|rest| rest.split("\n## ").next()).expect("a parity section");
    let mut named = 0;
    for row in table.lines().filter(|l| l.starts_with('|')).skip(2) {
        let cases = row.trim_end_matches('|').rsplit('|').next().unwrap_or_default();
        for name in cases.split('`').skip(1).step_by(2) {
            let path = repo_root().join("e2e-tests/cases/run-policy").join(format!("{name}.yaml"));
            assert!(path.exists(), "the parity table names {name}, which is not a case file");
            named += 1;
        }
    }
    assert!(named >= 20, "only {named} cases named in the parity table");
}

#[test]
fn test_data_requests_have_the_apiserver_shape() {
    let mut checked = 0;
    for (name, dir) in POLICIES {
        let folder = repo_root().join(dir).join("test_data");
        for entry in std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display())) {
            let path = entry.expect("entry").path();
            let file = metadata::shown(&path);
            if !file.ends_with(".json") || file.ends_with("-settings.json") {
                continue;
            }
            let request: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
            admission_request(&request).unwrap_or_else(|e| panic!("{name}: {file}: {e}"));
            for field in ["requestKind", "requestResource", "userInfo", "dryRun", "options"] {
                assert!(!request[field].is_null(), "{file}: {field} missing");
            }
            checked += 1;
        }
    }
    assert!(checked >= POLICIES.len(), "only {checked} requests in test_data/");
}

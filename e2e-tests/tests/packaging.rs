//! The files that ship with each policy agree with each other and with the code: metadata.yml,
//! the deploy/ manifest, artifacthub-pkg.yml and the README's rule table.

use std::collections::BTreeSet;
use std::path::Path;

use gangwarden_core::rules::ALL;
use gangwarden_e2e_tests::{POLICIES, deploy_manifest, repo_root};
use serde_json::Value;

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn deploy_manifests_match_metadata() {
    for (name, dir) in POLICIES {
        let metadata = yaml(&repo_root().join(dir).join("metadata.yml"));
        let manifest = yaml(&deploy_manifest(name));
        assert_eq!(manifest["kind"], "ClusterAdmissionPolicy", "{name}");
        let spec = &manifest["spec"];
        assert_eq!(spec["rules"], metadata["rules"], "{name}: deploy rules differ from metadata.yml");
        assert_eq!(spec["mutating"], metadata["mutating"], "{name}: mutating differs");
        // Leaving contextAwareResources out and listing none are the same.
        let declared = |v: &Value| if v.is_null() { Value::Array(Vec::new()) } else { v.clone() };
        assert_eq!(
            declared(&spec["contextAwareResources"]),
            declared(&metadata["contextAwareResources"]),
            "{name}: contextAwareResources differ"
        );
    }
}

#[test]
fn artifacthub_packages_match_metadata() {
    for (name, dir) in POLICIES {
        let dir = repo_root().join(dir);
        let metadata = yaml(&dir.join("metadata.yml"));
        let package = yaml(&dir.join("artifacthub-pkg.yml"));
        let annotations = &metadata["annotations"];
        assert_eq!(package["version"], annotations["io.kubewarden.policy.version"], "{name}: version");
        assert_eq!(package["name"], annotations["io.kubewarden.policy.title"], "{name}: name");
        assert_eq!(package["description"], annotations["io.kubewarden.policy.description"], "{name}: description");
        let rules: Value =
            serde_norway::from_str(package["annotations"]["kubewarden/rules"].as_str().unwrap_or_default())
                .unwrap_or(Value::Null);
        assert_eq!(rules, metadata["rules"], "{name}: artifacthub rules differ from metadata.yml");
        assert_eq!(
            package["annotations"]["kubewarden/mutation"].as_str(),
            Some(if metadata["mutating"] == true { "true" } else { "false" }),
            "{name}: mutation annotation"
        );
    }
}

#[test]
fn each_readme_documents_every_rule_of_its_set() {
    for (name, rules) in ALL {
        let readme_path = repo_root().join("policies").join(name).join("README.md");
        let readme = std::fs::read_to_string(&readme_path).unwrap_or_else(|e| panic!("{}: {e}", readme_path.display()));
        let missing: Vec<&str> = rules.iter().map(|r| r.id).filter(|id| !readme.contains(&format!("`{id}`"))).collect();
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

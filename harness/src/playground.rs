//! `cargo xtask playground-data`: what the browser playground is made of besides its engine:
//! the examples gallery (every `examples/` file, the e2e cases and the corpus, as playground
//! states) and the site data (version, API versions, settings tables, rule reference). The
//! fidelity test sends the same states to the playground engine and holds its answers to the
//! built `.wasm` policies'.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::case::{Case, Expect, case_files};
use crate::{POLICIES, corpus, repo_root};

/// The rule sets as the engine and the bundle's settings name them, and their policy folders.
pub const RULE_SETS: &[(&str, &str)] =
    &[("gang", "gang"), ("topology", "topology"), ("claims", "claims"), ("runPolicy", "run-policy")];

/// The file names the page gives its three panes (the engine reports positions per file).
pub const MANIFESTS_FILE: &str = "manifests.yaml";
pub const OLD_FILE: &str = "previous.yaml";
pub const CLUSTER_FILE: &str = "cluster.yaml";

/// Everything the page holds: the three panes, each rule set's settings as JSON text (empty:
/// defaults) and the rule sets to run. Shared links and the gallery carry exactly this.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub manifests: String,
    pub old: String,
    pub cluster: String,
    pub settings: BTreeMap<String, String>,
    pub rule_sets: Vec<String>,
    /// The apiVersions the pasted cluster serves; left out, the engine infers them from the
    /// documents. Cases set it (empty: every version) so the engine sees their cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_api_versions: Option<Vec<String>>,
}

/// The rule-set key of a policy folder name (`run-policy` → `runPolicy`); the bundle has none.
pub fn rule_set_of(policy: &str) -> Option<&'static str> {
    RULE_SETS.iter().find(|(_, folder)| *folder == policy).map(|(key, _)| *key)
}

fn source(name: &str, text: &str) -> Vec<Value> {
    if text.trim().is_empty() { Vec::new() } else { vec![json!({"name": name, "text": text})] }
}

/// The engine input the page sends for `state` (playground/web/app.js builds the same).
pub fn engine_input(state: &State) -> Result<Value, String> {
    let mut settings = serde_json::Map::new();
    for (key, text) in &state.settings {
        if !text.trim().is_empty() {
            let value: Value =
                serde_json::from_str(text).map_err(|e| format!("the {key} settings are not valid JSON: {e}"))?;
            settings.insert(key.clone(), value);
        }
    }
    let mut input = json!({
        "files": source(MANIFESTS_FILE, &state.manifests),
        "old": source(OLD_FILE, &state.old),
        "cluster": source(CLUSTER_FILE, &state.cluster),
        "settings": settings,
        "ruleSets": state.rule_sets,
    });
    if let Some(served) = &state.served_api_versions {
        input["servedApiVersions"] = json!(served);
    }
    Ok(input)
}

fn yaml_document(value: &Value) -> Result<String, String> {
    serde_norway::to_string(value).map_err(|e| e.to_string())
}

fn yaml_documents<'a>(values: impl IntoIterator<Item = &'a Value>) -> Result<String, String> {
    let docs: Vec<String> = values.into_iter().map(yaml_document).collect::<Result<_, _>>()?;
    Ok(docs.join("---\n"))
}

/// `apiVersion` group, kind, namespace and name: how the engine pairs a document with its
/// previous version.
fn identity(object: &Value) -> (String, &Value, &str, &Value) {
    let group = object["apiVersion"].as_str().unwrap_or_default().rsplit_once('/').map(|(g, _)| g).unwrap_or_default();
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
    (group.to_string(), &object["kind"], namespace, &object["metadata"]["name"])
}

/// The playground state of a case run against `policy` (a folder name of [`POLICIES`]), or
/// why the case cannot be written as manifests (it sends raw bytes, a hand-made request,
/// a DELETE, a failing cluster, ...).
pub fn case_state(policy: &str, case: &Case) -> Result<State, String> {
    if case.raw_payload.is_some() {
        return Err("sends raw payload bytes, not a manifest".into());
    }
    if case.request.is_some() {
        return Err("sends a hand-made AdmissionRequest, not a manifest".into());
    }
    if case.cluster_error.is_some() {
        return Err("makes every lookup fail, which pasted documents cannot".into());
    }
    let object = case.object.as_ref().filter(|o| o.is_object()).ok_or("its object is not a mapping")?;
    if object["kind"].as_str().is_none_or(str::is_empty) {
        return Err("its object has no kind, so it is not a manifest".into());
    }
    let old = match (case.operation.as_deref().unwrap_or("CREATE"), &case.old_object) {
        ("CREATE", None) => String::new(),
        ("UPDATE", Some(old)) if old.is_object() && identity(old) == identity(object) => yaml_document(old)?,
        ("UPDATE", _) => return Err("its old object is not a previous version of the same object".into()),
        (op, _) => return Err(format!("the {op} operation is not one a manifest is checked with")),
    };
    let mut settings = BTreeMap::new();
    let rule_sets: Vec<String> = match rule_set_of(policy) {
        Some(key) => {
            if !case.settings.is_null() {
                settings.insert(key.to_string(), serde_json::to_string_pretty(&case.settings).unwrap_or_default());
            }
            vec![key.to_string()]
        }
        None => {
            match &case.settings {
                Value::Null => {}
                Value::Object(map) => {
                    for (key, value) in map {
                        if rule_set_of_key(key).is_none() {
                            return Err(format!("its bundle settings have the key {key:?}, not a rule set"));
                        }
                        settings.insert(key.clone(), serde_json::to_string_pretty(value).unwrap_or_default());
                    }
                }
                _ => return Err("its bundle settings are not an object".into()),
            }
            RULE_SETS.iter().map(|(key, _)| key.to_string()).collect()
        }
    };
    let nodes: Vec<Value> = case.node_sets.iter().flat_map(|s| s.nodes()).collect();
    Ok(State {
        manifests: yaml_document(object)?,
        old,
        cluster: yaml_documents(case.cluster.iter().chain(&nodes))?,
        settings,
        rule_sets,
        served_api_versions: Some(case.served_api_versions.clone().unwrap_or_default()),
    })
}

fn rule_set_of_key(key: &str) -> Option<&'static str> {
    RULE_SETS.iter().find(|(k, _)| *k == key).map(|(k, _)| *k)
}

/// accepted / warned / mutated / rejected / settings error, as the gallery labels a case.
fn expected_label(expect: &Expect) -> &'static str {
    if expect.settings_error.is_some() {
        "settings error"
    } else if !expect.accepted {
        "rejected"
    } else if expect.mutated.is_some() {
        "mutated"
    } else if !expect.warnings.is_empty() {
        "warned"
    } else {
        "accepted"
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Deep-link id: `#ex=<id>`.
    pub id: String,
    pub title: String,
    pub description: String,
    pub expected: String,
    pub state: State,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub policy: String,
    pub title: String,
    pub entries: Vec<Entry>,
}

fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default()
}

/// Larger states (the thousands-of-Nodes topology cases) stay out of the gallery: they are
/// for the fidelity test, not for reading in an editor.
const MAX_GALLERY_STATE_BYTES: usize = 64 * 1024;

fn case_entry(id: String, policy: &str, case: &Case) -> Option<Entry> {
    let state = case_state(policy, case).ok()?;
    if state.manifests.len() + state.old.len() + state.cluster.len() > MAX_GALLERY_STATE_BYTES {
        return None;
    }
    let expected = case.expect.as_ref().map_or("", expected_label).to_string();
    let title = id.rsplit('/').next().unwrap_or(&id).to_string();
    Some(Entry { id, title, description: case.description.trim().to_string(), expected, state })
}

/// The examples gallery: `examples/`, then each policy's e2e cases, then the corpus files.
/// Cases that cannot be written as manifests are left out (they test the waPC transport).
pub fn gallery() -> Result<Vec<Group>, String> {
    let root = repo_root();
    let mut groups = Vec::new();

    let mut example_files: Vec<_> = std::fs::read_dir(root.join("examples"))
        .map_err(|e| format!("examples/: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    example_files.sort();
    let mut entries = Vec::new();
    for path in &example_files {
        let case = Case::load(path)?;
        let entry = case_entry(format!("examples/{}", stem(path)), "bundle", &case)
            .ok_or_else(|| format!("{}: cannot be written as manifests", path.display()))?;
        // Examples carry no expectation: the playground shows what the policies answer.
        entries.push(Entry { expected: String::new(), ..entry });
    }
    groups.push(Group { policy: "examples".into(), title: "Examples (examples/)".into(), entries });

    for (policy, _) in POLICIES {
        let mut entries = Vec::new();
        for path in case_files(policy) {
            let case = Case::load(&path)?;
            entries.extend(case_entry(format!("{policy}/{}", stem(&path)), policy, &case));
        }
        groups.push(Group { policy: policy.to_string(), title: format!("{policy} policy: e2e cases"), entries });
    }

    groups.push(Group {
        policy: "corpus".into(),
        title: "Upstream corpus (e2e-tests/corpus/)".into(),
        entries: corpus_entries()?,
    });
    Ok(groups)
}

/// One entry per corpus file: all its documents (templates instantiated), every rule set.
fn corpus_entries() -> Result<Vec<Entry>, String> {
    let dir = corpus::corpus_dir();
    let text = std::fs::read_to_string(dir.join("expectations.yaml")).map_err(|e| format!("expectations.yaml: {e}"))?;
    let expectations: BTreeMap<String, corpus::FileExpectation> =
        serde_norway::from_str(&text).map_err(|e| format!("expectations.yaml: {e}"))?;
    let mut entries = Vec::new();
    for (rel, exp) in &expectations {
        if exp.unparseable {
            continue;
        }
        let raw = std::fs::read_to_string(dir.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
        let manifests = corpus::instantiate(&raw, &exp.params).map_err(|e| format!("{rel}: {e}"))?;
        let expected = if exp.valid {
            "accepted"
        } else {
            let labels: Vec<&str> = exp.expect.values().map(expected_label).collect();
            ["rejected", "mutated", "warned"].into_iter().find(|l| labels.contains(l)).unwrap_or("accepted")
        };
        entries.push(Entry {
            id: format!("corpus/{rel}"),
            title: rel.clone(),
            description: exp.why.trim().to_string(),
            expected: expected.to_string(),
            state: State {
                manifests,
                old: String::new(),
                cluster: yaml_documents(&exp.cluster)?,
                settings: BTreeMap::new(),
                rule_sets: RULE_SETS.iter().map(|(key, _)| key.to_string()).collect(),
                served_api_versions: None,
            },
        });
    }
    Ok(entries)
}

/// The cells of the Markdown table rows in the README section `## <heading>`.
fn readme_table(readme: &str, heading: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut inside = false;
    for line in readme.lines() {
        if line.starts_with("## ") {
            inside = line.trim_start_matches("## ").trim() == heading;
            continue;
        }
        if !inside || !line.starts_with('|') || line.starts_with("|---") {
            continue;
        }
        let cells: Vec<String> = line.trim().trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect();
        rows.push(cells);
    }
    rows.into_iter().skip(1).collect()
}

/// The site's data: version, covered API versions (from the bundle's metadata.yml rules),
/// each rule set's settings table and every rule with its policy README's example message.
pub fn site_data() -> Result<Value, String> {
    let root = repo_root();
    let metadata: Value = serde_norway::from_str(
        &std::fs::read_to_string(root.join("metadata.yml")).map_err(|e| format!("metadata.yml: {e}"))?,
    )
    .map_err(|e| format!("metadata.yml: {e}"))?;
    let mut api_versions = Vec::new();
    for rule in metadata["rules"].as_array().into_iter().flatten() {
        for group in rule["apiGroups"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            for version in rule["apiVersions"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                let av = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
                if !api_versions.contains(&av) {
                    api_versions.push(av);
                }
            }
        }
    }
    let mut settings = serde_json::Map::new();
    let mut rules = Vec::new();
    for (key, folder) in RULE_SETS {
        let readme_path = root.join("policies").join(folder).join("README.md");
        let readme = std::fs::read_to_string(&readme_path).map_err(|e| format!("{}: {e}", readme_path.display()))?;
        settings.insert(key.to_string(), json!(readme_table(&readme, "Settings")));
        let examples: BTreeMap<String, String> = readme_table(&readme, "Rules")
            .into_iter()
            .filter(|cells| cells.len() >= 2)
            .map(|cells| (cells[0].trim_matches('`').to_string(), cells.last().cloned().unwrap_or_default()))
            .collect();
        let table = gangwarden_core::rules::ALL.iter().find(|(name, _)| name == folder).map(|(_, t)| *t).unwrap_or(&[]);
        for info in table {
            rules.push(json!({
                "id": info.id,
                "ruleSet": key,
                "policy": folder,
                "catalogue": info.catalogue,
                "summary": info.summary,
                "example": examples.get(info.id).cloned().unwrap_or_default(),
            }));
        }
    }
    // The metadata rules run with every rule set; each README lists them with the same example.
    for info in gangwarden_core::rules::METADATA {
        rules.push(json!({
            "id": info.id,
            "ruleSet": "metadata",
            "policy": "every policy",
            "catalogue": info.catalogue,
            "summary": info.summary,
            "example": gangwarden_core::rules::catalog::doc(info.id).map_or("", |d| d.example),
        }));
    }
    Ok(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "apiVersions": api_versions,
        "settings": settings,
        "rules": rules,
    }))
}

/// Writes `gallery.json` and `site.json` into `out`.
pub fn write_data(out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let write = |name: &str, value: Value| {
        let path: PathBuf = out.join(name);
        std::fs::write(&path, value.to_string()).map_err(|e| format!("{}: {e}", path.display()))
    };
    write("gallery.json", json!({ "groups": gallery()? }))?;
    write("site.json", site_data()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(yaml: &str) -> Case {
        serde_norway::from_str(yaml).unwrap()
    }

    #[test]
    fn a_case_becomes_the_panes_the_page_sends() {
        let c = case(
            "description: d\noperation: UPDATE\nsettings: {maxMinCount: 4}\n\
             object: {apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, metadata: {name: g, namespace: ml}}\n\
             oldObject: {apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, metadata: {name: g, namespace: ml}, spec: {}}\n\
             cluster: [{apiVersion: v1, kind: Node, metadata: {name: n}}]\n",
        );
        let state = case_state("gang", &c).unwrap();
        assert_eq!(state.rule_sets, ["gang"]);
        assert_eq!(state.settings["gang"], "{\n  \"maxMinCount\": 4\n}");
        assert!(state.old.contains("spec: {}"), "{}", state.old);
        assert!(state.cluster.contains("kind: Node"));
        let input = engine_input(&state).unwrap();
        assert_eq!(input["files"][0]["name"], MANIFESTS_FILE);
        assert_eq!(input["old"][0]["name"], OLD_FILE);
        assert_eq!(input["settings"], json!({"gang": {"maxMinCount": 4}}));
        assert_eq!(input["ruleSets"], json!(["gang"]));
    }

    #[test]
    fn cases_that_are_not_manifests_say_why() {
        let raw = case("description: d\nrawPayload: 'x'\n");
        assert_eq!(case_state("gang", &raw).unwrap_err(), "sends raw payload bytes, not a manifest");
        let renamed = case(
            "description: d\noperation: UPDATE\nobject: {apiVersion: v1, kind: Pod, metadata: {name: a}}\n\
             oldObject: {apiVersion: v1, kind: Pod, metadata: {name: b}}\n",
        );
        assert!(case_state("gang", &renamed).unwrap_err().contains("not a previous version"));
        let delete = case("description: d\noperation: DELETE\nobject: {apiVersion: v1, kind: Pod}\n");
        assert!(case_state("gang", &delete).unwrap_err().contains("DELETE"));
    }

    #[test]
    fn bundle_settings_split_by_rule_set() {
        let c = case(
            "description: d\nsettings: {gang: {maxMinCount: 2}, runPolicy: {}}\n\
             object: {apiVersion: v1, kind: Pod, metadata: {name: a}}\n",
        );
        let state = case_state("bundle", &c).unwrap();
        assert_eq!(state.rule_sets.len(), 4);
        assert_eq!(state.settings.keys().collect::<Vec<_>>(), ["gang", "runPolicy"]);
    }

    #[test]
    fn readme_tables_are_read_by_section() {
        let md = "## Settings\n\n| a | b |\n|---|---|\n| `x` | 1 |\n\n## Rules\n| id | m |\n|---|---|\n| `r` | msg |\n";
        assert_eq!(readme_table(md, "Settings"), [vec!["`x`".to_string(), "1".to_string()]]);
        assert_eq!(readme_table(md, "Rules"), [vec!["`r`".to_string(), "msg".to_string()]]);
    }
}

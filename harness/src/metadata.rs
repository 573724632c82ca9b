//! What the project's packaging sources say, read: the settings each policy accepts (from the
//! Rust types), `questions-ui.yml`, `metadata.yml`, and the names of the `deploy/` manifests.
//! The tests check the files against them; `cargo xtask-host packaging` generates from them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gangwarden_core::rules::{bundle, claims, gang, run_policy, topology};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::repo_root;

// ---------------------------------------------------------------------------------------------
// The settings each policy accepts, read from the Rust types.

/// The JSON names of a settings struct's fields, as serde reads them (renames applied).
pub fn setting_names<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    let mut names = None;
    let _ = T::deserialize(FieldNames(&mut names));
    names.unwrap_or_default().to_vec()
}

/// A deserializer that only notes which fields a struct asks for.
struct FieldNames<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("settings must be a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("only the field names were read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

// Each function names every field (no `..`), so a new setting does not compile until it is
// listed here; the tests check the JSON names against `setting_names`.
fn gang_defaults() -> Value {
    let gang::Settings {
        max_min_count,
        require_gang_for_jobs_with_at_least,
        forbid_user_priority,
        fail_on_lookup_error,
        scheduling_api_versions,
    } = gang::Settings::default();
    json!({"maxMinCount": max_min_count, "requireGangForJobsWithAtLeast": require_gang_for_jobs_with_at_least,
        "forbidUserPriority": forbid_user_priority, "failOnLookupError": fail_on_lookup_error,
        "schedulingApiVersions": scheduling_api_versions})
}

fn claims_defaults() -> Value {
    let claims::Settings {
        allow_direct_claims,
        allowed_claim_templates,
        require_claim_sources_exist,
        fail_on_lookup_error,
        scheduling_api_versions,
    } = claims::Settings::default();
    json!({"allowDirectClaims": allow_direct_claims, "allowedClaimTemplates": allowed_claim_templates,
        "requireClaimSourcesExist": require_claim_sources_exist, "failOnLookupError": fail_on_lookup_error,
        "schedulingApiVersions": scheduling_api_versions})
}

fn topology_defaults() -> Value {
    let topology::Settings {
        allowed_topology_keys,
        require_topology_for_min_count_at_least,
        check_node_labels,
        fail_on_lookup_error,
        capacity_check,
        capacity_ignored_resources,
        capacity_added_tolerations,
        queue_check,
        kueue_frameworks,
    } = topology::Settings::default();
    json!({"allowedTopologyKeys": allowed_topology_keys,
        "requireTopologyForMinCountAtLeast": require_topology_for_min_count_at_least,
        "checkNodeLabels": check_node_labels, "failOnLookupError": fail_on_lookup_error,
        "capacityCheck": capacity_check, "capacityIgnoredResources": capacity_ignored_resources,
        "capacityAddedTolerations": capacity_added_tolerations, "queueCheck": queue_check,
        "kueueFrameworks": kueue_frameworks})
}

fn run_policy_defaults() -> Value {
    let run_policy::Settings {
        require_ttl_seconds_after_finished,
        max_ttl_seconds_after_finished,
        max_active_deadline_seconds,
        max_backoff_limit,
        allowed_clean_pod_policies,
        allowed_managed_by,
        default_ttl_seconds_after_finished,
        default_clean_pod_policy,
        default_restart_policy,
        fail_on_lookup_error,
    } = run_policy::Settings::default();
    json!({"requireTtlSecondsAfterFinished": require_ttl_seconds_after_finished,
        "maxTtlSecondsAfterFinished": max_ttl_seconds_after_finished,
        "maxActiveDeadlineSeconds": max_active_deadline_seconds, "maxBackoffLimit": max_backoff_limit,
        "allowedCleanPodPolicies": allowed_clean_pod_policies, "allowedManagedBy": allowed_managed_by,
        "defaultTtlSecondsAfterFinished": default_ttl_seconds_after_finished,
        "defaultCleanPodPolicy": default_clean_pod_policy, "defaultRestartPolicy": default_restart_policy,
        "failOnLookupError": fail_on_lookup_error})
}

fn bundle_defaults() -> Value {
    let bundle::Settings { gang: _, claims: _, run_policy: _, topology: _ } = bundle::Settings::default();
    json!({"gang": gang_defaults(), "claims": claims_defaults(), "runPolicy": run_policy_defaults(),
        "topology": topology_defaults()})
}

/// `Settings::default()` of a policy as JSON (`None` as `null`), and the JSON names of its
/// settings as serde reads them.
pub fn settings_truth(policy: &str) -> Result<(Value, Vec<&'static str>), String> {
    Ok(match policy {
        "gang" => (gang_defaults(), setting_names::<gang::Settings>()),
        "claims" => (claims_defaults(), setting_names::<claims::Settings>()),
        "topology" => (topology_defaults(), setting_names::<topology::Settings>()),
        "run-policy" => (run_policy_defaults(), setting_names::<run_policy::Settings>()),
        "bundle" => (bundle_defaults(), setting_names::<bundle::Settings>()),
        other => return Err(format!("no settings known for policy {other:?}")),
    })
}

/// Dotted paths of the leaves of a settings object (`{"gang": {"maxMinCount": 1}}` →
/// `gang.maxMinCount`). Lists and scalars are leaves.
pub fn leaves(settings: &Value) -> BTreeMap<String, Value> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(map) if !map.is_empty() || prefix.is_empty() => {
                for (k, child) in map {
                    let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&path, child, out);
                }
            }
            other => {
                out.insert(prefix.to_string(), other.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", settings, &mut out);
    out
}

/// The settings with every unset (`null`) value left out: what a manifest writes.
pub fn without_nulls(settings: &Value) -> Value {
    match settings {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect(),
        ),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// questions-ui.yml: Rancher's policy settings form.

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Questions {
    pub questions: Vec<Question>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub default: Value,
    pub description: String,
    pub group: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hide_input: Option<bool>,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_multiline: Option<bool>,
    pub variable: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subquestions: Option<Vec<Question>>,
    /// The fields of each item of a `sequence[` setting (a list of objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_questions: Option<Vec<Question>>,
}

pub fn questions_path(dir: &str) -> PathBuf {
    repo_root().join(dir).join("questions-ui.yml")
}

pub fn read_questions(dir: &str) -> Result<Questions, String> {
    let path = questions_path(dir);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Every question that stands for one setting (not a `map[` of subquestions), by variable.
pub fn leaf_questions(questions: &[Question]) -> BTreeMap<String, Question> {
    let mut out = BTreeMap::new();
    for q in questions {
        match &q.subquestions {
            Some(sub) => out.extend(leaf_questions(sub)),
            None => {
                out.insert(q.variable.clone(), q.clone());
            }
        }
    }
    out
}

/// The rule set names under which the bundle nests each policy's settings.
pub const BUNDLE_SETS: &[(&str, &str)] = &[
    ("gang", "policies/gang"),
    ("claims", "policies/claims"),
    ("runPolicy", "policies/run-policy"),
    ("topology", "policies/topology"),
];

/// The settings a form filled with every question's default sends (nested by the dots).
pub fn settings_from_questions(questions: &[Question]) -> Value {
    let mut root = json!({});
    for (variable, q) in leaf_questions(questions) {
        let parts: Vec<&str> = variable.split('.').collect();
        let (last, parents) = parts.split_last().unwrap_or((&"", &[]));
        let mut at = &mut root;
        for part in parents {
            if !at.get(*part).is_some_and(Value::is_object) {
                at[*part] = json!({});
            }
            at = &mut at[*part];
        }
        at[*last] = q.default.clone();
    }
    root
}

// ---------------------------------------------------------------------------------------------
// metadata.yml and artifacthub-pkg.yml

/// A rule of metadata.yml, in kwctl's field order. A key this does not know is an error rather
/// than something the generated files silently leave out.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

/// The parts of metadata.yml the packages are made from.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub rules: Vec<Rule>,
    pub mutating: bool,
    #[serde(default = "yes")]
    pub background_audit: bool,
    #[serde(default)]
    pub context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

pub fn read_metadata(dir: &str) -> Result<Metadata, String> {
    let path = repo_root().join(dir).join("metadata.yml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

impl Metadata {
    pub fn annotation(&self, key: &str) -> Result<&str, String> {
        self.annotations
            .get(key)
            .map(String::as_str)
            .ok_or(format!("policy metadata must specify \"{key}\" in annotations"))
    }

    pub fn version(&self) -> Result<&str, String> {
        let v = self.annotation("io.kubewarden.policy.version")?;
        let parts: Vec<&str> = v.split('.').collect();
        if parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
            Ok(v)
        } else {
            Err(format!("policy version must be in semver: {v:?}"))
        }
    }

    /// `<ociUrl>:v<version>`, the image the policy is pushed as.
    pub fn image(&self) -> Result<String, String> {
        Ok(format!("{}:v{}", self.annotation("io.kubewarden.policy.ociUrl")?, self.version()?))
    }

    /// The context-aware resources as a set, the way Kubewarden reads them.
    pub fn resources_set(&self) -> Vec<ContextAwareResource> {
        let mut set = self.context_aware_resources.clone();
        set.sort();
        set.dedup();
        set
    }
}

// ---------------------------------------------------------------------------------------------
// deploy/: the manifests' names

/// The name a policy has in the cluster, and its manifests' file stem under deploy/.
pub fn deploy_name(policy: &str) -> (&'static str, String) {
    match policy {
        "bundle" => ("gangwarden", "gangwarden".to_string()),
        "gang" => ("gangwarden-gang", policy.to_string()),
        "claims" => ("gangwarden-claims", policy.to_string()),
        "topology" => ("gangwarden-topology", policy.to_string()),
        _ => ("gangwarden-run-policy", policy.to_string()),
    }
}

pub const MODES: &[&str] = &["protect", "monitor"];

/// The file of one policy's manifest in one mode: `deploy/gang.yaml` (protect) and
/// `deploy/gang-monitor.yaml`.
pub fn deploy_file(stem: &str, mode: &str) -> PathBuf {
    let file = if mode == "protect" { format!("{stem}.yaml") } else { format!("{stem}-{mode}.yaml") };
    repo_root().join("deploy").join(file)
}

/// The settings a generated manifest carries: every default, unset ones left out.
pub fn manifest_settings(policy: &str) -> Result<Value, String> {
    Ok(without_nulls(&settings_truth(policy)?.0))
}

/// The members of the example policy group: its name in the expression, and the policy.
pub const GROUP_MEMBERS: &[(&str, &str)] = &[("gang", "gang"), ("topology", "topology")];
pub const GROUP_STEM: &str = "gang-topology-group";
pub const GROUP_EXPRESSION: &str = "gang() && topology()";
pub const GROUP_MESSAGE: &str = "the gang cannot be scheduled as written: it breaks a gang or a topology rule (the rejecting policy's reasons are listed as causes)";

/// Union of the members' rules, each once, in order.
pub fn group_rules(members: &[Metadata]) -> Vec<Rule> {
    let mut rules: Vec<Rule> = Vec::new();
    for rule in members.iter().flat_map(|m| m.rules.iter()) {
        if !rules.contains(rule) {
            rules.push(rule.clone());
        }
    }
    rules
}

/// A path relative to the repository root, for messages.
pub fn shown(path: &Path) -> String {
    path.strip_prefix(repo_root()).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_come_from_serde() {
        assert_eq!(setting_names::<bundle::Settings>(), ["gang", "claims", "runPolicy", "topology"]);
    }

    #[test]
    fn settings_from_questions_nest_by_dots() {
        let q = |variable: &str, default: Value| Question {
            default,
            description: String::new(),
            group: String::new(),
            label: String::new(),
            required: None,
            hide_input: None,
            kind: "int".into(),
            options: None,
            value_multiline: None,
            variable: variable.into(),
            subquestions: None,
            sequence_questions: None,
        };
        let map = Question {
            kind: "map[".into(),
            subquestions: Some(vec![q("gang.maxMinCount", json!(3))]),
            ..q("gang", json!({}))
        };
        assert_eq!(
            settings_from_questions(&[map, q("top", json!(null))]),
            json!({"gang": {"maxMinCount": 3}, "top": null})
        );
        assert_eq!(
            leaves(&json!({"gang": {"a": [1]}, "b": {}})),
            BTreeMap::from([("gang.a".into(), json!([1])), ("b".into(), json!({}))])
        );
    }
}

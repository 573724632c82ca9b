//! The files each policy ships besides its module, generated from `metadata.yml`,
//! `questions-ui.yml` and the Rust settings types (`make packaging` writes them, the packaging
//! tests fail when one is out of date):
//!
//! - `artifacthub-pkg.yml`, laid out as `kwctl scaffold artifacthub` lays it out;
//! - the bundle's `questions-ui.yml`, made of the four policies' questions;
//! - `deploy/`: a `protect` and a `monitor` ClusterAdmissionPolicy per policy, and a
//!   ClusterAdmissionPolicyGroup of gang and topology;
//! - `test_data/`: the requests (and replay sessions) the READMEs' `kwctl run` examples use,
//!   exported from e2e cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gangwarden_core::rules::{bundle, claims, gang, run_policy, topology};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::case::Case;
use crate::host::Policy;
use crate::{POLICIES, repo_root};

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
    } = topology::Settings::default();
    json!({"allowedTopologyKeys": allowed_topology_keys,
        "requireTopologyForMinCountAtLeast": require_topology_for_min_count_at_least,
        "checkNodeLabels": check_node_labels, "failOnLookupError": fail_on_lookup_error,
        "capacityCheck": capacity_check, "capacityIgnoredResources": capacity_ignored_resources})
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

fn prefixed(q: &Question, prefix: &str) -> Question {
    Question {
        variable: format!("{prefix}.{}", q.variable),
        subquestions: q.subquestions.as_ref().map(|s| s.iter().map(|q| prefixed(q, prefix)).collect()),
        ..q.clone()
    }
}

/// The bundle's questions: one `map[` per rule set holding that policy's own questions.
pub fn bundle_questions() -> Result<String, String> {
    let mut questions = Vec::new();
    for (set, dir) in BUNDLE_SETS {
        let own = read_questions(dir)?;
        questions.push(Question {
            default: json!({}),
            description: format!("Settings of the {set} rule set; the same as the settings of the policy in {dir}."),
            group: (*set).to_string(),
            label: (*set).to_string(),
            required: None,
            hide_input: Some(true),
            kind: "map[".into(),
            options: None,
            value_multiline: None,
            variable: (*set).to_string(),
            subquestions: Some(
                own.questions
                    .iter()
                    .map(|q| Question { group: format!("{set}: {}", q.group), ..prefixed(q, set) })
                    .collect(),
            ),
        });
    }
    let body = serde_norway::to_string(&Questions { questions }).map_err(|e| e.to_string())?;
    Ok(format!("{GENERATED_YAML}{body}"))
}

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
    fn annotation(&self, key: &str) -> Result<&str, String> {
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

#[derive(Debug, Serialize)]
struct Named {
    name: String,
}

#[derive(Debug, Serialize)]
struct Link {
    name: String,
    url: String,
}

#[derive(Debug, Serialize)]
struct Maintainer {
    name: String,
    email: String,
}

#[derive(Debug, Serialize)]
struct Url {
    url: String,
}

/// artifacthub-pkg.yml, field for field in the order `kwctl scaffold artifacthub` writes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactHubPkg {
    version: String,
    name: String,
    display_name: String,
    created_at: String,
    description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    license: Option<String>,
    #[serde(rename = "homeURL", skip_serializing_if = "Option::is_none")]
    home_url: Option<String>,
    containers_images: Vec<ContainerImage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    keywords: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    links: Option<Vec<Link>>,
    install: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    maintainers: Option<Vec<Maintainer>>,
    provider: Named,
    recommendations: Vec<Url>,
    annotations: BTreeMap<String, String>,
}

#[derive(Debug, Serialize)]
struct ContainerImage {
    name: String,
    image: String,
}

/// `Name <email>, Other <email>` as kwctl reads `io.kubewarden.policy.author`.
fn maintainers(author: &str) -> Result<Vec<Maintainer>, String> {
    author
        .split(',')
        .filter(|a| !a.trim().is_empty())
        .map(|a| {
            let (name, rest) = a.trim().split_once('<').ok_or(format!("author {a:?} is not \"name <email>\""))?;
            let email = rest.strip_suffix('>').filter(|e| e.contains('@') && !e.contains(char::is_whitespace));
            let email = email.ok_or(format!("author {a:?} has no valid <email>"))?;
            Ok(Maintainer { name: name.trim().to_string(), email: email.to_string() })
        })
        .collect()
}

/// The `createdAt` of a package: kept from the existing artifacthub-pkg.yml while the version
/// is the same, so regenerating is stable; a new version is stamped with the current time.
pub fn created_at(existing: Option<&str>, version: &str) -> String {
    let old: Option<Value> = existing.and_then(|text| serde_norway::from_str(text).ok());
    match old {
        Some(v) if v["version"].as_str() == Some(version) && v["createdAt"].is_string() => {
            v["createdAt"].as_str().unwrap_or_default().to_string()
        }
        _ => rfc3339_now(),
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the epoch as an RFC 3339 UTC timestamp (civil-from-days, proleptic Gregorian).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// artifacthub-pkg.yml for the policy in `dir`, as `kwctl scaffold artifacthub` makes it from
/// metadata.yml and the text of questions-ui.yml, stamped `created_at`.
pub fn artifacthub_pkg(dir: &str, questions: &str, created_at: &str) -> Result<String, String> {
    let metadata = read_metadata(dir)?;
    if questions.is_empty() {
        return Err("questions-ui content cannot be empty".into());
    }
    let version = metadata.version()?.to_string();
    let image = metadata.image()?;
    let source = metadata.annotations.get("io.kubewarden.policy.source");
    let links = source.map(|source| {
        let mut links = Vec::new();
        if source.starts_with("https://github.com/") {
            let tag = metadata.annotations.get("com.github.release.tag").cloned().unwrap_or(format!("v{version}"));
            let url = format!("{source}/releases/download/{}/policy.wasm", tag.replace('/', "%2F"));
            links.push(Link { name: "policy".into(), url });
        }
        links.push(Link { name: "source".into(), url: source.clone() });
        links
    });
    let keywords = metadata
        .annotations
        .get("io.artifacthub.keywords")
        .map(|k| k.split(',').map(|w| w.trim().to_string()).collect::<Vec<_>>());
    if keywords.as_ref().is_some_and(|k| k.iter().any(String::is_empty)) {
        return Err("annotation \"io.artifacthub.keywords\" in policy metadata is malformed, must be csv values".into());
    }
    let mut annotations = BTreeMap::new();
    annotations.insert("kubewarden/mutation".to_string(), metadata.mutating.to_string());
    annotations.insert("kubewarden/questions-ui".to_string(), questions.to_string());
    annotations
        .insert("kubewarden/rules".to_string(), serde_norway::to_string(&metadata.rules).map_err(|e| e.to_string())?);
    if !metadata.context_aware_resources.is_empty() {
        let resources = serde_norway::to_string(&metadata.resources_set()).map_err(|e| e.to_string())?;
        annotations.insert("kubewarden/contextAwareResources".to_string(), resources);
    }
    if let Some(resources) = metadata.annotations.get("io.artifacthub.resources") {
        annotations.insert("kubewarden/resources".to_string(), resources.clone());
    }
    if let Some(hidden) = metadata.annotations.get("io.kubewarden.hidden-ui") {
        annotations.insert("kubewarden/hidden-ui".to_string(), hidden.clone());
    }
    let package = ArtifactHubPkg {
        version,
        name: metadata.annotation("io.kubewarden.policy.title")?.to_string(),
        display_name: metadata.annotation("io.artifacthub.displayName")?.to_string(),
        created_at: created_at.to_string(),
        description: metadata.annotation("io.kubewarden.policy.description")?.to_string(),
        license: metadata.annotations.get("io.kubewarden.policy.license").cloned(),
        home_url: metadata.annotations.get("io.kubewarden.policy.url").cloned(),
        containers_images: vec![ContainerImage { name: "policy".into(), image: image.clone() }],
        keywords,
        links,
        install: format!(
            "The policy can be obtained using [`kwctl`](https://github.com/kubewarden/kwctl):\n```console\nkwctl pull {image}\n```\nThen, generate the policy manifest and tune it to your liking. For example:\n```console\nkwctl scaffold manifest -t ClusterAdmissionPolicy registry://{image}\n```\n"
        ),
        maintainers: metadata.annotations.get("io.kubewarden.policy.author").map(|a| maintainers(a)).transpose()?,
        provider: Named { name: "kubewarden".into() },
        recommendations: vec![Url {
            url: "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller".into(),
        }],
        annotations,
    };
    serde_norway::to_string(&package).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// deploy/

/// The first line of every generated YAML file.
pub const GENERATED_YAML: &str = "# Generated by `make packaging`; edit its sources, not this file.\n";

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

fn mode_comment(mode: &str) -> &'static str {
    if mode == "monitor" {
        "# Monitor mode: every request is let through and what the policy would have rejected is\n# logged and reported. Apply this first; apply the protect manifest of the same name over it\n# once the reports are clean (a policy cannot go back from protect to monitor).\n"
    } else {
        "# Protect mode: requests that break a rule are rejected.\n"
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Manifest<S> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Named,
    spec: S,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicySpec {
    policy_server: &'static str,
    module: String,
    mode: &'static str,
    mutating: bool,
    background_audit: bool,
    settings: Value,
    rules: Vec<Rule>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    context_aware_resources: Vec<ContextAwareResource>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupSpec {
    policy_server: &'static str,
    mode: &'static str,
    background_audit: bool,
    rules: Vec<Rule>,
    policies: BTreeMap<&'static str, GroupMember>,
    expression: &'static str,
    message: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupMember {
    module: String,
    settings: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    context_aware_resources: Vec<ContextAwareResource>,
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default()
}

fn policy_manifest(policy: &str, dir: &str, mode: &'static str) -> Result<String, String> {
    let metadata = read_metadata(dir)?;
    let (name, stem) = deploy_name(policy);
    let manifest = Manifest {
        api_version: "policies.kubewarden.io/v1",
        kind: "ClusterAdmissionPolicy",
        metadata: Named { name: name.into() },
        spec: PolicySpec {
            policy_server: "default",
            module: format!("registry://{}", metadata.image()?),
            mode,
            mutating: metadata.mutating,
            background_audit: metadata.background_audit,
            settings: manifest_settings(policy)?,
            rules: metadata.rules.clone(),
            context_aware_resources: metadata.context_aware_resources.clone(),
        },
    };
    let what = if policy == "bundle" {
        "The bundle (every rule set in one policy)".to_string()
    } else {
        format!("The {policy} policy")
    };
    Ok(format!(
        "{GENERATED_YAML}# {what}, from {}.\n{}# kubectl apply -f deploy/{}\n{}",
        rel(dir, "metadata.yml"),
        mode_comment(mode),
        file_name(&deploy_file(&stem, mode)),
        serde_norway::to_string(&manifest).map_err(|e| e.to_string())?
    ))
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

fn policy_dir(policy: &str) -> Result<&'static str, String> {
    POLICIES.iter().find(|(n, _)| *n == policy).map(|(_, d)| *d).ok_or(format!("unknown policy {policy:?}"))
}

fn group_manifest(mode: &'static str) -> Result<String, String> {
    let mut metadata = Vec::new();
    let mut policies = BTreeMap::new();
    for (member, policy) in GROUP_MEMBERS {
        let m = read_metadata(policy_dir(policy)?)?;
        policies.insert(
            *member,
            GroupMember {
                module: format!("registry://{}", m.image()?),
                settings: manifest_settings(policy)?,
                context_aware_resources: m.context_aware_resources.clone(),
            },
        );
        metadata.push(m);
    }
    let manifest = Manifest {
        api_version: "policies.kubewarden.io/v1",
        kind: "ClusterAdmissionPolicyGroup",
        metadata: Named { name: "gangwarden-gang-topology".into() },
        spec: GroupSpec {
            policy_server: "default",
            mode,
            background_audit: true,
            rules: group_rules(&metadata),
            policies,
            expression: GROUP_EXPRESSION,
            message: GROUP_MESSAGE,
        },
    };
    Ok(format!(
        "{GENERATED_YAML}# The gang and topology policies as one policy group: a request is let in only when both\n# accept it. A rejection carries the group's message and, as causes, the reasons of the first\n# policy that rejected it (`&&` stops there: topology is evaluated only when gang accepts).\n# A group drops its members' warnings; deploy the two policies alone to see them.\n{}# kubectl apply -f deploy/{}\n{}",
        mode_comment(mode),
        file_name(&deploy_file(GROUP_STEM, mode)),
        serde_norway::to_string(&manifest).map_err(|e| e.to_string())?
    ))
}

// ---------------------------------------------------------------------------------------------
// test_data/: what the READMEs' `kwctl run` examples run on.

/// For each policy, the e2e case its README's `kwctl run` example is made from.
pub const README_EXAMPLES: &[(&str, &str)] = &[
    ("gang", "podgroup-min-count-zero"),
    ("claims", "pod-claim-same-name-other-template"),
    ("topology", "podgroup-key-on-no-node-rejected"),
    ("run-policy", "mutate-ttl-filled-in"),
    ("bundle", "claims-pod-claim-mismatch"),
];

fn rel(dir: &str, file: &str) -> String {
    if dir == "." { file.to_string() } else { format!("{dir}/{file}") }
}

/// The case a policy's README example is made from, with its name.
fn readme_case(policy: &str) -> Result<(&'static str, Case), String> {
    let (_, name) =
        README_EXAMPLES.iter().find(|(p, _)| *p == policy).ok_or(format!("no README example for {policy}"))?;
    let path = crate::case::case_files(policy)
        .into_iter()
        .find(|p| p.ends_with(format!("{name}.yaml")))
        .ok_or(format!("{policy}: no case {name}"))?;
    Ok((name, Case::load(&path)?))
}

/// The `kwctl run` command a policy's README shows, run from the repository root after
/// `make annotate`: with the replay session when the policy reads the cluster, with the
/// settings file when the case has settings.
pub fn kwctl_example(policy: &str) -> Result<String, String> {
    let dir = policy_dir(policy)?;
    let (name, case) = readme_case(policy)?;
    let mut cmd = "kwctl run".to_string();
    if !read_metadata(dir)?.context_aware_resources.is_empty() {
        let session = rel(dir, &format!("test_data/{name}-session.yml"));
        cmd.push_str(&format!(" --allow-context-aware --replay-host-capabilities-interactions {session}"));
    }
    if !case.settings.is_null() {
        cmd.push_str(&format!(" --settings-path {}", rel(dir, &format!("test_data/{name}-settings.json"))));
    }
    let request = rel(dir, &format!("test_data/{name}.json"));
    cmd.push_str(&format!(" --request-path {request} {}", rel(dir, "annotated-policy.wasm")));
    Ok(cmd)
}

/// The files the README example of `policy` runs on: the request, the settings if any, and
/// the replay session of the lookups the policy makes for it (recorded in the e2e host).
fn test_data_files(policy: &str, dir: &str) -> Result<Vec<(PathBuf, String)>, String> {
    let (name, case) = readme_case(policy)?;
    let out = repo_root().join(dir).join("test_data");
    let pretty = |v: &Value| serde_json::to_string_pretty(v).map(|s| s + "\n").map_err(|e| e.to_string());
    let mut files = vec![(out.join(format!("{name}.json")), pretty(&case.admission_request(name))?)];
    if !case.settings.is_null() {
        files.push((out.join(format!("{name}-settings.json")), pretty(&case.settings)?));
    }
    if !read_metadata(dir)?.context_aware_resources.is_empty() {
        let module = Policy::load(policy, &repo_root().join(dir))?;
        let payload = case.payload(name, &case.settings)?;
        let calls = module.call("validate", &payload, case.cluster())?.host_calls;
        let session: Vec<_> = calls.iter().map(crate::kwctl::exchange).collect::<Result<_, _>>()?;
        let text = serde_norway::to_string(&session).map_err(|e| e.to_string())?;
        files.push((out.join(format!("{name}-session.yml")), text));
    }
    Ok(files)
}

// ---------------------------------------------------------------------------------------------

/// Every file `make packaging` writes, with the text it must hold.
pub fn generated_files() -> Result<Vec<(PathBuf, String)>, String> {
    let root = repo_root();
    let bundle_questions = bundle_questions()?;
    let mut files = vec![(questions_path("."), bundle_questions.clone())];
    for (policy, dir) in POLICIES {
        let pkg_path = root.join(dir).join("artifacthub-pkg.yml");
        let existing = std::fs::read_to_string(&pkg_path).ok();
        let version = read_metadata(dir)?.version()?.to_string();
        let questions = if *policy == "bundle" {
            bundle_questions.clone()
        } else {
            let path = questions_path(dir);
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?
        };
        files.push((pkg_path, artifacthub_pkg(dir, &questions, &created_at(existing.as_deref(), &version))?));
        let (_, stem) = deploy_name(policy);
        for mode in MODES {
            files.push((deploy_file(&stem, mode), policy_manifest(policy, dir, mode)?));
        }
        files.extend(test_data_files(policy, dir)?);
    }
    for mode in MODES {
        files.push((deploy_file(GROUP_STEM, mode), group_manifest(mode)?));
    }
    Ok(files)
}

/// Writes every generated file; returns the ones that changed.
pub fn write_all() -> Result<Vec<PathBuf>, String> {
    let mut changed = Vec::new();
    for (path, text) in generated_files()? {
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            changed.push(path);
        }
    }
    Ok(changed)
}

/// The generated files whose text differs from what `make packaging` would write.
pub fn stale_files() -> Result<Vec<PathBuf>, String> {
    Ok(generated_files()?
        .into_iter()
        .filter(|(path, text)| std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()))
        .map(|(path, _)| path)
        .collect())
}

/// A path relative to the repository root, for messages.
pub fn shown(path: &Path) -> String {
    path.strip_prefix(repo_root()).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn created_at_is_kept_while_the_version_stays() {
        let old = "version: 0.1.0\ncreatedAt: 2026-11-29T00:00:00Z\n";
        assert_eq!(created_at(Some(old), "0.1.0"), "2026-11-29T00:00:00Z");
        assert_ne!(created_at(Some(old), "0.2.0"), "2026-11-29T00:00:00Z");
    }

    #[test]
    fn maintainers_need_name_and_email() {
        let m = maintainers("A B <a@example.com>, C <c@example.com>").unwrap();
        assert_eq!((m[0].name.as_str(), m[1].email.as_str()), ("A B", "c@example.com"));
        assert!(maintainers("gangwarden developers").is_err());
    }

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

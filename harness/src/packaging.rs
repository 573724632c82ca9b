//! `cargo xtask-host packaging`: the files each policy ships besides its module, generated from
//! `metadata.yml`, `questions-ui.yml` and the Rust settings types (the packaging tests fail when
//! one is out of date):
//!
//! - `artifacthub-pkg.yml`, laid out as `kwctl scaffold artifacthub` lays it out;
//! - the bundle's `questions-ui.yml`, made of the four policies' questions;
//! - `deploy/`: a `protect` and a `monitor` ClusterAdmissionPolicy per policy, and a
//!   ClusterAdmissionPolicyGroup of gang and topology;
//! - `test_data/`: the requests (and replay sessions) the READMEs' `kwctl run` examples use,
//!   exported from e2e cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::case::Case;
use crate::host::Policy;
use crate::metadata::*;
use crate::{POLICIES, repo_root};
use serde::Serialize;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// questions-ui.yml of the bundle

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
            sequence_questions: None,
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

// ---------------------------------------------------------------------------------------------
// artifacthub-pkg.yml

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
            // The asset `make release-modules` attaches to the release for this module.
            let asset = match dir.trim_end_matches('/') {
                "." | "" => "bundle",
                d => d.rsplit('/').next().unwrap_or(d),
            };
            let url =
                format!("{source}/releases/download/{}/gangwarden-{asset}-v{version}.wasm", tag.replace('/', "%2F"));
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
    metadata: ManifestMeta,
    spec: S,
}

/// A policy resource's metadata: its name, and the severity and category the audit scanner
/// copies into each report result (as `kwctl scaffold manifest` copies them).
#[derive(Serialize)]
struct ManifestMeta {
    name: String,
    annotations: BTreeMap<&'static str, String>,
}

const REPORTED_ANNOTATIONS: [&str; 2] = ["io.kubewarden.policy.severity", "io.kubewarden.policy.category"];

impl ManifestMeta {
    fn of(name: &str, metadata: &Metadata) -> Result<ManifestMeta, String> {
        let annotations = REPORTED_ANNOTATIONS
            .iter()
            .map(|key| Ok((*key, metadata.annotation(key)?.to_string())))
            .collect::<Result<_, String>>()?;
        Ok(ManifestMeta { name: name.to_string(), annotations })
    }
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
    /// `Equivalent`: a request in a version the rules do not list still reaches the policy,
    /// converted to a listed one (a `scheduling.k8s.io` version newer than this release).
    match_policy: &'static str,
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
    match_policy: &'static str,
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

/// Every manifest's `matchPolicy` (the apiserver's default, written out so that it is seen).
const MATCH_POLICY: &str = "Equivalent";

fn file_name(path: &Path) -> String {
    path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default()
}

fn policy_manifest(policy: &str, dir: &str, mode: &'static str) -> Result<String, String> {
    let metadata = read_metadata(dir)?;
    let (name, stem) = deploy_name(policy);
    let manifest = Manifest {
        api_version: "policies.kubewarden.io/v1",
        kind: "ClusterAdmissionPolicy",
        metadata: ManifestMeta::of(name, &metadata)?,
        spec: PolicySpec {
            policy_server: "default",
            module: format!("registry://{}", metadata.image()?),
            mode,
            mutating: metadata.mutating,
            background_audit: metadata.background_audit,
            settings: manifest_settings(policy)?,
            match_policy: MATCH_POLICY,
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
        // The group reports as its first member does (gang and topology agree).
        metadata: ManifestMeta::of("gangwarden-gang-topology", &metadata[0])?,
        spec: GroupSpec {
            policy_server: "default",
            mode,
            background_audit: true,
            match_policy: MATCH_POLICY,
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
}

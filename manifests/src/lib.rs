//! gangwarden-manifests: gangwarden's verdicts on manifest files, before they reach a cluster.
//!
//! The engine behind the `gangwarden check` CLI and the browser playground. It does no I/O
//! (the caller hands it text) and builds for native targets and `wasm32-unknown-unknown`.
//!
//! # What it does
//!
//! [`check`] reads every [`SourceFile`] of an [`Input`] (multi-document YAML or JSON; `List`
//! and `<Kind>List` documents are expanded into their items) and, for each document of a kind
//! some rule set guards, runs the same code path the published `.wasm` policies run:
//! it builds the AdmissionRequest with [`gangwarden_core::request::admission_request`]
//! (CREATE, or UPDATE when an `old` file holds a previous version of the object), wraps it as
//! the validate payload `{"request": ..., "settings": <that rule set's settings>}` and calls
//! [`gangwarden_core::engine::evaluate`] for each selected rule set. So `accepted`, `code`,
//! `message`, `warnings` and the mutated object are exactly what the policy module answers
//! (the e2e fidelity test holds it to the built modules). The rule ids and field paths of the
//! findings come from the rule set's verdict on the same decoded request, located in the file.
//!
//! Lookups see a cluster made of every checked document plus the `cluster` files (old files
//! are not in it: they are what the checked documents replace). Each lookup is recorded in
//! the report. Two documents may describe the same object (overlays of one app often do):
//! both are checked, and lookups find the first.
//!
//! # Input
//!
//! [`Input`] is serde-deserialisable, camelCase, so a JavaScript caller can pass JSON:
//!
//! ```json
//! {"files": [{"name": "pg.yaml", "text": "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\n..."}],
//!  "old": [], "cluster": [],
//!  "settings": {"gang": {"maxMinCount": 64}},
//!  "ruleSets": ["gang", "topology"],
//!  "kubernetesVersion": "1.36"}
//! ```
//!
//! - `settings` is the bundle policy's format (`gang`, `topology`, `claims`, `runPolicy`
//!   keys; `null` means defaults). Or give `settingsFile` (YAML/JSON text) instead, and
//!   settings errors point into it.
//! - `ruleSets` empty means all four.
//! - `kubernetesVersion` (`"1.36"`), when given, reports `scheduling.k8s.io` documents of an
//!   API version that release does not serve (see [`KubernetesVersion`]), and what that
//!   release's apiserver refuses before any webhook ([`ApiserverRefusal`]).
//! - `partialCluster` (default false): see [`Input::partial_cluster`]; when set, listing a
//!   kind of which no object was given (typically Nodes) is a failed lookup, which the rules
//!   report as a warning that they skipped the check, rather than an empty list.
//!
//! # Output
//!
//! `Ok(`[`Report`]`)` with one [`DocumentReport`] per checked document in input order (per
//! rule set: verdict, [`Finding`]s located at file line/column, RFC 6902 patch of a mutation,
//! lookups, time taken when a clock is given), the [`SkippedDocument`]s no rule set guards,
//! the [`UnservedDocument`]s and [`ApiserverRefusal`]s (with `kubernetesVersion`), and a [`Summary`]. All of it
//! serialises to camelCase JSON.
//!
//! `Err(Vec<`[`InputError`]`>)` when the input cannot be checked: unreadable YAML/JSON,
//! duplicate mapping keys, aliases expanding beyond a budget, documents nested more than 128
//! levels or larger than 3 MiB, settings the policies would refuse. Each error names the
//! file, the 1-based line and column, and what is wrong.
//!
//! ```
//! use gangwarden_manifests::{Input, SourceFile, check};
//!
//! let text = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\nspec:\n  schedulingPolicy:\n    gang: {minCount: 0}\n";
//! let input = Input { files: vec![SourceFile::new("pg.yaml", text)], ..Input::default() };
//! let report = check(&input).unwrap();
//! let gang = &report.documents[0].results[0];
//! assert!(!gang.accepted);
//! let finding = &gang.violations[0];
//! assert_eq!((finding.rule.as_str(), finding.line, finding.column), ("gang.min-count", 6, 12));
//! ```

mod cluster;
mod yaml;

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use gangwarden_core::engine::{self, RuleSet};
use gangwarden_core::field::FieldError;
use gangwarden_core::request::admission_request;
use gangwarden_core::review::{self, AdmissionRequest, GroupVersionKind, Resource, Review};
use gangwarden_core::rules::bundle::Bundle;
use gangwarden_core::rules::claims::Claims;
use gangwarden_core::rules::gang::Gang;
use gangwarden_core::rules::run_policy::RunPolicyRules;
use gangwarden_core::rules::topology::Topology;
use gangwarden_core::verdict::Verdict;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use cluster::{DocumentCluster, Lookup};
pub use yaml::{
    ALIAS_NODE_BUDGET, Document, MAX_DEPTH, MAX_DOCUMENT_BYTES, Node, Position, path_segments, read_documents,
};

/// A named piece of manifest text (a file path, `-` for stdin, a playground pane).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into() }
    }
}

/// The four rule sets, by the names the bundle's settings use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleSetName {
    Gang,
    Topology,
    Claims,
    RunPolicy,
}

impl RuleSetName {
    pub const ALL: [RuleSetName; 4] =
        [RuleSetName::Gang, RuleSetName::Topology, RuleSetName::Claims, RuleSetName::RunPolicy];

    /// The name in settings and reports: `gang`, `topology`, `claims`, `runPolicy`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSetName::Gang => Gang::NAME,
            RuleSetName::Topology => Topology::NAME,
            RuleSetName::Claims => Claims::NAME,
            RuleSetName::RunPolicy => RunPolicyRules::NAME,
        }
    }

    /// The policy folder that ships the rule set alone (`policies/<folder>`), also the key of
    /// [`gangwarden_core::rules::ALL`].
    pub fn policy(self) -> &'static str {
        match self {
            RuleSetName::RunPolicy => "run-policy",
            other => other.as_str(),
        }
    }

    /// Accepts the settings name or the policy folder name (`runPolicy` or `run-policy`).
    pub fn parse(name: &str) -> Option<RuleSetName> {
        RuleSetName::ALL.into_iter().find(|r| r.as_str() == name || r.policy() == name)
    }
}

impl fmt::Display for RuleSetName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Kubernetes release whose served `scheduling.k8s.io` versions documents must use.
///
/// This build's rule sets guard the 1.36 API (`scheduling.k8s.io/v1alpha2`). Choosing a
/// release reports every Workload, PodGroup or CompositePodGroup written in a version that
/// release does not serve (it would be refused by the apiserver before any policy saw it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KubernetesVersion {
    #[serde(rename = "1.36")]
    V1_36,
    #[serde(rename = "1.37")]
    V1_37,
    /// As planned (KEP-4671 GA, KEP-6089): `v1` next to `v1beta1` and `v1alpha3`.
    #[serde(rename = "1.38")]
    V1_38,
}

impl KubernetesVersion {
    pub const ALL: [KubernetesVersion; 3] =
        [KubernetesVersion::V1_36, KubernetesVersion::V1_37, KubernetesVersion::V1_38];

    pub fn as_str(self) -> &'static str {
        match self {
            KubernetesVersion::V1_36 => "1.36",
            KubernetesVersion::V1_37 => "1.37",
            KubernetesVersion::V1_38 => "1.38",
        }
    }

    pub fn parse(text: &str) -> Option<KubernetesVersion> {
        KubernetesVersion::ALL.into_iter().find(|v| v.as_str() == text.trim_start_matches('v'))
    }

    /// The `scheduling.k8s.io` versions that serve Workload, PodGroup and CompositePodGroup.
    pub fn scheduling_versions(self) -> &'static [&'static str] {
        match self {
            KubernetesVersion::V1_36 => &["v1alpha2"],
            KubernetesVersion::V1_37 => &["v1beta1", "v1alpha3"],
            // Assumed until 1.38's code can be read: v1 added, the older names kept.
            KubernetesVersion::V1_38 => &["v1", "v1beta1", "v1alpha3"],
        }
    }
}

/// What to check. See the crate documentation for the JSON form.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Input {
    /// The documents to check.
    pub files: Vec<SourceFile>,
    /// Previous versions: a checked document with the same API group, kind, namespace and
    /// name as one of these is checked as an UPDATE from it.
    #[serde(default)]
    pub old: Vec<SourceFile>,
    /// Objects that lookups see besides the checked documents (Nodes, claims, ...).
    #[serde(default)]
    pub cluster: Vec<SourceFile>,
    /// The bundle's settings as JSON (`null`: defaults). Ignored when `settings_file` is set.
    #[serde(default)]
    pub settings: Value,
    /// The bundle's settings as YAML or JSON text; errors are located in it.
    #[serde(default)]
    pub settings_file: Option<SourceFile>,
    /// The rule sets to run; empty means all.
    #[serde(default)]
    pub rule_sets: Vec<RuleSetName>,
    #[serde(default)]
    pub kubernetes_version: Option<KubernetesVersion>,
    /// The documents and `cluster` files are only part of the cluster: listing a kind none
    /// of them holds fails, and the rule warns that it skipped its check (e.g. the node-label
    /// check when no Nodes were given), where by default (the documents are the whole
    /// cluster) the list is empty, as a real cluster without such objects would answer.
    #[serde(default)]
    pub partial_cluster: bool,
    /// The apiVersions lookups are served in (e.g. `["scheduling.k8s.io/v1alpha2"]`); only
    /// the API groups named are restricted. When left out: those of `kubernetesVersion`, or
    /// else the `scheduling.k8s.io` versions the given documents use (a set written in
    /// v1alpha2 is a 1.36 cluster), or else every version. A Pod finds its PodGroup through
    /// the rule sets' `schedulingApiVersions`, skipping versions that are not served.
    #[serde(default)]
    pub served_api_versions: Option<Vec<String>>,
}

/// The apiVersions the cluster of `input` serves, as [`Input::served_api_versions`] says.
fn served_api_versions(input: &Input, documents: &[&Value]) -> Option<BTreeSet<String>> {
    if let Some(explicit) = &input.served_api_versions {
        return Some(explicit.iter().cloned().collect());
    }
    let group = gangwarden_core::review::SCHEDULING_GROUP;
    let versions: BTreeSet<String> = match input.kubernetes_version {
        Some(k) => k.scheduling_versions().iter().map(|v| format!("{group}/{v}")).collect(),
        None => documents
            .iter()
            .filter_map(|d| d["apiVersion"].as_str())
            .filter(|v| v.starts_with(&format!("{group}/")))
            // 1.37 serves v1beta1 and v1alpha3 together; 1.38 v1 as well.
            .flat_map(|v| match v.rsplit_once('/').map(|(_, v)| v) {
                Some("v1beta1" | "v1alpha3") => vec![format!("{group}/v1beta1"), format!("{group}/v1alpha3")],
                Some("v1") => ["v1", "v1beta1", "v1alpha3"].iter().map(|v| format!("{group}/{v}")).collect(),
                _ => vec![v.to_string()],
            })
            .collect(),
    };
    (!versions.is_empty()).then_some(versions)
}

/// Why the input could not be checked, and where. `line` and `column` are 1-based; both are
/// 0 when there is no text to point into (settings given as a JSON value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
        }
    }
}

impl std::error::Error for InputError {}

/// A violation or warning, located in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The rule id, e.g. `gang.min-count` (`request` for an object the policies cannot decode).
    pub rule: String,
    /// The field path, e.g. `spec.schedulingPolicy.gang.minCount` (may be empty).
    pub path: String,
    /// The text exactly as the policy reports it, with the path and rule id.
    pub message: String,
    /// Where `path` (or its nearest written ancestor) is in the file, 1-based.
    pub line: usize,
    pub column: usize,
}

/// One rule set's answer for one document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleSetResult {
    pub rule_set: RuleSetName,
    pub accepted: bool,
    /// Set when the policy refuses the request itself (400: the object cannot be decoded).
    pub code: Option<u16>,
    /// The rejection message exactly as the `.wasm` policy returns it.
    pub message: Option<String>,
    pub violations: Vec<Finding>,
    pub warnings: Vec<Finding>,
    /// RFC 6902 operations from the object to `mutated_object`.
    pub patch: Option<Value>,
    pub mutated_object: Option<Value>,
    pub lookups: Vec<Lookup>,
    /// Time taken, when [`check_with_clock`] was given a clock.
    pub elapsed_micros: Option<f64>,
}

/// A document that was checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentReport {
    pub file: String,
    /// 0-based index of the document in the file.
    pub document: usize,
    /// For an item of a `List` document, its index in `items`.
    pub item: Option<usize>,
    /// Where the document (or List item) starts, 1-based.
    pub line: usize,
    pub column: usize,
    pub api_version: String,
    pub kind: String,
    /// The namespace the request is made in (`default` when the document names none).
    pub namespace: String,
    pub name: String,
    /// `CREATE`, or `UPDATE` when an old version was given.
    pub operation: String,
    /// Where the old version came from, on UPDATE: `file:line:column`.
    pub old_source: Option<String>,
    pub results: Vec<RuleSetResult>,
}

impl DocumentReport {
    pub fn accepted(&self) -> bool {
        self.results.iter().all(|r| r.accepted)
    }

    pub fn warning_count(&self) -> usize {
        self.results.iter().map(|r| r.warnings.len()).sum()
    }
}

/// A document that was not checked, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedDocument {
    pub file: String,
    pub document: usize,
    pub item: Option<usize>,
    pub line: usize,
    pub column: usize,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub reason: String,
}

/// A document in an API version the chosen Kubernetes release does not serve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnservedDocument {
    pub file: String,
    pub document: usize,
    pub item: Option<usize>,
    pub line: usize,
    pub column: usize,
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub message: String,
}

/// What the chosen Kubernetes release's own validation refuses before any webhook would see
/// the request, in the apiserver's wording. The document is still checked: its policy verdict
/// is what a release that lets it through gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiserverRefusal {
    #[serde(flatten)]
    pub at: Place,
    pub api_version: String,
    pub message: String,
}

/// Which document, object and field a refusal or a note is about, and where that field is
/// written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    pub file: String,
    pub document: usize,
    pub item: Option<usize>,
    /// Where `path` (or its nearest written ancestor) is in the file, 1-based.
    pub line: usize,
    pub column: usize,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub path: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Every document read from `files` (List items counted one by one).
    pub documents: usize,
    pub checked: usize,
    /// Checked documents every rule set accepted.
    pub accepted: usize,
    pub rejected: usize,
    /// Warnings over all checked documents and rule sets.
    pub warnings: usize,
    /// Checked documents some rule set would change (defaulting).
    pub mutated: usize,
    pub skipped: usize,
    pub unserved: usize,
    /// Documents the chosen release's apiserver refuses ([`ApiserverRefusal`]).
    pub refused: usize,
}

/// Something true of a checked document that no policy can see from inside the cluster: group
/// DRA claims that the apiserver drops where the `DRAWorkloadResourceClaims` feature gate is off
/// (beta and off by default in Kubernetes 1.36 to 1.38), before any webhook runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    #[serde(flatten)]
    pub at: Place,
    pub message: String,
}

/// The feature gate without which the apiserver drops a PodGroup's, a Workload template's and a
/// Job's `resourceClaims`.
pub const GROUP_CLAIMS_GATE: &str = "DRAWorkloadResourceClaims";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub rule_sets: Vec<RuleSetName>,
    pub kubernetes_version: Option<KubernetesVersion>,
    pub documents: Vec<DocumentReport>,
    pub skipped: Vec<SkippedDocument>,
    pub unserved: Vec<UnservedDocument>,
    /// With `kubernetesVersion`: what that release's apiserver refuses among the checked documents.
    pub refused: Vec<ApiserverRefusal>,
    /// Group claims the apiserver drops where their feature gate is off ([`Note`]).
    #[serde(default)]
    pub notes: Vec<Note>,
    pub summary: Summary,
}

impl Report {
    /// Whether anything was rejected (by a policy, or by the chosen release's apiserver, or
    /// written in an API version not served).
    pub fn rejected(&self) -> bool {
        self.summary.rejected > 0 || self.summary.unserved > 0 || self.summary.refused > 0
    }
}

/// Checks `input`. See the crate documentation.
pub fn check(input: &Input) -> Result<Report, Vec<InputError>> {
    run(input, None)
}

/// [`check`], timing each rule set with `clock` (a monotonic time in microseconds, e.g.
/// `performance.now() * 1000` in a browser): fills [`RuleSetResult::elapsed_micros`].
pub fn check_with_clock(input: &Input, clock: &mut dyn FnMut() -> f64) -> Result<Report, Vec<InputError>> {
    run(input, Some(clock))
}

/// Reads the bundle-format settings of `input` and validates them with each rule set's own
/// code, as the bundle policy and the single policies do. Returns the settings as JSON.
pub fn validate_settings(input: &Input) -> Result<Value, Vec<InputError>> {
    let (settings, source) = match &input.settings_file {
        Some(file) => {
            let mut documents = read_documents(file).map_err(|e| vec![e])?;
            if documents.len() > 1 {
                let at = documents[1].position();
                return Err(vec![InputError {
                    file: file.name.clone(),
                    line: at.line,
                    column: at.column,
                    message: "settings must be one document".into(),
                }]);
            }
            match documents.pop() {
                Some(doc) => (doc.value, Some((file.name.as_str(), doc.node))),
                None => (Value::Null, None),
            }
        }
        None => (input.settings.clone(), None),
    };
    let error = |path: &str, message: String| {
        let (file, at) = match &source {
            Some((name, node)) => (name.to_string(), node.locate(path)),
            None => ("settings".to_string(), Position::default()),
        };
        InputError { file, line: at.line, column: at.column, message }
    };
    if !settings.is_null() && !settings.is_object() {
        return Err(vec![error("", "settings must be a mapping with gang, topology, claims or runPolicy keys".into())]);
    }
    let mut errors = Vec::new();
    for rule_set in RuleSetName::ALL {
        let key = rule_set.as_str();
        let own = &settings[key];
        let result = match rule_set {
            RuleSetName::Gang => engine::parse_settings::<Gang>(own).map(drop),
            RuleSetName::Topology => engine::parse_settings::<Topology>(own).map(drop),
            RuleSetName::Claims => engine::parse_settings::<Claims>(own).map(drop),
            RuleSetName::RunPolicy => engine::parse_settings::<RunPolicyRules>(own).map(drop),
        };
        if let Err(message) = result {
            let field = message.split_once(": ").map_or("", |(_, rest)| settings_field(rest));
            errors.push(error(&format!("{key}.{field}"), message));
        }
    }
    if errors.is_empty()
        && let Err(message) = engine::parse_settings::<Bundle>(&settings)
    {
        let field = message.split_once(": ").map_or("", |(_, rest)| settings_field(rest)).to_string();
        errors.push(error(&field, message));
    }
    if errors.is_empty() { Ok(settings) } else { Err(errors) }
}

/// The field a settings error names: the text before the first `: ` when it reads as a path.
fn settings_field(detail: &str) -> &str {
    match detail.split_once(": ") {
        Some((path, _)) if !path.is_empty() && !path.contains(' ') => path,
        _ => "",
    }
}

/// A document read from a file, with where it came from.
struct Located {
    file: usize,
    document: Document,
}

impl Located {
    fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::of_object(&self.document.value)
    }

    fn name(&self) -> &str {
        self.document.value["metadata"]["name"].as_str().unwrap_or_default()
    }

    /// As the apiserver files it: "default" when left out, none for cluster-scoped kinds.
    fn namespace(&self) -> &str {
        let gvk = self.gvk();
        match gangwarden_core::request::is_cluster_scoped(&gvk.group, &gvk.kind) {
            true => "",
            false => self.document.value["metadata"]["namespace"].as_str().unwrap_or("default"),
        }
    }

    /// API group, kind, namespace and name: the identity an UPDATE pairs on.
    fn identity(&self) -> Option<(String, String, String, String)> {
        let gvk = self.gvk();
        let name = self.name();
        (!name.is_empty() && !gvk.kind.is_empty())
            .then(|| (gvk.group, gvk.kind, self.namespace().to_string(), name.to_string()))
    }
}

fn read_all(files: &[SourceFile], errors: &mut Vec<InputError>) -> Vec<Located> {
    let mut out = Vec::new();
    for (i, file) in files.iter().enumerate() {
        match read_documents(file) {
            Ok(documents) => out.extend(documents.into_iter().map(|document| Located { file: i, document })),
            Err(e) => errors.push(e),
        }
    }
    out
}

fn run(input: &Input, mut clock: Option<&mut dyn FnMut() -> f64>) -> Result<Report, Vec<InputError>> {
    let mut errors = Vec::new();
    let settings = match validate_settings(input) {
        Ok(s) => s,
        Err(e) => {
            errors.extend(e);
            Value::Null
        }
    };
    let documents = read_all(&input.files, &mut errors);
    let old = read_all(&input.old, &mut errors);
    let extra = read_all(&input.cluster, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let rule_sets = if input.rule_sets.is_empty() { RuleSetName::ALL.to_vec() } else { input.rule_sets.clone() };
    // The first old version of an object wins, as the first document does in lookups.
    let mut old_by_identity: HashMap<_, &Located> = HashMap::new();
    for o in &old {
        if let Some(identity) = o.identity() {
            old_by_identity.entry(identity).or_insert(o);
        }
    }
    let objects: Vec<Value> = documents
        .iter()
        .chain(&extra)
        .filter(|d| d.document.value.is_object())
        .map(|d| d.document.value.clone())
        .collect();
    let served = served_api_versions(
        input,
        &documents.iter().chain(&old).chain(&extra).map(|d| &d.document.value).collect::<Vec<_>>(),
    );
    let cluster = if input.partial_cluster { DocumentCluster::partial(objects) } else { DocumentCluster::new(objects) };
    let cluster = match served {
        Some(served) => cluster.serving(served),
        None => cluster,
    };
    let settings_json: Vec<(RuleSetName, String)> =
        rule_sets.iter().map(|r| (*r, settings[r.as_str()].to_string())).collect();

    let mut report = Report {
        rule_sets: rule_sets.clone(),
        kubernetes_version: input.kubernetes_version,
        documents: Vec::new(),
        skipped: Vec::new(),
        unserved: Vec::new(),
        refused: Vec::new(),
        notes: Vec::new(),
        summary: Summary { documents: documents.len(), ..Summary::default() },
    };
    for doc in &documents {
        let file = &input.files[doc.file].name;
        let gvk = doc.gvk();
        let at = doc.document.position();
        let skip = |reason: String| SkippedDocument {
            file: file.clone(),
            document: doc.document.index,
            item: doc.document.item,
            line: at.line,
            column: at.column,
            api_version: gvk.api_version(),
            kind: gvk.kind.clone(),
            name: doc.name().to_string(),
            reason,
        };
        if !doc.document.value.is_object() || gvk.kind.is_empty() {
            report.skipped.push(skip("not a Kubernetes object: it has no kind".into()));
            continue;
        }
        if let Some(version) = input.kubernetes_version
            && let Some(message) = unserved_message(&gvk, version)
        {
            report.unserved.push(UnservedDocument {
                file: file.clone(),
                document: doc.document.index,
                item: doc.document.item,
                line: at.line,
                column: at.column,
                api_version: gvk.api_version(),
                kind: gvk.kind.clone(),
                namespace: doc.namespace().to_string(),
                name: doc.name().to_string(),
                message,
            });
            continue;
        }
        if !review::guards(&gvk) {
            report.skipped.push(skip(format!("no rule set guards {} {}", gvk.api_version(), gvk.kind)));
            continue;
        }
        let old_doc = doc.identity().and_then(|id| old_by_identity.get(&id).copied());
        let old_source = old_doc.map(|o| {
            let at = o.document.position();
            format!("{}:{}:{}", input.old[o.file].name, at.line, at.column)
        });
        let operation = if old_doc.is_some() { "UPDATE" } else { "CREATE" };
        let uid = format!("{file}#{}", doc.document.index);
        let request = admission_request(&uid, operation, &doc.document.value, old_doc.map(|o| &o.document.value));
        let request_json = request.to_string();
        let review = AdmissionRequest::parse(&request_json).and_then(|r| r.review());
        let place = |path: String| {
            let located = doc.document.node.locate(&path);
            Place {
                file: file.clone(),
                document: doc.document.index,
                item: doc.document.item,
                line: located.line,
                column: located.column,
                kind: gvk.kind.clone(),
                namespace: request["namespace"].as_str().unwrap_or_default().to_string(),
                name: doc.name().to_string(),
                path,
            }
        };
        if let (Some(version), Ok(Some(review))) = (input.kubernetes_version, &review)
            && let Some(error) = apiserver_refusal(version, review)
        {
            report.refused.push(ApiserverRefusal {
                at: place(error.path.to_string()),
                api_version: gvk.api_version(),
                message: error.to_string(),
            });
        }
        if let Ok(Some(review)) = &review {
            for group in
                review.object.group_specs().iter().filter(|g| g.resource_claims.as_ref().is_some_and(|c| !c.is_empty()))
            {
                let path = group.path.child("resourceClaims").to_string();
                report.notes.push(Note {
                    message: format!(
                        "{path}: the apiserver drops these group claims where the {GROUP_CLAIMS_GATE} feature gate is off (beta, off by default in Kubernetes 1.36 to 1.38): the pods then get their own claims from the templates, and a ResourceClaim they name is reserved for each of them (at most 256)"
                    ),
                    at: place(path),
                });
            }
        }
        let mut results = Vec::new();
        for (rule_set, settings_json) in &settings_json {
            let started = clock.as_mut().map(|c| c());
            let payload = format!("{{\"request\":{request_json},\"settings\":{settings_json}}}");
            let response = evaluate(*rule_set, payload.as_bytes(), &cluster);
            let elapsed = started.and_then(|s| clock.as_mut().map(|c| c() - s));
            let lookups = cluster.take_lookups();
            let (violations, warnings) = match &review {
                Ok(Some(review)) => {
                    let verdict = verdict(*rule_set, &settings[rule_set.as_str()], review, &cluster);
                    cluster.take_lookups();
                    findings(&verdict, &doc.document.node)
                }
                _ => (decode_findings(&response, &doc.document.node), Vec::new()),
            };
            let patch = response.mutated_object.as_ref().map(|mutated| {
                serde_json::to_value(json_patch::diff(&doc.document.value, mutated)).unwrap_or(Value::Null)
            });
            results.push(RuleSetResult {
                rule_set: *rule_set,
                accepted: response.accepted,
                code: response.code,
                message: response.message,
                violations,
                warnings,
                patch,
                mutated_object: response.mutated_object,
                lookups,
                elapsed_micros: elapsed,
            });
        }
        let document = DocumentReport {
            file: file.clone(),
            document: doc.document.index,
            item: doc.document.item,
            line: at.line,
            column: at.column,
            api_version: gvk.api_version(),
            kind: gvk.kind.clone(),
            namespace: request["namespace"].as_str().unwrap_or_default().to_string(),
            name: doc.name().to_string(),
            operation: operation.to_string(),
            old_source,
            results,
        };
        report.summary.checked += 1;
        if document.accepted() {
            report.summary.accepted += 1;
        } else {
            report.summary.rejected += 1;
        }
        report.summary.warnings += document.warning_count();
        if document.results.iter().any(|r| r.mutated_object.is_some()) {
            report.summary.mutated += 1;
        }
        report.documents.push(document);
    }
    report.summary.skipped = report.skipped.len();
    report.summary.unserved = report.unserved.len();
    report.summary.refused = report.refused.len();
    Ok(report)
}

/// The scheduling kinds whose API version depends on the Kubernetes release.
const VERSIONED_SCHEDULING_KINDS: &[&str] = &["Workload", "PodGroup", "CompositePodGroup"];

fn unserved_message(gvk: &GroupVersionKind, version: KubernetesVersion) -> Option<String> {
    let served = version.scheduling_versions();
    if gvk.group != review::SCHEDULING_GROUP
        || !VERSIONED_SCHEDULING_KINDS.contains(&gvk.kind.as_str())
        || served.contains(&gvk.version.as_str())
    {
        return None;
    }
    Some(format!(
        "apiVersion: Unsupported value: {:?}: Kubernetes {} serves {} {} in: {}",
        gvk.api_version(),
        version.as_str(),
        review::SCHEDULING_GROUP,
        gvk.kind,
        served.iter().map(|v| format!("\"{}/{v}\"", review::SCHEDULING_GROUP)).collect::<Vec<_>>().join(", ")
    ))
}

/// What the apiserver of `version` refuses in `review` before any webhook: from 1.38, a Job's
/// or CronJob's `spec.scheduling` next to the Pod template's `schedulingGroup` (1.37 takes the
/// pair; the policies then warn that `spec.scheduling` is not used).
fn apiserver_refusal(version: KubernetesVersion, review: &Review) -> Option<FieldError> {
    let Resource::BatchJob(job) = &review.object else { return None };
    let old = match &review.old_object {
        Some(Resource::BatchJob(old)) => Some(old.as_ref()),
        _ => None,
    };
    match version {
        KubernetesVersion::V1_36 | KubernetesVersion::V1_37 => None,
        KubernetesVersion::V1_38 => gangwarden_core::rules::gang::refused_by_kubernetes_1_38(job, old),
    }
}

/// The rule set's answer to a validate payload: the policies' own entry point.
fn evaluate(rule_set: RuleSetName, payload: &[u8], cluster: &DocumentCluster) -> engine::Response {
    match rule_set {
        RuleSetName::Gang => engine::evaluate::<Gang>(payload, cluster),
        RuleSetName::Topology => engine::evaluate::<Topology>(payload, cluster),
        RuleSetName::Claims => engine::evaluate::<Claims>(payload, cluster),
        RuleSetName::RunPolicy => engine::evaluate::<RunPolicyRules>(payload, cluster),
    }
}

/// The verdict behind a response, for the rule ids and field paths the response flattens
/// into one message. Settings were validated up front, so parsing them cannot fail here.
fn verdict(rule_set: RuleSetName, settings: &Value, review: &Review, cluster: &DocumentCluster) -> Verdict {
    fn run<R: RuleSet>(settings: &Value, review: &Review, cluster: &DocumentCluster) -> Verdict {
        engine::parse_settings::<R>(settings).map(|s| engine::check::<R>(&s, review, cluster)).unwrap_or_default()
    }
    match rule_set {
        RuleSetName::Gang => run::<Gang>(settings, review, cluster),
        RuleSetName::Topology => run::<Topology>(settings, review, cluster),
        RuleSetName::Claims => run::<Claims>(settings, review, cluster),
        RuleSetName::RunPolicy => run::<RunPolicyRules>(settings, review, cluster),
    }
}

fn findings(verdict: &Verdict, node: &Node) -> (Vec<Finding>, Vec<Finding>) {
    let finding = |rule: &str, path: &str, message: String| {
        let at = node.locate(path);
        Finding { rule: rule.to_string(), path: path.to_string(), message, line: at.line, column: at.column }
    };
    let violations = verdict.violations.iter().map(|v| finding(v.rule, v.error.path.as_str(), v.to_string())).collect();
    let warnings = verdict.warnings.iter().map(|w| finding(w.rule, w.path.as_str(), w.to_string())).collect();
    (violations, warnings)
}

/// A request the policies refuse before any rule runs (an object that does not decode as
/// its kind): one finding, at the field the decoder names when it names one.
fn decode_findings(response: &engine::Response, node: &Node) -> Vec<Finding> {
    let Some(message) = response.message.as_ref().filter(|_| !response.accepted) else { return Vec::new() };
    let detail = message.strip_prefix("cannot decode request.object as ").and_then(|rest| rest.split_once(": "));
    let path = detail.map_or("", |(_, rest)| settings_field(rest));
    let at = node.locate(path);
    vec![Finding {
        rule: "request".into(),
        path: path.to_string(),
        message: message.clone(),
        line: at.line,
        column: at.column,
    }]
}

#[cfg(test)]
mod tests;

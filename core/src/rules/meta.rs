//! Object metadata, checked as the apiserver checks it for every kind gangwarden guards
//! before any webhook sees the object (apimachinery `ValidateObjectMeta` and
//! `ValidateObjectMetaUpdate`, with each kind's name rule). At admission these never fire
//! (the apiserver has refused such an object already); `gangwarden check` and the playground
//! see manifests first, and answer what the apiserver would. The engine runs them for every
//! rule set ([`crate::engine`]), so every policy and face gives them alike.

use std::borrow::Cow;
use std::sync::Arc;

use crate::field::{Field, FieldError, Path};
use crate::names;
use crate::review::{Operation, Review};
use crate::rules::RuleInfo;
use crate::verdict::Verdict;

pub const NAME: &str = "meta.name";
pub const NAMESPACE: &str = "meta.namespace";
pub const LABELS: &str = "meta.labels";
pub const ANNOTATIONS: &str = "meta.annotations";
pub const IMMUTABLE: &str = "meta.immutable";

/// apimachinery `TotalAnnotationSizeLimitB`: the keys and values of all annotations together.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A CronJob's name leaves room for the `-<minutes>` suffix of its Jobs' names (batch
/// validation: `DNS1035LabelMaxLength - 11`).
const CRONJOB_NAME_MAX: usize = 52;

/// The metadata rules, which every policy runs.
pub const RULES: &[RuleInfo] = &[
    RuleInfo {
        id: NAME,
        catalogue: "G-01, G-15, N6",
        summary: "metadata.name (or generateName) is a DNS subdomain, for every kind (a CronJob's at most 52 characters); the Kubeflow and Trainer webhooks' stricter name rules are run-policy.job-name and run-policy.trainjob-name",
    },
    RuleInfo {
        id: NAMESPACE,
        catalogue: "ObjectMeta",
        summary: "metadata.namespace, when written on a namespaced kind, is a DNS label",
    },
    RuleInfo {
        id: LABELS,
        catalogue: "ObjectMeta",
        summary: "label keys are qualified names and values valid label values (apimachinery ValidateLabels)",
    },
    RuleInfo {
        id: ANNOTATIONS,
        catalogue: "ObjectMeta",
        summary: "annotation keys are qualified names (any case), and all annotations together are at most 256 KiB (apimachinery ValidateAnnotations)",
    },
    RuleInfo { id: IMMUTABLE, catalogue: "ObjectMeta", summary: "metadata.name and metadata.namespace never change" },
];

/// The metadata rules on the object of `review`.
pub fn check(review: &Review) -> Verdict {
    let mut v = Verdict::default();
    let meta = &review.metadata;
    let path = Path::new("metadata");
    let namespaced = !crate::request::is_cluster_scoped(&review.kind.group, &review.kind.kind);
    match (&review.old_metadata, review.operation) {
        (Some(old), Operation::Update) => {
            // The name is as the object was created; only that it stays so is checked.
            let (name, old_name) = (text(&meta.name), text(&old.name));
            if !name.is_empty() && !old_name.is_empty() && name != old_name {
                v.deny(IMMUTABLE, FieldError::immutable(path.child("name"), name));
            }
            // A namespace left out is the request's; a cluster-scoped object's is cleared.
            let (namespace, old_namespace) = (or_request(&meta.namespace, review), or_request(&old.namespace, review));
            if namespaced && namespace != old_namespace {
                v.deny(IMMUTABLE, FieldError::immutable(path.child("namespace"), namespace));
            }
        }
        _ => {
            check_name(&review.kind.kind, meta.name.as_deref(), meta.generate_name.as_deref(), &path, &mut v);
            if let Some(ns) = meta.namespace.as_deref().filter(|ns| !ns.is_empty() && namespaced) {
                v.deny_all(NAMESPACE, names::check_set(path.field("namespace"), ns, names::is_dns1123_label));
            }
        }
    }
    check_labels(&meta.labels, path.field("labels"), &mut v);
    check_annotations(&meta.annotations, path.field("annotations"), &mut v);
    v
}

fn text<'s>(s: &'s Option<Cow<str>>) -> &'s str {
    s.as_deref().unwrap_or_default()
}

/// A namespace as written, or the request's when it is left out.
fn or_request<'s>(namespace: &'s Option<Cow<str>>, review: &'s Review) -> &'s str {
    namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(&review.namespace)
}

/// `ValidateObjectMeta`'s name part, with `NameIsDNSSubdomain` (the rule of every kind
/// gangwarden guards, custom resources included). A `generateName` is checked as a prefix
/// (its trailing `-` stands for the characters the apiserver appends); the name then
/// generated is never invalid where the prefix is valid, so only the prefix is reported.
fn check_name(kind: &str, name: Option<&str>, generate_name: Option<&str>, path: &Path, v: &mut Verdict) {
    let name = name.unwrap_or_default();
    let prefix = generate_name.unwrap_or_default();
    if !prefix.is_empty() {
        for msg in names::is_dns1123_subdomain(&mask_trailing_dash(prefix)) {
            v.deny(NAME, FieldError::invalid(path.child("generateName"), prefix, msg));
        }
    }
    if name.is_empty() {
        if prefix.is_empty() {
            v.deny(NAME, FieldError::required(path.child("name"), "name or generateName is required"));
        }
        return;
    }
    v.deny_all(NAME, names::check_set(path.field("name"), name, names::is_dns1123_subdomain));
    if kind == "CronJob" && name.len() > CRONJOB_NAME_MAX {
        let msg = format!("must be no more than {CRONJOB_NAME_MAX} characters");
        v.deny(NAME, FieldError::invalid(path.child("name"), name, msg));
    }
}

/// The name a job will be created with, and the field that gives it: `metadata.name`, or, with
/// `generateName` and no name yet (a mutating webhook runs before the apiserver generates the
/// name), the prefix as the apiserver completes it: cut to 58 characters, plus 5 lowercase
/// alphanumerics. `None` for a name the apiserver refuses: that never reaches the webhook,
/// and is [`NAME`]'s to say. The Kubeflow and MPI
/// operators both check the name as created.
pub fn name_as_created(meta: &crate::meta::ObjectMeta) -> Option<(Path, &str, String)> {
    let name = meta.name.as_deref().unwrap_or_default();
    if !apiserver_accepts_name(name, meta.generate_name.as_deref()) {
        return None;
    }
    Some(match meta.generate_name.as_deref() {
        Some(prefix) if name.is_empty() && !prefix.is_empty() => {
            let generated: String = prefix.chars().take(58).chain("x0000".chars()).collect();
            (Path::new("metadata").child("generateName"), prefix, generated)
        }
        _ => (Path::new("metadata").child("name"), name, name.to_string()),
    })
}

/// Whether the apiserver's name rule accepts `name` (or, with no name, the prefix): the
/// webhooks' stricter name rules see only names it accepts.
pub fn apiserver_accepts_name(name: &str, generate_name: Option<&str>) -> bool {
    match generate_name.filter(|_| name.is_empty()) {
        Some(prefix) => names::is_dns1123_subdomain(&mask_trailing_dash(prefix)).is_empty(),
        None => names::is_dns1123_subdomain(name).is_empty(),
    }
}

/// apimachinery's `maskTrailingDash`: a prefix ending in `-` is checked with its last two
/// characters replaced by `a` (upstream drops one character too many; kept, so the same
/// prefixes pass). Works on bytes as Go does; a cut inside a character reads as invalid.
fn mask_trailing_dash(prefix: &str) -> Cow<'_, str> {
    let bytes = prefix.as_bytes();
    if bytes.len() > 1 && bytes.ends_with(b"-") {
        let mut masked = bytes[..bytes.len() - 2].to_vec();
        masked.push(b'a');
        Cow::Owned(String::from_utf8_lossy(&masked).into_owned())
    } else {
        Cow::Borrowed(prefix)
    }
}

/// The few distinct messages of one map's errors, each allocated once: a hostile object with
/// tens of thousands of bad labels gets as many errors, and they share their text.
#[derive(Default)]
struct Details(Vec<Arc<str>>);

impl Details {
    fn of(&mut self, msg: String) -> Arc<str> {
        if let Some(d) = self.0.iter().find(|d| ***d == *msg) {
            return d.clone();
        }
        let d: Arc<str> = msg.into();
        if self.0.len() < 16 {
            self.0.push(d.clone());
        }
        d
    }
}

/// `ValidateLabels`: every error at `metadata.labels` itself, with the key or the value.
fn check_labels(labels: &[(Cow<str>, Cow<str>)], at: Field, v: &mut Verdict) {
    let mut details = Details::default();
    for (key, value) in labels {
        if !names::is_valid_qualified_name(key) {
            for msg in names::is_qualified_name(key) {
                v.deny(LABELS, FieldError::invalid(at.path(), key.as_ref(), details.of(msg)));
            }
        }
        if !names::is_valid_label_value(value) {
            for msg in names::is_label_value(value) {
                v.deny(LABELS, FieldError::invalid(at.path(), value.as_ref(), details.of(msg)));
            }
        }
    }
}

/// `ValidateAnnotations`: keys are qualified names once lowercased; the total size.
fn check_annotations(annotations: &[(Cow<str>, Cow<str>)], at: Field, v: &mut Verdict) {
    let mut total = 0usize;
    let mut details = Details::default();
    for (key, value) in annotations {
        // Case does not matter; a key of lowercase letters needs no lowercased copy.
        let lower = if key.bytes().any(|b| b.is_ascii_uppercase()) {
            key.to_ascii_lowercase().into()
        } else {
            Cow::Borrowed(key.as_ref())
        };
        if !names::is_valid_qualified_name(&lower) {
            for msg in names::is_qualified_name(&lower) {
                v.deny(ANNOTATIONS, FieldError::invalid(at.path(), key.as_ref(), details.of(msg)));
            }
        }
        total = total.saturating_add(key.len()).saturating_add(value.len());
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        v.deny(ANNOTATIONS, FieldError::too_long(at.path(), TOTAL_ANNOTATION_SIZE_LIMIT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::review_request;
    use serde_json::{Value, json};

    fn messages(operation: &str, object: Value, old: Option<Value>) -> Vec<String> {
        let gvk = crate::review::GroupVersionKind::of_object(&object);
        let request = json!({"operation": operation, "namespace": "ml",
            "kind": {"group": gvk.group, "version": gvk.version, "kind": gvk.kind},
            "object": object, "oldObject": old});
        let review = review_request(&request).expect("readable").expect("guarded");
        check(&review).violations.iter().map(ToString::to_string).collect()
    }

    fn pod_group(metadata: Value) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": metadata,
               "spec": {"schedulingPolicy": {"basic": {}}}})
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    #[test]
    fn names_and_prefixes() {
        assert_eq!(
            messages("CREATE", pod_group(json!({"name": "Train_Job"})), None),
            [format!("metadata.name: Invalid value: \"Train_Job\": {SUBDOMAIN} [meta.name]")]
        );
        assert!(messages("CREATE", pod_group(json!({"name": "train.workers-0"})), None).is_empty());
        assert_eq!(
            messages("CREATE", pod_group(json!({})), None),
            ["metadata.name: Required value: name or generateName is required [meta.name]"]
        );
        // A prefix may end in '-'; the name generated from a valid one is valid.
        assert!(messages("CREATE", pod_group(json!({"generateName": "train-"})), None).is_empty());
        assert_eq!(
            messages("CREATE", pod_group(json!({"generateName": "Train-"})), None),
            [format!("metadata.generateName: Invalid value: \"Train-\": {SUBDOMAIN} [meta.name]")]
        );
        let long = "w".repeat(254);
        assert_eq!(
            messages("CREATE", pod_group(json!({"name": long})), None)[0],
            format!("metadata.name: Invalid value: \"{long}\": must be no more than 253 characters [meta.name]")
        );
        let cron = |name: &str| {
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
                   "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}})
        };
        assert!(messages("CREATE", cron(&"c".repeat(52)), None).is_empty());
        assert_eq!(
            messages("CREATE", cron(&"c".repeat(53)), None),
            [format!(
                "metadata.name: Invalid value: \"{}\": must be no more than 52 characters [meta.name]",
                "c".repeat(53)
            )]
        );
    }

    #[test]
    fn masking_a_trailing_dash_never_panics() {
        assert_eq!(mask_trailing_dash("a-"), "a");
        assert_eq!(mask_trailing_dash("ab-"), "aa");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("é-"), "\u{fffd}a");
        assert!(apiserver_accepts_name("", Some("job-")));
        assert!(!apiserver_accepts_name("Job", None));
    }

    #[test]
    fn namespaces() {
        let bad = pod_group(json!({"name": "g", "namespace": "ML_team"}));
        assert_eq!(
            messages("CREATE", bad, None),
            [
                "metadata.namespace: Invalid value: \"ML_team\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?') [meta.namespace]"
            ]
        );
        // Cluster-scoped kinds have their namespace cleared, not checked.
        let runtime = json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "torch", "namespace": "Not_Used"}, "spec": {}});
        assert!(messages("CREATE", runtime, None).is_empty());
    }

    #[test]
    fn labels_and_annotations() {
        let meta = json!({"name": "g", "labels": {"app.kubernetes.io/name": "ok", "Bad Key": "v", "k": "bad value"},
                          "annotations": {"Example.COM/Note": "any text at all", "bad/key/parts": ""}});
        assert_eq!(
            messages("CREATE", pod_group(meta), None),
            [
                "metadata.labels: Invalid value: \"Bad Key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') [meta.labels]",
                "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') [meta.labels]",
                "metadata.annotations: Invalid value: \"bad/key/parts\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName') [meta.annotations]",
            ]
        );
        let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
        assert_eq!(
            messages("CREATE", pod_group(json!({"name": "g", "annotations": {"a": big}})), None),
            ["metadata.annotations: Too long: may not be more than 262144 bytes [meta.annotations]"]
        );
        let fits = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - 1);
        assert!(messages("CREATE", pod_group(json!({"name": "g", "annotations": {"a": fits}})), None).is_empty());
    }

    #[test]
    fn name_and_namespace_never_change() {
        let old = pod_group(json!({"name": "g", "namespace": "ml"}));
        assert_eq!(
            messages("UPDATE", pod_group(json!({"name": "h", "namespace": "ml"})), Some(old.clone())),
            ["metadata.name: Invalid value: \"h\": field is immutable [meta.immutable]"]
        );
        assert_eq!(
            messages("UPDATE", pod_group(json!({"name": "g", "namespace": "dev"})), Some(old.clone())),
            ["metadata.namespace: Invalid value: \"dev\": field is immutable [meta.immutable]"]
        );
        // Left out, the namespace is the request's; the name is not checked again on update.
        assert!(messages("UPDATE", pod_group(json!({"name": "g"})), Some(old)).is_empty());
        let old_bad = pod_group(json!({"name": "Old_Name"}));
        assert!(messages("UPDATE", pod_group(json!({"name": "Old_Name"})), Some(old_bad)).is_empty());
    }
}

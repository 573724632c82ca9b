//! Kueue's topology annotations on the Pod templates of a pod set: a Kubeflow replica, a
//! Job's Pods, a Trainer v2 replicated job.

use super::*;
use crate::trainer::{self, Runtime, TrainJob};

/// A Pod template's annotations: decoded, or as the JSON of a Trainer runtime patch.
#[derive(Clone, Copy)]
pub(super) enum Annotations<'a> {
    Map(&'a BTreeMap<String, String>),
    Json(&'a serde_json::Map<String, serde_json::Value>),
}

/// One Kueue pod set's view for the Kueue rules: a Kubeflow replica, a Job's Pods, or a
/// Trainer v2 replicated job (in its runtime, or in a TrainJob's runtime patch).
#[derive(Clone)]
pub(super) struct PodSet<'a> {
    /// What identifies the pod set across an update: the replica type (empty for a Job;
    /// a patch's manager and job name).
    pub(super) key: Cow<'a, str>,
    /// `spec.<map>[<type>].template.metadata.annotations`, `spec.template.metadata.annotations`
    pub(super) path: Path,
    pub(super) annotations: Annotations<'a>,
    /// Kueue's pod-set count: `replicas` (1 when unset), the Pods a Job runs at once, or a
    /// Trainer job's; `None` when it cannot be known (a patch whose runtime was not found).
    pub(super) count: Option<i32>,
    /// What Kueue appends to each message about the pod set (empty but for Trainer's).
    pub(super) hint: &'static str,
}

/// Kueue's TrainJob webhook ends every topology message with this.
const TRAINER_HINT: &str = ". Adjust either the \"TrainJob.spec.runtimePatches\" or the \"TrainingRuntime.Template\" annotations for the corresponding Job";

impl<'a> PodSet<'a> {
    fn get(&self, annotation: &str) -> Option<&'a str> {
        match self.annotations {
            Annotations::Map(m) => m.get(annotation).map(String::as_str),
            Annotations::Json(m) => m.get(annotation)?.as_str(),
        }
    }

    /// The level a required topology annotation asks for.
    pub(super) fn required_level(&self) -> Option<&'a str> {
        self.get(KUEUE_REQUIRED)
    }

    /// The name of the replicated job (or replica type) the pod set is: its key, without a
    /// Trainer patch's manager.
    pub(super) fn job_name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or_default()
    }

    /// The topology request Kueue builds: required wins over preferred.
    fn request(&self) -> Option<(&'static str, &'a str)> {
        [KUEUE_REQUIRED, KUEUE_PREFERRED].into_iter().find_map(|a| self.get(a).map(|v| (a, v)))
    }
}

pub(super) fn replica_pod_sets(job: &KubeflowJob) -> Vec<PodSet<'_>> {
    let map = Path::new("spec").child(job.kind.replica_specs_field());
    job.replicas()
        .filter_map(|(replica_type, spec): (&String, &ReplicaSpec)| {
            let annotations = spec.template.metadata.as_ref()?.annotations.as_ref()?;
            Some(PodSet {
                key: Cow::Borrowed(replica_type),
                path: map.key(replica_type).child("template").child("metadata").child("annotations"),
                annotations: Annotations::Map(annotations),
                count: Some(spec.replicas.unwrap_or(1)),
                hint: "",
            })
        })
        .collect()
}

/// A Job's one pod set (a CronJob's: its job template's), with Kueue's count for it.
pub(super) fn job_pod_sets(job: &BatchJob) -> Vec<PodSet<'_>> {
    let template = &job.spec.template;
    let Some(annotations) = template.metadata.as_ref().and_then(|m| m.annotations.as_ref()) else { return Vec::new() };
    let path = job.spec_path().child("template").child("metadata").child("annotations");
    vec![PodSet {
        key: Cow::Borrowed(""),
        path,
        annotations: Annotations::Map(annotations),
        count: Some(job.spec.pods_at_once()),
        hint: "",
    }]
}

/// A Trainer v2 runtime's replicated jobs, counted as a run with the runtime's own node count.
pub(super) fn runtime_pod_sets(runtime: &Runtime) -> Vec<PodSet<'_>> {
    let counts = runtime.pod_sets(None);
    runtime
        .jobs()
        .iter()
        .zip(counts)
        .filter_map(|(job, set)| {
            Some(PodSet {
                key: Cow::Borrowed(job.name.as_str()),
                path: Runtime::pod_annotations_path(set.index),
                annotations: Annotations::Map(job.pod_annotations()?),
                count: Some(set.kueue_count),
                hint: TRAINER_HINT,
            })
        })
        .collect()
}

/// The replicated jobs a TrainJob's runtime patches annotate, counted with the job's node
/// count against its runtime (unknown without it).
pub(super) fn patch_pod_sets<'a>(job: &'a TrainJob, runtime: Option<&Runtime>) -> Vec<PodSet<'a>> {
    let counts = runtime.map(|r| r.pod_sets(job.num_nodes())).unwrap_or_default();
    let mut out = Vec::new();
    for (i, patch) in job.patches().iter().enumerate() {
        for patched in patch.patched_jobs() {
            let Some(annotations) = patched.pod_annotations else { continue };
            out.push(PodSet {
                key: Cow::Owned(format!("{}/{}", patch.manager, patched.name)),
                path: trainer::patch_pod_annotations_path(i, patched.index),
                annotations: Annotations::Json(annotations),
                count: counts.iter().find(|c| c.name == patched.name).map(|c| c.kueue_count),
                hint: TRAINER_HINT,
            });
        }
    }
    out
}

/// T-21..T-24 for every pod set of a Kubeflow job or a Job, with Kueue's wording
/// (kubernetes-sigs/kueue `pkg/controller/jobframework/tas_validation.go`).
pub(super) fn check_pod_sets<'a>(
    settings: &Settings,
    sets: &[PodSet<'a>],
    old_sets: &[PodSet],
    v: &mut Verdict,
    lookups: &mut Vec<NodeLookup<'a>>,
) {
    let old_by_key: HashMap<&str, &PodSet> = old_sets.iter().map(|o| (o.key.as_ref(), o)).collect();
    for set in sets {
        let unchanged = |annotation: &str| {
            old_by_key.get(set.key.as_ref()).is_some_and(|o| o.get(annotation) == set.get(annotation))
        };
        check_pod_set(set, v);
        for annotation in [KUEUE_REQUIRED, KUEUE_PREFERRED, KUEUE_SLICE_REQUIRED] {
            let Some(level) = set.get(annotation) else { continue };
            let path = set.path.key(annotation);
            // Settings and nodes are checked for levels this request adds (see `check`).
            if names::is_qualified_name(level).is_empty()
                && !unchanged(annotation)
                && is_allowed(settings, level, &path, v)
            {
                lookups.push(NodeLookup { key: level, path, gang: None });
            }
        }
    }
    check_pod_set_groups(sets, v);
}

pub(super) fn check_pod_set(set: &PodSet, v: &mut Verdict) {
    let errors_before = v.violations.len();
    let deny = |v: &mut Verdict, rule, error: FieldError| v.deny(rule, error.with_suffix(set.hint));
    let path = &set.path;
    let (required, preferred) = (set.get(KUEUE_REQUIRED), set.get(KUEUE_PREFERRED));
    let unconstrained = set.get(KUEUE_UNCONSTRAINED);
    let (slice_required, slice_size) = (set.get(KUEUE_SLICE_REQUIRED), set.get(KUEUE_SLICE_SIZE));

    if [required, preferred, unconstrained].iter().flatten().count() > 1 {
        deny(
            v,
            KUEUE_ONE_OF,
            FieldError::invalid(
                path.clone(),
                BadValue::omitted(),
                format!(
                    "must not contain more than one topology annotation: [{KUEUE_REQUIRED:?}, {KUEUE_PREFERRED:?}, {KUEUE_UNCONSTRAINED:?}]"
                ),
            ),
        );
    }
    for (annotation, value) in
        [(KUEUE_REQUIRED, required), (KUEUE_PREFERRED, preferred), (KUEUE_SLICE_REQUIRED, slice_required)]
    {
        let Some(value) = value else { continue };
        // Kueue's ValidateLabelName: an empty value is invalid too, not "required".
        for msg in names::is_qualified_name(value) {
            deny(v, KUEUE_VALUE, FieldError::invalid(path.key(annotation), value, msg));
        }
    }
    if let Some(group) = set.get(KUEUE_GROUP_NAME) {
        let group_path = path.key(KUEUE_GROUP_NAME);
        if !group.is_empty() && group.bytes().all(|b| b.is_ascii_digit()) && group.parse::<u64>().is_ok() {
            deny(v, KUEUE_GROUP, FieldError::invalid(group_path.clone(), group, "must not be a number"));
        }
        for (present, annotation) in [(slice_size, KUEUE_SLICE_SIZE), (slice_required, KUEUE_SLICE_REQUIRED)] {
            if present.is_some() {
                let detail = format!("may not be set when '{annotation}' is specified");
                deny(v, KUEUE_GROUP, FieldError::forbidden(group_path.clone(), detail));
            }
        }
        if required.is_none() && preferred.is_none() {
            let detail = format!("may not be set when neither '{KUEUE_PREFERRED}' nor '{KUEUE_REQUIRED}' is specified");
            deny(v, KUEUE_GROUP, FieldError::forbidden(group_path, detail));
        }
    }
    if let Some(value) = unconstrained.filter(|u| !is_go_bool(u)) {
        deny(v, KUEUE_VALUE, FieldError::invalid(path.key(KUEUE_UNCONSTRAINED), value, "must be a boolean value"));
    }
    if let Some(value) = slice_size {
        let size_path = path.key(KUEUE_SLICE_SIZE);
        match value.parse::<i32>() {
            Err(_) => deny(v, KUEUE_SLICE, FieldError::invalid(size_path, value, "must be a numeric value")),
            Ok(n) if n < 1 => {
                deny(v, KUEUE_SLICE, FieldError::invalid(size_path, value, "must be greater than or equal to 1"))
            }
            Ok(n) if set.count.is_some_and(|count| n > count) => deny(
                v,
                KUEUE_SLICE,
                FieldError::invalid(
                    size_path,
                    value,
                    format!("must not be greater than pod set count {}", set.count.unwrap_or_default()),
                ),
            ),
            Ok(_) => {}
        }
    }
    match (slice_required, slice_size) {
        (Some(_), None) => deny(
            v,
            KUEUE_SLICE,
            FieldError::required(
                path.key(KUEUE_SLICE_SIZE),
                format!("must be set when '{KUEUE_SLICE_REQUIRED}' is specified"),
            ),
        ),
        (None, Some(_)) => deny(
            v,
            KUEUE_SLICE,
            FieldError::forbidden(
                path.key(KUEUE_SLICE_SIZE),
                format!("may not be set when '{KUEUE_SLICE_REQUIRED}' is not specified"),
            ),
        ),
        _ => {}
    }
    check_slice_constraints(set, errors_before, v);
}

/// T-25, Kueue's `validateSliceRequiredTopologyConstraintsAnnotation` (gate
/// `TASMultiLayerTopology`, beta and on since Kueue 0.19): the multi-layer slice annotation is a
/// JSON array of 1 to 3 `{topology, size}`, never beside the single-layer slice annotations or a
/// group name; then, when nothing else is wrong with the pod set, the first layer is no larger
/// than the pod set (`ValidateSliceSizeAnnotationUpperBound`). Read as Go's `encoding/json`
/// reads it: keys match case-insensitively, unknown keys are ignored, `null` is the zero value.
fn check_slice_constraints(set: &PodSet, errors_before: usize, v: &mut Verdict) {
    let Some(text) = set.get(KUEUE_SLICE_CONSTRAINTS) else { return };
    let deny = |v: &mut Verdict, error: FieldError| v.deny(KUEUE_SLICE_CONSTRAINTS_RULE, error.with_suffix(set.hint));
    let at = set.path.key(KUEUE_SLICE_CONSTRAINTS);
    for annotation in [KUEUE_SLICE_REQUIRED, KUEUE_SLICE_SIZE] {
        if set.get(annotation).is_some() {
            deny(v, FieldError::forbidden(at.clone(), format!("may not be set when '{annotation}' is specified")));
        }
    }
    if set.get(KUEUE_GROUP_NAME).is_some() {
        let detail = format!("may not be set when '{KUEUE_SLICE_CONSTRAINTS}' is specified");
        deny(v, FieldError::forbidden(set.path.key(KUEUE_GROUP_NAME), detail));
    }
    let constraints = match read_constraints(text) {
        Ok(c) => c,
        Err(e) => return deny(v, FieldError::invalid(at, text, format!("must be a valid JSON array: {e}"))),
    };
    if constraints.is_empty() || constraints.len() > 3 {
        return deny(v, FieldError::invalid(at, text, "topology constraints must contain between 1 and 3 entries"));
    }
    for (i, (topology, size)) in constraints.iter().enumerate() {
        let entry = at.index(i);
        if let Some(topology) = topology {
            for msg in names::is_qualified_name(topology) {
                deny(v, FieldError::invalid(entry.child("topology"), topology.as_str(), msg));
            }
        }
        if let Some(size) = size.filter(|s| *s < 1) {
            deny(v, FieldError::invalid(entry.child("size"), size, "must be greater than or equal to 1"));
        }
    }
    for (i, (topology, _)) in constraints.iter().enumerate() {
        let Some(topology) = topology else { continue };
        if let Some(j) = constraints[..i].iter().position(|(t, _)| t.as_ref() == Some(topology)) {
            let value = format!("{topology} (also at index {j})");
            deny(v, FieldError::duplicate(at.index(i).child("topology"), value.as_str()));
        }
    }
    for (i, pair) in constraints.windows(2).enumerate() {
        if let (Some(parent), Some(child)) = (pair[0].1, pair[1].1)
            && child > 0
            && parent % child != 0
        {
            let detail = format!("must evenly divide the parent layer size {parent}");
            deny(v, FieldError::invalid(at.index(i + 1).child("size"), child, detail));
        }
    }
    // Kueue bounds the first layer by the pod set only when the annotations are otherwise valid.
    if v.violations.len() == errors_before
        && let (Some(first), Some(count)) = (constraints[0].1, set.count)
        && first > count
    {
        let detail = format!("must not be greater than pod set count {count}");
        deny(v, FieldError::invalid(at, first, detail));
    }
}

/// One layer of the multi-layer annotation: its topology and size, each `None` when Go's
/// reading of it is uncertain (two keys that match it case-insensitively), so no claim is
/// made about it.
type Layer = (Option<String>, Option<i32>);

/// The multi-layer annotation as Go's `encoding/json` reads it into `[]{topology string, size
/// int32}`, or why it cannot.
fn read_constraints(text: &str) -> Result<Vec<Layer>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let items = match value {
        serde_json::Value::Null => return Ok(Vec::new()),
        serde_json::Value::Array(items) => items,
        other => return Err(format!("cannot read {} as an array", json_kind(&other))),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let fields = match item {
                serde_json::Value::Null => return Ok((Some(String::new()), Some(0))),
                serde_json::Value::Object(fields) => fields,
                other => return Err(format!("[{i}]: cannot read {} as a topology constraint", json_kind(other))),
            };
            const NULL: &serde_json::Value = &serde_json::Value::Null;
            let field = |name: &str| -> Option<&serde_json::Value> {
                let mut matching = fields.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v);
                match (matching.next(), matching.next()) {
                    (None, _) => Some(NULL),
                    (Some(v), None) => Some(v),
                    (Some(_), Some(_)) => None,
                }
            };
            let topology = match field("topology") {
                None => None,
                Some(serde_json::Value::Null) => Some(String::new()),
                Some(serde_json::Value::String(t)) => Some(t.clone()),
                Some(other) => return Err(format!("[{i}].topology: cannot read {} as a string", json_kind(other))),
            };
            let size = match field("size") {
                None => None,
                Some(serde_json::Value::Null) => Some(0),
                Some(serde_json::Value::Number(n)) => match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
                    Some(n) => Some(n),
                    None => return Err(format!("[{i}].size: cannot read number {n} as an int32")),
                },
                Some(other) => return Err(format!("[{i}].size: cannot read {} as an int32", json_kind(other))),
            };
            Ok((topology, size))
        })
        .collect()
}

/// What a JSON value is, in Go's words.
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Go's `strconv.ParseBool`.
pub(super) fn is_go_bool(s: &str) -> bool {
    matches!(s, "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False")
}

/// T-24, Kueue's `ValidatePodSetGroupingTopology`: replicas sharing a group name (with a
/// required or preferred topology) come in pairs, one of them a single pod, asking for the
/// same topology. Kueue applies this to its grouping-aware integrations; for Kubeflow jobs
/// it admits such groups unchecked, which is why the policy checks them.
pub(super) fn check_pod_set_groups(sets: &[PodSet], v: &mut Verdict) {
    // Groups in the order they first appear, found by name in constant time.
    let mut groups: Vec<(&str, Vec<&PodSet>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for set in sets.iter().filter(|s| s.request().is_some()) {
        let Some(name) = set.get(KUEUE_GROUP_NAME) else { continue };
        match index.get(name) {
            Some(&i) => groups[i].1.push(set),
            None => {
                index.insert(name, groups.len());
                groups.push((name, vec![set]));
            }
        }
    }
    for (name, members) in groups {
        let [a, b] = members.as_slice() else {
            for m in &members {
                let detail = format!("can only define groups of exactly 2 pod sets, got: {} pod set(s)", members.len());
                v.deny(KUEUE_GROUP, FieldError::invalid(m.path.key(KUEUE_GROUP_NAME), name, detail));
            }
            continue;
        };
        if let (Some(a_count), Some(b_count)) = (a.count, b.count)
            && a_count != 1
            && b_count != 1
        {
            let detail = format!(
                "can only define groups where at least one pod set has only 1 replica, got: {a_count} replica(s) and {b_count} replica(s) in the group"
            );
            for m in [a, b] {
                v.deny(KUEUE_GROUP, FieldError::invalid(m.path.key(KUEUE_GROUP_NAME), name, detail.clone()));
            }
        }
        if a.request() != b.request() {
            for (m, other) in [(a, b), (b, a)] {
                let detail = format!(
                    "must specify '{KUEUE_REQUIRED}' or '{KUEUE_PREFERRED}' topology consistent with '{}' in group '{name}'",
                    other.path
                );
                v.deny(KUEUE_GROUP, FieldError::invalid(m.path.clone(), BadValue::omitted(), detail));
            }
        }
    }
}

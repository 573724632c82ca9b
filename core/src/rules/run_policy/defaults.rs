//! Defaulting: the fields the `default*` settings fill in when a job leaves them out.

use super::*;

/// The job with the configured defaults filled in, or `None` when nothing was missing.
pub(super) fn apply_defaults(settings: &Settings, job: &KubeflowJob, raw: &str) -> Option<Value> {
    // (path to the object, key, value) for each default to set.
    let mut defaults: Vec<(Vec<&str>, &str, Value)> = Vec::new();
    let rp = job.run_policy();
    if let Some(ttl) = settings.default_ttl_seconds_after_finished
        && rp.is_none_or(|r| r.ttl_seconds_after_finished.is_none())
    {
        defaults.push((vec!["spec", "runPolicy"], "ttlSecondsAfterFinished", Value::from(ttl)));
    }
    if let Some(p) = &settings.default_clean_pod_policy
        && own_clean_pod_policy(job).is_none()
    {
        defaults.push((vec!["spec", "runPolicy"], "cleanPodPolicy", Value::from(p.as_str())));
    }
    // The MPI operator gives its Launcher and Workers their own restart policies (`OnFailure`,
    // `Never`) and allows no others, so the setting is the training operator's jobs' alone.
    if let Some(r) = settings.default_restart_policy.as_ref().filter(|_| !job.is_mpi_operator()) {
        let field = job.kind.replica_specs_field();
        for (replica_type, spec) in job.replicas() {
            if spec.restart_policy.as_deref().is_none_or(str::is_empty) {
                defaults.push((vec!["spec", field, replica_type], "restartPolicy", Value::from(r.as_str())));
            }
        }
    }
    if defaults.is_empty() {
        return None;
    }
    // Only now is the object read as JSON: most requests need no default.
    let mut out: Value = serde_json::from_str(raw).ok()?;
    let mut changed = false;
    for (path, key, value) in defaults {
        changed |= set_field(&mut out, &path, key, value);
    }
    changed.then_some(out)
}

/// Sets `key` in the object at `path`, creating missing (or null) objects on the way.
/// Returns false, changing nothing, when something on the way is not an object.
pub(super) fn set_field(root: &mut Value, path: &[&str], key: &str, value: Value) -> bool {
    let mut current = root;
    for segment in path {
        let Value::Object(map) = current else { return false };
        let next = map.entry(segment.to_string()).or_insert(Value::Null);
        if next.is_null() {
            *next = Value::Object(Map::new());
        }
        current = next;
    }
    let Value::Object(map) = current else { return false };
    map.insert(key.to_string(), value);
    true
}

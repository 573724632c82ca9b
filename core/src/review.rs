//! The admission request, decoded into typed resources.

use serde::Deserialize;
use serde_json::Value;

use crate::decode::null_as_default;
use crate::kubeflow::{JobKind, KubeflowJob};
use crate::pod::Pod;
use crate::scheduling::{self, CompositePodGroup, PodGroup, Version, Workload};

pub const SCHEDULING_GROUP: &str = scheduling::GROUP;
pub const KUBEFLOW_GROUP: &str = "kubeflow.org";
pub const KUBEFLOW_VERSION: &str = "v1";

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    #[serde(deserialize_with = "null_as_default")]
    pub group: String,
    #[serde(deserialize_with = "null_as_default")]
    pub version: String,
    #[serde(deserialize_with = "null_as_default")]
    pub kind: String,
}

impl GroupVersionKind {
    /// From an object's `apiVersion` and `kind`.
    pub fn of_object(object: &Value) -> GroupVersionKind {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        GroupVersionKind {
            group: group.to_string(),
            version: version.to_string(),
            kind: object["kind"].as_str().unwrap_or_default().to_string(),
        }
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }
}

/// The fields of an AdmissionRequest that the rules use.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdmissionRequest {
    #[serde(deserialize_with = "null_as_default")]
    pub uid: String,
    pub kind: GroupVersionKind,
    #[serde(deserialize_with = "null_as_default")]
    pub operation: String,
    #[serde(deserialize_with = "null_as_default")]
    pub namespace: String,
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub sub_resource: String,
    pub object: Value,
    pub old_object: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

/// An object of a kind some rule set guards.
#[derive(Clone, Debug, PartialEq)]
pub enum Resource {
    Workload(Box<Workload>),
    PodGroup(Box<PodGroup>),
    /// `scheduling.k8s.io/v1alpha3` only.
    CompositePodGroup(Box<CompositePodGroup>),
    Pod(Box<Pod>),
    Job(Box<KubeflowJob>),
}

/// What the decoded request is about.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub operation: Operation,
    /// The kind and version the object arrived as; lookups of related scheduling objects
    /// ask for the same version.
    pub kind: GroupVersionKind,
    /// The request's namespace (also where namespaced lookups go).
    pub namespace: String,
    pub object: Resource,
    /// Present on UPDATE.
    pub old_object: Option<Resource>,
    /// The object exactly as it arrived; a mutating rule set edits a copy of this, so the
    /// patch Kubewarden computes holds only the fields it meant to change.
    pub raw_object: Value,
}

impl Review {
    pub fn is_update(&self) -> bool {
        self.operation == Operation::Update && self.old_object.is_some()
    }

    /// The `scheduling.k8s.io` version of the object, for its kinds.
    pub fn scheduling_version(&self) -> Option<Version> {
        (self.kind.group == SCHEDULING_GROUP).then(|| Version::parse(&self.kind.version)).flatten()
    }
}

/// Why a request could not be reviewed: the policy rejects it with code 400.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRequest(pub String);

/// The kinds this project guards, for messages.
pub const GUARDED_KINDS: &str = "scheduling.k8s.io/v1beta1, v1alpha3 and v1alpha2 Workload and PodGroup, scheduling.k8s.io/v1alpha3 CompositePodGroup, v1 Pod, kubeflow.org/v1 TFJob, PyTorchJob, MPIJob, JAXJob, PaddleJob and XGBoostJob";

/// Whether this kind is one the rule sets know how to read: `Ok(false)` for kinds outside
/// the project's API groups (accepted untouched), an error for unknown kinds inside them.
/// In `scheduling.k8s.io` only Workload, PodGroup and CompositePodGroup are the project's
/// (PriorityClass is not); an unknown version of those is an error, never a silent accept.
fn is_guarded(gvk: &GroupVersionKind) -> Result<bool, BadRequest> {
    let known = match gvk.group.as_str() {
        "" => return Ok(gvk.version == "v1" && gvk.kind == "Pod"),
        SCHEDULING_GROUP if !scheduling::KINDS.contains(&gvk.kind.as_str()) => return Ok(false),
        SCHEDULING_GROUP => Version::parse(&gvk.version).is_some_and(|v| v.serves(&gvk.kind)),
        KUBEFLOW_GROUP => gvk.version == KUBEFLOW_VERSION && JobKind::from_kind(&gvk.kind).is_some(),
        _ => return Ok(false),
    };
    if known {
        Ok(true)
    } else {
        Err(BadRequest(format!(
            "unsupported kind {} {}: this policy validates {}",
            gvk.api_version(),
            gvk.kind,
            if gvk.group == SCHEDULING_GROUP { scheduling::UNDERSTOOD } else { GUARDED_KINDS }
        )))
    }
}

/// Whether some rule set reviews objects of this kind, i.e. the policies' webhook rules send
/// them these objects (tools that read manifests skip every other kind).
pub fn guards(gvk: &GroupVersionKind) -> bool {
    matches!(is_guarded(gvk), Ok(true))
}

impl Resource {
    /// Decodes `value` as the kind `gvk` names. The caller has checked the kind is guarded.
    fn decode(gvk: &GroupVersionKind, value: &Value) -> Result<Resource, String> {
        use crate::decode::from_json;
        let version =
            || Version::parse(&gvk.version).ok_or_else(|| format!("unsupported version {}", gvk.api_version()));
        Ok(match gvk.kind.as_str() {
            "Workload" => Resource::Workload(Box::new(Workload::decode(version()?, value)?)),
            "PodGroup" => Resource::PodGroup(Box::new(PodGroup::decode(version()?, value)?)),
            "CompositePodGroup" => Resource::CompositePodGroup(Box::new(CompositePodGroup::decode(value)?)),
            "Pod" => Resource::Pod(Box::new(from_json(value)?)),
            kind => {
                let job_kind = JobKind::from_kind(kind).ok_or_else(|| format!("unsupported kind {kind}"))?;
                Resource::Job(Box::new(KubeflowJob::from_json(job_kind, value)?))
            }
        })
    }
}

fn operation(op: &str) -> Result<Operation, BadRequest> {
    match op {
        "CREATE" => Ok(Operation::Create),
        "UPDATE" => Ok(Operation::Update),
        "DELETE" => Ok(Operation::Delete),
        "CONNECT" => Ok(Operation::Connect),
        "" => Err(BadRequest("request.operation: Required value".into())),
        other => Err(BadRequest(format!(
            "request.operation: Unsupported value: {other:?}: supported values: \"CREATE\", \"UPDATE\", \"DELETE\", \"CONNECT\""
        ))),
    }
}

fn check_object_kind(what: &str, object: &Value, gvk: &GroupVersionKind) -> Result<(), BadRequest> {
    if !object.is_object() {
        return Err(BadRequest(format!("request.{what}: must be a JSON object, got {}", json_type(object))));
    }
    let own = GroupVersionKind::of_object(object);
    // Objects may leave apiVersion/kind out; when present they must agree with the request.
    if (!own.kind.is_empty() && own.kind != gvk.kind)
        || (!own.version.is_empty() && own.api_version() != gvk.api_version())
    {
        return Err(BadRequest(format!(
            "request.{what}: is a {} {}, but the request is for {} {}",
            own.api_version(),
            own.kind,
            gvk.api_version(),
            gvk.kind
        )));
    }
    Ok(())
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl AdmissionRequest {
    pub fn from_value(value: Value) -> Result<AdmissionRequest, BadRequest> {
        let Value::Object(mut fields) = value else {
            return Err(BadRequest(format!("request: must be a JSON object, got {}", json_type(&value))));
        };
        // The objects are kept as they are: moved out first, so only the small rest is decoded.
        let object = fields.remove("object").unwrap_or_default();
        let old_object = fields.remove("oldObject").unwrap_or_default();
        let request: AdmissionRequest = crate::decode::from_json(&Value::Object(fields))
            .map_err(|e| BadRequest(format!("cannot read the admission request: request.{e}")))?;
        Ok(AdmissionRequest { object, old_object, ..request })
    }

    /// The request's kind, or the object's own when the request leaves it out (as a bare
    /// object handed to a local test run does).
    pub fn effective_kind(&self) -> GroupVersionKind {
        if self.kind.kind.is_empty() { GroupVersionKind::of_object(&self.object) } else { self.kind.clone() }
    }

    /// [`AdmissionRequest::review`], keeping the object as the review's raw object instead of
    /// copying it.
    pub fn into_review(mut self) -> Result<Option<Review>, BadRequest> {
        let raw_object = std::mem::take(&mut self.object);
        let review = self.review_of(&raw_object)?;
        Ok(review.map(|r| Review { raw_object, ..r }))
    }

    /// Decodes the request into a [`Review`]. `Ok(None)`: nothing to review (a kind no rule
    /// set guards, a subresource, a DELETE or CONNECT).
    pub fn review(&self) -> Result<Option<Review>, BadRequest> {
        let review = self.review_of(&self.object)?;
        Ok(review.map(|r| Review { raw_object: self.object.clone(), ..r }))
    }

    /// The review of `object` (the request's own), with a null raw object.
    fn review_of(&self, raw: &Value) -> Result<Option<Review>, BadRequest> {
        let operation = operation(&self.operation)?;
        if !self.sub_resource.is_empty() || matches!(operation, Operation::Delete | Operation::Connect) {
            return Ok(None);
        }
        let gvk = if self.kind.kind.is_empty() { GroupVersionKind::of_object(raw) } else { self.kind.clone() };
        if gvk.kind.is_empty() {
            return Err(BadRequest(
                "request.kind: Required value: the request names no kind and the object has none".into(),
            ));
        }
        if !is_guarded(&gvk)? {
            return Ok(None);
        }
        check_object_kind("object", raw, &gvk)?;
        let decode = |what: &str, value: &Value| {
            Resource::decode(&gvk, value).map_err(|e| BadRequest(format!("cannot decode {what} as {}: {e}", gvk.kind)))
        };
        let object = decode("request.object", raw)?;
        let old_object = match (&operation, &self.old_object) {
            (Operation::Update, Value::Null) => None,
            (Operation::Update, old) => {
                check_object_kind("oldObject", old, &gvk)?;
                Some(decode("request.oldObject", old)?)
            }
            _ => None,
        };
        let namespace = if self.namespace.is_empty() {
            raw["metadata"]["namespace"].as_str().unwrap_or("default").to_string()
        } else {
            self.namespace.clone()
        };
        Ok(Some(Review { operation, kind: gvk, namespace, object, old_object, raw_object: Value::Null }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(v: Value) -> AdmissionRequest {
        AdmissionRequest::from_value(v).unwrap()
    }

    #[test]
    fn decodes_a_podgroup_create() {
        let r = req(json!({"uid": "1", "operation": "CREATE", "namespace": "ml",
            "kind": {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"},
            "object": {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
                       "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}}));
        let review = r.review().unwrap().unwrap();
        assert_eq!(review.namespace, "ml");
        let Resource::PodGroup(pg) = review.object else { panic!("not a PodGroup") };
        assert_eq!(pg.group_spec().gang_min_count(), Some(2));
    }

    #[test]
    fn skips_what_it_does_not_guard() {
        let base = json!({"operation": "CREATE", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "object": {}});
        assert_eq!(req(base).review(), Ok(None));
        let status = json!({"operation": "UPDATE", "subResource": "status", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"}, "object": 3});
        assert_eq!(req(status).review(), Ok(None));
        let delete =
            json!({"operation": "DELETE", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": null});
        assert_eq!(req(delete).review(), Ok(None));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        let unknown = json!({"operation": "CREATE", "kind": {"group": "kubeflow.org", "version": "v1", "kind": "FooJob"}, "object": {}});
        assert_eq!(
            req(unknown).review().unwrap_err().0,
            format!("unsupported kind kubeflow.org/v1 FooJob: this policy validates {GUARDED_KINDS}")
        );
        let wrong_type = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"},
            "object": {"spec": {"schedulingPolicy": {"gang": {"minCount": "four"}}}}});
        assert_eq!(
            req(wrong_type).review().unwrap_err().0,
            "cannot decode request.object as PodGroup: spec.schedulingPolicy.gang.minCount: invalid type: string \"four\", expected i32"
        );
        let null =
            json!({"operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": null});
        assert_eq!(req(null).review().unwrap_err().0, "request.object: must be a JSON object, got null");
        let mismatch = json!({"operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": {"apiVersion": "v1", "kind": "Service"}});
        assert_eq!(
            req(mismatch).review().unwrap_err().0,
            "request.object: is a v1 Service, but the request is for v1 Pod"
        );
        assert_eq!(
            AdmissionRequest::from_value(json!([1])).unwrap_err().0,
            "request: must be a JSON object, got an array"
        );
        let bad_op = json!({"operation": "PATCH", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": {}});
        assert!(req(bad_op).review().unwrap_err().0.starts_with("request.operation: Unsupported value: \"PATCH\""));
    }

    #[test]
    fn an_unknown_scheduling_version_names_the_versions_understood() {
        let unknown = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha1", "kind": "PodGroup"}, "object": {}});
        assert_eq!(
            req(unknown).review().unwrap_err().0,
            format!(
                "unsupported kind scheduling.k8s.io/v1alpha1 PodGroup: this policy validates {}",
                scheduling::UNDERSTOOD
            )
        );
        // Other kinds of the group (PriorityClass) are not the project's.
        let class = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1", "kind": "PriorityClass"}, "object": {}});
        assert_eq!(req(class).review(), Ok(None));
        let cpg = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha3", "kind": "CompositePodGroup"},
            "object": {"metadata": {"name": "c"}, "spec": {"schedulingPolicy": {"basic": {}}}}});
        let review = req(cpg).review().unwrap().unwrap();
        assert_eq!(review.scheduling_version(), Some(Version::V1alpha3));
        assert!(matches!(review.object, Resource::CompositePodGroup(_)));
    }

    #[test]
    fn falls_back_to_the_object_kind() {
        let r = req(
            json!({"operation": "CREATE", "object": {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "j", "namespace": "ml"}}}),
        );
        let review = r.review().unwrap().unwrap();
        assert_eq!(review.namespace, "ml");
        assert!(matches!(review.object, Resource::Job(_)));
    }
}

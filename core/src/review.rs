//! The admission request, decoded into typed resources.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1alpha2::{PodGroup, Workload};
use serde::Deserialize;
use serde_json::Value;

use crate::kubeflow::{JobKind, KubeflowJob};

pub const SCHEDULING_GROUP: &str = "scheduling.k8s.io";
pub const SCHEDULING_VERSION: &str = "v1alpha2";
pub const KUBEFLOW_GROUP: &str = "kubeflow.org";
pub const KUBEFLOW_VERSION: &str = "v1";

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    #[serde(deserialize_with = "string_or_null")]
    pub group: String,
    #[serde(deserialize_with = "string_or_null")]
    pub version: String,
    #[serde(deserialize_with = "string_or_null")]
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

/// `null` reads as an empty string, as Go's JSON decoding does for string fields.
fn string_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// The fields of an AdmissionRequest that the rules use.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdmissionRequest {
    #[serde(deserialize_with = "string_or_null")]
    pub uid: String,
    pub kind: GroupVersionKind,
    #[serde(deserialize_with = "string_or_null")]
    pub operation: String,
    #[serde(deserialize_with = "string_or_null")]
    pub namespace: String,
    #[serde(deserialize_with = "string_or_null")]
    pub name: String,
    #[serde(deserialize_with = "string_or_null")]
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
    Pod(Box<Pod>),
    Job(Box<KubeflowJob>),
}

/// What the decoded request is about.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub operation: Operation,
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
}

/// Why a request could not be reviewed: the policy rejects it with code 400.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRequest(pub String);

/// The kinds this project guards, for messages.
pub const GUARDED_KINDS: &str = "scheduling.k8s.io/v1alpha2 Workload and PodGroup, v1 Pod, kubeflow.org/v1 TFJob, PyTorchJob, MPIJob, JAXJob, PaddleJob and XGBoostJob";

/// Whether this kind is one the rule sets know how to read: `Ok(false)` for kinds outside
/// the project's API groups (accepted untouched), an error for unknown kinds inside them.
fn is_guarded(gvk: &GroupVersionKind) -> Result<bool, BadRequest> {
    let known = match gvk.group.as_str() {
        "" => return Ok(gvk.version == "v1" && gvk.kind == "Pod"),
        SCHEDULING_GROUP => gvk.version == SCHEDULING_VERSION && matches!(gvk.kind.as_str(), "Workload" | "PodGroup"),
        KUBEFLOW_GROUP => gvk.version == KUBEFLOW_VERSION && JobKind::from_kind(&gvk.kind).is_some(),
        _ => return Ok(false),
    };
    if known {
        Ok(true)
    } else {
        Err(BadRequest(format!(
            "unsupported kind {} {}: this policy validates {GUARDED_KINDS}",
            gvk.api_version(),
            gvk.kind
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
    fn decode(gvk: &GroupVersionKind, value: Value) -> Result<Resource, String> {
        use crate::decode::from_value;
        Ok(match gvk.kind.as_str() {
            "Workload" => Resource::Workload(Box::new(from_value(value)?)),
            "PodGroup" => Resource::PodGroup(Box::new(from_value(value)?)),
            "Pod" => Resource::Pod(Box::new(from_value(value)?)),
            kind => {
                let job_kind = JobKind::from_kind(kind).ok_or_else(|| format!("unsupported kind {kind}"))?;
                Resource::Job(Box::new(KubeflowJob::decode(job_kind, value)?))
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
        if !value.is_object() {
            return Err(BadRequest(format!("request: must be a JSON object, got {}", json_type(&value))));
        }
        crate::decode::from_value(value)
            .map_err(|e| BadRequest(format!("cannot read the admission request: request.{e}")))
    }

    /// The request's kind, or the object's own when the request leaves it out (as a bare
    /// object handed to a local test run does).
    pub fn effective_kind(&self) -> GroupVersionKind {
        if self.kind.kind.is_empty() { GroupVersionKind::of_object(&self.object) } else { self.kind.clone() }
    }

    /// Decodes the request into a [`Review`]. `Ok(None)`: nothing to review (a kind no rule
    /// set guards, a subresource, a DELETE or CONNECT).
    pub fn review(&self) -> Result<Option<Review>, BadRequest> {
        let operation = operation(&self.operation)?;
        if !self.sub_resource.is_empty() || matches!(operation, Operation::Delete | Operation::Connect) {
            return Ok(None);
        }
        let gvk = self.effective_kind();
        if gvk.kind.is_empty() {
            return Err(BadRequest(
                "request.kind: Required value: the request names no kind and the object has none".into(),
            ));
        }
        if !is_guarded(&gvk)? {
            return Ok(None);
        }
        check_object_kind("object", &self.object, &gvk)?;
        let decode = |what: &str, value: &Value| {
            Resource::decode(&gvk, value.clone())
                .map_err(|e| BadRequest(format!("cannot decode {what} as {}: {e}", gvk.kind)))
        };
        let object = decode("request.object", &self.object)?;
        let old_object = match (&operation, &self.old_object) {
            (Operation::Update, Value::Null) => None,
            (Operation::Update, old) => {
                check_object_kind("oldObject", old, &gvk)?;
                Some(decode("request.oldObject", old)?)
            }
            _ => None,
        };
        let namespace = if self.namespace.is_empty() {
            self.object["metadata"]["namespace"].as_str().unwrap_or("default").to_string()
        } else {
            self.namespace.clone()
        };
        Ok(Some(Review { operation, namespace, object, old_object, raw_object: self.object.clone() }))
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
        assert_eq!(pg.spec.scheduling_policy.gang.unwrap().min_count, 2);
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
    fn falls_back_to_the_object_kind() {
        let r = req(
            json!({"operation": "CREATE", "object": {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "j", "namespace": "ml"}}}),
        );
        let review = r.review().unwrap().unwrap();
        assert_eq!(review.namespace, "ml");
        assert!(matches!(review.object, Resource::Job(_)));
    }
}

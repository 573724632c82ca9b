//! Builds the AdmissionRequest the apiserver would send for an object, in the complete shape
//! kwctl and policy-server read (`uid`, `kind`, `resource`, `operation` and `userInfo` are
//! required there). The e2e host, the kwctl case export, the CLI and the playground all build
//! their requests here, so every face sends the same thing.

use serde_json::{Value, json};

use crate::review::GroupVersionKind;

/// The user every generated request is made by.
pub const REQUEST_USER: &str = "gangwarden";

/// The lower-case plural the apiserver serves a kind under (`PodGroup` → `podgroups`).
pub fn resource_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") || lower.ends_with("sh") {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y').filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u'])) {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// Whether objects of `kind` in API group `group` live outside namespaces: the apiserver's
/// requests for them carry no namespace. The cluster-scoped kinds gangwarden reviews or reads.
pub fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Node" | "Namespace")
            | ("trainer.kubeflow.org", "ClusterTrainingRuntime")
            | ("scheduling.k8s.io", "PriorityClass")
            | ("scheduling.volcano.sh", "Queue")
    )
}

/// An AdmissionRequest for `operation` on `object` (with `old_object` on UPDATE).
pub fn admission_request(uid: &str, operation: &str, object: &Value, old_object: Option<&Value>) -> Value {
    let gvk = GroupVersionKind::of_object(if object.is_object() { object } else { old_object.unwrap_or(object) });
    let kind = json!({"group": gvk.group, "version": gvk.version, "kind": gvk.kind});
    let resource = json!({"group": gvk.group, "version": gvk.version, "resource": resource_plural(&gvk.kind)});
    let metadata = &object["metadata"];
    let options_kind = match operation {
        "CREATE" => Some("CreateOptions"),
        "UPDATE" => Some("UpdateOptions"),
        "DELETE" => Some("DeleteOptions"),
        _ => None,
    };
    let options = options_kind.map_or(Value::Null, |k| json!({"apiVersion": "meta.k8s.io/v1", "kind": k}));
    let namespace = match is_cluster_scoped(&gvk.group, &gvk.kind) {
        true => Value::Null,
        false => Value::from(metadata["namespace"].as_str().unwrap_or("default")),
    };
    let mut request = json!({
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": metadata["name"].as_str().unwrap_or_default(),
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": REQUEST_USER, "groups": ["system:authenticated"]},
        "object": object,
        "oldObject": old_object.cloned().unwrap_or(Value::Null),
        "dryRun": false,
        "options": options,
    });
    // The apiserver leaves the namespace out for cluster-scoped objects.
    if let Some(fields) = request.as_object_mut().filter(|_| namespace.is_null()) {
        fields.remove("namespace");
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_the_apiserver() {
        let cases = [
            ("PodGroup", "podgroups"),
            ("CompositePodGroup", "compositepodgroups"),
            ("Workload", "workloads"),
            ("Pod", "pods"),
            ("XGBoostJob", "xgboostjobs"),
            ("NetworkPolicy", "networkpolicies"),
            ("Ingress", "ingresses"),
            ("Gateway", "gateways"),
        ];
        for (kind, plural) in cases {
            assert_eq!(resource_plural(kind), plural, "{kind}");
        }
    }

    #[test]
    fn builds_the_complete_shape() {
        let pg = json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "ml"}});
        let r = admission_request("u1", "UPDATE", &pg, Some(&pg));
        assert_eq!(r["kind"], json!({"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"}));
        assert_eq!(
            r["resource"],
            json!({"group": "scheduling.k8s.io", "version": "v1alpha2", "resource": "podgroups"})
        );
        assert_eq!(r["requestResource"], r["resource"]);
        assert_eq!((r["name"].as_str(), r["namespace"].as_str()), (Some("g"), Some("ml")));
        assert_eq!(r["userInfo"]["username"], REQUEST_USER);
        assert_eq!(r["options"]["kind"], "UpdateOptions");
        assert_eq!(r["oldObject"], pg);
        let core = admission_request("u2", "CREATE", &json!({"apiVersion": "v1", "kind": "Pod"}), None);
        assert_eq!(core["resource"], json!({"group": "", "version": "v1", "resource": "pods"}));
        assert_eq!(core["oldObject"], Value::Null);
    }
}

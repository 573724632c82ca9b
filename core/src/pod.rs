//! The parts of a Pod (and of the Pod template in a Kubeflow replica spec) that the rules read.
//!
//! The apiserver has decoded a Pod, and schema-checked a Kubeflow job, before any admission
//! webhook sees it, so the fields no rule reads (volumes, probes, status and the rest of
//! k8s-openapi's `PodSpec`) need no decoding here: they are skipped unread. That keeps each
//! policy module about a fifth smaller and every request cheaper, and the leaf types the rules
//! do read are k8s-openapi's own, so they decode exactly as before.
//! Fields follow k8s-openapi's conventions: a required field that is missing or `null`
//! reads as its default.
//!
//! What the capacity rules read (resources, node selection, tolerations) is kept as JSON text
//! ([`RawJson`]) and read only by them, leniently: it never makes a decode fail, so no other
//! rule's answer depends on it, and a part that cannot be read is a check not made.

use k8s_openapi::api::core::v1::{ContainerPort, PodResourceClaim, PodSchedulingGroup, ResourceClaim};
use serde::{Deserialize, Serialize};

use crate::decode::{RawJson, compact_list, null_as_default};
use crate::meta::{ObjectMeta, TemplateMeta};

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
}

impl Pod {
    /// Decodes the Pod an UPDATE replaces for the update rules, which compare only
    /// `spec.schedulingGroup`: the containers and the rest of the spec are skipped unread.
    pub fn decode_old(text: &str) -> Result<Pod, String> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct OldSpec {
            #[serde(default)]
            scheduling_group: Option<PodSchedulingGroup>,
        }
        #[derive(Deserialize)]
        struct OldPod {
            #[serde(default, deserialize_with = "null_as_default")]
            metadata: ObjectMeta,
            #[serde(default)]
            spec: Option<OldSpec>,
        }
        let old: OldPod = crate::decode::from_str(text)?;
        let spec = old.spec.map(|s| PodSpec { scheduling_group: s.scheduling_group, ..PodSpec::default() });
        Ok(Pod { metadata: old.metadata, spec })
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMeta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    #[serde(default, deserialize_with = "compact_list")]
    pub containers: Vec<Container>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<Container>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claims: Option<Vec<PodResourceClaim>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling_group: Option<PodSchedulingGroup>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    // Read by the capacity rules only (`crate::capacity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<RawJson>,
    /// Pod-level `resources` (gate `PodLevelResources`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<RawJson>,
    /// Whose `scheduling.tolerations` the RuntimeClass admission plugin merges in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<RawJson>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ContainerPort>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Only the names are read (Trainer's initializers share a volume by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mounts: Option<Vec<VolumeMount>>,
    /// `Always` makes an init container a sidecar (capacity rules only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<RawJson>,
}

/// A `volumeMounts` entry: only its name is read.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct VolumeMount {
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
}

/// `resources`: the claims a container requests; its requests and limits for the capacity
/// rules.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct ResourceRequirements {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<Vec<ResourceClaim>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RawJson>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_fields_rules_use_and_skips_the_rest() {
        let pod: Pod = crate::decode::from_json(&json!({
            "metadata": {"name": "p", "namespace": "ml"},
            "spec": {
                "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                    "resources": {"claims": [{"name": "gpu"}], "limits": {"cpu": "1"}},
                    "livenessProbe": {"exec": {"command": ["true"]}}}],
                "initContainers": null,
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                "schedulingGroup": {"podGroupName": "g"},
                "volumes": [{"name": "v", "emptyDir": {}}],
                "affinity": {"nodeAffinity": {}}
            },
            "status": {"phase": "Pending"}
        }))
        .unwrap();
        let spec = pod.spec.unwrap();
        assert_eq!(pod.metadata.name.as_deref(), Some("p"));
        assert_eq!(spec.containers[0].name, "c");
        assert_eq!(spec.containers.capacity(), 1, "no room kept for containers that never come");
        assert_eq!(spec.containers[0].ports.as_ref().unwrap()[0].container_port, 80);
        assert_eq!(spec.containers[0].resources.as_ref().unwrap().claims.as_ref().unwrap()[0].name, "gpu");
        assert_eq!(spec.init_containers, None);
        assert_eq!(spec.resource_claims.unwrap()[0].resource_claim_template_name.as_deref(), Some("t"));
        assert_eq!(spec.scheduling_group.unwrap().pod_group_name.as_deref(), Some("g"));
    }

    #[test]
    fn the_old_copy_keeps_the_scheduling_group() {
        let text = json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": 7}], "schedulingGroup": {"podGroupName": "g"}}})
        .to_string();
        let old = Pod::decode_old(&text).unwrap();
        assert_eq!(old.metadata.name.as_deref(), Some("p"));
        let spec = old.spec.unwrap();
        assert_eq!(spec.scheduling_group.unwrap().pod_group_name.as_deref(), Some("g"));
        assert!(spec.containers.is_empty(), "the containers are skipped unread");
        assert!(crate::decode::from_str::<Pod>(&text).is_err());
        assert_eq!(Pod::decode_old(r#"{"spec": null}"#).unwrap().spec, None);
        assert_eq!(
            Pod::decode_old(r#"{"spec": {"schedulingGroup": {"podGroupName": 1}}}"#).unwrap_err(),
            "spec.schedulingGroup.podGroupName: invalid type: integer `1`, expected a string"
        );
    }

    #[test]
    fn required_fields_read_null_as_default_and_types_are_checked() {
        let pod: Pod =
            crate::decode::from_json(&json!({"metadata": null, "spec": {"containers": [{"name": null}]}})).unwrap();
        assert_eq!(pod.spec.unwrap().containers[0].name, "");
        let pod: Pod = crate::decode::from_json(&json!({"spec": {"containers": null}})).unwrap();
        assert!(pod.spec.unwrap().containers.is_empty());
        assert_eq!(
            crate::decode::from_json::<Pod>(&json!({"spec": {"resourceClaims": [{"name": 7}]}})).unwrap_err(),
            "spec.resourceClaims[0].name: invalid type: integer `7`, expected a string"
        );
    }
}

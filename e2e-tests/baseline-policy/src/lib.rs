//! The yardstick of `make bench`: the smallest useful policy a user would write with the
//! same SDK as the gangwarden policies. It decodes the request and the object in it as its
//! kind's k8s-openapi type, the way the Kubewarden policy template does a Pod, and rejects
//! objects named `forbidden`. It reads Pods, and `scheduling.k8s.io` Workloads and PodGroups
//! (their `v1beta1` type, whose JSON `v1` keeps), so that the Job controller's pair is timed
//! against it on the very same request (issue 40).
//!
//! `decode_only` is the floor under every policy: read the payload as JSON and accept.
//!
//! With the setting `listNodes` (field masks) it first lists every Node, as the topology
//! policy does, and drops the answer unread: what policy-server's own work on that call
//! costs, the floor under any policy that lists Nodes.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi_137::api::scheduling::v1beta1::{PodGroup, Workload};
use kubewarden_policy_sdk::host_capabilities::kubernetes::ListAllResourcesRequest;
use kubewarden_policy_sdk::request::ValidationRequest;
use kubewarden_policy_sdk::settings::Validatable;
use kubewarden_policy_sdk::wapc_guest::{CallResult, host_call, register_function};
use kubewarden_policy_sdk::{accept_request, protocol_version_guest, reject_request};
use serde::Deserialize;

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Settings {
    list_nodes: Option<Vec<String>>,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("decode_only", decode_only);
    register_function("validate_settings", kubewarden_policy_sdk::validate_settings::<Settings>);
    register_function("protocol_version", protocol_version_guest);
}

fn validate(payload: &[u8]) -> CallResult {
    let request: ValidationRequest<Settings> = ValidationRequest::new(payload)?;
    if let Some(masks) = &request.settings.list_nodes {
        let list = serde_json::to_vec(&ListAllResourcesRequest {
            api_version: "v1".to_string(),
            kind: "Node".to_string(),
            label_selector: None,
            field_selector: None,
            field_masks: Some(masks.iter().cloned().collect()),
        })?;
        host_call("kubewarden", "kubernetes", "list_resources_all", &list)?;
    }
    let object = request.request.object;
    let (kind, name) = match request.request.kind.kind.as_str() {
        "Workload" => ("Workload", serde_json::from_value::<Workload>(object).map(|o| o.metadata.name)),
        "PodGroup" => ("PodGroup", serde_json::from_value::<PodGroup>(object).map(|o| o.metadata.name)),
        _ => ("Pod", serde_json::from_value::<Pod>(object).map(|o| o.metadata.name)),
    };
    let name = match name {
        Ok(name) => name,
        Err(e) => return reject_request(Some(format!("cannot decode the {kind}: {e}")), Some(400), None, None),
    };
    if name.as_deref() == Some("forbidden") {
        return reject_request(Some("metadata.name: Forbidden: the name \"forbidden\"".into()), None, None, None);
    }
    accept_request()
}

fn decode_only(payload: &[u8]) -> CallResult {
    let _: serde_json::Value = serde_json::from_slice(payload)?;
    accept_request()
}

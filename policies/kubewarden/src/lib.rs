//! The Kubewarden (waPC) side of every gangwarden policy. It decides nothing: it hands the
//! payload to `gangwarden_core::engine`, answers lookups through the host, and renders the
//! core's `Response` as Kubewarden's `ValidationResponse`.
//!
//! A policy crate is one line: `gangwarden_kubewarden::policy!(SomeRuleSet);`.

use std::collections::BTreeSet;

use gangwarden_core::cluster::{Cluster, LookupError, Query};
use gangwarden_core::engine::{self, RuleSet};
use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest, ListResourcesByNamespaceRequest, get_resource,
};
use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use kubewarden_policy_sdk::wapc_guest::{self, CallResult};
use serde_json::value::RawValue;

pub use kubewarden_policy_sdk::{protocol_version_guest, wapc_guest::register_function};

/// Defines `wapc_init` for a policy that runs the rule set `$rules`.
#[macro_export]
macro_rules! policy {
    ($rules:ty) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn wapc_init() {
            $crate::register_function("validate", $crate::validate::<$rules>);
            $crate::register_function("validate_settings", $crate::validate_settings::<$rules>);
            $crate::register_function("protocol_version", $crate::protocol_version_guest);
        }
    };
}

pub fn validate<R: RuleSet>(payload: &[u8]) -> CallResult {
    let r = engine::evaluate::<R>(payload, &HostCluster);
    let response = ValidationResponse {
        accepted: r.accepted,
        message: r.message,
        code: r.code,
        mutated_object: r.mutated_object,
        audit_annotations: None,
        warnings: if r.warnings.is_empty() { None } else { Some(r.warnings) },
    };
    Ok(serde_json::to_vec(&response)?)
}

pub fn validate_settings<R: RuleSet>(payload: &[u8]) -> CallResult {
    let response = match engine::validate_settings::<R>(payload) {
        Ok(()) => SettingsValidationResponse { valid: true, message: None },
        Err(message) => SettingsValidationResponse { valid: false, message: Some(message) },
    };
    Ok(serde_json::to_vec(&response)?)
}

/// Lookups through Kubewarden's `kubernetes` host capability.
pub struct HostCluster;

fn masks(query: &Query) -> Option<BTreeSet<String>> {
    (!query.field_masks.is_empty()).then(|| query.field_masks.iter().map(|m| m.to_string()).collect())
}

/// policy-server answers a lookup of a kind the cluster does not serve (or cannot
/// discover) with `Cannot find resource <apiVersion>/<kind>`: a failed lookup, not a
/// missing object.
fn is_not_served(message: &str) -> bool {
    message.contains("Cannot find resource ") || message.contains("the server could not find the requested resource")
}

/// policy-server answers a get for a missing object with an error, not an empty result:
/// `Cannot find <apiVersion>/<kind> named '<name>' inside of namespace ...`.
fn is_not_found(message: &str) -> bool {
    message.contains("Cannot find") || message.contains("not found") || message.contains("NotFound")
}

/// A host error as a [`LookupError`].
fn lookup_error(query: &Query, message: String) -> LookupError {
    if is_not_served(&message) { LookupError::not_served(query) } else { LookupError::Failed(message) }
}

impl Cluster for HostCluster {
    fn get(&self, query: &Query, name: &str) -> Result<Option<Box<RawValue>>, LookupError> {
        let request = GetResourceRequest {
            api_version: query.api_version.to_string(),
            kind: query.kind.to_string(),
            name: name.to_string(),
            namespace: query.namespace.map(str::to_string),
            disable_cache: false,
            field_masks: masks(query),
        };
        match get_resource::<Box<RawValue>>(&request) {
            Ok(object) => Ok(Some(object)),
            Err(e) => {
                let message = e.to_string();
                if !is_not_served(&message) && is_not_found(&message) {
                    Ok(None)
                } else {
                    Err(lookup_error(query, message))
                }
            }
        }
    }

    fn list(&self, query: &Query) -> Result<String, LookupError> {
        // The SDK's typed list helpers need a k8s-openapi type per kind; the core reads JSON
        // text, so send the SDK's request over the same host call and pass the answer on.
        let (operation, request) = match query.namespace {
            Some(ns) => (
                "list_resources_by_namespace",
                serde_json::to_vec(&ListResourcesByNamespaceRequest {
                    api_version: query.api_version.to_string(),
                    kind: query.kind.to_string(),
                    namespace: ns.to_string(),
                    label_selector: None,
                    field_selector: None,
                    field_masks: masks(query),
                }),
            ),
            None => (
                "list_resources_all",
                serde_json::to_vec(&ListAllResourcesRequest {
                    api_version: query.api_version.to_string(),
                    kind: query.kind.to_string(),
                    label_selector: None,
                    field_selector: None,
                    field_masks: masks(query),
                }),
            ),
        };
        let request = request.map_err(|e| LookupError::Failed(e.to_string()))?;
        let raw = wapc_guest::host_call("kubewarden", "kubernetes", operation, &request)
            .map_err(|e| lookup_error(query, format!("error invoking host capability kubernetes.{operation}: {e}")))?;
        // The answer is the list object itself; the rule that asked reads its `items`.
        String::from_utf8(raw).map_err(|e| LookupError::Failed(format!("cannot read the {operation} answer: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUERY: Query =
        Query { api_version: "scheduling.k8s.io/v1alpha2", kind: "Workload", namespace: Some("ml"), field_masks: &[] };

    #[test]
    fn tells_not_served_from_not_found() {
        let not_served = "error invoking host capability kubernetes.get_resource: Host error: Cannot find resource scheduling.k8s.io/v1alpha2/Workload";
        assert!(is_not_served(not_served));
        assert_eq!(
            lookup_error(&QUERY, not_served.to_string()),
            LookupError::NotServed { api_version: "scheduling.k8s.io/v1alpha2".into(), kind: "Workload".into() }
        );
        let missing =
            "Host error: Cannot find scheduling.k8s.io/v1alpha2/Workload named 'w' inside of namespace 'Some(\"ml\")'";
        assert!(!is_not_served(missing) && is_not_found(missing));
        assert_eq!(lookup_error(&QUERY, "timeout".into()), LookupError::Failed("timeout".into()));
    }
}

//! The Kubewarden (waPC) side of every gangwarden policy. It decides nothing: it hands the
//! payload to `gangwarden_core::engine`, answers lookups through the host, and renders the
//! core's `Response` as Kubewarden's `ValidationResponse`.
//!
//! A policy crate is one line that names its rule set and the host calls its lookups make,
//! which are what its `metadata.yml` declares in `hostCapabilities`:
//! `gangwarden_kubewarden::policy!(SomeRuleSet, lookups: [get_resource]);`. A host call a
//! policy does not name is never made, and its code and operation name are left out of the
//! module, so `kwctl annotate`, which looks for them, finds exactly the declared list.

use std::collections::BTreeSet;

use gangwarden_core::cluster::{Cluster, LookupError, Query};
use gangwarden_core::engine::{self, RuleSet};
use kubewarden_policy_sdk::host_capabilities::kubernetes::{GetResourceRequest, ListAllResourcesRequest, get_resource};
use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use kubewarden_policy_sdk::wapc_guest::{self, CallResult};
use serde_json::value::RawValue;

pub use kubewarden_policy_sdk::{protocol_version_guest, wapc_guest::register_function};

/// Defines `wapc_init` for a policy that runs the rule set `$rules` and whose lookups make
/// the host calls listed (`get_resource`, `list_resources_all`; none for a policy that reads
/// nothing from the cluster).
#[macro_export]
macro_rules! policy {
    ($rules:ty, lookups: [$($call:ident),*]) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn wapc_init() {
            const CALLS: $crate::HostCalls = $crate::HostCalls::NONE$(.with(stringify!($call)))*;
            $crate::register_function("validate", $crate::validate::<$rules, { CALLS.get }, { CALLS.list }>);
            $crate::register_function("validate_settings", $crate::validate_settings::<$rules>);
            $crate::register_function("protocol_version", $crate::protocol_version_guest);
        }
    };
}

/// The `kubernetes` host calls a policy's lookups may make (its declared `hostCapabilities`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCalls {
    /// `kubernetes/get_resource`
    pub get: bool,
    /// `kubernetes/list_resources_all`
    pub list: bool,
}

impl HostCalls {
    pub const NONE: HostCalls = HostCalls { get: false, list: false };

    /// Adds the host call named `name`; an unknown name fails the policy's build.
    pub const fn with(self, name: &str) -> HostCalls {
        match name.as_bytes() {
            b"get_resource" => HostCalls { get: true, ..self },
            b"list_resources_all" => HostCalls { list: true, ..self },
            _ => panic!("unknown host call: use get_resource or list_resources_all"),
        }
    }
}

pub fn validate<R: RuleSet, const GET: bool, const LIST: bool>(payload: &[u8]) -> CallResult {
    let r = engine::evaluate::<R>(payload, &HostCluster::<GET, LIST>);
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

/// Lookups through Kubewarden's `kubernetes` host capability, making only the host calls
/// `GET` (`get_resource`) and `LIST` (`list_resources_all`) allow.
pub struct HostCluster<const GET: bool, const LIST: bool>;

/// The longest host error a message quotes: policy-server's own wording, the Kubernetes
/// client's error, and (with `RUST_BACKTRACE` set on the host) a stack backtrace, which users
/// must not get in `kubectl`.
pub const MAX_HOST_ERROR_CHARS: usize = 256;

/// A host error as messages quote it: its first line, cut to [`MAX_HOST_ERROR_CHARS`].
fn quoted_host_error(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default().trim_end();
    gangwarden_core::field::truncate(first, MAX_HOST_ERROR_CHARS).into_owned()
}

/// A lookup the policy does not declare the host call for (see [`policy!`]).
fn undeclared() -> LookupError {
    LookupError::Failed("this policy declares no host capability for this lookup".into())
}

fn masks(query: &Query) -> Option<BTreeSet<String>> {
    // Filled by inserting: `collect` would compile a sort of its own.
    (!query.field_masks.is_empty()).then(|| {
        let mut masks = BTreeSet::new();
        masks.extend(query.field_masks.iter().map(|m| m.to_string()));
        masks
    })
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
    if is_not_served(&message) {
        LookupError::not_served(query)
    } else {
        LookupError::Failed(quoted_host_error(&message))
    }
}

impl<const GET: bool, const LIST: bool> Cluster for HostCluster<GET, LIST> {
    fn get(&self, query: &Query, name: &str) -> Result<Option<Box<RawValue>>, LookupError> {
        if !GET {
            return Err(undeclared());
        }
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
        // Every list the rules make is cluster-wide (Nodes).
        if !LIST || query.namespace.is_some() {
            return Err(undeclared());
        }
        // The SDK's typed list helpers need a k8s-openapi type per kind; the core reads JSON
        // text, so send the SDK's request over the same host call and pass the answer on.
        let request = serde_json::to_vec(&ListAllResourcesRequest {
            api_version: query.api_version.to_string(),
            kind: query.kind.to_string(),
            label_selector: None,
            field_selector: None,
            field_masks: masks(query),
        })
        .map_err(|e| LookupError::Failed(e.to_string()))?;
        let raw = wapc_guest::host_call("kubewarden", "kubernetes", "list_resources_all", &request).map_err(|e| {
            lookup_error(query, format!("error invoking host capability kubernetes.list_resources_all: {e}"))
        })?;
        // The answer is the list object itself; the rule that asked reads its `items`.
        String::from_utf8(raw)
            .map_err(|e| LookupError::Failed(format!("cannot read the list_resources_all answer: {e}")))
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

    #[test]
    fn a_host_error_is_quoted_by_its_first_line_and_bounded() {
        let backtrace = "error invoking host capability kubernetes.get_resource: Host error: Callback evaluation failure: timeout\n\nStack backtrace:\n   0: <unknown>\n   1: start_thread";
        assert_eq!(
            lookup_error(&QUERY, backtrace.into()),
            LookupError::Failed(
                "error invoking host capability kubernetes.get_resource: Host error: Callback evaluation failure: timeout"
                    .into()
            )
        );
        let LookupError::Failed(long) = lookup_error(&QUERY, "x".repeat(5000)) else { panic!("a failed lookup") };
        assert!(long.len() < 300 && long.starts_with("xxxx"), "{long}");
    }

    #[test]
    fn host_calls_are_named_as_the_capabilities() {
        assert_eq!(HostCalls::NONE.with("get_resource"), HostCalls { get: true, list: false });
        assert_eq!(
            HostCalls::NONE.with("list_resources_all").with("get_resource"),
            HostCalls { get: true, list: true }
        );
        let none: HostCluster<false, false> = HostCluster;
        assert_eq!(none.get(&QUERY, "w").err(), Some(undeclared()));
        assert_eq!(none.list(&Query { namespace: None, ..QUERY }), Err(undeclared()));
    }
}

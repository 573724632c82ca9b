//! Any bytes as settings: `validate_settings` of every rule set, and the same bytes as the
//! settings of an everyday request.
#![no_main]

use std::sync::OnceLock;

use gangwarden_core::cluster::MemoryCluster;
use libfuzzer_sys::fuzz_target;

static CLUSTER: OnceLock<MemoryCluster> = OnceLock::new();

const REQUEST: &str = r#"{"uid":"f","operation":"CREATE","namespace":"ml","kind":{"group":"scheduling.k8s.io","version":"v1alpha2","kind":"PodGroup"},"object":{"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"g","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}},"schedulingConstraints":{"topology":[{"key":"topology.example.com/rack"}]}}}}"#;

fuzz_target!(|data: &[u8]| {
    gangwarden_fuzz::settings_everywhere(data);
    if let Ok(settings) = std::str::from_utf8(data) {
        let payload = format!(r#"{{"request":{REQUEST},"settings":{settings}}}"#);
        gangwarden_fuzz::evaluate_everywhere(payload.as_bytes(), CLUSTER.get_or_init(gangwarden_fuzz::cluster));
    }
});

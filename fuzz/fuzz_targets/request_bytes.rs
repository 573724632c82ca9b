//! Any bytes as the `validate` payload: the request decoder and every rule set.
#![no_main]

use std::sync::OnceLock;

use gangwarden_core::cluster::MemoryCluster;
use libfuzzer_sys::fuzz_target;

static CLUSTER: OnceLock<MemoryCluster> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    gangwarden_fuzz::evaluate_everywhere(data, CLUSTER.get_or_init(gangwarden_fuzz::cluster));
});

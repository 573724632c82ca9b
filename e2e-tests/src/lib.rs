//! A small waPC host that runs the built gangwarden policies the way Kubewarden's
//! policy-server does, and the case files that describe what they must answer.
//!
//! The host answers the `kubewarden`/`kubernetes` host calls from a case's cluster objects,
//! shaped as policy-server shapes them, and refuses calls for resources the policy's
//! `metadata.yml` does not declare in `contextAwareResources`.

pub mod case;
pub mod corpus;
pub mod host;
pub mod kwctl;
pub mod metadata;
pub mod payloads;
pub mod policy_server;
pub mod registry;

use std::path::{Path, PathBuf};

/// The repository root (the parent of this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("e2e-tests lives in the repository").to_path_buf()
}

/// Every policy the project builds: its name, its folder (holding `policy.wasm` and
/// `metadata.yml`) and the case folder under `e2e-tests/cases/`.
pub const POLICIES: &[(&str, &str)] = &[
    ("gang", "policies/gang"),
    ("claims", "policies/claims"),
    ("run-policy", "policies/run-policy"),
    ("topology", "policies/topology"),
    ("bundle", "."),
];

/// The ClusterAdmissionPolicy manifest of each policy, under `deploy/`.
pub fn deploy_manifest(policy: &str) -> std::path::PathBuf {
    let file = if policy == "bundle" { "gangwarden.yaml".to_string() } else { format!("{policy}.yaml") };
    repo_root().join("deploy").join(file)
}

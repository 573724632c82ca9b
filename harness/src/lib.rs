//! What gangwarden's tests (e2e-tests/) and automation (xtask/) share, so that neither depends
//! on the other: a small waPC host that runs the built policies the way Kubewarden's
//! policy-server does, the case files that describe what they must answer, the payloads the
//! benches and fuzzers send, the packaging generator the packaging tests check, the
//! playground's data, the release checks and cosign-key signing.
//!
//! The host answers the `kubewarden`/`kubernetes` host calls from a case's cluster objects,
//! shaped as policy-server shapes them, and refuses calls for resources the policy's
//! `metadata.yml` does not declare in `contextAwareResources`. It runs modules with wasmtime,
//! which takes minutes to compile: only the `host` feature builds it (`host::Policy` and what
//! calls it), so automation that runs no module (`cargo xtask release-check`, `sign`) goes
//! without.

pub mod case;
pub mod corpus;
pub mod host;
pub mod kwctl;
pub mod metadata;
#[cfg(feature = "host")]
pub mod packaging;
pub mod payloads;
pub mod playground;
pub mod policy_server;
pub mod registry;
pub mod release;
pub mod sign;

use std::path::{Path, PathBuf};

/// The repository root: the checkout the command runs in (the current directory or one
/// above it holding this crate), else the one this crate was built from. A target dir shared
/// by two checkouts keeps a binary built in the other, which must not read its files.
pub fn repo_root() -> PathBuf {
    let here = std::env::current_dir().ok();
    let running_in = here.as_deref().and_then(|dir| dir.ancestors().find(|d| d.join("harness/src/lib.rs").is_file()));
    running_in.map(Path::to_path_buf).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("harness/ lives in the repository").to_path_buf()
    })
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

/// Puts `text` between the `begin` and `end` markers of `file` (a path relative to the
/// repository, or absolute): how the benches keep their tables in BENCHMARKS.md.
pub fn write_between_markers(file: &std::path::Path, begin: &str, end: &str, text: &str) -> Result<(), String> {
    let file = if file.is_absolute() { file.to_path_buf() } else { repo_root().join(file) };
    let old = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let (Some(b), Some(e)) = (old.find(begin), old.find(end)) else {
        return Err(format!("{} has no {begin} … {end} markers", file.display()));
    };
    let updated = format!("{}{begin}\n{text}{}", &old[..b], &old[e..]);
    std::fs::write(&file, updated).map_err(|e| format!("{}: {e}", file.display()))
}

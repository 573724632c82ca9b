//! `cargo xtask sbom-check`: each module's SBOM (CycloneDX JSON, written by cargo-cyclonedx in
//! `make sbom`) must describe what the module is built from. The crates a module is built from
//! are its crate's normal dependencies, followed transitively, as cargo resolves them for
//! wasm32-wasip1 (`cargo metadata --filter-platform wasm32-wasip1 --locked`): build scripts'
//! and dev dependencies are not in the module. The SBOM must list exactly those crates, each
//! with the version Cargo.lock pins.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// A crate and its version.
pub type Crate = (String, String);

/// Every `name`/`version` pair Cargo.lock pins.
pub fn locked_crates(lock: &str) -> BTreeSet<Crate> {
    let mut out = BTreeSet::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|l| l.strip_prefix(&format!("{key} = \"")).and_then(|v| v.strip_suffix('"')))
        };
        if let (Some(name), Some(version)) = (field("name"), field("version")) {
            out.insert((name.to_string(), version.to_string()));
        }
    }
    out
}

/// The crate a module is built from (the one in `policy_dir`) and every crate it is built
/// from for wasm32-wasip1, from `cargo metadata`'s resolve graph (normal dependencies only).
pub fn module_crates(policy_dir: &Path) -> Result<(Crate, BTreeSet<Crate>), String> {
    let manifest = policy_dir.join("Cargo.toml");
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
            "wasm32-wasip1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo metadata: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages: BTreeMap<&str, Crate> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some((p["id"].as_str()?, (p["name"].as_str()?.to_string(), p["version"].as_str()?.to_string())))
        })
        .collect();
    let manifest = manifest.canonicalize().map_err(|e| format!("{}: {e}", manifest.display()))?;
    let root = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["manifest_path"].as_str().is_some_and(|m| Path::new(m) == manifest))
        .and_then(|p| p["id"].as_str())
        .ok_or(format!("cargo metadata has no package at {}", manifest.display()))?;
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let (mut seen, mut todo) = (BTreeSet::new(), vec![root]);
    while let Some(id) = todo.pop() {
        let node = nodes.get(id).ok_or(format!("cargo metadata resolves no {id}"))?;
        for dep in node["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"].as_array().into_iter().flatten().any(|k| k["kind"].is_null());
            if let (true, Some(pkg)) = (normal, dep["pkg"].as_str())
                && seen.insert(pkg)
            {
                todo.push(pkg);
            }
        }
    }
    let name = |id: &str| packages.get(id).cloned().ok_or(format!("cargo metadata lists no package {id}"));
    Ok((name(root)?, seen.into_iter().map(name).collect::<Result<_, _>>()?))
}

/// Checks one CycloneDX SBOM against the module's crate, the crates it is built from and
/// Cargo.lock; returns how many crates it lists.
pub fn check(sbom: &Path, module: &(Crate, BTreeSet<Crate>), lock: &str) -> Result<usize, String> {
    let shown = sbom.display();
    let text = std::fs::read_to_string(sbom).map_err(|e| format!("{shown}: {e}"))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    if doc["bomFormat"] != "CycloneDX" {
        return Err(format!("{shown}: not a CycloneDX SBOM (bomFormat {})", doc["bomFormat"]));
    }
    let crate_of = |c: &Value| -> Option<Crate> { Some((c["name"].as_str()?.into(), c["version"].as_str()?.into())) };
    let (own, built_from) = module;
    let described = crate_of(&doc["metadata"]["component"]);
    if described.as_ref() != Some(own) {
        return Err(format!("{shown}: describes {described:?}, not the module's crate {own:?}"));
    }
    let listed: BTreeSet<Crate> = doc["components"].as_array().into_iter().flatten().filter_map(crate_of).collect();
    let locked = locked_crates(lock);
    let unlocked: Vec<&Crate> = listed.iter().filter(|c| !locked.contains(*c)).collect();
    let missing: Vec<&Crate> = built_from.difference(&listed).collect();
    let extra: Vec<&Crate> = listed.difference(built_from).collect();
    let mut wrong = Vec::new();
    if !unlocked.is_empty() {
        wrong.push(format!("not as Cargo.lock pins them: {unlocked:?}"));
    }
    if !missing.is_empty() {
        wrong.push(format!("the module is built from these, unlisted: {missing:?}"));
    }
    if !extra.is_empty() {
        wrong.push(format!("listed, but not built into the module: {extra:?}"));
    }
    if wrong.is_empty() { Ok(listed.len()) } else { Err(format!("{shown}: {}", wrong.join("; "))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn krate(name: &str, version: &str) -> Crate {
        (name.to_string(), version.to_string())
    }

    const LOCK: &str = "version = 4\n\n[[package]]\nname = \"serde_json\"\nversion = \"1.0.145\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"gangwarden-core\"\nversion = \"0.1.0\"\ndependencies = [\n \"serde_json\",\n]\n\n[[package]]\nname = \"gangwarden-gang-policy\"\nversion = \"0.1.0\"\n";

    fn sbom(components: &[(&str, &str)]) -> String {
        let list: Vec<Value> =
            components.iter().map(|(n, v)| serde_json::json!({"type": "library", "name": n, "version": v})).collect();
        serde_json::json!({
            "bomFormat": "CycloneDX", "specVersion": "1.5",
            "metadata": {"component": {"type": "application", "name": "gangwarden-gang-policy", "version": "0.1.0"}},
            "components": list,
        })
        .to_string()
    }

    #[test]
    fn an_sbom_lists_exactly_what_the_module_is_built_from_as_locked() {
        let dir = std::env::temp_dir().join(format!("gangwarden-sbom-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("gang.cdx.json");
        let module = (
            krate("gangwarden-gang-policy", "0.1.0"),
            [krate("gangwarden-core", "0.1.0"), krate("serde_json", "1.0.145")].into_iter().collect(),
        );
        let run = |components: &[(&str, &str)]| {
            std::fs::write(&file, sbom(components)).unwrap();
            check(&file, &module, LOCK)
        };
        assert_eq!(run(&[("gangwarden-core", "0.1.0"), ("serde_json", "1.0.145")]), Ok(2));
        let err = run(&[("gangwarden-core", "0.1.0")]).unwrap_err();
        assert!(err.ends_with("the module is built from these, unlisted: [(\"serde_json\", \"1.0.145\")]"), "{err}");
        let err = run(&[("gangwarden-core", "0.1.0"), ("serde_json", "1.0.144")]).unwrap_err();
        assert!(err.contains("not as Cargo.lock pins them: [(\"serde_json\", \"1.0.144\")]"), "{err}");
        let err = run(&[("gangwarden-core", "0.1.0"), ("serde_json", "1.0.145"), ("gangwarden-gang-policy", "0.1.0")])
            .unwrap_err();
        assert!(err.ends_with("listed, but not built into the module: [(\"gangwarden-gang-policy\", \"0.1.0\")]"));
        // An SBOM of a bare .wasm file describes no crate.
        std::fs::write(&file, r#"{"bomFormat":"CycloneDX","metadata":{"component":{"name":"policy.wasm"}}}"#).unwrap();
        assert!(check(&file, &module, LOCK).unwrap_err().contains("not the module's crate"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_gang_module_is_built_from_core_serde_json_and_the_sdk() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let (own, crates) = module_crates(&root.join("policies/gang")).unwrap();
        let lock = locked_crates(&std::fs::read_to_string(root.join("Cargo.lock")).unwrap());
        assert_eq!(own.0, "gangwarden-gang-policy");
        for name in ["gangwarden-core", "gangwarden-kubewarden", "serde_json", "kubewarden-policy-sdk"] {
            let found: Vec<&Crate> = crates.iter().filter(|(n, _)| n == name).collect();
            assert_eq!(found.len(), 1, "{name}: {crates:?}");
            assert!(lock.contains(found[0]), "{name}: {:?} is not Cargo.lock's", found[0]);
        }
        // Test-only and host-only crates are not built into the module.
        for name in ["proptest", "wasmtime", "gangwarden-e2e-tests"] {
            assert!(crates.iter().all(|(n, _)| n != name), "{name}");
        }
    }
}

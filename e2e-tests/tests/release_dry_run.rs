//! `make release-dry-run`: every step of a release, each the make target the release workflow
//! calls, run against Debian's `docker-registry` on 127.0.0.1 (an `insecure_sources` entry):
//!
//! - build: `make release-modules sbom` (annotated modules, and CycloneDX SBOMs that
//!   `cargo xtask sbom-check` holds to the crates each module is built from), `make release-sums`;
//! - `make push` of what was built, collecting `kwctl push -o json`'s output;
//! - `make sign-published COSIGN_KEY=…`: every pushed module signed with a cosign key, then
//!   `kwctl verify -k` on each; the keyless path through a stand-in `cosign` that records its
//!   calls (and fails the step when one signature fails), and each SBOM signed (`make sign-sboms`);
//! - `make github-release` through a stand-in `gh` that records the draft it was asked for;
//! - `make artifacthub-tree` on a tree holding the previous release, in the layout the earlier
//!   workflow wrote: both versions are there afterwards, each in its own folder.
//!
//! Needs docker-registry (`DOCKER_REGISTRY`), kwctl (`KWCTL`) and cargo-cyclonedx; without
//! one it says `skipped:`, or fails when `CI` is set.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use gangwarden_harness::metadata::read_metadata;
use gangwarden_harness::policy_server::{TempDir, missing, needed_tool};
use gangwarden_harness::registry::{Registry, trust_config};
use gangwarden_harness::{POLICIES, repo_root};
use serde_json::Value;

const TEST: &str = "release-dry-run";

/// `make <args>` in the repository; what it printed, or why it failed.
fn make(args: &[String], env: &[(&str, &std::ffi::OsStr)]) -> Result<String, String> {
    let mut cmd = Command::new("make");
    cmd.arg("-C").arg(repo_root()).arg("--no-print-directory").args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().map_err(|e| format!("make: {e}"))?;
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if output.status.success() { Ok(said) } else { Err(format!("make {args:?} failed ({}):\n{said}", output.status)) }
}

/// A stand-in for `name` that appends its arguments to `<dir>/<name>.log` and exits `code`.
fn stand_in(dir: &Path, name: &str, code: u8) {
    let script = dir.join(name);
    let log = dir.join(format!("{name}.log"));
    std::fs::write(&script, format!("#!/bin/sh\necho \"$*\" >> '{}'\nexit {code}\n", log.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn with_path_first(dir: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest))).unwrap()
}

/// The crates Cargo.lock pins, as `name version`.
fn locked() -> BTreeSet<String> {
    let lock = std::fs::read_to_string(repo_root().join("Cargo.lock")).unwrap();
    lock.split("[[package]]")
        .skip(1)
        .filter_map(|block| {
            let field = |key: &str| {
                block.lines().find_map(|l| l.strip_prefix(&format!("{key} = \""))?.strip_suffix('"').map(String::from))
            };
            Some(format!("{} {}", field("name")?, field("version")?))
        })
        .collect()
}

fn cyclonedx_found() -> bool {
    Command::new("cargo").args(["cyclonedx", "--version"]).output().is_ok_and(|o| o.status.success())
}

#[test]
#[ignore = "needs docker-registry, kwctl and cargo-cyclonedx: `make release-dry-run` runs it"]
fn every_release_step_runs_against_a_local_registry() {
    let need = |var, name| needed_tool(TEST, var, name).unwrap_or_else(|e| panic!("{e}"));
    let Some(registry_binary) = need("DOCKER_REGISTRY", "docker-registry") else { return };
    let Some(kwctl) = need("KWCTL", "kwctl") else { return };
    if !cyclonedx_found() {
        let why = "cargo-cyclonedx not found: scripts/tools.sh installs it";
        return missing(TEST, why).unwrap_or_else(|e| panic!("{e}"));
    }
    let dir = TempDir::new("gangwarden-release-dry-run").unwrap();
    let registry = Registry::start(&registry_binary, dir.path()).unwrap();
    let sources = dir.path().join("sources.yml");
    std::fs::write(&sources, format!("insecure_sources: [\"127.0.0.1:{}\"]\n", registry.port)).unwrap();
    let (dist, published) = (dir.path().join("dist"), dir.path().join("published.json"));
    let version = read_metadata(".").unwrap().version().unwrap().to_string();
    let var = |name: &str, path: &Path| format!("{name}={}", path.display());
    let kwctl_env = [("KWCTL", kwctl.as_os_str())];

    // Build: the annotated modules and their SBOMs, checked, and the sums.
    let built = make(&["release-modules".into(), "sbom".into(), var("DIST", &dist)], &kwctl_env).unwrap();
    for (name, _) in POLICIES {
        let sbom = format!("gangwarden-{name}-v{version}.cdx.json");
        assert!(built.contains(&format!("{sbom}: ")) && built.contains(" crates, as Cargo.lock has them"), "{built}");
        assert!(dist.join(format!("gangwarden-{name}-v{version}.wasm")).is_file(), "{name}");
    }
    // Read here too: the gang module's SBOM names its crates at Cargo.lock's versions.
    let sbom: Value =
        serde_json::from_slice(&std::fs::read(dist.join(format!("gangwarden-gang-v{version}.cdx.json"))).unwrap())
            .unwrap();
    let listed: BTreeSet<String> = sbom["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {}", c["name"].as_str().unwrap(), c["version"].as_str().unwrap()))
        .collect();
    let locked = locked();
    for name in ["gangwarden-core", "serde_json", "kubewarden-policy-sdk"] {
        let found: Vec<&String> = listed.iter().filter(|c| c.split(' ').next() == Some(name)).collect();
        assert_eq!(found.len(), 1, "{name} in the gang SBOM: {listed:?}");
        assert!(locked.contains(found[0]), "{}: not as Cargo.lock pins it", found[0]);
    }
    make(&["release-sums".into(), var("DIST", &dist)], &[]).unwrap();
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 2 * POLICIES.len(), "{sums}");

    // Push what was built.
    let pushed = make(
        &[
            "push".into(),
            format!("REGISTRY={}", registry.prefix()),
            var("KWCTL_SOURCES", &sources),
            var("PUBLISHED", &published),
            var("DIST", &dist),
        ],
        &kwctl_env,
    )
    .unwrap();
    let references: Vec<String> = serde_json::Deserializer::from_str(&std::fs::read_to_string(&published).unwrap())
        .into_iter::<Value>()
        .map(|d| d.unwrap()["immutable_ref"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(references.len(), POLICIES.len(), "{pushed}");

    // Signed with a cosign key, each verified by kwctl with that key.
    let keys = dir.path().join("keys");
    let password = [("COSIGN_PASSWORD", std::ffi::OsStr::new("dry-run"))];
    let generated = Command::new("cargo")
        .current_dir(repo_root())
        .args(["xtask", "generate-key-pair", "--output-dir"])
        .arg(&keys)
        .env("COSIGN_PASSWORD", "dry-run")
        .output()
        .unwrap();
    assert!(generated.status.success(), "{generated:?}");
    let published_var = var("PUBLISHED", &published);
    let signed =
        make(&["sign-published".into(), published_var.clone(), var("COSIGN_KEY", &keys.join("cosign.key"))], &password)
            .unwrap();
    assert!(signed.contains(&format!("signed {0} of {0} published modules:", POLICIES.len())), "{signed}");
    for reference in &references {
        assert!(signed.contains(&format!("  {reference}\n")), "{reference}: {signed}");
        let mut verify = Command::new(&kwctl);
        verify.arg("verify").arg("--sources-path").arg(&sources).arg("-k").arg(keys.join("cosign.pub"));
        if let Some(trust) = trust_config(&kwctl) {
            verify.arg("--sigstore-trust-config").arg(trust);
        }
        let out = verify.arg(format!("registry://{reference}")).output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && said.contains("Policy successfully verified"), "{reference}: {said}");
    }

    // Keyless, as the workflow signs: cosign is called twice per module (v2 and v3 bundles).
    let stand_ins = dir.path().join("bin");
    std::fs::create_dir_all(&stand_ins).unwrap();
    stand_in(&stand_ins, "cosign", 0);
    let path = with_path_first(&stand_ins);
    let signed = make(&["sign-published".into(), published_var.clone()], &[("PATH", &path)]).unwrap();
    assert!(signed.contains(&format!("signed {0} of {0} published modules:", POLICIES.len())), "{signed}");
    let calls = std::fs::read_to_string(stand_ins.join("cosign.log")).unwrap();
    let expected: Vec<String> = references
        .iter()
        .flat_map(|r| {
            ["false", "true"].map(|v3| format!("sign --yes --new-bundle-format={v3} --use-signing-config={v3} {r}"))
        })
        .collect();
    assert_eq!(calls.lines().collect::<Vec<_>>(), expected);
    make(&["sign-sboms".into(), var("DIST", &dist)], &[("PATH", &path)]).unwrap();
    let calls = std::fs::read_to_string(stand_ins.join("cosign.log")).unwrap();
    let sbom_calls: Vec<&str> = calls.lines().filter(|l| l.starts_with("sign-blob")).collect();
    assert_eq!(sbom_calls.len(), POLICIES.len(), "{calls}");
    for (name, _) in POLICIES {
        let sbom = dist.join(format!("gangwarden-{name}-v{version}.cdx.json")).display().to_string();
        assert!(
            sbom_calls.contains(&format!("sign-blob --yes --bundle {sbom}.sigstore.json {sbom}").as_str()),
            "{calls}"
        );
    }
    // A signature that fails fails the step.
    stand_in(&stand_ins, "cosign", 1);
    let err = make(&["sign-published".into(), published_var], &[("PATH", &path)]).unwrap_err();
    assert!(err.contains(&format!("sign-published: signing {}: ", references[0])), "{err}");

    // The draft release with every built file.
    stand_in(&stand_ins, "gh", 0);
    let notes = dir.path().join("notes.txt");
    make(
        &["github-release".into(), format!("TAG=v{version}"), var("DIST", &dist), var("RELEASE_NOTES", &notes)],
        &[("PATH", &path)],
    )
    .unwrap();
    let gh = std::fs::read_to_string(stand_ins.join("gh.log")).unwrap();
    assert!(gh.starts_with(&format!("release create v{version} --draft --verify-tag --title gangwarden v{version} ")));
    for file in std::fs::read_dir(&dist).unwrap() {
        assert!(gh.contains(&file.unwrap().path().display().to_string()), "{gh}");
    }
    assert!(std::fs::read_to_string(&notes).unwrap().starts_with(&format!("tag v{version} publishes:")));

    // Artifact Hub: the previous release, as the earlier workflow left it (one folder per
    // package, no version folder), then this one added.
    let tree = dir.path().join("artifacthub");
    let previous = "0.0.9";
    let mut packages = Vec::new();
    for (_, policy_dir) in POLICIES {
        let source = repo_root().join(policy_dir);
        let pkg = std::fs::read_to_string(source.join("artifacthub-pkg.yml")).unwrap();
        let name = pkg.lines().find_map(|l| l.strip_prefix("name: ")).unwrap().to_string();
        let old = pkg.replacen(&format!("version: {version}\n"), &format!("version: {previous}\n"), 1);
        assert_ne!(old, pkg);
        std::fs::create_dir_all(tree.join(&name)).unwrap();
        std::fs::write(tree.join(&name).join("artifacthub-pkg.yml"), &old).unwrap();
        std::fs::copy(source.join("README.md"), tree.join(&name).join("README.md")).unwrap();
        packages.push((name, source, old));
    }
    make(&["artifacthub-tree".into(), var("ARTIFACTHUB_TREE", &tree)], &[]).unwrap();
    for (name, source, old) in &packages {
        let package: PathBuf = tree.join(name);
        let mut entries: Vec<String> =
            std::fs::read_dir(&package).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        entries.sort();
        assert_eq!(entries, [previous, version.as_str()], "{name}");
        assert_eq!(&std::fs::read_to_string(package.join(previous).join("artifacthub-pkg.yml")).unwrap(), old);
        for file in ["artifacthub-pkg.yml", "README.md"] {
            let now = std::fs::read(package.join(&version).join(file)).unwrap();
            assert_eq!(now, std::fs::read(source.join(file)).unwrap(), "{name}/{version}/{file}");
        }
    }
    let repo = std::fs::read_to_string(tree.join("artifacthub-repo.yml")).unwrap();
    assert!(repo.contains("owners:\n  - name: "), "{repo}");
    println!(
        "release-dry-run: {} modules built with checked SBOMs, pushed to {}, signed with a key (kwctl verify -k) and keyless (stand-in cosign), the draft release asked of gh, Artifact Hub tree with {previous} and {version}",
        POLICIES.len(),
        registry.prefix()
    );
}

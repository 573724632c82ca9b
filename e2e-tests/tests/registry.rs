//! `make e2e-registry`: the publish path run for real, and signatures checked the way a
//! cluster checks them. Debian's `docker-registry` (distribution 2.8) serves 127.0.0.1 on a
//! free port; `make publish` pushes every annotated module into it (`kwctl push`, the registry
//! an `insecure_sources` entry); `kwctl pull` and `kwctl inspect` read them back; policy-server
//! loads the `deploy/` policies with their `module:` pointed at that registry and answers a
//! rejected and an accepted request. Then the gang module is signed with a cosign key
//! (`cargo xtask sign`): `kwctl verify -k` accepts the key and refuses another, and
//! policy-server with a `verification-config` requiring the key serves the signed module and
//! refuses to start on an unsigned one. `make release-assets` lays out what a release attaches
//! (`make release-dry-run` runs the release's own steps).
//!
//! It needs `docker-registry` (or `DOCKER_REGISTRY=/path`), kwctl and policy-server (`KWCTL`,
//! `POLICY_SERVER`, or on PATH), and says `skipped:` without them, or fails when `CI` is set. `kwctl verify` takes the
//! Sigstore trust root from `KWCTL_SIGSTORE_TRUST_CONFIG`, else a `sigstore-trust-config.json`
//! beside kwctl, else kwctl downloads the public one.

use std::path::{Path, PathBuf};
use std::process::Command;

use gangwarden_harness::case::Case;
use gangwarden_harness::metadata::read_metadata;
use gangwarden_harness::policy_server::{
    Options, PolicyServer, TempDir, entry_id, judge, missing, policies_yml_with, read_manifest, tool,
};
use gangwarden_harness::registry::{Registry, trust_config};
use gangwarden_harness::sign;
use gangwarden_harness::{POLICIES, deploy_manifest, repo_root};
use serde_json::Value;

struct Tools {
    registry: PathBuf,
    kwctl: PathBuf,
    /// For `kwctl verify`: the trust root it reads instead of downloading one, when known.
    trust_config: Option<PathBuf>,
}

fn find_tools() -> Result<Tools, String> {
    let registry = tool("DOCKER_REGISTRY", "docker-registry")
        .ok_or("docker-registry not found (Debian package docker-registry, or set DOCKER_REGISTRY)")?;
    let kwctl = tool("KWCTL", "kwctl").ok_or("kwctl not found (set KWCTL or put kwctl on PATH)")?;
    tool("POLICY_SERVER", "policy-server").ok_or("policy-server not found (set POLICY_SERVER or put it on PATH)")?;
    let trust_config = trust_config(&kwctl);
    Ok(Tools { registry, kwctl, trust_config })
}

/// Runs a command; its output, or why it failed with what it printed.
fn run(cmd: &mut Command) -> Result<String, String> {
    let output = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if output.status.success() { Ok(said) } else { Err(format!("{cmd:?} failed ({}):\n{said}", output.status)) }
}

/// The module reference of `policy` (a name of POLICIES) in the local registry.
fn local_reference(registry: &Registry, policy: &str) -> String {
    let dir = POLICIES.iter().find(|(n, _)| *n == policy).map(|(_, d)| *d).expect("a policy");
    let image = read_metadata(dir).and_then(|m| m.image()).expect("metadata");
    let (_, name_and_tag) = image.rsplit_once('/').expect("an image with a repository");
    format!("registry://{}/{name_and_tag}", registry.prefix())
}

fn case(path: &str) -> Case {
    Case::load(&repo_root().join("e2e-tests").join("cases").join(path)).expect("the case")
}

/// A case's request through a policy-server entry, judged by the case's expectation.
fn send(server: &PolicyServer, entry: &str, case_path: &str) -> Result<(), String> {
    let c = case(case_path);
    let request = c.admission_request(case_path);
    let review = server.validate(entry, &request)?;
    let expect = c.expect.as_ref().ok_or(format!("{case_path} has no expect"))?;
    judge(expect, &request, &review).map_err(|e| format!("{case_path} through {entry}: {e}"))
}

#[test]
#[ignore = "needs docker-registry, kwctl and policy-server: `make e2e-registry` runs it"]
fn published_modules_load_from_the_registry_and_signatures_are_checked() {
    let tools = match find_tools() {
        Ok(tools) => tools,
        Err(why) => return missing("e2e-registry", &why).unwrap_or_else(|e| panic!("{e}")),
    };
    let dir = TempDir::new("gangwarden-registry").unwrap();
    let registry = Registry::start(&tools.registry, dir.path()).unwrap();
    let sources = dir.path().join("sources.yml");
    std::fs::write(&sources, format!("insecure_sources: [\"127.0.0.1:{}\"]\n", registry.port)).unwrap();
    let sources_arg = sources.to_str().unwrap().to_string();

    // make publish, as a maintainer runs it, into the local registry.
    let published = run(Command::new("make")
        .arg("-C")
        .arg(repo_root())
        .arg("--no-print-directory")
        .arg("publish")
        .arg(format!("REGISTRY={}", registry.prefix()))
        .arg(format!("KWCTL_SOURCES={sources_arg}"))
        .env("KWCTL", &tools.kwctl))
    .unwrap();
    for (name, _) in POLICIES {
        let reference = local_reference(&registry, name);
        // make publish says what it pushes, and kwctl the immutable reference it pushed to.
        let module = format!("gangwarden-{name}-v{}.wasm", gangwarden_harness::release::project_version().unwrap());
        assert!(published.contains(&format!("{module} {reference}\n")), "{published}");
        let repository = reference.trim_start_matches("registry://").rsplit_once(':').unwrap().0;
        assert!(published.contains(&format!("{{\"immutable_ref\":\"{repository}@sha256:")), "{published}");
        // Pulled back and inspected, each module carries its metadata.yml.
        run(Command::new(&tools.kwctl).args(["pull", "--sources-path", &sources_arg, &reference])).unwrap();
        let inspected =
            run(Command::new(&tools.kwctl).args(["inspect", "-o", "yaml", "--sources-path", &sources_arg, &reference]))
                .unwrap();
        let yaml_start = inspected.find("rules:").expect("kwctl inspect prints the metadata");
        let shown_metadata: Value = serde_norway::from_str(&inspected[yaml_start..]).expect("YAML metadata");
        let dir = POLICIES.iter().find(|(n, _)| n == name).unwrap().1;
        let written: Value =
            serde_norway::from_str(&std::fs::read_to_string(repo_root().join(dir).join("metadata.yml")).unwrap())
                .unwrap();
        for key in ["hostCapabilities", "minimumKubewardenVersion", "rules", "mutating"] {
            assert_eq!(shown_metadata[key], written[key], "{name}: kwctl inspect shows another {key}");
        }
        // A set: kwctl keeps it sorted.
        let sorted = |v: &Value| {
            let mut items: Vec<String> = v.as_array().into_iter().flatten().map(Value::to_string).collect();
            items.sort();
            items
        };
        let resources = "contextAwareResources";
        assert_eq!(sorted(&shown_metadata[resources]), sorted(&written[resources]), "{name}: {resources}");
        assert_eq!(shown_metadata["annotations"]["io.kubewarden.policy.severity"], "medium", "{name}");
    }

    // What a release attaches: the annotated modules and this machine's CLI, with their sums.
    let dist = dir.path().join("dist");
    run(Command::new("make")
        .arg("-C")
        .arg(repo_root())
        .arg("--no-print-directory")
        .arg("release-assets")
        .arg(format!("DIST={}", dist.display()))
        .env("KWCTL", &tools.kwctl))
    .unwrap();
    let version = gangwarden_harness::release::project_version().unwrap();
    for (name, _) in POLICIES {
        assert!(dist.join(format!("gangwarden-{name}-v{version}.wasm")).is_file(), "no {name} module in {dist:?}");
    }
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    // A module and its SBOM per policy, and the CLI.
    assert_eq!(sums.lines().count(), 2 * POLICIES.len() + 1, "{sums}");
    assert!(sums.contains(&format!("gangwarden-{version}-")) && sums.contains(".tar.gz"), "{sums}");
    run(Command::new("sha256sum").arg("--check").arg("SHA256SUMS").current_dir(&dist)).unwrap();

    // policy-server loads the deploy/ policies from the registry.
    let manifests: Vec<Value> =
        ["gang", "bundle"].iter().map(|p| read_manifest(&deploy_manifest(p)).unwrap()).collect();
    let to_local = |module: &str| -> Result<String, String> {
        let policy = gangwarden_harness::policy_server::module_policy(module)?;
        Ok(local_reference(&registry, policy))
    };
    let policies = policies_yml_with(&manifests, to_local).unwrap();
    let options = Options { extra_args: vec!["--sources-path".into(), sources_arg.clone()], ..Options::default() };
    {
        let server = PolicyServer::start_with(&policies, None, &options).unwrap();
        for manifest in &manifests {
            let entry = entry_id(manifest).unwrap();
            send(&server, &entry, "gang/podgroup-min-count-zero.yaml").unwrap();
            send(&server, &entry, "gang/podgroup-basic-accepted.yaml").unwrap();
        }
    }

    // A cosign key signs the gang module; kwctl verifies it with that key and no other.
    let keys = dir.path().join("keys");
    let (key_path, public) = sign::generate_key_pair(&keys, b"registry-test").unwrap();
    let (_, other_public) = sign::generate_key_pair(&keys.join("other"), b"other").unwrap();
    let gang = local_reference(&registry, "gang");
    let digest_line = run(Command::new(&tools.kwctl).args(["digest", "--sources-path", &sources_arg, &gang])).unwrap();
    // Its first line (stdout) is `<ref>@sha256:…`; its log follows.
    let digest =
        digest_line.lines().next().and_then(|l| l.split('@').nth(1)).expect("kwctl digest prints <ref>@sha256:…");
    let by_digest = format!("{}@{digest}", gang.trim_start_matches("registry://").rsplit_once(':').unwrap().0);
    let key = sign::read_private_key(&key_path, b"registry-test").unwrap();
    let tag = sign::sign(&key, &by_digest).unwrap();
    assert!(tag.ends_with(&format!("{}.sig", digest.replace(':', "-"))), "{tag}");
    let verify = |public: &Path| {
        let mut cmd = Command::new(&tools.kwctl);
        cmd.args(["verify", "--sources-path", &sources_arg, "-k"]).arg(public);
        if let Some(trust) = &tools.trust_config {
            cmd.arg("--sigstore-trust-config").arg(trust);
        }
        run(cmd.arg(&gang))
    };
    let verified = verify(&public).unwrap();
    assert!(verified.contains("Policy successfully verified"), "{verified}");
    let refused = verify(&other_public).unwrap_err();
    assert!(refused.contains("Image verification failed: missing signatures"), "{refused}");

    // policy-server requiring the key: the signed module is served, an unsigned one refused.
    let config = dir.path().join("verification-config.yml");
    let key_pem = std::fs::read_to_string(&public).unwrap();
    let indented: String = key_pem.lines().map(|l| format!("      {l}\n")).collect();
    std::fs::write(&config, format!("apiVersion: v1\nallOf:\n  - kind: pubKey\n    key: |\n{indented}")).unwrap();
    let verifying = Options {
        extra_args: vec![
            "--sources-path".into(),
            sources_arg.clone(),
            "--verification-path".into(),
            config.to_str().unwrap().into(),
        ],
        ..Options::default()
    };
    let gang_only = policies_yml_with(&manifests[..1], to_local).unwrap();
    {
        let server = PolicyServer::start_with(&gang_only, None, &verifying).unwrap();
        send(&server, "clusterwide-gangwarden-gang", "gang/podgroup-min-count-zero.yaml").unwrap();
    }
    let unsigned = policies_yml_with(&[read_manifest(&deploy_manifest("claims")).unwrap()], to_local).unwrap();
    let err = PolicyServer::start_with(&unsigned, None, &verifying).map(|_| ()).unwrap_err();
    assert!(err.contains("exited") && err.contains("verif"), "policy-server must refuse the unsigned module: {err}");
    let why = err.lines().rev().find(|l| l.contains("verif")).unwrap_or_default();
    println!("policy-server refused the unsigned claims module: {why}");
    println!(
        "e2e-registry: {} modules published to {}, pulled, inspected and served; the signed gang module verified (kwctl and policy-server), another key and an unsigned module refused",
        POLICIES.len(),
        registry.prefix()
    );
}

//! One version, checked: Cargo.toml, every metadata.yml and artifacthub-pkg.yml, the deploy/
//! manifests and the READMEs state the same one (`cargo xtask release-check`).

use gangwarden_harness::release::{
    Mention, check, disagreements, mentions, mentions_in, project_version, versioned_files,
};

#[test]
fn every_file_states_the_project_version() {
    let version = project_version().expect("Cargo.toml");
    let all = mentions().expect("the versioned files");
    assert_eq!(disagreements(&all, &version), Vec::<String>::new());
    // No file is silently unread: each but the policy READMEs states the version somewhere.
    for path in versioned_files() {
        let file = gangwarden_harness::metadata::shown(&path);
        if file.starts_with("policies/") && file.ends_with("README.md") {
            continue;
        }
        assert!(all.iter().any(|m| m.file == file), "{file} states no version this check reads");
    }
    let count = |what: &str| all.iter().filter(|m| m.what == what).count();
    assert_eq!((count("workspace version"), count("policy version"), count("release tag")), (1, 5, 5));
    assert_eq!(count("package version"), 5);
    // 2 manifests (protect, monitor) per policy and 2 members in each group manifest, the five
    // artifacthub images.
    assert!(count("module reference") >= 5 * 2 + 2 * 2 + 5, "{all:?}");
    assert_eq!(count("pre-commit rev"), 1);
}

#[test]
fn a_file_that_disagrees_is_named() {
    let manifest = "spec:\n  module: registry://ghcr.io/gangwarden/policies/gang:v0.2.0\n";
    let found = mentions_in("deploy/gang.yaml", manifest);
    assert_eq!(
        found,
        [Mention { file: "deploy/gang.yaml".into(), what: "module reference".into(), version: "0.2.0".into() }]
    );
    assert_eq!(disagreements(&found, "0.1.0"), ["deploy/gang.yaml: module reference 0.2.0 (not 0.1.0)"]);
    let metadata = "annotations:\n  io.kubewarden.policy.version: 0.1.0\n  com.github.release.tag: v0.1.1\n";
    assert_eq!(
        disagreements(&mentions_in("policies/gang/metadata.yml", metadata), "0.1.0"),
        ["policies/gang/metadata.yml: release tag 0.1.1 (not 0.1.0)"]
    );
    let cargo = "[package]\nversion = \"9.9.9\"\n[workspace.package]\nversion = \"0.1.0\"\n";
    assert_eq!(mentions_in("Cargo.toml", cargo).iter().map(|m| m.version.as_str()).collect::<Vec<_>>(), ["0.1.0"]);
}

#[test]
fn a_tag_of_another_version_is_refused_and_the_plan_names_what_is_published() {
    let version = project_version().unwrap();
    assert_eq!(
        check(Some("9.9.9")).unwrap_err(),
        format!("the tag's version 9.9.9 is not the project's ({version}, Cargo.toml)")
    );
    let plan = check(Some(&version)).unwrap();
    assert!(plan.starts_with(&format!("tag v{version} publishes:\n")), "{plan}");
    assert!(
        plan.contains(&format!("  bundle     registry://ghcr.io/gangwarden/policies/gangwarden:v{version}\n")),
        "{plan}"
    );
    assert!(plan.contains(&format!("  gangwarden-{version}-x86_64-unknown-linux-gnu.tar.gz (the CLI)\n")), "{plan}");
}

/// Artifact Hub's "policy" link downloads the module the release attaches for that package
/// (`make release-modules` names it gangwarden-<policy>-v<version>.wasm).
#[test]
fn each_artifacthub_policy_link_names_the_release_asset() {
    let version = gangwarden_harness::release::project_version().unwrap();
    for (policy, dir) in gangwarden_harness::POLICIES {
        let pkg =
            std::fs::read_to_string(gangwarden_harness::repo_root().join(dir).join("artifacthub-pkg.yml")).unwrap();
        let url = pkg
            .lines()
            .skip_while(|l| *l != "links:")
            .skip_while(|l| *l != "- name: policy")
            .nth(1)
            .and_then(|l| l.trim().strip_prefix("url: "))
            .unwrap_or_else(|| panic!("{dir}/artifacthub-pkg.yml has no policy link"));
        assert_eq!(
            url,
            format!(
                "https://github.com/gangwarden/gangwarden/releases/download/v{version}/gangwarden-{policy}-v{version}.wasm"
            ),
            "{dir}"
        );
    }
}

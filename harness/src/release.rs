//! `cargo xtask release-check`: the one version every published file states, and what a
//! `v<version>` tag publishes. The release workflow runs it first, with the tag's version; the
//! release test holds the repository to it.

use std::path::{Path, PathBuf};

use crate::metadata::{read_metadata, shown};
use crate::{POLICIES, repo_root};

/// Where the CLI's release binaries are built for, named `gangwarden-<version>-<target>`.
pub const CLI_TARGETS: &[&str] = &["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "aarch64-apple-darwin"];

/// One place that states the version: the file, what it is, and the version it states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    pub file: String,
    pub what: String,
    pub version: String,
}

/// The `X.Y.Z` at the start of `text`, if any.
fn leading_version(text: &str) -> Option<&str> {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let v = text[..end].trim_end_matches('.');
    (v.split('.').count() == 3 && v.split('.').all(|p| !p.is_empty())).then_some(v)
}

/// Every `X.Y.Z` that follows `prefix` in `text`.
fn versions_after<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    text.match_indices(prefix).filter_map(move |(i, _)| leading_version(&text[i + prefix.len()..]))
}

/// The version mentions of one file's text (what each kind of file states, where).
pub fn mentions_in(file: &str, text: &str) -> Vec<Mention> {
    let mention = |what: &str, version: &str| Mention { file: file.into(), what: what.into(), version: version.into() };
    let name = Path::new(file).file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let mut out = Vec::new();
    match name {
        "Cargo.toml" => {
            if let Some(section) = text.split("[workspace.package]").nth(1) {
                out.extend(versions_after(section, "\nversion = \"").take(1).map(|v| mention("workspace version", v)));
            }
        }
        "metadata.yml" => {
            out.extend(versions_after(text, "io.kubewarden.policy.version: ").map(|v| mention("policy version", v)));
            out.extend(versions_after(text, "com.github.release.tag: v").map(|v| mention("release tag", v)));
        }
        "artifacthub-pkg.yml" => {
            let top_level = text.lines().filter_map(|l| l.strip_prefix("version: "));
            out.extend(top_level.filter_map(leading_version).map(|v| mention("package version", v)));
        }
        _ => {}
    }
    // Every published module reference, wherever it is written.
    for (i, _) in text.match_indices("ghcr.io/gangwarden/policies/") {
        let reference = text[i..].split_whitespace().next().unwrap_or_default();
        if let Some(v) = reference.split_once(":v").and_then(|(_, tag)| leading_version(tag)) {
            out.push(mention("module reference", v));
        }
    }
    if name == "README.md" {
        out.extend(versions_after(text, "    rev: v").map(|v| mention("pre-commit rev", v)));
        out.extend(versions_after(text, "releases/download/v").map(|v| mention("release download", v)));
    }
    out
}

/// The files that state the version.
pub fn versioned_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("Cargo.toml"), root.join("README.md")];
    for (_, dir) in POLICIES {
        let dir = root.join(dir);
        files.extend(["metadata.yml", "artifacthub-pkg.yml"].map(|f| dir.join(f)));
        if dir != root {
            files.push(dir.join("README.md"));
        }
    }
    let mut deploy: Vec<PathBuf> = std::fs::read_dir(root.join("deploy"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    deploy.sort();
    files.extend(deploy);
    files
}

/// Every version mention in the repository.
pub fn mentions() -> Result<Vec<Mention>, String> {
    let mut out = Vec::new();
    for path in versioned_files() {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        out.extend(mentions_in(&shown(&path), &text));
    }
    Ok(out)
}

/// The mentions that disagree with `version`.
pub fn disagreements(mentions: &[Mention], version: &str) -> Vec<String> {
    mentions
        .iter()
        .filter(|m| m.version != version)
        .map(|m| format!("{}: {} {} (not {version})", m.file, m.what, m.version))
        .collect()
}

/// The workspace version (Cargo.toml), the one every other file must state.
pub fn project_version() -> Result<String, String> {
    let path = repo_root().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    mentions_in("Cargo.toml", &text)
        .into_iter()
        .next()
        .map(|m| m.version)
        .ok_or(format!("{}: no [workspace.package] version", path.display()))
}

/// What a `v<version>` tag publishes, as the release workflow publishes it.
pub fn plan(version: &str) -> Result<String, String> {
    let mut out =
        format!("tag v{version} publishes:\n\npolicy modules (annotated, pushed, signed keyless by cosign):\n");
    for (name, dir) in POLICIES {
        let metadata = read_metadata(dir)?;
        out.push_str(&format!("  {name:<10} registry://{}\n", metadata.image()?));
    }
    out.push_str("\nrelease assets:\n");
    for (name, _) in POLICIES {
        out.push_str(&format!("  gangwarden-{name}-v{version}.wasm (annotated) and its CycloneDX SBOM\n"));
    }
    for target in CLI_TARGETS {
        out.push_str(&format!("  gangwarden-{version}-{target}.tar.gz (the CLI)\n"));
    }
    out.push_str(&format!("  SHA256SUMS\n\nArtifact Hub: each policy's artifacthub-pkg.yml and README as <package>/{version}/ on the artifacthub branch, older versions kept\n"));
    Ok(out)
}

/// Checks that every file states the project's version (and that it is `expected`, when
/// given); returns the plan.
pub fn check(expected: Option<&str>) -> Result<String, String> {
    let version = project_version()?;
    if let Some(expected) = expected.filter(|e| *e != version) {
        return Err(format!("the tag's version {expected} is not the project's ({version}, Cargo.toml)"));
    }
    let wrong = disagreements(&mentions()?, &version);
    if !wrong.is_empty() {
        return Err(format!("files disagree on the version {version}:\n  {}", wrong.join("\n  ")));
    }
    plan(&version)
}

//! `cargo xtask artifacthub <tree>`: adds this release to the tree the release puts on the
//! `artifacthub` branch, the layout Artifact Hub reads from a Kubewarden policies repository:
//!
//! ```text
//! artifacthub-repo.yml            the repository's metadata (owners), written once and kept
//! <package>/<version>/artifacthub-pkg.yml
//! <package>/<version>/README.md
//! ```
//!
//! `<package>` is the `name` of the package's artifacthub-pkg.yml and `<version>` its
//! `version`. Versions already in the tree are kept, so Artifact Hub keeps listing them; a
//! package folder in the earlier layout (the files straight in `<package>/`) is moved into its
//! version's folder first.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A package's name and version, from its artifacthub-pkg.yml.
fn name_and_version(pkg: &Path) -> Result<(String, String), String> {
    let text = std::fs::read_to_string(pkg).map_err(|e| format!("{}: {e}", pkg.display()))?;
    let doc: Value = serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", pkg.display()))?;
    let field = |key: &str| -> Result<String, String> {
        let value = doc[key].as_str().filter(|v| !v.is_empty() && !v.contains(['/', '\\']) && *v != "..");
        value.map(String::from).ok_or(format!("{}: no usable `{key}`", pkg.display()))
    };
    Ok((field("name")?, field("version")?))
}

/// The repository metadata: the owners are the maintainers of the first package.
fn repo_yml(first_pkg: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(first_pkg).map_err(|e| format!("{}: {e}", first_pkg.display()))?;
    let doc: Value = serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", first_pkg.display()))?;
    let out = String::from(
        "# Artifact Hub repository metadata (https://artifacthub.io/docs/topics/repositories/).\n\
         # Add the repositoryID Artifact Hub gives the repository to claim its ownership.\nowners:\n",
    );
    let owners: Vec<String> = doc["maintainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| Some(format!("  - name: {}\n    email: {}\n", m["name"].as_str()?, m["email"].as_str()?)))
        .collect();
    if owners.is_empty() {
        return Err(format!("{}: no maintainers with a name and an email", first_pkg.display()));
    }
    Ok(out + &owners.concat())
}

/// Moves the files of a package folder in the earlier layout into their version's folder.
fn move_unversioned(package_dir: &Path) -> Result<(), String> {
    let pkg = package_dir.join("artifacthub-pkg.yml");
    if !pkg.is_file() {
        return Ok(());
    }
    let (_, version) = name_and_version(&pkg)?;
    let target = package_dir.join(&version);
    std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    for entry in std::fs::read_dir(package_dir).map_err(|e| format!("{}: {e}", package_dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            let to = target.join(path.file_name().unwrap_or_default());
            std::fs::rename(&path, &to).map_err(|e| format!("{} -> {}: {e}", path.display(), to.display()))?;
        }
    }
    Ok(())
}

/// Adds each package (a folder holding artifacthub-pkg.yml and README.md) to `tree` as
/// `<name>/<version>/`, keeping every version already there, and writes artifacthub-repo.yml
/// unless the tree has one. Returns the folders written, relative to `tree`.
pub fn add_release(tree: &Path, packages: &[PathBuf]) -> Result<Vec<String>, String> {
    let first = packages.first().ok_or("no packages")?;
    let repo = tree.join("artifacthub-repo.yml");
    std::fs::create_dir_all(tree).map_err(|e| format!("{}: {e}", tree.display()))?;
    if !repo.exists() {
        std::fs::write(&repo, repo_yml(&first.join("artifacthub-pkg.yml"))?)
            .map_err(|e| format!("{}: {e}", repo.display()))?;
    }
    let mut written = Vec::new();
    for package in packages {
        let (name, version) = name_and_version(&package.join("artifacthub-pkg.yml"))?;
        move_unversioned(&tree.join(&name))?;
        let dir = tree.join(&name).join(&version);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for file in ["artifacthub-pkg.yml", "README.md"] {
            std::fs::copy(package.join(file), dir.join(file))
                .map_err(|e| format!("{} -> {}: {e}", package.join(file).display(), dir.display()))?;
        }
        written.push(format!("{name}/{version}"));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PKG: &str = "version: 0.1.0\nname: gangwarden-gang\nmaintainers:\n- name: gangwarden developers\n  email: gangwarden@users.noreply.github.com\n";

    fn package(root: &Path, version: &str) -> PathBuf {
        let dir = root.join(format!("source-{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("artifacthub-pkg.yml"), PKG.replace("0.1.0", version)).unwrap();
        std::fs::write(dir.join("README.md"), format!("# gang {version}\n")).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_release_adds_its_version_and_keeps_the_others() {
        let root = std::env::temp_dir().join(format!("gangwarden-artifacthub-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let tree = root.join("tree");
        assert_eq!(add_release(&tree, &[package(&root, "0.1.0")]).unwrap(), ["gangwarden-gang/0.1.0"]);
        let repo = std::fs::read_to_string(tree.join("artifacthub-repo.yml")).unwrap();
        assert!(
            repo.ends_with(
                "owners:\n  - name: gangwarden developers\n    email: gangwarden@users.noreply.github.com\n"
            )
        );
        // A repositoryID added by hand stays.
        std::fs::write(tree.join("artifacthub-repo.yml"), format!("repositoryID: x\n{repo}")).unwrap();
        assert_eq!(add_release(&tree, &[package(&root, "0.2.0")]).unwrap(), ["gangwarden-gang/0.2.0"]);
        assert_eq!(entries(&tree), ["artifacthub-repo.yml", "gangwarden-gang"]);
        assert_eq!(entries(&tree.join("gangwarden-gang")), ["0.1.0", "0.2.0"]);
        for version in ["0.1.0", "0.2.0"] {
            let dir = tree.join("gangwarden-gang").join(version);
            assert_eq!(entries(&dir), ["README.md", "artifacthub-pkg.yml"]);
            assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), format!("# gang {version}\n"));
            assert!(
                std::fs::read_to_string(dir.join("artifacthub-pkg.yml"))
                    .unwrap()
                    .starts_with(&format!("version: {version}\n"))
            );
        }
        assert!(std::fs::read_to_string(tree.join("artifacthub-repo.yml")).unwrap().starts_with("repositoryID: x\n"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_package_in_the_earlier_layout_moves_into_its_version_folder() {
        let root = std::env::temp_dir().join(format!("gangwarden-artifacthub-old-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let tree = root.join("tree");
        let old = tree.join("gangwarden-gang");
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("artifacthub-pkg.yml"), PKG.replace("0.1.0", "0.0.9")).unwrap();
        std::fs::write(old.join("README.md"), "# old\n").unwrap();
        add_release(&tree, &[package(&root, "0.1.0")]).unwrap();
        assert_eq!(entries(&old), ["0.0.9", "0.1.0"]);
        assert_eq!(std::fs::read_to_string(old.join("0.0.9/README.md")).unwrap(), "# old\n");
        // A package whose name or version could leave the tree is refused.
        let bad = package(&root, "../x");
        let err = add_release(&tree, &[bad]).unwrap_err();
        assert!(err.ends_with("no usable `version`"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}

//! gangwarden's project automation, run as `cargo xtask <job>` (see `main.rs` for the jobs).
//! The library part holds what the tests also read: the packaging generator (the packaging
//! tests check the files against it) and the playground's data (the fidelity tests replay its
//! states).

pub mod artifacthub;
pub mod packaging;
pub mod playground;
pub mod release;
pub mod sbom;
pub mod sign;

use gangwarden_e2e_tests::repo_root;

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

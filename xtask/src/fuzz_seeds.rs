//! `cargo xtask fuzz-seeds`: writes the fuzzers' seed corpus: every e2e case, corpus document,
//! benchmark request and hostile payload as a `validate` payload (`<dir>/request_bytes/`), and
//! every case's settings (`<dir>/settings/`). `make fuzz` runs it before fuzzing; the seeds are generated,
//! never committed.
//!
//! ```text
//! cargo xtask fuzz-seeds fuzz/corpus
//! ```

use std::path::Path;

use gangwarden_harness::case::{Case, case_files};
use gangwarden_harness::{POLICIES, corpus, payloads};

/// Inputs above this size are left out: the fuzzers run with `-max_len=65536`.
const MAX_SEED: usize = 64 * 1024;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<bool, String> {
    if bytes.len() > MAX_SEED {
        return Ok(false);
    }
    let file: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    std::fs::write(dir.join(file), bytes).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(true)
}

pub fn run(out: &Path) -> Result<(), String> {
    let requests = out.join("request_bytes");
    let settings = out.join("settings");
    for dir in [&requests, &settings] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let (mut n_requests, mut n_settings) = (0, 0);
    for (policy, _) in POLICIES {
        for path in case_files(policy) {
            let case = Case::load(&path)?;
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            let name = format!("{policy}-{stem}");
            // A request the host refuses to build never reaches a policy: no seed.
            if let Ok(payload) = case.payload("seed", &case.settings) {
                n_requests += usize::from(write(&requests, &name, &payload)?);
            }
            let bytes = serde_json::to_vec(&case.settings).map_err(|e| e.to_string())?;
            n_settings += usize::from(write(&settings, &name, &bytes)?);
        }
        for c in corpus::cases(policy)? {
            if let Ok(payload) = c.case.payload("seed", &c.case.settings) {
                n_requests += usize::from(write(&requests, &format!("corpus-{}", c.name), &payload)?);
            }
        }
    }
    for s in payloads::request_scenarios() {
        n_requests += usize::from(write(&requests, &format!("bench-{}", payloads::bench_id(&s.name)), &s.payload)?);
    }
    for h in payloads::hostile_payloads() {
        n_requests += usize::from(write(&requests, &format!("hostile-{}", payloads::bench_id(h.name)), &h.payload)?);
    }
    println!("{n_requests} request seeds, {n_settings} settings seeds in {}", out.display());
    Ok(())
}

//! Times one case file against one built policy in the e2e host:
//!
//! ```text
//! cargo run --release -p gangwarden-e2e-tests --bin bench-case -- \
//!     policies/topology e2e-tests/cases/topology/podgroup-5000-nodes-gang-larger-than-rack.yaml 200
//! ```
//!
//! Each iteration is what one admission request costs the host: a fresh instance of the
//! module, `wapc_init`, the `validate` call and its host calls. Building the case's cluster
//! is done before the clock starts. The answer is checked against the case's `expect` first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gangwarden_e2e_tests::case::{Case, check};
use gangwarden_e2e_tests::host::Policy;
use gangwarden_e2e_tests::repo_root;

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, case_path, rest @ ..] = args.as_slice() else {
        return Err("usage: bench-case <policy dir> <case file> [iterations]".into());
    };
    let iterations: usize = match rest.first() {
        Some(n) => n.parse().map_err(|e| format!("iterations: {e}"))?,
        None => 100,
    };
    let resolve = |p: &str| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { repo_root().join(p) }
    };
    let policy = Policy::load(dir, &resolve(dir))?;
    let case = Case::load(&resolve(case_path))?;
    let payload = case.payload("bench", &case.settings)?;
    let cluster = case.cluster();

    let first = policy.call("validate", &payload, cluster.clone())?;
    if let Some(expect) = &case.expect {
        check(expect, &first)?;
    }
    let mut times: Vec<Duration> = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let cluster = cluster.clone();
        let start = Instant::now();
        policy.call("validate", &payload, cluster)?;
        times.push(start.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    println!(
        "{case_path}: {iterations} runs, {} host call(s): median {:.2} ms, min {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        first.host_calls.len(),
        ms(at(0.5)),
        ms(at(0.0)),
        ms(at(0.9)),
        ms(at(1.0)),
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

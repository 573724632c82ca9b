//! `cargo xtask-host bench-case`: times one case file against one built policy in the e2e host:
//!
//! ```text
//! cargo run --profile bench-host -p xtask --features host -- bench-case \
//!     policies/topology e2e-tests/cases/topology/podgroup-5000-nodes-gang-larger-than-rack.yaml 200
//! ```
//!
//! Each iteration is what one admission request costs the policy as policy-server runs it: a
//! fresh instance of the module, `wapc_init` and the `validate` call, less the time this host
//! spends answering the host calls (policy-server answers them from its cache; this host
//! builds them from the case's JSON), which is printed apart. The answer is checked against
//! the case's `expect` first.

use std::path::PathBuf;
use std::time::Duration;

use gangwarden_harness::case::{Case, check};
use gangwarden_harness::host::Policy;
use gangwarden_harness::repo_root;

pub fn run(dir: &str, case_path: &str, iterations: usize) -> Result<(), String> {
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
    let mut host_times: Vec<Duration> = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let evaluation = policy.call("validate", &payload, cluster.clone())?;
        times.push(evaluation.request_time());
        host_times.push(evaluation.host_time);
    }
    times.sort();
    host_times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    println!(
        "{case_path}: {iterations} runs, {} host call(s): median {:.2} ms, min {:.2} ms, p90 {:.2} ms, max {:.2} ms \
         (the host's answers: median {:.2} ms more)",
        first.host_calls.len(),
        ms(at(0.5)),
        ms(at(0.0)),
        ms(at(0.9)),
        ms(at(1.0)),
        ms(host_times.get(host_times.len() / 2).copied().unwrap_or_default()),
    );
    Ok(())
}

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
//!
//! With `--one-instance` every request is a `validate` call on one instance, as `kwctl bench`
//! times them: the guest's own work, with no instantiation. With `--perf-map` wasmtime names
//! the guest's compiled functions for `perf`, which profiles the guest as it runs in
//! Kubewarden (BENCHMARKS.md, issue 40, has the recipe). The call's own median is printed
//! apart too: on a fresh instance it carries the first call's cold caches, which warm calls
//! on one instance do not.

use std::path::PathBuf;
use std::time::Duration;

use gangwarden_harness::case::{Case, check};
use gangwarden_harness::host::{Evaluation, Policy};
use gangwarden_harness::repo_root;

/// How the requests are made.
#[derive(Clone, Copy, Debug, Default)]
pub struct How {
    /// Every request on one instance (`kwctl bench`), not a fresh one each (policy-server).
    pub one_instance: bool,
    /// wasmtime writes a perf map.
    pub perf_map: bool,
}

pub fn run(dir: &str, case_path: &str, iterations: usize, how: How) -> Result<(), String> {
    let resolve = |p: &str| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { repo_root().join(p) }
    };
    let policy = Policy::load_with(dir, &resolve(dir), how.perf_map)?;
    let case = Case::load(&resolve(case_path))?;
    let payload = case.payload("bench", &case.settings)?;
    let cluster = case.cluster();

    let one = if how.one_instance { Some(policy.instance(cluster.clone())?) } else { None };
    let evaluate = || -> Result<Evaluation, String> {
        match &one {
            Some(instance) => Ok(instance.evaluate("validate", &payload, Duration::ZERO)),
            None => policy.call("validate", &payload, cluster.clone()),
        }
    };
    let first = evaluate()?;
    if let Some(expect) = &case.expect {
        check(expect, &first)?;
    }
    let mut times: Vec<Duration> = Vec::with_capacity(iterations);
    let mut host_times: Vec<Duration> = Vec::with_capacity(iterations);
    let mut call_times: Vec<Duration> = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let evaluation = evaluate()?;
        times.push(evaluation.request_time());
        host_times.push(evaluation.host_time);
        call_times.push(evaluation.call_time.saturating_sub(evaluation.host_time));
    }
    times.sort();
    host_times.sort();
    call_times.sort();
    // In µs: a call on one instance takes tens of them.
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    println!(
        "{case_path}: {iterations} runs{}, {} host call(s): median {:.1} µs, min {:.1} µs, p90 {:.1} µs, max {:.1} µs \
         (the call alone: median {:.1} µs; the host's answers: median {:.1} µs more)",
        if how.one_instance { " on one instance" } else { "" },
        first.host_calls.len(),
        us(at(0.5)),
        us(at(0.0)),
        us(at(0.9)),
        us(at(1.0)),
        us(call_times.get(call_times.len() / 2).copied().unwrap_or_default()),
        us(host_times.get(host_times.len() / 2).copied().unwrap_or_default()),
    );
    Ok(())
}

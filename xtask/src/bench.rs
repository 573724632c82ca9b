//! `cargo xtask bench` (`make bench`): what an admission request costs each built policy in the
//! e2e host, against a trivial policy built from the same SDK (`e2e-tests/baseline-policy`), in
//! one run.
//!
//! ```text
//! cargo xtask bench [--runs N] [--check] [--write BENCHMARKS.md]
//! ```
//!
//! Every timed request is what policy-server does per request: a fresh instance from the
//! pre-compiled module (`rehydrate`), `wapc_init`, the `validate` call and its lookups. Each
//! policy request is paired with a baseline request of the same byte size, run alternately,
//! so both see the same machine. `--check` fails when a CI bar (looser than the target) is
//! exceeded; `--write` replaces the table between the markers in the given file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_e2e_tests::host::Policy;
use gangwarden_e2e_tests::payloads::{self, Scenario};
use gangwarden_e2e_tests::{POLICIES, repo_root};
use serde_json::Value;

const BEGIN: &str = "<!-- bench:begin -->";
const END: &str = "<!-- bench:end -->";

/// Targets from issue 11 (the Node lookup's from issue 25: up to 5,000 Nodes, and 15,000), and
/// the looser bars CI holds every run to.
struct Bars {
    capacity_ratio: (f64, f64),
    single_ratio: (f64, f64),
    bundle_ratio: (f64, f64),
    large_ms: (f64, f64),
    nodes_ms: (f64, f64),
    many_nodes_ms: (f64, f64),
    single_kb: (f64, f64),
    bundle_kb: (f64, f64),
}

const BARS: Bars = Bars {
    capacity_ratio: (payloads::CAPACITY_RATIO, 2.0),
    single_ratio: (1.2, 1.5),
    bundle_ratio: (1.5, 2.0),
    large_ms: (50.0, 200.0),
    nodes_ms: (10.0, 40.0),
    many_nodes_ms: (30.0, 120.0),
    single_kb: (700.0, 900.0),
    // Raised from 1,024 KB for the Kubernetes 1.38 and Kueue queue rules (+~40 KB), after buying
    // back 25 KB (Kubeflow elastic `metrics` kept as JSON, not a typed HPA decoder). The next
    // bytes to buy back are in `track`'s per-type decoders (~250 KB of the bundle, `twiggy`).
    bundle_kb: (850.0, 1040.0),
};

#[derive(Clone, Copy)]
struct Stats {
    median: Duration,
    p99: Duration,
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort();
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    Stats { median: at(0.5), p99: at(0.99) }
}

fn us(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e6)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One verdict line of the report: its target and its CI bar, met or not.
struct Verdicts {
    missed_targets: Vec<String>,
    broken_bars: Vec<String>,
}

impl Verdicts {
    /// "met" / "NOT met", remembering what missed.
    fn judge(&mut self, what: &str, value: f64, (target, bar): (f64, f64), unit: &str) -> String {
        if value > bar {
            self.broken_bars.push(format!("{what}: {value:.2}{unit} > CI bar {bar}{unit}"));
        }
        if value <= target {
            format!("≤ {target}{unit}: met")
        } else {
            self.missed_targets.push(format!("{what}: {value:.2}{unit} > target {target}{unit}"));
            format!("≤ {target}{unit}: **NOT met** (CI bar {bar}{unit})")
        }
    }
}

struct Loaded {
    name: String,
    policy: Policy,
    compile: Duration,
    bytes: u64,
}

fn load(name: &str, dir: &Path) -> Result<Loaded, String> {
    let start = Instant::now();
    let policy = Policy::load(name, dir)?;
    let compile = start.elapsed();
    let bytes = std::fs::metadata(dir.join("policy.wasm")).map_err(|e| e.to_string())?.len();
    Ok(Loaded { name: name.to_string(), policy, compile, bytes })
}

/// One call: the time of the whole request and of the call alone, both without the time the
/// host spent answering lookups (policy-server answers them natively from its cache; this
/// host builds them from JSON). A guest error stops the bench: a benchmark of a failing
/// policy measures nothing.
fn call(
    policy: &Policy,
    op: &str,
    payload: &[u8],
    cluster: &MemoryCluster,
) -> Result<(Duration, Duration, Value), String> {
    let evaluation = policy.call(op, payload, cluster.clone())?;
    let total = evaluation.request_time();
    let answer = evaluation.answer.map_err(|e| format!("{}: {e}", policy.name))?;
    Ok((total, evaluation.call_time.saturating_sub(evaluation.host_time), answer))
}

/// Reads criterion's median for `native/<id>` (`make bench` runs the native bench first).
fn native_median(id: &str) -> Option<Duration> {
    let dir = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo_root().join("target"));
    let file = dir.join("criterion").join("native").join(id).join("new").join("estimates.json");
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    Some(Duration::from_secs_f64(estimates["median"]["point_estimate"].as_f64()? / 1e9))
}

fn native_cell(id: &str) -> String {
    native_median(id).map_or_else(|| "–".to_string(), |d| format!("{:.1}", d.as_secs_f64() * 1e6))
}

/// Runs every row; `Ok(false)` when `check` is set and a CI bar is exceeded.
pub fn run(runs: usize, check: bool, write: Option<PathBuf>) -> Result<bool, String> {
    let root = repo_root();
    let baseline = load("baseline", &root.join("e2e-tests").join("baseline-policy"))?;
    let policies: Vec<Loaded> =
        POLICIES.iter().map(|(name, dir)| load(name, &root.join(dir))).collect::<Result<_, _>>()?;
    let find = |name: &str| policies.iter().find(|p| p.name == name).ok_or(format!("no policy {name}"));
    let mut verdicts = Verdicts { missed_targets: Vec::new(), broken_bars: Vec::new() };
    let mut out = String::new();
    let nobody = MemoryCluster::default();

    if cfg!(debug_assertions) {
        out.push_str(
            "**Host built in the dev profile**: wasmtime's runtime is unoptimised there, which inflates instantiation \
             and compile times (and so the baseline); `make bench` builds an optimised host.\n\n",
        );
    }
    out.push_str(&format!(
        "Measured by `make bench` ({runs} requests per row, each policy request paired with a baseline request of the \
         same size, alternately, in this run). µs per request: a fresh instance (`rehydrate` + `wapc_init`) and the \
         `validate` call, as policy-server does per request; \"call only\" leaves instantiation out. The time the \
         host spends answering lookups is not counted (policy-server answers them natively from its cache), the \
         policy's own handling of the answer is. Native: criterion \
         median of the same check in `gangwarden_core::engine::evaluate` (`cargo bench -p gangwarden-core`).\n\n"
    ));

    // The floor: an instance that does nothing, and one that only parses the payload.
    let small = payloads::baseline_payload(1024);
    let mut instance = Vec::new();
    let mut decode = Vec::new();
    let mut decode_call = Vec::new();
    for _ in 0..runs {
        instance.push(call(&baseline.policy, "protocol_version", b"", &nobody)?.0);
        let (total, call_time, _) = call(&baseline.policy, "decode_only", &small, &nobody)?;
        decode.push(total);
        decode_call.push(call_time);
    }
    let (instance, decode, decode_call) = (stats(instance), stats(decode), stats(decode_call));
    out.push_str("| floor | median µs | p99 µs | call only µs | native µs |\n|---|---|---|---|---|\n");
    out.push_str(&format!(
        "| fresh instance, `protocol_version` | {} | {} | – | – |\n",
        us(instance.median),
        us(instance.p99)
    ));
    out.push_str(&format!(
        "| parse a {} B payload as JSON and accept (baseline `decode_only`) | {} | {} | {} | {} |\n\n",
        small.len(),
        us(decode.median),
        us(decode.p99),
        us(decode_call.median),
        native_cell("floor-decode")
    ));

    out.push_str(
        "| policy, request | bytes | median µs | p99 µs | baseline median µs | ratio | call only µs (baseline) | \
         call-only ratio | native µs | target |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in payloads::request_scenarios() {
        let policy = &find(s.policy)?.policy;
        let base_payload = payloads::baseline_payload(s.payload.len());
        let first = call(policy, "validate", &s.payload, &s.cluster)?.2;
        if first["accepted"] != Value::Bool(true) {
            return Err(format!("{}: the everyday request must be accepted, got {first}", s.name));
        }
        let (mut p, mut pc, mut b, mut bc) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (t, c, _) = call(&baseline.policy, "validate", &base_payload, &nobody)?;
            b.push(t);
            bc.push(c);
            let (t, c, _) = call(policy, "validate", &s.payload, &s.cluster)?;
            p.push(t);
            pc.push(c);
        }
        let (p, pc, b, bc) = (stats(p), stats(pc), stats(b), stats(bc));
        let ratio = p.median.as_secs_f64() / b.median.as_secs_f64();
        let call_ratio = pc.median.as_secs_f64() / bc.median.as_secs_f64();
        let bar = if s.policy == "bundle" { BARS.bundle_ratio } else { BARS.single_ratio };
        let mut verdict = verdicts.judge(&s.name, ratio, bar, "×");
        if payloads::AT_BASELINE_ROWS.contains(&s.name.as_str()) {
            verdict.push_str("; ");
            verdict.push_str(&at_baseline(&mut verdicts, &s.name, ratio));
        }
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {ratio:.2}× | {} ({}) | {call_ratio:.2}× | {} | {verdict} |\n",
            s.name,
            s.payload.len(),
            us(p.median),
            us(p.p99),
            us(b.median),
            us(pc.median),
            us(bc.median),
            native_cell(&native_id(&s.name)),
        ));
    }

    let large_runs = (runs / 60).max(3);
    out.push_str(&format!(
        "\nLarge and deep payloads through the bundle (every rule set), median of {large_runs} requests; the baseline \
         reads a Pod of the same size.\n\n| request | bytes | median ms | max ms | baseline ms | answer | target |\n\
         |---|---|---|---|---|---|---|\n"
    ));
    let mut large: Vec<Scenario> = payloads::large_scenarios();
    large.extend(payloads::hostile_payloads().into_iter().map(|h| Scenario {
        name: format!("hostile: {}", h.name),
        policy: "bundle",
        payload: h.payload,
        cluster: MemoryCluster::new(payloads::everyday_nodes()),
    }));
    for s in &large {
        let policy = &find(s.policy)?.policy;
        let base_payload = payloads::baseline_payload(s.payload.len());
        let (mut p, mut b) = (Vec::new(), Vec::new());
        let mut answer = Value::Null;
        for _ in 0..large_runs {
            b.push(call(&baseline.policy, "validate", &base_payload, &nobody)?.0);
            let (t, _, a) = call(policy, "validate", &s.payload, &s.cluster)?;
            p.push(t);
            answer = a;
        }
        let max = p.iter().max().copied().unwrap_or_default();
        let (p, b) = (stats(p), stats(b));
        // Judged on the median, like every other row: the maximum of a few runs on a shared
        // machine measures its neighbours as much as the policy.
        let verdict = verdicts.judge(&s.name, ms(p.median), BARS.large_ms, " ms");
        out.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {} | {verdict} |\n",
            s.name,
            s.payload.len(),
            ms(p.median),
            ms(max),
            ms(b.median),
            summary(&answer)
        ));
    }

    out.push_str(&format!(
        "\nThe topology Node lookup (median of {large_runs}), answered as policy-server 1.35 answers it: every \
         Node (one list whatever the request asks, no selector), each Node's body pruned to the field masks and its \
         `metadata` whole, managedFields emptied. As above, the time is the policy's: the host building the \
         answer is left out (policy-server's own work on the call is measured in its table below). A row with \
         a ratio is held to {}× of the row above it: the same whole Node list read without the capacity rules.\n\n\
         | request | median ms | host answer bytes | ratio | target |\n|---|---|---|---|---|\n",
        payloads::CAPACITY_RATIO
    ));
    let mut medians: Vec<f64> = Vec::new();
    for row in payloads::node_scenarios() {
        let s = &row.scenario;
        let policy = &find(s.policy)?.policy;
        let mut p = Vec::new();
        let mut answer_bytes = 0;
        for _ in 0..large_runs {
            let evaluation = policy.call("validate", &s.payload, s.cluster.clone())?;
            p.push(evaluation.request_time());
            evaluation.answer.map_err(|e| format!("{}: {e}", s.name))?;
            answer_bytes = evaluation
                .host_calls
                .iter()
                .map(|c| c.response.as_ref().map_or(0, |v| v.to_string().len()))
                .sum::<usize>();
        }
        let p = stats(p);
        medians.push(ms(p.median));
        let bars = if row.nodes <= payloads::NODES_AT_FIRST_TARGET { BARS.nodes_ms } else { BARS.many_nodes_ms };
        let mut verdict = if row.judged {
            verdicts.judge(&s.name, ms(p.median), bars, " ms")
        } else {
            "(for comparison)".to_string()
        };
        let mut ratio = "–".to_string();
        if let Some(of) = row.compared_to.and_then(|i| medians.get(i)).filter(|m| **m > 0.0) {
            let r = ms(p.median) / of;
            ratio = format!("{r:.2}×");
            let judged = verdicts.judge(&format!("{} vs without capacity", s.name), r, BARS.capacity_ratio, "×");
            verdict = if row.judged { format!("{verdict}; {judged}") } else { judged };
        }
        out.push_str(&format!("| {} | {:.1} | {answer_bytes} | {ratio} | {verdict} |\n", s.name, ms(p.median)));
    }

    out.push_str(
        "\nModules (`make policies`: release build, then `wasm-opt -Oz`), compiled by wasmtime (Cranelift) in this \
         run.\n\n| module | KB | compile ms | target |\n|---|---|---|---|\n",
    );
    for loaded in policies.iter().chain([&baseline]) {
        let kb = loaded.bytes as f64 / 1024.0;
        let verdict = match loaded.name.as_str() {
            "baseline" => "(yardstick)".to_string(),
            "bundle" => verdicts.judge("bundle size", kb, BARS.bundle_kb, " KB"),
            name => verdicts.judge(&format!("{name} size"), kb, BARS.single_kb, " KB"),
        };
        out.push_str(&format!("| {} | {kb:.0} | {:.0} | {verdict} |\n", loaded.name, ms(loaded.compile)));
    }

    if verdicts.missed_targets.is_empty() {
        out.push_str("\nEvery target is met.\n");
    } else {
        out.push_str("\nTargets not met in this run:\n\n");
        for m in &verdicts.missed_targets {
            out.push_str(&format!("- {m}\n"));
        }
    }
    println!("{out}");
    if let Some(file) = write {
        xtask::write_between_markers(&file, BEGIN, END, &out)?;
    }
    if check && !verdicts.broken_bars.is_empty() {
        eprintln!("bench-check failed:");
        for b in &verdicts.broken_bars {
            eprintln!("  {b}");
        }
        return Ok(false);
    }
    Ok(true)
}

/// The Job controller's pair (issue 40): at or below the baseline on a payload of the same
/// size, within the noise margin; its CI bar is the bundle's.
fn at_baseline(verdicts: &mut Verdicts, name: &str, ratio: f64) -> String {
    let noise = payloads::AT_BASELINE_NOISE;
    if ratio <= 1.0 + noise {
        format!("≤ baseline (±{:.0}% noise): met", noise * 100.0)
    } else {
        verdicts.missed_targets.push(format!("{name}: {ratio:.2}× > the baseline (±{:.0}% noise)", noise * 100.0));
        format!("≤ baseline (±{:.0}% noise): **NOT met**", noise * 100.0)
    }
}

/// The criterion id of a request scenario: its name in lower case, words joined with `-`.
fn native_id(name: &str) -> String {
    payloads::bench_id(name)
}

/// "accepted", "rejected: <first 60 chars>" or "400: …".
fn summary(answer: &Value) -> String {
    let message = answer["message"].as_str().unwrap_or_default();
    let short: String = message.chars().take(60).collect();
    let short = short.replace('|', "\\|");
    match (answer["accepted"].as_bool(), answer["code"].as_u64()) {
        (Some(true), _) => "accepted".to_string(),
        (_, Some(code)) => format!("{code}: {short}…"),
        _ => format!("rejected ({} B message): {short}…", message.len()),
    }
}

//! `cargo xtask-host bench` (`make bench`): what an admission request costs each built policy in the
//! e2e host, against a trivial policy built from the same SDK (`e2e-tests/baseline-policy`), in
//! one run.
//!
//! ```text
//! cargo xtask-host bench [--runs N] [--check] [--write BENCHMARKS.md]
//! ```
//!
//! Every timed request is what policy-server does per request: a fresh instance from the
//! pre-compiled module (`rehydrate`), `wapc_init`, the `validate` call and its lookups. Each
//! policy request is paired with a baseline request of the same byte size, run alternately,
//! so both see the same machine. `--check` fails when a row is over its CI bar (looser than the target) in
//! two runs in a row; `--write` replaces the table between the markers in the given file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_harness::host::Policy;
use gangwarden_harness::payloads::{self, Scenario};
use gangwarden_harness::{POLICIES, repo_root};
use serde_json::Value;

const BEGIN: &str = "<!-- bench:begin -->";
const END: &str = "<!-- bench:end -->";

/// One measure's target (issue 11's; the Node lookup's from issue 25; the capacity rules' from
/// issue 30) and the noise margin a run may exceed it by: `--check` fails above
/// `value × (1 + margin)`, the CI bar. BENCHMARKS.md's targets block is generated from these
/// (`--write`), and `--check` fails when it says anything else.
#[derive(Clone, Copy)]
struct Target {
    value: f64,
    margin: f64,
    unit: &'static str,
}

impl Target {
    fn bar(&self) -> f64 {
        self.value * (1.0 + self.margin)
    }
}

/// The noise of a ratio to the baseline (medians of the same run, requests alternating) on
/// the optimised host: over six runs of `--runs 300` on the 2-core machine shared with other
/// builds (load average 6 to 13), no row's ratio moved more than ±2.1 % from its mean; on the
/// merged tree of issues 40-42, two runs back to back on a quiet machine moved rows by up to
/// 3.5 % (topology on a TrainJob 1.72× and 1.78×, on the MPIJob 1.26× and 1.27×). The margin is
/// 10 %: a 5 % margin failed `make test` on noise alone.
const RATIO_NOISE: f64 = 0.10;
/// A gang no rack holds against the whole Node list read without the capacity rules: a ratio
/// of two rows' fastest requests, not alternated, so noisier: 1.16–1.27× over three runs.
const CAPACITY_NOISE: f64 = 0.15;
/// Absolute times move with the machine's load, as a ratio does not. The large payloads and
/// the Node lookups are judged on their fastest request (see [`Stats::min`]); over three runs
/// the fastest still moved by up to ±35 % (a run under heavy load took 1.5 times a quiet one).
const TIME_NOISE: f64 = 0.5;

const SINGLE_RATIO: Target = Target { value: 1.2, margin: RATIO_NOISE, unit: "×" };
const BUNDLE_RATIO: Target = Target { value: 1.5, margin: RATIO_NOISE, unit: "×" };
/// The Job controller's Workload and PodGroup (issue 40): at or below the trivial policy on the
/// same request.
const AT_BASELINE: Target = Target { value: 1.0, margin: RATIO_NOISE, unit: "×" };
const CAPACITY_RATIO: Target = Target { value: payloads::CAPACITY_RATIO, margin: CAPACITY_NOISE, unit: "×" };
const LARGE_MS: Target = Target { value: 50.0, margin: TIME_NOISE, unit: " ms" };
const NODES_MS: Target = Target { value: 10.0, margin: TIME_NOISE, unit: " ms" };
const MANY_NODES_MS: Target = Target { value: 30.0, margin: TIME_NOISE, unit: " ms" };
/// Sizes do not vary from run to run: no margin.
const SINGLE_KB: Target = Target { value: 700.0, margin: 0.0, unit: " KB" };
const BUNDLE_KB: Target = Target { value: 850.0, margin: 0.0, unit: " KB" };

/// Targets not met today, by row: each is held to a bar of its own, just above what it
/// measures, so that a regression still fails; BENCHMARKS.md lists them as not met. Remove a
/// row's entry once it meets its target.
const KNOWN_MISSES: &[(&str, f64, &str)] = &[
    // Ratios: the highest of the runs measured plus the noise margin (on the merged tree of
    // issues 40-42: topology 1.78×, the bundle 2.05×, run-policy 1.29×). The queue row: 2.2 to
    // 3.95× over fifteen runs on 6b5e753 (4.11× before its cut). Its labelled Job holds steady
    // (median 550-650 µs), but the median of the unlabelled Job's fresh instance, made just after
    // the labelled one's, moves between about 150 and 260 µs from run to run (120 µs when not
    // alternated), and the ratio follows it. CI measured 3.38× on a81cc60, above the 3.1× this
    // bar was before.
    (
        "topology, TrainJob (runtime lookup)",
        1.95,
        "reads the runtime, then the Node list for the capacity rules, and counts the runtime's pod sets twice",
    ),
    ("bundle, TrainJob (runtime lookup)", 2.25, "the same runtime and Node list reads, and every other rule set"),
    // 1.56× on 00aa1db; 1.60-1.71× on the merged tree of issues 38 and 39's second parts.
    (
        "bundle, Job (gang of 4)",
        1.8,
        "the DeviceClasses listed whole for the claims (every class checked) and the DRA gang analysis (not profiled)",
    ),
    ("run-policy, TrainJob (runtime lookup)", 1.42, "the runtime lookup and decoding its answer (not profiled yet)"),
    (
        "topology, Job labelled for a ClusterQueue in a cohort of 50 vs unlabelled",
        4.4,
        "three more lists (ClusterQueues, LocalQueues, Cohorts) and 50 ClusterQueues read from their JSON text; \
         the unlabelled Job's time, and so the ratio, moves from run to run (2.2-3.95×)",
    ),
    // Module sizes: the size budgets (do not raise them without buying bytes back first), just
    // above what the merged tree of issue 38's and 39's second parts measures after this stop's
    // buy-back (decode errors out of line, -14 KB), less the float formatting k8s-openapi's
    // Quantity and the Node amounts pulled in (-15 KB, 3f27358) and plus the queue check's flavor
    // decoder (+2 KB, 6b5e753): the bundle 975.8 KB, topology 754.0 KB (2.3 of it the DRA
    // supply's fold of many selector slices, which keeps a Node's cost linear). The inlining
    // threshold at 50 would take 55 KB and 40 KB more, but decodes 15-20 % slower and makes the
    // Job controller's pair (issue 40) slower still.
    (
        "topology size",
        755.0,
        "DRA devices for pods and gangs (issue 39, about 50 KB), Volcano's capacity and Queues (issue 38, 32 KB), \
         the typed queue lists (14 KB)",
    ),
    ("bundle size", 976.0, "the capacity, queue, Volcano and DRA rules (issues 30, 42, 38, 39)"),
];

#[derive(Clone, Copy)]
struct Stats {
    /// The fastest request: what the absolute-time rows are judged on (load on a shared
    /// machine only ever adds time, and their medians of a few requests moved by up to ±60 %
    /// between runs, the fastest by up to ±35 %; see [`TIME_NOISE`]).
    min: Duration,
    median: Duration,
    p99: Duration,
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort();
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    Stats { min: at(0.0), median: at(0.5), p99: at(0.99) }
}

fn us(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e6)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The verdicts of a run: each row against its target and its CI bar.
struct Verdicts {
    missed_targets: Vec<String>,
    /// Each row over its bar, and what it measured.
    broken_bars: Vec<(String, String)>,
}

impl Verdicts {
    /// "met" / "NOT met" with the bar it is held to, remembering what missed.
    fn judge(&mut self, what: &str, value: f64, target: Target) -> String {
        let unit = target.unit;
        let known = KNOWN_MISSES.iter().find(|(row, _, _)| *row == what);
        let bar = known.map_or(target.bar(), |(_, bar, _)| *bar);
        let bar_text = format!("{}{unit}", shown_bar(bar));
        if value > bar {
            self.broken_bars.push((what.to_string(), format!("{what}: {value:.2}{unit} > CI bar {bar_text}")));
        }
        let goal = format!("≤ {}{unit}", target.value);
        match known {
            _ if value <= target.value => format!("{goal}: met (bar {bar_text})"),
            None => {
                self.missed_targets.push(format!("{what}: {value:.2}{unit} > target {}{unit}", target.value));
                format!("{goal}: **NOT met**, within the noise margin (bar {bar_text})")
            }
            Some((_, _, why)) => {
                self.missed_targets.push(format!(
                    "{what}: {value:.2}{unit} > target {}{unit} (known: {why}; held to {bar_text})",
                    target.value
                ));
                format!("{goal}: **NOT met**, known (held to {bar_text})")
            }
        }
    }
}

/// A bar as the tables print it: at most three decimals, no trailing zeros.
fn shown_bar(x: f64) -> String {
    let text = format!("{x:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

const TARGETS_BEGIN: &str = "<!-- bench-targets:begin -->";
const TARGETS_END: &str = "<!-- bench-targets:end -->";

/// The targets and CI bars as BENCHMARKS.md states them (between the bench-targets markers).
fn targets_block() -> String {
    let mut out = String::from(
        "Targets and CI bars, as `xtask/src/bench.rs` holds them (`make bench-check`, part of `make test`, fails \
         when a row is above its bar in two runs: a row above it once is measured again). A bar is the target plus the noise margin measured on this machine; a target not met today is \
         held to a bar of its own just above what it measures.\n\n| measure | target | noise margin | CI bar |\n\
         |---|---|---|---|\n",
    );
    let rows = [
        ("a single policy, per request, against the baseline", SINGLE_RATIO),
        ("the bundle, per request, against the baseline", BUNDLE_RATIO),
        ("the Job controller's Workload and PodGroup through the bundle, against the baseline", AT_BASELINE),
        ("a large or hostile payload through the bundle (fastest request)", LARGE_MS),
        ("the topology Node lookup, up to 5,000 Nodes (fastest request)", NODES_MS),
        ("the topology Node lookup, 15,000 Nodes (fastest request)", MANY_NODES_MS),
        ("a gang no rack holds, against the same Node list without the capacity rules", CAPACITY_RATIO),
        ("a Job in a Kueue queue (cohort of 50 ClusterQueues), against the same Job unlabelled", QUEUE_RATIO),
        ("a single policy's module", SINGLE_KB),
        ("the bundle's module", BUNDLE_KB),
    ];
    for (what, t) in rows {
        out.push_str(&format!(
            "| {what} | ≤ {}{} | {:.0} % | {}{} |\n",
            t.value,
            t.unit,
            t.margin * 100.0,
            shown_bar(t.bar()),
            t.unit
        ));
    }
    out.push_str("\nNot met today, each held to its own bar until it is:\n\n| row | CI bar | why |\n|---|---|---|\n");
    for (row, bar, why) in KNOWN_MISSES {
        let unit = if row.ends_with(" size") { " KB" } else { "×" };
        out.push_str(&format!("| {row} | {}{unit} | {why} |\n", shown_bar(*bar)));
    }
    out
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

/// Runs every row; `Ok(false)` when `check` is set and a CI bar is exceeded. A row over its bar
/// is measured again (the whole run, so it again alternates with its baseline): a machine shared
/// with other builds put a row 3 % over its bar once in CI, and load rarely lands on the same
/// row twice, while a real regression does. Only a row over its bar in both runs fails.
pub fn run(runs: usize, check: bool, write: Option<PathBuf>) -> Result<bool, String> {
    let first = measure(runs, check, write.as_deref())?;
    if first.is_empty() {
        return Ok(true);
    }
    eprintln!("over a CI bar in this run (measuring every row again; a row fails when it is over its bar twice):");
    for (_, message) in &first {
        eprintln!("  {message}");
    }
    let second = measure(runs, check, write.as_deref())?;
    let twice: Vec<&String> =
        second.iter().filter(|(row, _)| first.iter().any(|(r, _)| r == row)).map(|(_, message)| message).collect();
    if twice.is_empty() {
        eprintln!("bench-check passed: no row was over its bar in both runs");
        return Ok(true);
    }
    eprintln!("bench-check failed (over the bar in both runs; the second run's figures):");
    for message in twice {
        eprintln!("  {message}");
    }
    Ok(false)
}

/// One run of every row: what was over its CI bar when `check` is set, by row.
fn measure(runs: usize, check: bool, write: Option<&Path>) -> Result<Vec<(String, String)>, String> {
    let root = repo_root();
    // The bars hold the optimised host's ratios: the dev profile's slower instantiation
    // dilutes every ratio, so a check there would pass what the optimised host fails.
    if check && cfg!(debug_assertions) {
        return Err(
            "--check judges the optimised host: build xtask with `--profile bench-host` (make bench-check does)".into(),
        );
    }
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
         same size, alternately, in this run: a Pod, except for the Job controller's pair, whose very request the \
         baseline reads as well). µs per request: a fresh instance (`rehydrate` + `wapc_init`) and the \
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
        let base_payload = payloads::baseline_request(&s);
        let first = call(policy, "validate", &s.payload, &s.cluster)?.2;
        if first["accepted"] != Value::Bool(true) {
            return Err(format!("{}: the everyday request must be accepted, got {first}", s.name));
        }
        // A baseline that rejects its request (a kind it cannot read) would be timed on less work.
        let base_first = call(&baseline.policy, "validate", &base_payload, &nobody)?.2;
        if base_first["accepted"] != Value::Bool(true) {
            return Err(format!("{}: the baseline must accept its request, got {base_first}", s.name));
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
        let target = if s.policy == "bundle" { BUNDLE_RATIO } else { SINGLE_RATIO };
        let mut verdict = verdicts.judge(&s.name, ratio, target);
        if payloads::AT_BASELINE_ROWS.contains(&s.name.as_str()) {
            verdict.push_str("; ");
            verdict.push_str(&verdicts.judge(&format!("{} against the baseline", s.name), ratio, AT_BASELINE));
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

    out.push_str(&queue_rows(&find("topology")?.policy, runs, &mut verdicts)?);

    let large_runs = (runs / 60).max(3);
    out.push_str(&format!(
        "\nLarge and deep payloads through the bundle (every rule set), {large_runs} requests each; the baseline \
         reads a Pod of the same size. Judged on the fastest request: load on the shared machine only adds time, \
         and medians of a few requests moved by up to ±60 % between runs.\n\n| request | bytes | fastest ms | \
         median ms | max ms | baseline ms | answer | target |\n|---|---|---|---|---|---|---|---|\n"
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
        let verdict = verdicts.judge(&s.name, ms(p.min), LARGE_MS);
        out.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {verdict} |\n",
            s.name,
            s.payload.len(),
            ms(p.min),
            ms(p.median),
            ms(max),
            ms(b.median),
            summary(&answer)
        ));
    }

    out.push_str(&format!(
        "\nThe topology Node lookup ({large_runs} requests each, judged on the fastest as above), answered as policy-server 1.35 answers it: every \
         Node (one list whatever the request asks, no selector), each Node's body pruned to the field masks and its \
         `metadata` whole, managedFields emptied. As above, the time is the policy's: the host building the \
         answer is left out (policy-server's own work on the call is measured in its table below). A row with \
         a ratio is held to {}× of the row above it: the same whole Node list read without the capacity rules.\n\n\
         | request | fastest ms | median ms | host answer bytes | ratio | target |\n|---|---|---|---|---|---|\n",
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
        medians.push(ms(p.min));
        let target = if row.nodes <= payloads::NODES_AT_FIRST_TARGET { NODES_MS } else { MANY_NODES_MS };
        let mut verdict =
            if row.judged { verdicts.judge(&s.name, ms(p.min), target) } else { "(for comparison)".to_string() };
        let mut ratio = "–".to_string();
        if let Some(of) = row.compared_to.and_then(|i| medians.get(i)).filter(|m| **m > 0.0) {
            let r = ms(p.min) / of;
            ratio = format!("{r:.2}×");
            let judged = verdicts.judge(&format!("{} vs without capacity", s.name), r, CAPACITY_RATIO);
            verdict = if row.judged { format!("{verdict}; {judged}") } else { judged };
        }
        out.push_str(&format!(
            "| {} | {:.1} | {:.1} | {answer_bytes} | {ratio} | {verdict} |\n",
            s.name,
            ms(p.min),
            ms(p.median)
        ));
    }

    out.push_str(
        "\nModules (`make policies`: release build, then `wasm-opt -Oz`), compiled by wasmtime (Cranelift) in this \
         run.\n\n| module | KB | compile ms | target |\n|---|---|---|---|\n",
    );
    for loaded in policies.iter().chain([&baseline]) {
        let kb = loaded.bytes as f64 / 1024.0;
        let verdict = match loaded.name.as_str() {
            "baseline" => "(yardstick)".to_string(),
            "bundle" => verdicts.judge("bundle size", kb, BUNDLE_KB),
            name => verdicts.judge(&format!("{name} size"), kb, SINGLE_KB),
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
        gangwarden_harness::write_between_markers(file, BEGIN, END, &out)?;
        gangwarden_harness::write_between_markers(file, TARGETS_BEGIN, TARGETS_END, &targets_block())?;
    }
    if check {
        // The targets BENCHMARKS.md states are the ones checked.
        let file = root.join("BENCHMARKS.md");
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let stated = text.split(TARGETS_BEGIN).nth(1).and_then(|t| t.split(TARGETS_END).next());
        if stated != Some(&format!("\n{}", targets_block())) {
            verdicts.broken_bars.push((
                "BENCHMARKS.md's targets block".into(),
                "BENCHMARKS.md's targets block is not what xtask/src/bench.rs holds: run `make bench` (or \
                 `xtask bench --write BENCHMARKS.md`)"
                    .into(),
            ));
        }
    }
    Ok(if check { verdicts.broken_bars } else { Vec::new() })
}

/// What the queue check may add to the same Job unlabelled (issue 42): a target, not met yet
/// (three more lists, and 50 ClusterQueues read from JSON, about 0.46 ms; see [`KNOWN_MISSES`]).
const QUEUE_RATIO: Target = Target { value: 1.5, margin: RATIO_NOISE, unit: "×" };

/// The queue rows: the labelled Job and the same Job unlabelled, run alternately, the ratio of
/// their medians held to [`QUEUE_RATIO`].
fn queue_rows(policy: &Policy, runs: usize, verdicts: &mut Verdicts) -> Result<String, String> {
    let (labelled, unlabelled) = payloads::queue_scenarios();
    let kueue = compare_rows(
        policy,
        runs,
        verdicts,
        (&labelled, &unlabelled, "vs unlabelled"),
        "\nThe queue check (setting `queueCheck`, on by default): a Job labelled `kueue.x-k8s.io/queue-name` costs the \
         lists of ClusterQueues, LocalQueues and (its ClusterQueue being in a cohort) Cohorts, and Kueue's maximum \
         capacity over the cohort; against the same Job unlabelled, same cluster",
    )?;
    let (on, off) = payloads::volcano_queue_scenarios();
    let volcano = compare_rows(
        policy,
        runs,
        verdicts,
        (&on, &off, "vs queueCheck off"),
        "\nVolcano's Queues (the same setting): a vcjob costs one list of every Volcano Queue (state and capability) and \
         the least minResources of its gang; against the same vcjob with `queueCheck: off`, same cluster",
    )?;
    Ok(kueue + &volcano)
}

/// Two requests run alternately, the ratio of their medians held to [`QUEUE_RATIO`].
fn compare_rows(
    policy: &Policy,
    runs: usize,
    verdicts: &mut Verdicts,
    (labelled, unlabelled, versus): (&Scenario, &Scenario, &str),
    intro: &str,
) -> Result<String, String> {
    for s in [&labelled, &unlabelled] {
        let answer = call(policy, "validate", &s.payload, &s.cluster)?.2;
        if answer["accepted"] != Value::Bool(true) || answer["warnings"].as_array().is_some_and(|w| !w.is_empty()) {
            return Err(format!("{}: must be accepted without a word, got {answer}", s.name));
        }
    }
    let lookups = |s: &Scenario| policy.call("validate", &s.payload, s.cluster.clone()).map(|e| e.host_calls.len());
    let (mut l, mut u) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        l.push(call(policy, "validate", &labelled.payload, &labelled.cluster)?.0);
        u.push(call(policy, "validate", &unlabelled.payload, &unlabelled.cluster)?.0);
    }
    let (l, u) = (stats(l), stats(u));
    let ratio = l.median.as_secs_f64() / u.median.as_secs_f64();
    let verdict = verdicts.judge(&format!("{} {versus}", labelled.name), ratio, QUEUE_RATIO);
    Ok(format!(
        "{intro}, run alternately ({runs} each). Target {}× of the second.\n\n\
         | request | lookups | median µs | p99 µs | ratio | target |\n|---|---|---|---|---|---|\n\
         | {} | {} | {} | {} | {ratio:.2}× | {verdict} |\n| {} | {} | {} | {} | – | (for comparison) |\n",
        QUEUE_RATIO.value,
        labelled.name,
        lookups(labelled)?,
        us(l.median),
        us(l.p99),
        unlabelled.name,
        lookups(unlabelled)?,
        us(u.median),
        us(u.p99),
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The bench checks this too, but only after minutes of measuring: a bar changed here
    /// without `make bench` fails `make unit` at once.
    #[test]
    fn benchmarks_md_states_the_targets_held_here() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../BENCHMARKS.md");
        let text = std::fs::read_to_string(&file).unwrap();
        let stated = text.split(TARGETS_BEGIN).nth(1).and_then(|t| t.split(TARGETS_END).next());
        assert_eq!(
            stated,
            Some(format!("\n{}", targets_block()).as_str()),
            "run `make bench` (or `xtask bench --write BENCHMARKS.md`)"
        );
    }
}

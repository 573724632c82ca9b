//! The Job controller's pair (issue 40) under `kwctl bench`, part of `policy-server-bench`:
//! the cost of one `validate` evaluation in Kubewarden's own policy-evaluator, with no HTTP
//! server or worker pool around it, against the trivial baseline on the same request.

use std::path::Path;
use std::process::Command;

use gangwarden_harness::payloads;
use serde_json::Value;

/// Each module and its baseline are run this many times, alternately (the order swaps); the
/// row shows the median run. The baseline's median moved by 9 % between rows of one run with 2
/// runs averaged, as much as a cut the table is meant to show.
const ROUNDS: usize = 3;

/// The middle value of an odd number of runs.
fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

/// One `kwctl bench` run: the median of the `validate` samples, in µs.
fn validate_median(kwctl: &Path, module: &Path, request: &Path, settings: &Value) -> Result<f64, String> {
    let output = Command::new(kwctl)
        .args(["bench", "--warm-up-time", "1", "--measurement-time", "3", "--settings-json"])
        .arg(settings.to_string())
        .arg("--request-path")
        .arg(request)
        .arg(module)
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| format!("{}: {e}", kwctl.display()))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("kwctl bench {}: {}", module.display(), text.trim()));
    }
    sample_median(&text)
        .ok_or_else(|| format!("kwctl bench {}: no validate median in: {}", module.display(), text.trim()))
}

/// `med = 21.75µs` of the `validate` samples' line, in µs (colour codes and all).
fn sample_median(text: &str) -> Option<f64> {
    // `validate [N iterations in T with 100.0 samples]:`, then the line with the statistics.
    let mut lines = text
        .lines()
        .skip_while(|l| !(l.contains("validate") && !l.contains("validate_settings") && l.contains("samples]")));
    lines.next()?;
    let after = lines.next()?.split("med = ").nth(1)?;
    let end = after.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let value: f64 = after[..end].parse().ok()?;
    let unit = after[end..].trim_start_matches(|c: char| c == '\u{1b}' || c == '[' || c == ';' || c.is_ascii_digit());
    let scale = [("ns", 0.001), ("µs", 1.0), ("us", 1.0), ("ms", 1000.0), ("s", 1_000_000.0)]
        .into_iter()
        .find(|(u, _)| unit.starts_with(u))?
        .1;
    Some(value * scale)
}

/// The at-baseline rows under `kwctl bench`, as BENCHMARKS.md shows them.
pub fn at_baseline_table(kwctl: &Path, bundle: &Path, baseline_module: &Path, tmp: &Path) -> Result<String, String> {
    let mut out = format!(
        "\nThe same rows under `kwctl bench` (kwctl 1.35: 1 s of warm-up, 3 s of samples; the bundle and the \
         baseline on the same request {ROUNDS} times each, alternately; medians of the samples, the median run). This is one \
         `validate` evaluation in Kubewarden's policy-evaluator, without policy-server's HTTP server and workers: \
         the policy's own work weighs more here than under load.\n\n\
         | row | bytes | bundle µs | baseline µs | ratio | target: at or below the baseline, within {:.0}% |\n|---|---|---|---|---|---|\n",
        payloads::AT_BASELINE_NOISE * 100.0
    );
    let scenarios = payloads::request_scenarios();
    for (i, s) in scenarios.iter().filter(|s| payloads::AT_BASELINE_ROWS.contains(&s.name.as_str())).enumerate() {
        let payload: Value = serde_json::from_slice(&s.payload).map_err(|e| format!("{}: {e}", s.name))?;
        let base: Value = serde_json::from_slice(&payloads::baseline_request(s)).map_err(|e| e.to_string())?;
        let (request, base_request) =
            (tmp.join(format!("kwctl-bench-{i}.json")), tmp.join(format!("kwctl-bench-{i}-baseline.json")));
        let write = |file: &Path, value: &Value| {
            std::fs::write(file, value.to_string()).map_err(|e| format!("{}: {e}", file.display()))
        };
        write(&request, &payload["request"])?;
        write(&base_request, &base["request"])?;
        let (mut policy, mut baseline) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
        for round in 0..ROUNDS {
            let policy_run = || validate_median(kwctl, bundle, &request, &payload["settings"]);
            let baseline_run = || validate_median(kwctl, baseline_module, &base_request, &base["settings"]);
            let (p, b) = if round % 2 == 0 {
                let p = policy_run()?;
                (p, baseline_run()?)
            } else {
                let b = baseline_run()?;
                (policy_run()?, b)
            };
            policy.push(p);
            baseline.push(b);
        }
        let (policy, baseline) = (median(policy), median(baseline));
        eprintln!("kwctl bench, {}: {policy:.1} µs (baseline {baseline:.1})", s.name);
        let ratio = policy / baseline;
        out.push_str(&format!(
            "| {} | {} | {policy:.1} | {baseline:.1} | {ratio:.2}× | {} |\n",
            s.name.trim_start_matches("bundle, "),
            s.payload.len(),
            if ratio <= 1.0 + payloads::AT_BASELINE_NOISE { "met" } else { "**NOT met**" }
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_its_median_run() {
        assert_eq!(median(vec![25.3, 31.0, 24.9]), 25.3);
        assert_eq!(median(vec![18.7]), 18.7);
    }

    #[test]
    fn reads_the_validate_median_whatever_its_unit() {
        // As kwctl 1.35 prints it (colour codes included).
        let out = "\u{1b}[1;32mvalidate_settings\u{1b}[0m warming up for \u{1b}[0;97m1.00s\u{1b}[0m\n\
                   \u{1b}[1;32mvalidate_settings\u{1b}[0m [914.0 thousand iterations in 2.77s with 100.0 samples]:\n\
                   \telapsed\t[min mean max]: (sample data: med = 3.03µs, var = 9.80µs²)\n\
                   \u{1b}[1;32mvalidate\u{1b}[0m warming up for \u{1b}[0;97m1.00s\u{1b}[0m\n\
                   \u{1b}[1;32mvalidate\u{1b}[0m mean warm up execution time \u{1b}[0;97m21.81µs\u{1b}[0m\n\
                   \u{1b}[1;32mvalidate\u{1b}[0m [131.3 thousand iterations in 3.09s with 100.0 samples]:\n\
                   \telapsed\t[min mean max]: (sample data: med = 23.50µs, var = 171.45µs²)\n";
        assert_eq!(sample_median(out), Some(23.5));
        assert_eq!(sample_median(&out.replace("23.50µs", "1.25ms")), Some(1250.0));
        assert_eq!(sample_median(&out.replace("23.50µs", "900.00ns")), Some(0.9));
        assert_eq!(sample_median("validate_settings med = 3.03µs"), None);
    }
}

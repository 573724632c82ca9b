//! `make e2e-kwctl`: the e2e cases through `kwctl run`, for machines that have kwctl.
//!
//! `kwctl-cases export DIR` writes every case as kwctl takes it (see `gangwarden_harness::kwctl`);
//! `kwctl-cases run DIR` annotates each policy (failing on any warning `kwctl annotate` prints,
//! such as a host capability used but not declared), runs kwctl on every exported case with
//! exactly the host capabilities the policy's `metadata.yml` declares, and checks kwctl's
//! answer against the case's expectations. kwctl is `$KWCTL`, or `kwctl` on PATH; without it,
//! `run` says it skipped, or fails when `CI` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use gangwarden_harness::case::Expect;
use gangwarden_harness::kwctl::{KwctlOutput, export, judge};
use gangwarden_harness::policy_server::needed_tool;
use gangwarden_harness::{POLICIES, repo_root};
use serde_json::Value;

/// What kwctl is told the policy may do, from its `metadata.yml`.
struct Grants {
    context_aware: bool,
    /// `hostCapabilities`; absent means none (policy-server's reading, not kwctl's default).
    capabilities: Vec<String>,
}

fn run_case(kwctl: &Path, annotated: &Path, grants: &Grants, case_dir: &Path) -> Result<(), String> {
    let read = |f: &str| -> Result<Value, String> {
        serde_json::from_str(&std::fs::read_to_string(case_dir.join(f)).map_err(|e| format!("{f}: {e}"))?)
            .map_err(|e| format!("{f}: {e}"))
    };
    let expect: Expect = serde_json::from_value(read("expect.json")?).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(kwctl);
    cmd.arg("run");
    // The option takes any number of values, so the next option ends the list (none: none).
    cmd.arg("--allowed-host-capabilities").args(&grants.capabilities);
    cmd.arg("--request-path").arg(case_dir.join("request.json"));
    cmd.arg("--settings-path").arg(case_dir.join("settings.json"));
    if grants.context_aware {
        cmd.arg("--allow-context-aware")
            .arg("--replay-host-capabilities-interactions")
            .arg(case_dir.join("session.yml"));
    }
    let output = cmd.arg(annotated).output().map_err(|e| format!("cannot run kwctl: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    judge(
        &expect,
        &read("request.json")?,
        &KwctlOutput { success: output.status.success(), stdout: &output.stdout, stderr: &stderr },
    )
}

fn run(out: &Path) -> Result<(), String> {
    let Some(kwctl) = needed_tool("e2e-kwctl", "KWCTL", "kwctl")? else { return Ok(()) };
    let root = repo_root();
    let (mut passed, mut failed) = (0, 0);
    for (name, dir) in POLICIES {
        let dir = root.join(dir);
        let annotated = out.join(name).join("annotated-policy.wasm");
        let output = Command::new(&kwctl)
            .arg("annotate")
            .arg("-m")
            .arg(dir.join("metadata.yml"))
            .arg("-u")
            .arg(dir.join("README.md"))
            .arg("-o")
            .arg(&annotated)
            .arg(dir.join("policy.wasm"))
            .output()
            .map_err(|e| format!("cannot run kwctl: {e}"))?;
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        if !output.status.success() || said.contains("WARN") {
            return Err(format!("kwctl annotate {name}: {said}"));
        }
        let metadata: Value =
            serde_norway::from_str(&std::fs::read_to_string(dir.join("metadata.yml")).map_err(|e| e.to_string())?)
                .map_err(|e| format!("{name} metadata.yml: {e}"))?;
        let grants = Grants {
            context_aware: metadata["contextAwareResources"].as_array().is_some_and(|r| !r.is_empty()),
            capabilities: metadata["hostCapabilities"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str().map(String::from))
                .collect(),
        };
        let mut case_dirs: Vec<PathBuf> = std::fs::read_dir(out.join(name))
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        case_dirs.sort();
        for case_dir in case_dirs {
            let label = format!("{name}::{}", case_dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
            match run_case(&kwctl, &annotated, &grants, &case_dir) {
                Ok(()) => passed += 1,
                Err(e) => {
                    failed += 1;
                    println!("FAILED {label}\n{e}\n");
                }
            }
        }
    }
    println!("kwctl: {passed} passed, {failed} failed");
    if failed == 0 { Ok(()) } else { Err(format!("{failed} kwctl cases failed")) }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [cmd, dir] if cmd == "export" => export(Path::new(dir)).map(|(exported, skipped)| {
            println!("exported {exported} cases to {dir} ({skipped} raw-payload cases run only in the waPC host)");
        }),
        [cmd, dir] if cmd == "run" => run(Path::new(dir)),
        _ => Err("usage: kwctl-cases export DIR | kwctl-cases run DIR".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kwctl-cases: {e}");
            ExitCode::FAILURE
        }
    }
}

//! `make e2e-kwctl`: the e2e cases through `kwctl run`, for machines that have kwctl.
//!
//! `kwctl-cases export DIR` writes, for every policy and case, `request.json` (the
//! AdmissionRequest), `settings.json`, `expect.json` and `session.yml`: a kwctl replay session
//! made of the lookups the policy makes in the project's own host, answered from the case's
//! cluster objects. `kwctl-cases run DIR` annotates each policy, runs kwctl on every exported
//! case and checks kwctl's AdmissionResponse against the case's expectations.
//!
//! Cases with a `rawPayload` are not exported: `kwctl run` only takes an AdmissionRequest.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use base64::Engine as _;
use gangwarden_e2e_tests::case::{Case, Expect, case_files, check};
use gangwarden_e2e_tests::host::{Evaluation, HostCall, Policy};
use gangwarden_e2e_tests::{POLICIES, corpus, repo_root};
use serde_json::{Value, json};

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// One recorded lookup as a kwctl replay exchange.
fn exchange(call: &HostCall) -> Value {
    let tag = match call.operation.as_str() {
        "get_resource" => "KubernetesGetResource",
        "list_resources_by_namespace" => "KubernetesListResourceNamespace",
        _ => "KubernetesListResourceAll",
    };
    let fields = serde_norway::to_string(&call.request).unwrap_or_default();
    let response = match &call.response {
        Ok(payload) => json!({"type": "Success", "payload": payload.to_string()}),
        Err(message) => json!({"type": "Error", "message": message}),
    };
    json!({"type": "Exchange", "request": format!("!{tag}\n{fields}"), "response": response})
}

fn all_cases(policy: &str) -> Result<Vec<(String, Case)>, String> {
    let mut cases = Vec::new();
    for path in case_files(policy) {
        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        cases.push((name, Case::load(&path)?));
    }
    for c in corpus::cases(policy)? {
        cases.push((format!("corpus-{}", c.name.replace(['/', '#'], "-")), c.case));
    }
    Ok(cases)
}

fn export(out: &Path) -> Result<(), String> {
    let root = repo_root();
    let (mut exported, mut skipped) = (0, 0);
    for (name, dir) in POLICIES {
        let policy = Policy::load(name, &root.join(dir))?;
        for (case_name, case) in all_cases(name)? {
            if case.raw_payload.is_some() {
                skipped += 1;
                continue;
            }
            let case_dir = out.join(name).join(&case_name);
            std::fs::create_dir_all(&case_dir).map_err(|e| format!("{}: {e}", case_dir.display()))?;
            let evaluation = policy.call("validate", &case.payload(&case_name, &case.settings), case.cluster())?;
            let session: Vec<Value> = evaluation.host_calls.iter().map(exchange).collect();
            let to_json = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
            write(&case_dir.join("request.json"), &to_json(&case.admission_request(&case_name)))?;
            let settings = if case.settings.is_null() { json!({}) } else { case.settings.clone() };
            write(&case_dir.join("settings.json"), &to_json(&settings))?;
            write(&case_dir.join("session.yml"), &serde_norway::to_string(&session).map_err(|e| e.to_string())?)?;
            let expect = serde_json::to_value(case.expect.as_ref().ok_or(format!("{case_name}: no expect"))?)
                .map_err(|e| e.to_string())?;
            write(&case_dir.join("expect.json"), &to_json(&expect))?;
            exported += 1;
        }
    }
    println!("exported {exported} cases to {} ({skipped} raw-payload cases run only in the waPC host)", out.display());
    Ok(())
}

/// kwctl's AdmissionResponse in the shape the case checker reads.
fn answer_from_kwctl(response: &Value, request: &Value) -> Result<Value, String> {
    let mutated = match response["patch"].as_str() {
        None => Value::Null,
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).map_err(|e| format!("patch: {e}"))?;
            let patch: json_patch::Patch = serde_json::from_slice(&bytes).map_err(|e| format!("patch: {e}"))?;
            let mut object = request["object"].clone();
            json_patch::patch(&mut object, &patch).map_err(|e| format!("patch: {e}"))?;
            object
        }
    };
    Ok(json!({
        "accepted": response["allowed"],
        "message": response["status"]["message"],
        "code": response["status"]["code"],
        "warnings": response["warnings"],
        "mutated_object": mutated,
    }))
}

fn run_case(annotated: &Path, context_aware: bool, case_dir: &Path) -> Result<(), String> {
    let read = |f: &str| -> Result<Value, String> {
        serde_json::from_str(&std::fs::read_to_string(case_dir.join(f)).map_err(|e| format!("{f}: {e}"))?)
            .map_err(|e| format!("{f}: {e}"))
    };
    let mut expect: Expect = serde_json::from_value(read("expect.json")?).map_err(|e| e.to_string())?;
    expect.host_calls = None; // kwctl replays exactly the recorded lookups or fails
    let mut cmd = Command::new("kwctl");
    cmd.arg("run").arg("--request-path").arg(case_dir.join("request.json"));
    cmd.arg("--settings-path").arg(case_dir.join("settings.json"));
    if context_aware {
        cmd.arg("--allow-context-aware")
            .arg("--replay-host-capabilities-interactions")
            .arg(case_dir.join("session.yml"));
    }
    let output = cmd.arg(annotated).output().map_err(|e| format!("cannot run kwctl: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if let Some(want) = &expect.settings_error {
        return if !output.status.success() && stderr.contains(want.as_str()) {
            Ok(())
        } else {
            Err(format!("expected kwctl to refuse the settings with {want:?}; stderr: {stderr}"))
        };
    }
    if !output.status.success() {
        return Err(format!("kwctl failed: {stderr}"));
    }
    let response: Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("kwctl output is not JSON: {e}"))?;
    let answer = answer_from_kwctl(&response, &read("request.json")?)?;
    check(
        &expect,
        &Evaluation {
            answer: Ok(answer),
            host_calls: Vec::new(),
            call_time: Default::default(),
            host_time: Default::default(),
        },
    )
}

fn run(out: &Path) -> Result<(), String> {
    let root = repo_root();
    let (mut passed, mut failed) = (0, 0);
    for (name, dir) in POLICIES {
        let dir = root.join(dir);
        let annotated = out.join(name).join("annotated-policy.wasm");
        let status = Command::new("kwctl")
            .arg("annotate")
            .arg("-m")
            .arg(dir.join("metadata.yml"))
            .arg("-u")
            .arg(dir.join("README.md"))
            .arg("-o")
            .arg(&annotated)
            .arg(dir.join("policy.wasm"))
            .status()
            .map_err(|e| format!("cannot run kwctl: {e}"))?;
        if !status.success() {
            return Err(format!("kwctl annotate failed for {name}"));
        }
        let metadata = std::fs::read_to_string(dir.join("metadata.yml")).map_err(|e| e.to_string())?;
        let context_aware = metadata.contains("contextAwareResources:");
        let mut case_dirs: Vec<PathBuf> = std::fs::read_dir(out.join(name))
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        case_dirs.sort();
        for case_dir in case_dirs {
            let label = format!("{name}::{}", case_dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
            match run_case(&annotated, context_aware, &case_dir) {
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
        [cmd, dir] if cmd == "export" => export(Path::new(dir)),
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

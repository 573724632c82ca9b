//! `cargo xtask-host demo` (`make demo`): evaluates every example request (`examples/*.yaml`, in
//! the case-file format) with every built policy and default settings, one line per policy
//! and request.

use std::path::{Path, PathBuf};

use gangwarden_harness::case::Case;
use gangwarden_harness::host::Policy;
use gangwarden_harness::{POLICIES, repo_root};
use serde_json::Value;

fn examples(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

fn object_label(case: &Case) -> String {
    let object = case.object.as_ref().or(case.request.as_ref().map(|r| &r["object"])).cloned().unwrap_or(Value::Null);
    let meta = &object["metadata"];
    format!(
        "{} {}/{}",
        object["kind"].as_str().unwrap_or("?"),
        meta["namespace"].as_str().unwrap_or("default"),
        meta["name"].as_str().unwrap_or("?")
    )
}

fn verdict_line(answer: &Value) -> String {
    let mut line = if answer["accepted"] == true {
        if answer["mutated_object"].is_null() { "accepted".to_string() } else { "accepted (mutated)".to_string() }
    } else {
        let code = answer["code"].as_u64().map(|c| format!(" {c}")).unwrap_or_default();
        format!("REJECTED{code}  {}", answer["message"].as_str().unwrap_or_default())
    };
    for warning in answer["warnings"].as_array().into_iter().flatten() {
        line.push_str(&format!("  | warning: {}", warning.as_str().unwrap_or_default()));
    }
    line
}

pub fn run(dir: &Path) -> Result<(), String> {
    let files = examples(dir)?;
    if files.is_empty() {
        return Err(format!("no examples in {}", dir.display()));
    }
    let root = repo_root();
    for (name, policy_dir) in POLICIES {
        let policy = Policy::load(name, &root.join(policy_dir))?;
        for file in &files {
            let case = Case::load(file)?;
            let example = file.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let verdict = match case.payload(&example, &Value::Null) {
                Err(refused) => format!("REFUSED by the host  {refused}"),
                Ok(payload) => match policy.call("validate", &payload, case.cluster())?.answer {
                    Ok(answer) => verdict_line(&answer),
                    Err(e) => format!("POLICY ERROR  {e}"),
                },
            };
            println!("{name:<10} {example:<42} {:<44} {verdict}", object_label(&case));
        }
    }
    Ok(())
}

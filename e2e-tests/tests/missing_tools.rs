//! A test that needs kwctl or policy-server and does not find it says it skipped on a user's
//! machine and fails in CI (`CI` set and not empty, as `.ci/run` sets it): the case binaries
//! run with an empty PATH and neither `KWCTL` nor `POLICY_SERVER` set.

use std::process::{Command, Output};

fn without_tools(binary: &str, args: &[&str], ci: Option<&str>) -> Output {
    let mut cmd = Command::new(binary);
    cmd.args(args).env("PATH", "").env_remove("KWCTL").env_remove("POLICY_SERVER").env_remove("CI");
    if let Some(ci) = ci {
        cmd.env("CI", ci);
    }
    cmd.output().unwrap_or_else(|e| panic!("{binary}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_case_binaries_skip_without_ci_and_fail_with_it() {
    let no_dir = std::env::temp_dir().join("gangwarden-no-kwctl-cases");
    let kwctl_cases = (env!("CARGO_BIN_EXE_kwctl-cases"), vec!["run", no_dir.to_str().unwrap()], "e2e-kwctl");
    let policy_server_cases = (env!("CARGO_BIN_EXE_policy-server-cases"), vec!["run"], "e2e-policy-server");
    for (binary, args, test) in [kwctl_cases, policy_server_cases] {
        let why = "kwctl not found: put it on PATH or set KWCTL";
        // No CI, or CI set but empty: a plain skip.
        for ci in [None, Some("")] {
            let out = without_tools(binary, &args, ci);
            assert!(out.status.success(), "{test} with CI={ci:?}: {out:?}");
            assert_eq!(text(&out.stdout), format!("skipped: {test} ({why})\n"), "{test} with CI={ci:?}");
        }
        let out = without_tools(binary, &args, Some("true"));
        assert_eq!(out.status.code(), Some(1), "{test} with CI=true: {out:?}");
        assert_eq!(text(&out.stdout), "", "{test} with CI=true");
        let said = text(&out.stderr);
        assert!(
            said.ends_with(&format!(
                "{test}: {why}; CI is set, so a missing tool fails the run instead of skipping it\n"
            )),
            "{test} with CI=true: {said}"
        );
    }
}

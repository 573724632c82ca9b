//! Runs every case file in `e2e-tests/cases/<policy>/` and every corpus document through
//! the built policy modules. Each becomes its own test, named `<policy>::<case>`.

use std::sync::{Arc, OnceLock};

use gangwarden_harness::case::{Case, case_files};
use gangwarden_harness::host::Policy;
use gangwarden_harness::{POLICIES, corpus, repo_root};
use libtest_mimic::{Arguments, Failed, Trial};

/// Compiling a module takes a while; each policy is compiled once, on first use.
type Shared = Arc<OnceLock<Result<Policy, String>>>;

fn with_policy(
    shared: &Shared,
    name: &str,
    dir: &str,
    run: impl FnOnce(&Policy) -> Result<(), String>,
) -> Result<(), Failed> {
    let policy = shared.get_or_init(|| Policy::load(name, &repo_root().join(dir)));
    match policy {
        Ok(p) => run(p).map_err(Failed::from),
        Err(e) => Err(Failed::from(e.clone())),
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for (name, dir) in POLICIES {
        let shared: Shared = Arc::new(OnceLock::new());
        for path in case_files(name) {
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            let shared = Arc::clone(&shared);
            let case = Case::load(&path);
            // A v1beta1 case also runs as v1alpha3 and as v1 (see the case module).
            let twins = [("v1alpha3", Case::as_v1alpha3 as fn(&Case) -> Option<Case>), ("v1", Case::as_v1)];
            for (version, as_version) in twins {
                if let Some(twin) = case.as_ref().ok().and_then(as_version) {
                    let (shared, stem) = (Arc::clone(&shared), stem.clone());
                    trials.push(Trial::test(format!("{name}::{stem}@{version}"), move || {
                        with_policy(&shared, name, dir, |p| {
                            twin.run(p, &stem, &twin.settings).map_err(|e| format!("{}\n{e}", twin.description))
                        })
                    }));
                }
            }
            trials.push(Trial::test(format!("{name}::{stem}"), move || {
                let case = case?;
                with_policy(&shared, name, dir, |p| {
                    case.run(p, &stem, &case.settings).map_err(|e| format!("{}\n{e}", case.description))
                })
            }));
        }
        match corpus::cases(name) {
            Ok(cases) => {
                for c in cases {
                    let shared = Arc::clone(&shared);
                    trials.push(Trial::test(format!("{name}::corpus::{}", c.name), move || {
                        with_policy(&shared, name, dir, |p| {
                            c.case.run(p, &c.name, &c.case.settings).map_err(|e| format!("{}\n{e}", c.case.description))
                        })
                    }));
                }
            }
            Err(e) => trials.push(Trial::test(format!("{name}::corpus"), move || Err(Failed::from(e)))),
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

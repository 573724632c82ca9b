//! The export half of `make e2e-kwctl`, checked without kwctl: every exported case is a request
//! kwctl can build (or one the case expects kwctl to refuse), settings kwctl can read, and a
//! replay session in the shape kwctl replays.

use std::path::PathBuf;

use gangwarden_core::request::resource_plural;
use gangwarden_harness::POLICIES;
use gangwarden_harness::case::Expect;
use gangwarden_harness::host::admission_request;
use gangwarden_harness::kwctl::{all_cases, export, parse_session};
use serde_json::Value;

fn read_json(path: &PathBuf) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_exported_case_is_what_kwctl_reads() {
    let out = std::env::temp_dir().join(format!("gangwarden-kwctl-export-{}", std::process::id()));
    let (exported, skipped) = export(&out).unwrap_or_else(|e| panic!("{e}"));
    let mut cases = 0;
    let mut refusals = 0;
    for (name, _) in POLICIES {
        let all = all_cases(name).unwrap_or_else(|e| panic!("{e}"));
        for (case_name, _) in all.iter().filter(|(_, c)| c.raw_payload.is_none()) {
            let dir = out.join(name).join(case_name);
            let label = format!("{name}/{case_name}");
            let expect: Expect = serde_json::from_value(read_json(&dir.join("expect.json"))).expect("expect.json");
            let request = read_json(&dir.join("request.json"));
            match (admission_request(&request), &expect.request_error) {
                (Err(refused), Some(want)) => {
                    assert!(refused.contains(want.as_str()), "{label}: refused with {refused:?}, expected {want:?}");
                    refusals += 1;
                }
                (Ok(_), None) if case_name.starts_with("audit-") => {
                    // The audit scanner's own shape (kubewarden/audit-scanner): a whole
                    // AdmissionReview, `resource` named by the kind, no dryRun, empty userInfo.
                    let inner = &request["request"];
                    assert_eq!(request["kind"], "AdmissionReview", "{label}: an AdmissionReview");
                    assert_eq!(inner["resource"]["resource"], inner["kind"]["kind"], "{label}: resource");
                    assert_eq!(inner["requestKind"], inner["kind"], "{label}: requestKind");
                    assert!(inner["dryRun"].is_null(), "{label}: dryRun");
                    assert_eq!(inner["userInfo"], serde_json::json!({}), "{label}: userInfo");
                }
                (Ok(_), None) => {
                    // The whole shape the apiserver sends, not just what kwctl requires.
                    let kind = request["kind"]["kind"].as_str().unwrap_or_default();
                    if !kind.is_empty() {
                        assert_eq!(
                            request["resource"]["resource"].as_str(),
                            Some(resource_plural(kind).as_str()),
                            "{label}: resource"
                        );
                    }
                    for field in ["requestKind", "requestResource", "userInfo", "dryRun"] {
                        assert!(!request[field].is_null(), "{label}: {field} missing");
                    }
                    let op = request["operation"].as_str().unwrap_or_default();
                    if ["CREATE", "UPDATE", "DELETE"].contains(&op) {
                        assert!(
                            request["options"]["kind"].as_str().is_some_and(|k| k.ends_with("Options")),
                            "{label}: options"
                        );
                    }
                }
                (built, want) => panic!("{label}: request built: {:?}, expected requestError {want:?}", built.err()),
            }
            assert!(read_json(&dir.join("settings.json")).is_object(), "{label}: settings must be an object");
            let session = std::fs::read_to_string(dir.join("session.yml")).expect("session.yml");
            let exchanges = parse_session(&session).unwrap_or_else(|e| panic!("{label}: {e}"));
            if let Some(n) =
                expect.host_calls.filter(|_| expect.request_error.is_none() && expect.settings_error.is_none())
            {
                assert_eq!(exchanges.len(), n, "{label}: the session replays every lookup");
            }
            cases += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(exported, cases);
    assert!(skipped > 0 && refusals >= 6, "{skipped} raw-payload cases, {refusals} refused requests");
}

//! The e2e cases in the shape `kwctl run` takes them (`make e2e-kwctl`).
//!
//! [`export`] writes, for every policy and case, `request.json` (the AdmissionRequest),
//! `settings.json`, `expect.json` and `session.yml`: a kwctl replay session made of the lookups
//! the policy makes in the project's own host, answered from the case's cluster objects.
//! [`judge`] checks what kwctl printed against the case's expectations. The `kwctl-cases` binary
//! runs kwctl between the two; the export half is tested without kwctl (`tests/kwctl_export.rs`).
//!
//! Cases with a `rawPayload` are not exported: `kwctl run` only takes an AdmissionRequest.

#[cfg(feature = "host")]
use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::case::{Case, Expect, case_files, check};
use crate::corpus;
#[cfg(feature = "host")]
use crate::host::Policy;
use crate::host::{Evaluation, HostCall};
#[cfg(feature = "host")]
use crate::{POLICIES, repo_root};

/// How kwctl prefixes a request it cannot build (`kwctl run -r`); `requestError` in a case
/// holds the whole message, as [`crate::host::admission_request`] gives it.
pub const REQUEST_ERROR_PREFIX: &str = "cannot build AdmissionRequest object from given input: ";
/// How kwctl reports settings the policy's `validate_settings` refused.
pub const SETTINGS_ERROR_PREFIX: &str = "Provided settings are not valid: ";

/// The YAML tag kwctl's replay session gives each kind of lookup.
fn session_tag(operation: &str) -> Result<&'static str, String> {
    match operation {
        "get_resource" => Ok("KubernetesGetResource"),
        "list_resources_by_namespace" => Ok("KubernetesListResourceNamespace"),
        "list_resources_all" => Ok("KubernetesListResourceAll"),
        other => Err(format!("no replay session tag for host call {other:?}")),
    }
}

/// One recorded lookup as a kwctl replay exchange.
pub fn exchange(call: &HostCall) -> Result<SessionExchange, String> {
    let fields = serde_norway::to_string(&call.request).map_err(|e| e.to_string())?;
    let response = match &call.response {
        Ok(payload) => SessionResponse::Success { payload: payload.to_string() },
        Err(message) => SessionResponse::Error { message: message.clone() },
    };
    Ok(SessionExchange {
        kind: "Exchange".into(),
        request: format!("!{}\n{fields}", session_tag(&call.operation)?),
        response,
    })
}

/// Every case of a policy, its own files and the corpus, with the name it is exported under.
pub fn all_cases(policy: &str) -> Result<Vec<(String, Case)>, String> {
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

#[cfg(feature = "host")]
fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(feature = "host")]
fn to_json(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[cfg(feature = "host")]
/// Exports every case of every policy under `out/<policy>/<case>/`; returns how many were
/// exported and how many (raw-payload cases) were skipped.
pub fn export(out: &Path) -> Result<(usize, usize), String> {
    let root = repo_root();
    let (mut exported, mut skipped) = (0, 0);
    for (name, dir) in POLICIES {
        let policy = Policy::load(name, &root.join(dir))?;
        for (case_name, case) in all_cases(name)? {
            if case.raw_payload.is_some() {
                skipped += 1;
                continue;
            }
            let expect = case.expect.as_ref().ok_or(format!("{name}/{case_name}: no expect"))?;
            let case_dir = out.join(name).join(&case_name);
            std::fs::create_dir_all(&case_dir).map_err(|e| format!("{}: {e}", case_dir.display()))?;
            // kwctl stops before evaluating when it refuses the request or the settings, so
            // those cases have no lookups to replay.
            let mut session = Vec::new();
            if expect.request_error.is_none() && expect.settings_error.is_none() {
                let payload =
                    case.payload(&case_name, &case.settings).map_err(|e| format!("{name}/{case_name}: {e}"))?;
                for call in policy.call("validate", &payload, case.cluster())?.host_calls {
                    session.push(exchange(&call)?);
                }
            }
            write(&case_dir.join("request.json"), &to_json(&case.admission_request(&case_name)))?;
            let settings = if case.settings.is_null() { json!({}) } else { case.settings.clone() };
            write(&case_dir.join("settings.json"), &to_json(&settings))?;
            write(&case_dir.join("session.yml"), &serde_norway::to_string(&session).map_err(|e| e.to_string())?)?;
            write(&case_dir.join("expect.json"), &to_json(&serde_json::to_value(expect).map_err(|e| e.to_string())?))?;
            exported += 1;
        }
    }
    Ok((exported, skipped))
}

/// A replay session as kwctl reads it: a list of exchanges, each a tagged request and a
/// response.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SessionExchange {
    #[serde(rename = "type")]
    pub kind: String,
    pub request: String,
    pub response: SessionResponse,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum SessionResponse {
    Success { payload: String },
    Error { message: String },
}

/// The fields of each lookup request, as the SDK sends them (kwctl compares them one by one).
fn request_fields(tag: &str) -> Option<&'static [&'static str]> {
    match tag {
        "KubernetesGetResource" => Some(&["api_version", "kind", "name", "namespace", "disable_cache", "field_masks"]),
        "KubernetesListResourceNamespace" => {
            Some(&["api_version", "kind", "namespace", "label_selector", "field_selector", "field_masks"])
        }
        "KubernetesListResourceAll" => {
            Some(&["api_version", "kind", "label_selector", "field_selector", "field_masks"])
        }
        _ => None,
    }
}

/// Reads a replay session and checks every exchange has the shape kwctl replays: a request
/// tagged with a known lookup and carrying exactly that lookup's fields, and a JSON payload
/// for each success.
pub fn parse_session(text: &str) -> Result<Vec<SessionExchange>, String> {
    let exchanges: Vec<SessionExchange> = serde_norway::from_str(text).map_err(|e| format!("session: {e}"))?;
    for (i, ex) in exchanges.iter().enumerate() {
        if ex.kind != "Exchange" {
            return Err(format!("exchange {i}: type {:?}, expected \"Exchange\"", ex.kind));
        }
        let (tag, fields) = ex.request.split_once('\n').ok_or(format!("exchange {i}: request has no tag line"))?;
        let tag = tag.strip_prefix('!').ok_or(format!("exchange {i}: request does not start with a !tag"))?;
        let want = request_fields(tag).ok_or(format!("exchange {i}: unknown request tag {tag:?}"))?;
        let fields: serde_json::Map<String, Value> =
            serde_norway::from_str(fields).map_err(|e| format!("exchange {i}: request fields: {e}"))?;
        let got: Vec<&str> = fields.keys().map(String::as_str).collect();
        let mut want_sorted = want.to_vec();
        want_sorted.sort_unstable();
        if got != want_sorted {
            return Err(format!("exchange {i}: {tag} has fields {got:?}, expected {want_sorted:?}"));
        }
        if let SessionResponse::Success { payload } = &ex.response {
            serde_json::from_str::<Value>(payload).map_err(|e| format!("exchange {i}: payload is not JSON: {e}"))?;
        }
    }
    Ok(exchanges)
}

/// An AdmissionResponse (kwctl's, or policy-server's) in the shape the case checker reads,
/// the patch applied to the request's object.
pub fn answer_from_admission_response(response: &Value, request: &Value) -> Result<Value, String> {
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

/// What one `kwctl run` printed.
pub struct KwctlOutput<'a> {
    pub success: bool,
    pub stdout: &'a [u8],
    pub stderr: &'a str,
}

/// Checks kwctl's answer to an exported case against the case's expectations. kwctl refuses
/// a request it cannot build and settings the policy refuses before it evaluates anything,
/// exiting with an error; otherwise it prints the AdmissionResponse.
pub fn judge(expect: &Expect, request: &Value, out: &KwctlOutput) -> Result<(), String> {
    let refusal = match (&expect.request_error, &expect.settings_error) {
        (Some(want), _) => Some(want.clone()),
        (None, Some(want)) => Some(format!("{SETTINGS_ERROR_PREFIX}{want}")),
        (None, None) => None,
    };
    if let Some(want) = refusal {
        return if !out.success && out.stderr.contains(&want) {
            Ok(())
        } else {
            Err(format!("expected kwctl to stop with {want:?}; stderr: {}", out.stderr))
        };
    }
    if !out.success {
        return Err(format!("kwctl failed: {}", out.stderr));
    }
    let response: Value = serde_json::from_slice(out.stdout).map_err(|e| format!("kwctl output is not JSON: {e}"))?;
    let mut expect = expect.clone();
    expect.host_calls = None; // kwctl replays exactly the recorded lookups or fails
    let answer = answer_from_admission_response(&response, request)?;
    check(
        &expect,
        &Evaluation {
            answer: Ok(answer),
            host_calls: Vec::new(),
            instance_time: Default::default(),
            call_time: Default::default(),
            host_time: Default::default(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(accepted: bool) -> Expect {
        serde_json::from_value(json!({"accepted": accepted})).unwrap()
    }

    #[test]
    fn a_refused_request_must_stop_kwctl_with_its_error() {
        let mut e = expect(false);
        e.request_error = Some(format!("{REQUEST_ERROR_PREFIX}missing field `operation`"));
        let stderr = "Error: cannot build AdmissionRequest object from given input: missing field `operation`";
        assert_eq!(judge(&e, &Value::Null, &KwctlOutput { success: false, stdout: b"", stderr }), Ok(()));
        let ran = KwctlOutput { success: true, stdout: br#"{"allowed":true}"#, stderr: "" };
        assert!(judge(&e, &Value::Null, &ran).unwrap_err().starts_with("expected kwctl to stop with"));
    }

    #[test]
    fn refused_settings_must_stop_kwctl_with_the_policy_message() {
        let mut e = expect(false);
        e.settings_error = Some("invalid gang settings: maxMinCount: must be at least 1, got 0".into());
        let stderr = "Provided settings are not valid: invalid gang settings: maxMinCount: must be at least 1, got 0";
        assert_eq!(judge(&e, &Value::Null, &KwctlOutput { success: false, stdout: b"", stderr }), Ok(()));
        let other =
            KwctlOutput { success: false, stdout: b"", stderr: "Provided settings are not valid: something else" };
        assert!(judge(&e, &Value::Null, &other).is_err());
    }

    #[test]
    fn a_patch_is_applied_to_the_request_object() {
        let mut e = expect(true);
        e.mutated = Some(json!({"spec": {"a": 1, "b": 2}}));
        let patch = base64::engine::general_purpose::STANDARD.encode(br#"[{"op":"add","path":"/spec/b","value":2}]"#);
        let stdout =
            serde_json::to_vec(&json!({"uid": "x", "allowed": true, "patchType": "JSONPatch", "patch": patch}))
                .unwrap();
        let request = json!({"object": {"spec": {"a": 1}}});
        assert_eq!(judge(&e, &request, &KwctlOutput { success: true, stdout: &stdout, stderr: "" }), Ok(()));
        e.mutated = None;
        assert!(judge(&e, &request, &KwctlOutput { success: true, stdout: &stdout, stderr: "" }).is_err());
    }

    #[test]
    fn sessions_are_read_in_kwctl_shape() {
        let call = HostCall {
            operation: "get_resource".into(),
            request: json!({"api_version": "v1", "kind": "Node", "name": "n", "namespace": null,
                "disable_cache": false, "field_masks": ["metadata.labels"]}),
            response: Err("Cannot find v1/Node named 'n'".into()),
        };
        let text = serde_norway::to_string(&vec![exchange(&call).unwrap()]).unwrap();
        let session = parse_session(&text).unwrap();
        assert_eq!(session.len(), 1);
        assert!(session[0].request.starts_with("!KubernetesGetResource\napi_version: v1\n"));
        assert!(matches!(&session[0].response, SessionResponse::Error { message } if message.contains("Cannot find")));
        let missing = text.replace("    disable_cache: false\n", "");
        assert!(parse_session(&missing).unwrap_err().contains("has fields"));
        let unknown = HostCall { operation: "can_i".into(), ..call };
        assert_eq!(exchange(&unknown).unwrap_err(), "no replay session tag for host call \"can_i\"");
    }
}

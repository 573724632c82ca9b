//! Judging policy-server's AdmissionReview answers against the e2e cases' expectations, the
//! way `crate::kwctl::judge` judges kwctl's; a policy group's on its message and causes.

use std::time::Duration;

use serde_json::{Value, json};

use crate::case::{Expect, check};
use crate::host::Evaluation;

/// policy-server's AdmissionResponse (the `response` of its AdmissionReview, or the response
/// itself) in the shape the case checker reads: `allowed`, `status.message`, `status.code`,
/// `warnings`, and the request's object with the base64 JSONPatch applied.
pub fn answer_from_response(review: &Value, request: &Value) -> Result<Value, String> {
    let response = review.get("response").unwrap_or(review);
    if !response.is_object() {
        return Err(format!("no AdmissionResponse in {review}"));
    }
    crate::kwctl::answer_from_admission_response(response, request)
}

/// The case checker's verdict on an answer, without the host-call count (policy-server's
/// lookups are not counted per request: it caches them).
fn check_answer(expect: &Expect, answer: Value) -> Result<(), String> {
    let expect = Expect { host_calls: None, ..expect.clone() };
    let evaluation = Evaluation {
        answer: Ok(answer),
        host_calls: Vec::new(),
        instance_time: Duration::ZERO,
        call_time: Duration::ZERO,
        host_time: Duration::ZERO,
    };
    check(&expect, &evaluation)
}

fn uid_matches(review: &Value, request: &Value) -> Result<(), String> {
    let response = review.get("response").unwrap_or(review);
    if response["uid"] != request["uid"] {
        return Err(format!("the answer's uid {} is not the request's {}", response["uid"], request["uid"]));
    }
    Ok(())
}

/// Checks policy-server's answer (`review`, as [`PolicyServer::validate`] returns it) to
/// `request` against a case's expectations, the way `crate::kwctl::judge` checks kwctl's.
/// policy-server never sees a case that expects a refused request or refused settings (it
/// refuses those before any AdmissionReview, at start-up or in its HTTP layer).
pub fn judge(expect: &Expect, request: &Value, review: &Value) -> Result<(), String> {
    if expect.request_error.is_some() || expect.settings_error.is_some() {
        return Err("a case expecting requestError or settingsError cannot be judged on an AdmissionReview".into());
    }
    uid_matches(review, request)?;
    check_answer(expect, answer_from_response(review, request)?)
}

/// The violations of an answer's message, as the case checker counts them: each ends in its
/// `[rule-id]`, joined with `; `; a bad request (a code) is one message.
fn violations(message: &str, code: Option<u64>) -> Vec<String> {
    if message.is_empty() {
        return Vec::new();
    }
    if code.is_some() {
        return vec![message.to_string()];
    }
    message.split("]; ").map(|v| if v.ends_with(']') { v.to_string() } else { format!("{v}]") }).collect()
}

/// What a policy's answer (in the host's shape: `accepted`, `message`, `code`, `warnings`) says,
/// as an expectation: for a group member no case file speaks for.
pub fn expect_from_answer(answer: &Value) -> Expect {
    let code = answer["code"].as_u64();
    Expect {
        accepted: answer["accepted"].as_bool().unwrap_or(false),
        code: code.map(|c| c as u16),
        message: violations(answer["message"].as_str().unwrap_or_default(), code),
        warnings: answer["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(String::from))
            .collect(),
        host_calls: None,
        mutated: None,
        settings_error: None,
        request_error: None,
    }
}

/// The members an `a() && b() && …` group expression calls, in order. policy-server
/// evaluates it with Rhai, whose `&&` stops at the first member that rejects.
pub fn group_members(expression: &str) -> Result<Vec<String>, String> {
    expression
        .split("&&")
        .map(|call| {
            let name = call.trim().strip_suffix("()").unwrap_or_default();
            let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if valid { Ok(name.to_string()) } else { Err(format!("not an a() && b() expression: {expression:?}")) }
        })
        .collect()
}

/// What a policy group must answer.
#[derive(Clone, Debug)]
pub struct GroupExpect {
    /// The group's `message`.
    pub message: String,
    /// The members in the order its `&&` expression calls them, each with what it answers
    /// on its own.
    pub members: Vec<(String, Expect)>,
}

/// Checks policy-server's answer to a policy group. The first member (in expression order)
/// that rejects decides: the answer is the group's message with one cause, `field`
/// `spec.policies.<member>`, whose message holds that member's violations (the causes carry
/// no code). With every member accepting, the group accepts with no status. Either way the
/// answer carries no warnings: policy-server 1.35 does not pass the members' on.
pub fn judge_group(expect: &GroupExpect, request: &Value, review: &Value) -> Result<(), String> {
    uid_matches(review, request)?;
    let response = review.get("response").unwrap_or(review);
    let fail = |why: String| Err(format!("{why}\nanswer: {response:#}"));
    if response["warnings"].as_array().is_some_and(|w| !w.is_empty()) {
        return fail("a policy group's answer carries no warnings".into());
    }
    if response.get("patch").is_some_and(|p| !p.is_null()) {
        return fail("a policy group never mutates".into());
    }
    let causes = response["status"]["details"]["causes"].as_array().cloned().unwrap_or_default();
    let Some((member, member_expect)) = expect.members.iter().find(|(_, e)| !e.accepted) else {
        if response["allowed"] != true || !response["status"].is_null() {
            return fail("expected the group to accept, with no status".into());
        }
        return Ok(());
    };
    if response["allowed"] != false {
        return fail(format!("expected the group to reject (member {member} rejects)"));
    }
    if response["status"]["message"].as_str() != Some(expect.message.as_str()) {
        return fail(format!("expected the group's message {:?}", expect.message));
    }
    let field = format!("spec.policies.{member}");
    if causes.len() != 1 || causes[0]["field"].as_str() != Some(field.as_str()) {
        return fail(format!("expected exactly one cause, field {field:?} (the first member to reject)"));
    }
    // A cause is the member's message alone: judge it as the member's answer without
    // warnings, its code taken as expected (a cause has none to compare).
    let member_answer = json!({
        "accepted": false,
        "message": causes[0]["message"],
        "code": member_expect.code,
        "warnings": [],
        "mutated_object": null,
    });
    let member_expect = Expect { warnings: Vec::new(), ..member_expect.clone() };
    check_answer(&member_expect, member_answer).map_err(|e| format!("cause {field}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(v: Value) -> Expect {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn answers_are_judged_like_kwctl_answers() {
        let request = json!({"uid": "u", "object": {"spec": {"a": 1}}});
        let rejected = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
            "uid": "u", "allowed": false, "status": {"message": "a: Required value [x.a]; b: Invalid [x.b]"},
            "auditAnnotations": null, "warnings": null}});
        let e = expect(json!({"accepted": false, "message": ["[x.a]", "b: Invalid"], "hostCalls": 3}));
        assert_eq!(judge(&e, &request, &rejected), Ok(()));
        assert!(judge(&expect(json!({"accepted": false, "message": ["[x.a]"]})), &request, &rejected).is_err());
        assert!(judge(&e, &json!({"uid": "other"}), &rejected).unwrap_err().contains("uid"));
        use base64::Engine as _;
        let patch = base64::engine::general_purpose::STANDARD.encode(br#"[{"op":"add","path":"/spec/b","value":2}]"#);
        let mutated = json!({"response": {"uid": "u", "allowed": true, "patchType": "JSONPatch", "patch": patch,
            "warnings": ["w1"]}});
        let e = expect(json!({"accepted": true, "warnings": ["w1"], "mutated": {"spec": {"a": 1, "b": 2}}}));
        assert_eq!(judge(&e, &request, &mutated), Ok(()));
    }

    #[test]
    fn groups_are_judged_on_their_message_and_the_first_rejecting_member() {
        assert_eq!(group_members("gang() && topology()").unwrap(), ["gang", "topology"]);
        assert!(group_members("gang() || topology()").is_err());
        let request = json!({"uid": "u"});
        let ok = expect(json!({"accepted": true, "warnings": ["dropped by the group"]}));
        let no = expect(json!({"accepted": false, "message": ["t: bad [topology.key]"]}));
        let group = GroupExpect {
            message: "group says no".into(),
            members: vec![("gang".into(), ok.clone()), ("topology".into(), no)],
        };
        let rejected = json!({"response": {"uid": "u", "allowed": false, "status": {"message": "group says no",
            "details": {"causes": [{"field": "spec.policies.topology", "message": "t: bad [topology.key]"}]}}}});
        assert_eq!(judge_group(&group, &request, &rejected), Ok(()));
        let mut wrong = rejected.clone();
        wrong["response"]["status"]["details"]["causes"][0]["field"] = json!("spec.policies.gang");
        assert!(judge_group(&group, &request, &wrong).is_err());
        let both = GroupExpect { members: vec![("gang".into(), ok.clone()), ("topology".into(), ok)], ..group };
        assert_eq!(judge_group(&both, &request, &json!({"response": {"uid": "u", "allowed": true}})), Ok(()));
        assert!(judge_group(&both, &request, &rejected).is_err());
    }
}

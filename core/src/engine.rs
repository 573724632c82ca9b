//! Runs a rule set over a raw validation payload and says what to answer. Adapters (the
//! waPC policies, the playground) only translate [`Response`] into their own shape.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::review::{AdmissionRequest, Review};
use crate::verdict::Verdict;

/// Rejections for payloads that cannot be read are cut to this many characters.
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// One set of rules with its settings.
pub trait RuleSet {
    /// The name used in messages and in the bundle's settings.
    const NAME: &'static str;
    type Settings: DeserializeOwned + Default;

    /// Checks that go beyond the settings' types (ranges, combinations).
    fn validate_settings(settings: &Self::Settings) -> Result<(), String>;

    fn check(settings: &Self::Settings, review: &Review, cluster: &dyn Cluster) -> Verdict;
}

/// The answer to one validation request, independent of how it is transported.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub accepted: bool,
    pub message: Option<String>,
    pub code: Option<u16>,
    pub warnings: Vec<String>,
    pub mutated_object: Option<Value>,
}

impl Response {
    fn reject(code: u16, message: String) -> Response {
        Response {
            accepted: false,
            // Decoding errors quote what they could not read, which may be megabytes.
            message: Some(crate::field::truncate(&message, MAX_MESSAGE_CHARS).into_owned()),
            code: Some(code),
            warnings: Vec::new(),
            mutated_object: None,
        }
    }

    fn accept() -> Response {
        Response { accepted: true, message: None, code: None, warnings: Vec::new(), mutated_object: None }
    }

    fn from_verdict(verdict: Verdict) -> Response {
        let accepted = verdict.accepted();
        Response {
            accepted,
            message: verdict.message(),
            code: None,
            warnings: verdict.warning_messages(),
            mutated_object: if accepted { verdict.mutated_object } else { None },
        }
    }
}

/// Parses settings: `null` means all defaults; unknown keys and wrong types are errors.
pub fn parse_settings<R: RuleSet>(settings: &Value) -> Result<R::Settings, String> {
    let empty = Value::Object(Default::default());
    let value = if settings.is_null() { &empty } else { settings };
    let parsed: R::Settings =
        crate::decode::from_json(value).map_err(|e| format!("invalid {} settings: {e}", R::NAME))?;
    R::validate_settings(&parsed).map_err(|e| format!("invalid {} settings: {e}", R::NAME))?;
    Ok(parsed)
}

/// The `validate_settings` entry point: the payload is the settings object itself.
pub fn validate_settings<R: RuleSet>(payload: &[u8]) -> Result<(), String> {
    let value: Value = if payload.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(payload).map_err(|e| format!("settings are not valid JSON: {e}"))?
    };
    parse_settings::<R>(&value).map(|_| ())
}

/// Checks an already-decoded review (the playground and unit tests start here).
pub fn check<R: RuleSet>(settings: &R::Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
    R::check(settings, review, cluster)
}

/// The `validate` entry point: `{"request": <AdmissionRequest>, "settings": {...}}`.
pub fn evaluate<R: RuleSet>(payload: &[u8], cluster: &dyn Cluster) -> Response {
    let mut payload: Value = match serde_json::from_slice(payload) {
        Ok(v) => v,
        Err(e) => return Response::reject(400, format!("cannot read the validation request: not valid JSON: {e}")),
    };
    let settings = match parse_settings::<R>(&payload["settings"]) {
        Ok(s) => s,
        Err(e) => return Response::reject(500, e),
    };
    let request = match AdmissionRequest::from_value(payload.get_mut("request").map(Value::take).unwrap_or_default()) {
        Ok(r) => r,
        Err(e) => return Response::reject(400, e.0),
    };
    match request.into_review() {
        Err(e) => Response::reject(400, e.0),
        Ok(None) => Response::accept(),
        Ok(Some(review)) => Response::from_verdict(R::check(&settings, &review, cluster)),
    }
}

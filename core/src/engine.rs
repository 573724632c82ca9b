//! Runs a rule set over a raw validation payload and says what to answer. Adapters (the
//! waPC policies, the playground) only translate [`Response`] into their own shape.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::cluster::Cluster;
use crate::review::{Reads, Review, ValidationPayload};
use crate::verdict::Verdict;

// Rule sets are defined next to the rules (which the engine runs, so they do not import it);
// adapters name it here, with the entry points.
pub use crate::rules::RuleSet;

/// Rejections for payloads that cannot be read are cut to this many characters.
pub const MAX_MESSAGE_CHARS: usize = 1024;

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
    parse_settings_text::<R>(&settings.to_string())
}

/// [`parse_settings`] from JSON text.
fn parse_settings_text<R: RuleSet>(text: &str) -> Result<R::Settings, String> {
    // No settings (what most deployments send with every request): the defaults, which are
    // valid (a test says so), without decoding or checking them again.
    if matches!(text.trim(), "" | "null" | "{}") {
        return Ok(R::Settings::default());
    }
    let invalid = |e: String| format!("invalid {} settings: {e}", R::NAME);
    let parsed: R::Settings = crate::decode::from_str(text).map_err(invalid)?;
    R::validate_settings(&parsed).map_err(invalid)?;
    Ok(parsed)
}

/// The `validate_settings` entry point: the payload is the settings object itself.
pub fn validate_settings<R: RuleSet>(payload: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(payload).map_err(|e| format!("settings are not valid UTF-8: {e}"))?;
    if !text.trim().is_empty() {
        serde::de::IgnoredAny::deserialize(&mut serde_json::Deserializer::from_str(text))
            .map_err(|e| format!("settings are not valid JSON: {e}"))?;
    }
    parse_settings_text::<R>(text).map(|_| ())
}

/// Checks an already-decoded review (the playground and unit tests start here): the
/// metadata rules the apiserver applies to every kind, then the rule set's.
pub fn check<R: RuleSet>(settings: &R::Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
    let mut verdict = crate::rules::meta::check(review);
    verdict.merge(R::check(settings, review, cluster));
    verdict
}

/// A rule set's kind families as the type the review reads them from.
struct Kinds<R>(std::marker::PhantomData<R>);
impl<R: RuleSet> Reads for Kinds<R> {
    const KINDS: u32 = R::KINDS;
}

/// The `validate` entry point: `{"request": <AdmissionRequest>, "settings": {...}}`.
pub fn evaluate<R: RuleSet>(payload: &[u8], cluster: &dyn Cluster) -> Response {
    let payload = match ValidationPayload::parse(payload) {
        Ok(p) => p,
        Err(e) => return Response::reject(400, e.0),
    };
    let settings = match parse_settings_text::<R>(payload.settings.map_or("null", RawValue::get)) {
        Ok(s) => s,
        Err(e) => return Response::reject(500, e),
    };
    match payload.request.review_for::<Kinds<R>>() {
        Err(e) => Response::reject(400, e.0),
        Ok(None) => Response::accept(),
        Ok(Some(review)) => Response::from_verdict(check::<R>(&settings, &review, cluster)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::bundle::Bundle;
    use crate::rules::claims::Claims;
    use crate::rules::gang::Gang;
    use crate::rules::run_policy::RunPolicyRules;
    use crate::rules::topology::Topology;

    /// No settings are read as the defaults without checking them: they must be what `{}`
    /// decodes to, and valid.
    fn defaults_are_what_no_settings_decode_to<R: RuleSet>()
    where
        R::Settings: PartialEq + std::fmt::Debug,
    {
        let decoded: R::Settings = crate::decode::from_str("{}").unwrap();
        assert_eq!(decoded, R::Settings::default(), "{}", R::NAME);
        assert_eq!(R::validate_settings(&decoded), Ok(()), "{}", R::NAME);
        for text in ["", " ", "null", "{}", " {} \n"] {
            assert_eq!(parse_settings_text::<R>(text), Ok(R::Settings::default()), "{} {text:?}", R::NAME);
        }
    }

    #[test]
    fn no_settings_are_the_valid_defaults() {
        defaults_are_what_no_settings_decode_to::<Gang>();
        defaults_are_what_no_settings_decode_to::<Claims>();
        defaults_are_what_no_settings_decode_to::<RunPolicyRules>();
        defaults_are_what_no_settings_decode_to::<Topology>();
        defaults_are_what_no_settings_decode_to::<Bundle>();
    }
}

//! What a rule set decides about one object.

use serde_json::Value;

use crate::cluster::LookupError;
use crate::field::{FieldError, Path, truncate};

/// A broken rule: its stable id and the field error.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub rule: &'static str,
    pub error: FieldError,
}

/// Something the user should know that does not block admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub rule: &'static str,
    pub path: Path,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.error, self.rule)
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} [{}]", self.path, self.message, self.rule)
    }
}

/// How many violations (and warnings) an answer lists before it only counts the rest.
pub const MAX_LISTED: usize = 20;

/// Each listed violation or warning is cut to this many characters (a path may hold a map
/// key of any length).
pub const MAX_CHARS: usize = 1024;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub violations: Vec<Violation>,
    pub warnings: Vec<Warning>,
    /// The object with defaults filled in, when a rule set mutates.
    pub mutated_object: Option<Value>,
}

impl Verdict {
    pub fn deny(&mut self, rule: &'static str, error: FieldError) {
        self.violations.push(Violation { rule, error });
    }

    pub fn deny_all(&mut self, rule: &'static str, errors: impl IntoIterator<Item = FieldError>) {
        self.violations.extend(errors.into_iter().map(|error| Violation { rule, error }));
    }

    pub fn warn(&mut self, rule: &'static str, path: Path, message: impl Into<String>) {
        self.warnings.push(Warning { rule, path, message: message.into() });
    }

    /// A lookup that failed: a warning, or a violation when the settings say to fail closed.
    pub fn lookup_failed(&mut self, rule: &'static str, path: Path, what: &str, err: &LookupError, fail_closed: bool) {
        let detail = format!("cannot look up {what}: {err}");
        if fail_closed {
            self.deny(rule, FieldError::internal(path, detail));
        } else {
            self.warn(rule, path, format!("{detail}; the check was skipped"));
        }
    }

    pub fn accepted(&self) -> bool {
        self.violations.is_empty()
    }

    /// The violations, `<path>: <Type>: <detail> [<rule>]`, joined with `; `: the first
    /// [`MAX_LISTED`] of them, then how many more there are, so the message stays short
    /// however many items of a hostile object break a rule.
    pub fn message(&self) -> Option<String> {
        if self.violations.is_empty() {
            return None;
        }
        let mut listed: Vec<String> =
            self.violations.iter().take(MAX_LISTED).map(|v| truncate(&v.to_string(), MAX_CHARS).into_owned()).collect();
        if let Some(more) = self.violations.len().checked_sub(MAX_LISTED).filter(|n| *n > 0) {
            listed.push(format!("and {more} more {}", if more == 1 { "error" } else { "errors" }));
        }
        Some(listed.join("; "))
    }

    /// The warnings, capped like the violations.
    pub fn warning_messages(&self) -> Vec<String> {
        let mut listed: Vec<String> =
            self.warnings.iter().take(MAX_LISTED).map(|w| truncate(&w.to_string(), MAX_CHARS).into_owned()).collect();
        if let Some(more) = self.warnings.len().checked_sub(MAX_LISTED).filter(|n| *n > 0) {
            listed.push(format!("and {more} more {}", if more == 1 { "warning" } else { "warnings" }));
        }
        listed
    }

    pub fn merge(&mut self, other: Verdict) {
        self.violations.extend(other.violations);
        self.warnings.extend(other.warnings);
        if other.mutated_object.is_some() {
            self.mutated_object = other.mutated_object;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_violations(n: usize) -> Verdict {
        let mut v = Verdict::default();
        for i in 0..n {
            v.deny("gang.test", FieldError::required(Path::new("spec").child("items").index(i), ""));
        }
        v
    }

    #[test]
    fn lists_at_most_twenty_violations_then_counts() {
        assert_eq!(with_violations(0).message(), None);
        assert_eq!(with_violations(1).message().unwrap(), "spec.items[0]: Required value [gang.test]");
        let twenty = with_violations(20).message().unwrap();
        assert_eq!(twenty.matches("Required value").count(), 20);
        assert!(twenty.ends_with("spec.items[19]: Required value [gang.test]"), "{twenty}");
        let many = with_violations(10_000).message().unwrap();
        assert_eq!(many.matches("Required value").count(), 20);
        assert!(many.ends_with("spec.items[19]: Required value [gang.test]; and 9980 more errors"), "{many}");
        assert!(with_violations(21).message().unwrap().ends_with("; and 1 more error"));
    }

    #[test]
    fn lists_at_most_twenty_warnings_then_counts() {
        let mut v = Verdict::default();
        for i in 0..25 {
            v.warn("gang.test", Path::new("spec").index(i), "careful");
        }
        let warnings = v.warning_messages();
        assert_eq!(warnings.len(), 21);
        assert_eq!(warnings[0], "spec[0]: careful [gang.test]");
        assert_eq!(warnings[20], "and 5 more warnings");
    }
}

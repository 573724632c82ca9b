//! What a rule set decides about one object.

use serde_json::Value;

use crate::cluster::LookupError;
use crate::field::{FieldError, Path};

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

    /// Every violation, `<path>: <Type>: <detail> [<rule>]`, joined with `; `.
    pub fn message(&self) -> Option<String> {
        if self.violations.is_empty() {
            return None;
        }
        Some(self.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; "))
    }

    pub fn warning_messages(&self) -> Vec<String> {
        self.warnings.iter().map(|w| w.to_string()).collect()
    }

    pub fn merge(&mut self, other: Verdict) {
        self.violations.extend(other.violations);
        self.warnings.extend(other.warnings);
        if other.mutated_object.is_some() {
            self.mutated_object = other.mutated_object;
        }
    }
}

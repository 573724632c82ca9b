//! Name validators with the apiserver's messages (`k8s.io/apimachinery/pkg/util/validation`).
//! Each `is_*` returns every message that applies; an empty list means valid.

use crate::field::{Field, FieldError};

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn matches_label(s: &str) -> bool {
    let (Some(first), Some(last)) = (s.chars().next(), s.chars().last()) else {
        return false;
    };
    lower_alnum(first) && lower_alnum(last) && s.chars().all(|c| lower_alnum(c) || c == '-')
}

pub fn is_dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len(63));
    }
    if !matches_label(s) {
        errs.push(DNS1123_LABEL_MSG.to_string());
    }
    errs
}

pub fn is_dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len(253));
    }
    if !s.split('.').all(matches_label) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

pub fn is_dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len(63));
    }
    if !(matches_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())) {
        errs.push(DNS1035_LABEL_MSG.to_string());
    }
    errs
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn matches_qualified_name_part(s: &str) -> bool {
    let (Some(first), Some(last)) = (s.chars().next(), s.chars().last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A qualified name, which is also the syntax of a label key: `[prefix/]name`.
pub fn is_qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(is_dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63)));
    }
    if !matches_qualified_name_part(name) {
        errs.push(format!("name part {QUALIFIED_NAME_MSG}"));
    }
    errs
}

/// Whether `s` is a qualified name, without building messages (the common case of a map
/// of thousands of keys).
pub fn is_valid_qualified_name(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    prefix.is_none_or(|p| p.len() <= 253 && p.split('.').all(matches_label))
        && name.len() <= 63
        && matches_qualified_name_part(name)
}

/// Whether `s` is a label value, without building messages.
pub fn is_valid_label_value(s: &str) -> bool {
    s.len() <= 63 && (s.is_empty() || matches_qualified_name_part(s))
}

/// A label value: empty, or a qualified name's name part of at most 63 characters.
pub fn is_label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len(63));
    }
    if !s.is_empty() && !matches_qualified_name_part(s) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

/// A container port name (IANA_SVC_NAME).
pub fn is_port_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 15 {
        errs.push(max_len(15));
    }
    if !s.chars().all(lower_alnum_or_hyphen) {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string());
    }
    if !s.chars().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if s.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if s.starts_with('-') || s.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

fn lower_alnum_or_hyphen(c: char) -> bool {
    lower_alnum(c) || c == '-'
}

/// A name that is used as one segment of a URL path (object kinds and names in references).
pub fn is_path_segment_name(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    ["/", "%"].iter().filter(|bad| s.contains(*bad)).map(|bad| format!("may not contain '{bad}'")).collect()
}

/// Runs a validator and turns each message into an `Invalid value` error at `at`;
/// an empty value is `Required value` when `required` is set.
pub fn check(at: Field, value: &str, required: bool, validator: fn(&str) -> Vec<String>) -> Vec<FieldError> {
    if value.is_empty() {
        return if required { vec![FieldError::required(at.path(), "")] } else { Vec::new() };
    }
    check_set(at, value, validator)
}

/// Runs a validator on a value that is set, even when it is empty (the apiserver validates
/// a non-nil optional field, so `""` gets the format's message rather than `Required value`).
pub fn check_set(at: Field, value: &str, validator: fn(&str) -> Vec<String>) -> Vec<FieldError> {
    validator(value).into_iter().map(|msg| FieldError::invalid(at.path(), value, msg)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Path;

    #[test]
    fn dns_labels() {
        assert!(is_dns1123_label("my-name").is_empty());
        assert!(is_dns1123_label("123-abc").is_empty());
        assert_eq!(is_dns1123_label("My-Name"), vec![DNS1123_LABEL_MSG]);
        assert_eq!(is_dns1123_label("-a"), vec![DNS1123_LABEL_MSG]);
        assert_eq!(is_dns1123_label(&"a".repeat(64)), vec!["must be no more than 63 characters"]);
        assert!(is_dns1035_label("abc-123").is_empty());
        assert_eq!(is_dns1035_label("1abc"), vec![DNS1035_LABEL_MSG]);
    }

    #[test]
    fn dns_subdomains() {
        assert!(is_dns1123_subdomain("example.com").is_empty());
        assert!(is_dns1123_subdomain("gang-0").is_empty());
        assert_eq!(is_dns1123_subdomain("a..b"), vec![DNS1123_SUBDOMAIN_MSG]);
        assert_eq!(is_dns1123_subdomain("gang-{{.Index}}"), vec![DNS1123_SUBDOMAIN_MSG]);
        assert_eq!(is_dns1123_subdomain(""), vec![DNS1123_SUBDOMAIN_MSG]);
    }

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("topology.kubernetes.io/zone").is_empty());
        assert!(is_qualified_name("kubernetes.io/hostname").is_empty());
        assert!(is_qualified_name("rack").is_empty());
        assert_eq!(
            is_qualified_name("x/"),
            vec!["name part must be non-empty".to_string(), format!("name part {QUALIFIED_NAME_MSG}")]
        );
        assert_eq!(is_qualified_name("/zone"), vec!["prefix part must be non-empty"]);
        assert_eq!(is_qualified_name("Bad_Prefix/zone"), vec![format!("prefix part {DNS1123_SUBDOMAIN_MSG}")]);
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert_eq!(is_qualified_name("-zone"), vec![format!("name part {QUALIFIED_NAME_MSG}")]);
    }

    #[test]
    fn quick_checks_agree_with_the_messages() {
        for s in
            ["", "a", "a/b", "/b", "a/", "a/b/c", "Example.com/x", "example.com/x", "x_y.z", "-x", &"k".repeat(64), "é"]
        {
            assert_eq!(is_valid_qualified_name(s), is_qualified_name(s).is_empty(), "{s:?}");
            assert_eq!(is_valid_label_value(s), is_label_value(s).is_empty(), "{s:?}");
        }
    }

    #[test]
    fn label_values() {
        assert!(is_label_value("").is_empty());
        assert!(is_label_value("my_value.1").is_empty());
        assert_eq!(is_label_value("-a"), vec![LABEL_VALUE_MSG]);
        assert_eq!(is_label_value(&"v".repeat(64)), vec!["must be no more than 63 characters"]);
    }

    #[test]
    fn port_and_path_segment_names() {
        assert!(is_port_name("pytorchjob-port").is_empty());
        assert_eq!(is_port_name("1234"), vec!["must contain at least one letter (a-z)"]);
        assert_eq!(is_port_name("a--b"), vec!["must not contain consecutive hyphens"]);
        assert_eq!(
            is_port_name("a-very-long-port-name").first().map(String::as_str),
            Some("must be no more than 15 characters")
        );
        assert_eq!(is_path_segment_name(".."), vec!["may not be '..'"]);
        assert_eq!(is_path_segment_name("a/b%"), vec!["may not contain '/'", "may not contain '%'"]);
        assert!(is_path_segment_name("PyTorchJob").is_empty());
    }

    #[test]
    fn check_renders_field_errors() {
        let meta = Path::new("metadata");
        let p = meta.field("name");
        assert_eq!(check(p, "", true, is_dns1123_label)[0].to_string(), "metadata.name: Required value");
        assert!(check(p, "", false, is_dns1123_label).is_empty());
        assert_eq!(
            check(p, "A", true, is_dns1123_label)[0].to_string(),
            format!("metadata.name: Invalid value: \"A\": {DNS1123_LABEL_MSG}")
        );
    }
}

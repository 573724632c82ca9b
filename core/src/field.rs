//! Field paths and field errors, rendered the way the Kubernetes apiserver renders them
//! (`k8s.io/apimachinery/pkg/util/validation/field`), so users recognise the messages.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// A field path such as `spec.podGroupTemplates[0].name`, built segment by segment.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Path(String);

impl Path {
    pub fn new(root: &str) -> Self {
        Path(root.to_string())
    }

    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() { Path(name.to_string()) } else { self.joined(".", name, "") }
    }

    pub fn index(&self, i: usize) -> Self {
        // Rules build a path per list item: plain pushes cost a fraction of `format!`.
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = i;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.joined("[", std::str::from_utf8(&digits[at..]).unwrap_or_default(), "]")
    }

    pub fn key(&self, key: &str) -> Self {
        self.joined("[", key, "]")
    }

    fn joined(&self, open: &str, segment: &str, close: &str) -> Self {
        let mut s = String::with_capacity(self.0.len() + open.len() + segment.len() + close.len());
        s.push_str(&self.0);
        s.push_str(open);
        s.push_str(segment);
        s.push_str(close);
        Path(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A field under a path, written out as a [`Path`] only when an error names it: the rules look
/// at every field and few are wrong, and in the policy modules each path written costs
/// calls out of the guest (its strings' copies).
#[derive(Clone, Copy, Debug)]
pub struct Field<'a> {
    parent: &'a Path,
    name: &'a str,
}

impl Path {
    pub fn field<'a>(&'a self, name: &'a str) -> Field<'a> {
        Field { parent: self, name }
    }
}

impl Field<'_> {
    // Out of line: only errors write it, and inlined at each of them it cost module size.
    #[inline(never)]
    pub fn path(self) -> Path {
        self.parent.child(self.name)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A value shown in an error: strings are quoted, numbers and booleans are bare, anything
/// else is compact JSON (the apiserver prints Go structs there; JSON is what users wrote).
/// `None` is Go's `field.OmitValueType{}`: the error prints no value at all.
#[derive(Clone, Debug, PartialEq)]
pub struct BadValue(Option<Value>);

impl BadValue {
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Self {
        BadValue(Some(serde_json::to_value(value).unwrap_or(Value::Null)))
    }

    /// No value: `<path>: Invalid value: <detail>`.
    pub fn omitted() -> Self {
        BadValue(None)
    }
}

/// Longer values are cut in messages: a hostile 3 MiB string must not come back whole.
pub const MAX_VALUE_CHARS: usize = 256;

/// `1 node`, `2 nodes`: a count and its noun, for messages.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `s` cut to `max` characters, saying how much was left out.
pub fn truncate(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => s.into(),
        Some((at, _)) => format!("{}...({} more bytes)", &s[..at], s.len() - at).into(),
    }
}

/// `truncate(&sorted.join(", "), max)`, sorting only the names the cut keeps: a non-empty
/// name takes at least three characters with its separator, so the first `max / 3 + 2` in
/// order fill the cut. A list of thousands is selected in linear time.
pub fn truncated_sorted_list(mut names: Vec<&str>, max: usize) -> String {
    let keep = max / 3 + 2;
    if names.len() <= keep || names.iter().any(|n| n.is_empty()) {
        names.sort_unstable();
        return truncate(&names.join(", "), max).into_owned();
    }
    let whole_len = names.iter().map(|n| n.len() + 2).sum::<usize>() - 2;
    names.select_nth_unstable(keep);
    names.truncate(keep);
    names.sort_unstable();
    let head = names.join(", ");
    let at = head.char_indices().nth(max).map_or(head.len(), |(at, _)| at);
    format!("{}...({} more bytes)", &head[..at], whole_len - at)
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => Ok(()),
            Some(Value::Null) => f.write_str("null"),
            // A JSON string literal is the same as Go's %q for everything users type.
            Some(other) => f.write_str(&truncate(&other.to_string(), MAX_VALUE_CHARS)),
        }
    }
}

impl From<&str> for BadValue {
    fn from(s: &str) -> Self {
        BadValue(Some(Value::String(s.to_string())))
    }
}
impl From<&String> for BadValue {
    fn from(s: &String) -> Self {
        BadValue(Some(Value::String(s.clone())))
    }
}
impl From<i64> for BadValue {
    fn from(n: i64) -> Self {
        BadValue(Some(Value::from(n)))
    }
}
impl From<i32> for BadValue {
    fn from(n: i32) -> Self {
        BadValue(Some(Value::from(n)))
    }
}

/// The apiserver's error types, with the data each one prints. Details are shared: a rule
/// that tells thousands of items the same thing clones a pointer, not the text.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    Required { detail: Arc<str> },
    Invalid { value: BadValue, detail: Arc<str> },
    NotSupported { value: BadValue, supported: Vec<String> },
    Forbidden { detail: Arc<str> },
    Duplicate { value: BadValue },
    TooMany { actual: usize, max: usize },
    TooLong { max: usize },
    NotFound { value: BadValue, detail: Arc<str> },
    Internal { detail: Arc<str> },
}

/// The apiserver's `field.ErrorType`s, by their Go names (`field.ErrorTypeInvalid` is
/// `Invalid`): what a rule's upstream counterpart reports, and what a test compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
}

impl ErrorType {
    /// How the type starts a message: `Invalid value`, `Unsupported value`, ...
    pub fn label(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }
}

impl ErrorKind {
    pub fn error_type(&self) -> ErrorType {
        match self {
            ErrorKind::Required { .. } => ErrorType::Required,
            ErrorKind::Invalid { .. } => ErrorType::Invalid,
            ErrorKind::NotSupported { .. } => ErrorType::NotSupported,
            ErrorKind::Forbidden { .. } => ErrorType::Forbidden,
            ErrorKind::Duplicate { .. } => ErrorType::Duplicate,
            ErrorKind::TooMany { .. } => ErrorType::TooMany,
            ErrorKind::TooLong { .. } => ErrorType::TooLong,
            ErrorKind::NotFound { .. } => ErrorType::NotFound,
            ErrorKind::Internal { .. } => ErrorType::Internal,
        }
    }
}

/// One field error: `<path>: <Type>: <detail>`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub path: Path,
    pub kind: ErrorKind,
}

impl FieldError {
    pub fn required(path: Path, detail: impl Into<Arc<str>>) -> Self {
        FieldError { path, kind: ErrorKind::Required { detail: detail.into() } }
    }

    pub fn invalid(path: Path, value: impl Into<BadValue>, detail: impl Into<Arc<str>>) -> Self {
        FieldError { path, kind: ErrorKind::Invalid { value: value.into(), detail: detail.into() } }
    }

    pub fn not_supported<S: AsRef<str>>(path: Path, value: impl Into<BadValue>, supported: &[S]) -> Self {
        let supported = supported.iter().map(|s| s.as_ref().to_string()).collect();
        FieldError { path, kind: ErrorKind::NotSupported { value: value.into(), supported } }
    }

    pub fn forbidden(path: Path, detail: impl Into<Arc<str>>) -> Self {
        FieldError { path, kind: ErrorKind::Forbidden { detail: detail.into() } }
    }

    pub fn duplicate(path: Path, value: impl Into<BadValue>) -> Self {
        FieldError { path, kind: ErrorKind::Duplicate { value: value.into() } }
    }

    pub fn too_many(path: Path, actual: usize, max: usize) -> Self {
        FieldError { path, kind: ErrorKind::TooMany { actual, max } }
    }

    pub fn not_found(path: Path, value: impl Into<BadValue>, detail: impl Into<Arc<str>>) -> Self {
        FieldError { path, kind: ErrorKind::NotFound { value: value.into(), detail: detail.into() } }
    }

    pub fn internal(path: Path, detail: impl Into<Arc<str>>) -> Self {
        FieldError { path, kind: ErrorKind::Internal { detail: detail.into() } }
    }

    /// The error with `suffix` after its detail (Kueue's hint on TrainJob pod sets); kinds
    /// without a detail are returned as they are.
    pub fn with_suffix(mut self, suffix: &str) -> Self {
        if suffix.is_empty() {
            return self;
        }
        match &mut self.kind {
            ErrorKind::Required { detail }
            | ErrorKind::Invalid { detail, .. }
            | ErrorKind::Forbidden { detail }
            | ErrorKind::NotFound { detail, .. }
            | ErrorKind::Internal { detail } => *detail = format!("{detail}{suffix}").into(),
            ErrorKind::NotSupported { .. }
            | ErrorKind::Duplicate { .. }
            | ErrorKind::TooMany { .. }
            | ErrorKind::TooLong { .. } => {}
        }
        self
    }

    /// The standard message for a field that may not change after creation, as the
    /// apiserver's `ValidateImmutableField` and declarative `+k8s:immutable` give it: the
    /// new value (`null` when it was removed), then `field is immutable`.
    pub fn immutable(path: Path, new_value: impl Into<BadValue>) -> Self {
        FieldError::invalid(path, new_value, "field is immutable")
    }

    /// `<path>: Too long: may not be more than <max> bytes` (apimachinery `field.TooLong`,
    /// which prints no value).
    pub fn too_long(path: Path, max: usize) -> Self {
        FieldError { path, kind: ErrorKind::TooLong { max } }
    }

    /// The apiserver's type of this error.
    pub fn error_type(&self) -> ErrorType {
        self.kind.error_type()
    }
}

fn with_detail(f: &mut fmt::Formatter<'_>, detail: &str) -> fmt::Result {
    if detail.is_empty() { Ok(()) } else { write!(f, ": {detail}") }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path)?;
        match &self.kind {
            ErrorKind::Required { detail } => {
                f.write_str("Required value")?;
                with_detail(f, detail)
            }
            ErrorKind::Invalid { value, detail } => {
                f.write_str("Invalid value")?;
                if value.0.is_some() {
                    write!(f, ": {value}")?;
                }
                with_detail(f, detail)
            }
            ErrorKind::NotSupported { value, supported } => {
                write!(f, "Unsupported value: {value}")?;
                if !supported.is_empty() {
                    let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
                    write!(f, ": supported values: {}", quoted.join(", "))?;
                }
                Ok(())
            }
            ErrorKind::Forbidden { detail } => {
                f.write_str("Forbidden")?;
                with_detail(f, detail)
            }
            ErrorKind::Duplicate { value } => write!(f, "Duplicate value: {value}"),
            ErrorKind::TooMany { actual, max } => {
                let unit = if *max == 1 { "item" } else { "items" };
                write!(f, "Too many: {actual}: must have at most {max} {unit}")
            }
            ErrorKind::TooLong { max } => {
                let unit = if *max == 1 { "byte" } else { "bytes" };
                write!(f, "Too long: may not be more than {max} {unit}")
            }
            ErrorKind::NotFound { value, detail } => {
                write!(f, "Not found: {value}")?;
                with_detail(f, detail)
            }
            ErrorKind::Internal { detail } => write!(f, "Internal error: {detail}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_children_indexes_and_keys() {
        let p = Path::new("spec").child("items");
        assert_eq!(p.index(0).as_str(), "spec.items[0]");
        assert_eq!(p.index(10).child("name").as_str(), "spec.items[10].name");
        assert_eq!(p.index(usize::MAX).as_str(), format!("spec.items[{}]", usize::MAX));
        assert_eq!(p.key("Worker").as_str(), "spec.items[Worker]");
        assert_eq!(Path::default().child("spec").as_str(), "spec");
    }

    #[test]
    fn a_truncated_sorted_list_reads_as_the_whole_list_sorted_then_cut() {
        let whole = |names: &[String], max: usize| {
            let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            truncate(&sorted.join(", "), max).into_owned()
        };
        // Shuffled by a stride coprime with the length; single characters are the tightest
        // names the selection must still fill the cut with; multi-byte names cut by characters.
        let lists: Vec<Vec<String>> = vec![
            (0..10_000).map(|i| format!("claim-{}", (i * 7919) % 10_000)).collect(),
            (0..500).map(|i| ((b'a' + (i * 7 % 26) as u8) as char).to_string()).collect(),
            (0..400).map(|i| format!("gpu-é{}", (i * 13) % 400)).collect(),
            (0..300).map(|i| if i % 3 == 0 { String::new() } else { format!("n{}", i % 50) }).collect(),
            (0..5).map(|i| format!("c{i}")).collect(),
        ];
        for names in &lists {
            for max in [0, 1, 2, 10, 255, 256, 257] {
                let got = truncated_sorted_list(names.iter().map(String::as_str).collect(), max);
                assert_eq!(got, whole(names, max), "{} names, max {max}", names.len());
            }
        }
        assert_eq!(truncated_sorted_list(vec!["b", "a"], 256), "a, b");
        assert_eq!(truncated_sorted_list(vec!["b", "a", "c"], 4), "a, b...(3 more bytes)");
    }

    #[test]
    fn renders_each_type_like_the_apiserver() {
        let p = Path::new("spec").child("runPolicy").child("cleanPodPolicy");
        assert_eq!(
            FieldError::not_supported(p.clone(), "Sometimes", &["All", "None", "Running"]).to_string(),
            r#"spec.runPolicy.cleanPodPolicy: Unsupported value: "Sometimes": supported values: "All", "None", "Running""#
        );
        let mc = Path::new("spec").child("schedulingPolicy").child("gang").child("minCount");
        assert_eq!(
            FieldError::required(mc.clone(), "").to_string(),
            "spec.schedulingPolicy.gang.minCount: Required value"
        );
        assert_eq!(
            FieldError::invalid(mc, -1, "must be greater than or equal to 1").to_string(),
            "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"
        );
        let t = Path::new("spec").child("podGroupTemplates");
        assert_eq!(
            FieldError::too_many(t.clone(), 9, 8).to_string(),
            "spec.podGroupTemplates: Too many: 9: must have at most 8 items"
        );
        assert_eq!(
            FieldError::too_many(Path::new("spec").child("topology"), 2, 1).to_string(),
            "spec.topology: Too many: 2: must have at most 1 item"
        );
        assert_eq!(
            FieldError::duplicate(t.index(1), BadValue::of(&serde_json::json!({"name": "a"}))).to_string(),
            r#"spec.podGroupTemplates[1]: Duplicate value: {"name":"a"}"#
        );
        assert_eq!(
            FieldError::immutable(t.clone(), BadValue::of(&serde_json::json!([{"name": "a"}]))).to_string(),
            r#"spec.podGroupTemplates: Invalid value: [{"name":"a"}]: field is immutable"#
        );
        assert_eq!(
            FieldError::immutable(Path::new("spec").child("priorityClassName"), BadValue::of(&None::<String>))
                .to_string(),
            "spec.priorityClassName: Invalid value: null: field is immutable"
        );
        assert_eq!(
            FieldError::too_long(Path::new("metadata").child("annotations"), 262144).to_string(),
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
        assert_eq!(FieldError::immutable(t.clone(), "x").error_type(), ErrorType::Invalid);
        assert_eq!(
            FieldError::invalid(Path::new("metadata").child("name"), "a\"b", "bad").to_string(),
            r#"metadata.name: Invalid value: "a\"b": bad"#
        );
        assert_eq!(
            FieldError::invalid(Path::new("metadata").child("annotations"), BadValue::omitted(), "must not")
                .to_string(),
            "metadata.annotations: Invalid value: must not"
        );
        assert_eq!(
            Path::new("spec").child("xgbReplicaSpecs").key("Master").to_string(),
            "spec.xgbReplicaSpecs[Master]"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = "é".repeat(300);
        let shown = FieldError::invalid(Path::new("metadata").child("name"), long.as_str(), "bad").to_string();
        // The quote, 255 characters, then the rest counted in bytes (each é is 2).
        assert_eq!(shown, format!("metadata.name: Invalid value: \"{}...(91 more bytes): bad", "é".repeat(255)));
        assert_eq!(truncate("short", 256), "short");
    }
}

//! Label and field selectors, parsed and worded as the apiserver parses and words them.

use super::*;

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelRequirement {
    Exists(String),
    NotExists(String),
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
}

impl LabelRequirement {
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            LabelRequirement::Exists(k) => labels.contains_key(k),
            LabelRequirement::NotExists(k) => !labels.contains_key(k),
            LabelRequirement::Equals(k, v) => labels.get(k) == Some(v),
            LabelRequirement::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelRequirement::In(k, values) => labels.get(k).is_some_and(|v| values.contains(v)),
            LabelRequirement::NotIn(k, values) => labels.get(k).is_none_or(|v| !values.contains(v)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    Ident(String),
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    Open,
    Close,
    Comma,
    In,
    NotIn,
}

impl Token {
    pub(crate) fn text(&self) -> &str {
        match self {
            Token::Ident(s) => s,
            Token::Not => "!",
            Token::Equals => "=",
            Token::DoubleEquals => "==",
            Token::NotEquals => "!=",
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
            Token::In => "in",
            Token::NotIn => "notin",
        }
    }
}

pub(crate) fn lex(selector: &str) -> Vec<Token> {
    let chars: Vec<char> = selector.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            c if c.is_whitespace() => i += 1,
            '!' if next == Some('=') => {
                tokens.push(Token::NotEquals);
                i += 2;
            }
            '!' => {
                tokens.push(Token::Not);
                i += 1;
            }
            '=' if next == Some('=') => {
                tokens.push(Token::DoubleEquals);
                i += 2;
            }
            '=' => {
                tokens.push(Token::Equals);
                i += 1;
            }
            '(' | ')' | ',' => {
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
                i += 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !matches!(chars[i], '!' | '=' | '(' | ')' | ',') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                tokens.push(match word.as_str() {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    _ => Token::Ident(word),
                });
            }
        }
    }
    tokens
}

/// Parses a label selector as the apiserver does (`key`, `!key`, `key=value`, `key==value`,
/// `key!=value`, `key in (a,b)`, `key notin (a,b)`, requirements joined by commas). The
/// error reads like the apiserver's.
pub fn parse_label_selector(selector: &str) -> Result<Vec<LabelRequirement>, String> {
    let tokens = lex(selector);
    let mut requirements = Vec::new();
    if tokens.is_empty() {
        return Ok(requirements);
    }
    let found = |t: Option<&Token>| t.map_or(String::new(), |t| t.text().to_string());
    let mut i = 0;
    loop {
        let requirement = match tokens.get(i) {
            Some(Token::Not) => {
                i += 1;
                let Some(Token::Ident(key)) = tokens.get(i) else {
                    return Err(format!(
                        "unable to parse requirement: found '{}', expected: identifier",
                        found(tokens.get(i))
                    ));
                };
                i += 1;
                LabelRequirement::NotExists(valid_key(key)?)
            }
            Some(Token::Ident(key)) => {
                let key = valid_key(key)?;
                i += 1;
                match tokens.get(i) {
                    None | Some(Token::Comma) => LabelRequirement::Exists(key),
                    Some(op @ (Token::Equals | Token::DoubleEquals | Token::NotEquals)) => {
                        i += 1;
                        let value = match tokens.get(i) {
                            Some(Token::Ident(v)) => {
                                i += 1;
                                valid_value(v)?
                            }
                            None | Some(Token::Comma) => String::new(),
                            other => {
                                return Err(format!(
                                    "unable to parse requirement: found '{}', expected: identifier",
                                    found(other)
                                ));
                            }
                        };
                        if *op == Token::NotEquals {
                            LabelRequirement::NotEquals(key, value)
                        } else {
                            LabelRequirement::Equals(key, value)
                        }
                    }
                    Some(op @ (Token::In | Token::NotIn)) => {
                        i += 1;
                        if tokens.get(i) != Some(&Token::Open) {
                            return Err(format!(
                                "unable to parse requirement: found '{}', expected: '('",
                                found(tokens.get(i))
                            ));
                        }
                        i += 1;
                        let mut values = BTreeSet::new();
                        let mut expect_value = true;
                        loop {
                            match tokens.get(i) {
                                Some(Token::Ident(v)) if expect_value => {
                                    values.insert(valid_value(v)?);
                                    expect_value = false;
                                }
                                Some(Token::Comma) if !expect_value => expect_value = true,
                                Some(Token::Comma) => {
                                    values.insert(String::new());
                                }
                                Some(Token::Close) => {
                                    if expect_value && !values.is_empty() {
                                        values.insert(String::new());
                                    }
                                    break;
                                }
                                other => {
                                    return Err(format!(
                                        "unable to parse requirement: found '{}', expected: ',', ')' or identifier",
                                        found(other)
                                    ));
                                }
                            }
                            i += 1;
                        }
                        i += 1;
                        if values.is_empty() {
                            return Err(
                                "unable to parse requirement: for 'in', 'notin' operators, values set can't be empty"
                                    .into(),
                            );
                        }
                        if *op == Token::In {
                            LabelRequirement::In(key, values)
                        } else {
                            LabelRequirement::NotIn(key, values)
                        }
                    }
                    Some(other) => {
                        return Err(format!(
                            "unable to parse requirement: found '{}', expected: in, notin, =, ==, !=, gt, lt",
                            other.text()
                        ));
                    }
                }
            }
            other => {
                return Err(format!("unable to parse requirement: found '{}', expected: !, identifier", found(other)));
            }
        };
        requirements.push(requirement);
        match tokens.get(i) {
            None => return Ok(requirements),
            Some(Token::Comma) => {
                i += 1;
                if tokens.get(i).is_none() {
                    return Err("unable to parse requirement: found '', expected: identifier after ','".into());
                }
            }
            Some(other) => return Err(format!("found '{}', expected: ',' or 'end of string'", other.text())),
        }
    }
}

/// A label name part: at most 63 characters, alphanumeric at both ends, `-`, `_` and `.`
/// between.
pub(crate) fn valid_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain (a label key's prefix).
pub(crate) fn valid_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

pub(crate) fn valid_key(key: &str) -> Result<String, String> {
    let ok = match key.split_once('/') {
        Some((prefix, name)) => valid_dns_subdomain(prefix) && valid_name_part(name),
        None => valid_name_part(key),
    };
    if ok {
        Ok(key.to_string())
    } else {
        Err(format!("unable to parse requirement: invalid label key {key:?}: must be a qualified name"))
    }
}

pub(crate) fn valid_value(value: &str) -> Result<String, String> {
    if value.is_empty() || valid_name_part(value) {
        Ok(value.to_string())
    } else {
        Err(format!(
            "unable to parse requirement: invalid label value: {value:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"
        ))
    }
}

/// One requirement of a field selector (`metadata.name` or `metadata.namespace`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldRequirement {
    pub(crate) field: String,
    pub(crate) value: String,
    pub(crate) equal: bool,
}

pub(crate) fn parse_field_selector(selector: &str) -> Result<Vec<FieldRequirement>, String> {
    let mut requirements = Vec::new();
    if selector.trim().is_empty() {
        return Ok(requirements);
    }
    for term in selector.split(',') {
        let (field, value, equal) = if let Some((f, v)) = term.split_once("!=") {
            (f, v, false)
        } else if let Some((f, v)) = term.split_once("==") {
            (f, v, true)
        } else if let Some((f, v)) = term.split_once('=') {
            (f, v, true)
        } else {
            return Err(format!("invalid selector: '{selector}'; can't understand '{term}'"));
        };
        let field = field.trim();
        if !matches!(field, "metadata.name" | "metadata.namespace") {
            return Err(format!("field label not supported: {field}"));
        }
        requirements.push(FieldRequirement { field: field.to_string(), value: value.trim().to_string(), equal });
    }
    Ok(requirements)
}

/// Which stored objects a list or watch answers with.
#[derive(Default)]
pub(crate) struct Filter {
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) labels: Vec<LabelRequirement>,
    pub(crate) fields: Vec<FieldRequirement>,
}

impl Filter {
    pub(crate) fn from_request(request: &Request) -> Result<Filter, String> {
        let labels = parse_label_selector(request.param("labelSelector").unwrap_or_default())?;
        let fields = parse_field_selector(request.param("fieldSelector").unwrap_or_default())?;
        Ok(Filter { namespace: None, name: None, labels, fields })
    }

    pub(crate) fn matches(&self, object: &Stored) -> bool {
        self.namespace.as_ref().is_none_or(|ns| object.namespace.as_ref() == Some(ns))
            && self.name.as_ref().is_none_or(|n| &object.name == n)
            && self.labels.iter().all(|r| r.matches(&object.labels))
            && self.fields.iter().all(|f| {
                let actual = if f.field == "metadata.name" {
                    object.name.as_str()
                } else {
                    object.namespace.as_deref().unwrap_or_default()
                };
                (actual == f.value) == f.equal
            })
    }
}

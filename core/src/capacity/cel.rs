//! The part of DRA's CEL selectors evaluated exactly: `device.driver`, attribute and capacity
//! equalities (`==`, `!=`) and `&&` of them, which is how the NVIDIA driver's DeviceClasses
//! are written. Any other expression counts as matching every device, so supply is only ever
//! over-estimated (`reference/dra.md` §5, §10).

use serde_json::Value;

use crate::quantity::fine_units;

/// A device as a selector sees it: its driver and its published attributes and capacity.
pub struct Device<'a> {
    pub driver: &'a str,
    pub attributes: Option<&'a serde_json::Map<String, Value>>,
    pub capacity: Option<&'a serde_json::Map<String, Value>>,
}

/// A selector read into a conjunction of comparisons; `None`: not read (matches every device).
#[derive(Clone, Debug, PartialEq)]
pub struct Selector(Option<Vec<Comparison>>);

#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    left: Operand,
    right: Operand,
    equal: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    Driver,
    Attribute(String, String),
    Capacity(String, String),
    Text(String),
    Int(i64),
    Bool(bool),
    Quantity(String),
}

/// What a comparison, or their conjunction, evaluates to on one device: CEL's `&&` absorbs an
/// error where the other side is false, and what is not known may be anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    True,
    False,
    Error,
    Unknown,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Text(String),
    Int(i64),
    Dot,
    Open,
    Close,
    OpenParen,
    CloseParen,
    Equal,
    NotEqual,
    And,
}

fn tokens(expression: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = expression.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|(_, c)| *c);
        let token = match c {
            c if c.is_whitespace() => continue,
            '.' => Token::Dot,
            '[' => Token::Open,
            ']' => Token::Close,
            '(' => Token::OpenParen,
            ')' => Token::CloseParen,
            '=' | '!' | '&' if next == Some(if c == '&' { '&' } else { '=' }) => {
                chars.next();
                match c {
                    '=' => Token::Equal,
                    '!' => Token::NotEqual,
                    _ => Token::And,
                }
            }
            '"' | '\'' => {
                let rest = &expression[i + 1..];
                let end = rest.find(c)?;
                let text = &rest[..end];
                // Escapes, raw and triple-quoted strings are not read.
                if text.contains('\\') || rest[end + 1..].starts_with(c) {
                    return None;
                }
                for _ in 0..text.chars().count() + 1 {
                    chars.next();
                }
                Token::Text(text.to_string())
            }
            c if c.is_ascii_digit() => {
                let start = i;
                let mut end = i + 1;
                while let Some((j, d)) = chars.peek().copied()
                    && d.is_ascii_alphanumeric()
                {
                    chars.next();
                    end = j + 1;
                }
                Token::Int(expression[start..end].parse().ok()?)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                let mut end = i + 1;
                while let Some((j, d)) = chars.peek().copied()
                    && (d.is_ascii_alphanumeric() || d == '_')
                {
                    chars.next();
                    end = j + 1;
                }
                Token::Ident(expression[start..end].to_string())
            }
            _ => return None,
        };
        out.push(token);
    }
    Some(out)
}

/// Splits `tokens` at the `&&`s outside parentheses, dropping parentheses around a whole part.
fn conjuncts(mut tokens: &[Token], out: &mut Vec<Comparison>) -> Option<()> {
    while let [Token::OpenParen, inner @ .., Token::CloseParen] = tokens
        && balanced(inner)
    {
        tokens = inner;
    }
    let mut depth = 0i32;
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::OpenParen => depth += 1,
            Token::CloseParen => depth -= 1,
            Token::And if depth == 0 => {
                conjuncts(&tokens[start..i], out)?;
                start = i + 1;
            }
            _ => {}
        }
    }
    if start > 0 {
        return conjuncts(&tokens[start..], out);
    }
    out.push(comparison(tokens)?);
    Some(())
}

fn balanced(tokens: &[Token]) -> bool {
    let mut depth = 0i32;
    tokens.iter().all(|t| {
        depth += match t {
            Token::OpenParen => 1,
            Token::CloseParen => -1,
            _ => 0,
        };
        depth >= 0
    }) && depth == 0
}

fn comparison(tokens: &[Token]) -> Option<Comparison> {
    let at = tokens.iter().position(|t| matches!(t, Token::Equal | Token::NotEqual))?;
    Some(Comparison {
        left: operand(&tokens[..at])?,
        right: operand(&tokens[at + 1..])?,
        equal: tokens[at] == Token::Equal,
    })
}

fn operand(tokens: &[Token]) -> Option<Operand> {
    use Token::*;
    let ident = |t: &Token, name: &str| matches!(t, Ident(i) if i == name);
    Some(match tokens {
        [Text(t)] => Operand::Text(t.clone()),
        [Int(n)] => Operand::Int(*n),
        [Ident(b)] if b == "true" || b == "false" => Operand::Bool(b == "true"),
        [Ident(q), OpenParen, Text(t), CloseParen] if q == "quantity" => Operand::Quantity(t.clone()),
        [d, Dot, f] if ident(d, "device") && ident(f, "driver") => Operand::Driver,
        [d, Dot, Ident(map), Open, Text(domain), Close, rest @ ..] if ident(d, "device") => {
            let id = match rest {
                [Dot, Ident(id)] | [Open, Text(id), Close] => id.clone(),
                _ => return None,
            };
            match map.as_str() {
                "attributes" => Operand::Attribute(domain.clone(), id),
                "capacity" => Operand::Capacity(domain.clone(), id),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// A value a comparison compares.
#[derive(PartialEq)]
enum Known<'a> {
    Text(&'a str),
    Int(i64),
    Bool(bool),
    Quantity(u128),
}

impl Selector {
    pub fn parse(expression: &str) -> Selector {
        let mut out = Vec::new();
        Selector(tokens(expression).and_then(|t| conjuncts(&t, &mut out)).map(|()| out))
    }

    /// Whether the selector may be true of `device`: true unless it is provably false or an
    /// error (which aborts the allocation that evaluates it).
    pub fn may_match(&self, device: &Device) -> bool {
        let Some(comparisons) = &self.0 else { return true };
        let outcomes = comparisons.iter().map(|c| c.eval(device));
        let mut all = Outcome::True;
        for o in outcomes {
            all = match (all, o) {
                (Outcome::False, _) | (_, Outcome::False) => return false,
                (Outcome::Unknown, _) | (_, Outcome::Unknown) => Outcome::Unknown,
                (Outcome::Error, _) | (_, Outcome::Error) => Outcome::Error,
                _ => Outcome::True,
            };
        }
        all != Outcome::Error
    }

    /// Whether the selector may match some device of `driver` whose attributes are not known
    /// (one in a pool not fully published): only a driver comparison can rule it out.
    pub fn may_match_driver(&self, driver: &str) -> bool {
        let Some(comparisons) = &self.0 else { return true };
        comparisons.iter().all(|c| match (&c.left, &c.right) {
            (Operand::Driver, Operand::Text(t)) | (Operand::Text(t), Operand::Driver) => (t == driver) == c.equal,
            _ => true,
        })
    }
}

impl Comparison {
    fn eval(&self, device: &Device) -> Outcome {
        let (left, right) = match (value(&self.left, device), value(&self.right, device)) {
            (Ok(l), Ok(r)) => (l, r),
            (Err(o), _) | (_, Err(o)) => return o,
        };
        let same = match (&left, &right) {
            (Known::Text(_), Known::Text(_))
            | (Known::Int(_), Known::Int(_))
            | (Known::Bool(_), Known::Bool(_))
            | (Known::Quantity(_), Known::Quantity(_)) => left == right,
            // CEL has no `==` across these types: "no such overload".
            _ => return Outcome::Error,
        };
        if same == self.equal { Outcome::True } else { Outcome::False }
    }
}

fn value<'a>(operand: &'a Operand, device: &Device<'a>) -> Result<Known<'a>, Outcome> {
    Ok(match operand {
        Operand::Driver => Known::Text(device.driver),
        Operand::Text(t) => Known::Text(t),
        Operand::Int(n) => Known::Int(*n),
        Operand::Bool(b) => Known::Bool(*b),
        // Equal amounts are equal in fine units; different fine units, different amounts.
        Operand::Quantity(q) => Known::Quantity(fine_units("", q).ok_or(Outcome::Unknown)?),
        Operand::Attribute(domain, id) => {
            let found = published(device.attributes, device.driver, domain, id).ok_or(Outcome::Error)?;
            match found {
                Value::Object(v) => match v.iter().next() {
                    Some((k, Value::String(s))) if k == "string" => Known::Text(s),
                    Some((k, Value::Bool(b))) if k == "bool" => Known::Bool(*b),
                    Some((k, n)) if k == "int" => Known::Int(n.as_i64().ok_or(Outcome::Unknown)?),
                    // Versions (semver values), lists: not compared here.
                    _ => return Err(Outcome::Unknown),
                },
                _ => return Err(Outcome::Unknown),
            }
        }
        Operand::Capacity(domain, id) => {
            let found = published(device.capacity, device.driver, domain, id).ok_or(Outcome::Error)?;
            let amount = found.get("value").and_then(Value::as_str).ok_or(Outcome::Unknown)?;
            Known::Quantity(fine_units("", amount).ok_or(Outcome::Unknown)?)
        }
    })
}

/// A device's attribute or capacity `domain`/`id`: a name without a domain is in the
/// driver's; `None` when the device does not publish it (CEL's "no such key").
fn published<'a>(
    map: Option<&'a serde_json::Map<String, Value>>,
    driver: &str,
    domain: &str,
    id: &str,
) -> Option<&'a Value> {
    map?.iter().find_map(|(name, v)| {
        let (d, i) = name.rsplit_once('/').unwrap_or((driver, name));
        (d == domain && i == id).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matches(expression: &str, device: Value) -> bool {
        let device = Device {
            driver: device["driver"].as_str().unwrap(),
            attributes: device["attributes"].as_object(),
            capacity: device["capacity"].as_object(),
        };
        Selector::parse(expression).may_match(&device)
    }

    fn h100() -> Value {
        json!({"driver": "gpu.nvidia.com",
            "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H100 80GB HBM3"},
                           "gpu.nvidia.com/index": {"int": 3}, "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                           "addressingMode": {"bool": true}, "driverVersion": {"version": "580.0.0"}},
            "capacity": {"memory": {"value": "80Gi"}}})
    }

    #[test]
    fn the_nvidia_classes_and_equalities_are_evaluated() {
        let gpu = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
        let mig = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";
        assert!(matches(gpu, h100()));
        assert!(!matches(mig, h100()));
        assert!(!matches(r#"device.driver == "compute-domain.nvidia.com""#, h100()));
        assert!(matches(r#"device.attributes["gpu.nvidia.com"]["index"] == 3"#, h100()));
        assert!(!matches(r#"device.attributes["gpu.nvidia.com"].index != 3"#, h100()));
        assert!(matches(r#"(device.attributes["gpu.nvidia.com"].addressingMode == true)"#, h100()));
        assert!(matches(r#"device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00""#, h100()));
        assert!(matches(r#"device.capacity["gpu.nvidia.com"].memory == quantity("81920Mi")"#, h100()));
        assert!(!matches(r#"device.capacity["gpu.nvidia.com"].memory == quantity("40Gi")"#, h100()));
        assert!(!matches(r#"device.attributes["gpu.nvidia.com"].productName == "B200""#, h100()));
    }

    #[test]
    fn errors_never_match_and_false_absorbs_them() {
        // No such key: an error, which aborts the allocation.
        assert!(!matches(r#"device.attributes["gpu.nvidia.com"].uuid == "x""#, h100()));
        assert!(!matches(r#"device.attributes["other.com"].type == "gpu""#, h100()));
        // No `==` between a string and an int.
        assert!(!matches(r#"device.attributes["gpu.nvidia.com"].type == 1"#, h100()));
        assert!(!matches(r#"device.attributes["gpu.nvidia.com"].uuid == "x" && device.driver == "x""#, h100()));
    }

    #[test]
    fn anything_else_matches() {
        for expression in [
            "device.driver == 'a' || device.driver == 'b'",
            "!(device.driver == 'x')",
            "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*b200.*$')",
            "device.attributes['gpu.nvidia.com'].driverVersion == semver('580.0.0')",
            r#"device.attributes["gpu.nvidia.com"].driverVersion == "1""#,
            "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('1Ti')) >= 0",
            "cel.bind(x, 1, x == 2)",
            "'unterminated",
            r#"device.driver == "a\"b""#,
            "",
        ] {
            assert!(matches(expression, h100()), "{expression}");
        }
        // A driver comparison inside a conjunction of unread parts still rules a driver out.
        let s =
            Selector::parse("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'");
        assert!(s.may_match_driver("gpu.nvidia.com") && !s.may_match_driver("nic.example.com"));
        assert!(Selector::parse("device.driver != 'x' || true").may_match_driver("x"));
    }
}

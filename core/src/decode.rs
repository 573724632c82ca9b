//! Decoding JSON text into typed objects with the path of the first field that does not fit.
//!
//! Every typed decode reads JSON text through here, never a `serde_json::Value`: building a
//! `Value` first costs more than the typed decode itself on large objects, and one reader
//! type keeps each type's decoding code compiled once (it adds up in the policy modules).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::track::{Track, Tracked};

/// Decodes `text` as `T`; the error names the field path, e.g.
/// `spec.schedulingPolicy.gang.minCount: invalid type: string "4", expected i32`.
pub fn from_str<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, String> {
    from_str_at("", text)
}

/// [`from_str`] for text found at `at` (a field path such as `request.kind`), which the
/// error's path starts with.
pub fn from_str_at<'a, T: Deserialize<'a>>(at: &str, text: &'a str) -> Result<T, String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let track = Track::default();
    // The messages are written out of line: compiled into each type's decode, they added up
    // in the policy modules.
    match T::deserialize(Tracked { de: &mut reader, track: &track }) {
        Ok(value) => at_end(at, &mut reader).map(|()| value),
        Err(e) => Err(located(at, &track, &e)),
    }
}

/// A decode error's message, after the field path `track` holds (below `at`).
#[inline(never)]
fn located(at: &str, track: &Track, e: &serde_json::Error) -> String {
    let message = without_position(e);
    let path = match track.path() {
        p if p.is_empty() => at.to_string(),
        p if at.is_empty() || p.starts_with('[') => format!("{at}{p}"),
        p => format!("{at}.{p}"),
    };
    if path.is_empty() { message } else { format!("{path}: {message}") }
}

/// Nothing but whitespace may follow the value.
#[inline(never)]
fn at_end(at: &str, reader: &mut serde_json::Deserializer<serde_json::de::StrRead>) -> Result<(), String> {
    reader.end().map_err(|e| format!("{at}{}{}", if at.is_empty() { "" } else { ": " }, e))
}

/// Decodes `value` as `T` (tests, and faces that hold objects as values).
pub fn from_json<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    from_str(&value.to_string())
}

/// `value` as raw JSON text.
pub fn to_raw(value: &Value) -> Box<RawValue> {
    // Serialising a `Value` cannot fail: its map keys are strings.
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// A data error's message without serde_json's ` at line L column C`: the field path says
/// where, and the column would count in the request rather than in the object.
fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&suffix) {
        Some(stripped) if e.line() > 0 => stripped.to_string(),
        _ => message,
    }
}

/// The JSON type of raw text, for messages (`an object`, `a string`, ...).
pub fn json_type(raw: &RawValue) -> &'static str {
    match raw.get().trim_start().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') | None => "null",
        Some(_) => "a number",
    }
}

/// `T` read from a JSON object only: serde's derived structs also read an array, taking its
/// elements as the fields in order, which no Kubernetes object means.
#[derive(Debug)]
pub struct ObjectOnly<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Fields(std::marker::PhantomData)).map(ObjectOnly)
    }
}

/// A JSON string lent by the text it is read from when it has no escapes (defined with the
/// tracked reader, which reads every map key as one).
pub use crate::track::Text;

/// A part of an object kept as its JSON text: what a rule only compares whole (across an
/// update) or looks into once, or only asks about being there. Reading it costs the policy
/// modules no decoder of its own (a `Value` decoder, say, or `jiff`'s timestamp parser).
/// Equal when the text is: the apiserver writes an object and its old copy with one encoder.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(transparent)]
pub struct RawJson(pub Box<RawValue>);

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl RawJson {
    /// The text read as a plain `Value`, for a rule that looks into it.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

/// `null` reads as the field's default, as Go's JSON decoding (and k8s-openapi) does for
/// required fields.
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A list read like [`null_as_default`], then cut to its length: serde starts every list at
/// room for four items, and a replica template's one container would hold four times the
/// memory it needs (a job may carry thousands of templates, each memory page a fresh
/// policy instance touches costs a page fault).
pub fn compact_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    let mut list: Vec<T> = null_as_default(d)?;
    list.shrink_to_fit();
    Ok(list)
}

/// A list the apiserver allows at most `MAX` items in. Past that it rejects the list with one
/// `Too many` error and checks no item, so only the first `MAX + 1` items are decoded: the
/// rest are counted, and digested so that an UPDATE still sees whether an immutable list
/// changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Capped<T, const MAX: usize> {
    /// The first items, one past the maximum at most.
    items: Vec<T>,
    len: usize,
    /// A digest of the JSON text of the items past `items`. The apiserver writes an object
    /// and its old copy with one encoder, so equal lists have equal text.
    rest: u64,
}

impl<T, const MAX: usize> Default for Capped<T, MAX> {
    fn default() -> Self {
        Capped { items: Vec::new(), len: 0, rest: 0 }
    }
}

impl<T, const MAX: usize> Capped<T, MAX> {
    /// How many items the list holds.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items, or none when there are more than `MAX`.
    pub fn within_maximum(&self) -> &[T] {
        if self.len > MAX { &[] } else { &self.items }
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Capped<T, MAX> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Items<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> serde::de::Visitor<'de> for Items<T, MAX> {
            type Value = Capped<T, MAX>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Capped::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while items.len() <= MAX {
                    match seq.next_element()? {
                        Some(item) => items.push(item),
                        None => return Ok(Capped { len: items.len(), items, rest: 0 }),
                    }
                }
                let (mut len, mut rest) = (items.len(), 0);
                while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                    len += 1;
                    rest = digest(rest, raw.get().as_bytes());
                }
                Ok(Capped { items, len, rest })
            }
        }
        d.deserialize_option(OptionalList(Items::<T, MAX>(std::marker::PhantomData)))
    }
}

/// `null` as an empty list (k8s-openapi reads a required list so), anything else as `V` reads it.
struct OptionalList<V>(V);

impl<'de, V: serde::de::Visitor<'de>> serde::de::Visitor<'de> for OptionalList<V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.expecting(f)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_seq(self.0)
    }
}

/// Folds `bytes` (and their length, which keeps item boundaries apart) into `hash`, eight
/// bytes a step with FxHash's mixing. A collision cannot let anything in: the list it
/// digests is already rejected as too long.
fn digest(hash: u64, bytes: &[u8]) -> u64 {
    let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    let mut words = bytes.chunks_exact(8);
    let mut hash = mix(hash, bytes.len() as u64);
    for word in &mut words {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        hash = mix(hash, u64::from_le_bytes(w));
    }
    let mut last = [0; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    mix(hash, u64::from_le_bytes(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_path_without_a_position() {
        #[derive(Debug, Deserialize)]
        struct Inner {
            #[allow(dead_code)]
            n: i32,
        }
        #[derive(Debug, Deserialize)]
        struct Outer {
            items: Vec<Inner>,
        }
        let e = from_str::<Outer>(r#"{"items": [{"n": 1}, {"n": "x"}]}"#).unwrap_err();
        assert_eq!(e, "items[1].n: invalid type: string \"x\", expected i32");
        assert_eq!(from_str::<Outer>(r#"{"items": [{}]}"#).unwrap_err(), "items[0]: missing field `n`");
        assert_eq!(from_str::<Outer>("3").unwrap_err(), "invalid type: integer `3`, expected struct Outer");
        assert_eq!(
            from_str::<ObjectOnly<Outer>>("[[]]").unwrap_err(),
            "invalid type: sequence, expected a JSON object",
            "derived structs alone would read an array positionally"
        );
        assert_eq!(from_str::<ObjectOnly<Outer>>(r#"{"items": []}"#).unwrap().0.items.len(), 0);
        // The tracked reader reads a struct from an object only (see `Tracked::deserialize_struct`).
        assert_eq!(from_str::<Outer>("[[]]").unwrap_err(), "invalid type: sequence, expected struct Outer");
        assert_eq!(
            from_str::<Outer>(r#"{"items": [[1]]}"#).unwrap_err(),
            "items[0]: invalid type: sequence, expected struct Inner"
        );
        assert!(from_str::<Outer>(r#"{"items": []} x"#).unwrap_err().starts_with("trailing characters"));
        assert_eq!(
            from_str_at::<Outer>("request.o", "3").unwrap_err(),
            "request.o: invalid type: integer `3`, expected struct Outer"
        );
        assert_eq!(
            from_str_at::<Vec<Inner>>("o", r#"[{"n": true}]"#).unwrap_err(),
            "o[0].n: invalid type: boolean `true`, expected i32"
        );
        assert_eq!(from_str_at::<Outer>("o", r#"{"items": [{}]}"#).unwrap_err(), "o.items[0]: missing field `n`");
    }

    #[test]
    fn paths_name_map_keys_enum_variants_and_refused_keys() {
        use std::collections::BTreeMap;
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Strict {
            #[allow(dead_code)]
            a: Option<i32>,
        }
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        enum Mode {
            Single {
                #[allow(dead_code)]
                n: i32,
            },
        }
        assert_eq!(
            from_str::<BTreeMap<String, Strict>>(r#"{"x\"y": {"b": 1}}"#).unwrap_err(),
            "x\"y.b: unknown field `b`, expected `a`"
        );
        assert_eq!(
            from_str::<BTreeMap<String, Vec<Mode>>>(r#"{"m": [{"single": {"n": 1}}, {"single": {"n": "2"}}]}"#)
                .unwrap_err(),
            "m[1].single.n: invalid type: string \"2\", expected i32"
        );
        // Items decoded before the error leave nothing in its path.
        assert_eq!(
            from_str::<Vec<BTreeMap<String, i32>>>(r#"[{"a": 1}, {"b": true}]"#).unwrap_err(),
            "[1].b: invalid type: boolean `true`, expected i32"
        );
    }

    #[test]
    fn text_is_lent_unless_it_has_escapes() {
        let lent: Text = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(lent.0, std::borrow::Cow::Borrowed("plain")));
        let copied: Text = serde_json::from_str(r#""a\"b""#).unwrap();
        assert!(matches!(copied.0, std::borrow::Cow::Owned(ref s) if s == "a\"b"));
    }

    #[test]
    fn names_raw_json_types() {
        for (text, want) in [
            ("{}", "an object"),
            (" [1]", "an array"),
            ("\"s\"", "a string"),
            ("false", "a boolean"),
            ("null", "null"),
            ("-1", "a number"),
        ] {
            assert_eq!(json_type(&RawValue::from_string(text.into()).unwrap()), want, "{text}");
        }
    }

    #[test]
    fn a_capped_list_decodes_one_item_past_its_maximum_and_counts_the_rest() {
        type List = Capped<String, 2>;
        let list: List = from_str(r#"["a", "b"]"#).unwrap();
        assert_eq!((list.len(), list.within_maximum()), (2, &["a".to_string(), "b".to_string()][..]));
        let long: List = from_str(r#"["a", "b", "c", {"d": [1, -2, 3.5, true, null]}, "e"]"#).unwrap();
        assert_eq!(long.len(), 5);
        assert!(long.within_maximum().is_empty());
        assert_eq!(long.items, ["a", "b", "c"], "one past the maximum shows it is exceeded");
        // Past the kept items, any value is counted; the digest still tells lists apart.
        let same: List = from_str(r#"["a", "b", "c", {"d": [1, -2, 3.5, true, null]}, "e"]"#).unwrap();
        assert_eq!(long, same);
        for other in [
            r#"["a", "b", "c", {"d": [1, -2, 3.5, true, null]}, "f"]"#,
            r#"["a", "b", "c", {"d": [1, -2, 3.5, false, null]}, "e"]"#,
            r#"["a", "b", "c", {"e": [1, -2, 3.5, true, null]}, "e"]"#,
            r#"["a", "b", "c", "e", {"d": [1, -2, 3.5, true, null]}]"#,
            r#"["a", "b", "x", {"d": [1, -2, 3.5, true, null]}, "e"]"#,
            r#"["a", "b", "c", {"d": [1, -2, 3.5, true, null]}, "e", ""]"#,
            r#"["a", "b", "c", {"d": [1, -2, 3.5, true, null]}, "e", "", ""]"#,
        ] {
            assert_ne!(long, from_str::<List>(other).unwrap(), "{other}");
        }
        assert_eq!(from_str::<List>("null").unwrap(), List::default());
        assert!(from_str::<List>("null").unwrap().is_empty());
        assert_eq!(from_str::<List>("[1]").unwrap_err(), "[0]: invalid type: integer `1`, expected a string");
        assert_eq!(from_str::<List>(r#""a""#).unwrap_err(), "invalid type: string \"a\", expected a sequence");
    }
}

//! The parts of an object's `metadata` the rules read. The typed objects skip labels,
//! annotations, managedFields and the rest unread: a Pod may carry megabytes of them, and
//! decoding them into maps for every rule would cost more than every rule together. The
//! metadata rules read them once, lent by the payload ([`Metadata`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::decode::Text;

/// An object's own `metadata`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Only whether it is set is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<crate::decode::RawJson>,
}

/// A Pod template's `metadata`: only its annotations are read (Kueue's topology ones).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct TemplateMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// A `map[string]string` as its entries in the order written, lent where they can be.
pub type StringMap<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// An object's `metadata` as the apiserver validates it for every kind (names, labels,
/// annotations), its strings lent by the payload where they have no escapes, and the
/// `apiVersion` and `kind` of its controller owner (the `ownerReferences` entry with
/// `controller: true`). `managedFields` and the rest are skipped unread.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Metadata<'a> {
    #[serde(borrow, deserialize_with = "lent")]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lent")]
    pub generate_name: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lent")]
    pub namespace: Option<Cow<'a, str>>,
    /// In the order written (`null` reads as empty).
    #[serde(borrow, deserialize_with = "string_map")]
    pub labels: StringMap<'a>,
    #[serde(borrow, deserialize_with = "string_map")]
    pub annotations: StringMap<'a>,
    /// The controller owner's `apiVersion` and `kind`.
    #[serde(borrow, rename = "ownerReferences", deserialize_with = "controller_owner")]
    pub controller: Option<ApiKind<'a>>,
}

/// An `apiVersion` and a `kind`.
pub type ApiKind<'a> = (Cow<'a, str>, Cow<'a, str>);

impl Metadata<'_> {
    /// The metadata with its own copies of the strings.
    pub fn into_owned(self) -> Metadata<'static> {
        let own = |s: Option<Cow<str>>| s.map(|s| Cow::Owned(s.into_owned()));
        let own_map = |m: StringMap| {
            m.into_iter().map(|(k, v)| (Cow::Owned(k.into_owned()), Cow::Owned(v.into_owned()))).collect()
        };
        Metadata {
            name: own(self.name),
            generate_name: own(self.generate_name),
            namespace: own(self.namespace),
            labels: own_map(self.labels),
            annotations: own_map(self.annotations),
            controller: self.controller.map(|(a, k)| (Cow::Owned(a.into_owned()), Cow::Owned(k.into_owned()))),
        }
    }
}

fn lent<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    Ok(Option::<Text<'de>>::deserialize(d)?.map(|t| t.0))
}

/// One `ownerReferences` entry, as far as [`controller_owner`] reads it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerReference<'a> {
    #[serde(borrow, default, deserialize_with = "lent")]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lent")]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    controller: Option<bool>,
}

/// The `ownerReferences` entry with `controller: true` (the apiserver allows one at most).
fn controller_owner<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ApiKind<'de>>, D::Error> {
    let owners: Option<Vec<OwnerReference<'de>>> = Option::deserialize(d)?;
    Ok(owners
        .into_iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| (o.api_version.unwrap_or_default(), o.kind.unwrap_or_default())))
}

/// A `map[string]string` as Go reads it: `null` for the map or a value is empty.
fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<StringMap<'de>, D::Error> {
    struct Pairs;
    impl<'de> serde::de::Visitor<'de> for Pairs {
        type Value = StringMap<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map of strings")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
            while let Some((k, v)) = map.next_entry::<Text<'de>, Option<Text<'de>>>()? {
                pairs.push((k.0, v.map(|v| v.0).unwrap_or_default()));
            }
            Ok(pairs)
        }
    }
    d.deserialize_any(Pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_rules_use_and_skips_the_rest() {
        let meta: ObjectMeta = crate::decode::from_json(&json!({
            "name": "p", "generateName": "p-", "namespace": "ml", "deletionTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"a": "b"}, "annotations": {"c": "d"}, "managedFields": [{"manager": "kubectl"}]
        }))
        .unwrap();
        assert_eq!(
            (meta.name.as_deref(), meta.generate_name.as_deref(), meta.namespace.as_deref()),
            (Some("p"), Some("p-"), Some("ml"))
        );
        assert!(meta.deletion_timestamp.is_some());
        // Skipped fields are not even type-checked: the apiserver has done that.
        assert!(crate::decode::from_json::<ObjectMeta>(&json!({"labels": 7})).is_ok());
        assert_eq!(
            crate::decode::from_json::<ObjectMeta>(&json!({"name": 7})).unwrap_err(),
            "name: invalid type: integer `7`, expected a string"
        );
        let full: Metadata = crate::decode::from_str(
            r#"{"name": "p", "labels": {"a": "b", "c": null}, "annotations": null, "managedFields": [{"x": 1}]}"#,
        )
        .unwrap();
        assert_eq!(full.name.as_deref(), Some("p"));
        assert_eq!(full.labels, [("a".into(), "b".into()), ("c".into(), "".into())]);
        assert!(full.annotations.is_empty());
        assert!(matches!(full.name, Some(Cow::Borrowed(_))));
        assert_eq!(
            crate::decode::from_str::<Metadata>(r#"{"labels": {"a": 1}}"#).unwrap_err(),
            "labels.a: invalid type: integer `1`, expected a string"
        );
        let owned: Metadata = crate::decode::from_str(
            r#"{"ownerReferences": [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "name": "w"},
                {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "1", "controller": true}]}"#,
        )
        .unwrap();
        assert_eq!(owned.controller, Some(("batch/v1".into(), "Job".into())));
        let uncontrolled: Metadata = crate::decode::from_str(
            r#"{"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "controller": false}]}"#,
        )
        .unwrap();
        assert_eq!(uncontrolled.controller, None);
        assert_eq!(crate::decode::from_str::<Metadata>(r#"{"ownerReferences": null}"#).unwrap().controller, None);
        let template: TemplateMeta =
            crate::decode::from_json(&json!({"labels": {"a": "b"}, "annotations": {"k": "v"}})).unwrap();
        assert_eq!(template.annotations.unwrap()["k"], "v");
    }
}

//! The parts of an object's `metadata` the rules read. Labels, annotations, managedFields
//! and the rest are skipped unread: a Pod may carry megabytes of them, and decoding them
//! into maps would cost more than every rule together.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
        let template: TemplateMeta =
            crate::decode::from_json(&json!({"labels": {"a": "b"}, "annotations": {"k": "v"}})).unwrap();
        assert_eq!(template.annotations.unwrap()["k"], "v");
    }
}

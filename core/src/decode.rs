//! Decoding JSON into typed objects with the path of the first field that does not fit.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `value` as `T`; the error names the field path, e.g.
/// `spec.schedulingPolicy.gang.minCount: invalid type: string "4", expected i32`.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    from_json(&value)
}

/// Decodes `value` as `T` without taking it. Every decode goes through here, so each type's
/// decoding code is compiled once (it adds up in the policy modules).
pub fn from_json<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." { e.inner().to_string() } else { format!("{path}: {}", e.inner()) }
    })
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

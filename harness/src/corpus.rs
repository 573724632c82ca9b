//! The upstream manifest corpus (`e2e-tests/corpus/`, a copy of the project's shared corpus)
//! turned into cases: each document is sent to each policy with default settings, and the
//! answer must be what `corpus/expectations.yaml` says for that file.
//!
//! Documents of one file are applied in order, so each sees the ones before it in the
//! cluster (a Workload, then its PodGroup, then the Pod). scheduler_perf templates are
//! instantiated with the parameters given in the expectations, as its harness does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::case::{Case, Expect};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FileExpectation {
    /// Why the file behaves as it does (shown when a case fails).
    pub why: String,
    /// Every document is accepted by every policy with default settings.
    #[serde(default)]
    pub valid: bool,
    /// The file is not YAML; its raw text is sent as the payload and must be refused.
    #[serde(default)]
    pub unparseable: bool,
    /// scheduler_perf template parameters, e.g. `{Index: 3, podsPerGroup: 3}`.
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    /// Objects that exist in the cluster before the file is applied.
    #[serde(default)]
    pub cluster: Vec<Value>,
    /// For a file that is not valid: the answer of each policy.
    #[serde(default)]
    pub expect: BTreeMap<String, Expect>,
    /// In a file of several documents, the one `expect` is about (0-based); every other
    /// document must be accepted, with no warning, by every policy.
    #[serde(default)]
    pub document: Option<usize>,
}

/// The cluster a corpus folder was written for: `kubernetes/` holds Kubernetes 1.36
/// manifests (`scheduling.k8s.io/v1alpha2`), `kubernetes-1.37/` and `controller-made/`
/// Kubernetes 1.37 ones (`v1beta1` and `v1alpha3`). Other folders need no scheduling versions.
fn served_api_versions(rel: &str) -> Option<Vec<String>> {
    let versions: &[&str] = if rel.starts_with("kubernetes/") {
        &["scheduling.k8s.io/v1alpha2"]
    } else if rel.starts_with("kubernetes-1.37/") || rel.starts_with("controller-made/") {
        &["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"]
    } else {
        return None;
    };
    Some(versions.iter().map(|v| v.to_string()).collect())
}

/// One corpus document as a case, named `<file>#<document index>`.
pub struct CorpusCase {
    pub name: String,
    pub case: Case,
}

pub fn corpus_dir() -> PathBuf {
    crate::repo_root().join("e2e-tests").join("corpus")
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "yaml")
            && path.file_name().is_some_and(|n| n != "expectations.yaml")
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Replaces `{{.X}}`, `{{DivideInt .X .Y}}` and `{{Mod .X .Y}}` with their values.
pub fn instantiate(text: &str, params: &BTreeMap<String, i64>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").ok_or("unclosed {{")? + start;
        let words: Vec<&str> = rest[start + 2..end].split_whitespace().collect();
        let param = |w: &str| {
            w.strip_prefix('.')
                .and_then(|name| params.get(name).copied())
                .ok_or_else(|| format!("no parameter for {w} (add it to params)"))
        };
        let value = match words.as_slice() {
            [one] => param(one)?,
            ["DivideInt", a, b] => param(a)? / param(b)?,
            ["Mod", a, b] => param(a)? % param(b)?,
            other => return Err(format!("unknown template expression {other:?}")),
        };
        out.push_str(&value.to_string());
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every corpus document as a case for `policy`.
pub fn cases(policy: &str) -> Result<Vec<CorpusCase>, String> {
    let dir = corpus_dir();
    let expectations_path = dir.join("expectations.yaml");
    let text =
        std::fs::read_to_string(&expectations_path).map_err(|e| format!("{}: {e}", expectations_path.display()))?;
    let expectations: BTreeMap<String, FileExpectation> =
        serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", expectations_path.display()))?;
    let mut files = Vec::new();
    yaml_files(&dir, &mut files)?;
    let mut out = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let exp = expectations
            .get(&rel)
            .ok_or_else(|| format!("{rel}: not in corpus/expectations.yaml; say how it must behave"))?;
        let raw = std::fs::read_to_string(&path).map_err(|e| format!("{rel}: {e}"))?;
        let accepted = Expect {
            accepted: true,
            code: None,
            message: Vec::new(),
            warnings: Vec::new(),
            host_calls: None,
            mutated: None,
            settings_error: None,
            request_error: None,
        };
        // What document `index` of `documents` must get.
        let expect_for = |index: usize, documents: usize| -> Result<Expect, String> {
            if exp.valid {
                return Ok(accepted.clone());
            }
            match exp.document {
                None if documents != 1 => {
                    return Err(format!(
                        "{rel}: an invalid file of several documents must name the one it expects (document)"
                    ));
                }
                Some(d) if d >= documents => return Err(format!("{rel}: it has no document {d}")),
                Some(d) if d != index => return Ok(accepted.clone()),
                _ => {}
            }
            exp.expect
                .get(policy)
                .cloned()
                .ok_or_else(|| format!("{rel}: expectations give no answer for the {policy} policy"))
        };
        let base = Case {
            description: exp.why.clone(),
            operation: None,
            object: None,
            old_object: None,
            request: None,
            raw_payload: None,
            settings: Value::Null,
            cluster: exp.cluster.clone(),
            cluster_error: None,
            served_api_versions: served_api_versions(&rel),
            node_sets: Vec::new(),
            expect: None,
        };
        if exp.unparseable {
            if serde_norway::from_str::<Value>(&raw).is_ok() {
                return Err(format!("{rel}: marked unparseable, but it parses"));
            }
            let case = Case { raw_payload: Some(raw.clone()), expect: Some(expect_for(0, 1)?), ..base };
            out.push(CorpusCase { name: rel.clone(), case });
            continue;
        }
        let text = instantiate(&raw, &exp.params).map_err(|e| format!("{rel}: {e}"))?;
        let mut documents = Vec::new();
        for doc in serde_norway::Deserializer::from_str(&text) {
            let value = Value::deserialize(doc).map_err(|e| format!("{rel}: {e}"))?;
            if !value.is_null() {
                documents.push(value);
            }
        }
        let count = documents.len();
        let mut cluster = exp.cluster.clone();
        for (i, document) in documents.into_iter().enumerate() {
            let case = Case {
                object: Some(document.clone()),
                cluster: cluster.clone(),
                expect: Some(expect_for(i, count)?),
                ..base.clone()
            };
            out.push(CorpusCase { name: format!("{rel}#{i}"), case });
            let mut applied = document;
            if applied["metadata"]["namespace"].is_null() {
                applied["metadata"]["namespace"] = Value::from("default");
            }
            cluster.push(applied);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instantiates_scheduler_perf_templates() {
        let params =
            BTreeMap::from([("Index".to_string(), 7), ("podsPerGroup".to_string(), 3), ("Count".to_string(), 4)]);
        assert_eq!(instantiate("gang-{{DivideInt .Index .podsPerGroup}}", &params).unwrap(), "gang-2");
        assert_eq!(instantiate("c-{{Mod .Index .Count}}/{{.Index}}", &params).unwrap(), "c-3/7");
        assert!(instantiate("{{.Missing}}", &params).unwrap_err().contains("no parameter for .Missing"));
    }
}

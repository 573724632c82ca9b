//! The one Node list a request's keys are checked against (T-09, the domain-size warning).

use super::*;

/// A topology key to look for on the cluster's nodes.
pub(super) struct NodeLookup<'a> {
    pub(super) key: &'a str,
    /// Where the key was written.
    pub(super) path: Path,
    /// The gang's `minCount` and its path, for the domain-size warning.
    pub(super) gang: Option<(i32, Path)>,
}

/// How the cluster's nodes carry one label.
#[derive(Default)]
pub(super) struct LabelStats<'a> {
    nodes: usize,
    /// Nodes per label value (per topology domain).
    domains: HashMap<Cow<'a, str>, usize>,
}

/// The label statistics of a Node list, read straight from the host's JSON answer: only the
/// values of the labels asked about are kept, so the cost is one pass over the text with no
/// allocation per node.
pub(super) struct NodeLabels<'k, 'a> {
    /// Every label of every Node is looked up here: a few string comparisons against the keys
    /// asked about (usually one or two) cost far less than hashing each label.
    stats: BTreeMap<&'k str, LabelStats<'a>>,
    nodes: usize,
}

impl<'k, 'a> NodeLabels<'k, 'a> {
    fn read(keys: impl Iterator<Item = &'k str>, list: &'a str) -> Result<NodeLabels<'k, 'a>, String> {
        let mut out = NodeLabels { stats: keys.map(|k| (k, LabelStats::default())).collect(), nodes: 0 };
        let mut reader = serde_json::Deserializer::from_str(list);
        let list = NodeItem(&mut out, NodePart::List);
        serde::de::DeserializeSeed::deserialize(list, &mut reader).map_err(|e| e.to_string())?;
        reader.end().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

/// A part of the list answer, read for the labels asked about: the list itself (only `items`
/// is read), its items, a Node (only `metadata`), its metadata (only `labels`) or its labels.
pub(super) struct NodeItem<'s, 'k, 'a>(&'s mut NodeLabels<'k, 'a>, NodePart);
#[derive(Clone, Copy, PartialEq)]
enum NodePart {
    List,
    Items,
    Object,
    Metadata,
    Labels,
}

impl<'de: 'a, 'a> serde::de::DeserializeSeed<'de> for NodeItem<'_, '_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // `null` (no items, no metadata, no labels) reads as empty.
        d.deserialize_option(self)
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for NodeItem<'_, '_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if self.1 == NodePart::Items { "a list of Nodes" } else { "an object" })
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.1 == NodePart::Items { d.deserialize_seq(self) } else { d.deserialize_map(self) }
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NodeItem(&mut *self.0, NodePart::Object))?.is_some() {
            self.0.nodes += 1;
        }
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let NodeItem(out, part) = self;
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let inner = match (part, key.as_ref()) {
                (NodePart::List, "items") => NodePart::Items,
                (NodePart::Object, "metadata") => NodePart::Metadata,
                (NodePart::Metadata, "labels") => NodePart::Labels,
                (NodePart::Labels, label) => {
                    match out.stats.get_mut(label) {
                        Some(s) => {
                            let value = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0).unwrap_or_default();
                            s.nodes += 1;
                            *s.domains.entry(value).or_default() += 1;
                        }
                        None => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                    continue;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            map.next_value_seed(NodeItem(&mut *out, inner))?;
        }
        Ok(())
    }
}

/// T-09 and the domain-size warning: one list of every Node's labels answers all keys.
pub(super) fn check_nodes(settings: &Settings, lookups: &[NodeLookup], cluster: &dyn Cluster, v: &mut Verdict) {
    let Some(first) = lookups.first() else { return };
    let query = Query { api_version: "v1", kind: "Node", namespace: None, field_masks: &["metadata.labels"] };
    let list = match cluster.list(&query) {
        Ok(list) => list,
        Err(e) => {
            v.lookup_failed(KEY_ON_NODES, first.path.clone(), "Nodes", &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let labels = match NodeLabels::read(lookups.iter().map(|l| l.key), &list) {
        Ok(labels) => labels,
        Err(e) => {
            let e = LookupError::Failed(format!("cannot read the Node list: {e}"));
            v.lookup_failed(KEY_ON_NODES, first.path.clone(), "Nodes", &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let checked = plural(labels.nodes, "node");
    for lookup in lookups {
        let Some(s) = labels.stats.get(lookup.key) else { continue };
        if s.nodes == 0 {
            v.deny(
                KEY_ON_NODES,
                FieldError::invalid(
                    lookup.path.clone(),
                    lookup.key,
                    format!(
                        "no node carries the label {:?} (checked {checked}), and the scheduler only places pods on nodes that have it, so these pods could never be scheduled",
                        lookup.key
                    ),
                ),
            );
            continue;
        }
        let largest = s.domains.values().copied().max().unwrap_or_default();
        if let Some((min_count, path)) =
            lookup.gang.as_ref().filter(|(n, _)| usize::try_from(*n).is_ok_and(|n| n > largest))
        {
            v.warn(
                DOMAIN_SIZE,
                path.clone(),
                format!(
                    "{min_count} is larger than the largest {:?} domain ({}): the {} carrying the label form {}, so the gang can never fit with one pod per node",
                    lookup.key,
                    plural(largest, "node"),
                    plural(s.nodes, "node"),
                    plural(s.domains.len(), "distinct domain"),
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_list_is_read_for_the_labels_asked_about() {
        let list = r#"{"kind": "NodeList", "metadata": {"resourceVersion": "7"}, "items": [
            {"metadata": {"name": "a", "labels": {"rack": "r1", "zone": "z1", "other": "x"}}},
            {"metadata": {"labels": {"rack": "r\u0031"}}, "status": {"images": []}},
            {"metadata": {"labels": {"rack": null}}},
            {"metadata": {"labels": null}},
            {"metadata": null},
            null
        ]}"#;
        let read = NodeLabels::read(["rack", "zone"].into_iter(), list).unwrap();
        assert_eq!(read.nodes, 6);
        let rack = &read.stats["rack"];
        assert_eq!(rack.nodes, 3);
        assert_eq!((rack.domains["r1"], rack.domains[""]), (2, 1), "an escaped value is the same domain");
        assert_eq!((read.stats["zone"].nodes, read.stats["zone"].domains.len()), (1, 1));
        assert_eq!(NodeLabels::read(["rack"].into_iter(), r#"{"items": null}"#).unwrap().nodes, 0);
        assert_eq!(NodeLabels::read(["rack"].into_iter(), "{}").unwrap().nodes, 0);
        for bad in
            [r#"{"items": {}}"#, r#"{"items": [7]}"#, r#"{"items": [{"metadata": {"labels": {"rack": 1}}}]}"#, "[", ""]
        {
            assert!(NodeLabels::read(["rack"].into_iter(), bad).is_err(), "{bad}");
        }
    }
}

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

/// How the Nodes of one list answer carry one label, read straight from the host's JSON text:
/// one pass with no allocation per node, which stops as soon as the answer is known.
pub(super) struct NodeLabels<'k, 'a> {
    key: &'k str,
    /// Stop reading once a domain has this many nodes: no gang asked about is larger.
    enough: usize,
    /// The list's items, whatever labels they carry.
    items: usize,
    /// The items carrying `key`, and how many of them each value (topology domain) has.
    nodes: usize,
    domains: HashMap<Cow<'a, str>, usize>,
    largest: usize,
    /// Set when `enough` was reached and the rest of the list left unread.
    stopped: bool,
}

impl<'k, 'a> NodeLabels<'k, 'a> {
    fn read(key: &'k str, enough: usize, list: &'a str) -> Result<NodeLabels<'k, 'a>, String> {
        let mut out =
            NodeLabels { key, enough, items: 0, nodes: 0, domains: HashMap::new(), largest: 0, stopped: false };
        let mut reader = serde_json::Deserializer::from_str(list);
        let read = serde::de::DeserializeSeed::deserialize(NodeItem(&mut out, NodePart::List), &mut reader);
        match read {
            // Stopping early is the visitor's way out of a half-read list, not a failure.
            Err(_) if out.stopped => {}
            read => {
                read.map_err(|e| e.to_string())?;
                reader.end().map_err(|e| e.to_string())?;
            }
        }
        Ok(out)
    }

    fn count(&mut self, value: Cow<'a, str>) {
        self.nodes += 1;
        let domain = self.domains.entry(value).or_default();
        *domain += 1;
        self.largest = self.largest.max(*domain);
    }
}

/// A part of the list answer, read for the label asked about: the list itself (only `items`
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
            self.0.items += 1;
            if self.0.largest >= self.0.enough {
                self.0.stopped = true;
                return Err(serde::de::Error::custom("stopped"));
            }
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
                (NodePart::Labels, label) if label == out.key => {
                    let value = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0).unwrap_or_default();
                    out.count(value);
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

/// The Node list query: labels are all the rules read (policy-server still sends each Node's
/// whole `metadata`: its masks prune only the body). With a selector, only the Nodes that
/// carry the key; each distinct selector is one watch in policy-server.
fn node_query(selector: Option<&str>) -> Query<'_> {
    Query {
        api_version: "v1",
        kind: "Node",
        namespace: None,
        field_masks: &["metadata.labels"],
        label_selector: selector,
    }
}

/// T-09 and the domain-size warning. Each distinct key costs one list of the Nodes that carry
/// it, read only until the answer is known: the first such node when no gang is asked about,
/// else the first domain as large as the largest gang (a gang larger than every domain reads
/// the whole list, to say how large they are). A key no node carries costs one more list, of
/// every Node, for the count its rejection gives.
pub(super) fn check_nodes(settings: &Settings, lookups: &[NodeLookup], cluster: &dyn Cluster, v: &mut Verdict) {
    // Distinct keys in the order they were written, each with the largest gang that uses it
    // and where it was first written (a failed lookup is reported there).
    let mut keys: Vec<(&str, usize, &Path)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for lookup in lookups {
        let gang = lookup.gang.as_ref().map_or(1, |(n, _)| usize::try_from(*n).unwrap_or(1).max(1));
        let i = *index.entry(lookup.key).or_insert_with(|| {
            keys.push((lookup.key, 1, &lookup.path));
            keys.len() - 1
        });
        keys[i].1 = keys[i].1.max(gang);
    }
    let failed = |v: &mut Verdict, path: &Path, e: &LookupError| {
        v.lookup_failed(KEY_ON_NODES, path.clone(), "Nodes", e, settings.fail_on_lookup_error)
    };
    let read = |selector: Option<&str>, key, enough| -> Result<KeyNodes, LookupError> {
        let list = cluster.list(&node_query(selector))?;
        NodeLabels::read(key, enough, &list)
            .map(|l| KeyNodes { items: l.items, nodes: l.nodes, domains: l.domains.len(), largest: l.largest })
            .map_err(|e| LookupError::Failed(format!("cannot read the Node list: {e}")))
    };
    let mut stats: HashMap<&str, KeyNodes> = HashMap::new();
    let mut every_node: Option<usize> = None;
    for (key, enough, path) in keys {
        let mut labels = match read(Some(key), key, enough) {
            Ok(labels) => labels,
            Err(e) => return failed(v, path, &e),
        };
        // A host that honours the selector answers nothing here; the count is a full list's.
        if labels.items == 0 {
            match every_node.map(Ok).unwrap_or_else(|| read(None, key, usize::MAX).map(|all| all.items)) {
                Ok(n) => labels.items = *every_node.insert(n),
                Err(e) => return failed(v, path, &e),
            }
        }
        stats.insert(key, labels);
    }
    for lookup in lookups {
        let Some(s) = stats.get(lookup.key) else { continue };
        if s.nodes == 0 {
            let checked = plural(s.items, "node");
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
        if let Some((min_count, path)) =
            lookup.gang.as_ref().filter(|(n, _)| usize::try_from(*n).is_ok_and(|n| n > s.largest))
        {
            v.warn(
                DOMAIN_SIZE,
                path.clone(),
                format!(
                    "{min_count} is larger than the largest {:?} domain ({}): the {} carrying the label form {}, so the gang can never fit with one pod per node",
                    lookup.key,
                    plural(s.largest, "node"),
                    plural(s.nodes, "node"),
                    plural(s.domains, "distinct domain"),
                ),
            );
        }
    }
}

/// What one key's list said: its items, those carrying the key, their domains and the
/// largest domain's size (as far as the list was read).
struct KeyNodes {
    items: usize,
    nodes: usize,
    domains: usize,
    largest: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_list_is_read_for_the_label_asked_about() {
        let list = r#"{"kind": "NodeList", "metadata": {"resourceVersion": "7"}, "items": [
            {"metadata": {"name": "a", "labels": {"rack": "r1", "zone": "z1", "other": "x"}}},
            {"metadata": {"labels": {"rack": "r\u0031"}}, "status": {"images": []}},
            {"metadata": {"labels": {"rack": null}}},
            {"metadata": {"labels": null}},
            {"metadata": null},
            null
        ]}"#;
        let rack = NodeLabels::read("rack", usize::MAX, list).unwrap();
        assert_eq!((rack.items, rack.nodes, rack.largest, rack.stopped), (6, 3, 2, false));
        assert_eq!((rack.domains["r1"], rack.domains[""]), (2, 1), "an escaped value is the same domain");
        let zone = NodeLabels::read("zone", usize::MAX, list).unwrap();
        assert_eq!((zone.nodes, zone.domains.len()), (1, 1));
        assert_eq!(NodeLabels::read("rack", 1, r#"{"items": null}"#).unwrap().items, 0);
        assert_eq!(NodeLabels::read("rack", 1, "{}").unwrap().items, 0);
        for bad in
            [r#"{"items": {}}"#, r#"{"items": [7]}"#, r#"{"items": [{"metadata": {"labels": {"rack": 1}}}]}"#, "[", ""]
        {
            assert!(NodeLabels::read("rack", usize::MAX, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reading_stops_once_a_domain_is_large_enough() {
        // The rest of the list is never read, not even to see that it is broken.
        let list =
            r#"{"items": [{"metadata": {"labels": {"rack": "r1"}}}, {"metadata": {"labels": {"rack": "r1"}}}, 7"#;
        let read = NodeLabels::read("rack", 2, list).unwrap();
        assert_eq!((read.items, read.nodes, read.largest, read.stopped), (2, 2, 2, true));
        assert!(NodeLabels::read("rack", 3, list).is_err(), "a larger gang reads on, into the broken part");
        let first = NodeLabels::read("rack", 1, list).unwrap();
        assert_eq!((first.items, first.stopped), (1, true), "no gang: the first node carrying the key answers");
    }

    /// Counts the lists asked for, with their selectors.
    struct Lists(std::cell::RefCell<Vec<Option<String>>>, crate::cluster::MemoryCluster);
    impl Cluster for Lists {
        fn get(&self, q: &Query, name: &str) -> Result<Option<Box<serde_json::value::RawValue>>, LookupError> {
            self.1.get(q, name)
        }
        fn list(&self, q: &Query) -> Result<String, LookupError> {
            self.0.borrow_mut().push(q.label_selector.map(str::to_string));
            self.1.list(q)
        }
    }

    #[test]
    fn each_key_is_one_list_of_the_nodes_that_carry_it() {
        let node = |name: &str, rack: &str| serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"rack": rack}}});
        let cluster =
            Lists(Default::default(), crate::cluster::MemoryCluster::new(vec![node("a", "r1"), node("b", "r2")]));
        let at = |p: &str| Path::new(p);
        let lookups = [
            NodeLookup { key: "rack", path: at("a"), gang: None },
            NodeLookup { key: "rak", path: at("b"), gang: None },
            NodeLookup { key: "rack", path: at("c"), gang: Some((2, at("c.minCount"))) },
            NodeLookup { key: "zone", path: at("d"), gang: None },
        ];
        let mut v = Verdict::default();
        check_nodes(&Settings::default(), &lookups, &cluster, &mut v);
        let asked = cluster.0.borrow().clone();
        let asked: Vec<Option<&str>> = asked.iter().map(Option::as_deref).collect();
        assert_eq!(
            asked,
            [Some("rack"), Some("rak"), None, Some("zone")],
            "one full list, for the count, however many keys no node carries"
        );
        let message = v.message().unwrap();
        assert!(
            message.starts_with(r#"b: Invalid value: "rak": no node carries the label "rak" (checked 2 nodes)"#),
            "{message}"
        );
        assert!(
            message.contains(r#"d: Invalid value: "zone": no node carries the label "zone" (checked 2 nodes)"#),
            "{message}"
        );
        let warnings: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(
            warnings,
            [
                r#"c.minCount: 2 is larger than the largest "rack" domain (1 node): the 2 nodes carrying the label form 2 distinct domains, so the gang can never fit with one pod per node [topology.domain-size]"#
            ]
        );
    }
}

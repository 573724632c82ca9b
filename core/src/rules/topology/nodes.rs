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

/// The label keys the rules ask about, each with a slot in [`Node::labels`]: sorted, so a
/// Node's label is looked up by binary search, never by a scan of the keys.
pub(super) struct WantedLabels<'k>(Vec<&'k str>);

impl<'k> WantedLabels<'k> {
    pub(super) fn new(keys: impl IntoIterator<Item = &'k str>) -> Self {
        let mut keys: Vec<&str> = keys.into_iter().collect();
        keys.sort_unstable();
        keys.dedup();
        WantedLabels(keys)
    }

    pub(super) fn slot(&self, key: &str) -> Option<usize> {
        self.0.binary_search(&key).ok()
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// One Node of the list, as far as the rules read it: the values of the wanted labels
/// (`None`: the Node does not carry it). The buffers are reused from Node to Node.
pub(super) struct Node<'a> {
    pub(super) labels: Vec<Option<Cow<'a, str>>>,
    /// The slots of `labels` this Node carries, so that a Node costs what its own labels do,
    /// however many keys are wanted.
    carried: Vec<usize>,
}

impl<'a> Node<'a> {
    fn new(wanted: &WantedLabels) -> Self {
        Node { labels: vec![None; wanted.len()], carried: Vec::new() }
    }

    fn clear(&mut self) {
        for slot in self.carried.drain(..) {
            self.labels[slot] = None;
        }
    }

    fn set_label(&mut self, slot: usize, value: Cow<'a, str>) {
        if self.labels[slot].replace(value).is_none() {
            self.carried.push(slot);
        }
    }

    /// The wanted labels this Node carries: (slot, value).
    pub(super) fn carried(&self) -> impl Iterator<Item = (usize, &Cow<'a, str>)> {
        self.carried.iter().filter_map(|&slot| Some((slot, self.labels[slot].as_ref()?)))
    }
}

/// Whether to read on after a Node.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Flow {
    Continue,
    /// The verdict is known: the rest of the list is left unread.
    Stop,
}

/// Reads a Node list answer straight from the host's JSON text in one pass, handing each Node
/// to `each` until it says [`Flow::Stop`]. Only what the rules read is kept; no Node is
/// decoded whole. Returns how many Nodes were read.
pub(super) fn read_nodes<'a>(
    list: &'a str,
    wanted: &WantedLabels,
    mut each: impl FnMut(&Node<'a>) -> Flow,
) -> Result<usize, String> {
    let mut reader = ListReader { wanted, each: &mut each, node: Node::new(wanted), read: 0, stopped: false };
    let mut de = serde_json::Deserializer::from_str(list);
    let outcome = serde::de::DeserializeSeed::deserialize(Part(&mut reader, NodePart::List), &mut de);
    match outcome {
        // Stopping early is the reader's way out of a half-read list, not a failure.
        Err(_) if reader.stopped => {}
        outcome => {
            outcome.map_err(|e| e.to_string())?;
            de.end().map_err(|e| e.to_string())?;
        }
    }
    Ok(reader.read)
}

struct ListReader<'w, 'k, 'e, 'a> {
    wanted: &'w WantedLabels<'k>,
    each: &'e mut dyn FnMut(&Node<'a>) -> Flow,
    node: Node<'a>,
    read: usize,
    stopped: bool,
}

/// A part of the list answer: the list itself (only `items` is read), its items, a Node (only
/// `metadata`), its metadata (only `labels`) or its labels.
struct Part<'r, 'w, 'k, 'e, 'a>(&'r mut ListReader<'w, 'k, 'e, 'a>, NodePart);
#[derive(Clone, Copy, PartialEq)]
enum NodePart {
    List,
    Items,
    Object,
    Metadata,
    Labels,
}

impl<'de: 'a, 'a> serde::de::DeserializeSeed<'de> for Part<'_, '_, '_, '_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // `null` (no items, no metadata, no labels) reads as empty.
        d.deserialize_option(self)
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for Part<'_, '_, '_, '_, 'a> {
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
        let reader = self.0;
        loop {
            reader.node.clear();
            if seq.next_element_seed(Part(&mut *reader, NodePart::Object))?.is_none() {
                return Ok(());
            }
            reader.read += 1;
            if (reader.each)(&reader.node) == Flow::Stop {
                reader.stopped = true;
                return Err(serde::de::Error::custom("stopped"));
            }
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Part(reader, part) = self;
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let inner = match (part, key.as_ref()) {
                (NodePart::List, "items") => NodePart::Items,
                (NodePart::Object, "metadata") => NodePart::Metadata,
                (NodePart::Metadata, "labels") => NodePart::Labels,
                (NodePart::Labels, label) => {
                    match reader.wanted.slot(label) {
                        Some(slot) => {
                            let value = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0).unwrap_or_default();
                            reader.node.set_label(slot, value);
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
            map.next_value_seed(Part(&mut *reader, inner))?;
        }
        Ok(())
    }
}

/// The field masks of the Node list: labels are all these rules read (policy-server still
/// sends each Node's whole `metadata`: its masks prune only the body).
pub const NODE_FIELD_MASKS: &[&str] = &["metadata.labels"];

/// The one Node list every request asks for: fixed by the module, never by the request.
/// policy-server keeps a watch-fed store for each distinct list query for its whole life, so
/// a selector made of a topology key from the request would let any tenant open watches.
/// The rules filter the Nodes themselves.
pub(super) fn node_query() -> Query<'static> {
    Query { api_version: "v1", kind: "Node", namespace: None, field_masks: NODE_FIELD_MASKS }
}

/// What the Node list says of one key: the Nodes carrying it, how many each value (topology
/// domain) has and the largest domain's size, as far as the list was read.
struct KeyNodes<'a> {
    /// Stop counting once a domain has this many Nodes: no gang asked about is larger.
    enough: usize,
    nodes: usize,
    domains: HashMap<Cow<'a, str>, usize>,
    largest: usize,
}

impl<'a> KeyNodes<'a> {
    fn settled(&self) -> bool {
        self.largest >= self.enough
    }

    /// Takes the `Cow` itself: a value borrowed from the answer is kept without a copy.
    #[allow(clippy::ptr_arg)]
    fn count(&mut self, value: &Cow<'a, str>) {
        self.nodes += 1;
        let domain = match self.domains.get_mut(value.as_ref()) {
            Some(domain) => domain,
            None => self.domains.entry(value.clone()).or_default(),
        };
        *domain += 1;
        self.largest = self.largest.max(*domain);
    }
}

/// T-09 and the domain-size warning, from one list of every Node, read only until the answer
/// is known: until each key has a Node carrying it (no gang asked about) or a domain as large
/// as the largest gang that uses it. A key no Node carries, or a gang larger than every
/// domain, reads the whole list, for the figures its message gives.
pub(super) fn check_nodes(settings: &Settings, lookups: &[NodeLookup], cluster: &dyn Cluster, v: &mut Verdict) {
    let Some(first) = lookups.first() else { return };
    let wanted = WantedLabels::new(lookups.iter().map(|l| l.key));
    let mut keys: Vec<KeyNodes> =
        (0..wanted.len()).map(|_| KeyNodes { enough: 1, nodes: 0, domains: HashMap::new(), largest: 0 }).collect();
    for lookup in lookups {
        let gang = lookup.gang.as_ref().map_or(1, |(n, _)| usize::try_from(*n).unwrap_or(1).max(1));
        if let Some(slot) = wanted.slot(lookup.key) {
            keys[slot].enough = keys[slot].enough.max(gang);
        }
    }
    let failed = |v: &mut Verdict, e: &LookupError| {
        v.lookup_failed(KEY_ON_NODES, first.path.clone(), "Nodes", e, settings.fail_on_lookup_error)
    };
    let list = match cluster.list(&node_query()) {
        Ok(list) => list,
        Err(e) => return failed(v, &e),
    };
    let mut unsettled = keys.len();
    let read = read_nodes(&list, &wanted, |node| {
        for (slot, value) in node.carried() {
            let key = &mut keys[slot];
            let was = key.settled();
            key.count(value);
            unsettled -= usize::from(!was && key.settled());
        }
        if unsettled == 0 { Flow::Stop } else { Flow::Continue }
    });
    let items = match read {
        Ok(items) => items,
        Err(e) => return failed(v, &LookupError::Failed(format!("cannot read the Node list: {e}"))),
    };
    for lookup in lookups {
        let Some(s) = wanted.slot(lookup.key).map(|slot| &keys[slot]) else { continue };
        if s.nodes == 0 {
            let checked = plural(items, "node");
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
                    plural(s.domains.len(), "distinct domain"),
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of `keys` on each Node read.
    type Seen = Vec<Vec<Option<String>>>;

    /// Every Node read, as (the values of `keys`), until `stop_after` Nodes.
    fn read_all(list: &str, keys: &[&str], stop_after: usize) -> Result<(usize, Seen), String> {
        let wanted = WantedLabels::new(keys.iter().copied());
        let mut seen = Vec::new();
        let read = read_nodes(list, &wanted, |node| {
            seen.push(
                keys.iter().map(|k| node.labels[wanted.slot(k).unwrap()].as_deref().map(str::to_string)).collect(),
            );
            if seen.len() >= stop_after { Flow::Stop } else { Flow::Continue }
        })?;
        Ok((read, seen))
    }

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
        let s = |v: &str| Some(v.to_string());
        let (read, seen) = read_all(list, &["zone", "rack"], usize::MAX).unwrap();
        assert_eq!(read, 6);
        assert_eq!(
            seen,
            [
                vec![s("z1"), s("r1")],
                vec![None, s("r1")],
                vec![None, s("")],
                vec![None, None],
                vec![None, None],
                vec![None, None]
            ],
            "an escaped value is the same value; a null label is an empty one; a label of another node never leaks"
        );
        assert_eq!(read_all(r#"{"items": null}"#, &["rack"], 1).unwrap().0, 0);
        assert_eq!(read_all("{}", &["rack"], 1).unwrap().0, 0);
        for bad in
            [r#"{"items": {}}"#, r#"{"items": [7]}"#, r#"{"items": [{"metadata": {"labels": {"rack": 1}}}]}"#, "[", ""]
        {
            assert!(read_all(bad, &["rack"], usize::MAX).is_err(), "{bad}");
        }
    }

    #[test]
    fn reading_stops_when_told() {
        // The rest of the list is never read, not even to see that it is broken.
        let list =
            r#"{"items": [{"metadata": {"labels": {"rack": "r1"}}}, {"metadata": {"labels": {"rack": "r1"}}}, 7"#;
        assert_eq!(read_all(list, &["rack"], 2).unwrap().0, 2);
        assert!(read_all(list, &["rack"], 3).is_err(), "reading on reaches the broken part");
    }

    /// Records the lists asked for.
    struct Lists(std::cell::RefCell<Vec<String>>, crate::cluster::MemoryCluster);
    impl Cluster for Lists {
        fn get(&self, q: &Query, name: &str) -> Result<Option<Box<serde_json::value::RawValue>>, LookupError> {
            self.1.get(q, name)
        }
        fn list(&self, q: &Query) -> Result<String, LookupError> {
            self.0.borrow_mut().push(format!("{q:?}"));
            self.1.list(q)
        }
    }

    fn node(name: &str, rack: &str) -> serde_json::Value {
        serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"rack": rack}}})
    }

    #[test]
    fn every_key_is_checked_against_one_fixed_list() {
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
        assert_eq!(*cluster.0.borrow(), [format!("{:?}", node_query())], "one list, whatever the keys");
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
        // Other keys, the same query.
        let other = [NodeLookup { key: "topology.example.com/made-up", path: at("e"), gang: None }];
        check_nodes(&Settings::default(), &other, &cluster, &mut Verdict::default());
        let asked = cluster.0.borrow();
        assert_eq!((asked.len(), &asked[0]), (2, &asked[1]));
        // No key, no list.
        check_nodes(&Settings::default(), &[], &cluster, &mut Verdict::default());
        assert_eq!(cluster.0.borrow().len(), 2);
    }

    #[test]
    fn the_list_is_read_until_every_key_is_answered() {
        // The answer is cut after the second Node: a reader that went on would fail.
        let list = r#"{"items": [{"metadata": {"labels": {"rack": "r1", "zone": "z"}}}, {"metadata": {"labels": {"rack": "r1"}}}, 7"#;
        struct Cut(&'static str);
        impl Cluster for Cut {
            fn get(&self, _: &Query, _: &str) -> Result<Option<Box<serde_json::value::RawValue>>, LookupError> {
                Ok(None)
            }
            fn list(&self, _: &Query) -> Result<String, LookupError> {
                Ok(self.0.to_string())
            }
        }
        let cut = Cut(Box::leak(list.to_string().into_boxed_str()));
        let at = |p: &str| Path::new(p);
        let answered = [
            NodeLookup { key: "zone", path: at("a"), gang: None },
            NodeLookup { key: "rack", path: at("b"), gang: Some((2, at("b.minCount"))) },
        ];
        let mut v = Verdict::default();
        check_nodes(&Settings::default(), &answered, &cut, &mut v);
        assert!(v.accepted() && v.warnings.is_empty(), "{:?} {:?}", v.message(), v.warnings);
        let larger = [NodeLookup { key: "rack", path: at("b"), gang: Some((3, at("b.minCount"))) }];
        let mut v = Verdict::default();
        check_nodes(&Settings::default(), &larger, &cut, &mut v);
        let warnings: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("b: cannot look up Nodes: cannot read the Node list: "), "{warnings:?}");
    }
}

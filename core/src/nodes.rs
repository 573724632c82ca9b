//! The cluster's Node list, read for what the rules ask of it: some labels, and for the
//! capacity rules each Node's name, taints and allocatable resources.
//!
//! A request makes at most one Node list, and its query is fixed by the module and its
//! settings ([`node_query`]): policy-server keeps a watch-fed store for each distinct list
//! query for its whole life, so a selector made of request data would let any tenant open
//! watches. The rules filter the Nodes here instead, in one pass over the host's JSON text,
//! keeping only what was asked for, and stop reading once the verdict is known.

use std::borrow::Cow;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::cluster::Query;
use crate::decode::Text;
use crate::quantity::{number_text, scheduler_units};

/// The field masks of the Node list: labels for the topology keys; taints and allocatable
/// resources too when the capacity rules run (policy-server sends each Node's `metadata`
/// whole whatever the masks say: they prune only the body).
pub const LABEL_MASKS: &[&str] = &["metadata.labels"];
pub const CAPACITY_MASKS: &[&str] = &["metadata.labels", "spec.taints", "status.allocatable"];

/// The Node list query with `masks`: every Node, no selector.
pub fn node_query(masks: &'static [&'static str]) -> Query<'static> {
    Query { api_version: "v1", kind: "Node", namespace: None, field_masks: masks }
}

/// Names asked about (label keys, resource names), each with a slot: sorted, so a Node's
/// entry is found by binary search, never by a scan of what was asked.
#[derive(Clone, Debug, Default)]
pub struct Wanted<'k>(Vec<&'k str>);

impl<'k> Wanted<'k> {
    pub fn new(names: impl IntoIterator<Item = &'k str>) -> Self {
        let mut names: Vec<&str> = names.into_iter().collect();
        names.sort_unstable();
        names.dedup();
        Wanted(names)
    }

    pub fn slot(&self, name: &str) -> Option<usize> {
        self.0.binary_search(&name).ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn name(&self, slot: usize) -> &'k str {
        self.0[slot]
    }
}

/// What to keep of each Node.
#[derive(Clone, Debug, Default)]
pub struct NodeWants<'k> {
    pub labels: Wanted<'k>,
    /// Allocatable resources by name (in the scheduler's units); empty: neither allocatable
    /// nor taints are read.
    pub resources: Wanted<'k>,
}

/// A taint the scheduler keeps pods off a Node with (`NoSchedule`, `NoExecute`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint<'a> {
    pub key: Cow<'a, str>,
    pub value: Cow<'a, str>,
    pub effect: Cow<'a, str>,
}

/// Taints the node lifecycle, cloud-provider and autoscaler controllers set for a passing
/// state (not ready, unreachable, cordoned, under pressure, uninitialized, being scaled in):
/// they come and go on their own, so a pod they keep off a node today may fit it tomorrow,
/// and the capacity rules do not count them.
pub fn is_passing_taint(key: &str) -> bool {
    key.starts_with("node.kubernetes.io/")
        || key.starts_with("node.cloudprovider.kubernetes.io/")
        || key.starts_with("karpenter.sh/")
        || key == "ToBeDeletedByClusterAutoscaler"
}

/// One Node of the list, as far as the rules read it. The buffers are reused from Node to
/// Node.
pub struct Node<'a> {
    pub name: Option<Cow<'a, str>>,
    labels: Vec<Option<Cow<'a, str>>>,
    /// The label slots this Node fills, so a Node costs what its own labels do, however many
    /// keys are wanted.
    carried: Vec<usize>,
    /// The taints that keep pods off (see [`Taint`], [`is_passing_taint`]).
    pub taints: Vec<Taint<'a>>,
    /// `status.allocatable` by resource slot; `None` for a resource the Node does not list
    /// (the scheduler counts it as zero) or lists with an amount that cannot be read.
    pub allocatable: Vec<Option<u64>>,
    /// Whether the Node has `status.allocatable` at all: without it (a Node written by hand,
    /// or not yet registered) its capacity is unknown and no claim is made about it.
    pub has_allocatable: bool,
    /// Amounts that could not be read, by slot: unknown, like a missing `allocatable`.
    unreadable: Vec<bool>,
}

impl<'a> Node<'a> {
    fn new(wants: &NodeWants) -> Self {
        Node {
            name: None,
            labels: vec![None; wants.labels.len()],
            carried: Vec::new(),
            taints: Vec::new(),
            allocatable: vec![None; wants.resources.len()],
            has_allocatable: false,
            unreadable: vec![false; wants.resources.len()],
        }
    }

    fn clear(&mut self) {
        self.name = None;
        for slot in self.carried.drain(..) {
            self.labels[slot] = None;
        }
        self.taints.clear();
        self.allocatable.iter_mut().for_each(|a| *a = None);
        self.unreadable.iter_mut().for_each(|u| *u = false);
        self.has_allocatable = false;
    }

    fn set_label(&mut self, slot: usize, value: Cow<'a, str>) {
        if self.labels[slot].replace(value).is_none() {
            self.carried.push(slot);
        }
    }

    /// The value of wanted label `slot`, when the Node carries it.
    pub fn label(&self, slot: usize) -> Option<&str> {
        self.labels[slot].as_deref()
    }

    /// The wanted labels this Node carries: (slot, value).
    pub fn carried(&self) -> impl Iterator<Item = (usize, &Cow<'a, str>)> {
        self.carried.iter().filter_map(|&slot| Some((slot, self.labels[slot].as_ref()?)))
    }

    /// The amount of resource `slot` the Node lists, when it lists a readable one.
    pub fn listed(&self, slot: usize) -> Option<u64> {
        if self.unreadable[slot] { None } else { self.allocatable[slot] }
    }

    /// How much of resource `slot` the Node offers: `None` when that is unknown (no
    /// `status.allocatable`, or an amount that cannot be read), else the amount (zero when
    /// not listed).
    pub fn offers(&self, slot: usize) -> Option<u64> {
        if !self.has_allocatable || self.unreadable[slot] { None } else { Some(self.allocatable[slot].unwrap_or(0)) }
    }
}

/// Whether to read on after a Node.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flow {
    Continue,
    /// The verdict is known: the rest of the list is left unread.
    Stop,
}

/// Reads a Node list answer straight from the host's JSON text in one pass, handing each Node
/// to `each` until it says [`Flow::Stop`]. Only what `wants` asks for is kept; no Node is
/// decoded whole. Returns how many Nodes were read.
pub fn read_nodes<'a>(
    list: &'a str,
    wants: &NodeWants,
    mut each: impl FnMut(&Node<'a>) -> Flow,
) -> Result<usize, String> {
    let mut reader = ListReader {
        wants,
        each: &mut each,
        node: Node::new(wants),
        taint: Default::default(),
        specs: Vec::new(),
        statuses: Vec::new(),
        read: 0,
        stopped: false,
    };
    let mut de = serde_json::Deserializer::from_str(list);
    let outcome = Part(&mut reader, NodePart::List).deserialize(&mut de);
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
    wants: &'w NodeWants<'k>,
    each: &'e mut dyn FnMut(&Node<'a>) -> Flow,
    node: Node<'a>,
    /// The taint being read: key, value, effect.
    taint: [Cow<'a, str>; 3],
    /// The last few distinct `spec` and `status` texts and what was read of them: the Nodes of
    /// one node pool have the same taints and allocatable resources, so most Nodes are read
    /// by comparing two texts instead of parsing one.
    specs: Vec<(&'a str, Vec<Taint<'a>>)>,
    statuses: Vec<(&'a str, Status)>,
    read: usize,
    stopped: bool,
}

/// What a Node's `status` says: whether it lists allocatable resources, and each wanted one.
#[derive(Clone)]
struct Status {
    has_allocatable: bool,
    allocatable: Vec<Option<u64>>,
    unreadable: Vec<bool>,
}

/// How many distinct `spec` and `status` texts are remembered.
const REMEMBERED: usize = 8;

/// Remembers `entry`, replacing the oldest when [`REMEMBERED`] are kept.
fn remember<T>(cache: &mut Vec<T>, entry: T) {
    if cache.len() == REMEMBERED {
        cache.remove(0);
    }
    cache.push(entry);
}

/// A part of the list answer: the list itself (only `items` is read), its items, a Node
/// (`metadata`, `spec`, `status`), its metadata (`name`, `labels`), its labels, its spec
/// (`taints`), its taints, one taint (`key`, `value`, `effect`), its status (`allocatable`)
/// or its allocatable resources.
struct Part<'r, 'w, 'k, 'e, 'a>(&'r mut ListReader<'w, 'k, 'e, 'a>, NodePart);

#[derive(Clone, Copy, PartialEq)]
enum NodePart {
    List,
    Items,
    Object,
    Metadata,
    Labels,
    Spec,
    Taints,
    Taint,
    Status,
    Allocatable,
}

impl<'a> ListReader<'_, '_, '_, 'a> {
    /// A Node's `spec` (`spec` true) or `status`: taken from a Node read before with the same
    /// text, else read from the text.
    fn read_part(&mut self, text: &'a str, spec: bool) -> Result<(), serde_json::Error> {
        if spec {
            if let Some((_, taints)) = self.specs.iter().find(|(t, _)| *t == text) {
                self.node.taints.extend_from_slice(taints);
                return Ok(());
            }
        } else if let Some((_, status)) = self.statuses.iter().find(|(t, _)| *t == text) {
            self.node.has_allocatable = status.has_allocatable;
            self.node.allocatable.clone_from(&status.allocatable);
            self.node.unreadable.clone_from(&status.unreadable);
            return Ok(());
        }
        let part = if spec { NodePart::Spec } else { NodePart::Status };
        let mut de = serde_json::Deserializer::from_str(text);
        Part(&mut *self, part).deserialize(&mut de)?;
        if spec {
            remember(&mut self.specs, (text, self.node.taints.clone()));
        } else {
            let status = Status {
                has_allocatable: self.node.has_allocatable,
                allocatable: self.node.allocatable.clone(),
                unreadable: self.node.unreadable.clone(),
            };
            remember(&mut self.statuses, (text, status));
        }
        Ok(())
    }
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for Part<'_, '_, '_, '_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // `null` (no items, no metadata, no labels, ...) reads as empty.
        d.deserialize_option(self)
    }
}

/// An allocatable amount of `0` (a resource name), read in the scheduler's units straight
/// from the text: a string, or a number (int-or-string); `None` when it is not a quantity.
struct Amount<'r>(&'r str);

impl<'de> DeserializeSeed<'de> for Amount<'_> {
    type Value = Option<u64>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for Amount<'_> {
    type Value = Option<u64>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a quantity")
    }
    fn visit_str<E>(self, v: &str) -> Result<Option<u64>, E> {
        Ok(scheduler_units(self.0, v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Option<u64>, E> {
        Ok(scheduler_units(self.0, &v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Option<u64>, E> {
        Ok(scheduler_units(self.0, &v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Option<u64>, E> {
        Ok(scheduler_units(self.0, &number_text(v)))
    }
    fn visit_unit<E>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Part<'_, '_, '_, '_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self.1 {
            NodePart::Items => "a list of Nodes",
            NodePart::Taints => "a list of taints",
            _ => "an object",
        })
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.1 {
            NodePart::Items | NodePart::Taints => d.deserialize_seq(self),
            _ => d.deserialize_map(self),
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Part(reader, part) = self;
        if part == NodePart::Taints {
            loop {
                reader.taint = Default::default();
                if seq.next_element_seed(Part(&mut *reader, NodePart::Taint))?.is_none() {
                    return Ok(());
                }
                let [key, value, effect] = std::mem::take(&mut reader.taint);
                if matches!(effect.as_ref(), "NoSchedule" | "NoExecute") && !is_passing_taint(&key) {
                    reader.node.taints.push(Taint { key, value, effect });
                }
            }
        }
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
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Part(reader, part) = self;
        let capacity = !reader.wants.resources.is_empty();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let inner = match (part, key.as_ref()) {
                (NodePart::List, "items") => NodePart::Items,
                (NodePart::Object, "metadata") => NodePart::Metadata,
                (NodePart::Object, field @ ("spec" | "status")) if capacity => {
                    let raw: &'de serde_json::value::RawValue = map.next_value()?;
                    reader.read_part(raw.get(), field == "spec").map_err(serde::de::Error::custom)?;
                    continue;
                }
                (NodePart::Metadata, "labels") => NodePart::Labels,
                (NodePart::Spec, "taints") => NodePart::Taints,
                (NodePart::Status, "allocatable") => {
                    reader.node.has_allocatable = true;
                    NodePart::Allocatable
                }
                (NodePart::Taint, field @ ("key" | "value" | "effect")) => {
                    let i = match field {
                        "key" => 0,
                        "value" => 1,
                        _ => 2,
                    };
                    reader.taint[i] = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0).unwrap_or_default();
                    continue;
                }
                (NodePart::Metadata, "name") if capacity => {
                    reader.node.name = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0);
                    continue;
                }
                (NodePart::Labels, label) => {
                    match reader.wants.labels.slot(label) {
                        Some(slot) => {
                            let value = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0).unwrap_or_default();
                            reader.node.set_label(slot, value);
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    continue;
                }
                (NodePart::Allocatable, resource) => {
                    match reader.wants.resources.slot(resource) {
                        Some(slot) => match map.next_value_seed(Amount(resource))? {
                            Some(units) => reader.node.allocatable[slot] = Some(units),
                            None => reader.node.unreadable[slot] = true,
                        },
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            map.next_value_seed(Part(&mut *reader, inner))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of `keys` on each Node read.
    type Seen = Vec<Vec<Option<String>>>;

    /// Every Node read, as (the values of `keys`), until `stop_after` Nodes.
    fn read_all(list: &str, keys: &[&str], stop_after: usize) -> Result<(usize, Seen), String> {
        let wants = NodeWants { labels: Wanted::new(keys.iter().copied()), resources: Wanted::default() };
        let mut seen = Vec::new();
        let read = read_nodes(list, &wants, |node| {
            seen.push(keys.iter().map(|k| node.label(wants.labels.slot(k).unwrap()).map(str::to_string)).collect());
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

    #[test]
    fn names_taints_and_allocatable_are_read_for_the_capacity_rules() {
        let list = r#"{"items": [
            {"metadata": {"name": "gpu-0", "labels": {"rack": "r1"}},
             "spec": {"podCIDR": "x", "taints": [
                {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                {"key": "soft", "effect": "PreferNoSchedule"},
                {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"},
                null]},
             "status": {"allocatable": {"cpu": "63770m", "memory": "527390432Ki", "nvidia.com/gpu": "8", "pods": 110,
                        "hugepages-2Mi": "bogus", "example.com/x": "1"}, "images": []}},
            {"metadata": {"name": "bare"}, "status": {"capacity": {"cpu": "4"}}}
        ]}"#;
        let wants = NodeWants {
            labels: Wanted::new(["rack"]),
            resources: Wanted::new(["cpu", "hugepages-2Mi", "memory", "nvidia.com/gpu", "pods", "example.com/y"]),
        };
        let r = |name: &str| wants.resources.slot(name).unwrap();
        let mut seen = Vec::new();
        read_nodes(list, &wants, |node| {
            seen.push((
                node.name.as_deref().map(str::to_string),
                node.taints.iter().map(|t| format!("{}={}:{}", t.key, t.value, t.effect)).collect::<Vec<_>>(),
                ["cpu", "memory", "nvidia.com/gpu", "pods", "hugepages-2Mi", "example.com/y"]
                    .map(|n| node.offers(r(n))),
            ));
            Flow::Continue
        })
        .unwrap();
        assert_eq!(
            seen[0],
            (
                Some("gpu-0".to_string()),
                vec!["nvidia.com/gpu=present:NoSchedule".to_string()],
                [Some(63770), Some(527_390_432 * 1024), Some(8), Some(110), None, Some(0)]
            ),
            "PreferNoSchedule and passing taints are not kept; an unreadable amount is unknown, an unlisted one zero"
        );
        assert_eq!(seen[1], (Some("bare".to_string()), vec![], [None; 6]), "no allocatable: nothing is known");
        // Nodes with the same spec and status texts are read once; each keeps its own name.
        let pool = |name: &str, gpus: &str| {
            format!(
                r#"{{"metadata": {{"name": "{name}"}}, "spec": {{"taints": [{{"key": "k", "effect": "NoExecute"}}]}}, "status": {{"allocatable": {{"nvidia.com/gpu": "{gpus}", "pods": "110"}}}}}}"#
            )
        };
        let list =
            format!(r#"{{"items": [{}, {}, {}, {}]}}"#, pool("a", "8"), pool("b", "4"), pool("c", "8"), pool("d", "4"));
        let mut read = Vec::new();
        read_nodes(&list, &wants, |node| {
            read.push((
                node.name.as_deref().unwrap_or_default().to_string(),
                node.taints.len(),
                node.offers(r("nvidia.com/gpu")),
            ));
            Flow::Continue
        })
        .unwrap();
        let want = |n: &str, g| (n.to_string(), 1, Some(g));
        assert_eq!(read, [want("a", 8), want("b", 4), want("c", 8), want("d", 4)]);
        // Without resources wanted, neither spec nor status is read (a broken one goes unnoticed).
        let broken = r#"{"items": [{"metadata": {"name": "n"}, "spec": 7, "status": "x"}]}"#;
        assert_eq!(read_all(broken, &["rack"], usize::MAX).unwrap().0, 1);
        assert!(read_nodes(broken, &wants, |_| Flow::Continue).is_err());
    }
}

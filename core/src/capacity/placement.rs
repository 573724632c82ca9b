//! Which Nodes a pod may be placed on, as the scheduler's NodeAffinity and TaintToleration
//! filters decide (component-helpers `scheduling/corev1/nodeaffinity`, `corev1.Toleration`):
//! its `nodeSelector`, its required node affinity, and the `NoSchedule` / `NoExecute` taints
//! its tolerations let it past.

use std::collections::BTreeMap;

use serde_json::Value;

use super::request::is_extended_resource;
use crate::decode::RawJson;
use crate::field::BadValue;
use crate::nodes::{Node, Taint, Wanted};

/// The most node-selector requirements (labels and fields, over every term) a pod's placement
/// is read with: each is evaluated against every Node, and a pod that writes more is no
/// misspelling. Past it, no capacity claim is made about the pod.
pub const MAX_REQUIREMENTS: usize = 256;

/// Why a Node is not one a pod may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Excluded {
    NodeSelector,
    Affinity,
    /// A taint the pod does not tolerate (its index in the Node's taints).
    Taint(usize),
}

/// A set of label values (a requirement may list thousands). The map type is the one the
/// tolerations use: one more type would be one more copy of the map's code in each module.
/// A B-tree looks a value up with a few string comparisons, no hashing, which per Node is
/// cheaper than a hash map, and no key the request writes can make it slow.
type Values = BTreeMap<String, u8>;

#[derive(Debug, PartialEq)]
enum Op {
    In(Values),
    NotIn(Values),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

/// A label requirement: its key, the key's slot in the Node list's wanted labels, and its
/// operator.
#[derive(Debug, PartialEq)]
struct LabelRequirement {
    key: String,
    slot: Option<usize>,
    op: Op,
}

/// `matchFields`: only `metadata.name`, with `In` or `NotIn` of one value.
#[derive(Debug, PartialEq)]
struct NameRequirement {
    name: String,
    equal: bool,
}

#[derive(Debug, Default, PartialEq)]
struct Term {
    labels: Vec<LabelRequirement>,
    names: Vec<NameRequirement>,
}

/// The taint effects that keep a pod off a Node, as bits: what a toleration tolerates.
const NO_SCHEDULE: u8 = 1;
const NO_EXECUTE: u8 = 2;

/// The effects a toleration's `effect` covers: empty is every effect; `PreferNoSchedule`
/// (and any other) covers neither of the two the scheduler filters on.
fn effects(effect: &str) -> u8 {
    match effect {
        "" => NO_SCHEDULE | NO_EXECUTE,
        "NoSchedule" => NO_SCHEDULE,
        "NoExecute" => NO_EXECUTE,
        _ => 0,
    }
}

/// What a pod's tolerations let it past, indexed so that a Node's taint is checked in
/// constant time however many tolerations the pod lists.
#[derive(Debug, Default, PartialEq)]
struct Tolerations {
    /// Tolerated whatever the taint (a toleration with no key, operator `Exists`).
    everything: u8,
    /// By key: tolerated whatever the value (`Exists`, or an operator this reading does not
    /// know, which is assumed to tolerate: no claim rests on it), and by value (`Equal`).
    by_key: BTreeMap<String, (u8, Values)>,
}

impl Tolerations {
    fn add(&mut self, key: &str, operator: &str, value: &str, effect: &str) {
        let effects = effects(effect);
        if key.is_empty() {
            // Validation allows an empty key only with `Exists`; any other operator would
            // match only an empty key, and a taint always has one.
            if operator == "Exists" {
                self.everything |= effects;
            }
            return;
        }
        let (any_value, values) = self.by_key.entry(key.to_string()).or_default();
        match operator {
            "" | "Equal" => *values.entry(value.to_string()).or_default() |= effects,
            _ => *any_value |= effects,
        }
    }

    fn tolerate(&self, taint: &Taint) -> bool {
        let effect = effects(&taint.effect);
        if self.everything & effect != 0 {
            return true;
        }
        let Some((any_value, values)) = self.by_key.get(taint.key.as_ref()) else { return false };
        any_value & effect != 0 || values.get(taint.value.as_ref()).is_some_and(|e| e & effect != 0)
    }
}

/// Where a pod may go: its `nodeSelector`, required node affinity and tolerations, each label
/// key resolved to a slot of the Node list's wanted labels ([`Placement::resolve`]).
#[derive(Debug, Default, PartialEq)]
pub struct Placement {
    /// (key, slot, value).
    selector: Vec<(String, Option<usize>, String)>,
    /// `None`: no required node affinity. `Some(terms)`: a Node must match one of them (none:
    /// it matches no Node, as the scheduler reads an affinity whose terms are all empty).
    terms: Option<Vec<Term>>,
    tolerations: Tolerations,
}

fn strings(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => items.iter().map(|i| i.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

fn text<'v>(v: &'v Value, field: &str) -> Option<&'v str> {
    match v.get(field) {
        None | Some(Value::Null) => Some(""),
        Some(Value::String(s)) => Some(s),
        Some(_) => None,
    }
}

/// A list field of `v`, absent or null as empty; `None` when it is not a list.
fn list<'v>(v: &'v Value, field: &str) -> Option<&'v [Value]> {
    match v.get(field) {
        None | Some(Value::Null) => Some(&[]),
        Some(Value::Array(items)) => Some(items),
        Some(_) => None,
    }
}

/// A label requirement as `labels.NewRequirement` accepts it; `None` for one it refuses
/// (the Pod would be refused by the apiserver, or its term would match no Node: either way
/// no claim is made on it).
fn label_requirement(r: &Value) -> Option<LabelRequirement> {
    let key = text(r, "key")?;
    if !crate::names::is_qualified_name(key).is_empty() {
        return None;
    }
    let values = strings(r.get("values").unwrap_or(&Value::Null))?;
    let one_integer = |values: &[String]| match values {
        [v] => v.parse::<i64>().ok(),
        _ => None,
    };
    // Filled by inserting: `collect` would compile a sort of its own.
    let set = |values: Vec<String>| {
        let mut set = Values::new();
        set.extend(values.into_iter().map(|v| (v, 0)));
        set
    };
    let op = match text(r, "operator")? {
        "In" if !values.is_empty() => Op::In(set(values)),
        "NotIn" if !values.is_empty() => Op::NotIn(set(values)),
        "Exists" if values.is_empty() => Op::Exists,
        "DoesNotExist" if values.is_empty() => Op::DoesNotExist,
        "Gt" => Op::Gt(one_integer(&values)?),
        "Lt" => Op::Lt(one_integer(&values)?),
        _ => return None,
    };
    Some(LabelRequirement { key: key.to_string(), slot: None, op })
}

fn name_requirement(r: &Value) -> Option<NameRequirement> {
    let equal = match text(r, "operator")? {
        "In" => true,
        "NotIn" => false,
        _ => return None,
    };
    match (text(r, "key")?, strings(r.get("values")?)?.as_slice()) {
        ("metadata.name", [name]) => Some(NameRequirement { name: name.clone(), equal }),
        _ => None,
    }
}

impl Placement {
    /// Reads a pod's placement; `None` when any part of it cannot be read as the scheduler
    /// would read it, or it is larger than [`MAX_REQUIREMENTS`]: no claim is made then.
    /// `extended` are the extended resources the pod asks for: the ExtendedResourceToleration
    /// admission plugin, where enabled, gives a Pod a toleration of each (`NoSchedule`), so a
    /// Node tainted with such a name is not held against it.
    pub fn read(
        node_selector: Option<&RawJson>,
        affinity: Option<&RawJson>,
        tolerations: Option<&RawJson>,
        extended: &[&str],
    ) -> Option<Placement> {
        let mut p = Placement::default();
        match node_selector.map(RawJson::value) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (key, value) in map {
                    p.selector.push((key, None, value.as_str()?.to_string()));
                }
            }
            Some(_) => return None,
        }
        let affinity = affinity.map(RawJson::value).unwrap_or(Value::Null);
        let required =
            affinity.get("nodeAffinity").and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"));
        if let Some(required) = required.filter(|r| !r.is_null()) {
            p.read_terms(required)?;
        }
        p.add_tolerations(&tolerations.map(RawJson::value).unwrap_or(Value::Null))?;
        for resource in extended.iter().filter(|r| is_extended_resource(r)) {
            p.tolerations.add(resource, "Exists", "", "NoSchedule");
        }
        Some(p)
    }

    /// A node selector's terms, as a required node affinity holds them (or a DRA
    /// ResourceSlice's `nodeSelector`); `None` when they cannot be read.
    pub fn node_selector(selector: &Value) -> Option<Placement> {
        let mut p = Placement::default();
        p.read_terms(selector)?;
        Some(p)
    }

    fn read_terms(&mut self, required: &Value) -> Option<()> {
        let mut count = self.selector.len();
        let mut terms = Vec::new();
        for term in list(required, "nodeSelectorTerms")?.iter().filter(|t| !t.is_null()) {
            let (expressions, fields) = (list(term, "matchExpressions")?, list(term, "matchFields")?);
            if expressions.is_empty() && fields.is_empty() {
                // An empty term matches nothing and is skipped.
                continue;
            }
            count += expressions.len() + fields.len();
            if count > MAX_REQUIREMENTS {
                return None;
            }
            let labels = expressions.iter().map(label_requirement).collect::<Option<Vec<_>>>()?;
            let names = fields.iter().map(name_requirement).collect::<Option<Vec<_>>>()?;
            terms.push(Term { labels, names });
        }
        self.terms = Some(terms);
        Some(())
    }

    /// Adds a list of tolerations (a Pod's, a RuntimeClass's `scheduling.tolerations`, a
    /// setting's); `None` when it is not one (nothing is added then).
    pub fn add_tolerations(&mut self, list: &Value) -> Option<()> {
        let list = match list {
            Value::Null => &[][..],
            Value::Array(items) => items,
            _ => return None,
        };
        let mut read = Vec::with_capacity(list.len());
        for t in list.iter().filter(|t| !t.is_null()) {
            read.push((text(t, "key")?, text(t, "operator")?, text(t, "value")?, text(t, "effect")?));
        }
        for (key, operator, value, effect) in read {
            self.tolerations.add(key, operator, value, effect);
        }
        Some(())
    }

    /// Tolerates every taint: what is assumed when a later admission step may add any
    /// toleration (Kueue's flavors, a RuntimeClass that cannot be read).
    pub fn tolerate_every_taint(&mut self) {
        self.tolerations.add("", "Exists", "", "");
    }

    /// A placement that admits every Node: what is assumed when the real one is not known.
    pub fn anywhere() -> Placement {
        let mut p = Placement::default();
        p.tolerate_every_taint();
        p
    }

    /// Whether the placement names no Node label or field (no nodeSelector, no required node
    /// affinity): only taints then keep its pods off a Node.
    pub fn is_unconstrained(&self) -> bool {
        self.selector.is_empty() && self.terms.is_none()
    }

    /// The nodeSelector, as written, for messages.
    pub fn selector_value(&self) -> BadValue {
        let mut map = serde_json::Map::new();
        for (k, _, v) in &self.selector {
            map.insert(k.clone(), Value::from(v.as_str()));
        }
        BadValue::of(&map)
    }

    /// The label keys the placement reads, for the Node list's wanted labels.
    pub fn label_keys(&self) -> impl Iterator<Item = &str> {
        let selector = self.selector.iter().map(|(k, _, _)| k.as_str());
        let terms = self.terms.iter().flatten().flat_map(|t| t.labels.iter().map(|r| r.key.as_str()));
        selector.chain(terms)
    }

    /// Resolves each label key to its slot in `wanted` (which holds [`Placement::label_keys`]).
    pub fn resolve(&mut self, wanted: &Wanted) {
        for (key, slot, _) in &mut self.selector {
            *slot = wanted.slot(key);
        }
        for r in self.terms.iter_mut().flatten().flat_map(|t| t.labels.iter_mut()) {
            r.slot = wanted.slot(&r.key);
        }
    }

    fn term_matches(term: &Term, node: &Node) -> bool {
        let labels_match = term.labels.iter().all(|r| {
            let value = r.slot.and_then(|slot| node.label(slot));
            match &r.op {
                Op::In(values) => value.is_some_and(|v| values.contains_key(v)),
                Op::NotIn(values) => value.is_none_or(|v| !values.contains_key(v)),
                Op::Exists => value.is_some(),
                Op::DoesNotExist => value.is_none(),
                Op::Gt(n) => value.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v > *n),
                Op::Lt(n) => value.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v < *n),
            }
        });
        // Fields are compared only for a Node that has a name, as the scheduler does.
        let names_match = match node.name.as_deref() {
            Some(name) if !name.is_empty() => term.names.iter().all(|r| (r.name == name) == r.equal),
            _ => true,
        };
        labels_match && names_match
    }

    /// Whether a pod with this placement may go to `node`, and if not, the first reason.
    pub fn admits(&self, node: &Node) -> Result<(), Excluded> {
        if !self.selector.iter().all(|(_, slot, v)| slot.and_then(|s| node.label(s)) == Some(v.as_str())) {
            return Err(Excluded::NodeSelector);
        }
        if let Some(terms) = &self.terms
            && !terms.iter().any(|t| Self::term_matches(t, node))
        {
            return Err(Excluded::Affinity);
        }
        match node.taints.iter().position(|t| !self.tolerations.tolerate(t)) {
            Some(i) => Err(Excluded::Taint(i)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::{Flow, NodeWants, read_nodes};
    use serde_json::json;

    fn raw(v: serde_json::Value) -> RawJson {
        RawJson(crate::decode::to_raw(&v))
    }

    /// `placement` against each Node of `nodes` (a NodeList's items).
    fn judge(placement: &mut Placement, nodes: serde_json::Value) -> Vec<Result<(), Excluded>> {
        let keys: Vec<String> = placement.label_keys().map(str::to_string).collect();
        let wants = NodeWants { labels: Wanted::new(keys.iter().map(String::as_str)), resources: Wanted::new(["cpu"]) };
        placement.resolve(&wants.labels);
        let list = json!({"items": nodes}).to_string();
        let mut out = Vec::new();
        read_nodes(&list, &wants, |node| {
            out.push(placement.admits(node));
            Flow::Continue
        })
        .unwrap();
        out
    }

    fn node(name: &str, labels: serde_json::Value, taints: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints}})
    }

    #[test]
    fn node_selector_and_required_affinity_as_the_scheduler_reads_them() {
        let nodes = json!([
            node("a", json!({"gpu": "h100", "size": "8", "zone": "z1"}), json!([])),
            node("b", json!({"gpu": "a100", "size": "4"}), json!([])),
            node("c", json!({"size": "x"}), json!([])),
        ]);
        let mut selector = Placement::read(Some(&raw(json!({"gpu": "h100"}))), None, None, &[]).unwrap();
        assert_eq!(
            judge(&mut selector, nodes.clone()),
            [Ok(()), Err(Excluded::NodeSelector), Err(Excluded::NodeSelector)]
        );
        let affinity = |terms: serde_json::Value| {
            let a = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}});
            Placement::read(None, Some(&raw(a)), None, &[]).unwrap()
        };
        let ok = Ok(());
        let no = Err(Excluded::Affinity);
        for (terms, want) in [
            (
                json!([{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]}]),
                [ok, ok, no],
            ),
            (json!([{"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["a100"]}]}]), [ok, no, ok]),
            (json!([{"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]), [ok, no, no]),
            (json!([{"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}]), [no, ok, ok]),
            (json!([{"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["4"]}]}]), [ok, no, no]),
            (json!([{"matchExpressions": [{"key": "size", "operator": "Lt", "values": ["8"]}]}]), [no, ok, no]),
            // Terms are ORed, requirements of a term ANDed.
            (
                json!([{"matchExpressions": [{"key": "gpu", "operator": "Exists"}, {"key": "size", "operator": "Lt", "values": ["5"]}]},
                       {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}]),
                [no, ok, ok],
            ),
            (json!([{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}]}]), [no, ok, ok]),
            // Every term empty: no Node matches.
            (json!([{}, {"matchExpressions": []}]), [no, no, no]),
        ] {
            assert_eq!(judge(&mut affinity(terms.clone()), nodes.clone()), want, "{terms}");
        }
        // Requirements the apiserver refuses make no claim at all.
        for terms in [
            json!([{"matchExpressions": [{"key": "gpu", "operator": "In", "values": []}]}]),
            json!([{"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["4", "5"]}]}]),
            json!([{"matchExpressions": [{"key": "bad key", "operator": "Exists"}]}]),
            json!([{"matchExpressions": [{"key": "gpu", "operator": "Sometimes"}]}]),
            json!([{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}]),
            json!("not a list"),
        ] {
            let a = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}});
            assert!(Placement::read(None, Some(&raw(a)), None, &[]).is_none(), "{terms}");
        }
        let many: Vec<serde_json::Value> =
            (0..=MAX_REQUIREMENTS).map(|i| json!({"key": format!("k{i}"), "operator": "Exists"})).collect();
        let a = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": many}]}}});
        assert!(Placement::read(None, Some(&raw(a)), None, &[]).is_none(), "past the maximum, no claim");
    }

    #[test]
    fn taints_keep_off_the_pods_that_do_not_tolerate_them() {
        let nodes = json!([
            node("gpu", json!({}), json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])),
            node("spot", json!({}), json!([{"key": "spot", "value": "true", "effect": "NoExecute"}])),
            node("plain", json!({}), json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])),
        ]);
        let tolerating = |t: serde_json::Value, extended: &[&str]| {
            let mut p = Placement::read(None, None, Some(&raw(t)), extended).unwrap();
            judge(&mut p, nodes.clone())
        };
        let taint = Err(Excluded::Taint(0));
        assert_eq!(tolerating(json!([]), &[]), [taint, taint, Ok(())], "a cordoned node's taint passes");
        assert_eq!(
            tolerating(json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]), &[]),
            [Ok(()), taint, Ok(())]
        );
        assert_eq!(tolerating(json!([{"key": "nvidia.com/gpu", "value": "present"}]), &[]), [Ok(()), taint, Ok(())]);
        assert_eq!(tolerating(json!([{"key": "nvidia.com/gpu", "value": "absent"}]), &[]), [taint, taint, Ok(())]);
        assert_eq!(
            tolerating(json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}]), &[]),
            [taint, taint, Ok(())],
            "another effect"
        );
        assert_eq!(tolerating(json!([{"operator": "Exists"}]), &[]), [Ok(()), Ok(()), Ok(())], "tolerates everything");
        assert_eq!(tolerating(json!([{"operator": "Exists", "effect": "NoExecute"}]), &[]), [taint, Ok(()), Ok(())]);
        assert_eq!(
            tolerating(json!([{"key": "spot", "operator": "Gt", "value": "0"}]), &[]),
            [taint, Ok(()), Ok(())],
            "an operator this reading does not know is assumed to tolerate"
        );
        assert_eq!(
            tolerating(json!([]), &["nvidia.com/gpu"]),
            [Ok(()), taint, Ok(())],
            "ExtendedResourceToleration: a pod asking for the resource tolerates its NoSchedule taint"
        );
    }
}

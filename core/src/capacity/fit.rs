//! Whether pods can ever fit the cluster's Nodes, decided only by what is provably impossible.
//!
//! Each Node is taken as empty: its `status.allocatable` is the most a pod can ever get there,
//! so a pod that fits no Node, or a gang that the Nodes cannot hold at once even when empty,
//! can never start. The conditions checked are necessary ones, never a packing heuristic:
//!
//! - a pod fits some Node it may use (its nodeSelector, required node affinity and
//!   tolerations allow it) with every resource it asks for within that Node's allocatable;
//! - a gang of `size` pods (in one topology domain, when it asks for one) fits the Nodes only
//!   if each of these holds:
//!   - `Σ over shapes of min(pods of the shape, Σ over Nodes of how many of that shape the
//!     Node holds alone) ≥ size`;
//!   - `Σ over Nodes of what the Node holds of the gang together ≥ size`, where a Node holds
//!     together at most, for each resource, the pods that ask for it (at most its allocatable
//!     over the least any of them asks) plus those of the shapes that do not: pods of
//!     different shapes that each fill a Node's GPUs cannot share it;
//!   - for each resource, the `size` smallest asks together are within what the Nodes that
//!     may take one of them offer.
//!
//! A gang that passes all of them may still never start (other pods run there, the packing
//! has no solution); one that fails any cannot start on these Nodes. Nodes whose capacity is
//! unknown (no `status.allocatable`, an amount that cannot be read) can hold anything. Every
//! condition only gets easier as Nodes are added, so the list is read only until every pod and
//! gang has passed.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::placement::{Excluded, Placement};
use super::request::Ask;
use crate::field::{BadValue, Path, plural};
use crate::nodes::{Node, Wanted};
use crate::quantity::show;

/// A count no Node limits (its capacity is unknown).
const UNBOUNDED: u64 = u64::MAX;

/// One pod shape: what each of its pods asks and where it may go.
#[derive(Debug, PartialEq)]
pub struct Shape {
    pub asks: Vec<Ask>,
    pub placement: Placement,
    /// Where the pod's `spec` is written (the template's), for placement findings.
    pub spec_path: Path,
    /// How messages name one of its pods: `pod`, `Worker pod`.
    pub name: String,
    /// Where tolerations were counted from besides the pod's own (`RuntimeClass "nvidia"`,
    /// `capacityAddedTolerations`), for the taint finding's message.
    pub tolerations_from: Vec<String>,
    /// The claims its pods name (`ResourceClaimTemplate/<name>`): shapes alike in all else
    /// but their claims are not one member.
    pub claims: Vec<String>,
    /// What its pods' own claims ask of DRA devices, for messages (`8 devices of DeviceClass
    /// "gpu.nvidia.com"`), when the ResourceSlices were counted.
    pub devices: Vec<String>,
}

/// Pods that must all run at once: a gang, or a Kueue pod set kept in one topology domain.
#[derive(Clone, Debug, PartialEq)]
pub struct Gang {
    /// (shape index, how many pods of that shape the object has to choose from).
    pub members: Vec<(usize, u64)>,
    pub size: u64,
    /// Where the gang's size is written, and its value there.
    pub at: Path,
    pub value: BadValue,
    /// The label key whose one value every pod's Node must share, when asked for.
    pub domain: Option<String>,
    /// How messages name it: `the gang`, `the pod set`.
    pub what: &'static str,
}

/// What cannot fit, and where to say so.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// A pod that fits no Node (`false`), or a gang that cannot run at once (`true`).
    pub gang: bool,
    pub at: Path,
    pub value: BadValue,
    pub message: String,
    /// The resources the finding rests on (a pod's asks), so a caller can take back a finding
    /// that rests on a resource it learns the Nodes do not show (one served by DRA).
    pub resources: Vec<String>,
}

#[derive(Debug, Default)]
struct ShapeState {
    /// Resource slots of the shape's asks, in the Node list's wanted resources.
    slots: Vec<Option<usize>>,
    nodes: usize,
    admitted: usize,
    by_selector: usize,
    by_affinity: usize,
    /// A taint that kept the pod off a Node it otherwise matches, for the message.
    taint: Option<String>,
    fits_one: bool,
    /// The most each ask's resource offers on one admitted Node, when known.
    largest: Vec<Option<u64>>,
    /// The most pods an admitted Node takes (`pods`), when known.
    largest_pods: Option<u64>,
    /// Whether the last Node read admits its pods, and how many of them it holds.
    admitted_now: bool,
    on_node: u64,
    /// Whether some admitted Node holds one pod, its DRA devices counted.
    fits_with_devices: bool,
}

#[derive(Debug)]
struct DomainState {
    /// Per member: how many of its pods the domain's Nodes hold (each Node alone).
    holds: Vec<u64>,
    /// How many of the gang's pods the domain's Nodes hold, each Node its members together.
    together: u64,
    /// Per resource of the gang: what the Nodes that may take one of its pods offer.
    offered: Vec<u64>,
    pods: u64,
    nodes: usize,
}

/// FNV-1a: the domains are Node label values, which the cluster writes, not the request, so
/// the hash needs no defence against flooding; it is hashed once per Node read.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Topology domains (label values) to what their Nodes hold.
type Domains = HashMap<String, DomainState, BuildHasherDefault<Fnv>>;

#[derive(Debug, Default)]
struct GangState {
    /// The resources the gang's pods ask for (union of its shapes'), with their slots.
    resources: Vec<(String, Option<usize>)>,
    /// Per resource: the least the gang asks in all (its `size` smallest asks).
    need: Vec<u64>,
    /// Per resource: the least one of the gang's pods that asks for it asks (`None`: none
    /// asks for it).
    least: Vec<Option<u64>>,
    /// Per resource, per member: whether the member's pods ask for it.
    asking: Vec<Vec<bool>>,
    /// How messages name each member's pods.
    names: Vec<String>,
    domain_slot: Option<usize>,
    domains: Domains,
    satisfied: bool,
    /// Per member: the shared claim that puts all its pods on one Node, if any.
    pinned: Vec<Option<String>>,
}

/// Capacity findings for a set of shapes and gangs, built one Node at a time.
pub struct Analysis<'s> {
    shapes: &'s [Shape],
    gangs: Vec<Gang>,
    pods_slot: Option<usize>,
    shape_states: Vec<ShapeState>,
    gang_states: Vec<GangState>,
    nodes: usize,
}

/// Every label key and resource the analysis reads of the Nodes.
pub fn wanted_names<'s>(shapes: &'s [Shape], gangs: &'s [Gang]) -> (Vec<&'s str>, Vec<&'s str>) {
    let labels =
        shapes.iter().flat_map(|s| s.placement.label_keys()).chain(gangs.iter().filter_map(|g| g.domain.as_deref()));
    let resources = shapes.iter().flat_map(|s| s.asks.iter().map(|a| a.resource.as_str())).chain(["pods"]);
    (labels.collect(), resources.collect())
}

fn saturating_sum(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

impl<'s> Analysis<'s> {
    /// `shapes` must be resolved against `labels` ([`Placement::resolve`]); `resources` holds
    /// every resource of [`wanted_names`].
    pub fn new(shapes: &'s [Shape], gangs: &'s [Gang], labels: &Wanted, resources: &Wanted) -> Self {
        // Members of one shape (a Master and its Workers with the same template) are one
        // member: counted apart, each would be taken to fill the Nodes on its own.
        let (gangs, names): (Vec<Gang>, Vec<Vec<String>>) = gangs.iter().map(|g| merge_alike(shapes, g)).unzip();
        let shape_states = shapes
            .iter()
            .map(|s| ShapeState {
                slots: s.asks.iter().map(|a| resources.slot(&a.resource)).collect(),
                largest: vec![None; s.asks.len()],
                ..ShapeState::default()
            })
            .collect();
        let gang_states = gangs
            .iter()
            .zip(names)
            .map(|(g, names)| {
                let mut resource_names: Vec<&str> =
                    g.members.iter().flat_map(|(s, _)| shapes[*s].asks.iter().map(|a| a.resource.as_str())).collect();
                resource_names.sort_unstable();
                resource_names.dedup();
                let need = resource_names
                    .iter()
                    .map(|name| {
                        // The `size` smallest asks of the resource, over the pods there are.
                        let mut asks: Vec<(u64, u64)> = g
                            .members
                            .iter()
                            .map(|(s, count)| {
                                let units = shapes[*s].asks.iter().find(|a| a.resource == *name).map_or(0, |a| a.units);
                                (units, *count)
                            })
                            .collect();
                        crate::order::sort_by(&mut asks, Ord::cmp);
                        let (mut left, mut total) = (g.size, 0u64);
                        for (units, count) in asks {
                            let take = left.min(count);
                            total = total.saturating_add(units.saturating_mul(take));
                            left -= take;
                        }
                        total
                    })
                    .collect();
                let least = resource_names
                    .iter()
                    .map(|name| {
                        g.members
                            .iter()
                            .filter_map(|(s, _)| shapes[*s].asks.iter().find(|a| a.resource == *name))
                            .map(|a| a.units)
                            .min()
                    })
                    .collect();
                let asking = resource_names
                    .iter()
                    .map(|name| {
                        g.members.iter().map(|(s, _)| shapes[*s].asks.iter().any(|a| a.resource == *name)).collect()
                    })
                    .collect();
                GangState {
                    resources: resource_names.iter().map(|n| (n.to_string(), resources.slot(n))).collect(),
                    need,
                    least,
                    asking,
                    names,
                    domain_slot: g.domain.as_deref().and_then(|k| labels.slot(k)),
                    pinned: vec![None; g.members.len()],
                    ..GangState::default()
                }
            })
            .collect();
        Analysis { shapes, gangs, pods_slot: resources.slot("pods"), shape_states, gang_states, nodes: 0 }
    }

    /// How many pods of shape `s` Node `node` (which admits them) holds, alone.
    fn holds(&self, s: usize, node: &Node) -> u64 {
        if !node.has_allocatable {
            return UNBOUNDED;
        }
        // A Node that does not list `pods` is taken to take any number (a hand-written Node;
        // a kubelet always lists it).
        let mut holds = self.pods_slot.and_then(|slot| node.listed(slot)).unwrap_or(UNBOUNDED);
        for (ask, slot) in self.shapes[s].asks.iter().zip(&self.shape_states[s].slots) {
            if let Some(offered) = slot.and_then(|slot| node.offers(slot)) {
                holds = holds.min(offered / ask.units);
            }
        }
        holds
    }

    /// Holds every pod of shape `s` on one Node: they share `claim`, a claim whose every
    /// device that may serve it is local to one Node (its allocation pins it there).
    pub fn pin(&mut self, s: usize, claim: String) {
        for (gang, state) in self.gangs.iter().zip(&mut self.gang_states) {
            for ((m, _), pinned) in gang.members.iter().zip(&mut state.pinned) {
                if *m == s {
                    *pinned = Some(claim.clone());
                }
            }
        }
    }

    /// Takes one Node into account.
    pub fn add(&mut self, node: &Node) {
        self.add_counting(node, &[]);
    }

    /// Takes one Node into account, with `devices[s]` the most pods of shape `s` its DRA
    /// devices serve (`None`: no limit).
    pub fn add_counting(&mut self, node: &Node, devices: &[Option<u64>]) {
        self.nodes += 1;
        for s in 0..self.shapes.len() {
            let admitted = self.shapes[s].placement.admits(node);
            let alone = if admitted.is_ok() { self.holds(s, node) } else { 0 };
            let holds = alone.min(devices.get(s).copied().flatten().unwrap_or(UNBOUNDED));
            let pods = self.pods_slot.and_then(|slot| node.listed(slot));
            let state = &mut self.shape_states[s];
            state.nodes += 1;
            state.admitted_now = admitted.is_ok();
            state.on_node = holds;
            state.fits_with_devices |= holds >= 1;
            match admitted {
                Err(Excluded::NodeSelector) => state.by_selector += 1,
                Err(Excluded::Affinity) => state.by_affinity += 1,
                Err(Excluded::Taint(i)) => {
                    if state.taint.is_none() {
                        let t = &node.taints[i];
                        state.taint = Some(format!("{}={}:{}", t.key, t.value, t.effect));
                    }
                }
                Ok(()) => {
                    state.admitted += 1;
                    state.fits_one |= alone >= 1;
                    for (largest, slot) in state.largest.iter_mut().zip(&state.slots) {
                        if let Some(offered) = slot.and_then(|slot| node.offers(slot)) {
                            *largest = Some(largest.map_or(offered, |l: u64| l.max(offered)));
                        }
                    }
                    if let Some(pods) = pods {
                        state.largest_pods = Some(state.largest_pods.map_or(pods, |l| l.max(pods)));
                    }
                }
            }
        }
        for (g, gang) in self.gangs.iter().enumerate() {
            let state = &mut self.gang_states[g];
            if state.satisfied {
                continue;
            }
            let domain = match (&gang.domain, state.domain_slot) {
                (None, _) => "",
                (Some(_), Some(slot)) => match node.label(slot) {
                    Some(value) => value,
                    None => continue,
                },
                (Some(_), None) => continue,
            };
            let admitted = gang.members.iter().any(|(s, _)| self.shape_states[*s].admitted_now);
            let together = held_together(gang, state, &self.shape_states, node, self.pods_slot);
            let fresh = || DomainState {
                holds: vec![0; gang.members.len()],
                together: 0,
                offered: vec![0; state.resources.len()],
                pods: 0,
                nodes: 0,
            };
            // One hash of the domain per Node; a new domain costs a second.
            let d = match state.domains.get_mut(domain) {
                Some(d) => d,
                None => state.domains.entry(domain.to_string()).or_insert_with(fresh),
            };
            d.nodes += 1;
            for (((s, _), holds), pinned) in gang.members.iter().zip(d.holds.iter_mut()).zip(&state.pinned) {
                let on_node = self.shape_states[*s].on_node;
                // Pods on one Node: the most one Node holds.
                *holds = if pinned.is_some() { (*holds).max(on_node) } else { saturating_sum(*holds, on_node) };
            }
            d.together = saturating_sum(d.together, together);
            if admitted {
                for ((_, slot), offered) in state.resources.iter().zip(d.offered.iter_mut()) {
                    let on_node = if node.has_allocatable { slot.and_then(|s| node.offers(s)) } else { None };
                    *offered = saturating_sum(*offered, on_node.unwrap_or(UNBOUNDED));
                }
                let pods = if node.has_allocatable { self.pods_slot.and_then(|s| node.listed(s)) } else { None };
                d.pods = saturating_sum(d.pods, pods.unwrap_or(UNBOUNDED));
            }
            if fits(gang, &state.need, d) {
                state.satisfied = true;
                state.domains.clear();
            }
        }
    }

    /// Whether every pod and gang has passed: no Node read later can change the findings.
    pub fn settled(&self) -> bool {
        self.shape_states.iter().all(|s| s.fits_one) && self.gang_states.iter().all(|g| g.satisfied)
    }

    /// What cannot fit. Gangs whose every shape fits no Node at all are left to the pods'
    /// findings; a gang whose domain key no Node carries is left to the key's own rule; an
    /// empty Node list (a cluster scaled to zero) shows nothing.
    pub fn findings(&self) -> Vec<Finding> {
        // No Node at all (a cluster scaled to zero, or none given): nothing to judge against.
        if self.nodes == 0 {
            return Vec::new();
        }
        let mut out: Vec<Finding> = (0..self.shapes.len()).filter_map(|s| self.pod_finding(s)).collect();
        for (g, gang) in self.gangs.iter().enumerate() {
            let state = &self.gang_states[g];
            let every_shape_fails = gang.members.iter().all(|(s, _)| !self.shape_states[*s].fits_with_devices);
            if state.satisfied || every_shape_fails || state.domains.is_empty() && gang.domain.is_some() {
                continue;
            }
            out.push(self.gang_finding(gang, state));
        }
        out
    }

    fn pod_finding(&self, s: usize) -> Option<Finding> {
        let (shape, state) = (&self.shapes[s], &self.shape_states[s]);
        if state.fits_one {
            return None;
        }
        let spec = &shape.spec_path;
        let checked = plural(state.nodes, "node");
        let asked: Vec<String> = shape.asks.iter().map(|a| a.resource.clone()).collect();
        if state.admitted == 0 {
            let (at, value, why) = if state.by_selector == state.nodes {
                let selector = shape.placement.selector_value();
                (spec.child("nodeSelector"), selector, "no node has every label its nodeSelector asks for".to_string())
            } else if state.by_selector + state.by_affinity == state.nodes {
                (
                    spec.child("affinity")
                        .child("nodeAffinity")
                        .child("requiredDuringSchedulingIgnoredDuringExecution"),
                    BadValue::omitted(),
                    "no node matches its nodeSelector and required node affinity".to_string(),
                )
            } else {
                let example = state.taint.as_deref().map(|t| format!(" (such as {t})")).unwrap_or_default();
                let counted = match shape.tolerations_from.split_last() {
                    None => "its own tolerations".to_string(),
                    Some((last, [])) => format!("its own tolerations and those of {last}"),
                    Some((last, rest)) => format!("its own tolerations and those of {} and {last}", rest.join(", ")),
                };
                (
                    spec.child("tolerations"),
                    BadValue::omitted(),
                    format!(
                        "every node that matches its nodeSelector and node affinity has a NoSchedule or NoExecute taint it does not tolerate{example}, counting {counted}"
                    ),
                )
            };
            return Some(Finding {
                gang: false,
                at,
                value,
                message: format!("no node can ever run this {}: {why} (checked {checked})", shape.name),
                resources: Vec::new(),
            });
        }
        let eligible = plural(state.admitted, "eligible node");
        let of_the = if state.admitted == 1 { "the eligible node".to_string() } else { format!("the {eligible}") };
        let one_pod = format!("one {}", shape.name);
        // A resource no admitted Node has enough of alone.
        let short = shape.asks.iter().zip(&state.largest).find(|(a, largest)| largest.is_some_and(|l| a.units > l));
        let (at, value, message, resources) = match short {
            Some((ask, largest)) => {
                let has = match largest.unwrap_or(0) {
                    0 if state.admitted == 1 => format!("{of_the} has none"),
                    0 => format!("none of {of_the} has any"),
                    l if state.admitted == 1 => format!("{of_the} has {} allocatable", show(&ask.resource, l)),
                    l => format!("the largest of {of_the} has {} allocatable", show(&ask.resource, l)),
                };
                (
                    ask.at.clone(),
                    BadValue::from(show(&ask.resource, ask.units).as_str()),
                    format!("{one_pod} asks {} {}, and {has}", show(&ask.resource, ask.units), ask.resource),
                    vec![ask.resource.clone()],
                )
            }
            None if state.largest_pods == Some(0) => (
                spec.clone(),
                BadValue::omitted(),
                if state.admitted == 1 {
                    format!("{of_the} takes no pods (allocatable pods: 0)")
                } else {
                    format!("{of_the} take no pods (allocatable pods: 0)")
                },
                Vec::new(),
            ),
            None => {
                let first = shape.asks.first().map_or_else(|| spec.clone(), |a| a.at.clone());
                (
                    first,
                    BadValue::omitted(),
                    format!(
                        "{one_pod} asks {} at once, and no eligible node has all of it: each of {of_the} falls short of one of them",
                        describe(&shape.asks, &[])
                    ),
                    asked,
                )
            }
        };
        Some(Finding {
            gang: false,
            at,
            value,
            message: format!("no node can ever run this {}: {message}", shape.name),
            resources,
        })
    }

    fn gang_finding(&self, gang: &Gang, state: &GangState) -> Finding {
        // The domain that holds the most of the gang's pods.
        let placeable = |d: &DomainState| -> u64 {
            let alone = gang
                .members
                .iter()
                .zip(&d.holds)
                .map(|((_, count), holds)| (*count).min(*holds))
                .fold(0, saturating_sum);
            alone.min(d.together)
        };
        let best = state.domains.iter().max_by_key(|(name, d)| (placeable(d), std::cmp::Reverse(name.as_str())));
        let (best_name, best) = match best {
            Some((name, d)) => (name.as_str(), Some(d)),
            None => ("", None),
        };
        let held = best.map_or(0, placeable);
        let nodes = best.map_or(0, |d| d.nodes);
        let pods_ask: Vec<String> = gang
            .members
            .iter()
            .zip(&state.names)
            .map(|((s, _), name)| {
                format!("each {name} asks {}", describe(&self.shapes[*s].asks, &self.shapes[*s].devices))
            })
            .collect();
        let in_domain = gang.domain.as_ref().map(|k| format!(" in one {k:?} domain")).unwrap_or_default();
        let size = gang.size;
        let devices = gang.members.iter().any(|(s, _)| !self.shapes[*s].devices.is_empty());
        let counted = if devices || state.pinned.iter().any(Option::is_some) {
            ", counting the devices of the ResourceSlices that reach each node"
        } else {
            ""
        };
        let message = if held < size {
            let where_ = match &gang.domain {
                None => format!("the cluster's {} hold", plural(nodes, "node")),
                Some(_) => format!("the largest domain, {best_name:?} ({}), holds", plural(nodes, "node")),
            };
            let one_node = match state.pinned.iter().flatten().next() {
                Some(claim) => format!(
                    "; they share {claim}, whose every matching device is local to one node, so they must all run on one node"
                ),
                None => String::new(),
            };
            format!(
                "{} of {size} pods can never run at once{in_domain}: {}{one_node}, and {where_} at most {held} of them, even when empty{counted}",
                gang.what,
                pods_ask.join("; "),
            )
        } else {
            // Enough room for the pods one at a time, not for what they ask together.
            let short = state
                .resources
                .iter()
                .enumerate()
                .find(|(i, _)| state.domains.values().all(|d| d.offered[*i] < state.need[*i]))
                .or_else(|| state.resources.iter().enumerate().next());
            let pods = (String::from("pods"), None);
            let (i, (resource, _)) = short.unwrap_or((0, &pods));
            let most = state.domains.values().map(|d| d.offered.get(i).copied().unwrap_or(0)).max().unwrap_or(0);
            let need = state.need.get(i).copied().unwrap_or(size);
            let offered = match &gang.domain {
                None => format!("the nodes that may run them offer {} in all", show(resource, most)),
                Some(_) => {
                    format!("the nodes of any one domain that may run them offer at most {}", show(resource, most))
                }
            };
            format!(
                "{} of {size} pods can never run at once{in_domain}: together they ask at least {} {resource}, and {offered}, even when empty",
                gang.what,
                show(resource, need),
            )
        };
        let resources =
            gang.members.iter().flat_map(|(s, _)| self.shapes[*s].asks.iter().map(|a| a.resource.clone())).collect();
        Finding { gang: true, at: gang.at.clone(), value: gang.value.clone(), message, resources }
    }
}

/// `gang` with the members of alike shapes (the same asks and placement) made one, and how
/// messages name each member's pods (`pod` for alike shapes of different names).
fn merge_alike(shapes: &[Shape], gang: &Gang) -> (Gang, Vec<String>) {
    let alike = |a: &Shape, b: &Shape| {
        a.placement == b.placement
            && a.claims == b.claims
            && a.asks.len() == b.asks.len()
            && a.asks.iter().zip(&b.asks).all(|(x, y)| x.resource == y.resource && x.units == y.units)
    };
    let mut members: Vec<(usize, u64)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for &(s, count) in &gang.members {
        match members.iter().position(|(m, _)| alike(&shapes[*m], &shapes[s])) {
            Some(i) => {
                members[i].1 = members[i].1.saturating_add(count);
                if names[i] != shapes[s].name {
                    names[i] = "pod".to_string();
                }
            }
            None => {
                members.push((s, count));
                names.push(shapes[s].name.clone());
            }
        }
    }
    (Gang { members, ..gang.clone() }, names)
}

/// How many of `gang`'s pods `node` can hold together, at most: no more than its members
/// hold alone (`alone`, per member), than it takes pods, nor, for each resource, than the
/// pods that ask for it can share (its allocatable over the least one of them asks) plus the
/// pods of members that do not ask for it.
fn held_together(gang: &Gang, state: &GangState, shapes: &[ShapeState], node: &Node, pods_slot: Option<usize>) -> u64 {
    // What each member's pods hold of the Node alone, at most as many as the gang has.
    let alone = |m: usize| {
        let (s, count) = gang.members[m];
        shapes[s].on_node.min(count)
    };
    let mut most = (0..gang.members.len()).map(alone).fold(0, saturating_sum);
    if !node.has_allocatable || most == 0 {
        return most;
    }
    if let Some(pods) = pods_slot.and_then(|s| node.listed(s)) {
        most = most.min(pods);
    }
    for (((_, slot), least), asking) in state.resources.iter().zip(&state.least).zip(&state.asking) {
        let (Some(least), Some(offered)) = (least, slot.and_then(|s| node.offers(s))) else { continue };
        let others = (0..gang.members.len()).filter(|m| !asking[*m]).map(alone).fold(0, saturating_sum);
        most = most.min(saturating_sum(offered / least, others));
    }
    most
}

/// Whether a domain's Nodes pass every necessary condition for the gang.
fn fits(gang: &Gang, need: &[u64], d: &DomainState) -> bool {
    let placeable =
        gang.members.iter().zip(&d.holds).map(|((_, count), holds)| (*count).min(*holds)).fold(0, saturating_sum);
    placeable >= gang.size
        && d.together >= gang.size
        && d.pods >= gang.size
        && need.iter().zip(&d.offered).all(|(need, offered)| offered >= need)
}

/// `8 nvidia.com/gpu, 32 cpu and 256Gi memory`: a pod's asks, largest first by how users
/// think of them (accelerators and other extended resources, then CPU, memory, the rest).
fn describe(asks: &[Ask], devices: &[String]) -> String {
    let rank = |a: &&Ask| match a.resource.as_str() {
        "cpu" => 1,
        "memory" => 2,
        r if super::request::is_extended_resource(r) => 0,
        _ => 3,
    };
    let mut sorted: Vec<&Ask> = asks.iter().collect();
    crate::order::sort_by(&mut sorted, |a, b| (rank(a), a.resource.as_str()).cmp(&(rank(b), b.resource.as_str())));
    let mut parts: Vec<String> =
        sorted.iter().map(|a| format!("{} {}", show(&a.resource, a.units), a.resource)).collect();
    parts.extend(devices.iter().cloned());
    match parts.split_last() {
        None => "nothing".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::request::pod_asks;
    use crate::decode::RawJson;
    use crate::nodes::{Flow, NodeWants, read_nodes};
    use crate::pod::PodSpec;
    use serde_json::{Value, json};

    fn shape(name: &str, spec: Value) -> Shape {
        let spec: PodSpec = crate::decode::from_json(&spec).unwrap();
        let spec_path = Path::new("spec.template.spec");
        let asks = pod_asks(&spec, &spec_path, None).unwrap();
        let extended: Vec<&str> = asks.iter().map(|a| a.resource.as_str()).collect();
        let placement =
            Placement::read(spec.node_selector.as_ref(), spec.affinity.as_ref(), spec.tolerations.as_ref(), &extended)
                .unwrap();
        Shape {
            asks,
            placement,
            spec_path,
            name: name.to_string(),
            tolerations_from: Vec::new(),
            claims: Vec::new(),
            devices: Vec::new(),
        }
    }

    fn pod(resources: Value) -> Value {
        json!({"containers": [{"name": "c", "resources": {"requests": resources}}]})
    }

    fn gang(members: &[(usize, u64)], size: u64, domain: Option<&str>) -> Gang {
        Gang {
            members: members.to_vec(),
            size,
            at: Path::new("spec.scheduling.schedulingPolicy.gang.minCount"),
            value: BadValue::from(size as i64),
            domain: domain.map(str::to_string),
            what: "the gang",
        }
    }

    /// Four 8-GPU, 64-CPU nodes in two racks.
    fn gpu_nodes() -> Value {
        json!(
            (0..4)
                .map(|i| json!({"metadata": {"name": format!("gpu-{i}"), "labels": {"rack": format!("r{}", i / 2)}},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}}}))
                .collect::<Vec<_>>()
        )
    }

    /// The findings, and how many Nodes were read before the analysis settled.
    fn analyse(shapes: &mut [Shape], gangs: &[Gang], nodes: Value) -> (Vec<String>, usize) {
        let (labels, resources) = wanted_names(shapes, gangs);
        let wants = NodeWants { labels: Wanted::new(labels), resources: Wanted::new(resources) };
        let (labels, resources): (Vec<String>, Vec<String>) = (
            (0..wants.labels.len()).map(|i| wants.labels.name(i).to_string()).collect(),
            (0..wants.resources.len()).map(|i| wants.resources.name(i).to_string()).collect(),
        );
        let wants = NodeWants {
            labels: Wanted::new(labels.iter().map(String::as_str)),
            resources: Wanted::new(resources.iter().map(String::as_str)),
        };
        for s in shapes.iter_mut() {
            s.placement.resolve(&wants.labels);
        }
        let mut analysis = Analysis::new(shapes, gangs, &wants.labels, &wants.resources);
        let list = json!({"items": nodes}).to_string();
        let read = read_nodes(&list, &wants, |node| {
            analysis.add(node);
            if analysis.settled() { Flow::Stop } else { Flow::Continue }
        })
        .unwrap();
        let findings = analysis.findings().iter().map(|f| format!("{}: {} {}", f.at, f.value, f.message)).collect();
        (findings, read)
    }

    #[test]
    fn a_pod_larger_than_every_node() {
        let cases = [
            (
                json!({"nvidia.com/gpu": "16"}),
                "spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]: \"16\" no node can ever run this pod: one pod asks 16 nvidia.com/gpu, and the largest of the 4 eligible nodes has 8 allocatable",
            ),
            (
                json!({"cpu": "96"}),
                "spec.template.spec.containers[0].resources.requests[cpu]: \"96\" no node can ever run this pod: one pod asks 96 cpu, and the largest of the 4 eligible nodes has 64 allocatable",
            ),
            (
                json!({"example.com/fpga": "1"}),
                "spec.template.spec.containers[0].resources.requests[example.com/fpga]: \"1\" no node can ever run this pod: one pod asks 1 example.com/fpga, and none of the 4 eligible nodes has any",
            ),
        ];
        for (resources, want) in cases {
            let (findings, read) = analyse(&mut [shape("pod", pod(resources))], &[], gpu_nodes());
            assert_eq!((findings, read), (vec![want.to_string()], 4));
        }
        let (findings, read) =
            analyse(&mut [shape("pod", pod(json!({"nvidia.com/gpu": "8", "cpu": "64"})))], &[], gpu_nodes());
        assert_eq!((findings.len(), read), (0, 1), "the first node that holds it settles the pod");
    }

    #[test]
    fn a_pod_no_node_admits() {
        let selector = json!({"containers": [{"name": "c"}], "nodeSelector": {"gpu": "h100"}});
        assert_eq!(
            analyse(&mut [shape("pod", selector)], &[], gpu_nodes()).0,
            [
                r#"spec.template.spec.nodeSelector: {"gpu":"h100"} no node can ever run this pod: no node has every label its nodeSelector asks for (checked 4 nodes)"#
            ]
        );
        let mut tainted = gpu_nodes();
        for n in tainted.as_array_mut().unwrap() {
            n["spec"] = json!({"taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]});
        }
        assert_eq!(
            analyse(&mut [shape("pod", pod(json!({"cpu": "1"})))], &[], tainted.clone()).0,
            [
                "spec.template.spec.tolerations:  no node can ever run this pod: every node that matches its nodeSelector and node affinity has a NoSchedule or NoExecute taint it does not tolerate (such as dedicated=ml:NoSchedule), counting its own tolerations (checked 4 nodes)"
            ]
        );
        let tolerating =
            json!({"containers": [{"name": "c"}], "tolerations": [{"key": "dedicated", "operator": "Exists"}]});
        assert!(analyse(&mut [shape("pod", tolerating)], &[], tainted).0.is_empty());
    }

    #[test]
    fn a_gang_larger_than_the_cluster_or_its_domain() {
        let eight = || shape("pod", pod(json!({"nvidia.com/gpu": "8"})));
        assert_eq!(
            analyse(&mut [eight()], &[gang(&[(0, 5)], 5, None)], gpu_nodes()),
            (vec!["spec.scheduling.schedulingPolicy.gang.minCount: 5 the gang of 5 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 4 nodes hold at most 4 of them, even when empty".to_string()], 4)
        );
        assert_eq!(analyse(&mut [eight()], &[gang(&[(0, 4)], 4, None)], gpu_nodes()), (vec![], 4));
        assert_eq!(
            analyse(&mut [eight()], &[gang(&[(0, 3)], 3, Some("rack"))], gpu_nodes()).0,
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: 3 the gang of 3 pods can never run at once in one \"rack\" domain: each pod asks 8 nvidia.com/gpu, and the largest domain, \"r0\" (2 nodes), holds at most 2 of them, even when empty"
            ]
        );
        // Small pods: many to a node. 16 pods of 2 CPUs share one rack of two 64-CPU nodes;
        // 4 pods of 4 GPUs fit one rack of two 8-GPU nodes.
        let small = shape("pod", pod(json!({"cpu": "2"})));
        assert_eq!(analyse(&mut [small], &[gang(&[(0, 16)], 16, Some("rack"))], gpu_nodes()), (vec![], 1));
        let four = shape("pod", pod(json!({"nvidia.com/gpu": "4"})));
        assert_eq!(analyse(&mut [four], &[gang(&[(0, 4)], 4, Some("rack"))], gpu_nodes()), (vec![], 2));
    }

    #[test]
    fn gangs_of_several_shapes() {
        // A Master and 7 Workers of 8 GPUs, all 8 at once: 4 fit.
        let mut shapes = [
            shape("Master pod", pod(json!({"nvidia.com/gpu": "8"}))),
            shape("Worker pod", pod(json!({"nvidia.com/gpu": "8"}))),
        ];
        assert_eq!(
            analyse(&mut shapes, &[gang(&[(0, 1), (1, 7)], 8, None)], gpu_nodes()).0,
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: 8 the gang of 8 pods can never run at once: each pod asks 8 nvidia.com/gpu, and the cluster's 4 nodes hold at most 4 of them, even when empty"
            ]
        );
        // Each shape fits one per node, but their CPUs together exceed the nodes'.
        let two = json!([{"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "8", "pods": "110"}}},
                         {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "8", "pods": "110"}}}]);
        let mut shapes = [
            shape("GPU pod", pod(json!({"nvidia.com/gpu": "8", "cpu": "8"}))),
            shape("CPU pod", pod(json!({"cpu": "60"}))),
        ];
        assert_eq!(
            analyse(&mut shapes, &[gang(&[(0, 2), (1, 2)], 4, None)], two.clone()).0,
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: 4 the gang of 4 pods can never run at once: together they ask at least 136 cpu, and the nodes that may run them offer 128 in all, even when empty"
            ]
        );
        // Three of the four at once can choose the smallest: 8 + 8 + 60 = 76 of 128.
        assert_eq!(analyse(&mut shapes, &[gang(&[(0, 2), (1, 2)], 3, None)], two).0, Vec::<String>::new());
    }

    #[test]
    fn pods_of_different_shapes_that_cannot_share_a_node() {
        // A Master and Workers of 5 GPUs each: alone, each fits every 8-GPU node, and 25 of the
        // cluster's 32 GPUs would do, but no node holds two of them: at most 4 at once.
        let mut shapes = [
            shape("Master pod", pod(json!({"nvidia.com/gpu": "5", "cpu": "1"}))),
            shape("Worker pod", pod(json!({"nvidia.com/gpu": "5", "cpu": "2"}))),
        ];
        assert_eq!(
            analyse(&mut shapes, &[gang(&[(0, 1), (1, 4)], 5, None)], gpu_nodes()).0,
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: 5 the gang of 5 pods can never run at once: each Master pod asks 5 nvidia.com/gpu and 1 cpu; each Worker pod asks 5 nvidia.com/gpu and 2 cpu, and the cluster's 4 nodes hold at most 4 of them, even when empty"
            ]
        );
        assert_eq!(analyse(&mut shapes, &[gang(&[(0, 1), (1, 4)], 4, None)], gpu_nodes()).0, Vec::<String>::new());
        // A Master asking for no GPU shares a node with a Worker: 5 at once fit.
        let mut shapes = [
            shape("Master pod", pod(json!({"cpu": "1"}))),
            shape("Worker pod", pod(json!({"nvidia.com/gpu": "5", "cpu": "2"}))),
        ];
        assert_eq!(analyse(&mut shapes, &[gang(&[(0, 1), (1, 4)], 5, None)], gpu_nodes()).0, Vec::<String>::new());
        // GPU pods of 3 and 5: one of each shares an 8-GPU node.
        let mut shapes = [
            shape("Master pod", pod(json!({"nvidia.com/gpu": "3"}))),
            shape("Worker pod", pod(json!({"nvidia.com/gpu": "5"}))),
        ];
        assert_eq!(
            analyse(&mut shapes, &[gang(&[(0, 4), (1, 4)], 8, None)], gpu_nodes()).0,
            Vec::<String>::new(),
            "each node takes a 3 and a 5: 8 at once"
        );
    }

    #[test]
    fn unknown_capacity_is_never_held_against_a_pod() {
        let nodes = json!([{"metadata": {"name": "hand-written", "labels": {"rack": "r0"}}}]);
        let mut shapes = [shape("pod", pod(json!({"nvidia.com/gpu": "64"})))];
        assert_eq!(analyse(&mut shapes, &[gang(&[(0, 100)], 100, Some("rack"))], nodes), (vec![], 1));
        let unreadable =
            json!([{"metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/gpu": "lots", "pods": "110"}}}]);
        assert_eq!(
            analyse(&mut [shape("pod", pod(json!({"nvidia.com/gpu": "64"})))], &[], unreadable).0,
            Vec::<String>::new()
        );
        let no_pods_listed = json!([{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}}]);
        assert_eq!(
            analyse(&mut [shape("pod", pod(json!({"cpu": "1"})))], &[gang(&[(0, 4)], 4, None)], no_pods_listed).0,
            Vec::<String>::new()
        );
        let full = json!([{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "pods": "0"}}}]);
        assert_eq!(
            analyse(&mut [shape("pod", pod(json!({"cpu": "1"})))], &[], full).0,
            [
                "spec.template.spec:  no node can ever run this pod: the eligible node takes no pods (allocatable pods: 0)"
            ]
        );
        let _ = RawJson(crate::decode::to_raw(&json!(null)));
    }
}

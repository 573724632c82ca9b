//! DRA devices: whether some Node a pod may use can ever satisfy every request of its
//! ResourceClaims at once, from the cluster's ResourceSlices and DeviceClasses
//! (`reference/dra.md` §10).
//!
//! Supply is only ever over-estimated, so a shortfall is a proof:
//!
//! - a Node's supply for a request is the devices of the pools that reach it (slices with its
//!   `nodeName`, a `nodeSelector` it matches, `allNodes`, or per-device node selection) that
//!   may match the class's and the request's selectors ([`super::cel`]); only a pool's
//!   highest `generation` counts;
//! - a pool whose highest generation has fewer slices than `resourceSliceCount` is being
//!   published: any request its driver may serve is unbounded, on every Node;
//! - a slice of an older generation reaching a Node no newer slice of its pool reaches (the
//!   allocator's stable version counts it there) is unbounded too;
//! - `adminAccess` and devices with `allowMultipleAllocations` are unbounded; taints, shared
//!   counters, partitions and current allocations are never subtracted;
//! - a request whose class does not exist (the claims rule set's business) sets no limit; a
//!   claim or template that does not exist or cannot be read is left out.
//!
//! A Node fits when each request has an alternative with enough devices (`count`, or one
//! for `All`), and the plain requests (one alternative, `ExactCount`, no `adminAccess`)
//! together need no more devices than the Node has that match any of them.
//!
//! Cost: each device is matched once against each alternative (slices × devices ×
//! alternatives); then a Node adds up the slices naming it, those whose node selector it
//! matches (more than 64 such slices are taken to reach every Node, so no Node is matched
//! against all of them), and once what reaches every Node.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::cel::{Device, Selector};
use super::fit::{Finding, Shape};
use super::placement::Placement;
use crate::cluster::Query;
use crate::field::{BadValue, Path, plural};
use crate::nodes::{Node, Wanted};

/// The DeviceClass list: every class, only the extended resource it serves and its
/// selectors. One query for every use (the topology rules' and the claims rule set's):
/// policy-server keeps a store per distinct query.
pub fn device_class_query() -> Query<'static> {
    Query {
        api_version: "resource.k8s.io/v1",
        kind: "DeviceClass",
        namespace: None,
        field_masks: &["spec.extendedResourceName", "spec.selectors"],
    }
}

/// Devices no Node limits.
pub const UNBOUNDED: u64 = u64::MAX;
/// How many slices reaching Nodes by selector (or of an older generation) each Node is matched
/// against before they are all taken to reach every Node ([`Supply::fold_if_many`]).
const MAX_SELECTED: usize = 64;

/// The most devices one claim's allocation holds (`AllocationResultsMaxSize`, resource.k8s.io/v1).
pub const MAX_DEVICES_PER_CLAIM: u64 = 32;

/// The field masks a ResourceClaim or ResourceClaimTemplate is read with, by the claims and
/// the topology rule sets alike (one cached GET in the bundle): its device requests, and
/// whether a claim is allocated already.
pub const CLAIM_SOURCE_MASKS: &[&str] =
    &["metadata.name", "spec.devices.requests", "spec.spec.devices.requests", "status.allocation"];

/// How many devices a request wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Count(u64),
    /// Every matching device of a pool: at least one.
    All,
}

impl Mode {
    fn least(self) -> u64 {
        match self {
            Mode::Count(n) => n,
            Mode::All => 1,
        }
    }
}

/// One way to satisfy a request: an `exactly` request, or one `firstAvailable` subrequest.
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    /// `request` or `request/subrequest`, for messages.
    pub name: String,
    pub class: String,
    selectors: Vec<Selector>,
    pub mode: Mode,
    admin: bool,
}

/// A request of a claim: one alternative, or its `firstAvailable` list.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub alternatives: Vec<Alternative>,
}

/// One of a pod's claims, read from its ResourceClaim or ResourceClaimTemplate.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// `spec.resourceClaims[i]` of the pod.
    pub at: Path,
    /// The claim's or template's kind and name.
    pub kind: String,
    pub name: String,
    pub requests: Vec<Request>,
    /// Allocated once for every pod that names it (a ResourceClaim, a group claim), not per pod.
    pub shared: bool,
}

impl Claim {
    /// Reads a claim's `spec` (a ResourceClaim's, or a template's `spec.spec`); `None` when it
    /// cannot be read: no claim is made about it.
    pub fn read(at: Path, kind: &str, name: &str, spec: &Value) -> Option<Claim> {
        let mut requests = Vec::new();
        let listed = spec.pointer("/devices/requests").unwrap_or(&Value::Null);
        for r in listed.as_array().map(Vec::as_slice).unwrap_or_default() {
            let name = r.get("name")?.as_str()?;
            let alternatives = match (r.get("exactly"), r.get("firstAvailable")) {
                (Some(e), None) => vec![alternative(name.to_string(), e, true)?],
                (None, Some(Value::Array(subs))) if !subs.is_empty() => subs
                    .iter()
                    .map(|s| alternative(format!("{name}/{}", s.get("name")?.as_str()?), s, false))
                    .collect::<Option<_>>()?,
                _ => return None,
            };
            requests.push(Request { alternatives });
        }
        Some(Claim { at, kind: kind.to_string(), name: name.to_string(), requests, shared: kind == "ResourceClaim" })
    }

    /// The fewest devices one allocation of the claim holds.
    pub fn least_devices(&self) -> u64 {
        self.requests
            .iter()
            .map(|r| r.alternatives.iter().map(|a| a.mode.least()).min().unwrap_or(0))
            .fold(0, u64::saturating_add)
    }
}

fn alternative(name: String, r: &Value, exactly: bool) -> Option<Alternative> {
    let class = r.get("deviceClassName")?.as_str()?.to_string();
    let selectors = selectors(r.get("selectors"))?;
    let mode = match r.get("allocationMode").and_then(Value::as_str).unwrap_or("ExactCount") {
        "ExactCount" | "" => Mode::Count(match r.get("count") {
            None | Some(Value::Null) => 1,
            Some(n) => n.as_u64().filter(|n| *n > 0)?,
        }),
        "All" => Mode::All,
        _ => return None,
    };
    let admin = exactly && r.get("adminAccess").and_then(Value::as_bool).unwrap_or(false);
    Some(Alternative { name, class, selectors, mode, admin })
}

/// A list of `{cel: {expression}}`; `None` when it is not one.
fn selectors(list: Option<&Value>) -> Option<Vec<Selector>> {
    match list {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => {
            items.iter().map(|s| s.pointer("/cel/expression").and_then(Value::as_str).map(Selector::parse)).collect()
        }
        Some(_) => None,
    }
}

/// The DeviceClasses' selectors by class name, from the class list's text.
pub fn class_selectors(list: &str) -> Result<HashMap<String, Vec<Selector>>, String> {
    let list: Value = serde_json::from_str(list).map_err(|e| e.to_string())?;
    let items = list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(items
        .iter()
        .filter_map(|c| {
            let name = c.pointer("/metadata/name")?.as_str()?.to_string();
            // Selectors that cannot be read match every device.
            let selectors = selectors(c.pointer("/spec/selectors")).unwrap_or_default();
            Some((name, selectors))
        })
        .collect())
}

/// The ResourceSlice list's field masks: what reaches a Node, the pool, and each device's
/// attributes, capacity and sharing.
pub const SLICE_MASKS: &[&str] = &[
    "spec.driver",
    "spec.pool",
    "spec.nodeName",
    "spec.nodeSelector",
    "spec.allNodes",
    "spec.perDeviceNodeSelection",
    "spec.devices.attributes",
    "spec.devices.capacity",
    "spec.devices.allowMultipleAllocations",
    "spec.devices.nodeName",
    "spec.devices.nodeSelector",
    "spec.devices.allNodes",
];

/// Which Nodes a slice (or, with per-device node selection, a device) reaches.
#[derive(Debug)]
enum Reach {
    Name(String),
    Selector(Placement),
    All,
}

impl Reach {
    /// `None`: the slice's node access cannot be read; it is taken to reach every Node.
    fn read(v: &Value) -> Option<Reach> {
        if let Some(name) = v.get("nodeName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            return Some(Reach::Name(name.to_string()));
        }
        if let Some(selector) = v.get("nodeSelector").filter(|s| !s.is_null()) {
            let mut placement = Placement::node_selector(selector)?;
            // A slice's node selector reads no taints.
            placement.tolerate_every_taint();
            return Some(Reach::Selector(placement));
        }
        Some(Reach::All)
    }
}

/// Devices of one slice (or one device) reaching the same Nodes: per alternative, how many may
/// serve it, and how many may serve any plain request.
#[derive(Debug)]
struct Entry {
    pool: usize,
    /// Of an older generation than its pool's highest.
    stale: bool,
    counts: Vec<u64>,
    /// Per pod: devices that may serve one of its plain requests.
    plain: Vec<u64>,
}

/// What the ResourceSlices offer the requests of the pods checked.
#[derive(Debug)]
pub struct Supply {
    /// Alternatives of every pod's requests, flattened: entries count devices per index.
    entries: Vec<(Option<Reach>, Entry)>,
    by_node: HashMap<String, Vec<usize>>,
    /// Entries reaching Nodes by selector (each Node is matched against them).
    elsewhere: Vec<usize>,
    /// What the newest slices reaching every Node offer, added up once; and, by pool, whether
    /// one of them is the pool's.
    everywhere: (Vec<u64>, Vec<u64>),
    everywhere_pools: Vec<bool>,
    /// Alternatives no Node limits (an incomplete pool may serve them, `adminAccess`).
    unbounded: Vec<bool>,
    /// Per alternative: the devices that may serve it from slices (or devices) not bound to
    /// one Node by name.
    non_local: Vec<u64>,
    pub slices: usize,
}

/// The requests of every pod checked, flattened: alternative `i` of all is `alternatives[i]`,
/// with the selectors of its class resolved.
pub struct Asked<'c> {
    alternatives: Vec<(&'c Alternative, &'c [Selector])>,
    /// Whether the alternative belongs to a plain request (and which pod's, by index).
    plain: Vec<Option<usize>>,
    /// Per pod: the index of its first alternative.
    first: Vec<usize>,
}

impl<'c> Asked<'c> {
    /// `pods[p]` holds pod `p`'s shape and claims; `classes` the DeviceClasses by name.
    /// Alternatives whose class does not exist are left unbounded.
    pub fn new(pods: &'c [(usize, Vec<Claim>)], classes: &'c HashMap<String, Vec<Selector>>) -> (Self, Vec<bool>) {
        let mut alternatives = Vec::new();
        let mut plain = Vec::new();
        let mut unbounded = Vec::new();
        let mut first = Vec::new();
        for (p, (_, claims)) in pods.iter().enumerate() {
            first.push(alternatives.len());
            for request in claims.iter().flat_map(|c| &c.requests) {
                let is_plain =
                    matches!(request.alternatives.as_slice(), [a] if !a.admin && matches!(a.mode, Mode::Count(_)));
                for a in &request.alternatives {
                    let class = classes.get(&a.class);
                    alternatives.push((a, class.map_or(&[][..], Vec::as_slice)));
                    plain.push(is_plain.then_some(p));
                    unbounded.push(a.admin || class.is_none());
                }
            }
        }
        (Asked { alternatives, plain, first }, unbounded)
    }

    /// Per pod: the index of its first alternative.
    pub fn first(&self) -> Vec<usize> {
        self.first.clone()
    }

    fn may_serve(&self, i: usize, device: &Device) -> bool {
        let (a, class) = self.alternatives[i];
        class.iter().chain(&a.selectors).all(|s| s.may_match(device))
    }

    fn may_serve_driver(&self, i: usize, driver: &str) -> bool {
        let (a, class) = self.alternatives[i];
        class.iter().chain(&a.selectors).all(|s| s.may_match_driver(driver))
    }
}

impl Supply {
    /// The slices of a slice list read from its text.
    pub fn items(list: &Value) -> &[Value] {
        list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
    }

    /// Reads the slices once, counting each device for the alternatives it may serve: linear
    /// in slices × devices × alternatives. `unbounded` comes from [`Asked::new`].
    pub fn read(items: &[Value], asked: &Asked, mut unbounded: Vec<bool>) -> Supply {
        fn spec_of(s: &Value) -> Option<(&str, &str, i64, u64)> {
            let spec = s.get("spec")?;
            let pool = spec.get("pool")?;
            Some((
                spec.get("driver")?.as_str()?,
                pool.get("name")?.as_str()?,
                pool.get("generation").and_then(Value::as_i64).unwrap_or(0),
                pool.get("resourceSliceCount").and_then(Value::as_u64).unwrap_or(1),
            ))
        }
        // Pools by (driver, name): the highest generation, its slices and how many it should
        // have, and its driver.
        let mut index: HashMap<(&str, &str), usize> = HashMap::new();
        let mut pools: Vec<(i64, u64, u64, &str)> = Vec::new();
        for (driver, name, generation, count) in items.iter().filter_map(spec_of) {
            let i = *index.entry((driver, name)).or_insert_with(|| {
                pools.push((generation, 0, count, driver));
                pools.len() - 1
            });
            let pool = &mut pools[i];
            if generation > pool.0 {
                *pool = (generation, 0, count, driver);
            }
            if generation == pool.0 {
                pool.1 += 1;
            }
        }
        let n = asked.alternatives.len();
        for (_, slices, count, driver) in &pools {
            if slices < count {
                for (i, u) in unbounded.iter_mut().enumerate() {
                    *u |= asked.may_serve_driver(i, driver);
                }
            }
        }
        let mut supply = Supply {
            entries: Vec::new(),
            by_node: HashMap::new(),
            elsewhere: Vec::new(),
            everywhere: (vec![0; n], vec![0; asked.first.len()]),
            everywhere_pools: vec![false; pools.len()],
            unbounded,
            non_local: vec![0; n],
            slices: 0,
        };
        for item in items {
            let Some((driver, name, generation, _)) = spec_of(item) else { continue };
            supply.slices += 1;
            let spec = &item["spec"];
            let pool = index[&(driver, name)];
            let stale = generation < pools[pool].0;
            let devices = spec.get("devices").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let per_device = spec.get("perDeviceNodeSelection").and_then(Value::as_bool).unwrap_or(false);
            let pods = asked.first.len();
            let mut entry = Entry { pool, stale, counts: vec![0; n], plain: vec![0; pods] };
            for d in devices {
                let device = Device {
                    driver,
                    attributes: d.get("attributes").and_then(Value::as_object),
                    capacity: d.get("capacity").and_then(Value::as_object),
                };
                let shared = d.get("allowMultipleAllocations").and_then(Value::as_bool).unwrap_or(false);
                let add = if shared { UNBOUNDED } else { 1 };
                if per_device {
                    let mut own = Entry { pool, stale, counts: vec![0; n], plain: vec![0; pods] };
                    count(asked, &device, add, &mut own);
                    supply.push(Reach::read(d), own);
                } else {
                    count(asked, &device, add, &mut entry);
                }
            }
            if !per_device {
                supply.push(Reach::read(spec), entry);
            }
        }
        supply.fold_if_many();
        supply
    }

    /// Files an entry where Nodes find it: by name, among those matched by selector, or
    /// (newest slices reaching every Node) added to what every Node offers, so a Node costs
    /// what reaches it alone.
    fn push(&mut self, reach: Option<Reach>, entry: Entry) {
        let i = self.entries.len();
        if !matches!(reach, Some(Reach::Name(_))) {
            add(&mut self.non_local, &entry.counts);
        }
        match &reach {
            Some(Reach::Name(node)) => self.by_node.entry(node.clone()).or_default().push(i),
            Some(Reach::Selector(_)) => self.elsewhere.push(i),
            _ if entry.stale => self.elsewhere.push(i),
            _ => {
                add(&mut self.everywhere.0, &entry.counts);
                add(&mut self.everywhere.1, &entry.plain);
                self.everywhere_pools[entry.pool] = true;
                return;
            }
        }
        self.entries.push((reach, entry));
    }

    /// More entries than [`MAX_SELECTED`] reaching Nodes by selector (or older generations) are
    /// taken to reach every Node, so that a Node is never matched against all of them (Nodes ×
    /// entries): the fresh ones with what they hold, the older ones without limit. Supply only
    /// grows, so no finding is made that would not be made without this.
    fn fold_if_many(&mut self) {
        if self.elsewhere.len() <= MAX_SELECTED {
            return;
        }
        for i in std::mem::take(&mut self.elsewhere) {
            let e = &self.entries[i].1;
            let widen =
                |c: &[u64]| -> Vec<u64> { c.iter().map(|c| if e.stale && *c > 0 { UNBOUNDED } else { *c }).collect() };
            add(&mut self.everywhere.0, &widen(&e.counts));
            add(&mut self.everywhere.1, &widen(&e.plain));
        }
    }

    /// The label keys the slices' node selectors read.
    pub fn label_keys(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter_map(|(r, _)| match r {
                Some(Reach::Selector(p)) => Some(p.label_keys()),
                _ => None,
            })
            .flatten()
    }

    pub fn resolve(&mut self, wanted: &Wanted) {
        for (reach, _) in &mut self.entries {
            if let Some(Reach::Selector(p)) = reach {
                p.resolve(wanted);
            }
        }
    }

    /// What `node` offers: per alternative, and per pod the devices that may serve any of its
    /// plain requests.
    fn on_node(&self, node: &Node, pods: usize) -> (Vec<u64>, Vec<u64>) {
        let mut counts: Vec<u64> = self.unbounded.iter().map(|u| if *u { UNBOUNDED } else { 0 }).collect();
        add(&mut counts, &self.everywhere.0);
        let mut plain = self.everywhere.1.clone();
        debug_assert_eq!(plain.len(), pods);
        let local = node.name.as_deref().and_then(|n| self.by_node.get(n)).map(Vec::as_slice).unwrap_or_default();
        let reaching =
            local.iter().chain(&self.elsewhere).map(|i| &self.entries[*i]).filter(|(reach, _)| match reach {
                Some(Reach::Selector(p)) => p.admits(node).is_ok(),
                _ => true,
            });
        let (fresh, stale): (Vec<&Entry>, Vec<&Entry>) = reaching.map(|(_, e)| e).partition(|e| !e.stale);
        for e in &fresh {
            add(&mut counts, &e.counts);
            add(&mut plain, &e.plain);
        }
        // An older generation where no newer slice of its pool reaches: only the allocator's
        // stable version counts it, by what it holds; no limit here.
        let fresh_pools: HashSet<usize> = fresh.iter().map(|f| f.pool).collect();
        for e in stale.iter().filter(|e| !self.everywhere_pools[e.pool] && !fresh_pools.contains(&e.pool)) {
            let unbounded =
                |c: &Vec<u64>| -> Vec<u64> { c.iter().map(|c| if *c > 0 { UNBOUNDED } else { 0 }).collect() };
            add(&mut counts, &unbounded(&e.counts));
            add(&mut plain, &unbounded(&e.plain));
        }
        (counts, plain)
    }
}

fn add(totals: &mut [u64], counts: &[u64]) {
    for (t, c) in totals.iter_mut().zip(counts) {
        *t = t.saturating_add(*c);
    }
}

/// Counts `device` (`add`: one, or unbounded when it may be shared) for each alternative it
/// may serve, and once for each pod with a plain request it may serve.
fn count(asked: &Asked, device: &Device, add: u64, entry: &mut Entry) {
    let mut plain = vec![false; entry.plain.len()];
    for i in 0..asked.alternatives.len() {
        if asked.may_serve(i, device) {
            entry.counts[i] = entry.counts[i].saturating_add(add);
            if let Some(p) = asked.plain[i] {
                plain[p] = true;
            }
        }
    }
    for (total, _) in entry.plain.iter_mut().zip(plain).filter(|(_, p)| *p) {
        *total = total.saturating_add(add);
    }
}

/// Whether each pod with claims fits some Node it may use, built one Node at a time.
pub struct DeviceAnalysis<'a> {
    supply: &'a Supply,
    /// Per pod: its claims and the shape it is a pod of.
    pods: &'a [(usize, Vec<Claim>)],
    first: Vec<usize>,
    states: Vec<PodState>,
    nodes: usize,
}

#[derive(Clone, Debug, Default)]
struct PodState {
    fits: bool,
    admitted: usize,
    /// Per alternative of the pod: the most an admitted Node offers.
    largest: Vec<u64>,
}

impl<'a> DeviceAnalysis<'a> {
    pub fn new(supply: &'a Supply, pods: &'a [(usize, Vec<Claim>)], first: Vec<usize>) -> Self {
        let total = supply.unbounded.len();
        let states = (0..pods.len())
            .map(|p| {
                let end = first.get(p + 1).copied().unwrap_or(total);
                PodState { largest: vec![0; end - first[p]], ..PodState::default() }
            })
            .collect();
        DeviceAnalysis { supply, pods, first, states, nodes: 0 }
    }

    /// Takes one Node into account; with `gangs`, returns per shape the most of its pods the
    /// Node's devices serve at once (`None`: no limit), for the gangs' analysis.
    pub fn add(&mut self, node: &Node, shapes: &[Shape], gangs: bool) -> Vec<Option<u64>> {
        self.nodes += 1;
        let waiting: Vec<usize> = (0..self.pods.len())
            .filter(|p| !self.states[*p].fits && shapes[self.pods[*p].0].placement.admits(node).is_ok())
            .collect();
        let mut served = Vec::new();
        if waiting.is_empty() && !gangs {
            return served;
        }
        let (counts, plain) = self.supply.on_node(node, self.pods.len());
        if gangs {
            served = vec![None; shapes.len()];
            for (p, (shape, claims)) in self.pods.iter().enumerate() {
                let end = self.first.get(p + 1).copied().unwrap_or(counts.len());
                served[*shape] = pods_served(claims, &counts[self.first[p]..end], plain[p]);
            }
        }
        for p in waiting {
            let state = &mut self.states[p];
            state.admitted += 1;
            let offered = &counts[self.first[p]..self.first[p] + state.largest.len()];
            for (l, c) in state.largest.iter_mut().zip(offered) {
                *l = (*l).max(*c);
            }
            state.fits = fits(&self.pods[p].1, offered, plain[p]);
        }
        served
    }

    /// Per pod shape with claims: the first claim it shares with the rest of its gang whose
    /// allocation is pinned to one Node, because some request of it may be served only by
    /// devices of slices (or devices) bound to one Node by name.
    pub fn pinned(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (p, (shape, claims)) in self.pods.iter().enumerate() {
            let mut i = self.first[p];
            for claim in claims {
                let mut local = false;
                for request in &claim.requests {
                    let n = request.alternatives.len();
                    local |= (i..i + n).all(|a| !self.supply.unbounded[a] && self.supply.non_local[a] == 0);
                    i += n;
                }
                if claim.shared && local && !out.iter().any(|(s, _)| s == shape) {
                    out.push((*shape, format!("{} {:?}", claim.kind, claim.name)));
                }
            }
        }
        out
    }

    /// Per pod shape with claims: what its own (not shared) claims ask, for messages.
    pub fn asked(&self) -> Vec<(usize, Vec<String>)> {
        self.pods
            .iter()
            .map(|(shape, claims)| {
                let asked = claims
                    .iter()
                    .filter(|c| !c.shared)
                    .flat_map(|c| &c.requests)
                    .map(|r| r.alternatives.iter().map(describe).collect::<Vec<_>>().join(" or "))
                    .collect();
                (*shape, asked)
            })
            .collect()
    }

    /// Every pod fits some Node: the rest of the list changes nothing.
    pub fn settled(&self) -> bool {
        self.states.iter().all(|s| s.fits)
    }

    pub fn findings(&self, shapes: &[Shape]) -> Vec<Finding> {
        let checked =
            format!("checked {} and {}", plural(self.nodes, "node"), plural(self.supply.slices, "ResourceSlice"));
        let mut out = Vec::new();
        for ((shape, claims), state) in self.pods.iter().zip(&self.states) {
            // No Node admits the pod at all: the placement finding says so.
            if state.fits || state.admitted == 0 {
                continue;
            }
            let shape = &shapes[*shape];
            let of_the = if state.admitted == 1 {
                "the node it may use".to_string()
            } else {
                format!("any of the {} it may use", plural(state.admitted, "node"))
            };
            let mut i = 0;
            let mut short = None;
            'claims: for claim in claims {
                for request in &claim.requests {
                    let offered = &state.largest[i..i + request.alternatives.len()];
                    i += request.alternatives.len();
                    if request.alternatives.iter().zip(offered).all(|(a, o)| *o < a.mode.least()) {
                        short = Some((claim, request, offered));
                        break 'claims;
                    }
                }
            }
            let finding = match short {
                Some((claim, request, offered)) => {
                    let what: Vec<String> = request
                        .alternatives
                        .iter()
                        .zip(offered)
                        .map(|(a, o)| format!("{} ({} at most)", describe(a), o))
                        .collect();
                    let asks = match what.as_slice() {
                        [one] => format!("request {:?} asks for {one}", request.alternatives[0].name),
                        more => format!("no alternative of its request can be satisfied: {}", more.join(", ")),
                    };
                    Finding {
                        gang: false,
                        at: claim.at.clone(),
                        value: BadValue::from(claim.name.as_str()),
                        message: format!(
                            "no node can ever run this {}: in its claim from {} {:?}, {asks} on {of_the}, counting the devices of the ResourceSlices that reach each node ({checked})",
                            shape.name, claim.kind, claim.name
                        ),
                        resources: Vec::new(),
                    }
                }
                None => Finding {
                    gang: false,
                    at: shape.spec_path.child("resourceClaims"),
                    value: BadValue::omitted(),
                    message: format!(
                        "no node can ever run this {}: each request of its claims has enough matching devices somewhere, but no node it may use has them all at once ({checked})",
                        shape.name
                    ),
                    resources: Vec::new(),
                },
            };
            out.push(finding);
        }
        out
    }
}

/// How many pods with `claims` a Node offering `offered` (per alternative of their requests, in
/// order) and `plain` devices for their plain requests serves at once, counting only the
/// claims each pod gets its own of; `None` when none is its own. Sound for many pods: a
/// `firstAvailable` request is served by the devices of each alternative in turn (summed),
/// `All` takes every matching device, so one pod per Node, unless no Node limits them.
fn pods_served(claims: &[Claim], offered: &[u64], plain: u64) -> Option<u64> {
    let (mut i, mut most, mut plain_need, mut own) = (0, UNBOUNDED, 0u64, false);
    for claim in claims {
        for request in &claim.requests {
            let n = request.alternatives.len();
            let offered = &offered[i..i + n];
            i += n;
            if claim.shared {
                continue;
            }
            own = true;
            let served = request
                .alternatives
                .iter()
                .zip(offered)
                .map(|(a, o)| match a.mode {
                    _ if *o == UNBOUNDED => UNBOUNDED,
                    Mode::Count(c) => o / c,
                    Mode::All => (*o).min(1),
                })
                .fold(0, u64::saturating_add);
            most = most.min(served);
            if let [a] = request.alternatives.as_slice()
                && !a.admin
                && let Mode::Count(c) = a.mode
            {
                plain_need = if offered[0] == UNBOUNDED { UNBOUNDED } else { plain_need.saturating_add(c) };
            }
        }
    }
    if plain_need > 0 && plain_need != UNBOUNDED && plain != UNBOUNDED {
        most = most.min(plain / plain_need);
    }
    own.then_some(most)
}

/// Whether a Node offering `offered` (per alternative of the pod's requests, in order) and
/// `plain` devices for its plain requests together can satisfy every request at once.
fn fits(claims: &[Claim], offered: &[u64], plain: u64) -> bool {
    let mut i = 0;
    let mut plain_need = 0u64;
    for request in claims.iter().flat_map(|c| &c.requests) {
        let n = request.alternatives.len();
        if !request.alternatives.iter().zip(&offered[i..i + n]).any(|(a, o)| *o >= a.mode.least()) {
            return false;
        }
        if let [a] = request.alternatives.as_slice()
            && !a.admin
            && let Mode::Count(c) = a.mode
        {
            // A request nothing limits (an incomplete pool may serve it) may take any device.
            let c = if offered[i] == UNBOUNDED { UNBOUNDED } else { c };
            plain_need = plain_need.saturating_add(c);
        }
        i += n;
    }
    plain_need == UNBOUNDED || plain_need <= plain
}

fn describe(a: &Alternative) -> String {
    match a.mode {
        Mode::Count(1) => format!("1 device of DeviceClass {:?}", a.class),
        Mode::Count(n) => format!("{n} devices of DeviceClass {:?}", a.class),
        Mode::All => format!("all devices of DeviceClass {:?} (at least one)", a.class),
    }
}

//! What one pod asks of a node, as the scheduler computes it (component-helpers
//! `resource.PodRequests`, which NodeResourcesFit uses) on the Pod the apiserver stored: the
//! containers' requests summed, the largest init container's (with the restartable sidecars
//! before it, which keep running), pod-level resources where set, and the pod overhead.
//!
//! The Pod is the one the apiserver defaulted (`SetDefaults_Pod`): a container's limit stands
//! for its missing request, and a missing pod-level request of CPU or memory is the containers'
//! own total when they ask for it, the pod-level limit only when none does (releases before
//! 1.34 took the limit: where releases differ, the smaller figure is taken). Amounts are added
//! exactly and rounded once per resource, as the scheduler does. An amount that cannot be
//! read makes its resource unknown: no claim rests on it.

use serde_json::Value;

use crate::decode::RawJson;
use crate::field::Path;
use crate::pod::{Container, PodSpec};
use crate::quantity::{fine_to_units, fine_units};

/// The most distinct resources a pod's asks are read with: each is compared with every Node,
/// and no real pod asks for more. Past it, no capacity claim is made about the pod (and
/// reading stops, so a payload of thousands of made-up names costs no more than this).
pub const MAX_RESOURCES: usize = 64;

/// One resource the pod asks for: how much, in the scheduler's units (CPU in millicores),
/// and where the largest share of it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    pub resource: String,
    pub units: u64,
    pub at: Path,
}

/// Resources the scheduler's NodeResourcesFit checks: CPU, memory, ephemeral storage and the
/// scalar resources (extended resources such as `nvidia.com/gpu`, hugepages, attachable
/// volumes, `kubernetes.io/`-prefixed native resources). It ignores any other name.
pub fn is_checked_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage")
        || name.starts_with("hugepages-")
        || name.starts_with("attachable-volumes-")
        || name.contains("kubernetes.io/")
        || is_extended_resource(name)
}

/// An extended resource (`v1helper.IsExtendedResourceName`): a domain-prefixed name outside
/// `kubernetes.io/`, not a quota's `requests.` name. Device plugins advertise them, and with
/// DRA (1.34+) a DeviceClass may serve one.
pub fn is_extended_resource(name: &str) -> bool {
    name.contains('/')
        && !name.contains("kubernetes.io/")
        && !name.starts_with("requests.")
        && crate::names::is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// Resources a pod may ask for at pod level (`IsSupportedPodLevelResource`).
fn is_pod_level(name: &str) -> bool {
    matches!(name, "cpu" | "memory") || name.starts_with("hugepages-")
}

/// An amount in fine units ([`crate::quantity::FINE`]), or one that cannot be read.
type Amount = Option<u128>;

/// One entry of a `requests` or `limits` map.
struct Entry {
    resource: String,
    amount: Amount,
    at: Path,
}

/// A `requests` or `limits` map (at `at`): each checked resource with its amount; `None`
/// past [`MAX_RESOURCES`] of them.
fn entries(raw: Option<&RawJson>, at: &Path) -> Option<Vec<Entry>> {
    let Some(raw) = raw else { return Some(Vec::new()) };
    located(serde_json::from_str::<CheckedMap>(raw.0.get()).ok()?, at)
}

/// A map's entries with where each is written; `None` past [`MAX_RESOURCES`].
fn located(map: CheckedMap, at: &Path) -> Option<Vec<Entry>> {
    Some(map.0?.into_iter().map(|(resource, amount)| Entry { at: at.key(&resource), resource, amount }).collect())
}

/// The checked resources of a JSON map, read without building the map: the entries are kept in
/// order up to [`MAX_RESOURCES`] and then only skipped (`None`), so thousands of made-up names
/// cost one pass. Anything but an object reads as no entries, as the typed Pod reads it.
struct CheckedMap(Option<Vec<(String, Amount)>>);

impl<'de> serde::Deserialize<'de> for CheckedMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CheckedMapVisitor)
    }
}

struct CheckedMapVisitor;

impl<'de> serde::de::Visitor<'de> for CheckedMapVisitor {
    type Value = CheckedMap;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map of resource amounts")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<CheckedMap, A::Error> {
        let mut out: Vec<(String, Amount)> = Vec::new();
        let mut over = false;
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if over || !is_checked_resource(&name) {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            // int-or-string: a custom resource's template may write `cpu: 4`.
            let amount = match map.next_value::<Value>()? {
                Value::String(s) => fine_units(&name, &s),
                Value::Number(n) => fine_units(&name, &n.to_string()),
                _ => None,
            };
            // A repeated key: the last one counts, as when the map is decoded.
            if let Some(entry) = out.iter_mut().find(|(r, _)| *r == name) {
                entry.1 = amount;
            } else if out.len() == MAX_RESOURCES {
                over = true;
            } else {
                out.push((name.into_owned(), amount));
            }
        }
        Ok(CheckedMap((!over).then_some(out)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<CheckedMap, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(CheckedMap(Some(Vec::new())))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<CheckedMap, E> {
        Ok(CheckedMap(Some(Vec::new())))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<CheckedMap, E> {
        self.visit_unit()
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<CheckedMap, E> {
        self.visit_unit()
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<CheckedMap, E> {
        self.visit_unit()
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<CheckedMap, E> {
        self.visit_unit()
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<CheckedMap, E> {
        self.visit_unit()
    }
}

/// A `resources` block's two maps, read as [`CheckedMap`]s (other fields skipped).
#[derive(serde::Deserialize)]
struct ResourcesText {
    #[serde(default = "no_entries")]
    requests: CheckedMap,
    #[serde(default = "no_entries")]
    limits: CheckedMap,
}

fn no_entries() -> CheckedMap {
    CheckedMap(Some(Vec::new()))
}

/// Requests and limits, each amount with where it is written.
struct Block {
    requests: Vec<Entry>,
    limits: Vec<Entry>,
}

impl Block {
    /// The `resources` block at `at`; `None` past [`MAX_RESOURCES`].
    fn read(resources: Option<&RawJson>, at: &Path) -> Option<Block> {
        // Anything but an object (or a field of the wrong type) reads as no entries.
        let text = resources
            .and_then(|r| serde_json::from_str::<ResourcesText>(r.0.get()).ok())
            .unwrap_or(ResourcesText { requests: no_entries(), limits: no_entries() });
        Some(Block {
            requests: located(text.requests, &at.child("requests"))?,
            limits: located(text.limits, &at.child("limits"))?,
        })
    }

    /// The requests after the apiserver's defaulting: a limit stands for a missing request
    /// (not for one that is written but cannot be read).
    fn effective(self) -> impl Iterator<Item = Entry> {
        let Block { mut requests, limits } = self;
        for limit in limits {
            if !requests.iter().any(|r| r.resource == limit.resource) {
                requests.push(limit);
            }
        }
        requests.into_iter()
    }

    /// `other`'s entries replace this block's, key by key (a strategic merge of maps).
    fn merge(&mut self, other: Block) {
        for (mine, theirs) in [(&mut self.requests, other.requests), (&mut self.limits, other.limits)] {
            mine.retain(|m| !theirs.iter().any(|t| t.resource == m.resource));
            mine.extend(theirs);
        }
    }
}

/// Per resource: the total so far (`None`: some part cannot be read), and where its largest
/// share is written.
struct Total {
    resource: String,
    amount: Amount,
    largest: Option<(u128, Path)>,
}

/// A pod's totals by resource: at most [`MAX_RESOURCES`], so a list searched in order costs
/// no more than a map.
#[derive(Default)]
struct Totals(Vec<Total>);

impl Totals {
    fn get(&self, resource: &str) -> Option<&Total> {
        self.0.iter().find(|t| t.resource == resource)
    }

    /// The entry of `resource`, added (at zero) when missing; `None` past [`MAX_RESOURCES`].
    fn entry(&mut self, resource: &str) -> Option<&mut Total> {
        let i = match self.0.iter().position(|t| t.resource == resource) {
            Some(i) => i,
            None if self.0.len() == MAX_RESOURCES => return None,
            None => {
                self.0.push(Total { resource: resource.to_string(), amount: Some(0), largest: None });
                self.0.len() - 1
            }
        };
        Some(&mut self.0[i])
    }

    /// Adds `amount` of `resource` written at `at`.
    fn add(&mut self, e: Entry) -> Option<()> {
        let total = self.entry(&e.resource)?;
        total.amount = total.amount.zip(e.amount).map(|(a, b)| a.saturating_add(b));
        if let Some(amount) = e.amount
            && total.largest.as_ref().is_none_or(|(largest, _)| amount > *largest)
        {
            total.largest = Some((amount, e.at));
        }
        Some(())
    }

    /// Sets `resource` to `amount`, written at `at`.
    fn set(&mut self, resource: &str, amount: Amount, at: Path) -> Option<()> {
        let total = self.entry(resource)?;
        total.amount = amount;
        total.largest = amount.map(|a| (a, at));
        Some(())
    }

    /// Raised to at least `other`, resource by resource (an unknown amount stays unknown).
    fn max_with(&mut self, other: &Totals) -> Option<()> {
        for theirs in &other.0 {
            let mine = self.entry(&theirs.resource)?;
            match (mine.amount, theirs.amount) {
                (Some(a), Some(b)) if b > a => (mine.amount, mine.largest) = (Some(b), theirs.largest.clone()),
                (Some(_), None) => mine.amount = None,
                _ => {}
            }
        }
        Some(())
    }
}

/// Resources merged over one container's (Trainer's `resourcesPerNode`, strategic-merged
/// into the `node` container), written at `at`.
pub struct ContainerOverride<'a> {
    pub container: &'a str,
    pub resources: &'a RawJson,
    pub at: Path,
}

/// What a pod with `spec` (at `spec_path`) asks of a node: every checked resource it asks a
/// non-zero amount of, in the order first written. A resource whose amount cannot be read is
/// left out (no claim is made about what cannot be read); `None` when the pod asks for more
/// than [`MAX_RESOURCES`] resources.
pub fn pod_asks(spec: &PodSpec, spec_path: &Path, over: Option<&ContainerOverride>) -> Option<Vec<Ask>> {
    let block_of = |c: &Container, at: &Path| -> Option<Block> {
        let r = c.resources.as_ref();
        let at = at.child("resources");
        let mut own = Block {
            requests: entries(r.and_then(|r| r.requests.as_ref()), &at.child("requests"))?,
            limits: entries(r.and_then(|r| r.limits.as_ref()), &at.child("limits"))?,
        };
        if let Some(o) = over.filter(|o| o.container == c.name) {
            own.merge(Block::read(Some(o.resources), &o.at)?);
        }
        Some(own)
    };
    let mut total = Totals::default();
    for (i, c) in spec.containers.iter().enumerate() {
        for e in block_of(c, &spec_path.child("containers").index(i))?.effective() {
            total.add(e)?;
        }
    }
    let mut sidecars = Totals::default();
    let mut init = Totals::default();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let own = block_of(c, &spec_path.child("initContainers").index(i))?;
        let restartable = c.restart_policy.as_ref().is_some_and(|p| p.0.get() == "\"Always\"");
        let mut running = Totals::default();
        if !restartable {
            running.max_with(&sidecars)?;
        }
        for e in own.effective() {
            if restartable {
                // A sidecar keeps running beside the containers and every later init container.
                total.add(Entry { resource: e.resource.clone(), amount: e.amount, at: e.at.clone() })?;
                sidecars.add(e)?;
            } else {
                running.add(e)?;
            }
        }
        init.max_with(if restartable { &sidecars } else { &running })?;
    }
    total.max_with(&init)?;
    if spec.resources.is_some() {
        pod_level(&mut total, Block::read(spec.resources.as_ref(), &spec_path.child("resources"))?)?;
    }
    for e in entries(spec.overhead.as_ref(), &spec_path.child("overhead"))? {
        total.add(e)?;
    }
    Some(
        total
            .0
            .into_iter()
            .filter_map(|t| {
                let units = fine_to_units(t.amount?);
                let at = t.largest.map_or_else(|| spec_path.clone(), |(_, at)| at);
                (units > 0).then_some(Ask { resource: t.resource, units, at })
            })
            .collect(),
    )
}

/// Pod-level resources (gate `PodLevelResources`, on by default since 1.34): a pod-level
/// request replaces the containers' total; a missing one is defaulted from the pod-level limit
/// as the apiserver does (`defaultPodRequests`): CPU and memory take the containers' total
/// when they ask for the resource (before 1.34, the limit: the smaller of the two is kept),
/// else the limit; hugepages the limit.
fn pod_level(total: &mut Totals, pod: Block) -> Option<()> {
    for request in pod.requests.iter().filter(|r| is_pod_level(&r.resource)) {
        total.set(&request.resource, request.amount, request.at.clone())?;
    }
    for limit in pod.limits.into_iter().filter(|l| is_pod_level(&l.resource)) {
        if pod.requests.iter().any(|r| r.resource == limit.resource) {
            continue;
        }
        let containers = total.get(&limit.resource).filter(|_| matches!(limit.resource.as_str(), "cpu" | "memory"));
        match containers.map(|c| c.amount) {
            // The containers' own total, unless the limit is smaller.
            Some(Some(theirs)) if limit.amount.is_none_or(|l| l >= theirs) => {}
            Some(None) => {}
            _ => total.set(&limit.resource, limit.amount, limit.at)?,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asks(spec: serde_json::Value) -> Vec<(String, u64, String)> {
        let spec: PodSpec = crate::decode::from_json(&spec).unwrap();
        pod_asks(&spec, &Path::new("spec.template.spec"), None)
            .unwrap()
            .into_iter()
            .map(|a| (a.resource, a.units, a.at.to_string()))
            .collect()
    }

    fn owned(rows: &[(&str, u64, &str)]) -> Vec<(String, u64, String)> {
        rows.iter().map(|(r, u, p)| (r.to_string(), *u, p.to_string())).collect()
    }

    #[test]
    fn containers_add_up_and_limits_stand_for_missing_requests() {
        let got = asks(json!({"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 8, "cpu": "4"}}},
            {"name": "b", "resources": {"requests": {"cpu": "500m", "pods": "3", "example": "1", "memory": "bogus"}}}
        ]}));
        assert_eq!(
            got,
            owned(&[
                ("cpu", 2500, "spec.template.spec.containers[0].resources.requests[cpu]"),
                ("nvidia.com/gpu", 8, "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"),
            ]),
            "a request wins over its limit; names the scheduler ignores are left out, and so is a resource with an amount that cannot be read"
        );
        assert_eq!(
            asks(
                json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots"}, "limits": {"cpu": "4"}}}]})
            ),
            owned(&[]),
            "a request that cannot be read is not replaced by its limit"
        );
        assert_eq!(asks(json!({"containers": [{"name": "a"}]})), owned(&[]));
        assert_eq!(asks(json!({"containers": [{"name": "a", "resources": {"requests": "cpu"}}]})), owned(&[]));
    }

    // component-helpers resource/helpers_test.go TestPodResourceRequests, the cases with
    // restartable init containers ("restartable init container" ... "multiple restartable
    // and regular init containers").
    #[test]
    fn init_containers_and_sidecars_count_as_the_scheduler_counts_them() {
        let c = |name: &str, cpu: &str, sidecar: bool| {
            let mut c = json!({"name": name, "resources": {"requests": {"cpu": cpu}}});
            if sidecar {
                c["restartPolicy"] = json!("Always");
            }
            c
        };
        let cpu = |spec: serde_json::Value| asks(spec).first().map(|a| a.1);
        // max(containers 1, init 2) = 2
        assert_eq!(
            cpu(json!({"containers": [c("a", "1", false)], "initContainers": [c("i", "2", false)]})),
            Some(2000)
        );
        // a restartable init container adds to the containers: 1 + 1
        assert_eq!(cpu(json!({"containers": [c("a", "1", false)], "initContainers": [c("s", "1", true)]})), Some(2000));
        // sidecar 1 before a regular init 2: max(1 + 1, 1 + 2) = 3
        assert_eq!(
            cpu(json!({"containers": [c("a", "1", false)], "initContainers": [c("s", "1", true), c("i", "2", false)]})),
            Some(3000)
        );
        // a regular init 5 before a sidecar 1: max(1 + 1, 5) = 5
        assert_eq!(
            cpu(json!({"containers": [c("a", "1", false)], "initContainers": [c("i", "5", false), c("s", "1", true)]})),
            Some(5000)
        );
        // sidecars 1, 2, then a regular init 3, then a sidecar 1: containers 1 + 1 + 2 + 1 = 5;
        // init phases 1, 3, 1 + 2 + 3 = 6, 4: max 6
        assert_eq!(
            cpu(json!({"containers": [c("a", "1", false)], "initContainers": [
                c("s1", "1", true), c("s2", "2", true), c("i", "3", false), c("s3", "1", true)]})),
            Some(6000)
        );
    }

    #[test]
    fn pod_level_resources_and_overhead() {
        let got = asks(json!({
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi", "example.com/foo": "2"}}}],
            "resources": {"limits": {"cpu": "4", "example.com/foo": "9"}},
            "overhead": {"cpu": "250m", "memory": "120Mi"}
        }));
        assert_eq!(
            got,
            owned(&[
                ("cpu", 1250, "spec.template.spec.containers[0].resources.requests[cpu]"),
                ("example.com/foo", 2, "spec.template.spec.containers[0].resources.requests[example.com/foo]"),
                ("memory", (1 << 30) + (120 << 20), "spec.template.spec.containers[0].resources.requests[memory]"),
            ]),
            "a pod-level CPU limit defaults the pod's request to the containers' own (1), not to the limit (4); \
             extended resources stay per container; overhead adds"
        );
        let c = |requests: serde_json::Value| json!({"name": "a", "resources": {"requests": requests}});
        for (spec, want) in [
            // No container asks for CPU: the pod-level limit is the request.
            (
                json!({"containers": [c(json!({"memory": "1Gi"}))], "resources": {"limits": {"cpu": "4"}}}),
                owned(&[
                    ("memory", 1 << 30, "spec.template.spec.containers[0].resources.requests[memory]"),
                    ("cpu", 4000, "spec.template.spec.resources.limits[cpu]"),
                ]),
            ),
            // A limit below the containers' total (which the apiserver refuses): the smaller.
            (
                json!({"containers": [c(json!({"cpu": "6"}))], "resources": {"limits": {"cpu": "4"}}}),
                owned(&[("cpu", 4000, "spec.template.spec.resources.limits[cpu]")]),
            ),
            // A pod-level request replaces the containers' total, up or down.
            (
                json!({"containers": [c(json!({"cpu": "1"}))], "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "4"}}}),
                owned(&[("cpu", 3000, "spec.template.spec.resources.requests[cpu]")]),
            ),
            // Hugepages default to the pod-level limit.
            (
                json!({"containers": [c(json!({"hugepages-2Mi": "2Mi"}))], "resources": {"limits": {"hugepages-2Mi": "8Mi"}}}),
                owned(&[("hugepages-2Mi", 8 << 20, "spec.template.spec.resources.limits[hugepages-2Mi]")]),
            ),
            // An unreadable pod-level request makes the resource unknown.
            (json!({"containers": [c(json!({"cpu": "1"}))], "resources": {"requests": {"cpu": "x"}}}), owned(&[])),
        ] {
            assert_eq!(asks(spec.clone()), want, "{spec}");
        }
    }

    #[test]
    fn amounts_are_added_before_they_are_rounded() {
        let c = |name: &str, requests: serde_json::Value| json!({"name": name, "resources": {"requests": requests}});
        // Three containers of 0.4 millicores: 1.2m in all, which the scheduler counts as 2m
        // (not 3m, one per container).
        let spec = json!({"containers": [c("a", json!({"cpu": "400u"})), c("b", json!({"cpu": "400u"})), c("c", json!({"cpu": "400u"}))]});
        assert_eq!(asks(spec), owned(&[("cpu", 2, "spec.template.spec.containers[0].resources.requests[cpu]")]));
        // Two halves of a byte of memory are one byte.
        let spec = json!({"containers": [c("a", json!({"memory": "0.5"})), c("b", json!({"memory": "0.5"}))]});
        assert_eq!(asks(spec), owned(&[("memory", 1, "spec.template.spec.containers[0].resources.requests[memory]")]));
    }

    #[test]
    fn past_the_most_resources_no_claim_is_made() {
        let many = |n: usize| -> serde_json::Map<String, serde_json::Value> {
            (0..n).map(|i| (format!("example.com/r{i}"), json!("1"))).collect()
        };
        let pod = |limits| json!({"containers": [{"name": "a", "resources": {"limits": limits}}]});
        let spec: PodSpec = crate::decode::from_json(&pod(many(MAX_RESOURCES))).unwrap();
        assert_eq!(pod_asks(&spec, &Path::new("s"), None).map(|a| a.len()), Some(MAX_RESOURCES));
        let spec: PodSpec = crate::decode::from_json(&pod(many(MAX_RESOURCES + 1))).unwrap();
        assert_eq!(pod_asks(&spec, &Path::new("s"), None), None);
        // Spread over containers, the pod's total counts.
        let half = |from: usize| -> serde_json::Map<String, serde_json::Value> {
            (from..from + MAX_RESOURCES / 2 + 1).map(|i| (format!("example.com/r{i}"), json!("1"))).collect()
        };
        let spec: PodSpec = crate::decode::from_json(&json!({"containers": [
            {"name": "a", "resources": {"limits": half(0)}}, {"name": "b", "resources": {"limits": half(1000)}}]}))
        .unwrap();
        assert_eq!(pod_asks(&spec, &Path::new("s"), None), None);
    }

    #[test]
    fn maps_are_read_without_being_built() {
        let read = |text: &str| serde_json::from_str::<CheckedMap>(text).unwrap().0;
        let one = |r: &str, fine: u128| vec![(r.to_string(), Some(fine))];
        // Names the scheduler ignores are skipped, and do not count towards the cap (CPU in
        // fine millicores).
        assert_eq!(
            read(r#"{"pods": "3", "example": "1", "cpu": "2"}"#),
            Some(one("cpu", 2000 * crate::quantity::FINE))
        );
        // A repeated key: the last one counts, as when the map is decoded.
        assert_eq!(read(r#"{"cpu": "2", "cpu": "1"}"#), Some(one("cpu", 1000 * crate::quantity::FINE)));
        // Anything but an object is no entries; nested values past the cap are skipped whole.
        for text in ["null", "3", "\"4\"", "true", "[1, {}]"] {
            assert_eq!(read(text), Some(Vec::new()), "{text}");
        }
        let past: Vec<String> = (0..=MAX_RESOURCES).map(|i| format!(r#""example.com/r{i}": {{"a": [1]}}"#)).collect();
        assert_eq!(read(&format!("{{{}}}", past.join(","))), None);
        // A `resources` block whose maps have the wrong type reads as empty maps.
        let block =
            Block::read(Some(&RawJson(crate::decode::to_raw(&json!({"requests": 1, "limits": []})))), &Path::new("r"));
        assert!(block.is_some_and(|b| b.requests.is_empty() && b.limits.is_empty()));
    }

    #[test]
    fn an_override_merges_into_its_container() {
        let spec: PodSpec = crate::decode::from_json(&json!({"containers": [
            {"name": "node", "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": "1"}}},
            {"name": "other", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}))
        .unwrap();
        let resources = RawJson(crate::decode::to_raw(
            &json!({"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}),
        ));
        let over = ContainerOverride {
            container: "node",
            resources: &resources,
            at: Path::new("spec.trainer.resourcesPerNode"),
        };
        let got: Vec<(String, u64, String)> = pod_asks(&spec, &Path::new("t.spec"), Some(&over))
            .unwrap()
            .into_iter()
            .map(|a| (a.resource, a.units, a.at.to_string()))
            .collect();
        assert_eq!(
            got,
            owned(&[
                ("cpu", 2000, "t.spec.containers[0].resources.requests[cpu]"),
                ("nvidia.com/gpu", 9, "spec.trainer.resourcesPerNode.requests[nvidia.com/gpu]"),
            ])
        );
    }

    #[test]
    fn resource_names_the_scheduler_checks() {
        for checked in [
            "cpu",
            "memory",
            "ephemeral-storage",
            "hugepages-2Mi",
            "nvidia.com/gpu",
            "example.com/foo",
            "kubernetes.io/something",
            "attachable-volumes-aws-ebs",
        ] {
            assert!(is_checked_resource(checked), "{checked}");
        }
        for ignored in ["pods", "storage", "example", "requests.example.com/foo", "-bad/x"] {
            assert!(!is_checked_resource(ignored), "{ignored}");
        }
        assert!(is_extended_resource("nvidia.com/gpu") && !is_extended_resource("hugepages-1Gi"));
        assert!(!is_extended_resource("subdomain.kubernetes.io/something"));
    }
}

//! What one pod asks of a node, as the scheduler computes it (component-helpers
//! `resource.PodRequests`, which NodeResourcesFit uses): the containers' requests summed, the
//! largest init container's (with the restartable sidecars before it, which keep running),
//! pod-level resources where set, and the pod overhead.
//!
//! A resource given only as a limit is also its request: the apiserver defaults a Pod's
//! missing requests to its limits when the Pod is created from the template.

use serde_json::Value;

use super::quantity::scheduler_units;
use crate::decode::RawJson;
use crate::field::Path;
use crate::pod::{Container, PodSpec};

/// One resource the pod asks for: how much, in the scheduler's units (CPU in millicores),
/// and where the largest share of it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    pub resource: String,
    pub units: u64,
    pub at: Path,
}

/// Amounts by resource, each with where its largest share is written. A pod asks for a few
/// resources: a list searched in order costs less code than a map, and no more time.
type Amounts = Vec<(String, u64, Option<(u64, Path)>)>;

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

/// A `requests` or `limits` map (at `at`): each amount that reads as a quantity, by resource,
/// with where it is written.
fn amounts(raw: Option<&RawJson>, at: &Path) -> Vec<(String, u64, Path)> {
    let Some(raw) = raw else { return Vec::new() };
    let value = raw.value();
    let Some(map) = value.as_object() else { return Vec::new() };
    map.iter()
        .filter(|(name, _)| is_checked_resource(name))
        .filter_map(|(name, value)| {
            // int-or-string: a custom resource's template may write `cpu: 4`.
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            let units = scheduler_units(name, &text)?;
            Some((name.clone(), units, at.key(name)))
        })
        .collect()
}

/// The requests and limits of one `resources` block (at `at`).
fn block(resources: Option<&RawJson>, at: &Path) -> Block {
    let value = resources.map(RawJson::value).unwrap_or(Value::Null);
    let part = |name: &str| value.get(name).map(|v| RawJson(crate::decode::to_raw(v)));
    Block {
        requests: amounts(part("requests").as_ref(), &at.child("requests")),
        limits: amounts(part("limits").as_ref(), &at.child("limits")),
    }
}

/// Requests and limits, each amount with where it is written.
struct Block {
    requests: Vec<(String, u64, Path)>,
    limits: Vec<(String, u64, Path)>,
}

impl Block {
    /// The requests after the apiserver's defaulting: a limit stands for a missing request.
    fn effective(self) -> impl Iterator<Item = (String, u64, Path)> {
        let Block { mut requests, limits } = self;
        for limit in limits {
            if !requests.iter().any(|r| r.0 == limit.0) {
                requests.push(limit);
            }
        }
        requests.into_iter()
    }

    /// `other`'s entries replace this block's, key by key (a strategic merge of maps).
    fn merge(&mut self, other: Block) {
        for (mine, theirs) in [(&mut self.requests, other.requests), (&mut self.limits, other.limits)] {
            mine.retain(|m| !theirs.iter().any(|t| t.0 == m.0));
            mine.extend(theirs);
        }
    }
}

/// The entry of `resource` in `total`, added (at zero) when missing.
fn entry<'t>(total: &'t mut Amounts, resource: &str) -> &'t mut (String, u64, Option<(u64, Path)>) {
    let i = match total.iter().position(|e| e.0 == resource) {
        Some(i) => i,
        None => {
            total.push((resource.to_string(), 0, None));
            total.len() - 1
        }
    };
    &mut total[i]
}

/// Adds `units` of `resource` written at `at`, remembering the largest share.
fn add(total: &mut Amounts, resource: &str, units: u64, at: Path) {
    let entry = entry(total, resource);
    entry.1 = entry.1.saturating_add(units);
    if entry.2.as_ref().is_none_or(|(largest, _)| units > *largest) {
        entry.2 = Some((units, at));
    }
}

/// `total` raised to at least `other`, resource by resource.
fn max_into(total: &mut Amounts, other: &Amounts) {
    for (resource, units, at) in other {
        let entry = entry(total, resource);
        if *units > entry.1 {
            (entry.1, entry.2) = (*units, at.clone());
        }
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
/// non-zero amount of, in the order first written. Amounts that do not read as quantities are left out
/// (no claim is made about what cannot be read).
pub fn pod_asks(spec: &PodSpec, spec_path: &Path, over: Option<&ContainerOverride>) -> Vec<Ask> {
    let block_of = |c: &Container, at: &Path| {
        let r = c.resources.as_ref();
        let at = at.child("resources");
        let mut own = Block {
            requests: amounts(r.and_then(|r| r.requests.as_ref()), &at.child("requests")),
            limits: amounts(r.and_then(|r| r.limits.as_ref()), &at.child("limits")),
        };
        if let Some(o) = over.filter(|o| o.container == c.name) {
            own.merge(block(Some(o.resources), &o.at));
        }
        own
    };
    let mut total = Amounts::new();
    for (i, c) in spec.containers.iter().enumerate() {
        for (resource, units, at) in block_of(c, &spec_path.child("containers").index(i)).effective() {
            add(&mut total, &resource, units, at);
        }
    }
    let mut sidecars = Amounts::new();
    let mut init = Amounts::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let own = block_of(c, &spec_path.child("initContainers").index(i));
        let restartable = c.restart_policy.as_ref().is_some_and(|p| p.0.get() == "\"Always\"");
        let mut running = if restartable { Amounts::new() } else { sidecars.clone() };
        for (resource, units, at) in own.effective() {
            if restartable {
                // A sidecar keeps running beside the containers and every later init container.
                add(&mut total, &resource, units, at.clone());
                add(&mut sidecars, &resource, units, at);
            } else {
                add(&mut running, &resource, units, at);
            }
        }
        max_into(&mut init, if restartable { &sidecars } else { &running });
    }
    max_into(&mut total, &init);
    // Pod-level requests (or limits, which default them) replace the containers' sum for
    // the resources they support: CPU, memory and hugepages.
    if spec.resources.is_some() {
        for (resource, units, at) in block(spec.resources.as_ref(), &spec_path.child("resources")).effective() {
            if matches!(resource.as_str(), "cpu" | "memory") || resource.starts_with("hugepages-") {
                let e = entry(&mut total, &resource);
                (e.1, e.2) = (units, Some((units, at)));
            }
        }
    }
    for (resource, units, at) in amounts(spec.overhead.as_ref(), &spec_path.child("overhead")) {
        add(&mut total, &resource, units, at);
    }
    total
        .into_iter()
        .filter(|(_, units, _)| *units > 0)
        .map(|(resource, units, at)| Ask { at: at.map_or_else(|| spec_path.clone(), |(_, at)| at), resource, units })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asks(spec: serde_json::Value) -> Vec<(String, u64, String)> {
        let spec: PodSpec = crate::decode::from_json(&spec).unwrap();
        pod_asks(&spec, &Path::new("spec.template.spec"), None)
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
                ("memory", 1 << 30, "spec.template.spec.containers[0].resources.requests[memory]"),
                ("nvidia.com/gpu", 8, "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"),
            ]),
            "a request wins over its limit; names the scheduler ignores and amounts that cannot be read are left out"
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
                ("cpu", 4250, "spec.template.spec.resources.limits[cpu]"),
                ("example.com/foo", 2, "spec.template.spec.containers[0].resources.requests[example.com/foo]"),
                ("memory", (1 << 30) + (120 << 20), "spec.template.spec.containers[0].resources.requests[memory]"),
            ]),
            "pod-level CPU replaces the containers' sum (extended resources stay per container); overhead adds"
        );
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

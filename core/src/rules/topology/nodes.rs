//! The one Node list a request is checked against: its labels for T-09 and the domain-size
//! warning, its Nodes' allocatable resources and taints for the capacity rules. One list per
//! request, with a query fixed by the settings ([`node_field_masks`]), read in one pass.

use super::*;
use crate::capacity::devices::{DeviceAnalysis, device_class_query};
use crate::capacity::fit::{Analysis, Finding, wanted_names};
use crate::nodes::{CAPACITY_MASKS, Flow, LABEL_MASKS, NodeWants, Wanted, node_query, read_nodes};
use capacity::{
    ClusterTotals, Demand, extended_resources, runtime_class_query, served_by_device_classes, with_runtime_classes,
};
use devices::{Devices, read_devices};

/// The Node list's field masks: labels, and with the capacity rules on, taints and
/// allocatable resources. Fixed by the settings, whatever the request asks about.
pub fn node_field_masks(settings: &Settings) -> &'static [&'static str] {
    if settings.capacity_check == CapacityCheck::Off { LABEL_MASKS } else { CAPACITY_MASKS }
}

/// A topology key to look for on the cluster's nodes.
pub(super) struct NodeLookup<'a> {
    pub(super) key: &'a str,
    /// Where the key was written.
    pub(super) path: Path,
    /// The gang's `minCount` and its path, for the domain-size warning.
    pub(super) gang: Option<(i32, Path)>,
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

/// What one pass over the Node list found.
struct Pass<'a> {
    /// The list's items (as far as it was read).
    items: usize,
    /// What the list says of each lookup's key (by the lookup's index).
    keys: Vec<Option<KeyNodes<'a>>>,
    lookup_slots: Vec<Option<usize>>,
    findings: Vec<Finding>,
}

/// Reads `list` once for the `lookups`' keys (T-09) and the `demand`'s pods (capacity), only
/// until every key is answered and every pod and gang is known to pass.
fn pass<'a>(
    list: &'a str,
    lookups: &[NodeLookup],
    demand: &mut Demand,
    mut devices: Option<&mut Devices>,
) -> Result<Pass<'a>, String> {
    let (capacity_labels, resources): (Vec<String>, Vec<String>) = {
        let (labels, resources) = wanted_names(&demand.shapes, &demand.gangs);
        let slice_labels = devices.iter().flat_map(|d| d.supply.label_keys());
        let totals = demand.totals.iter().map(|a| a.resource.as_str());
        (
            labels.into_iter().chain(slice_labels).map(str::to_string).collect(),
            resources.into_iter().chain(totals).map(str::to_string).collect(),
        )
    };
    let labels = Wanted::new(lookups.iter().map(|l| l.key).chain(capacity_labels.iter().map(String::as_str)));
    let resources =
        if demand.is_empty() { Wanted::default() } else { Wanted::new(resources.iter().map(String::as_str)) };
    let lookup_slots: Vec<Option<usize>> = lookups.iter().map(|l| labels.slot(l.key)).collect();
    let mut keys: Vec<Option<KeyNodes>> = (0..labels.len()).map(|_| None).collect();
    for (lookup, slot) in lookups.iter().zip(&lookup_slots) {
        let gang = lookup.gang.as_ref().map_or(1, |(n, _)| usize::try_from(*n).unwrap_or(1).max(1));
        if let Some(slot) = slot {
            let key = keys[*slot].get_or_insert_with(|| KeyNodes {
                enough: 1,
                nodes: 0,
                domains: HashMap::new(),
                largest: 0,
            });
            key.enough = key.enough.max(gang);
        }
    }
    let wants = NodeWants { labels, resources };
    for shape in demand.shapes.iter_mut() {
        shape.placement.resolve(&wants.labels);
    }
    if let Some(d) = devices.as_mut() {
        d.supply.resolve(&wants.labels);
    }
    let mut device_analysis = devices.map(|d| DeviceAnalysis::new(&d.supply, &d.pods, d.first.clone()));
    // The gangs count what the pods' own claims ask of each Node's devices.
    let gangs = !demand.gangs.is_empty() && device_analysis.is_some();
    let pinned = device_analysis.as_ref().map(DeviceAnalysis::pinned).unwrap_or_default();
    for (s, asked) in device_analysis.as_ref().map(DeviceAnalysis::asked).unwrap_or_default() {
        demand.shapes[s].devices = asked;
    }
    let mut analysis = (!demand.shapes.is_empty())
        .then(|| Analysis::new(&demand.shapes, &demand.gangs, &wants.labels, &wants.resources));
    if let Some(a) = analysis.as_mut() {
        for (s, claim) in pinned {
            a.pin(s, claim);
        }
    }
    let mut totals = (!demand.totals.is_empty()).then(|| ClusterTotals::new(&demand.totals, &wants.resources));
    let mut unsettled = keys.iter().flatten().count();
    let items = read_nodes(list, &wants, |node| {
        for (slot, value) in node.carried() {
            // A settled key's figures are in no message: it is counted no further.
            if let Some(key) = keys[slot].as_mut().filter(|k| !k.settled()) {
                key.count(value);
                unsettled -= usize::from(key.settled());
            }
        }
        let served = device_analysis.as_mut().map(|d| d.add(node, &demand.shapes, gangs)).unwrap_or_default();
        if let Some(a) = analysis.as_mut() {
            a.add_counting(node, &served);
        }
        if let Some(t) = totals.as_mut() {
            t.add(node);
        }
        // In this order: whether the analyses are settled is asked only once every key is.
        let settled = unsettled == 0
            && analysis.as_ref().is_none_or(Analysis::settled)
            && totals.as_ref().is_none_or(ClusterTotals::settled)
            && device_analysis.as_ref().is_none_or(DeviceAnalysis::settled);
        if settled { Flow::Stop } else { Flow::Continue }
    })?;
    let mut findings = analysis.map(|a| a.findings()).unwrap_or_default();
    findings.extend(device_analysis.map(|d| d.findings(&demand.shapes)).unwrap_or_default());
    findings.extend(totals.map(|t| t.findings()).unwrap_or_default());
    Ok(Pass { items, keys, lookup_slots, findings })
}

/// T-09, the domain-size warning and the capacity rules, from one list of every Node. A key
/// no Node carries, a gang larger than every domain, or pods that cannot fit read the whole
/// list, for the figures their messages give. Capacity findings cost up to two more lists,
/// of what may take them back: the RuntimeClasses, when a pod names one (the RuntimeClass
/// plugin merges its tolerations into the pod), and the DeviceClasses, when a finding rests
/// on an extended resource (one a class serves through DRA is served on Nodes that do not
/// list it). The Node list is then read once more.
pub(super) fn check_nodes(
    settings: &Settings,
    lookups: &[NodeLookup],
    mut demand: Demand,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let (rule, at) = match (lookups.first(), demand.shapes.first(), demand.totals.first()) {
        (Some(first), _, _) => (KEY_ON_NODES, first.path.clone()),
        (None, Some(shape), _) => (POD_FITS, shape.spec_path.clone()),
        (None, None, Some(total)) => (GANG_FITS, total.at.clone()),
        (None, None, None) => return,
    };
    let failed =
        |v: &mut Verdict, e: &LookupError| v.lookup_failed(rule, at.clone(), "Nodes", e, settings.fail_on_lookup_error);
    let list = match cluster.list(&node_query(node_field_masks(settings))) {
        Ok(list) => list,
        // `gangwarden check` given no Nodes: nothing to check the pods against, and nothing
        // asked about (a topology key would have been).
        Err(LookupError::NotGiven { .. }) if lookups.is_empty() => return,
        Err(e) => return failed(v, &e),
    };
    let cannot_read = |e: String| LookupError::Failed(format!("cannot read the Node list: {e}"));
    // Claims are read only when a pod names some; the ResourceSlices only when a claim asks
    // for devices.
    let (limits, mut devices) = if demand.claims.iter().any(|c| !c.is_empty()) {
        read_devices(settings, &demand, cluster, v)
    } else {
        Default::default()
    };
    capacity::report(settings, limits, v);
    let first = match pass(&list, lookups, &mut demand, devices.as_mut()) {
        Ok(first) => first,
        Err(e) => return failed(v, &cannot_read(e)),
    };
    report_keys(lookups, &first, v);
    let mut findings = first.findings;
    if findings.is_empty() {
        return;
    }
    let mut again = false;
    if demand.runtime_classes.iter().any(Option::is_some) {
        let list = match cluster.list(&runtime_class_query()) {
            Ok(list) => Some(list),
            // Not served, or not given to `gangwarden check`: no class can be read, and no
            // pod that names one is held to a taint.
            Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => None,
            Err(e) => {
                v.lookup_failed(POD_FITS, at.clone(), "RuntimeClasses", &e, settings.fail_on_lookup_error);
                None
            }
        };
        with_runtime_classes(&mut demand, list.as_deref());
        again = true;
    }
    let extended = extended_resources(&findings);
    if !extended.is_empty() {
        let served = cluster.list(&device_class_query()).and_then(|l| {
            served_by_device_classes(&l)
                .map_err(|e| LookupError::Failed(format!("cannot read the DeviceClass list: {e}")))
        });
        let taken_back: Vec<String> = match served {
            Ok(served) => extended.into_iter().filter(|r| served.contains(r)).collect(),
            // No DRA API served: no DeviceClass can serve a resource. `gangwarden check` given
            // no DeviceClasses reads as a cluster without any (its README says so).
            Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => Vec::new(),
            Err(e) => {
                let what = format!("DeviceClasses, which may serve {} through DRA", extended.join(", "));
                v.lookup_failed(POD_FITS, at.clone(), &what, &e, settings.fail_on_lookup_error);
                extended
            }
        };
        if !taken_back.is_empty() {
            demand.without(&taken_back);
            again = true;
        }
    }
    if again {
        findings = match pass(&list, &[], &mut demand, devices.as_mut()) {
            Ok(again) => again.findings,
            Err(e) => return failed(v, &cannot_read(e)),
        };
    }
    capacity::report(settings, findings, v);
}

/// T-09 and the domain-size warning for each lookup.
fn report_keys(lookups: &[NodeLookup], pass: &Pass, v: &mut Verdict) {
    for (lookup, slot) in lookups.iter().zip(&pass.lookup_slots) {
        let Some(s) = slot.and_then(|slot| pass.keys[slot].as_ref()) else { continue };
        if s.nodes == 0 {
            let checked = plural(pass.items, "node");
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
        check_nodes(&Settings::default(), &lookups, Demand::default(), &cluster, &mut v);
        assert_eq!(
            *cluster.0.borrow(),
            [format!("{:?}", node_query(node_field_masks(&Settings::default())))],
            "one list, whatever the keys"
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
        // Other keys, the same query.
        let other = [NodeLookup { key: "topology.example.com/made-up", path: at("e"), gang: None }];
        check_nodes(&Settings::default(), &other, Demand::default(), &cluster, &mut Verdict::default());
        let asked = cluster.0.borrow();
        assert_eq!((asked.len(), &asked[0]), (2, &asked[1]));
        // No key, no list.
        check_nodes(&Settings::default(), &[], Demand::default(), &cluster, &mut Verdict::default());
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
        check_nodes(&Settings::default(), &answered, Demand::default(), &cut, &mut v);
        assert!(v.accepted() && v.warnings.is_empty(), "{:?} {:?}", v.message(), v.warnings);
        let larger = [NodeLookup { key: "rack", path: at("b"), gang: Some((3, at("b.minCount"))) }];
        let mut v = Verdict::default();
        check_nodes(&Settings::default(), &larger, Demand::default(), &cut, &mut v);
        let warnings: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("b: cannot look up Nodes: cannot read the Node list: "), "{warnings:?}");
    }
}

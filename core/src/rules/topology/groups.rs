//! `schedulingConstraints.topology` of every group holder, and the settings about it.

use super::*;

pub(super) fn same_constraints(old: &GroupSpec, new: &GroupSpec) -> bool {
    old.scheduling_constraints == new.scheduling_constraints && old.scheduling_policy == new.scheduling_policy
}

/// T-01, T-02, T-08, T-10 and the settings, for one group spec: a PodGroup, a
/// CompositePodGroup or a Workload template at any depth.
pub(super) fn check_group_spec<'a>(
    settings: &Settings,
    g: &GroupSpec<'a>,
    v: &mut Verdict,
    lookups: &mut Vec<NodeLookup<'a>>,
) {
    let topology_path = g.path.child("schedulingConstraints").child("topology");
    let entries: Vec<&'a str> = g.topology_keys().collect();
    let gang = g.gang_min_count_at().filter(|(n, _)| *n >= 1);
    let min_count = gang.as_ref().map(|(n, _)| *n);

    if entries.is_empty() {
        if let Some(at_least) = settings.require_topology_for_min_count_at_least
            && let Some(n) = min_count.filter(|n| *n >= at_least)
        {
            v.deny(
                REQUIRE_TOPOLOGY,
                FieldError::required(
                    topology_path,
                    format!("gangs with minCount {at_least} or more must be kept in one topology domain (settings.requireTopologyForMinCountAtLeast), and this one has minCount {n}"),
                ),
            );
        }
        return;
    }
    if entries.len() > MAX_TOPOLOGY_ENTRIES {
        // One error for the list, no per-entry checks or lookups, as the apiserver does.
        v.deny(MAX_ENTRIES, FieldError::too_many(topology_path.clone(), entries.len(), MAX_TOPOLOGY_ENTRIES));
        return;
    }
    for (i, key) in entries.into_iter().enumerate() {
        let item = topology_path.index(i);
        let errors = check(item.field("key"), key, true, names::is_qualified_name);
        if !errors.is_empty() {
            v.deny_all(KEY, errors);
            continue;
        }
        let path = item.child("key");
        // A key the settings refuse is rejected already; looking it up would only add noise.
        if is_allowed(settings, key, &path, v) {
            // A Job's pods have known requests: the capacity rules judge whether its gang fits
            // a domain, and the one-pod-per-node count would wrong a gang of small pods.
            let gang = gang.clone().filter(|_| !matches!(g.origin, GroupOrigin::Job | GroupOrigin::CronJob));
            lookups.push(NodeLookup { key, path, gang });
        }
    }

    // A basic composite places whole child groups, which the message is not about.
    if g.is_basic() && !g.origin.is_composite() {
        v.warn(
            BASIC_POLICY,
            topology_path.clone(),
            "with a basic schedulingPolicy the scheduler checks the topology only against the pods it has seen so far, so pods created later may find no room in the chosen domain: use a gang policy, or hold the pods with schedulingGates until all of them exist",
        );
    }
    // Kubernetes 1.37 integrates topology with workload-aware preemption (KEP-5732), so the
    // warning is about 1.36 only.
    if !g.is_136() {
        return;
    }
    let mut expectations = Vec::new();
    if let Some(class) = g.priority_class_name.filter(|c| !c.is_empty()) {
        expectations.push(format!("priorityClassName {class:?}"));
    }
    if let Some(p) = g.priority.filter(|p| *p != 0) {
        expectations.push(format!("priority {p}"));
    }
    if let Some(Disruption::V1alpha2(mode)) = g.disruption_mode.filter(|m| *m == Disruption::V1alpha2("PodGroup")) {
        expectations.push(format!("disruptionMode {mode:?}"));
    }
    if !expectations.is_empty() {
        v.warn(
            PREEMPTION,
            topology_path,
            format!(
                "is combined with {}, but Kubernetes 1.36 does not run workload-aware preemption for pod groups with scheduling constraints (\"workload aware preemption is not supported for pod groups with scheduling constraints\"), so the scheduler will not preempt other pods to make room for this group",
                expectations.join(" and ")
            ),
        );
    }
}

/// `allowedTopologyKeys`: rejects `key` at `path` unless it is listed.
pub(super) fn is_allowed(settings: &Settings, key: &str, path: &Path, v: &mut Verdict) -> bool {
    match &settings.allowed_topology_keys {
        Some(allowed) if !allowed.iter().any(|a| a == key) => {
            v.deny(ALLOWED_KEYS, FieldError::not_supported(path.clone(), key, allowed));
            false
        }
        _ => true,
    }
}

//! Soundness of the capacity rules, against an oracle that knows nothing of them: each case
//! builds a cluster and an object whose pods the scheduler's filters can place — it picks the
//! nodes, places the pods there and gives the nodes room for what the pods ask, computed the
//! way the scheduler computes it on the Pod the apiserver stores — and the topology rule set,
//! with `capacityCheck: deny`, must never call any of it impossible.
//!
//! The objects cover Jobs (a gang in `spec.scheduling`, a topology domain, Kueue's required
//! topology and partial admission), PyTorchJobs (`minAvailable` over a Master and Workers of
//! different shapes), Volcano Jobs (the job's `minAvailable` over tasks of different shapes,
//! each task's own `minAvailable`, raw or as Volcano's webhook defaults them; or a Volcano
//! PodGroup whose `minResources` is what they ask in all) and TrainJobs (torch and MPI runtimes, `resourcesPerNode`), with init
//! containers, sidecars, pod overhead and pod-level resources written in every quantity form,
//! node selectors, required node affinity, taints tolerated by the pod itself, by its
//! RuntimeClass, by Kueue (the object carries a queue label) or by the cluster's own admission
//! (the setting `capacityAddedTolerations`), and replica types of no pods whose templates may
//! ask for anything. The pods of each kind may also claim DRA devices through
//! ResourceClaimTemplates, and share a ResourceClaim (or a Job's group claim) allocated once:
//! the oracle publishes ResourceSlices that give each node the devices of the pods it placed
//! there, and the shared claim's devices on the one node its pods were placed on or on every
//! node (`dra_claims`), and no DRA finding may be made either, for a pod or a gang.
//!
//! Queues, the same way: a Job, PyTorchJob or TrainJob with Kueue's queue label gets a LocalQueue and a
//! ClusterQueue that can admit it (the oracle assigns each pod set a flavor in each resource
//! group and gives every flavor at least what it was assigned, counted as Kueue counts a pod
//! set: its pods times what one pod asks; a resource no pod asks for may be left uncovered;
//! sometimes a cohort, sometimes `pods` covered, sometimes crossed flavors that each hold all of
//! one resource and none of the rest, which only a check that ignores Kueue's one flavor per
//! resource group would count), and, with `queueCheck: deny`, no queue finding may be made either.
//! A Volcano Job or PodGroup gets Volcano's `default` Queue, Open, with a capability that holds
//! what its placed pods ask in all: no Volcano queue finding may be made.

use std::collections::{BTreeMap, BTreeSet};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::engine::evaluate;
use gangwarden_core::request::admission_request;
use gangwarden_core::rules::topology::Topology;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{Map, Value, json};

/// Numbers drawn from proptest's choices. Every draw is smallest at choice 0, so shrinking the
/// choices makes the scenario simpler: fewer pods and nodes, no constraints.
struct Draw<'a> {
    choices: &'a [u32],
    at: usize,
}

impl Draw<'_> {
    /// A number in `0..n`.
    fn below(&mut self, n: u32) -> u32 {
        let c = self.choices.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        if n == 0 { 0 } else { c % n }
    }

    /// True about `percent` times in a hundred (never at choice 0).
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) >= 100 - percent
    }

    fn pick<'t, T>(&mut self, from: &'t [T]) -> &'t T {
        &from[self.below(from.len() as u32) as usize]
    }
}

/// The resources a pod may ask for, each counted in atoms the oracle adds exactly: a CPU atom
/// is a tenth of a millicore (`100u`), a memory atom half a byte, a hugepages atom a 2 MiB page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Res {
    Cpu,
    Memory,
    Gpu,
    Hugepages,
    Fpga,
}

const RESOURCES: [Res; 5] = [Res::Cpu, Res::Memory, Res::Gpu, Res::Hugepages, Res::Fpga];

impl Res {
    fn name(self) -> &'static str {
        match self {
            Res::Cpu => "cpu",
            Res::Memory => "memory",
            Res::Gpu => "nvidia.com/gpu",
            Res::Hugepages => "hugepages-2Mi",
            Res::Fpga => "example.com/fpga",
        }
    }

    /// What the scheduler counts (millicores, bytes, units) for `atoms`, rounded up once.
    fn units(self, atoms: u128) -> u128 {
        match self {
            Res::Cpu => atoms.div_ceil(10),
            Res::Memory => atoms.div_ceil(2),
            Res::Hugepages => atoms << 21,
            Res::Gpu | Res::Fpga => atoms,
        }
    }

    /// A node's allocatable of `units`, as a kubelet writes it.
    fn allocatable(self, units: u128) -> String {
        match self {
            Res::Cpu => format!("{units}m"),
            _ => units.to_string(),
        }
    }

    /// Extended resources and hugepages: a request, when written, must equal the limit.
    fn request_is_limit(self) -> bool {
        !matches!(self, Res::Cpu | Res::Memory)
    }

    /// An amount to ask for, in atoms (often none, sometimes odd fractions).
    fn amount(self, d: &mut Draw) -> u128 {
        match self {
            Res::Cpu => u128::from(*d.pick(&[0u32, 5, 10, 2_500, 10_000, 15_000, 40_000, 3])),
            Res::Memory => u128::from(*d.pick(&[0u64, 1, 2_048, 1 << 31, 3 << 30, 1_000_000, 7])),
            Res::Gpu => u128::from(d.below(9)),
            Res::Hugepages => u128::from(d.below(3)),
            Res::Fpga => u128::from(d.below(3)),
        }
    }

    /// `atoms` written in one of the forms the apiserver reads.
    fn write(self, atoms: u128, d: &mut Draw) -> Value {
        let mut forms: Vec<String> = Vec::new();
        match self {
            Res::Cpu => {
                forms.push(format!("{}u", atoms * 100));
                if atoms.is_multiple_of(10) {
                    forms.push(format!("{}m", atoms / 10));
                }
                if atoms.is_multiple_of(10_000) {
                    forms.push(format!("{}", atoms / 10_000));
                }
                if atoms.is_multiple_of(1_000) {
                    forms.push(format!("{}.{}", atoms / 10_000, (atoms % 10_000) / 1_000));
                }
                forms.push(format!("{}n", atoms * 100_000));
            }
            Res::Memory => {
                if atoms % 2 == 1 {
                    forms.push(format!("{}.5", atoms / 2));
                } else {
                    let bytes = atoms / 2;
                    forms.push(bytes.to_string());
                    for (suffix, size) in [("Ki", 1u128 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("k", 1_000)] {
                        if bytes.is_multiple_of(size) {
                            forms.push(format!("{}{suffix}", bytes / size));
                        }
                    }
                    if bytes.is_multiple_of(1_000_000) {
                        forms.push(format!("{}e6", bytes / 1_000_000));
                    }
                }
            }
            Res::Hugepages => forms.push(format!("{}Mi", atoms * 2)),
            Res::Gpu | Res::Fpga => {
                forms.push(atoms.to_string());
                if d.chance(30) {
                    // int-or-string: a number is a quantity too.
                    return json!(atoms as u64);
                }
            }
        }
        Value::from(d.pick(&forms).clone())
    }
}

type Atoms = BTreeMap<Res, u128>;

fn add(into: &mut Atoms, from: &Atoms) {
    for (r, a) in from {
        *into.entry(*r).or_default() += a;
    }
}

fn max_into(into: &mut Atoms, from: &Atoms) {
    for (r, a) in from {
        let e = into.entry(*r).or_default();
        *e = (*e).max(*a);
    }
}

/// A container's `resources` and the requests the apiserver defaults them to (a limit stands
/// for a missing request); `asked` holds every resource it names.
fn container_resources(d: &mut Draw) -> (Value, Atoms) {
    let (mut requests, mut limits, mut effective) = (Map::new(), Map::new(), Atoms::new());
    for r in RESOURCES {
        if !d.chance(if r == Res::Cpu || r == Res::Memory { 60 } else { 25 }) {
            continue;
        }
        let amount = r.amount(d);
        match (d.below(3), r.request_is_limit()) {
            (0, _) => {
                limits.insert(r.name().into(), r.write(amount, d));
            }
            (1, false) => {
                requests.insert(r.name().into(), r.write(amount, d));
            }
            (_, true) | (2, false) => {
                requests.insert(r.name().into(), r.write(amount, d));
                let limit = if r.request_is_limit() { amount } else { amount + r.amount(d) };
                limits.insert(r.name().into(), r.write(limit, d));
            }
            _ => unreachable!(),
        }
        effective.insert(r, amount);
    }
    (json!({"requests": requests, "limits": limits}), effective)
}

/// A pod template's spec (no placement yet) and what one of its pods asks of a node, as the
/// scheduler counts it: containers summed, sidecars beside them, the largest init phase,
/// pod-level resources as the apiserver defaults them (1.34+), overhead; each total rounded
/// once. The first container, `node`, gets `gpus` merged into its resources as Trainer merges
/// `resourcesPerNode` (its requests and limits of GPUs replaced).
fn pod_spec(d: &mut Draw, gpus: Option<(u128, &Value)>) -> (Value, BTreeMap<Res, u128>) {
    let mut containers = Vec::new();
    let mut total = Atoms::new();
    let mut named: BTreeSet<Res> = BTreeSet::new();
    for i in 0..=d.below(3) {
        let (mut resources, mut effective) = container_resources(d);
        let name = if i == 0 { "node".to_string() } else { format!("helper-{i}") };
        if i == 0
            && let Some((atoms, written)) = gpus
        {
            // A strategic merge of the maps: the override's keys replace the container's.
            for part in ["requests", "limits"] {
                resources[part][Res::Gpu.name()] = written.clone();
            }
            effective.insert(Res::Gpu, atoms);
        }
        named.extend(effective.keys().copied());
        add(&mut total, &effective);
        containers.push(json!({"name": name, "image": "registry.example.com/train:1", "resources": resources}));
    }
    let (mut init, mut sidecars, mut phases) = (Vec::new(), Atoms::new(), Atoms::new());
    for i in 0..d.below(3) {
        let (resources, effective) = container_resources(d);
        named.extend(effective.keys().copied());
        let mut c =
            json!({"name": format!("init-{i}"), "image": "registry.example.com/init:1", "resources": resources});
        if d.chance(50) {
            c["restartPolicy"] = json!("Always");
            add(&mut total, &effective);
            add(&mut sidecars, &effective);
            max_into(&mut phases, &sidecars);
        } else {
            let mut phase = effective.clone();
            add(&mut phase, &sidecars);
            max_into(&mut phases, &phase);
        }
        init.push(c);
    }
    max_into(&mut total, &phases);
    let mut spec = json!({"restartPolicy": "Never", "containers": containers});
    if !init.is_empty() {
        spec["initContainers"] = json!(init);
    }
    if d.chance(25) {
        let (mut requests, mut limits) = (Map::new(), Map::new());
        for r in [Res::Cpu, Res::Memory] {
            let containers = total.get(&r).copied().unwrap_or(0);
            match d.below(3) {
                // A limit alone: the request is the containers' total when they name the
                // resource, else the limit.
                0 => {
                    let limit = containers + r.amount(d);
                    limits.insert(r.name().into(), r.write(limit, d));
                    if !named.contains(&r) {
                        total.insert(r, limit);
                    }
                }
                // A request (at least the containers' total) and a limit above it.
                1 => {
                    let request = containers + r.amount(d);
                    requests.insert(r.name().into(), r.write(request, d));
                    limits.insert(r.name().into(), r.write(request + r.amount(d), d));
                    total.insert(r, request);
                }
                _ => {}
            }
        }
        if !requests.is_empty() || !limits.is_empty() {
            spec["resources"] = json!({"requests": requests, "limits": limits});
        }
    }
    if d.chance(20) {
        let (cpu, memory) = (Res::Cpu.amount(d), Res::Memory.amount(d));
        spec["overhead"] = json!({"cpu": Res::Cpu.write(cpu, d), "memory": Res::Memory.write(memory, d)});
        add(&mut total, &Atoms::from([(Res::Cpu, cpu), (Res::Memory, memory)]));
    }
    let units = total.into_iter().map(|(r, a)| (r, r.units(a))).collect();
    (spec, units)
}

/// A node of the cluster the oracle builds.
#[derive(Clone, Debug)]
struct Node {
    labels: BTreeMap<&'static str, String>,
    /// (key, value, effect)
    taints: Vec<(&'static str, &'static str, &'static str)>,
    /// What the pods placed on it ask, summed per resource (scheduler units), and how many.
    used: BTreeMap<Res, u128>,
    pods: u64,
}

const RACK: &str = "topology.example.com/rack";
const GPU_TYPE: &str = "gpu.example.com/type";
const TAINTS: [(&str, &str, &str); 4] = [
    ("sku", "gpu", "NoSchedule"),
    ("dedicated", "ml", "NoExecute"),
    ("spot", "true", "PreferNoSchedule"),
    ("nvidia.com/gpu", "present", "NoSchedule"),
];

fn nodes(d: &mut Draw) -> Vec<Node> {
    (0..=d.below(6))
        .map(|_| {
            let mut labels = BTreeMap::from([(RACK, format!("r{}", d.below(3)))]);
            if d.chance(70) {
                labels.insert(GPU_TYPE, d.pick(&["h100", "a100"]).to_string());
            }
            let taints = TAINTS.into_iter().filter(|_| d.chance(30)).collect();
            Node { labels, taints, used: BTreeMap::new(), pods: 0 }
        })
        .collect()
}

/// How a scenario lets pods past taints besides their own tolerations.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Toleration {
    Own,
    Kueue,
    RuntimeClass,
    Setting,
}

/// The placement of one pod shape: nodeSelector, required affinity and tolerations that admit
/// every node in `targets`, written into `spec`.
fn place(
    spec: &mut Value,
    targets: &BTreeSet<usize>,
    nodes: &[Node],
    how: Toleration,
    d: &mut Draw,
    rc: &mut Vec<Value>,
) {
    let shared = |key: &str| -> Option<String> {
        let values: BTreeSet<Option<&String>> = targets.iter().map(|t| nodes[*t].labels.get(key)).collect();
        match values.into_iter().collect::<Vec<_>>().as_slice() {
            [Some(v)] => Some((*v).clone()),
            _ => None,
        }
    };
    let mut selector = Map::new();
    for key in [RACK, GPU_TYPE] {
        if let Some(v) = shared(key)
            && d.chance(40)
        {
            selector.insert(key.into(), json!(v));
        }
    }
    if !selector.is_empty() {
        spec["nodeSelector"] = Value::Object(selector);
    }
    if d.chance(40) {
        let racks: BTreeSet<String> = targets.iter().map(|t| nodes[*t].labels[RACK].clone()).collect();
        let mut values: Vec<String> = racks.iter().cloned().collect();
        if d.chance(50) {
            values.push("r9".into());
        }
        let absent: Vec<String> = (0..3).map(|i| format!("r{i}")).filter(|r| !racks.contains(r)).collect();
        let expression = match d.below(3) {
            1 if !absent.is_empty() => json!({"key": RACK, "operator": "NotIn", "values": absent}),
            2 => json!({"key": RACK, "operator": "Exists"}),
            _ => json!({"key": RACK, "operator": "In", "values": values}),
        };
        let mut terms = vec![json!({"matchExpressions": [expression]})];
        if d.chance(30) {
            terms.insert(0, json!({"matchExpressions": [{"key": "no.such/label", "operator": "Exists"}]}));
        }
        spec["affinity"] =
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}});
    }
    let taints: BTreeSet<(&str, &str, &str)> = targets
        .iter()
        .flat_map(|t| nodes[*t].taints.iter().copied())
        .filter(|(_, _, effect)| *effect != "PreferNoSchedule")
        .collect();
    let tolerations: Vec<Value> = taints
        .iter()
        .map(|(key, value, effect)| match d.below(4) {
            0 => json!({"key": key, "operator": "Equal", "value": value, "effect": effect}),
            1 => json!({"key": key, "operator": "Exists"}),
            2 => json!({"key": key, "value": value}),
            _ => json!({"operator": "Exists", "effect": effect}),
        })
        .collect();
    match how {
        Toleration::Own if !tolerations.is_empty() => spec["tolerations"] = json!(tolerations),
        Toleration::RuntimeClass => {
            let name = format!("rc-{}", rc.len());
            spec["runtimeClassName"] = json!(name);
            rc.push(json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
                "handler": "runc", "scheduling": {"tolerations": tolerations}}));
        }
        // Kueue and the setting add tolerations the object does not carry.
        _ => {}
    }
}

/// `count` pods of a shape that asks `units`, placed on `targets` (round robin).
fn put(nodes: &mut [Node], targets: &BTreeSet<usize>, count: u64, units: &BTreeMap<Res, u128>) {
    let targets: Vec<usize> = targets.iter().copied().collect();
    for i in 0..count as usize {
        let n = &mut nodes[targets[i % targets.len()]];
        n.pods += 1;
        for (r, u) in units {
            *n.used.entry(*r).or_default() += u;
        }
    }
}

/// Nodes for a shape's pods: some nodes of `among`, at least one.
fn targets(d: &mut Draw, among: &[usize]) -> BTreeSet<usize> {
    let mut out: BTreeSet<usize> = among.iter().copied().filter(|_| d.chance(50)).collect();
    out.insert(*d.pick(among));
    out
}

/// Every node, or the nodes of one rack when the pods must share a domain.
fn domain(d: &mut Draw, nodes: &[Node], one_rack: bool) -> Vec<usize> {
    let all: Vec<usize> = (0..nodes.len()).collect();
    if !one_rack {
        return all;
    }
    let rack = nodes[*d.pick(&all)].labels[RACK].clone();
    all.into_iter().filter(|i| nodes[*i].labels[RACK] == rack).collect()
}

/// A scenario: the object, the cluster, and the settings.
#[derive(Debug)]
struct Scenario {
    object: Value,
    cluster: Vec<Value>,
    settings: Value,
}

/// One Kueue pod set as the oracle counts it: its pods, and what one pod asks (scheduler units,
/// which are Kueue's: CPU in millicores, the rest rounded up per pod).
type PodSetDemand = (u64, BTreeMap<Res, u128>);

/// A LocalQueue `team-a` in `ml` and a ClusterQueue that can admit `pod_sets`: each pod set is
/// given a flavor in each resource group, and each flavor's quota is what it was given, plus
/// sometimes more. A resource no pod asks for is covered only sometimes.
fn queues(d: &mut Draw, pod_sets: &[PodSetDemand]) -> Vec<Value> {
    let asked: BTreeSet<Res> = pod_sets
        .iter()
        .filter(|(n, _)| *n > 0)
        .flat_map(|(_, u)| u.iter().filter(|(_, a)| **a > 0).map(|(r, _)| *r))
        .collect();
    let covered: Vec<Res> = RESOURCES.into_iter().filter(|r| asked.contains(r) || d.chance(30)).collect();
    let with_pods = d.chance(30);
    // Two resource groups: CPU, memory and hugepages (and `pods`); the devices.
    let groups: [Vec<Res>; 2] = [
        covered.iter().copied().filter(|r| matches!(r, Res::Cpu | Res::Memory | Res::Hugepages)).collect(),
        covered.iter().copied().filter(|r| matches!(r, Res::Gpu | Res::Fpga)).collect(),
    ];
    let mut resource_groups = Vec::new();
    for (g, resources) in groups.iter().enumerate() {
        let pods = with_pods && g == 0;
        if resources.is_empty() && !pods {
            continue;
        }
        let flavors = (d.below(3) + 1) as usize;
        let mut given: Vec<(BTreeMap<Res, u128>, u128)> = vec![(BTreeMap::new(), 0); flavors];
        for (count, units) in pod_sets {
            let f = d.below(flavors as u32) as usize;
            for r in resources {
                *given[f].0.entry(*r).or_default() += u128::from(*count) * units.get(r).copied().unwrap_or(0);
            }
            given[f].1 += u128::from(*count);
        }
        let mut flavor_objects = Vec::new();
        for (f, (amounts, pod_count)) in given.iter().enumerate() {
            let mut quotas: Vec<Value> = resources
                .iter()
                .map(|r| {
                    let spare = if d.chance(30) { r.units(r.amount(d)) } else { 0 };
                    let units = amounts.get(r).copied().unwrap_or(0) + spare;
                    json!({"name": r.name(), "nominalQuota": r.allocatable(units)})
                })
                .collect();
            if pods {
                quotas.push(json!({"name": "pods", "nominalQuota": (pod_count + u128::from(d.below(3))).to_string()}));
            }
            flavor_objects.push(json!({"name": format!("flavor-{g}-{f}"), "resources": quotas}));
        }
        // Crossed flavors, listed first: each holds all that is given of one of the group's
        // resources and none of the others, so every resource fits some flavor, yet only the
        // flavors given above hold a pod set's whole group.
        if resources.len() > 1 && d.chance(30) {
            for (i, r) in resources.iter().enumerate() {
                let quotas: Vec<Value> = resources
                    .iter()
                    .map(|other| {
                        let units = if other == r {
                            given.iter().map(|(a, _)| a.get(r).copied().unwrap_or(0)).sum()
                        } else {
                            0
                        };
                        json!({"name": other.name(), "nominalQuota": other.allocatable(units)})
                    })
                    .chain(pods.then(|| json!({"name": "pods", "nominalQuota": "1000"})))
                    .collect();
                flavor_objects.insert(i, json!({"name": format!("crossed-{g}-{i}"), "resources": quotas}));
            }
        }
        let mut names: Vec<&str> = resources.iter().map(|r| r.name()).collect();
        if pods {
            names.push("pods");
        }
        resource_groups.push(json!({"coveredResources": names, "flavors": flavor_objects}));
    }
    let mut spec = json!({"namespaceSelector": {}, "resourceGroups": resource_groups});
    if d.chance(25) {
        spec["cohortName"] = json!("research");
    }
    vec![
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "team-a-cq"}, "spec": spec}),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "team-a", "namespace": "ml"},
            "spec": {"clusterQueue": "team-a-cq"}}),
    ]
}

/// `count` scenarios from a fixed seed: the non-vacuity tests judge the same ones every run.
fn deterministic_scenarios(count: usize) -> impl Iterator<Item = Scenario> {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = proptest::collection::vec(any::<u32>(), 400);
    (0..count).map(move |_| scenario(&strategy.new_tree(&mut runner).expect("choices").current()))
}

fn scenario(choices: &[u32]) -> Scenario {
    let d = &mut Draw { choices, at: 0 };
    let mut nodes = nodes(d);
    let how = *d.pick(&[Toleration::Own, Toleration::Kueue, Toleration::RuntimeClass, Toleration::Setting]);
    let mut rc = Vec::new();
    let mut pod_sets = Vec::new();
    let kind = d.below(4);
    let mut object = match kind {
        0 => job(d, &mut nodes, how, &mut rc, &mut pod_sets),
        1 => pytorch_job(d, &mut nodes, how, &mut rc, &mut pod_sets),
        2 => volcano_job(d, &mut nodes, how, &mut rc, &mut pod_sets),
        _ => {
            let (job, runtime) = train_job(d, &mut nodes, how, &mut rc, &mut pod_sets);
            rc.push(runtime);
            job
        }
    };
    if kind == 2 && d.chance(30) {
        object = volcano_pod_group(&nodes);
    }
    if how == Toleration::Kueue {
        object["metadata"]["labels"] = json!({"kueue.x-k8s.io/queue-name": "team-a"});
    }
    // Kueue managing the PyTorchJobs too (its shipped configuration leaves them off).
    let frameworks = ["batch/job", "kubeflow.org/pytorchjob", "trainer.kubeflow.org/trainjob"];
    let mut settings = json!({"capacityCheck": "deny", "queueCheck": "deny", "kueueFrameworks": frameworks});
    if how == Toleration::Setting {
        let taints: BTreeSet<(&str, &str, &str)> = nodes.iter().flat_map(|n| n.taints.iter().copied()).collect();
        let added: Vec<Value> =
            taints.iter().map(|(k, v, e)| json!({"key": k, "operator": "Equal", "value": v, "effect": e})).collect();
        settings["capacityAddedTolerations"] = json!(added);
    }
    let mut cluster: Vec<Value> = nodes.iter().enumerate().map(|(i, n)| node_object(i, n, d)).collect();
    cluster.extend(rc);
    if kind == 2 {
        cluster.push(volcano_queue(&nodes, d));
    }
    if how == Toleration::Kueue {
        cluster.extend(queues(d, &pod_sets));
    }
    Scenario { object, cluster, settings }
}

/// A node with room for what was placed on it, and sometimes a little more.
fn node_object(i: usize, n: &Node, d: &mut Draw) -> Value {
    let mut allocatable = Map::new();
    for r in RESOURCES {
        let used = n.used.get(&r).copied().unwrap_or(0);
        let spare = if d.chance(30) { r.units(r.amount(d)) } else { 0 };
        if used + spare > 0 || d.chance(20) {
            allocatable.insert(r.name().into(), json!(r.allocatable(used + spare)));
        }
    }
    allocatable.insert("pods".into(), json!((n.pods + u64::from(d.below(3))).to_string()));
    let taints: Vec<Value> = n.taints.iter().map(|(k, v, e)| json!({"key": k, "value": v, "effect": e})).collect();
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{i}"), "labels": n.labels},
        "spec": {"taints": taints}, "status": {"allocatable": allocatable}})
}

const DRA_DRIVER: &str = "gpu.example.com";

/// A GPU as the DRA driver publishes it (an unqualified name is in the driver's domain).
fn dra_device(name: String, kind: &str, d: &mut Draw) -> Value {
    let product = if d.chance(50) { "productName" } else { "gpu.example.com/productName" };
    let mut device = json!({"name": name, "attributes": {"type": {"string": kind}, product: {"string": "H100"}},
        "capacity": {"memory": {"value": "80Gi"}}});
    // Only devices the pods do not need are tainted: a taint they do not tolerate is real.
    if kind != "gpu" && d.chance(30) {
        device["taints"] = json!([{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule"}]);
    }
    device
}

/// DRA claims for the pods placed on `on` (`together` of them, round robin as [`put`] places
/// them): ResourceClaimTemplates whose requests the pods' nodes can serve, the DeviceClass and
/// ResourceSlices that give each node at least what its pods claim (node-local pools, a pool
/// selected by the node's rack, a pool on every node), with noise the rules must not count
/// against the pods: MIG devices and another driver's, an older generation of a pool, shared
/// devices, taints, `firstAvailable` alternatives that no node can serve, selectors only some
/// devices match, and templates the cluster lacks. Sometimes the pods also share one claim,
/// allocated once: a ResourceClaim every pod names, or (`group`, a Job's) a template entry the
/// Job's `spec.scheduling` names too, whose group claim the returned entry is. Its devices are
/// local to the one node when the pods were all placed on one, else in a pool on every node.
/// `prefix` keeps the names of each pod shape's objects apart.
fn dra_claims(
    d: &mut Draw,
    spec: &mut Value,
    (on, together): (&BTreeSet<usize>, u64),
    nodes: &[Node],
    out: &mut Vec<Value>,
    prefix: &str,
    group: bool,
) -> Option<Value> {
    let claims = 1 + d.below(2) as usize;
    let counts: Vec<u64> = (0..claims).map(|_| u64::from(d.below(3)) + 1).collect();
    let per_pod: u64 = counts.iter().sum();
    // A claim the pods share: 0 none, 1 a ResourceClaim, 2 a group claim.
    let sharing = match d.below(if group { 3 } else { 2 }) {
        n if d.chance(60) => n,
        _ => 0,
    };
    let shared_count = u64::from(d.below(3)) + 1;
    let class = "gpu.dra.example.com";
    out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": class},
        "spec": {"selectors": [{"cel": {"expression":
            "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].type == 'gpu'"}}]}}));
    let mut entries = Vec::new();
    let mut group_claim = None;
    for (i, count) in counts.iter().enumerate() {
        let template = format!("{prefix}gpus-{i}");
        let mut exactly = json!({"deviceClassName": class, "count": count});
        if d.chance(30) {
            exactly["selectors"] =
                json!([{"cel": {"expression": "device.attributes['gpu.example.com'].productName == 'H100'"}}]);
        }
        let request = if d.chance(25) {
            let impossible = json!({"name": "huge", "deviceClassName": class, "count": 1000});
            let mut fits = exactly.clone();
            fits["name"] = json!("fits");
            json!({"name": "gpus", "firstAvailable": [impossible, fits]})
        } else {
            json!({"name": "gpus", "exactly": exactly})
        };
        out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": template, "namespace": "ml"}, "spec": {"spec": {"devices": {"requests": [request]}}}}));
        entries.push(json!({"name": format!("claim-{i}"), "resourceClaimTemplateName": template}));
    }
    if sharing > 0 {
        let request = json!([{"name": "link", "exactly": {"deviceClassName": class, "count": shared_count}}]);
        let name = format!("{prefix}shared");
        let (kind, spec, source) = if sharing == 1 {
            ("ResourceClaim", json!({"devices": {"requests": request}}), "resourceClaimName")
        } else {
            ("ResourceClaimTemplate", json!({"spec": {"devices": {"requests": request}}}), "resourceClaimTemplateName")
        };
        out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, "namespace": "ml"}, "spec": spec}));
        let entry = json!({"name": "shared", source: name});
        if sharing == 2 {
            group_claim = Some(entry.clone());
        }
        entries.push(entry);
        if on.len() > 1 {
            // Pods on several nodes: the shared claim's devices reach every node.
            let devices: Vec<Value> =
                (0..shared_count).map(|g| dra_device(format!("gpu-shared-{g}"), "gpu", d)).collect();
            out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": format!("{prefix}shared-gpus")},
                "spec": {"driver": DRA_DRIVER, "allNodes": true,
                    "pool": {"name": format!("{prefix}shared-pool"), "generation": 0, "resourceSliceCount": 1},
                    "devices": devices}}));
        }
    }
    if d.chance(15) {
        // A template the cluster lacks: the claims policy's business, never a capacity finding.
        entries.push(json!({"name": "missing", "resourceClaimTemplateName": "no-such-template"}));
    }
    spec["resourceClaims"] = json!(entries);
    // Each target node holds the devices of the pods placed on it.
    let targets: Vec<usize> = on.iter().copied().collect();
    let placed = |k: usize| together / targets.len() as u64 + u64::from((k as u64) < together % targets.len() as u64);
    for (k, t) in targets.iter().enumerate() {
        // One node: the shared claim's devices are local to it.
        let local_shared = if sharing > 0 && targets.len() == 1 { shared_count } else { 0 };
        let need = placed(k) * per_pod + local_shared;
        let node = format!("{prefix}node-{t}");
        let node_name = format!("node-{t}");
        let shared = d.chance(10);
        let mut devices: Vec<Value> =
            (0..if shared { 1 } else { need }).map(|g| dra_device(format!("gpu-{g}"), "gpu", d)).collect();
        if shared {
            devices[0]["allowMultipleAllocations"] = json!(true);
        }
        if d.chance(30) {
            devices.extend((0..3).map(|m| dra_device(format!("gpu-0-mig-{m}"), "mig", d)));
        }
        let reach = match d.below(4) {
            1 => json!({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": RACK, "operator": "In", "values": [nodes[*t].labels[RACK]]}]}]}}),
            2 => json!({"allNodes": true}),
            _ => json!({"nodeName": node_name}),
        };
        let generation = u64::from(d.below(2)) + 1;
        let mut slice_spec = json!({"driver": DRA_DRIVER, "pool": {"name": format!("{node}-pool"), "generation": generation,
            "resourceSliceCount": 1}, "devices": devices});
        slice_spec.as_object_mut().unwrap().extend(reach.as_object().cloned().unwrap_or_default());
        out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": format!("{node}-gpus")}, "spec": slice_spec}));
        if generation == 2 && d.chance(50) {
            // The older generation, smaller: never counted.
            out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": format!("{node}-gpus-old")},
                "spec": {"driver": DRA_DRIVER, "nodeName": node_name,
                    "pool": {"name": format!("{node}-pool"), "generation": 1, "resourceSliceCount": 1}, "devices": []}}));
        }
        if d.chance(20) {
            out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": format!("{node}-nics")},
                "spec": {"driver": "nic.example.com", "nodeName": node_name, "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": "nic-0", "attributes": {"type": {"string": "gpu"}}}]}}));
        }
    }
    group_claim
}

/// A Job: `parallelism` pods, a gang of `minCount` of them (in one rack when it names the rack
/// as its topology), or Kueue's required topology over the pods it starts (all of them, or as
/// few as `job-min-parallelism`).
fn job(
    d: &mut Draw,
    nodes: &mut [Node],
    how: Toleration,
    rc: &mut Vec<Value>,
    pod_sets: &mut Vec<PodSetDemand>,
) -> Value {
    let (mut spec, units) = pod_spec(d, None);
    let parallelism = u64::from(d.below(5)) + 1;
    let gang = u64::from(d.below(parallelism as u32)) + 1;
    let topology = d.chance(30);
    let kueue_tas = d.chance(25);
    let min_parallelism =
        (kueue_tas && parallelism > 1 && d.chance(50)).then(|| u64::from(d.below(parallelism as u32 - 1)) + 1);
    // The pods placed at once: the gang's, and with Kueue's required topology every pod it
    // starts (as few as its partial admission allows), all in one rack when either asks.
    let together = if kueue_tas { min_parallelism.unwrap_or(parallelism).max(gang) } else { gang };
    let among = domain(d, nodes, topology || kueue_tas);
    let on = targets(d, &among);
    place(&mut spec, &on, nodes, how, d, rc);
    put(nodes, &on, together, &units);
    let scheduled = d.chance(70);
    let group_claim =
        if d.chance(40) { dra_claims(d, &mut spec, (&on, together), nodes, rc, "", scheduled) } else { None };
    let mut template = json!({"spec": spec});
    if kueue_tas {
        template["metadata"] = json!({"annotations": {"kueue.x-k8s.io/podset-required-topology": RACK}});
    }
    let mut job_spec = json!({"parallelism": parallelism, "completions": parallelism + u64::from(d.below(3)),
        "template": template});
    if scheduled {
        let mut scheduling = json!({"schedulingPolicy": {"gang": {"minCount": gang}}});
        if topology {
            scheduling["schedulingConstraints"] = json!({"topology": [{"key": RACK}]});
        }
        if let Some(claim) = group_claim {
            scheduling["resourceClaims"] = json!([claim]);
        }
        job_spec["scheduling"] = scheduling;
    }
    let mut object = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
        "spec": job_spec});
    if let Some(min) = min_parallelism {
        object["metadata"]["annotations"] = json!({"kueue.x-k8s.io/job-min-parallelism": min.to_string()});
    }
    // Kueue admits the Job with as few pods as its partial admission allows.
    pod_sets.push((min_parallelism.unwrap_or(parallelism), units));
    object
}

/// A PyTorchJob: a Master and Workers of their own shapes; `minAvailable` is what was placed.
/// A replica type of no pods may ask for anything.
fn pytorch_job(
    d: &mut Draw,
    nodes: &mut [Node],
    how: Toleration,
    rc: &mut Vec<Value>,
    pod_sets: &mut Vec<PodSetDemand>,
) -> Value {
    let all: Vec<usize> = (0..nodes.len()).collect();
    let workers = u64::from(d.below(6));
    let mut specs = Map::new();
    let mut placed = 0;
    for (replica_type, count) in [("Master", 1), ("Worker", workers)] {
        let (mut spec, units) = pod_spec(d, None);
        pod_sets.push((count, units.clone()));
        if count == 0 {
            // Never placed: a template no node can take must not matter.
            spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = json!("1000");
        } else {
            let on = targets(d, &all);
            place(&mut spec, &on, nodes, how, d, rc);
            let at_once = u64::from(d.below(count as u32)) + 1;
            put(nodes, &on, at_once, &units);
            if d.chance(40) {
                let prefix = format!("{}-", replica_type.to_lowercase());
                dra_claims(d, &mut spec, (&on, at_once), nodes, rc, &prefix, false);
            }
            placed += at_once;
        }
        specs.insert(
            replica_type.into(),
            json!({"replicas": count, "restartPolicy": "OnFailure", "template": {"spec": spec}}),
        );
    }
    json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "resnet", "namespace": "ml"},
        "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": placed}}, "pytorchReplicaSpecs": specs}})
}

/// A Volcano Job (vcjob): up to three tasks of their own shapes. Volcano's gang is the job's
/// `minAvailable` pods, with each task's own `minAvailable` among them when the job's covers
/// their sum: each task places at least its minimum (without one, Volcano's default, every
/// replica), and the job's minimum is what was placed, fewer, or left to Volcano's default
/// (the tasks' sum). A task of no pods may ask for anything. One task's pods may claim DRA
/// devices.
fn volcano_job(
    d: &mut Draw,
    nodes: &mut [Node],
    how: Toleration,
    rc: &mut Vec<Value>,
    pod_sets: &mut Vec<PodSetDemand>,
) -> Value {
    let all: Vec<usize> = (0..nodes.len()).collect();
    let mut tasks = Vec::new();
    let (mut placed, mut claims) = (0, false);
    for i in 0..=d.below(3) {
        let replicas = u64::from(d.below(5));
        let (mut spec, units) = pod_spec(d, None);
        pod_sets.push((replicas, units.clone()));
        let mut task = json!({"name": format!("task-{i}"), "replicas": replicas});
        if replicas == 0 {
            // Never placed: a template no node can take must not matter.
            spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = json!("1000");
        } else {
            let on = targets(d, &all);
            place(&mut spec, &on, nodes, how, d, rc);
            let at_once = if d.chance(40) {
                replicas
            } else {
                let at_once = u64::from(d.below(replicas as u32)) + 1;
                task["minAvailable"] = json!(d.below(at_once as u32 + 1));
                at_once
            };
            put(nodes, &on, at_once, &units);
            if !claims && d.chance(40) {
                claims = true;
                dra_claims(d, &mut spec, (&on, at_once), nodes, rc, "", false);
            }
            placed += at_once;
        }
        task["template"] = json!({"spec": spec});
        tasks.push(task);
    }
    let mut spec = json!({"tasks": tasks});
    match d.below(3) {
        0 => {}
        1 if placed > 0 => spec["minAvailable"] = json!(d.below(placed as u32) + 1),
        _ => spec["minAvailable"] = json!(placed),
    }
    json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
        "spec": spec})
}

/// A Volcano PodGroup written by hand: its `minResources` are what the pods placed ask in all,
/// within what the nodes offer together.
fn volcano_pod_group(nodes: &[Node]) -> Value {
    let mut total = Atoms::new();
    for n in nodes {
        add(&mut total, &n.used);
    }
    let min_resources: Map<String, Value> =
        total.into_iter().map(|(r, units)| (r.name().to_string(), json!(r.allocatable(units)))).collect();
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"minMember": 1, "minResources": min_resources}})
}

/// Volcano's `default` Queue, Open, whose capability holds what the placed pods ask in all
/// (each resource sometimes more, sometimes left out; cpu and memory sometimes `0`, no limit):
/// the placed pods are a gang Volcano's controller may count, so its least `minResources` fits.
fn volcano_queue(nodes: &[Node], d: &mut Draw) -> Value {
    let mut total = Atoms::new();
    for n in nodes {
        add(&mut total, &n.used);
    }
    let mut capability = Map::new();
    for (r, units) in total {
        match d.below(4) {
            0 => {}
            1 if matches!(r, Res::Cpu | Res::Memory) => {
                capability.insert(r.name().to_string(), json!("0"));
            }
            2 => {
                capability.insert(r.name().to_string(), json!(r.allocatable(units + r.units(r.amount(d)))));
            }
            _ => {
                capability.insert(r.name().to_string(), json!(r.allocatable(units)));
            }
        }
    }
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
        "spec": {"weight": 1, "capability": capability}, "status": {"state": "Open"}})
}

/// A TrainJob on a coscheduling runtime (torch, or MPI with or without the launcher as a
/// node): every pod of the run placed at once, `resourcesPerNode` where Trainer merges it.
fn train_job(
    d: &mut Draw,
    nodes: &mut [Node],
    how: Toleration,
    rc: &mut Vec<Value>,
    pod_sets: &mut Vec<PodSetDemand>,
) -> (Value, Value) {
    let all: Vec<usize> = (0..nodes.len()).collect();
    let num_nodes = u64::from(d.below(4)) + 1;
    let gpus = Res::Gpu.amount(d);
    let written = Res::Gpu.write(gpus, d);
    let per_node = json!({"requests": {"nvidia.com/gpu": written}, "limits": {"nvidia.com/gpu": written}});
    let mpi = d.chance(50);
    let launcher_as_node = mpi && d.chance(50);
    let trainer_label = json!({"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"});
    // (job name, labelled as the trainer, pods, gets resourcesPerNode)
    let jobs: Vec<(&str, bool, u64, bool)> = if mpi {
        let workers = if launcher_as_node { (num_nodes - 1).max(1) } else { num_nodes };
        vec![("launcher", true, 1, true), ("node", false, workers, launcher_as_node)]
    } else {
        vec![("node", true, num_nodes, true)]
    };
    let mut replicated = Vec::new();
    for (name, trainer, count, merged) in jobs {
        let (mut spec, units) = pod_spec(d, merged.then_some((gpus, &written)));
        let on = targets(d, &all);
        place(&mut spec, &on, nodes, how, d, rc);
        put(nodes, &on, count, &units);
        if d.chance(40) {
            dra_claims(d, &mut spec, (&on, count), nodes, rc, &format!("{name}-"), false);
        }
        pod_sets.push((count, units.clone()));
        let mut template = json!({"spec": {"template": {"spec": spec}}});
        if trainer {
            template["metadata"] = json!({"labels": trainer_label});
        }
        replicated.push(json!({"name": name, "template": template}));
    }
    let ml_policy = if mpi {
        json!({"numNodes": 1, "mpi": {"numProcPerNode": 1, "mpiImplementation": "OpenMPI", "runLauncherAsNode": launcher_as_node}})
    } else {
        json!({"numNodes": 1, "torch": {}})
    };
    let runtime = json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "gang"}, "spec": {"mlPolicy": ml_policy, "podGroupPolicy": {"coscheduling": {}},
        "template": {"spec": {"replicatedJobs": replicated}}}});
    let job = json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "llama", "namespace": "ml"},
        "spec": {"runtimeRef": {"name": "gang", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
                 "trainer": {"numNodes": num_nodes, "resourcesPerNode": per_node}}});
    (job, runtime)
}

/// The capacity findings of the topology rule set on `s` (rejections and warnings alike).
fn capacity_findings(s: &Scenario) -> Vec<String> {
    let request = admission_request("soundness", "CREATE", &s.object, None);
    let payload = serde_json::to_vec(&json!({"request": request, "settings": s.settings})).unwrap_or_default();
    let answer = evaluate::<Topology>(&payload, &MemoryCluster::new(s.cluster.clone()));
    answer
        .message
        .iter()
        .chain(&answer.warnings)
        .filter(|m| m.contains("[topology.pod-fits]") || m.contains("[topology.gang-fits]"))
        .cloned()
        .collect()
}

/// The queue findings of the topology rule set on `s` (rejections and warnings alike).
fn queue_findings(s: &Scenario) -> Vec<String> {
    let request = admission_request("soundness", "CREATE", &s.object, None);
    let payload = serde_json::to_vec(&json!({"request": request, "settings": s.settings})).unwrap_or_default();
    let answer = evaluate::<Topology>(&payload, &MemoryCluster::new(s.cluster.clone()));
    let queue = |m: &&String| m.contains("[topology.queue-") || m.contains("[topology.volcano-queue");
    answer.message.iter().chain(&answer.warnings).filter(queue).cloned().collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("CAPACITY_SOUNDNESS_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_capacity_finding_is_made_on_pods_the_scheduler_can_place(choices in proptest::collection::vec(any::<u32>(), 400)) {
        let s = scenario(&choices);
        let findings = capacity_findings(&s);
        prop_assert!(
            findings.is_empty(),
            "a feasible placement was called impossible: {findings:?}\nobject: {}\ncluster: {}\nsettings: {}",
            s.object, Value::from(s.cluster.clone()), s.settings
        );
        let findings = queue_findings(&s);
        prop_assert!(
            findings.is_empty(),
            "a queue that can admit the job was said never to: {findings:?}\nobject: {}\ncluster: {}",
            s.object, Value::from(s.cluster.clone())
        );
    }
}

/// The oracle is not vacuous: the same scenarios with one node's room taken away are found out
/// often enough (a pod or a gang no longer fits), so the property above tests real checks.
#[test]
fn the_oracle_builds_scenarios_the_rules_can_judge() {
    let (mut judged, mut tight, mut volcano) = (0, 0, (0, 0));
    for mut s in deterministic_scenarios(400) {
        // Halve what every node offers: most scenarios that placed something no longer fit.
        for node in s.cluster.iter_mut().filter(|o| o["kind"] == "Node") {
            for (name, v) in node["status"]["allocatable"].as_object_mut().into_iter().flatten() {
                if name != "pods" {
                    let text = v.as_str().unwrap_or_default().trim_end_matches('m').to_string();
                    let n: u128 = text.parse().unwrap_or(0);
                    *v = json!(if name == "cpu" { format!("{}m", n / 2) } else { (n / 2).to_string() });
                }
            }
        }
        let found = !capacity_findings(&s).is_empty();
        judged += 1;
        tight += usize::from(found);
        if s.object["apiVersion"] == "batch.volcano.sh/v1alpha1" {
            volcano.0 += 1;
            volcano.1 += usize::from(found);
        }
    }
    assert!(tight * 4 >= judged, "only {tight} of {judged} starved scenarios were found out: the oracle is too lax");
    let (judged, tight) = volcano;
    assert!(tight * 4 >= judged && judged >= 50, "only {tight} of {judged} starved Volcano Jobs were found out");
}

/// The DRA oracle is not vacuous either: the same scenarios with every GPU taken out of the
/// slices (the MIG partitions and the other driver's devices stay) are found out.
#[test]
fn the_dra_oracle_builds_scenarios_the_rules_can_judge() {
    let (mut judged, mut found) = (0, 0);
    for mut s in deterministic_scenarios(400) {
        // A PodGroup's minResources claim no devices.
        if !s.cluster.iter().any(|o| o["kind"] == "ResourceSlice") || s.object["kind"] == "PodGroup" {
            continue;
        }
        for slice in s.cluster.iter_mut().filter(|o| o["kind"] == "ResourceSlice") {
            if let Some(devices) = slice["spec"]["devices"].as_array_mut() {
                devices.retain(|d| d["name"].as_str().is_some_and(|n| n.contains("mig") || n.starts_with("nic")));
            }
        }
        judged += 1;
        found += usize::from(capacity_findings(&s).iter().any(|f| f.contains("ResourceSlices")));
    }
    assert!(judged >= 50, "only {judged} scenarios claim DRA devices");
    assert_eq!(found, judged, "scenarios whose pods claim GPUs no slice offers were not found out");
}

/// The gangs' DRA check is not vacuous: the same scenarios with one GPU taken out of each
/// node's pool make gang findings that rest on the devices.
#[test]
fn the_dra_oracle_builds_gangs_the_rules_can_judge() {
    let (mut judged, mut found) = (0, 0);
    for mut s in deterministic_scenarios(800) {
        if !s.cluster.iter().any(|o| o["kind"] == "ResourceSlice") {
            continue;
        }
        for slice in s.cluster.iter_mut().filter(|o| o["kind"] == "ResourceSlice") {
            if let Some(devices) = slice["spec"]["devices"].as_array_mut()
                && let Some(gpu) =
                    devices.iter().position(|d| d["name"] == "gpu-0" && d["allowMultipleAllocations"].is_null())
            {
                devices.remove(gpu);
            }
        }
        judged += 1;
        found += usize::from(
            capacity_findings(&s)
                .iter()
                .any(|f| f.contains("[topology.gang-fits]") && f.contains("counting the devices")),
        );
    }
    assert!(judged >= 100, "only {judged} scenarios claim DRA devices");
    assert!(found * 4 >= judged, "only {found} of {judged} scenarios short of one GPU a node were found out as gangs");
}

/// The quota field `text` in its units (millicores when it ends in `m`), and the suffix.
fn quota_units(text: &str) -> (u128, &'static str) {
    match text.strip_suffix('m') {
        Some(n) => (n.parse().unwrap_or(0), "m"),
        None => (text.parse().unwrap_or(0), ""),
    }
}

/// The per-group check is not vacuous: outside a cohort, with crossed flavors added to every
/// group of two or more resources (each holding all the group's flavors together give of one
/// resource, so every resource fits some flavor and the workload fits all flavors together)
/// and the other flavors cut to a third, pod sets that ask for more than one resource of a
/// group are found out by `topology.queue-quota`'s one-flavor-per-group finding.
#[test]
fn the_group_check_finds_pod_sets_no_one_flavor_holds() {
    let (mut judged, mut tight) = (0, 0);
    for mut s in deterministic_scenarios(2000) {
        let Some(cq) = s.cluster.iter_mut().find(|o| o["kind"] == "ClusterQueue") else { continue };
        if cq["spec"].get("cohortName").is_some() {
            continue;
        }
        let mut crossed = false;
        for group in cq["spec"]["resourceGroups"].as_array_mut().into_iter().flatten() {
            let covered: Vec<String> = group["coveredResources"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().filter(|r| *r != "pods").map(str::to_string))
                .collect();
            if covered.len() < 2 {
                continue;
            }
            let Some(flavors) = group["flavors"].as_array_mut() else { continue };
            let mut totals: BTreeMap<String, (u128, &str)> = BTreeMap::new();
            for flavor in flavors.iter_mut() {
                for quota in flavor["resources"].as_array_mut().into_iter().flatten() {
                    let (n, suffix) = quota_units(quota["nominalQuota"].as_str().unwrap_or_default());
                    let name = quota["name"].as_str().unwrap_or_default().to_string();
                    totals.entry(name).or_insert((0, suffix)).0 += n;
                    quota["nominalQuota"] = json!(format!("{}{suffix}", n / 3));
                }
            }
            for (i, r) in covered.iter().enumerate() {
                let quotas: Vec<Value> = totals
                    .iter()
                    .map(|(name, (n, suffix))| {
                        let n = if name == r || name == "pods" { *n } else { 0 };
                        json!({"name": name, "nominalQuota": format!("{n}{suffix}")})
                    })
                    .collect();
                flavors.push(json!({"name": format!("crossed-{i}"), "resources": quotas}));
            }
            crossed = true;
        }
        if !crossed {
            continue;
        }
        judged += 1;
        let findings = queue_findings(&s);
        tight += usize::from(findings.iter().any(|f| f.contains("one flavor for all of a resource group's resources")));
        assert!(
            findings.iter().all(|f| f.contains("one flavor for all") || f.contains("[topology.queue-resource]")),
            "a crossed flavor holds each resource and all flavors together the workload: {findings:?}"
        );
    }
    assert!(judged >= 50, "only {judged} scenarios had a group of two resources outside a cohort");
    assert!(tight * 2 >= judged, "only {tight} of {judged} groups no one flavor holds were found out");
}

/// The queue oracle is not vacuous either: with every flavor's quota a third of what it was,
/// some scenarios outside a cohort that asked for something are found out.
#[test]
fn the_queue_oracle_builds_scenarios_the_rules_can_judge() {
    let (mut judged, mut tight) = (0, 0);
    for mut s in deterministic_scenarios(2000) {
        let Some(cq) = s.cluster.iter_mut().find(|o| o["kind"] == "ClusterQueue") else { continue };
        if cq["spec"].get("cohortName").is_some() {
            continue;
        }
        for group in cq["spec"]["resourceGroups"].as_array_mut().into_iter().flatten() {
            for flavor in group["flavors"].as_array_mut().into_iter().flatten() {
                for quota in flavor["resources"].as_array_mut().into_iter().flatten() {
                    let (n, milli) = quota_units(quota["nominalQuota"].as_str().unwrap_or_default());
                    quota["nominalQuota"] = json!(format!("{}{milli}", n / 3));
                }
            }
        }
        judged += 1;
        tight += usize::from(!queue_findings(&s).is_empty());
    }
    assert!(judged >= 50, "only {judged} scenarios had a queue outside a cohort");
    assert!(tight * 3 >= judged, "only {tight} of {judged} starved queues were found out: the oracle is too lax");
}

/// The Volcano queue oracle is not vacuous: with every capability the `default` Queue names
/// (above zero) halved, Volcano Jobs and PodGroups that asked for something are found out.
#[test]
fn the_volcano_queue_oracle_builds_scenarios_the_rules_can_judge() {
    let (mut judged, mut found) = (0, 0);
    for mut s in deterministic_scenarios(600) {
        let Some(queue) = s.cluster.iter_mut().find(|o| o["kind"] == "Queue") else { continue };
        let mut halved = false;
        for (name, v) in queue["spec"]["capability"].as_object_mut().into_iter().flatten() {
            let text = v.as_str().unwrap_or_default().trim_end_matches('m').to_string();
            let n: u128 = text.parse().unwrap_or(0);
            if n >= 2 && name != "cpu" && name != "memory" {
                *v = json!((n / 2).to_string());
                halved = true;
            }
        }
        if !halved {
            continue;
        }
        judged += 1;
        found += usize::from(!queue_findings(&s).is_empty());
    }
    assert!(judged >= 30 && found * 3 >= judged, "only {found} of {judged} starved Volcano queues were found out");
}

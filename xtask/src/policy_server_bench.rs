//! `cargo xtask-host policy-server-bench` (`make bench`, the policy-server part): the everyday
//! requests of `payloads::request_scenarios()` through one real policy-server process serving
//! every module and the baseline policy, against a test API server holding the everyday
//! cluster (its Nodes, the claim sources the requests name, so every lookup finds its
//! object, and the queue rows' ClusterQueues), and the queue rows of
//! `payloads::queue_scenarios()`.
//!
//! ```text
//! cargo xtask-host policy-server-bench [--connections C] [--seconds T] [--rounds R] [--check] [--write FILE]
//! ```
//!
//! For each scenario, each round sends the baseline (the trivial policy, given a Pod payload of
//! the same size or, for the Job controller's pair, the same request: `payloads::baseline_request`)
//! and then the policy (the order swaps every
//! round) for T seconds each over C keep-alive connections, every answer's `allowed` checked
//! against what the project's own host answers for the same request. Throughput and latency
//! are medians over the R rounds. Each scenario's policy has an entry with exactly the
//! scenario's settings. `--write` replaces the text between the markers in FILE; `--check`
//! fails when a policy's throughput is below a third of the baseline's (the queue row's labelled
//! Job: of the unlabelled Job's). The Job controller's pair is then timed by `kwctl bench`
//! too, against the baseline (`kwctl_bench`). Prints one "skipped:"
//! line and exits 0 without policy-server or kwctl (fails instead when `CI` is set).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_harness::host::Policy;
use gangwarden_harness::payloads;
use gangwarden_harness::policy_server::{
    Options, PolicyServer, TempDir, annotate_all, context_aware_resources, entry_id, needed_tool, policies_yml,
    project_policies, read_manifest, with_settings,
};
use gangwarden_harness::{POLICIES, deploy_manifest, repo_root};
use gangwarden_test_apiserver::TestApiServer;
use serde_json::{Value, json};

const BEGIN: &str = "<!-- policy-server-bench:begin -->";
const END: &str = "<!-- policy-server-bench:end -->";
/// `--check` fails when a policy's throughput is below this share of the baseline's.
const CHECK_SHARE: f64 = 1.0 / 3.0;
/// Requests sent to every entry before measuring (module caches, reflectors, connections).
const WARM_UP: usize = 20;
/// The longest one answer may take before the bench gives up.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

pub struct Args {
    pub connections: usize,
    pub seconds: f64,
    pub rounds: usize,
    pub check: bool,
    pub write: Option<PathBuf>,
}

// ---------------------------------------------------------------------------------------------
// A keep-alive HTTP/1.1 client, enough for policy-server's Content-Length answers.

struct Connection {
    stream: TcpStream,
    buf: Vec<u8>,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Connection {
    fn open(addr: &str) -> Result<Connection, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_read_timeout(Some(ANSWER_WITHIN)).map_err(|e| e.to_string())?;
        stream.set_write_timeout(Some(ANSWER_WITHIN)).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Connection { stream, buf: Vec::new() })
    }

    fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("policy-server closed the connection".into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Sends one request (whole, head and body) and returns the answer's body.
    fn exchange(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        self.stream.write_all(request).map_err(|e| format!("write: {e}"))?;
        let head_end = loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                break end;
            }
            self.fill()?;
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_string();
        let status = head.split(' ').nth(1).unwrap_or_default();
        let length = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(n, _)| n.trim().eq_ignore_ascii_case("content-length")))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .ok_or(format!("an answer without Content-Length: {head}"))?;
        while self.buf.len() < head_end + 4 + length {
            self.fill()?;
        }
        let body: Vec<u8> = self.buf.drain(..head_end + 4 + length).skip(head_end + 4).collect();
        if status != "200" {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)));
        }
        Ok(body)
    }
}

/// One request as bytes on the wire, and the `allowed` its answer must carry.
struct Load {
    request: Vec<u8>,
    allowed: bool,
}

impl Load {
    fn new(port: u16, entry: &str, admission_request: &Value, allowed: bool) -> Load {
        let body =
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": admission_request})
                .to_string();
        let head = format!(
            "POST /validate/{entry} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        Load { request: [head.as_bytes(), body.as_bytes()].concat(), allowed }
    }

    fn send(&self, conn: &mut Connection) -> Result<(), String> {
        let body = conn.exchange(&self.request)?;
        let review: Value = serde_json::from_slice(&body).map_err(|e| format!("the answer is not JSON: {e}"))?;
        match review["response"]["allowed"].as_bool() {
            Some(a) if a == self.allowed => Ok(()),
            _ => Err(format!("expected allowed={}, policy-server answered {}", self.allowed, review["response"])),
        }
    }
}

/// One timed phase: requests/s and every latency.
struct Phase {
    rate: f64,
    latencies: Vec<Duration>,
}

/// `load` over `connections` keep-alive connections for `seconds`.
fn phase(addr: &str, load: &Load, connections: usize, seconds: f64) -> Result<Phase, String> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let results: Vec<Result<Vec<Duration>, String>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..connections)
            .map(|_| {
                s.spawn(move || -> Result<Vec<Duration>, String> {
                    let mut conn = Connection::open(addr)?;
                    let mut latencies = Vec::new();
                    while Instant::now() < deadline {
                        let t = Instant::now();
                        load.send(&mut conn)?;
                        latencies.push(t.elapsed());
                    }
                    Ok(latencies)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err("a load thread panicked".into()))).collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut latencies = Vec::new();
    for r in results {
        latencies.extend(r?);
    }
    latencies.sort();
    Ok(Phase { rate: latencies.len() as f64 / elapsed, latencies })
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted.get(((sorted.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

// ---------------------------------------------------------------------------------------------

/// A scenario ready to send: its policy's entry and request, and the baseline's.
struct Row {
    name: String,
    bytes: usize,
    policy: Load,
    baseline: Load,
}

struct Measured {
    name: String,
    bytes: usize,
    policy_rate: f64,
    baseline_rate: f64,
    median_ms: f64,
    p99_ms: f64,
    baseline_median_ms: f64,
}

/// The baseline's manifest: a cluster-wide policy like the deploy manifests, on the annotated
/// baseline module.
fn baseline_manifest(module: &Path) -> Value {
    json!({"apiVersion": "policies.kubewarden.io/v1", "kind": "ClusterAdmissionPolicy",
           "metadata": {"name": "bench-baseline"},
           "spec": {"module": format!("file://{}", module.display()), "mode": "protect", "mutating": false,
                    "settings": {}}})
}

/// The cluster the bench's lookups see: the everyday Nodes, and the claim sources the everyday
/// PodGroup and Job name (`eight-gpus`, `rdma-fabric`) with the DeviceClasses their requests
/// name, so every lookup finds what it asks for.
fn bench_cluster() -> Vec<Value> {
    let mut objects = payloads::everyday_nodes();
    for class in ["gpu.example.com", "rdma.example.com"] {
        objects.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": class},
            "spec": {}}));
    }
    objects.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "eight-gpus", "namespace": "ml"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
            "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 8}}]}}}}));
    objects.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "rdma-fabric", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "rdma.example.com"}}]}}}));
    objects.push(payloads::everyday_runtime());
    objects.extend(payloads::queue_cohort(payloads::QUEUE_COHORT));
    objects
}

/// The host's `accepted` for a payload; a warning is reported (the everyday requests should
/// find every object they look up).
fn host_allowed(policy: &Policy, payload: &[u8], cluster: MemoryCluster, what: &str) -> Result<bool, String> {
    let answer = policy.call("validate", payload, cluster)?.answer.map_err(|e| format!("{}: {e}", policy.name))?;
    if let Some(warnings) = answer["warnings"].as_array().filter(|w| !w.is_empty()) {
        let warnings: Vec<&str> = warnings.iter().filter_map(Value::as_str).collect();
        eprintln!("note: {what} warns in the project's host: {}", warnings.join("; "));
    }
    answer["accepted"].as_bool().ok_or(format!("{}: no `accepted` in {answer}", policy.name))
}

/// A scenario to send: its entry and request, the baseline's, and the `allowed` each answer
/// must carry.
struct Spec {
    name: String,
    bytes: usize,
    entry: String,
    request: Value,
    allowed: bool,
    baseline_entry: String,
    baseline_request: Value,
    baseline_allowed: bool,
}

/// What one policy-server process measured.
struct Served {
    measured: Vec<Measured>,
    rss_warm: u64,
    rss_end: u64,
    /// The list and watch calls the test API server answered in all.
    lists: u64,
    watches: u64,
}

/// Starts a test API server holding `objects` and one policy-server process serving
/// `manifests`, warms every entry up, then measures each spec against its baseline: `rounds`
/// rounds, the order swapping every round.
fn serve(
    args: &Args,
    manifests: &[Value],
    modules: &BTreeMap<String, PathBuf>,
    objects: Vec<Value>,
    specs: &[Spec],
) -> Result<Served, String> {
    let tmp = TempDir::new("gangwarden-policy-server-bench-serve")?;
    let apiserver = TestApiServer::start_with(objects, None, context_aware_resources(manifests))
        .map_err(|e| format!("the test API server does not start: {e}"))?;
    let kubeconfig = tmp.path().join("kubeconfig");
    apiserver.write_kubeconfig(&kubeconfig).map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    let options = Options { log_level: "warn".into(), ..Options::default() };
    let mut server = PolicyServer::start_with(&policies_yml(manifests, modules)?, Some(&kubeconfig), &options)?;
    println!("policy-server ready after {:.1} s with {} entries", server.ready_after.as_secs_f64(), manifests.len());
    let addr = format!("127.0.0.1:{}", server.port());
    let rows: Vec<Row> = specs
        .iter()
        .map(|s| Row {
            name: s.name.clone(),
            bytes: s.bytes,
            policy: Load::new(server.port(), &s.entry, &s.request, s.allowed),
            baseline: Load::new(server.port(), &s.baseline_entry, &s.baseline_request, s.baseline_allowed),
        })
        .collect();

    let mut conn = Connection::open(&addr)?;
    for row in &rows {
        for _ in 0..WARM_UP {
            row.baseline.send(&mut conn).map_err(|e| format!("{} (baseline, warm-up): {e}", row.name))?;
            row.policy.send(&mut conn).map_err(|e| format!("{} (warm-up): {e}", row.name))?;
        }
    }
    drop(conn);
    let rss_warm = server.rss_kib()?;

    let mut measured = Vec::new();
    for row in &rows {
        let (mut p_rate, mut b_rate, mut p_med, mut p99, mut b_med) = (vec![], vec![], vec![], vec![], vec![]);
        for round in 0..args.rounds {
            let measure = |load: &Load, what: &str| {
                phase(&addr, load, args.connections, args.seconds).map_err(|e| format!("{} ({what}): {e}", row.name))
            };
            let (b, p) = if round % 2 == 0 {
                let b = measure(&row.baseline, "baseline")?;
                (b, measure(&row.policy, "policy")?)
            } else {
                let p = measure(&row.policy, "policy")?;
                (measure(&row.baseline, "baseline")?, p)
            };
            p_rate.push(p.rate);
            b_rate.push(b.rate);
            p_med.push(ms(quantile(&p.latencies, 0.5)));
            p99.push(ms(quantile(&p.latencies, 0.99)));
            b_med.push(ms(quantile(&b.latencies, 0.5)));
        }
        if !server.alive() {
            return Err(format!("policy-server died:\n{}", server.log_tail(40)));
        }
        let m = Measured {
            name: row.name.clone(),
            bytes: row.bytes,
            policy_rate: median(p_rate),
            baseline_rate: median(b_rate),
            median_ms: median(p_med),
            p99_ms: median(p99),
            baseline_median_ms: median(b_med),
        };
        eprintln!("{}: {:.0} req/s (baseline {:.0})", m.name, m.policy_rate, m.baseline_rate);
        measured.push(m);
    }
    let rss_end = server.rss_kib()?;
    let counts = apiserver.counts();
    Ok(Served { measured, rss_warm, rss_end, lists: counts.list, watches: counts.watch })
}

/// The Nodes of the floor measurement.
const FLOOR_NODES: usize = 5_000;
/// The topology policy on the everyday PodGroup and on Jobs the capacity rules check (a gang
/// of 4 pods of 8 GPUs that fits a rack, one of 64 that no rack holds: every Node is read)
/// against 5,000 realistic Nodes, next to what policy-server's own work on the same list call
/// costs: the baseline policy making the call and dropping the answer unread (`listNodes`),
/// and the PodGroup with the lookup off.
fn node_floor(
    args: &Args,
    modules: &BTreeMap<String, PathBuf>,
    baseline_host: &Policy,
    topology_host: &Policy,
) -> Result<Served, String> {
    let pg = payloads::everyday_pod_group();
    let payload = |settings: Value| payloads::validate_payload("CREATE", &pg, None, &settings);
    let with_lookup = payload(json!({}));
    let base_payload = payloads::baseline_payload(with_lookup.len());
    let base: Value = serde_json::from_slice(&base_payload).map_err(|e| e.to_string())?;
    let listing = |name: &str, masks: &[&str]| {
        let mut manifest = with_settings(&baseline_manifest(&modules["baseline"]), name, &json!({"listNodes": masks}));
        manifest["spec"]["contextAwareResources"] = json!([{"apiVersion": "v1", "kind": "Node"}]);
        manifest
    };
    let topology = read_manifest(&deploy_manifest("topology"))?;
    let off = json!({"capacityCheck": "off"});
    let masks = |settings: &Value| -> Result<&'static [&'static str], String> {
        let settings = serde_json::from_value(settings.clone()).map_err(|e| e.to_string())?;
        Ok(gangwarden_core::rules::topology::node_field_masks(&settings))
    };
    let manifests = vec![
        baseline_manifest(&modules["baseline"]),
        listing("bench-baseline-list-nodes", masks(&json!({}))?),
        with_settings(&topology, "bench-topology", &json!({})),
        with_settings(&topology, "bench-topology-no-lookup", &json!({"checkNodeLabels": false})),
        // What the capacity rules' masks (taints, allocatable) cost policy-server: the list
        // call and the policy with them off, labels alone.
        listing("bench-baseline-list-node-labels", masks(&off)?),
        with_settings(&topology, "bench-topology-capacity-off", &off),
    ];
    let nodes = payloads::cluster_nodes(FLOOR_NODES);
    let cluster = MemoryCluster::new(nodes.clone());
    let base_allowed = host_allowed(baseline_host, &base_payload, MemoryCluster::default(), "the baseline")?;
    let spec = |name: &str, manifest: &Value, request: &Value, allowed: bool| -> Result<Spec, String> {
        Ok(Spec {
            name: name.to_string(),
            bytes: base_payload.len(),
            entry: entry_id(manifest)?,
            request: request.clone(),
            allowed,
            baseline_entry: entry_id(&manifests[0])?,
            baseline_request: base["request"].clone(),
            baseline_allowed: base_allowed,
        })
    };
    let request = |p: &[u8]| -> Result<Value, String> {
        Ok(serde_json::from_slice::<Value>(p).map_err(|e| e.to_string())?["request"].clone())
    };
    let no_lookup = payload(json!({"checkNodeLabels": false}));
    let capacity_off = payload(off.clone());
    let job = |pods: usize| payloads::validate_payload("CREATE", &payloads::capacity_job(pods), None, &json!({}));
    let (fits, never) = (job(4), job(64));
    let specs = vec![
        spec(
            &format!("baseline, listing the {FLOOR_NODES} Nodes as topology does, answer unread"),
            &manifests[1],
            &base["request"],
            base_allowed,
        )?,
        spec(
            "topology, PodGroup, checkNodeLabels off (no lookup)",
            &manifests[3],
            &request(&no_lookup)?,
            host_allowed(topology_host, &no_lookup, cluster.clone(), "topology without the lookup")?,
        )?,
        spec(
            &format!("topology, PodGroup, {FLOOR_NODES} Nodes"),
            &manifests[2],
            &request(&with_lookup)?,
            host_allowed(topology_host, &with_lookup, cluster.clone(), "topology")?,
        )?,
        spec(
            &format!("baseline, listing the {FLOOR_NODES} Nodes' labels alone (capacityCheck off), answer unread"),
            &manifests[4],
            &base["request"],
            base_allowed,
        )?,
        spec(
            &format!("topology, PodGroup, capacityCheck off (labels alone), {FLOOR_NODES} Nodes"),
            &manifests[5],
            &request(&capacity_off)?,
            host_allowed(topology_host, &capacity_off, cluster.clone(), "topology, capacity off")?,
        )?,
        spec(
            &format!("topology, Job gang of 4 pods of 8 GPUs (capacity: fits a rack), {FLOOR_NODES} Nodes"),
            &manifests[2],
            &request(&fits)?,
            host_allowed(topology_host, &fits, cluster.clone(), "topology, a gang that fits")?,
        )?,
        spec(
            &format!(
                "topology, Job gang of 64 pods of 8 GPUs (capacity: every Node read, warned), {FLOOR_NODES} Nodes"
            ),
            &manifests[2],
            &request(&never)?,
            host_allowed(topology_host, &never, cluster, "topology, a gang that never fits")?,
        )?,
    ];
    serve(args, &manifests, modules, nodes, &specs)
}

/// The floor measurement's table.
fn floor_table(floor: &Served, args: &Args) -> String {
    let mut out = format!(
        "\nThe Node lookup at cluster scale: a second policy-server process, its test API server holding \
         {FLOOR_NODES} Nodes as a kubelet and a cloud provider write them (`gangwarden_test_apiserver::realistic_node`, about 4 KB \
         each), measured as above ({} rounds of {} s, {} connections). The baseline rows make the topology \
         policy's list call (`listNodes`: every Node, no selector, the same field masks) and drop \
         the answer unread: that is policy-server's own work on the call (copying its watch-fed store, pruning \
         and serializing it, handing it to the guest), the floor under any policy that lists Nodes.\n\n\
         | request | policy req/s | baseline req/s | ratio | median ms | p99 ms |\n|---|---|---|---|---|---|\n",
        args.rounds, args.seconds, args.connections
    );
    for m in &floor.measured {
        out.push_str(&format!(
            "| {} | {:.0} | {:.0} | {:.2} | {:.2} ({:.2}) | {:.2} |\n",
            m.name,
            m.policy_rate,
            m.baseline_rate,
            m.policy_rate / m.baseline_rate,
            m.median_ms,
            m.baseline_median_ms,
            m.p99_ms
        ));
    }
    out.push_str(&format!(
        "\npolicy-server answers every call from its watch-fed stores: the test API server answered {} lists and {} \
         watches in all. Its resident memory with the {FLOOR_NODES} Nodes: {:.0} MiB after the warm-up, {:.0} MiB at \
         the end.\n",
        floor.lists,
        floor.watches,
        floor.rss_warm as f64 / 1024.0,
        floor.rss_end as f64 / 1024.0
    ));
    out
}

/// The Job controller's pair (issue 40) against its target: at or above the baseline's
/// throughput, within the noise margin.
fn at_baseline_lines(measured: &[Measured]) -> String {
    let noise = payloads::AT_BASELINE_NOISE;
    let mut out = format!(
        "\nThe Job controller's basic Workload and PodGroup (one of each per Job from Kubernetes 1.38; at admission \
         and in the audit scanner's shape), target: throughput at or above the baseline's, within {:.0}% noise.\n\n",
        noise * 100.0
    );
    for m in measured.iter().filter(|m| payloads::AT_BASELINE_ROWS.contains(&m.name.as_str())) {
        let ratio = m.policy_rate / m.baseline_rate;
        let met = if ratio >= 1.0 - noise { "met" } else { "**NOT met**" };
        out.push_str(&format!("- {}: {ratio:.2} of the baseline's throughput: {met}\n", m.name));
    }
    out
}

/// Runs every scenario; `Ok(false)` when `args.check` is set and a policy falls below its bar.
pub fn run(args: &Args) -> Result<bool, String> {
    // kwctl annotates the modules policy-server loads.
    let Some(kwctl) = needed_tool("policy-server bench", "KWCTL", "kwctl")? else { return Ok(true) };
    if needed_tool("policy-server bench", "POLICY_SERVER", "policy-server")?.is_none() {
        return Ok(true);
    }
    let root = repo_root();
    let baseline_dir = root.join("e2e-tests").join("baseline-policy");
    let tmp = TempDir::new("gangwarden-policy-server-bench")?;
    let mut policies = project_policies();
    policies.push(("baseline", baseline_dir.clone()));
    let modules = annotate_all(&kwctl, &policies, tmp.path())?;

    // One entry per (policy, settings) the scenarios use, with exactly those settings.
    let mut scenarios = payloads::request_scenarios();
    // The queue rows (issue 42): a labelled Job whose ClusterQueue is in a cohort, and the same
    // Job unlabelled.
    let (labelled, unlabelled) = payloads::queue_scenarios();
    let queue_names = (labelled.name.clone(), unlabelled.name.clone());
    scenarios.extend([labelled, unlabelled]);
    let mut manifests = vec![baseline_manifest(&modules["baseline"])];
    let mut entries: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut requests = Vec::new();
    for s in &scenarios {
        let payload: Value = serde_json::from_slice(&s.payload).map_err(|e| format!("{}: {e}", s.name))?;
        let settings = &payload["settings"];
        let key = (s.policy.to_string(), settings.to_string());
        if !entries.contains_key(&key) {
            let name = format!("bench-{}-{}", s.policy, entries.len());
            let manifest = with_settings(&read_manifest(&deploy_manifest(s.policy))?, &name, settings);
            entries.insert(key.clone(), entry_id(&manifest)?);
            manifests.push(manifest);
        }
        requests.push((entries[&key].clone(), payload["request"].clone()));
    }
    let baseline_entry = entry_id(&manifests[0])?;

    // What the project's host answers, which every policy-server answer must match.
    let baseline_host = Policy::load("baseline", &baseline_dir)?;
    let mut hosts: BTreeMap<&str, Policy> = BTreeMap::new();
    for (name, dir) in POLICIES {
        if scenarios.iter().any(|s| s.policy == *name) {
            hosts.insert(name, Policy::load(name, &root.join(dir))?);
        }
    }

    let objects = bench_cluster();
    let cluster = MemoryCluster::new(objects.clone());
    let mut specs = Vec::new();
    for (s, (entry, request)) in scenarios.iter().zip(requests) {
        let base_payload = payloads::baseline_request(s);
        let base: Value = serde_json::from_slice(&base_payload).map_err(|e| e.to_string())?;
        specs.push(Spec {
            name: s.name.clone(),
            bytes: s.payload.len(),
            entry,
            request,
            allowed: host_allowed(&hosts[s.policy], &s.payload, cluster.clone(), &s.name)?,
            baseline_entry: baseline_entry.clone(),
            baseline_request: base["request"].clone(),
            baseline_allowed: host_allowed(&baseline_host, &base_payload, MemoryCluster::default(), "the baseline")?,
        });
    }
    let everyday = serve(args, &manifests, &modules, objects, &specs)?;
    let floor = node_floor(args, &modules, &baseline_host, &hosts["topology"])?;
    let (measured, rss_warm, rss_end) = (everyday.measured, everyday.rss_warm, everyday.rss_end);

    let mut out = format!(
        "Measured by `make bench` (`policy-server-bench`): one policy-server 1.35 process (default worker count, \
         log level warn) serving every module and the baseline, its lookups answered by the test API server holding \
         the {} everyday Nodes, the claim template and claim the requests name with their DeviceClasses, and the queue rows' ClusterQueues. Per row, {} rounds of {} s for the baseline and {} s for the policy (the order swaps \
         every round) over {} keep-alive connections from a load generator on the same {}-core machine; every \
         answer's `allowed` is checked against the project's own host. Medians over the rounds; latency is the \
         policy's (the baseline's median in parentheses). The baseline is the trivial policy \
         (`e2e-tests/baseline-policy`) sent a Pod payload of the same size, or the very request for the Job \
         controller's pair. `--check` fails when a policy's \
         throughput is below a third of the baseline's (the labelled Job of the queue row: of the unlabelled Job's, \
         since its three lists are its cost by design): a loose CI bar, not a target.\n\n\
         | scenario | bytes | policy req/s | baseline req/s | ratio | median ms | p99 ms |\n|---|---|---|---|---|---|---|\n",
        payloads::everyday_nodes().len(),
        args.rounds,
        args.seconds,
        args.seconds,
        args.connections,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let rate = |name: &str| measured.iter().find(|m| m.name == name).map(|m| m.policy_rate);
    let mut below = Vec::new();
    for m in &measured {
        let ratio = m.policy_rate / m.baseline_rate;
        // The queue row's cost is its three lists by design: it is held to the same Job
        // unlabelled (itself held to the baseline), not to the trivial policy.
        let (against, what) = match rate(&queue_names.1) {
            Some(unlabelled) if m.name == queue_names.0 => (unlabelled, "the unlabelled Job's"),
            _ => (m.baseline_rate, "the baseline's"),
        };
        if m.policy_rate / against < CHECK_SHARE {
            below.push(format!("{}: {:.0} req/s < a third of {what} {against:.0}", m.name, m.policy_rate));
        }
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {ratio:.2} | {:.2} ({:.2}) | {:.2} |\n",
            m.name, m.bytes, m.policy_rate, m.baseline_rate, m.median_ms, m.baseline_median_ms, m.p99_ms
        ));
    }
    if let (Some(l), Some(u)) = (rate(&queue_names.0), rate(&queue_names.1)) {
        out.push_str(&format!(
            "\nThe queue check: the labelled Job is served at {:.2} of the unlabelled Job's throughput.\n",
            l / u
        ));
    }
    out.push_str(&at_baseline_lines(&measured));
    // Run once policy-server has stopped, so the two do not share the cores.
    out.push_str(&crate::kwctl_bench::at_baseline_table(&kwctl, &modules["bundle"], &modules["baseline"], tmp.path())?);
    out.push_str(&format!(
        "\npolicy-server's resident memory: {:.0} MiB after the warm-up ({WARM_UP} requests to each entry), {:.0} MiB \
         at the end.\n",
        rss_warm as f64 / 1024.0,
        rss_end as f64 / 1024.0
    ));
    out.push_str(&floor_table(&floor, args));
    println!("{out}");
    if let Some(file) = &args.write {
        gangwarden_harness::write_between_markers(file, BEGIN, END, &out)?;
    }
    if args.check && !below.is_empty() {
        eprintln!("policy-server bench check failed:");
        for b in &below {
            eprintln!("  {b}");
        }
        return Ok(false);
    }
    Ok(true)
}

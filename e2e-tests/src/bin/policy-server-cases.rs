//! `make e2e-policy-server`: a spread of the e2e cases through the real Kubewarden
//! policy-server, for machines that have it (and kwctl, which annotates the modules).
//!
//! `policy-server-cases run` annotates every module (failing on any warning `kwctl annotate`
//! prints), writes the `policies.yml` the Kubewarden controller would write for `deploy/`
//! (plus one entry per chosen case that has its own settings), starts one test API server
//! holding every chosen case's cluster objects and one policy-server against it, posts each
//! case's AdmissionReview and checks the answer against the case's expectations. Before
//! anything starts, every case runs in the project's own host against the same merged
//! cluster, so a case the merge would change is a selection error, not a policy-server
//! difference; when policy-server's answer fails a case the host passes, both answers are
//! printed. Prints "skipped: …" and exits 0 when kwctl or policy-server is missing
//! (`$KWCTL`, `$POLICY_SERVER`, else on PATH), and fails instead when `CI` is set.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use gangwarden_core::cluster::{MemoryCluster, canonical_api_version};
use gangwarden_harness::case::{Case, check};
use gangwarden_harness::host::{Evaluation, Policy, validate_payload};
use gangwarden_harness::policy_server::{
    GroupExpect, PolicyServer, TempDir, annotate_all, audit_request, context_aware_resources, entry_id,
    expect_from_answer, group_members, judge, judge_group, needed_tool, policies_yml, project_policies, read_manifest,
    with_settings,
};
use gangwarden_harness::{POLICIES, deploy_manifest, metadata, payloads, repo_root};
use gangwarden_test_apiserver::{Call, TestApiServer, namespaced};
use serde_json::{Value, json};

/// The cases sent, `<policy>/<case-stem>` (to that policy's deploy manifest) or
/// `gang-topology-group/<member>/<case-stem>` (the member's case, to the policy group).
///
/// Not eligible, because one policy-server and one test API server serve them all: cases
/// with `clusterError` (the API server cannot fail each lookup with a chosen message),
/// `servedApiVersions` (it serves every version to every case), `nodeSets` (thousands of
/// Nodes would change every other topology case's node count), `rawPayload` (policy-server
/// takes only AdmissionReviews) and `requestError` / `settingsError` expectations
/// (policy-server refuses those before any policy runs: an HTTP error, or no start at all).
/// Cases that share the cluster must agree on it: the topology cases all use the same four
/// `gpu-*` Nodes (a case with other Nodes would change their counts and domains), and most
/// Workload cases name their Workload `ml/train`, so only the gang cases with the same
/// `v1alpha2` one are here.
const CASES: &[&str] = &[
    // gang
    "gang/podgroup-basic-accepted",                       // accepted, nothing looked up
    "gang/podgroup-from-template-accepted",               // accepted after the Workload lookup
    "gang/podgroup-min-count-zero",                       // rejected (the README's example)
    "gang/podgroup-template-policy-mismatch",             // rejected against the Workload the API server serves
    "gang/v1beta1-podgroup-workload-being-deleted",       // v1beta1 Workload with deletionTimestamp, through kube-rs
    "gang/pod-podgroup-missing-warns",                    // warning: the PodGroup lookup is a 404, not an error
    "gang/job-gang-accepted",                             // 1.37 Job
    "gang/job-min-count-above-parallelism",               // 1.37 Job rejected
    "gang/job-owned-by-jobset-warns",                     // 1.37 Job with a warning
    "gang/runtime-volcano-queue-missing-warns",           // Trainer v2: the Volcano Queue lookup is a 404
    "gang/mpijob-v2beta1-custom-scheduler-warns",         // the MPI operator's MPIJob, in its words
    "gang/v1-workload-flat-accepted",                     // Kubernetes 1.38 scheduling.k8s.io/v1
    "gang/v1-podgroup-min-count-zero",                    // v1 rejected
    "gang/v1-job-made-basic-podgroup-not-looked-up",      // the Job controller's PodGroup: no lookup
    "gang/volcano-job-every-field-accepted",              // Volcano's vcjob, every checked field set
    "gang/volcano-job-task-min-available-above-replicas", // vcjob rejected in Volcano's words
    "gang/volcano-job-update-queue-changed",              // vcjob UPDATE: only the counts may change
    "gang/volcano-podgroup-network-topology",             // Volcano's PodGroup rejected
    "gang/pytorchjob-volcano-scheduler-where-volcano-runs-accepted", // schedulerName volcano: the Queue list answers
    // topology
    "topology/cronjob-key-on-nodes-accepted", // accepted after the Node list
    "topology/job-kueue-level-accepted",      // a Kueue level the Nodes carry
    "topology/job-key-on-no-node-rejected",   // rejected, counting the Nodes listed
    "topology/job-topology-key-invalid",      // rejected on syntax alone
    "topology/job-gang-larger-than-every-domain-warns", // warning from the Nodes' domains
    "topology/podgroup-topology-key-required", // PodGroup rejected, nothing looked up
    "topology/trainjob-patch-kueue-slice-larger-than-nodes", // Trainer v2: the runtime, then the Nodes
    "topology/job-capacity-gang-larger-than-cluster-warns", // capacity: Nodes, then DeviceClasses
    "topology/job-capacity-gang-larger-than-cluster-denied", // the same with capacityCheck deny
    "topology/job-capacity-gpu-gang-fits-a-rack-accepted", // a gang that fits: no word
    "topology/job-capacity-pod-larger-than-every-node-warns", // one pod larger than every node
    "topology/pytorchjob-capacity-min-available-warns", // Kubeflow minAvailable
    "topology/trainjob-capacity-num-nodes-warns", // Trainer v2 numNodes: the runtime, Nodes, DeviceClasses
    "topology/mpijob-v2beta1-capacity-gang-larger-than-cluster-warns", // v2beta1 MPIJob minAvailable
    "topology/job-dra-sixteen-gpus-on-eight-gpu-nodes-warns", // DRA: Nodes, the template, ResourceSlices, DeviceClasses
    "topology/job-dra-eight-gpus-per-pod-accepted", // DRA: its feasible twin, no word
    "topology/job-dra-product-no-device-has-denied", // DRA: a selector no device matches, capacityCheck deny
    "topology/job-dra-pool-selected-by-node-selector-accepted", // DRA: a pool reaching rack r1 by nodeSelector
    "topology/job-dra-pool-on-another-rack-warns", // DRA: the same pool, the pod kept on rack r0
    "topology/job-dra-gang-of-five-eight-gpu-pods-warns", // DRA gang: one 8-GPU pod per node, 5 of them
    "topology/job-dra-gang-of-four-eight-gpu-pods-accepted", // its feasible twin, no word
    "topology/job-dra-gang-shares-node-local-claim-warns", // a shared claim of node-local GPUs: one node
    "topology/job-dra-gang-shares-all-nodes-pool-accepted", // its twin: the claim's device reaches every node
    "topology/job-dra-gang-of-300-on-one-claim-warns", // 300 pods on one claim's 256 reservedFor places
    "topology/job-dra-gang-of-300-on-a-group-claim-accepted", // its twin: the Job's group claim
    "topology/mpijob-v2beta1-kueue-level-on-no-node", // v2beta1 MPIJob, a Kueue level on no Node
    "topology/job-queue-accepted",            // Kueue: ClusterQueues, then LocalQueues (all namespaces), fits: no word
    "topology/job-queue-local-queue-missing-warns", // the LocalQueue is not in the job's namespace
    "topology/job-queue-cluster-queue-missing-warns", // the LocalQueue's ClusterQueue is gone
    "topology/job-queue-quota-exceeded-denied", // more than the ClusterQueue's nominal quota, queueCheck deny
    "topology/job-queue-resource-not-covered-warns", // a resource no resource group covers
    "topology/pytorchjob-queue-pod-set-exceeds-warns", // a Kubeflow replica type against its largest flavor
    "topology/job-queue-cohort-quota-exceeded-warns", // a cohort: ClusterQueues, LocalQueues, Cohorts
    "topology/job-queue-cohort-tree-borrowing-limit-warns", // a Cohort tree with a Cohort's borrowingLimit
    "topology/job-queue-group-no-flavor-fits-warns", // each resource fits some flavor, no flavor holds the group
    "topology/trainjob-queue-quota-exceeded-warns", // a TrainJob's pod set, through its runtime's lookup
    "topology/volcano-job-capacity-gang-larger-than-cluster-warns", // Volcano's vcjob: its gang against the Nodes
    "topology/volcano-job-capacity-gang-fits-accepted", // its feasible twin, no word
    "topology/volcano-job-capacity-task-larger-than-every-node-denied", // a task's pod, capacityCheck deny
    "topology/volcano-job-capacity-task-minimum-larger-than-cluster-warns", // a task's own minAvailable
    "topology/volcano-podgroup-capacity-min-resources-larger-than-cluster-warns", // Volcano PodGroup minResources
    "topology/volcano-podgroup-capacity-min-resources-fit-accepted", // its feasible twin, no word
    "topology/volcano-job-queue-capability-exceeded-warns", // Volcano Queues: one list, capability below the gang
    "topology/volcano-job-queue-capability-holds-accepted", // its feasible twin, no word
    "topology/volcano-job-queue-missing-denied", // no such Queue, queueCheck deny
    "topology/pytorchjob-volcano-queue-closed-warns", // a Volcano-scheduled PyTorchJob's Queue is Closed
    "topology/pytorchjob-volcano-queue-open-accepted", // its twin in an Open Queue, no word
    "topology/volcano-podgroup-queue-capability-exceeded-warns", // a Volcano PodGroup's minResources
    // claims
    "claims/podgroup-direct-claim-accepted", // the ResourceClaim exists
    "claims/job-claims-accepted",            // 1.37 Job, its claim template exists
    "claims/podgroup-claim-both-sources",    // rejected
    "claims/podgroup-duplicate-claim-names", // rejected; its claim and template exist
    "claims/pod-podgroup-missing-warns",     // warning: the Pod's PodGroup lookup is a 404
    "claims/job-claims-both-sources",        // 1.37 Job rejected
    "claims/job-claims-not-requested-warns", // 1.37 Job warning, its claim template exists
    "claims/podgroup-claim-template-device-class-missing-warns", // C-16: the DeviceClass list lacks it
    // run-policy (Kubeflow v1 jobs look nothing up; TrainJobs their runtime)
    "run-policy/trainjob-minimal-accepted", // the ClusterTrainingRuntime exists
    "run-policy/trainjob-training-runtime-other-namespace", // rejected: no TrainingRuntime in ml
    "run-policy/trainjob-volcano-priority-class-missing", // rejected: the PriorityClass lookup is a 404
    "run-policy/pytorchjob-minimal-accepted",
    "run-policy/tfjob-minimal-accepted",
    "run-policy/pytorchjob-restart-policy-unknown",   // rejected
    "run-policy/mpijob-launcher-missing",             // rejected
    "run-policy/pytorchjob-without-master-warns",     // warning
    "run-policy/mutate-clean-pod-policy-filled-in",   // mutated: an extra entry with defaultCleanPodPolicy
    "run-policy/mutate-defaulted-exit-code-warns",    // mutated with warnings: defaultRestartPolicy
    "run-policy/mpijob-v2beta1-every-field-accepted", // the MPI operator's MPIJob
    "run-policy/mpijob-v2beta1-launcher-creation-policy-unsupported", // rejected
    "run-policy/mutate-mpijob-v2beta1-no-restart-policy", // mutated: TTL and clean-pod defaults only
    "run-policy/trainjob-num-nodes-negative",         // Trainer v2 numNodes below 0, rejected
    // the bundle
    "bundle/run-policy-warning-in-bundle",               // accepted with a warning
    "bundle/claims-missing-podgroup-warns-per-set",      // accepted, two rule sets warn on one 404
    "bundle/run-policy-and-gang-violations-together",    // rejected by two rule sets
    "bundle/v1beta1-podgroup-violations-from-every-set", // rejected by every rule set
    "bundle/run-policy-defaults-mutate",                 // mutated: an extra entry with runPolicy defaults
    "bundle/runtime-violations-from-every-set",          // a Trainer runtime rejected by three rule sets
    "bundle/capacity-gang-larger-than-cluster-warns",    // capacity with the bundle's defaults
    "bundle/mpijob-v2beta1-violations-from-every-set",   // a v2beta1 MPIJob rejected by three rule sets
    "bundle/queue-quota-exceeded-denied",                // the queue check with topology.queueCheck deny
    "bundle/volcano-job-rejected-by-gang-alone",         // a vcjob: the gang rule set alone reads it
    // the gang-topology policy group
    "gang-topology-group/gang/podgroup-basic-accepted", // both members accept
    "gang-topology-group/gang/podgroup-min-count-zero", // gang rejects: topology is never called
    "gang-topology-group/topology/job-key-on-no-node-rejected", // gang accepts, topology rejects
    "gang-topology-group/topology/job-gang-larger-than-every-domain-warns", // accepted; the warning is dropped
];

/// Where a case is sent.
enum Target {
    /// A policy entry (the deploy manifest's, or the case's own with its settings).
    Policy { entry: String, settings: Value },
    /// The policy group; the case is its member `Chosen::policy`'s.
    Group { entry: String },
}

struct Chosen {
    label: String,
    policy: &'static str,
    stem: String,
    case: Case,
    target: Target,
}

fn policy_name(name: &str) -> Result<&'static str, String> {
    POLICIES.iter().map(|(n, _)| *n).find(|n| *n == name).ok_or(format!("unknown policy {name:?}"))
}

/// Why a case cannot run here, if it cannot.
fn ineligible(case: &Case) -> Option<&'static str> {
    let expect = case.expect.as_ref()?;
    if case.cluster_error.is_some() {
        Some("clusterError")
    } else if case.raw_payload.is_some() {
        Some("rawPayload")
    } else if case.served_api_versions.is_some() {
        Some("servedApiVersions")
    } else if !case.node_sets.is_empty() {
        Some("nodeSets")
    } else if expect.request_error.is_some() {
        Some("requestError")
    } else if expect.settings_error.is_some() {
        Some("settingsError")
    } else {
        None
    }
}

/// The deploy manifests: each policy's (protect mode) and the policy group's.
struct Manifests {
    policies: BTreeMap<&'static str, Value>,
    group: Value,
}

impl Manifests {
    fn load() -> Result<Manifests, String> {
        let mut policies = BTreeMap::new();
        for (name, _) in POLICIES {
            policies.insert(*name, read_manifest(&deploy_manifest(name))?);
        }
        let group = read_manifest(&metadata::deploy_file(metadata::GROUP_STEM, "protect"))?;
        Ok(Manifests { policies, group })
    }
}

/// Reads the chosen cases; cases with settings of their own get an extra manifest (a copy
/// of their policy's under `<name>-<stem>`), pushed onto `extra`.
fn choose(manifests: &Manifests, extra: &mut Vec<Value>) -> Result<Vec<Chosen>, String> {
    let group_entry = entry_id(&manifests.group)?;
    let mut chosen = Vec::new();
    for label in CASES {
        let parts: Vec<&str> = label.split('/').collect();
        let (group, policy, stem) = match parts.as_slice() {
            [policy, stem] => (false, policy_name(policy)?, stem.to_string()),
            [group, member, stem] if *group == metadata::GROUP_STEM => (true, policy_name(member)?, stem.to_string()),
            _ => return Err(format!("{label}: not <policy>/<case> or {}/<member>/<case>", metadata::GROUP_STEM)),
        };
        let path = repo_root().join("e2e-tests/cases").join(policy).join(format!("{stem}.yaml"));
        let case = Case::load(&path)?;
        if case.expect.is_none() {
            return Err(format!("{label}: the case has no expect"));
        }
        if let Some(why) = ineligible(&case) {
            return Err(format!("{label}: a case with {why} cannot run through policy-server here"));
        }
        let manifest = &manifests.policies[policy];
        let target = if group {
            if !case.settings.is_null() {
                return Err(format!("{label}: a group case must use the group's settings (no `settings`)"));
            }
            Target::Group { entry: group_entry.clone() }
        } else if case.settings.is_null() {
            Target::Policy { entry: entry_id(manifest)?, settings: manifest["spec"]["settings"].clone() }
        } else {
            let name = format!("{}-{stem}", manifest["metadata"]["name"].as_str().unwrap_or(policy));
            let copy = with_settings(manifest, &name, &case.settings);
            let entry = entry_id(&copy)?;
            extra.push(copy);
            Target::Policy { entry, settings: case.settings.clone() }
        };
        chosen.push(Chosen { label: label.to_string(), policy, stem, case, target });
    }
    Ok(chosen)
}

/// Which object an object is: (storage apiVersion, kind, namespace, name).
type ObjectKey = (String, String, Option<String>, String);

/// Every chosen case's cluster objects, each once. The same apiVersion (Workload and PodGroup
/// in `v1beta1` and `v1alpha3` are one), kind, namespace and name with different content in
/// two cases is an error naming both.
fn merge_clusters(chosen: &[Chosen]) -> Result<Vec<Value>, String> {
    let mut seen: BTreeMap<ObjectKey, (&str, &Value)> = BTreeMap::new();
    let mut objects = Vec::new();
    for c in chosen {
        for object in &c.case.cluster {
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let kind = object["kind"].as_str().unwrap_or_default();
            let stored =
                if matches!(kind, "Workload" | "PodGroup") { canonical_api_version(api_version) } else { api_version };
            let namespace = namespaced(api_version, kind)
                .then(|| object["metadata"]["namespace"].as_str().unwrap_or("default").to_string());
            let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let key = (stored.to_string(), kind.to_string(), namespace, name);
            match seen.get(&key) {
                Some((_, same)) if *same == object => {}
                Some((other, _)) => {
                    return Err(format!(
                        "{} and {other} both hold {api_version} {kind} {:?}{}, differently",
                        c.label,
                        key.3,
                        key.2.as_ref().map_or(String::new(), |ns| format!(" in namespace {ns:?}"))
                    ));
                }
                None => {
                    seen.insert(key, (c.label.as_str(), object));
                    objects.push(object.clone());
                }
            }
        }
    }
    Ok(objects)
}

/// What the project's host answers, and what policy-server must answer.
enum Expected {
    Policy { host: Value },
    Group { expect: GroupExpect, host: Vec<(String, Value)> },
}

/// One evaluation in the project's host with `settings` against `cluster`, after checking
/// the settings as policy-server does at start-up.
fn host_evaluation(
    policy: &Policy,
    request: &Value,
    settings: &Value,
    cluster: &MemoryCluster,
) -> Result<Evaluation, String> {
    let settings_payload = serde_json::to_vec(settings).map_err(|e| e.to_string())?;
    let valid = policy.call("validate_settings", &settings_payload, MemoryCluster::default())?.answer?;
    if valid["valid"] != true {
        return Err(format!("the settings {settings} are refused: {valid}"));
    }
    policy.call("validate", &validate_payload(request, settings)?, cluster.clone())
}

/// Runs every case in the project's host against the merged cluster and checks it there; for
/// a group case, also the other members, which make up the group's expected answer.
fn expectations(chosen: &[Chosen], manifests: &Manifests, cluster: &MemoryCluster) -> Result<Vec<Expected>, String> {
    let root = repo_root();
    let mut hosts: BTreeMap<&str, Policy> = BTreeMap::new();
    for (name, dir) in POLICIES {
        if chosen.iter().any(|c| c.policy == *name) || (metadata::GROUP_MEMBERS.iter().any(|(_, p)| p == name)) {
            hosts.insert(name, Policy::load(name, &root.join(dir))?);
        }
    }
    let group_spec = &manifests.group["spec"];
    let members = group_members(group_spec["expression"].as_str().unwrap_or_default())?;
    let mut out = Vec::new();
    for c in chosen {
        let request = c.case.admission_request(&c.stem);
        let expect = c.case.expect.clone().ok_or(format!("{}: no expect", c.label))?;
        let fail = |e: String| format!("{}: in the project's host, against the merged cluster: {e}", c.label);
        match &c.target {
            Target::Policy { settings, .. } => {
                let evaluation = host_evaluation(&hosts[c.policy], &request, settings, cluster).map_err(fail)?;
                check(&expect, &evaluation).map_err(fail)?;
                out.push(Expected::Policy { host: evaluation.answer.map_err(fail)? });
            }
            Target::Group { .. } => {
                let mut expected = Vec::new();
                let mut host = Vec::new();
                for member in &members {
                    let (_, policy) = metadata::GROUP_MEMBERS
                        .iter()
                        .find(|(m, _)| m == member)
                        .ok_or(format!("group member {member} is not in metadata::GROUP_MEMBERS"))?;
                    let settings = &group_spec["policies"][member]["settings"];
                    let evaluation = host_evaluation(&hosts[*policy], &request, settings, cluster).map_err(fail)?;
                    if *policy == c.policy {
                        check(&expect, &evaluation).map_err(fail)?;
                    }
                    let answer = evaluation.answer.map_err(fail)?;
                    if *policy == c.policy {
                        expected.push((member.clone(), expect.clone()));
                    } else {
                        expected.push((member.clone(), expect_from_answer(&answer)));
                    }
                    host.push((member.clone(), answer));
                }
                let message = group_spec["message"].as_str().unwrap_or_default().to_string();
                out.push(Expected::Group { expect: GroupExpect { message, members: expected }, host });
            }
        }
    }
    Ok(out)
}

fn run(verbose: bool) -> Result<bool, String> {
    // kwctl annotates the modules policy-server loads.
    let Some(kwctl) = needed_tool("e2e-policy-server", "KWCTL", "kwctl")? else { return Ok(true) };
    if needed_tool("e2e-policy-server", "POLICY_SERVER", "policy-server")?.is_none() {
        return Ok(true);
    }
    let started = Instant::now();
    let manifests = Manifests::load()?;
    let mut extra = Vec::new();
    let chosen = choose(&manifests, &mut extra)?;
    let objects = merge_clusters(&chosen)?;
    let expected = expectations(&chosen, &manifests, &MemoryCluster::new(objects.clone()))?;
    println!(
        "{} cases pass in the project's host against the merged cluster of {} objects",
        chosen.len(),
        objects.len()
    );

    let tmp = TempDir::new("gangwarden-policy-server-cases")?;
    let modules = annotate_all(&kwctl, &project_policies(), tmp.path())?;
    let mut all: Vec<Value> = manifests.policies.values().cloned().collect();
    all.push(manifests.group.clone());
    all.extend(extra);
    let yml = policies_yml(&all, &modules)?;
    let apiserver = TestApiServer::start_with(objects, None, context_aware_resources(&all))
        .map_err(|e| format!("the test API server does not start: {e}"))?;
    let kubeconfig: PathBuf = tmp.path().join("kubeconfig");
    apiserver.write_kubeconfig(&kubeconfig).map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    let mut server = PolicyServer::start(&yml, Some(&kubeconfig))?;
    println!(
        "policy-server ready after {:.1} s with {} entries (annotating and checking in the host took {:.1} s before)",
        server.ready_after.as_secs_f64(),
        yml.as_object().map_or(0, |m| m.len()),
        started.elapsed().saturating_sub(server.ready_after).as_secs_f64()
    );

    let (mut passed, mut failed) = (0, 0);
    let cases_started = Instant::now();
    for (c, expected) in chosen.iter().zip(&expected) {
        let request = c.case.admission_request(&c.stem);
        let expect = c.case.expect.as_ref().ok_or("no expect")?;
        let entry = match &c.target {
            Target::Policy { entry, .. } | Target::Group { entry } => entry,
        };
        let t = Instant::now();
        let review = server.validate(entry, &request);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let verdict = review.as_ref().map_err(String::clone).and_then(|review| match expected {
            Expected::Policy { .. } => judge(expect, &request, review),
            Expected::Group { expect, .. } => judge_group(expect, &request, review),
        });
        match verdict {
            Ok(()) => {
                passed += 1;
                println!("PASSED {} ({ms:.0} ms, {entry})", c.label);
                if verbose && let Ok(review) = &review {
                    println!("  {}", review["response"]);
                }
            }
            Err(e) => {
                failed += 1;
                let host = match expected {
                    Expected::Policy { host } => format!("{host:#}"),
                    Expected::Group { host, .. } => {
                        format!("{:#}", json!(host.iter().cloned().collect::<BTreeMap<_, _>>()))
                    }
                };
                let answer = review.map_or_else(|e| e, |r| format!("{:#}", r["response"]));
                println!(
                    "FAILED {} ({ms:.0} ms, {entry})\n{e}\nthe project's host answered (and passes the case): {host}\npolicy-server answered: {answer}\n",
                    c.label
                );
                if !server.alive() {
                    println!("policy-server is no longer running:\n{}", server.log_tail(40));
                    break;
                }
            }
        }
    }
    match audit_as_validate(&server, &manifests) {
        Ok(summary) => {
            passed += 1;
            println!("PASSED audit: {summary}");
        }
        Err(e) => {
            failed += 1;
            println!("FAILED audit: {e}");
        }
    }
    match job_made_pair_audit(&server, &manifests) {
        Ok(summary) => {
            passed += 1;
            println!("PASSED audit of the Job-made pair: {summary}");
        }
        Err(e) => {
            failed += 1;
            println!("FAILED audit of the Job-made pair: {e}");
        }
    }
    match made_up_keys(&server, &apiserver, &manifests) {
        Ok(summary) => {
            passed += 1;
            println!("PASSED {MADE_UP_KEYS} made-up topology keys: {summary}");
        }
        Err(e) => {
            failed += 1;
            println!("FAILED {MADE_UP_KEYS} made-up topology keys: {e}");
        }
    }
    println!(
        "{} cases in {:.1} s, {:.1} s in all; the test API server answered {:?}",
        chosen.len(),
        cases_started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64(),
        apiserver.counts()
    );
    println!("policy-server: {passed} passed, {failed} failed");
    Ok(failed == 0 && passed == chosen.len() + 3)
}

/// Every example of `examples/` as the audit scanner sends an existing object, to each
/// policy's `/audit/<id>`: the verdict (allowed, message, warnings) must be `/validate`'s for
/// the same request, whatever `resource.resource` (the Kind) and the empty `userInfo` say.
fn audit_as_validate(server: &PolicyServer, manifests: &Manifests) -> Result<String, String> {
    let dir = repo_root().join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let verdict = |review: &Value| {
        let r = &review["response"];
        (r["allowed"].clone(), r["status"]["message"].clone(), r["warnings"].clone())
    };
    let (mut sent, mut rejected) = (0, 0);
    for file in &files {
        let case = Case::load(file)?;
        let object = case.object.clone().or_else(|| case.request.as_ref().map(|r| r["object"].clone()));
        let Some(object) = object.filter(Value::is_object) else { continue };
        let request = audit_request(&object);
        for manifest in manifests.policies.values() {
            let entry = entry_id(manifest)?;
            let (audit, validate) = (server.audit(&entry, &request)?, server.validate(&entry, &request)?);
            if verdict(&audit) != verdict(&validate) {
                return Err(format!(
                    "{} through {entry}: /audit answered {} but /validate {}",
                    file.display(),
                    audit["response"],
                    validate["response"]
                ));
            }
            sent += 1;
            rejected += usize::from(audit["response"]["allowed"] == false);
        }
    }
    Ok(format!(
        "{sent} audit requests (every example through each policy): each answered as /validate answers it ({rejected} rejections)"
    ))
}

/// The basic Workload and PodGroup the Job controller makes for every Job (Kubernetes 1.38), as
/// the audit scanner reads them back from the cluster and sends them, to every policy's
/// `/audit/<id>`: each is accepted without a warning, as at admission (that no lookup is made
/// for them, so none can fail, is the e2e cases' `audit-job-made-*`, with every lookup failing).
fn job_made_pair_audit(server: &PolicyServer, manifests: &Manifests) -> Result<String, String> {
    let (workload, pod_group) = payloads::job_made_basic_pair_as_stored();
    let mut sent = 0;
    for object in [workload, pod_group] {
        let request = audit_request(&object);
        for manifest in manifests.policies.values() {
            let entry = entry_id(manifest)?;
            let response = &server.audit(&entry, &request)?["response"];
            let quiet = response["warnings"].is_null() || response["warnings"] == json!([]);
            if response["allowed"] != true || !quiet {
                return Err(format!("{} through {entry}: /audit answered {response}", object["kind"]));
            }
            sent += 1;
        }
    }
    Ok(format!(
        "{sent} audit requests (the basic Workload and PodGroup through each policy): each accepted without a warning"
    ))
}

/// How many objects with distinct made-up topology keys [`made_up_keys`] sends.
const MADE_UP_KEYS: usize = 200;

/// The Node queries the test API server was asked to watch: (labelSelector, fieldSelector).
fn node_watches(apiserver: &TestApiServer) -> Vec<(String, String)> {
    let param = |query: &str, name: &str| {
        query.split('&').find_map(|p| p.strip_prefix(name)?.strip_prefix('=')).unwrap_or_default().to_string()
    };
    apiserver
        .requests()
        .iter()
        .filter(|r| r.call == Call::Watch && r.path == "/api/v1/nodes")
        .map(|r| (param(&r.query, "labelSelector"), param(&r.query, "fieldSelector")))
        .collect()
}

/// Objects naming 200 distinct made-up topology keys, sent to the topology policy and the
/// bundle (their deploy manifests): each is rejected for its key, and policy-server watches
/// the Nodes through one query, with no selector, however many keys it is asked about.
fn made_up_keys(server: &PolicyServer, apiserver: &TestApiServer, manifests: &Manifests) -> Result<String, String> {
    let entries = [entry_id(&manifests.policies["topology"])?, entry_id(&manifests.policies["bundle"])?];
    let before = node_watches(apiserver).len();
    for i in 0..MADE_UP_KEYS {
        let object = payloads::object_with_made_up_key(i);
        let request = gangwarden_core::request::admission_request(&format!("made-up-{i}"), "CREATE", &object, None);
        let key = payloads::made_up_key(i);
        for entry in &entries {
            let review = server.validate(entry, &request)?;
            let message = review["response"]["status"]["message"].as_str().unwrap_or_default();
            if review["response"]["allowed"] != false
                || !message.contains(&format!("no node carries the label \"{key}\""))
            {
                return Err(format!("{entry} did not reject {key}: {}", review["response"]));
            }
        }
    }
    let watches = node_watches(apiserver);
    let distinct: std::collections::BTreeSet<&(String, String)> = watches.iter().collect();
    if distinct.len() != 1 || distinct.iter().any(|(labels, fields)| !labels.is_empty() || !fields.is_empty()) {
        return Err(format!("policy-server watched the Nodes with {distinct:?}; expected one query, no selector"));
    }
    if watches.len() > before.max(1) {
        return Err(format!("the Node watches grew from {before} to {} while the keys were sent", watches.len()));
    }
    Ok(format!(
        "{} rejections, {} Node watch (one query, no selector), {} Node lists",
        2 * MADE_UP_KEYS,
        watches.len(),
        apiserver.requests().iter().filter(|r| r.call == Call::List && r.path == "/api/v1/nodes").count()
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["run"] => false,
        ["run", "--verbose"] => true,
        _ => {
            eprintln!("usage: policy-server-cases run [--verbose]  (--verbose prints every answer)");
            return ExitCode::from(2);
        }
    };
    match run(verbose) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("policy-server-cases: {e}");
            ExitCode::FAILURE
        }
    }
}

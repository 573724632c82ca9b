//! Properties over generated objects: valid objects pass every policy, defaulting is
//! idempotent, the bundle says what the four rule sets say together, and the built bundle
//! module answers exactly what the native core answers.

use std::sync::OnceLock;

use gangwarden_core::cluster::MemoryCluster;
use gangwarden_core::engine::{Response, evaluate};
use gangwarden_core::request::admission_request;
use gangwarden_core::rules::bundle::Bundle;
use gangwarden_core::rules::claims::Claims;
use gangwarden_core::rules::gang::Gang;
use gangwarden_core::rules::run_policy::RunPolicyRules;
use gangwarden_core::rules::topology::Topology;
use gangwarden_harness::host::Policy;
use gangwarden_harness::repo_root;
use proptest::prelude::*;
use serde_json::{Value, json};

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,10}[a-z0-9]"
}

fn claim() -> impl Strategy<Value = Value> {
    (name(), name(), any::<bool>()).prop_map(|(name, source, template)| {
        if template {
            json!({"name": name, "resourceClaimTemplateName": source})
        } else {
            json!({"name": name, "resourceClaimName": source})
        }
    })
}

/// Claims with distinct names, at most 4.
fn claims() -> impl Strategy<Value = Vec<Value>> {
    proptest::collection::vec(claim(), 0..=4).prop_map(|mut claims| {
        let mut seen = std::collections::HashSet::new();
        claims.retain(|c| seen.insert(c["name"].as_str().unwrap_or_default().to_string()));
        claims
    })
}

fn policy() -> impl Strategy<Value = Value> {
    prop_oneof![Just(json!({"basic": {}})), (1..=64i32).prop_map(|n| json!({"gang": {"minCount": n}}))]
}

/// A valid v1alpha2 PodGroup.
fn pod_group() -> impl Strategy<Value = Value> {
    (name(), policy(), claims()).prop_map(|(name, policy, claims)| {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
               "metadata": {"name": name, "namespace": "ml"},
               "spec": {"schedulingPolicy": policy, "resourceClaims": claims}})
    })
}

/// A valid v1alpha2 Workload: 1-8 templates with distinct names.
fn workload() -> impl Strategy<Value = Value> {
    (name(), proptest::collection::btree_map(name(), policy(), 1..=8)).prop_map(|(name, templates)| {
        let templates: Vec<Value> =
            templates.into_iter().map(|(n, p)| json!({"name": n, "schedulingPolicy": p})).collect();
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
               "metadata": {"name": name, "namespace": "ml"}, "spec": {"podGroupTemplates": templates}})
    })
}

fn replica(replicas: i32, restart: Option<&'static str>) -> Value {
    let mut spec = json!({"replicas": replicas,
        "template": {"spec": {"containers": [{"name": "pytorch", "image": "registry.example.com/train:1"}]}}});
    if let Some(r) = restart {
        spec["restartPolicy"] = json!(r);
    }
    spec
}

/// A valid PyTorchJob: one Master and 0-16 Workers, restart policies set or not.
fn pytorch_job() -> impl Strategy<Value = Value> {
    let restart = proptest::option::of(prop_oneof![Just("OnFailure"), Just("Never"), Just("Always"), Just("ExitCode")]);
    (name(), 0..=16i32, restart.clone(), restart).prop_map(|(name, workers, master_restart, worker_restart)| {
        let mut specs = json!({"Master": replica(1, master_restart)});
        if workers > 0 {
            specs["Worker"] = replica(workers, worker_restart);
        }
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
               "metadata": {"name": name, "namespace": "ml"}, "spec": {"pytorchReplicaSpecs": specs}})
    })
}

/// One Volcano task as its generator draws it: replicas, `minAvailable`, a partition policy
/// (total partitions, size, minimum partitions), and which earlier tasks it waits on.
type VolcanoTask = (i32, Option<i32>, Option<(i32, i32, i32)>, Vec<bool>);

fn volcano_task() -> impl Strategy<Value = VolcanoTask> {
    (
        0..=6i32,
        proptest::option::of(0..=6i32),
        proptest::option::of((1..=3i32, 1..=3i32, 0..=3i32)),
        proptest::collection::vec(any::<bool>(), 4),
    )
}

/// A Volcano Job that Volcano's webhook (v1.15.1 `validateJobCreate`) accepts, as a user
/// writes it (`defaulted` false: queue, task names and `minAvailable`s left to Volcano's
/// mutating webhook) or as that webhook leaves it (every default written out).
fn volcano_job() -> impl Strategy<Value = Value> {
    let events = proptest::sample::subsequence(
        vec!["PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated"],
        0..=3,
    );
    let action = prop_oneof![
        Just("AbortJob"),
        Just("RestartJob"),
        Just("RestartTask"),
        Just("RestartPod"),
        Just("TerminateJob"),
        Just("CompleteJob")
    ];
    let plugins = proptest::sample::subsequence(vec!["ssh", "env", "svc", "mpi", "pytorch"], 0..=3);
    let topology = proptest::option::of((any::<bool>(), proptest::option::of(0..=3i32)));
    (
        (name(), proptest::collection::vec(volcano_task(), 1..=4), proptest::collection::vec(name(), 4), any::<bool>()),
        (events, action, proptest::collection::vec(1..=255i32, 0..=2), plugins, topology, proptest::option::of(0..=24i32)),
    )
        .prop_map(|((job, drawn, names, defaulted), (events, action, exit_codes, plugins, topology, min))| {
            // Distinct task names that Volcano's default names (`default<i>`) cannot meet.
            let mut seen = std::collections::HashSet::new();
            let names: Vec<String> = names
                .into_iter()
                .enumerate()
                .map(|(i, n)| if n.starts_with("default") || !seen.insert(n.clone()) { format!("t{i}") } else { n })
                .collect();
            let named = |i: usize| -> String { if defaulted || i.is_multiple_of(2) { names[i].clone() } else { format!("default{i}") } };
            let mut tasks = Vec::new();
            let mut total = 0;
            let mut sum_min = 0;
            for (i, (replicas, min_available, partition, waits)) in drawn.iter().enumerate() {
                let mut task = json!({"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}});
                if defaulted || i.is_multiple_of(2) {
                    task["name"] = json!(names[i]);
                }
                let mut replicas = *replicas;
                let mut min = min_available.map(|m| m.min(replicas));
                if let Some((parts, size, min_parts)) = partition {
                    replicas = parts * size;
                    let min_parts = (*min_parts).min(*parts);
                    task["replicas"] = json!(replicas);
                    task["partitionPolicy"] = json!({"totalPartitions": parts, "partitionSize": size, "minPartitions": min_parts});
                    min = if min_parts > 0 { min.map(|_| min_parts * size) } else { min.map(|m| m.min(replicas)) };
                    if defaulted && min.is_none() {
                        min = Some(if min_parts > 0 { min_parts * size } else { replicas });
                    }
                }
                if defaulted && min.is_none() {
                    min = Some(replicas);
                }
                if let Some(m) = min {
                    task["minAvailable"] = json!(m);
                }
                let deps: Vec<String> = (0..i).filter(|j| waits[*j]).map(named).collect();
                if !deps.is_empty() {
                    task["dependsOn"] = json!({"name": deps});
                }
                total += replicas;
                sum_min += min.unwrap_or(replicas);
                tasks.push(task);
            }
            let mut spec = json!({"tasks": tasks});
            match min.filter(|m| *m > 0) {
                Some(m) => spec["minAvailable"] = json!(m.min(total)),
                None if defaulted => spec["minAvailable"] = json!(sum_min),
                None => {}
            }
            if defaulted {
                spec["queue"] = json!("default");
            }
            let mut policies: Vec<Value> = events.iter().map(|e| json!({"event": e, "action": action})).collect();
            policies.extend(exit_codes.iter().collect::<std::collections::BTreeSet<_>>().into_iter().map(|c| json!({"exitCode": c, "action": action})));
            spec["policies"] = json!(policies);
            let mut plugin_map = serde_json::Map::new();
            for p in plugins {
                let args = if p == "mpi" { json!([format!("--master={}", named(0))]) } else { json!([]) };
                plugin_map.insert(p.to_string(), args);
            }
            spec["plugins"] = Value::Object(plugin_map);
            if let Some((hard, tier)) = topology {
                let mut t = json!({"mode": if hard { "hard" } else { "soft" }});
                match tier {
                    Some(n) => t["highestTierAllowed"] = json!(n),
                    None => t["highestTierName"] = json!("spine"),
                }
                spec["networkTopology"] = t;
            }
            json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": job, "namespace": "ml"}, "spec": spec})
        })
}

fn valid_object() -> impl Strategy<Value = Value> {
    prop_oneof![pod_group(), workload(), pytorch_job(), volcano_job()]
}

/// Any object the rules have something to say about: valid ones and ones with a field
/// replaced by a value that breaks a rule.
fn any_object() -> impl Strategy<Value = Value> {
    let breakage = prop_oneof![
        Just(("/spec/schedulingPolicy/gang/minCount", json!(0))),
        Just(("/spec/schedulingPolicy", json!({"basic": {}, "gang": {"minCount": 2}}))),
        Just(("/spec/resourceClaims/0/name", json!("Not_A_Label"))),
        Just(("/spec/podGroupTemplates/0/name", json!(""))),
        Just(("/spec/pytorchReplicaSpecs/Master/replicas", json!(2))),
        Just(("/spec/pytorchReplicaSpecs/Master/restartPolicy", json!("Sometimes"))),
        Just(("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/image", json!(""))),
        Just(("/spec/schedulingConstraints", json!({"topology": [{"key": "bad key"}]}))),
    ];
    (valid_object(), proptest::option::of(breakage)).prop_map(|(mut object, breakage)| {
        if let Some((pointer, value)) = breakage {
            let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
            if let Some(Value::Object(map)) = object.pointer_mut(parent) {
                map.insert(key.to_string(), value);
            }
        }
        object
    })
}

fn payload(operation: &str, object: &Value, old: Option<&Value>, settings: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"request": admission_request("prop", operation, object, old), "settings": settings}))
        .unwrap_or_default()
}

fn cluster() -> MemoryCluster {
    MemoryCluster::new(gangwarden_harness::payloads::everyday_nodes())
}

/// The violations of a response, one per entry (the message joins them with "; ").
fn violations(r: &Response) -> Vec<String> {
    let mut v: Vec<String> = r
        .message
        .as_deref()
        .map(|m| m.split("]; ").map(|s| if s.ends_with(']') { s.to_string() } else { format!("{s}]") }).collect())
        .unwrap_or_default();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn valid_objects_are_accepted_by_every_policy(object in valid_object()) {
        let p = payload("CREATE", &object, None, &json!({}));
        let cluster = cluster();
        for (name, r) in [
            ("gang", evaluate::<Gang>(&p, &cluster)),
            ("claims", evaluate::<Claims>(&p, &cluster)),
            ("topology", evaluate::<Topology>(&p, &cluster)),
            ("run-policy", evaluate::<RunPolicyRules>(&p, &cluster)),
            ("bundle", evaluate::<Bundle>(&p, &cluster)),
        ] {
            prop_assert!(r.accepted, "{name} rejected {object}: {:?}", r.message);
        }
    }

    #[test]
    fn defaulting_is_idempotent(job in pytorch_job()) {
        let settings = json!({"defaultRestartPolicy": "OnFailure", "defaultCleanPodPolicy": "None",
                              "defaultTtlSecondsAfterFinished": 3600});
        let cluster = cluster();
        let first = evaluate::<RunPolicyRules>(&payload("CREATE", &job, None, &settings), &cluster);
        prop_assert!(first.accepted, "{:?}", first.message);
        let defaulted = first.mutated_object.unwrap_or(job);
        let second = evaluate::<RunPolicyRules>(&payload("CREATE", &defaulted, None, &settings), &cluster);
        prop_assert!(second.accepted, "{:?}", second.message);
        prop_assert_eq!(second.mutated_object, None, "defaulting an already-defaulted job changed it");
    }

    #[test]
    fn the_bundle_says_what_the_rule_sets_say(object in any_object()) {
        let p = payload("CREATE", &object, None, &json!({}));
        let cluster = cluster();
        let singles = [
            evaluate::<Gang>(&p, &cluster),
            evaluate::<Claims>(&p, &cluster),
            evaluate::<RunPolicyRules>(&p, &cluster),
            evaluate::<Topology>(&p, &cluster),
        ];
        let bundle = evaluate::<Bundle>(&p, &cluster);
        let mut union: Vec<String> = singles.iter().flat_map(violations).collect();
        union.sort();
        prop_assert_eq!(violations(&bundle), union);
        prop_assert_eq!(bundle.accepted, singles.iter().all(|r| r.accepted));
        let mut warnings: Vec<String> = singles.iter().flat_map(|r| r.warnings.clone()).collect();
        let mut bundle_warnings = bundle.warnings.clone();
        warnings.sort();
        bundle_warnings.sort();
        prop_assert_eq!(bundle_warnings, warnings);
    }

    /// What Volcano's webhook accepts, raw or as its mutating webhook completes it, passes
    /// without a word; an UPDATE that scales it (the counts Volcano lets change) too.
    #[test]
    fn volcano_jobs_volcano_accepts_pass_raw_defaulted_and_scaled(job in volcano_job()) {
        let cluster = cluster();
        let r = evaluate::<Gang>(&payload("CREATE", &job, None, &json!({})), &cluster);
        prop_assert!(r.accepted && r.warnings.is_empty(), "rejected {job}: {:?} {:?}", r.message, r.warnings);
        let mut scaled = job.clone();
        scaled["spec"]["priorityClassName"] = json!("high");
        scaled["spec"]["minAvailable"] = json!(0);
        if let Some(tasks) = scaled["spec"]["tasks"].as_array_mut() {
            for t in tasks.iter_mut().filter(|t| t.get("partitionPolicy").is_none()) {
                t["replicas"] = json!(t["replicas"].as_i64().unwrap_or(0) + 1);
            }
        }
        let r = evaluate::<Gang>(&payload("UPDATE", &scaled, Some(&job), &json!({})), &cluster);
        prop_assert!(r.accepted && r.warnings.is_empty(), "update of {job} rejected: {:?}", r.message);
    }
}

fn bundle_module() -> &'static Policy {
    static BUNDLE: OnceLock<Policy> = OnceLock::new();
    BUNDLE.get_or_init(|| Policy::load("bundle", &repo_root()).expect("run `make policies` first"))
}

proptest! {
    // Each case instantiates the module: fewer cases than the native properties.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_module_answers_what_the_core_answers(object in any_object()) {
        let p = payload("CREATE", &object, None, &json!({}));
        let native = evaluate::<Bundle>(&p, &cluster());
        let answer = bundle_module().call("validate", &p, cluster()).expect("instantiate").answer.expect("no guest error");
        prop_assert_eq!(answer["accepted"].as_bool(), Some(native.accepted));
        prop_assert_eq!(answer["message"].as_str(), native.message.as_deref());
        prop_assert_eq!(answer["code"].as_u64(), native.code.map(u64::from));
        let warnings: Vec<String> = answer["warnings"].as_array().into_iter().flatten()
            .filter_map(|w| w.as_str().map(String::from)).collect();
        prop_assert_eq!(warnings, native.warnings);
        prop_assert_eq!(answer["mutated_object"].clone(), native.mutated_object.unwrap_or(Value::Null));
    }
}

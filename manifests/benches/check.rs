//! How long checking 1,000 manifests takes: the engine in-process and, when `GANGWARDEN_BIN`
//! names the release binary, `gangwarden check` on the same files as a user runs it. The
//! baseline, measured in the same run, is only reading the YAML (no rules).
//!
//! The manifests: 100 Workloads, a PodGroup made from each (with a topology constraint),
//! six Pods per PodGroup and 200 PyTorchJobs, in 10 files; 100 Nodes as `--cluster` objects.

use std::path::Path;
use std::time::{Duration, Instant};

use gangwarden_manifests::{Input, SourceFile, check, read_documents};

const GROUPS: usize = 100;
const PODS_PER_GROUP: usize = 6;
const JOBS: usize = 200;

fn manifests() -> Vec<String> {
    let mut docs = Vec::new();
    for g in 0..GROUPS {
        docs.push(format!(
            "apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {{name: train-{g}, namespace: ml}}\nspec:\n  podGroupTemplates:\n  - name: workers\n    schedulingPolicy: {{gang: {{minCount: {PODS_PER_GROUP}}}}}\n    schedulingConstraints:\n      topology: [{{key: topology.kubernetes.io/zone}}]\n"
        ));
        docs.push(format!(
            "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {{name: train-{g}-workers, namespace: ml}}\nspec:\n  podGroupTemplateRef: {{workload: {{workloadName: train-{g}, podGroupTemplateName: workers}}}}\n  schedulingPolicy: {{gang: {{minCount: {PODS_PER_GROUP}}}}}\n  schedulingConstraints:\n    topology: [{{key: topology.kubernetes.io/zone}}]\n"
        ));
        for p in 0..PODS_PER_GROUP {
            docs.push(format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: train-{g}-{p}, namespace: ml}}\nspec:\n  schedulingGroup: {{podGroupName: train-{g}-workers}}\n  containers:\n  - name: trainer\n    image: registry.example.com/trainer:1.0\n    resources: {{requests: {{cpu: '1'}}}}\n"
            ));
        }
    }
    for j in 0..JOBS {
        docs.push(format!(
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: job-{j}, namespace: ml}}\nspec:\n  runPolicy:\n    cleanPodPolicy: None\n    schedulingPolicy: {{minAvailable: 3}}\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers: [{{name: pytorch, image: registry.example.com/pytorch:2}}]\n    Worker:\n      replicas: 2\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers: [{{name: pytorch, image: registry.example.com/pytorch:2}}]\n"
        ));
    }
    assert_eq!(docs.len(), 1000);
    docs.chunks(100).map(|chunk| chunk.join("---\n")).collect()
}

fn nodes() -> String {
    (0..100)
        .map(|n| {
            format!(
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{n}\n  labels: {{topology.kubernetes.io/zone: zone-{}}}\n",
                n % 4
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// A PyTorchJob with `n` labels and `n` replica types the kind does not have: two mappings of
/// `n` keys, each key checked for repeats, and the rejection of the replica map (one finding
/// past its maximum of 16 entries) located in them.
fn wide_job(n: usize) -> String {
    let labels: String = (0..n).map(|i| format!("    label-{i}: v\n")).collect();
    let specs: String = (0..n)
        .map(|i| format!("    Worker{i}:\n      template: {{spec: {{containers: [{{name: pytorch, image: i}}]}}}}\n"))
        .collect();
    format!(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: wide\n  namespace: ml\n  labels:\n{labels}spec:\n  pytorchReplicaSpecs:\n{specs}"
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(15);
    let files: Vec<SourceFile> =
        manifests().into_iter().enumerate().map(|(i, text)| SourceFile::new(format!("m{i}.yaml"), text)).collect();
    let input =
        Input { files: files.clone(), cluster: vec![SourceFile::new("nodes.yaml", nodes())], ..Input::default() };

    let report = check(&input).expect("the generated manifests read");
    assert_eq!(report.summary.checked, 1000);
    assert_eq!(
        report.summary.rejected,
        0,
        "the generated manifests must pass: {:#?}",
        report.documents.iter().find(|d| !d.accepted())
    );

    let baseline = time(runs, || {
        for f in &files {
            read_documents(f).expect("read");
        }
    });
    let engine = time(runs, || {
        check(&input).expect("check");
    });
    println!("check 1,000 manifests ({runs} runs, medians)");
    println!("  read YAML only (baseline)     {}", ms(baseline));
    println!(
        "  engine: read + 4 rule sets    {}  ({:.1}x baseline)",
        ms(engine),
        engine.as_secs_f64() / baseline.as_secs_f64()
    );

    // Cost grows with the input, not its square: the same document at 4,000 and at 16,000
    // keys per mapping (a quadratic step, such as a key lookup that scans its mapping, shows
    // as 16x).
    let wide = |n: usize| Input { files: vec![SourceFile::new("wide.yaml", wide_job(n))], ..Input::default() };
    let (small, large) = (wide(4_000), wide(16_000));
    assert_eq!(check(&small).expect("check").summary.rejected, 1);
    let small_time = time(runs.min(5), || {
        check(&small).expect("check");
    });
    let large_time = time(runs.min(5), || {
        check(&large).expect("check");
    });
    println!(
        "  one job, 4,000 -> 16,000 keys per mapping: {} -> {}  ({:.1}x for 4x the input)",
        ms(small_time),
        ms(large_time),
        large_time.as_secs_f64() / small_time.as_secs_f64()
    );

    let Ok(bin) = std::env::var("GANGWARDEN_BIN") else {
        println!("  (set GANGWARDEN_BIN to the release binary to time `gangwarden check` too)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("gangwarden-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in &files {
        std::fs::write(dir.join(&f.name), &f.text).expect("write");
    }
    let nodes_file = dir.join("cluster-nodes.txt");
    std::fs::write(&nodes_file, nodes()).expect("write");
    let run = |bin: &Path| {
        let out = std::process::Command::new(bin)
            .args(["check", "--output", "json", "--cluster"])
            .arg(&nodes_file)
            .arg(&dir)
            .output()
            .expect("run gangwarden");
        assert!(out.status.success(), "gangwarden check failed: {}", String::from_utf8_lossy(&out.stderr));
    };
    let binary = time(runs, || run(Path::new(&bin)));
    println!(
        "  gangwarden check (process)    {}  ({:.1}x baseline; target < 1000 ms)",
        ms(binary),
        binary.as_secs_f64() / baseline.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

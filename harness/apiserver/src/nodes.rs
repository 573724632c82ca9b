//! Made-up but realistic data: uids, and Nodes as a kubelet and a cloud provider write them.

use std::fmt::Write as _;

use serde_json::{Value, json};

/// A uid-shaped string derived from `seed`.
pub fn fake_uid(seed: &str) -> String {
    let a = fnv64(seed.as_bytes(), 1);
    let b = fnv64(seed.as_bytes(), 2);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0xfff,
        b & 0xffff_ffff_ffff
    )
}

fn fnv64(bytes: &[u8], salt: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The images a GPU training node of a cloud cluster holds: name, tag, size in bytes.
const NODE_IMAGES: &[(&str, &str, u64)] = &[
    ("nvcr.io/nvidia/pytorch", "25.08-py3", 9_876_543_210),
    ("ghcr.io/example/trainer", "v2.14.1", 6_123_456_789),
    ("nvcr.io/nvidia/k8s/dcgm-exporter", "4.2.3-4.1.1-ubuntu22.04", 1_234_567_890),
    ("nvcr.io/nvidia/k8s-device-plugin", "v0.17.1", 187_654_321),
    ("registry.k8s.io/kube-proxy", "v1.37.0", 30_123_456),
    ("registry.k8s.io/coredns/coredns", "v1.12.1", 21_654_987),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni", "v1.19.2-eksbuild.1", 45_678_123),
    ("public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver", "v1.41.0", 38_765_432),
    ("quay.io/prometheus/node-exporter", "v1.9.1", 12_345_678),
    ("cr.fluentbit.io/fluent/fluent-bit", "4.0.3", 36_789_012),
    ("registry.k8s.io/kueue/kueue", "v0.13.2", 28_901_234),
    ("registry.k8s.io/pause", "3.10", 320_368),
];

/// A 64-hex-digit digest derived from `seed`.
fn fake_digest(seed: &str) -> String {
    (0..4u64).fold(String::with_capacity(64), |mut s, i| {
        let _ = write!(s, "{:016x}", fnv64(seed.as_bytes(), i + 7));
        s
    })
}

/// Node `node-<i>` as a kubelet and a cloud provider write it (about 4 KB of JSON): the seven
/// usual labels (`topology.example.com/rack` is `rack-<i/40>`), annotations, one managedFields
/// entry, spec with the GPU taint, and a status with capacity and allocatable (192 CPUs, 8
/// GPUs), conditions, addresses, nodeInfo and a dozen images.
pub fn realistic_node(i: usize) -> Value {
    let name = format!("node-{i}");
    let zones = ["us-east-1a", "us-east-1b", "us-east-1c"];
    let zone = zones[i % zones.len()];
    let ip = format!("10.{}.{}.{}", 16 + (i >> 16) % 16, (i >> 8) & 0xff, i & 0xff);
    let hostname = format!("ip-{}.ec2.internal", ip.replace('.', "-"));
    let instance = format!("i-0{:016x}", fnv64(name.as_bytes(), 3) >> 4);
    let created = format!("2026-03-{:02}T{:02}:{:02}:{:02}Z", 1 + i % 28, i % 24, i % 60, (i * 7) % 60);
    let heartbeat = "2026-09-01T12:00:00Z";
    let transition = format!("2026-03-{:02}T{:02}:{:02}:30Z", 1 + i % 28, i % 24, (i + 1) % 60);
    let condition = |kind: &str, status: &str, reason: &str, message: &str| json!({"type": kind, "status": status, "lastHeartbeatTime": heartbeat, "lastTransitionTime": transition, "reason": reason, "message": message});
    let images: Vec<Value> = NODE_IMAGES
        .iter()
        .map(|(repo, tag, size)| json!({"names": [format!("{repo}@sha256:{}", fake_digest(&format!("{repo}:{tag}"))), format!("{repo}:{tag}")], "sizeBytes": size}))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": fake_uid(&name),
            "resourceVersion": (100_000 + i).to_string(),
            "creationTimestamp": created,
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": hostname,
                "node.kubernetes.io/instance-type": "p5.48xlarge",
                "topology.kubernetes.io/region": "us-east-1",
                "topology.kubernetes.io/zone": zone,
                "topology.example.com/rack": format!("rack-{}", i / 40),
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "managedFields": [{
                "manager": "kubelet",
                "operation": "Update",
                "apiVersion": "v1",
                "time": created,
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:metadata": {
                        "f:annotations": {".": {}, "f:volumes.kubernetes.io/controller-managed-attach-detach": {}},
                        "f:labels": {".": {}, "f:kubernetes.io/arch": {}, "f:kubernetes.io/hostname": {}, "f:kubernetes.io/os": {}, "f:node.kubernetes.io/instance-type": {}}
                    },
                    "f:spec": {"f:providerID": {}}
                }
            }]
        },
        "spec": {
            "podCIDR": format!("100.{}.{}.0/24", 64 + (i >> 8) % 64, i & 0xff),
            "podCIDRs": [format!("100.{}.{}.0/24", 64 + (i >> 8) % 64, i & 0xff)],
            "providerID": format!("aws:///{zone}/{instance}"),
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        },
        "status": {
            "capacity": {"cpu": "192", "ephemeral-storage": "3750000000Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "2097152000Ki", "nvidia.com/gpu": "8", "pods": "110"},
            "allocatable": {"cpu": "191450m", "ephemeral-storage": "3455999996056", "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "2086301696Ki", "nvidia.com/gpu": "8", "pods": "110"},
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "InternalDNS", "address": hostname},
                {"type": "Hostname", "address": hostname}
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": fake_digest(&format!("machine/{name}"))[..32].to_string(),
                "systemUUID": fake_uid(&format!("system/{name}")),
                "bootID": fake_uid(&format!("boot/{name}")),
                "kernelVersion": "6.12.37-61.105.amzn2023.x86_64",
                "osImage": "Amazon Linux 2023.8.20250818",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kubeletVersion": "v1.37.0-eks-3e5a1b7",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "swap": {}
            },
            "images": images
        }
    })
}

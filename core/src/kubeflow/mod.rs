//! Typed `kubeflow.org/v1` training jobs (training-operator release-1.9 API), and the MPI
//! operator's `kubeflow.org/v2beta1` MPIJob (v0.8), one more version of the MPIJob kind: the
//! same replica specs and run policy, plus its own fields.
//!
//! Every field of the v1 API is here; unknown fields are ignored (the apiserver prunes them
//! from custom resources before any webhook sees the object). Pod templates are the core's
//! [`PodTemplateSpec`](crate::pod::PodTemplateSpec): the fields the rules read, decoded exactly
//! like a Pod's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::decode::Text;
use crate::meta::{ObjectMeta, TemplateMeta};
use crate::pod::PodTemplateSpec;
use crate::quantity::Quantity;

/// The six job kinds, with what differs between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    TFJob,
    PyTorchJob,
    MPIJob,
    JAXJob,
    PaddleJob,
    XGBoostJob,
}

impl JobKind {
    pub const ALL: [JobKind; 6] = [
        JobKind::TFJob,
        JobKind::PyTorchJob,
        JobKind::MPIJob,
        JobKind::JAXJob,
        JobKind::PaddleJob,
        JobKind::XGBoostJob,
    ];

    pub fn from_kind(kind: &str) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|k| k.name() == kind)
    }

    pub fn name(self) -> &'static str {
        match self {
            JobKind::TFJob => "TFJob",
            JobKind::PyTorchJob => "PyTorchJob",
            JobKind::MPIJob => "MPIJob",
            JobKind::JAXJob => "JAXJob",
            JobKind::PaddleJob => "PaddleJob",
            JobKind::XGBoostJob => "XGBoostJob",
        }
    }

    /// The JSON name of the replica-spec map under `spec`.
    pub fn replica_specs_field(self) -> &'static str {
        match self {
            JobKind::TFJob => "tfReplicaSpecs",
            JobKind::PyTorchJob => "pytorchReplicaSpecs",
            JobKind::MPIJob => "mpiReplicaSpecs",
            JobKind::JAXJob => "jaxReplicaSpecs",
            JobKind::PaddleJob => "paddleReplicaSpecs",
            JobKind::XGBoostJob => "xgbReplicaSpecs",
        }
    }

    /// The container the operator reads ports and exit codes from.
    pub fn default_container_name(self) -> &'static str {
        match self {
            JobKind::TFJob => "tensorflow",
            JobKind::PyTorchJob => "pytorch",
            JobKind::MPIJob => "mpi",
            JobKind::JAXJob => "jax",
            JobKind::PaddleJob => "paddle",
            JobKind::XGBoostJob => "xgboost",
        }
    }

    /// Replica count the operator assumes when `replicas` is unset.
    pub fn default_replicas(self, replica_type: &str) -> i32 {
        match (self, replica_type) {
            (JobKind::MPIJob, "Worker") => 0,
            _ => 1,
        }
    }

    /// The replica types the operator knows, in upstream's order.
    pub fn replica_types(self) -> &'static [&'static str] {
        match self {
            JobKind::TFJob => &["PS", "Worker", "Chief", "Master", "Evaluator"],
            JobKind::PyTorchJob | JobKind::PaddleJob | JobKind::XGBoostJob => &["Master", "Worker"],
            JobKind::MPIJob => &["Launcher", "Worker"],
            JobKind::JAXJob => &["Worker"],
        }
    }

    /// The port name defaulting injects into the default container, and the controller
    /// reads back from it. MPIJob has none.
    pub fn default_port_name(self) -> Option<&'static str> {
        match self {
            JobKind::TFJob => Some("tfjob-port"),
            JobKind::PyTorchJob => Some("pytorchjob-port"),
            JobKind::MPIJob => None,
            JobKind::JAXJob => Some("jaxjob-port"),
            JobKind::PaddleJob => Some("master"),
            JobKind::XGBoostJob => Some("xgboostjob-port"),
        }
    }
}

/// The API version a job arrived in: the training operator's `v1` (all six kinds), or the
/// MPI operator's `v2beta1` (MPIJob only). The two operators serve the same CRD name, so a
/// cluster runs one or the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KubeflowVersion {
    V1,
    V2beta1,
}

impl KubeflowVersion {
    /// The version `version` of `kind`, when one of the operators serves it.
    pub fn of(version: &str, kind: JobKind) -> Option<KubeflowVersion> {
        match (version, kind) {
            ("v1", _) => Some(KubeflowVersion::V1),
            ("v2beta1", JobKind::MPIJob) => Some(KubeflowVersion::V2beta1),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulingPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_available: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_resources: Option<BTreeMap<String, Quantity>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority_class: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_timeout_seconds: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean_pod_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduling_policy: Option<SchedulingPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_by: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default)]
    pub template: PodTemplateSpec,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
}

/// A replica spec of the job an UPDATE replaces: its count and its template's metadata.
#[derive(Deserialize)]
struct OldReplicaSpec {
    #[serde(default)]
    replicas: Option<i32>,
    #[serde(default)]
    template: OldTemplate,
}

#[derive(Default, Deserialize)]
struct OldTemplate {
    #[serde(default)]
    metadata: Option<TemplateMeta>,
}

impl From<OldReplicaSpec> for ReplicaSpec {
    fn from(old: OldReplicaSpec) -> ReplicaSpec {
        ReplicaSpec {
            replicas: old.replicas,
            template: PodTemplateSpec { metadata: old.template.metadata, spec: None },
            restart_policy: None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct RdzvConf {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// PyTorchJob `spec.elasticPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ElasticPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdzv_backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdzv_port: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdzv_host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdzv_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdzv_conf: Option<Vec<RdzvConf>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standalone: Option<bool>,
    #[serde(rename = "nProcPerNode", skip_serializing_if = "Option::is_none")]
    pub n_proc_per_node: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_restarts: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    // Kept as written: no rule reads them, and a typed HPA decoder costs the modules ~15 KB
    // (the CRD schema checks their shape before any webhook sees them).
    pub metrics: Option<Vec<crate::decode::RawJson>>,
}

/// PaddleJob `spec.elasticPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaddleElasticPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_restarts: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    // Kept as written: no rule reads them, and a typed HPA decoder costs the modules ~15 KB
    // (the CRD schema checks their shape before any webhook sees them).
    pub metrics: Option<Vec<crate::decode::RawJson>>,
}

/// A replica-spec map: replica type → spec (`None` for `null`).
pub type ReplicaSpecs = ReplicaMap<Option<ReplicaSpec>>;

/// Past this many entries a replica-spec map is read only for the replica types some kind
/// knows. No kind has more than five types, so a longer map is no misspelling: it is
/// rejected for its length (`Too many`), as the apiserver rejects an overlong list, and the
/// specs of types no kind has are skipped unread instead of each being decoded and reported.
pub const MAX_REPLICA_MAP_ENTRIES: usize = 16;

/// Whether some kind has this replica type.
fn is_any_kinds_replica_type(key: &str) -> bool {
    JobKind::ALL.iter().any(|k| k.replica_types().contains(&key))
}

/// A replica-spec map's entries held in a vector sorted by key: inserting each of thousands
/// of large values into a `BTreeMap` moved them around its nodes and cost a third of
/// decoding a job with 10,000 replica specs in wasm. A repeated key keeps its last value, as
/// a map would. A map of more than [`MAX_REPLICA_MAP_ENTRIES`] keeps only the entries of
/// replica types some kind knows; [`ReplicaMap::len_in_object`] counts them all.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaMap<V> {
    entries: Vec<(String, V)>,
    in_object: usize,
}

impl<V> Default for ReplicaMap<V> {
    fn default() -> Self {
        ReplicaMap { entries: Vec::new(), in_object: 0 }
    }
}

impl<V> ReplicaMap<V> {
    /// Sorts `entries` by key; of entries with one key, the last given is kept.
    fn sorted(mut entries: Vec<(String, V)>, in_object: usize) -> Self {
        // A stable sort keeps entries with one key in the order given.
        crate::order::sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(&mut later.1, &mut kept.1);
            }
            same
        });
        ReplicaMap { entries, in_object }
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok()
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// The entries kept (distinct keys).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many entries the JSON object has, repeated keys and skipped entries included.
    pub fn len_in_object(&self) -> usize {
        self.in_object
    }

    /// Whether the object was past [`MAX_REPLICA_MAP_ENTRIES`], so only the entries of
    /// known replica types were kept.
    pub fn is_over_maximum(&self) -> bool {
        self.in_object > MAX_REPLICA_MAP_ENTRIES
    }

    /// The entries in key order.
    pub fn iter(&self) -> std::slice::Iter<'_, (String, V)> {
        self.entries.iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The same keys with each value mapped (the order is kept).
    fn map_values<W>(self, f: impl Fn(V) -> W) -> ReplicaMap<W> {
        ReplicaMap { entries: self.entries.into_iter().map(|(k, v)| (k, f(v))).collect(), in_object: self.in_object }
    }
}

impl<'a, V> IntoIterator for &'a ReplicaMap<V> {
    type Item = &'a (String, V);
    type IntoIter = std::slice::Iter<'a, (String, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for ReplicaMap<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Entries<V> {
            type Value = ReplicaMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ReplicaMap<V>, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(MAX_REPLICA_MAP_ENTRIES));
                let mut in_object = 0;
                while let Some(Text(key)) = map.next_key()? {
                    in_object += 1;
                    if in_object > MAX_REPLICA_MAP_ENTRIES && !is_any_kinds_replica_type(&key) {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        continue;
                    }
                    entries.push((key.into_owned(), map.next_value()?));
                }
                if in_object > MAX_REPLICA_MAP_ENTRIES {
                    // The first entries were read before the map was known to be too long.
                    entries.retain(|(key, _)| is_any_kinds_replica_type(key));
                }
                Ok(ReplicaMap::sorted(entries, in_object))
            }
        }
        d.deserialize_map(Entries(std::marker::PhantomData))
    }
}

impl<V: Serialize> Serialize for ReplicaMap<V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries.iter().map(|(k, v)| (k, v)))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TFJobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_policy: Option<RunPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tf_replica_specs: Option<ReplicaSpecs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_dynamic_worker: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PyTorchJobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_policy: Option<RunPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elastic_policy: Option<ElasticPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pytorch_replica_specs: Option<ReplicaSpecs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nproc_per_node: Option<String>,
}

/// An MPIJob's spec, in either version: `v1` has `cleanPodPolicy` (deprecated) and
/// `mainContainer`, `v2beta1` the four fields after them (the apiserver prunes each version's
/// unknown fields, so a job carries only its own).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MPIJobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slots_per_worker: Option<i32>,
    /// Deprecated in favour of `runPolicy.cleanPodPolicy` (v1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean_pod_policy: Option<String>,
    /// v1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub main_container: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_policy: Option<RunPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi_replica_specs: Option<ReplicaSpecs>,
    /// v2beta1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_launcher_as_worker: Option<bool>,
    /// v2beta1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_auth_mount_path: Option<String>,
    /// v2beta1: `AtStartup` or `WaitForWorkersReady`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launcher_creation_policy: Option<String>,
    /// v2beta1: `OpenMPI`, `Intel` or `MPICH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi_implementation: Option<String>,
}

impl MPIJobSpec {
    /// Keeps only `version`'s fields, as the apiserver's pruning does.
    fn pruned(mut self, version: KubeflowVersion) -> MPIJobSpec {
        match version {
            KubeflowVersion::V1 => {
                (self.run_launcher_as_worker, self.ssh_auth_mount_path) = (None, None);
                (self.launcher_creation_policy, self.mpi_implementation) = (None, None);
            }
            KubeflowVersion::V2beta1 => (self.clean_pod_policy, self.main_container) = (None, None),
        }
        self
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JAXJobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_policy: Option<RunPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jax_replica_specs: Option<ReplicaSpecs>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaddleJobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_policy: Option<RunPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elastic_policy: Option<PaddleElasticPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paddle_replica_specs: Option<ReplicaSpecs>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct XGBoostJobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_policy: Option<RunPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xgb_replica_specs: Option<ReplicaSpecs>,
}

/// The spec of one of the six kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum JobSpec {
    TF(TFJobSpec),
    PyTorch(PyTorchJobSpec),
    MPI(MPIJobSpec),
    JAX(JAXJobSpec),
    Paddle(PaddleJobSpec),
    XGBoost(XGBoostJobSpec),
}

/// Elastic bounds shared by PyTorch and Paddle elastic policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElasticBounds {
    pub min_replicas: Option<i32>,
    pub max_replicas: Option<i32>,
}

/// A decoded Kubeflow job of any of the six kinds.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeflowJob {
    pub kind: JobKind,
    pub version: KubeflowVersion,
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

#[derive(Deserialize)]
struct Envelope<S> {
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    #[serde(default)]
    spec: Option<S>,
}

fn decode_as<S: serde::de::DeserializeOwned + Default>(text: &str) -> Result<(ObjectMeta, S), String> {
    let env: Envelope<S> = crate::decode::from_str(text)?;
    Ok((env.metadata.unwrap_or_default(), env.spec.unwrap_or_default()))
}

impl KubeflowJob {
    /// Decodes a job of `kind` in `version` from its JSON text.
    pub fn decode(kind: JobKind, version: KubeflowVersion, text: &str) -> Result<KubeflowJob, String> {
        macro_rules! decode {
            ($variant:ident) => {{
                let (metadata, spec) = decode_as(text)?;
                (metadata, JobSpec::$variant(spec))
            }};
        }
        let (metadata, spec) = match kind {
            JobKind::TFJob => decode!(TF),
            JobKind::PyTorchJob => decode!(PyTorch),
            JobKind::MPIJob => {
                let (metadata, spec) = decode_as::<MPIJobSpec>(text)?;
                (metadata, JobSpec::MPI(spec.pruned(version)))
            }
            JobKind::JAXJob => decode!(JAX),
            JobKind::PaddleJob => decode!(Paddle),
            JobKind::XGBoostJob => decode!(XGBoost),
        };
        Ok(KubeflowJob { kind, version, metadata, spec })
    }

    /// Decodes the job an UPDATE replaces for the update rules, which compare `spec.runPolicy`
    /// and the replica templates' annotations: each template's Pod spec is skipped unread, so
    /// the old copy of a large job costs little more than a scan. The apiserver sends the
    /// object as it stored it, having checked it then.
    pub fn decode_old(kind: JobKind, version: KubeflowVersion, text: &str) -> Result<KubeflowJob, String> {
        // One type for the six kinds keeps the policy modules small; the apiserver prunes
        // another kind's map from a stored job, so only the kind's own is ever there.
        #[derive(Default, Deserialize)]
        #[serde(default, rename_all = "camelCase")]
        struct OldSpec {
            run_policy: Option<RunPolicy>,
            tf_replica_specs: Option<OldReplicaSpecs>,
            pytorch_replica_specs: Option<OldReplicaSpecs>,
            mpi_replica_specs: Option<OldReplicaSpecs>,
            jax_replica_specs: Option<OldReplicaSpecs>,
            paddle_replica_specs: Option<OldReplicaSpecs>,
            xgb_replica_specs: Option<OldReplicaSpecs>,
        }
        type OldReplicaSpecs = ReplicaMap<Option<OldReplicaSpec>>;
        fn own(map: Option<OldReplicaSpecs>) -> Option<ReplicaSpecs> {
            map.map(|m| m.map_values(|v| v.map(ReplicaSpec::from)))
        }
        let (metadata, old) = decode_as::<OldSpec>(text)?;
        let run_policy = old.run_policy;
        let spec = match kind {
            JobKind::TFJob => {
                JobSpec::TF(TFJobSpec { run_policy, tf_replica_specs: own(old.tf_replica_specs), ..Default::default() })
            }
            JobKind::PyTorchJob => JobSpec::PyTorch(PyTorchJobSpec {
                run_policy,
                pytorch_replica_specs: own(old.pytorch_replica_specs),
                ..Default::default()
            }),
            JobKind::MPIJob => JobSpec::MPI(MPIJobSpec {
                run_policy,
                mpi_replica_specs: own(old.mpi_replica_specs),
                ..Default::default()
            }),
            JobKind::JAXJob => JobSpec::JAX(JAXJobSpec { run_policy, jax_replica_specs: own(old.jax_replica_specs) }),
            JobKind::PaddleJob => JobSpec::Paddle(PaddleJobSpec {
                run_policy,
                paddle_replica_specs: own(old.paddle_replica_specs),
                ..Default::default()
            }),
            JobKind::XGBoostJob => {
                JobSpec::XGBoost(XGBoostJobSpec { run_policy, xgb_replica_specs: own(old.xgb_replica_specs) })
            }
        };
        Ok(KubeflowJob { kind, version, metadata, spec })
    }

    /// Whether the job is the MPI operator's (`kubeflow.org/v2beta1` MPIJob).
    pub fn is_mpi_operator(&self) -> bool {
        self.version == KubeflowVersion::V2beta1
    }

    pub fn run_policy(&self) -> Option<&RunPolicy> {
        match &self.spec {
            JobSpec::TF(s) => s.run_policy.as_ref(),
            JobSpec::PyTorch(s) => s.run_policy.as_ref(),
            JobSpec::MPI(s) => s.run_policy.as_ref(),
            JobSpec::JAX(s) => s.run_policy.as_ref(),
            JobSpec::Paddle(s) => s.run_policy.as_ref(),
            JobSpec::XGBoost(s) => s.run_policy.as_ref(),
        }
    }

    pub fn scheduling_policy(&self) -> Option<&SchedulingPolicy> {
        self.run_policy().and_then(|r| r.scheduling_policy.as_ref())
    }

    /// The replica-spec map; `None` when the job leaves it out.
    pub fn replica_specs(&self) -> Option<&ReplicaSpecs> {
        match &self.spec {
            JobSpec::TF(s) => s.tf_replica_specs.as_ref(),
            JobSpec::PyTorch(s) => s.pytorch_replica_specs.as_ref(),
            JobSpec::MPI(s) => s.mpi_replica_specs.as_ref(),
            JobSpec::JAX(s) => s.jax_replica_specs.as_ref(),
            JobSpec::Paddle(s) => s.paddle_replica_specs.as_ref(),
            JobSpec::XGBoost(s) => s.xgb_replica_specs.as_ref(),
        }
    }

    /// The replica specs that are present (non-null), in key order.
    pub fn replicas(&self) -> impl Iterator<Item = (&String, &ReplicaSpec)> {
        self.replica_specs().into_iter().flatten().filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
    }

    /// `replicas` of one replica spec, or the operator's default when unset.
    pub fn replica_count(&self, replica_type: &str, spec: &ReplicaSpec) -> i32 {
        spec.replicas.unwrap_or_else(|| self.kind.default_replicas(replica_type))
    }

    /// The number of pods the job runs: the operator's default `minAvailable`.
    pub fn total_replicas(&self) -> i64 {
        self.replicas().map(|(t, s)| i64::from(self.replica_count(t, s))).sum()
    }

    /// Elastic bounds for the kinds that have an elastic policy.
    pub fn elastic_bounds(&self) -> Option<ElasticBounds> {
        match &self.spec {
            JobSpec::PyTorch(s) => s
                .elastic_policy
                .as_ref()
                .map(|e| ElasticBounds { min_replicas: e.min_replicas, max_replicas: e.max_replicas }),
            JobSpec::Paddle(s) => s
                .elastic_policy
                .as_ref()
                .map(|e| ElasticBounds { min_replicas: e.min_replicas, max_replicas: e.max_replicas }),
            _ => None,
        }
    }

    /// `elasticPolicy.maxRestarts` for the kinds that have an elastic policy.
    pub fn elastic_max_restarts(&self) -> Option<i32> {
        match &self.spec {
            JobSpec::PyTorch(s) => s.elastic_policy.as_ref().and_then(|e| e.max_restarts),
            JobSpec::Paddle(s) => s.elastic_policy.as_ref().and_then(|e| e.max_restarts),
            _ => None,
        }
    }

    pub fn as_tf(&self) -> Option<&TFJobSpec> {
        if let JobSpec::TF(s) = &self.spec { Some(s) } else { None }
    }

    pub fn as_pytorch(&self) -> Option<&PyTorchJobSpec> {
        if let JobSpec::PyTorch(s) = &self.spec { Some(s) } else { None }
    }

    pub fn as_mpi(&self) -> Option<&MPIJobSpec> {
        if let JobSpec::MPI(s) = &self.spec { Some(s) } else { None }
    }
}

#[cfg(test)]
mod tests;

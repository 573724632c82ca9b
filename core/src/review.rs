//! The admission request, decoded into typed resources.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::decode::{ObjectOnly, json_type};

use crate::batch::{self, BatchJob, BatchKind};
use crate::decode::null_as_default;
use crate::kubeflow::{JobKind, KubeflowJob, KubeflowVersion};
use crate::meta::Metadata;
use crate::pod::Pod;
use crate::scheduling::{self, CompositePodGroup, GroupSpec, PodGroup, Version, Workload};
use crate::trainer::{self, Runtime, TrainJob, TrainerKind};
use crate::volcano::{self, VolcanoJob, VolcanoPodGroup};

pub const SCHEDULING_GROUP: &str = scheduling::GROUP;
pub const KUBEFLOW_GROUP: &str = "kubeflow.org";

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    #[serde(deserialize_with = "null_as_default")]
    pub group: String,
    #[serde(deserialize_with = "null_as_default")]
    pub version: String,
    #[serde(deserialize_with = "null_as_default")]
    pub kind: String,
}

impl GroupVersionKind {
    /// From an `apiVersion` (`group/version`, or a bare version for the core group) and a kind.
    pub fn new(api_version: &str, kind: &str) -> GroupVersionKind {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        GroupVersionKind { group: group.to_string(), version: version.to_string(), kind: kind.to_string() }
    }

    /// From an object's `apiVersion` and `kind`.
    pub fn of_object(object: &Value) -> GroupVersionKind {
        GroupVersionKind::new(
            object["apiVersion"].as_str().unwrap_or_default(),
            object["kind"].as_str().unwrap_or_default(),
        )
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }
}

/// The fields of an AdmissionRequest that the rules use. The objects stay raw JSON text,
/// borrowed from the payload: each is read once, straight into its typed form.
#[derive(Clone, Debug, Default)]
pub struct AdmissionRequest<'a> {
    pub uid: String,
    pub kind: GroupVersionKind,
    pub operation: String,
    pub namespace: String,
    pub name: String,
    pub sub_resource: String,
    /// `None` when missing or `null`.
    pub object: Option<&'a RawValue>,
    pub old_object: Option<&'a RawValue>,
}

/// The request's fields as raw text: reading them can only fail on JSON syntax, so the
/// one pass over the payload that finds the objects never stops at a field of the wrong
/// type; each small field is then decoded on its own, with its path.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawRequest<'a> {
    #[serde(borrow)]
    uid: Option<&'a RawValue>,
    #[serde(borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    operation: Option<&'a RawValue>,
    #[serde(borrow)]
    namespace: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    sub_resource: Option<&'a RawValue>,
    #[serde(borrow)]
    object: Option<&'a RawValue>,
    #[serde(borrow)]
    old_object: Option<&'a RawValue>,
}

/// `{"request": ..., "settings": ...}`, the `validate` payload.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RawPayload<'a> {
    #[serde(borrow)]
    request: Option<ObjectOnly<RawRequest<'a>>>,
    #[serde(borrow)]
    settings: Option<&'a RawValue>,
}

/// The same payload with the request left whole, to say what it is when it is no object.
#[derive(Default, Deserialize)]
#[serde(default)]
struct LoosePayload<'a> {
    #[serde(borrow)]
    request: Option<&'a RawValue>,
}

/// A `validate` payload: the request, and the settings as raw JSON (`None`: not given).
pub struct ValidationPayload<'a> {
    pub request: AdmissionRequest<'a>,
    pub settings: Option<&'a RawValue>,
}

impl<'a> ValidationPayload<'a> {
    /// Why `text` does not read as a payload, `e` being what the one-pass read said.
    fn why_unreadable(text: &str, e: serde_json::Error) -> BadRequest {
        if let Err(syntax) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            return BadRequest(format!("cannot read the validation request: not valid JSON: {syntax}"));
        }
        // Valid JSON: the payload or its request is no object, or a key repeats.
        match serde_json::from_str::<ObjectOnly<LoosePayload>>(text) {
            Ok(ObjectOnly(LoosePayload { request: None })) => {
                BadRequest("request: must be a JSON object, got null".into())
            }
            Ok(ObjectOnly(LoosePayload { request: Some(r) })) if json_type(r) != "an object" => {
                BadRequest(format!("request: must be a JSON object, got {}", json_type(r)))
            }
            // A payload that is no object has no request.
            Err(_) if !text.trim_start().starts_with('{') => {
                BadRequest("request: must be a JSON object, got null".into())
            }
            // A repeated key: Go would keep the last, but no apiserver or policy-server sends one.
            _ => BadRequest(format!("cannot read the validation request: {e}")),
        }
    }

    /// Reads a `validate` payload in one pass over its bytes.
    pub fn parse(payload: &'a [u8]) -> Result<ValidationPayload<'a>, BadRequest> {
        let unreadable = |detail: String| BadRequest(format!("cannot read the validation request: {detail}"));
        let text = std::str::from_utf8(payload).map_err(|e| unreadable(format!("not valid UTF-8: {e}")))?;
        let raw: RawPayload = match serde_json::from_str::<ObjectOnly<RawPayload>>(text) {
            Ok(ObjectOnly(raw)) => raw,
            Err(e) => return Err(ValidationPayload::why_unreadable(text, e)),
        };
        let Some(ObjectOnly(request)) = raw.request else {
            return Err(BadRequest("request: must be a JSON object, got null".into()));
        };
        let request = AdmissionRequest::from_raw(request)?;
        Ok(ValidationPayload { request, settings: raw.settings })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

/// An object of a kind some rule set guards.
#[derive(Clone, Debug, PartialEq)]
pub enum Resource {
    Workload(Box<Workload>),
    PodGroup(Box<PodGroup>),
    /// `scheduling.k8s.io/v1alpha3` only.
    CompositePodGroup(Box<CompositePodGroup>),
    Pod(Box<Pod>),
    /// A Kubeflow `kubeflow.org/v1` job, or the MPI operator's `v2beta1` MPIJob.
    Kubeflow(Box<KubeflowJob>),
    /// A `batch/v1` Job or CronJob.
    BatchJob(Box<BatchJob>),
    /// A Kubeflow Trainer v2 TrainJob.
    TrainJob(Box<TrainJob>),
    /// A Kubeflow Trainer v2 TrainingRuntime or ClusterTrainingRuntime (the request's kind
    /// says which).
    Runtime(Box<Runtime>),
    /// A Volcano `batch.volcano.sh/v1alpha1` Job (vcjob).
    VolcanoJob(Box<VolcanoJob>),
    /// A Volcano `scheduling.volcano.sh/v1beta1` PodGroup.
    VolcanoPodGroup(Box<VolcanoPodGroup>),
}

/// What the decoded request is about; it borrows the object's text from the payload.
#[derive(Clone, Debug, PartialEq)]
pub struct Review<'a> {
    pub operation: Operation,
    /// The kind and version the object arrived as; lookups of related scheduling objects
    /// ask for the same version.
    pub kind: GroupVersionKind,
    /// The request's namespace (also where namespaced lookups go).
    pub namespace: String,
    pub object: Resource,
    /// Present on UPDATE. The old copy of a Pod or a Kubeflow job holds only what the update
    /// rules compare ([`Pod::decode_old`], [`KubeflowJob::decode_old`]).
    pub old_object: Option<Resource>,
    /// The object's `metadata` as the metadata rules read it ([`crate::rules::meta`]).
    pub metadata: Metadata<'a>,
    /// The old object's, on UPDATE.
    pub old_metadata: Option<Metadata<'a>>,
    /// The object exactly as it arrived; a mutating rule set edits a copy of this, so the
    /// patch Kubewarden computes holds only the fields it meant to change. Lent by the
    /// payload: copying it would cost as much as a megabyte-sized object's decode.
    pub raw_object: Cow<'a, str>,
}

impl Review<'_> {
    /// The review with its own copy of the object's text.
    pub fn into_owned(self) -> Review<'static> {
        Review {
            raw_object: Cow::Owned(self.raw_object.into_owned()),
            metadata: self.metadata.into_owned(),
            old_metadata: self.old_metadata.map(Metadata::into_owned),
            ..self
        }
    }

    pub fn is_update(&self) -> bool {
        self.operation == Operation::Update && self.old_object.is_some()
    }

    /// The `scheduling.k8s.io` version of the object, for its kinds.
    pub fn scheduling_version(&self) -> Option<Version> {
        (self.kind.group == SCHEDULING_GROUP).then(|| Version::parse(&self.kind.version)).flatten()
    }
}

/// The families of kinds a rule set reads, as bits: a policy module decodes only its rule
/// set's ([`AdmissionRequest::review_for`]), so the others' decoders are left out of it and
/// their objects accepted untouched, as a policy accepts any kind it does not guard.
pub mod kinds {
    /// `scheduling.k8s.io` Workloads, PodGroups and CompositePodGroups.
    pub const SCHEDULING: u32 = 1;
    pub const POD: u32 = 1 << 1;
    /// `kubeflow.org/v1` jobs and `v2beta1` MPIJobs.
    pub const KUBEFLOW: u32 = 1 << 2;
    /// `batch/v1` Jobs and CronJobs.
    pub const BATCH: u32 = 1 << 3;
    /// `trainer.kubeflow.org` TrainJobs and runtimes.
    pub const TRAINER: u32 = 1 << 4;
    /// Volcano's vcjobs and PodGroups.
    pub const VOLCANO: u32 = 1 << 5;
    pub const ALL: u32 = SCHEDULING | POD | KUBEFLOW | BATCH | TRAINER | VOLCANO;
}

/// The family of a guarded kind.
fn family(gvk: &GroupVersionKind) -> u32 {
    match gvk.group.as_str() {
        "" => kinds::POD,
        SCHEDULING_GROUP => kinds::SCHEDULING,
        KUBEFLOW_GROUP => kinds::KUBEFLOW,
        batch::GROUP => kinds::BATCH,
        volcano::JOB_GROUP | volcano::SCHEDULING_GROUP => kinds::VOLCANO,
        _ => kinds::TRAINER,
    }
}

/// A set of kind families, as a type (see [`kinds`]).
pub trait Reads {
    const KINDS: u32;
}

/// Every family: what the CLI and the playground read.
pub struct AllKinds;
impl Reads for AllKinds {
    const KINDS: u32 = kinds::ALL;
}

/// Why a request could not be reviewed: the policy rejects it with code 400.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRequest(pub String);

/// The kinds this project guards, for messages.
pub const GUARDED_KINDS: &str = "scheduling.k8s.io/v1, v1beta1, v1alpha3 and v1alpha2 Workload and PodGroup, scheduling.k8s.io/v1alpha3 CompositePodGroup, v1 Pod, batch/v1 Job and CronJob, kubeflow.org/v1 TFJob, PyTorchJob, MPIJob, JAXJob, PaddleJob and XGBoostJob, kubeflow.org/v2beta1 MPIJob, trainer.kubeflow.org/v1alpha1 TrainJob, TrainingRuntime and ClusterTrainingRuntime, batch.volcano.sh/v1alpha1 Job, scheduling.volcano.sh/v1beta1 PodGroup";

/// Whether this kind is one the rule sets know how to read: `Ok(false)` for kinds outside
/// the project's API groups (accepted untouched), an error for unknown kinds inside them.
/// In `scheduling.k8s.io` only Workload, PodGroup and CompositePodGroup are the project's
/// (PriorityClass is not); an unknown version of those is an error, never a silent accept.
fn is_guarded(gvk: &GroupVersionKind) -> Result<bool, BadRequest> {
    let known = match gvk.group.as_str() {
        "" => return Ok(gvk.version == "v1" && gvk.kind == "Pod"),
        SCHEDULING_GROUP if !scheduling::KINDS.contains(&gvk.kind.as_str()) => return Ok(false),
        SCHEDULING_GROUP => Version::parse(&gvk.version).is_some_and(|v| v.serves(&gvk.kind)),
        KUBEFLOW_GROUP => JobKind::from_kind(&gvk.kind).is_some_and(|k| KubeflowVersion::of(&gvk.version, k).is_some()),
        trainer::GROUP => gvk.version == trainer::VERSION && TrainerKind::from_kind(&gvk.kind).is_some(),
        // Other batch kinds and versions are not the project's.
        batch::GROUP => return Ok(gvk.version == batch::VERSION && BatchKind::from_kind(&gvk.kind).is_some()),
        // Volcano's other kinds (Queue, Command, CronJob, ...) are not the project's.
        volcano::JOB_GROUP => return Ok(gvk.version == volcano::JOB_VERSION && gvk.kind == "Job"),
        volcano::SCHEDULING_GROUP => {
            return Ok(gvk.version == volcano::SCHEDULING_VERSION && gvk.kind == "PodGroup");
        }
        _ => return Ok(false),
    };
    if known {
        Ok(true)
    } else {
        Err(BadRequest(format!(
            "unsupported kind {} {}: this policy validates {}",
            gvk.api_version(),
            gvk.kind,
            if gvk.group == SCHEDULING_GROUP { scheduling::UNDERSTOOD } else { GUARDED_KINDS }
        )))
    }
}

/// Whether some rule set reviews objects of this kind, i.e. the policies' webhook rules send
/// them these objects (tools that read manifests skip every other kind).
pub fn guards(gvk: &GroupVersionKind) -> bool {
    matches!(is_guarded(gvk), Ok(true))
}

impl Resource {
    /// Every group spec in a Workload, PodGroup, CompositePodGroup, or a Job's or CronJob's
    /// `spec.scheduling` (none for other kinds).
    pub fn group_specs(&self) -> Vec<GroupSpec<'_>> {
        match self {
            Resource::PodGroup(pg) => vec![pg.group_spec()],
            Resource::CompositePodGroup(cpg) => vec![cpg.group_spec()],
            Resource::Workload(w) => w.group_specs(),
            Resource::BatchJob(job) => job.group_spec().into_iter().collect(),
            Resource::Pod(_)
            | Resource::Kubeflow(_)
            | Resource::TrainJob(_)
            | Resource::Runtime(_)
            | Resource::VolcanoJob(_)
            | Resource::VolcanoPodGroup(_) => Vec::new(),
        }
    }

    /// Decodes the JSON `text` as the kind `gvk` names, one of `K`'s families. The caller has
    /// checked the kind is guarded.
    fn decode<K: Reads>(gvk: &GroupVersionKind, text: &str) -> Result<Resource, String> {
        Self::decode_as::<K>(gvk, text, false)
    }

    /// Decodes the object an UPDATE replaces: as [`Resource::decode`], but a Pod or a
    /// Kubeflow job is read only as far as the update rules compare it.
    fn decode_old<K: Reads>(gvk: &GroupVersionKind, text: &str) -> Result<Resource, String> {
        Self::decode_as::<K>(gvk, text, true)
    }

    /// Each arm is guarded by its family's bit, a constant in each instance: the decoders of
    /// the families `K` does not read are compiled out.
    fn decode_as<K: Reads>(gvk: &GroupVersionKind, text: &str, old: bool) -> Result<Resource, String> {
        let reads = |family: u32| K::KINDS & family != 0;
        let version =
            || Version::parse(&gvk.version).ok_or_else(|| format!("unsupported version {}", gvk.api_version()));
        Ok(match gvk.kind.as_str() {
            // Volcano's kinds share names with others: their group says which.
            "Job" if gvk.group == volcano::JOB_GROUP && reads(kinds::VOLCANO) => {
                let decode = if old { VolcanoJob::decode_old } else { VolcanoJob::decode };
                Resource::VolcanoJob(Box::new(decode(text)?))
            }
            "PodGroup" if gvk.group == volcano::SCHEDULING_GROUP && reads(kinds::VOLCANO) => {
                Resource::VolcanoPodGroup(Box::new(VolcanoPodGroup::decode(text)?))
            }
            "Workload" if reads(kinds::SCHEDULING) => Resource::Workload(Box::new(Workload::decode(version()?, text)?)),
            "PodGroup" if reads(kinds::SCHEDULING) => Resource::PodGroup(Box::new(PodGroup::decode(version()?, text)?)),
            "CompositePodGroup" if reads(kinds::SCHEDULING) => {
                Resource::CompositePodGroup(Box::new(CompositePodGroup::decode(text)?))
            }
            "Pod" if old && reads(kinds::POD) => Resource::Pod(Box::new(Pod::decode_old(text)?)),
            "Pod" if reads(kinds::POD) => Resource::Pod(Box::new(crate::decode::from_str(text)?)),
            "TrainJob" if reads(kinds::TRAINER) => Resource::TrainJob(Box::new(crate::decode::from_str(text)?)),
            "TrainingRuntime" | "ClusterTrainingRuntime" if reads(kinds::TRAINER) => {
                Resource::Runtime(Box::new(crate::decode::from_str(text)?))
            }
            kind if gvk.group == batch::GROUP && reads(kinds::BATCH) => {
                let kind = BatchKind::from_kind(kind).ok_or_else(|| format!("unsupported kind {kind}"))?;
                Resource::BatchJob(Box::new(BatchJob::decode(kind, text)?))
            }
            kind if gvk.group == KUBEFLOW_GROUP && reads(kinds::KUBEFLOW) => {
                let job_kind = JobKind::from_kind(kind).ok_or_else(|| format!("unsupported kind {kind}"))?;
                let version = KubeflowVersion::of(&gvk.version, job_kind)
                    .ok_or_else(|| format!("unsupported version {}", gvk.api_version()))?;
                let decode = if old { KubeflowJob::decode_old } else { KubeflowJob::decode };
                Resource::Kubeflow(Box::new(decode(job_kind, version, text)?))
            }
            kind => return Err(format!("unsupported kind {kind}")),
        })
    }
}

fn operation(op: &str) -> Result<Operation, BadRequest> {
    match op {
        "CREATE" => Ok(Operation::Create),
        "UPDATE" => Ok(Operation::Update),
        "DELETE" => Ok(Operation::Delete),
        "CONNECT" => Ok(Operation::Connect),
        "" => Err(BadRequest("request.operation: Required value".into())),
        other => Err(BadRequest(format!(
            "request.operation: Unsupported value: {other:?}: supported values: \"CREATE\", \"UPDATE\", \"DELETE\", \"CONNECT\""
        ))),
    }
}

/// An object's `apiVersion`, `kind` and `metadata`, read without decoding the rest. Values
/// of the wrong type read as absent here: the typed decode reports them.
#[derive(Default)]
struct ObjectHeader<'a> {
    api_version: Option<&'a RawValue>,
    kind: Option<&'a RawValue>,
    metadata: Option<&'a RawValue>,
}

/// Reads an object's entries only until the header is complete: objects lead with
/// `apiVersion`, `kind` and `metadata`, so the spec (which may be megabytes) is not scanned
/// a second time.
struct HeaderReader<'h, 'a>(&'h mut ObjectHeader<'a>);

impl<'de> serde::de::Visitor<'de> for HeaderReader<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<crate::decode::Text<'de>>()? {
            let slot = match key.0.as_ref() {
                "apiVersion" => &mut self.0.api_version,
                "kind" => &mut self.0.kind,
                "metadata" => &mut self.0.metadata,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
            if self.0.api_version.is_some() && self.0.kind.is_some() && self.0.metadata.is_some() {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// A raw JSON string's value, lent where it has no escapes; anything else reads as empty.
fn raw_string(raw: Option<&RawValue>) -> Cow<'_, str> {
    raw.and_then(|r| serde_json::from_str::<crate::decode::Text>(r.get()).ok()).map(|t| t.0).unwrap_or_default()
}

impl ObjectHeader<'_> {
    fn read<'a>(what: &str, object: Option<&'a RawValue>) -> Result<ObjectHeader<'a>, BadRequest> {
        let type_error = |t: &str| BadRequest(format!("request.{what}: must be a JSON object, got {t}"));
        let object = object.ok_or_else(|| type_error("null"))?;
        if json_type(object) != "an object" {
            return Err(type_error(json_type(object)));
        }
        let mut header = ObjectHeader::default();
        let mut de = serde_json::Deserializer::from_str(object.get());
        // Stopping early leaves the rest of the object unread, which serde_json reports as an
        // error; the payload was read as JSON already, so what the reader found is the header.
        let _ = serde::Deserializer::deserialize_map(&mut de, HeaderReader(&mut header));
        Ok(header)
    }

    fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::new(&raw_string(self.api_version), &raw_string(self.kind))
    }

    fn namespace(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Meta<'a> {
            #[serde(borrow)]
            namespace: Option<&'a RawValue>,
        }
        let meta: Meta = serde_json::from_str(self.metadata?.get()).ok()?;
        meta.namespace.and_then(|n| serde_json::from_str::<String>(n.get()).ok())
    }

    /// Objects may leave apiVersion/kind out; when present they must agree with the request.
    fn check_kind(&self, what: &str, gvk: &GroupVersionKind) -> Result<(), BadRequest> {
        // Compared as written (every request makes this check): the object's `apiVersion` is
        // the request's `group/version`, or its bare version for the core group.
        let (api_version, kind) = (raw_string(self.api_version), raw_string(self.kind));
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
        // As `GroupVersionKind::api_version` writes each (`/v` is the core group's `v`),
        // compared without writing the request's.
        let own = if group.is_empty() { version } else { &api_version };
        let same_api_version = match own.strip_prefix(gvk.group.as_str()) {
            _ if gvk.group.is_empty() => own == gvk.version,
            Some(rest) => rest.strip_prefix('/') == Some(gvk.version.as_str()),
            None => false,
        };
        if (!kind.is_empty() && kind != gvk.kind) || (!version.is_empty() && !same_api_version) {
            let own = self.gvk();
            return Err(BadRequest(format!(
                "request.{what}: is a {} {}, but the request is for {} {}",
                own.api_version(),
                own.kind,
                gvk.api_version(),
                gvk.kind
            )));
        }
        Ok(())
    }
}

/// Whether an object is a Workload or PodGroup whose controller owner is a `batch/v1` Job. From
/// Kubernetes 1.38 (gate `WorkloadWithJob`) the Job controller makes one pair for every root
/// Job, and a rejected or slow create stops that Job from making Pods. Such an object is not
/// reviewed: the apiserver has validated it before any webhook, the Job it is made from was
/// reviewed when it was created, and a finding on it could only be a false one or one the Job
/// already had. An owner reference can be written by hand, but the garbage collector deletes
/// an object whose owner does not exist.
fn made_by_job_controller(gvk: &GroupVersionKind, metadata: &Metadata) -> bool {
    gvk.group == SCHEDULING_GROUP
        && matches!(gvk.kind.as_str(), "Workload" | "PodGroup")
        && metadata.controller.as_ref().is_some_and(|(api_version, kind)| api_version == "batch/v1" && kind == "Job")
}

/// One small field of the request, decoded with its path; `null` and missing read as the
/// default.
fn request_field<'a, T: Deserialize<'a> + Default>(name: &str, raw: Option<&'a RawValue>) -> Result<T, BadRequest> {
    let Some(raw) = raw else { return Ok(T::default()) };
    // The error's path starts with `name`: the `request.` before it is written only then.
    crate::decode::from_str_at::<Option<T>>(name, raw.get())
        .map(Option::unwrap_or_default)
        .map_err(|e| BadRequest(format!("cannot read the admission request: request.{e}")))
}

impl<'a> AdmissionRequest<'a> {
    fn from_raw(raw: RawRequest<'a>) -> Result<AdmissionRequest<'a>, BadRequest> {
        Ok(AdmissionRequest {
            uid: request_field("uid", raw.uid)?,
            kind: request_field("kind", raw.kind)?,
            operation: request_field("operation", raw.operation)?,
            namespace: request_field("namespace", raw.namespace)?,
            name: request_field("name", raw.name)?,
            sub_resource: request_field("subResource", raw.sub_resource)?,
            object: raw.object,
            old_object: raw.old_object,
        })
    }

    /// Reads an AdmissionRequest from its JSON text (tests, and faces that build one).
    pub fn parse(text: &'a str) -> Result<AdmissionRequest<'a>, BadRequest> {
        match serde_json::from_str::<Option<ObjectOnly<RawRequest>>>(text) {
            Ok(Some(ObjectOnly(raw))) => AdmissionRequest::from_raw(raw),
            Ok(None) => Err(BadRequest("request: must be a JSON object, got null".into())),
            Err(e) => match RawValue::from_string(text.to_string()) {
                Ok(raw) if json_type(&raw) != "an object" => {
                    Err(BadRequest(format!("request: must be a JSON object, got {}", json_type(&raw))))
                }
                _ => Err(BadRequest(format!("cannot read the admission request: not valid JSON: {e}"))),
            },
        }
    }

    /// Decodes the request into a [`Review`] of any kind gangwarden guards (the CLI and the
    /// playground). `Ok(None)`: nothing to review (a kind no rule set guards, a subresource, a
    /// DELETE or CONNECT, a Workload or PodGroup the Job controller made).
    pub fn review(&self) -> Result<Option<Review<'a>>, BadRequest> {
        self.review_for::<AllKinds>()
    }

    /// As [`AdmissionRequest::review`], for a rule set that reads the families `K` only:
    /// another guarded kind is accepted untouched, without being decoded.
    pub fn review_for<K: Reads>(&self) -> Result<Option<Review<'a>>, BadRequest> {
        let operation = operation(&self.operation)?;
        if !self.sub_resource.is_empty() || matches!(operation, Operation::Delete | Operation::Connect) {
            return Ok(None);
        }
        let header = ObjectHeader::read("object", self.object);
        let gvk = if !self.kind.kind.is_empty() {
            self.kind.clone()
        } else {
            // A request without its kind (a bare object handed to a local test run) is about
            // the object's own.
            header.as_ref().map(ObjectHeader::gvk).unwrap_or_default()
        };
        if gvk.kind.is_empty() {
            return Err(BadRequest(
                "request.kind: Required value: the request names no kind and the object has none".into(),
            ));
        }
        if !is_guarded(&gvk)? {
            return Ok(None);
        }
        // The request's own shape is checked whatever the kind; a kind the rule set does not
        // read is then accepted without its object being decoded.
        let header = header?;
        header.check_kind("object", &gvk)?;
        let old_raw = match (operation, self.old_object) {
            (Operation::Update, Some(old)) => {
                let old_header = ObjectHeader::read("oldObject", Some(old))?;
                old_header.check_kind("oldObject", &gvk)?;
                Some((old, old_header.metadata))
            }
            _ => None,
        };
        if K::KINDS & family(&gvk) == 0 {
            return Ok(None);
        }
        let metadata = |what: &str, raw: Option<&'a RawValue>| match raw {
            None => Ok(Metadata::default()),
            Some(raw) => crate::decode::from_str_at::<Option<Metadata>>("metadata", raw.get())
                .map(Option::unwrap_or_default)
                .map_err(|e| BadRequest(format!("cannot decode {what} as {}: {e}", gvk.kind))),
        };
        // The metadata before the object: it says whether the object is reviewed at all.
        let own_metadata = metadata("request.object", header.metadata)?;
        if made_by_job_controller(&gvk, &own_metadata) {
            return Ok(None);
        }
        let decode = |what: &str, raw: &RawValue, decode: fn(&GroupVersionKind, &str) -> Result<Resource, String>| {
            decode(&gvk, raw.get()).map_err(|e| BadRequest(format!("cannot decode {what} as {}: {e}", gvk.kind)))
        };
        // `read` has checked the object is there.
        let Some(raw_object) = self.object else { return Err(BadRequest("request.object: Required value".into())) };
        let object = decode("request.object", raw_object, Resource::decode::<K>)?;
        let old_object = match old_raw {
            Some((old, _)) => Some(decode("request.oldObject", old, Resource::decode_old::<K>)?),
            None => None,
        };
        let old_metadata = match old_raw {
            Some((_, raw)) => Some(metadata("request.oldObject", raw)?),
            None => None,
        };
        let namespace = if self.namespace.is_empty() {
            header.namespace().unwrap_or_else(|| "default".into())
        } else {
            self.namespace.clone()
        };
        Ok(Some(Review {
            metadata: own_metadata,
            old_metadata,
            operation,
            kind: gvk,
            namespace,
            object,
            old_object,
            raw_object: Cow::Borrowed(raw_object.get()),
        }))
    }
}

/// Reviews an AdmissionRequest held as a value (tests, and faces that build one).
pub fn review_request(request: &Value) -> Result<Option<Review<'static>>, BadRequest> {
    let text = request.to_string();
    Ok(AdmissionRequest::parse(&text)?.review()?.map(Review::into_owned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Req(Value);

    impl Req {
        fn review(&self) -> Result<Option<Review<'static>>, BadRequest> {
            review_request(&self.0)
        }
    }

    fn req(v: Value) -> Req {
        Req(v)
    }

    #[test]
    fn decodes_a_podgroup_create() {
        let r = req(json!({"uid": "1", "operation": "CREATE", "namespace": "ml",
            "kind": {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"},
            "object": {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
                       "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}}));
        let review = r.review().unwrap().unwrap();
        assert_eq!(review.namespace, "ml");
        let Resource::PodGroup(pg) = review.object else { panic!("not a PodGroup") };
        assert_eq!(pg.group_spec().gang_min_count(), Some(2));
    }

    /// A Workload or PodGroup whose controller owner is a Job is not reviewed, even one no rule
    /// set could read; the same object with the Job as a plain owner, and a Pod the Job
    /// controls, are.
    #[test]
    fn only_the_job_controllers_workloads_and_podgroups_go_unreviewed() {
        let request = |version: &str, kind: &str, controller: bool, spec: Value| {
            let group = if kind == "Pod" { "" } else { "scheduling.k8s.io" };
            let api_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
            req(json!({"uid": "1", "operation": "CREATE", "namespace": "ml",
                "kind": {"group": group, "version": version, "kind": kind},
                "object": {"apiVersion": api_version, "kind": kind,
                           "metadata": {"name": "train", "ownerReferences": [
                               {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "u", "controller": controller}]},
                           "spec": spec}}))
        };
        let group = json!({"workloadRef": {"workloadName": "train", "templateName": "train"},
                           "schedulingPolicy": {"gang": {"minCount": 2}}});
        let workload = json!({"podGroupTemplates": [{"name": "train", "schedulingPolicy": {"basic": {}}}]});
        for version in ["v1beta1", "v1"] {
            assert_eq!(request(version, "PodGroup", true, group.clone()).review(), Ok(None), "{version}");
            assert_eq!(request(version, "Workload", true, workload.clone()).review(), Ok(None), "{version}");
            // Not decoded: a spec of the wrong type changes nothing.
            assert_eq!(request(version, "Workload", true, json!(7)).review(), Ok(None), "{version}");
            assert!(request(version, "PodGroup", false, group.clone()).review().unwrap().is_some(), "{version}");
        }
        assert!(request("v1", "Pod", true, json!({"containers": []})).review().unwrap().is_some());
        // Its metadata is read, and must read.
        let mut broken = request("v1beta1", "PodGroup", true, group);
        broken.0["object"]["metadata"]["labels"] = json!([]);
        assert!(
            broken.review().unwrap_err().0.starts_with("cannot decode request.object as PodGroup: metadata.labels:")
        );
    }

    #[test]
    fn the_raw_object_is_lent_by_the_payload() {
        let object = r#"{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "spec": {"containers": []}}"#;
        let text = format!(r#"{{"operation": "CREATE", "object": {object}}}"#);
        let review = AdmissionRequest::parse(&text).unwrap().review().unwrap().unwrap();
        assert!(matches!(review.raw_object, Cow::Borrowed(o) if o == object));
        let owned = review.clone().into_owned();
        assert!(matches!(owned.raw_object, Cow::Owned(_)));
        assert_eq!(owned, review);
    }

    #[test]
    fn skips_what_it_does_not_guard() {
        let base = json!({"operation": "CREATE", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "object": {}});
        assert_eq!(req(base).review(), Ok(None));
        let status = json!({"operation": "UPDATE", "subResource": "status", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"}, "object": 3});
        assert_eq!(req(status).review(), Ok(None));
        let delete =
            json!({"operation": "DELETE", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": null});
        assert_eq!(req(delete).review(), Ok(None));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        let unknown = json!({"operation": "CREATE", "kind": {"group": "kubeflow.org", "version": "v1", "kind": "FooJob"}, "object": {}});
        assert_eq!(
            req(unknown).review().unwrap_err().0,
            format!("unsupported kind kubeflow.org/v1 FooJob: this policy validates {GUARDED_KINDS}")
        );
        let wrong_type = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"},
            "object": {"spec": {"schedulingPolicy": {"gang": {"minCount": "four"}}}}});
        assert_eq!(
            req(wrong_type).review().unwrap_err().0,
            "cannot decode request.object as PodGroup: spec.schedulingPolicy.gang.minCount: invalid type: string \"four\", expected i32"
        );
        let null =
            json!({"operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": null});
        assert_eq!(req(null).review().unwrap_err().0, "request.object: must be a JSON object, got null");
        let mismatch = json!({"operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": {"apiVersion": "v1", "kind": "Service"}});
        assert_eq!(
            req(mismatch).review().unwrap_err().0,
            "request.object: is a v1 Service, but the request is for v1 Pod"
        );
        assert_eq!(review_request(&json!([1])).unwrap_err().0, "request: must be a JSON object, got an array");
        let bad_op = json!({"operation": "PATCH", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "object": {}});
        assert!(req(bad_op).review().unwrap_err().0.starts_with("request.operation: Unsupported value: \"PATCH\""));
    }

    #[test]
    fn an_unknown_scheduling_version_names_the_versions_understood() {
        let unknown = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha1", "kind": "PodGroup"}, "object": {}});
        assert_eq!(
            req(unknown).review().unwrap_err().0,
            format!(
                "unsupported kind scheduling.k8s.io/v1alpha1 PodGroup: this policy validates {}",
                scheduling::UNDERSTOOD
            )
        );
        // Other kinds of the group (PriorityClass) are not the project's.
        let class = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1", "kind": "PriorityClass"}, "object": {}});
        assert_eq!(req(class).review(), Ok(None));
        let cpg = json!({"operation": "CREATE", "kind": {"group": "scheduling.k8s.io", "version": "v1alpha3", "kind": "CompositePodGroup"},
            "object": {"metadata": {"name": "c"}, "spec": {"schedulingPolicy": {"basic": {}}}}});
        let review = req(cpg).review().unwrap().unwrap();
        assert_eq!(review.scheduling_version(), Some(Version::V1alpha3));
        assert!(matches!(review.object, Resource::CompositePodGroup(_)));
    }

    #[test]
    fn the_objects_api_version_is_compared_as_the_request_writes_it() {
        let header = |api_version: &str| {
            let raw = RawValue::from_string(json!({"apiVersion": api_version, "kind": "Job"}).to_string()).unwrap();
            let header = ObjectHeader::read("object", Some(&raw)).unwrap();
            let gvk = |g: &str, v: &str| GroupVersionKind { group: g.into(), version: v.into(), kind: "Job".into() };
            [gvk("batch", "v1"), gvk("", "v1"), gvk("", "batch/v1"), gvk("batch", "v2"), gvk("batc", "h/v1")]
                .map(|g| header.check_kind("object", &g).is_ok())
        };
        // Columns: batch/v1, core v1, a core version written `batch/v1`, batch/v2, `batc` `h/v1`.
        assert_eq!(header("batch/v1"), [true, false, true, false, false]);
        assert_eq!(header("v1"), [false, true, false, false, false]);
        // `/v1` reads as the core group's v1; `batch/` names no version, so nothing to compare.
        assert_eq!(header("/v1"), [false, true, false, false, false]);
        assert_eq!(header("batch/"), [true, true, true, true, true]);
        assert_eq!(header("b/atch/v1"), [false, false, false, false, false]);
    }

    fn unreadable(payload: &[u8]) -> String {
        ValidationPayload::parse(payload).err().expect("unreadable").0
    }

    #[test]
    fn payloads_that_cannot_be_read_say_why() {
        assert_eq!(unreadable(b"[1, 2]"), "request: must be a JSON object, got null");
        assert_eq!(unreadable(b"{}"), "request: must be a JSON object, got null");
        assert_eq!(unreadable(br#"{"request": "x"}"#), "request: must be a JSON object, got a string");
        assert_eq!(unreadable(br#"{"request": [{}]}"#), "request: must be a JSON object, got an array");
        assert_eq!(
            unreadable(br#"{"request": {"operation": "CREATE", "operation": "DELETE"}}"#),
            "cannot read the validation request: duplicate field `operation` at line 1 column 47"
        );
        assert_eq!(
            unreadable(br#"{"request": {"uid": 3}}"#),
            "cannot read the admission request: request.uid: invalid type: integer `3`, expected a string"
        );
        assert_eq!(
            unreadable(br#"{"request": {"kind": {"group": 1}}}"#),
            "cannot read the admission request: request.kind.group: invalid type: integer `1`, expected a string"
        );
        assert_eq!(
            unreadable(b"{\"request\": {\"uid\": \"\xff\"}}"),
            "cannot read the validation request: not valid UTF-8: invalid utf-8 sequence of 1 bytes from index 21"
        );
        assert_eq!(
            unreadable(br#"{"request": {"#),
            "cannot read the validation request: not valid JSON: EOF while parsing an object at line 1 column 13"
        );
        let ok =
            ValidationPayload::parse(br#"{"request": {"operation": "CREATE", "object": {"a": 1}}, "settings": null}"#)
                .ok()
                .unwrap();
        assert_eq!(
            (ok.request.operation.as_str(), ok.request.object.map(RawValue::get)),
            ("CREATE", Some(r#"{"a": 1}"#))
        );
        assert!(ok.settings.is_none());
    }

    #[test]
    fn falls_back_to_the_object_kind() {
        let r = req(
            json!({"operation": "CREATE", "object": {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "j", "namespace": "ml"}}}),
        );
        let review = r.review().unwrap().unwrap();
        assert_eq!(review.namespace, "ml");
        assert!(matches!(review.object, Resource::Kubeflow(_)));
    }
}

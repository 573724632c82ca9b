//! `batch/v1` Jobs and CronJobs: the parts the rules read.
//!
//! Kubernetes 1.37 lets a Job ask for workload-aware scheduling itself (`spec.scheduling`,
//! gate `WorkloadWithJob`); the Job controller then makes a Workload and a PodGroup from it.
//! A CronJob carries the same JobSpec at `spec.jobTemplate.spec`. Of the rest only what the
//! rules compare is decoded (`parallelism`, `completions`, the Pod template's annotations,
//! claims and the claims its containers request), so a Job that asks for nothing costs a scan
//! of its text.
//!
//! `spec.scheduling` is read with k8s-openapi 0.29 types: the `v1alpha3` scheduling policy
//! (whose gang leaves `minCount` to the controller) and, for the rest, the `v1beta1` building
//! blocks a PodGroup spec is read with, whose JSON is the same (`schedulingConstraints`,
//! `disruptionMode`, `resourceClaims`), so each policy module carries one decoder for them.
//! One decoder also reads both kinds and both copies of an UPDATE: every decoder of a type
//! costs each policy module its size (about 40 KiB for a second copy of this tree).

use std::collections::BTreeMap;

use k8s_openapi_137::api::scheduling::{v1alpha3 as a3, v1beta1 as b1};
use serde::Deserialize;

use crate::decode::null_as_default;
use crate::field::Path;
use crate::pod::PodTemplateSpec;

pub const GROUP: &str = "batch";
pub const VERSION: &str = "v1";

/// The annotation with which a Job owned by a parent controller names the parent Workload's
/// template its PodGroup is made from (KEP-5547).
pub const GROUP_TEMPLATE_ANNOTATION: &str = "scheduling.k8s.io/group-template-name";

/// The two kinds that hold a JobSpec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchKind {
    Job,
    CronJob,
}

impl BatchKind {
    pub fn from_kind(kind: &str) -> Option<BatchKind> {
        match kind {
            "Job" => Some(BatchKind::Job),
            "CronJob" => Some(BatchKind::CronJob),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Job => "Job",
            BatchKind::CronJob => "CronJob",
        }
    }

    /// Where the JobSpec sits: `spec`, or `spec.jobTemplate.spec` in a CronJob.
    pub fn spec_path(self) -> Path {
        match self {
            BatchKind::Job => Path::new("spec"),
            BatchKind::CronJob => Path::new("spec").child("jobTemplate").child("spec"),
        }
    }
}

/// `spec.scheduling` (k8s-openapi 0.29 `batch::v1::JobSchedulingConfiguration`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobScheduling {
    pub scheduling_policy: Option<a3::WorkloadPodGroupSchedulingPolicy>,
    pub scheduling_constraints: Option<b1::PodGroupSchedulingConstraints>,
    pub disruption_mode: Option<b1::DisruptionMode>,
    pub resource_claims: Option<Vec<b1::PodGroupResourceClaim>>,
}

/// A Job's (or a CronJob's job template's) spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobSpec {
    pub parallelism: Option<i32>,
    pub completions: Option<i32>,
    pub scheduling: Option<JobScheduling>,
    pub template: PodTemplateSpec,
}

impl JobSpec {
    /// `parallelism`, which the apiserver defaults to 1.
    pub fn parallelism(&self) -> i32 {
        self.parallelism.unwrap_or(1)
    }

    /// How many Pods the Job controller runs at once at the start: `parallelism`, or fewer
    /// when fewer completions are asked for (Kueue's pod set count for a Job, too).
    pub fn pods_at_once(&self) -> i32 {
        match self.completions {
            Some(c) if c < self.parallelism() => c,
            _ => self.parallelism(),
        }
    }
}

/// One `metadata.ownerReferences` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OwnerReference {
    #[serde(deserialize_with = "null_as_default")]
    pub api_version: String,
    #[serde(deserialize_with = "null_as_default")]
    pub kind: String,
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
}

impl OwnerReference {
    /// The API group of the owner.
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }
}

/// A Job's own `metadata`: its owners and annotations decide who makes its Workload.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobMeta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub owner_references: Option<Vec<OwnerReference>>,
    pub annotations: Option<BTreeMap<String, String>>,
}

/// A Job or a CronJob, read as the JobSpec it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchJob {
    pub kind: BatchKind,
    pub metadata: JobMeta,
    /// The Job's spec, or the CronJob's `spec.jobTemplate.spec` (default when absent).
    pub spec: JobSpec,
    /// A CronJob's `spec.jobTemplate.metadata` labels and annotations, which each Job it makes
    /// carries (Kueue reads its queue and partial admission there); empty for a Job.
    pub template_labels: BTreeMap<String, String>,
    pub template_annotations: BTreeMap<String, String>,
}

/// A Job or a CronJob as written: one type reads both, a CronJob's spec being read for its
/// `jobTemplate` and a Job's for its own fields.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Written {
    #[serde(deserialize_with = "null_as_default")]
    metadata: JobMeta,
    spec: Option<WrittenSpec>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct WrittenSpec {
    parallelism: Option<i32>,
    completions: Option<i32>,
    scheduling: Option<JobScheduling>,
    #[serde(deserialize_with = "null_as_default")]
    template: PodTemplateSpec,
    /// A CronJob's.
    job_template: Option<Box<WrittenTemplate>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct WrittenTemplate {
    #[serde(deserialize_with = "null_as_default")]
    metadata: TemplateLabels,
    spec: Option<WrittenSpec>,
}

/// A job template's `metadata`: only its labels and annotations are read.
#[derive(Default, Deserialize)]
#[serde(default)]
struct TemplateLabels {
    #[serde(deserialize_with = "null_as_default")]
    labels: BTreeMap<String, String>,
    #[serde(deserialize_with = "null_as_default")]
    annotations: BTreeMap<String, String>,
}

impl From<WrittenSpec> for JobSpec {
    fn from(s: WrittenSpec) -> JobSpec {
        JobSpec {
            parallelism: s.parallelism,
            completions: s.completions,
            scheduling: s.scheduling,
            template: s.template,
        }
    }
}

impl BatchJob {
    /// Decodes a Job or a CronJob (both copies of an UPDATE alike: a Job's Pod template is
    /// read as narrowly as the rules need).
    pub fn decode(kind: BatchKind, text: &str) -> Result<BatchJob, String> {
        let written: Written = crate::decode::from_str(text)?;
        let (spec, template) = match kind {
            BatchKind::Job => (written.spec, TemplateLabels::default()),
            BatchKind::CronJob => match written.spec.and_then(|s| s.job_template) {
                Some(t) => (t.spec, t.metadata),
                None => (None, TemplateLabels::default()),
            },
        };
        Ok(BatchJob {
            kind,
            metadata: written.metadata,
            spec: spec.map(JobSpec::from).unwrap_or_default(),
            template_labels: template.labels,
            template_annotations: template.annotations,
        })
    }

    /// Where the JobSpec sits.
    pub fn spec_path(&self) -> Path {
        self.kind.spec_path()
    }

    /// The owner that makes this Job's Workload itself, when there is one: a JobSet or a
    /// Kubeflow TrainJob (KEP-6089).
    pub fn workload_parent(&self) -> Option<&OwnerReference> {
        if self.kind != BatchKind::Job {
            return None;
        }
        self.metadata.owner_references.iter().flatten().find(|o| {
            matches!((o.group(), o.kind.as_str()), ("jobset.x-k8s.io", "JobSet") | ("trainer.kubeflow.org", "TrainJob"))
        })
    }

    /// The owner a delegated Job's annotation [`GROUP_TEMPLATE_ANNOTATION`] refers to: the
    /// JobSet or TrainJob, or else the Job's first owner.
    pub fn delegating_parent(&self) -> Option<&OwnerReference> {
        self.workload_parent().or_else(|| self.metadata.owner_references.as_ref()?.first())
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata.annotations.as_ref()?.get(key).map(String::as_str)
    }

    /// A label of a CronJob's job template.
    pub fn template_label(&self, key: &str) -> Option<&str> {
        self.template_labels.get(key).map(String::as_str)
    }

    /// An annotation of the Jobs this object makes: a Job's own, a CronJob's job template's.
    pub fn job_annotation(&self, key: &str) -> Option<&str> {
        match self.kind {
            BatchKind::Job => self.annotation(key),
            BatchKind::CronJob => self.template_annotations.get(key).map(String::as_str),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cron_job_is_read_as_its_job_template() {
        let cron = json!({"metadata": {"name": "nightly"}, "spec": {"schedule": "@daily", "jobTemplate": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"parallelism": 4, "completions": 2, "scheduling": {"schedulingPolicy": {"gang": {}}},
                     "template": {"metadata": {"annotations": {"k": "v"}}, "spec": {"containers": [{"name": "c"}]}}}}}});
        let job = BatchJob::decode(BatchKind::CronJob, &cron.to_string()).unwrap();
        assert_eq!(job.spec_path().as_str(), "spec.jobTemplate.spec");
        assert_eq!((job.spec.parallelism(), job.spec.pods_at_once()), (4, 2));
        let gang =
            job.spec.scheduling.as_ref().and_then(|s| s.scheduling_policy.as_ref()).and_then(|p| p.gang.as_ref());
        assert_eq!(gang.map(|g| g.min_count), Some(None));
        assert_eq!(job.template_label("a"), Some("b"));
        assert_eq!(job.spec.template.metadata.unwrap().annotations.unwrap()["k"], "v");
        assert_eq!(job.spec.template.spec.unwrap().containers[0].name, "c");
        // A Job's spec would be read as its own, not as a job template.
        let job = BatchJob::decode(BatchKind::Job, &cron.to_string()).unwrap();
        assert_eq!(job.spec.scheduling, None);
    }

    #[test]
    fn defaults_and_owners() {
        let job = BatchJob::decode(BatchKind::Job, r#"{"spec": null}"#).unwrap();
        assert_eq!((job.spec.parallelism(), job.spec.pods_at_once(), job.spec.scheduling.is_none()), (1, 1, true));
        let owned = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x"},
            {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "train", "controller": true}],
            "annotations": {"scheduling.k8s.io/group-template-name": "workers"}}});
        let job = BatchJob::decode(BatchKind::Job, &owned.to_string()).unwrap();
        assert_eq!(job.workload_parent().map(|o| o.name.as_str()), Some("train"));
        assert_eq!(job.annotation(GROUP_TEMPLATE_ANNOTATION), Some("workers"));
        assert_eq!(
            BatchJob::decode(BatchKind::Job, r#"{"spec": {"parallelism": "2"}}"#).unwrap_err(),
            "spec.parallelism: invalid type: string \"2\", expected i32"
        );
    }
}

//! Kubeflow Trainer v2 (`trainer.kubeflow.org/v1alpha1`): what Trainer's CRD rules (CEL) and
//! webhooks check of a TrainJob and of its runtime, with their wording and real JSON paths
//! (upstream reports some at stale ones: `spec.RuntimeRef`, `spec.templateSpec...`).
//!
//! The TrainJob rules that depend on the runtime look it up (the one lookup the TrainJob
//! webhook makes too) on CREATE. On UPDATE only changed `runtimePatches` are checked against
//! it, and a runtime deleted since is no error: upstream's webhook refuses every update of such
//! a TrainJob, Kueue's unsuspend included.

use std::collections::BTreeSet;

use super::*;
use crate::cluster::{Cluster, Query};
use crate::decode::RawJson;
use crate::field::BadValue;
use crate::trainer::{
    self, DATASET_INITIALIZER, DEPRECATION_POLICY_URL, INITIALIZER_VOLUME, LAUNCHER, MODEL_INITIALIZER, NODE, Runtime,
    RuntimeLookup, TrainJob, TrainerKind,
};

const TRAINJOB_CONTROLLER: &str = "trainer.kubeflow.org/trainjob-controller";
const MULTIKUEUE: &str = "kueue.x-k8s.io/multikueue";
/// Env names Trainer sets itself (`pkg/constants/constants.go`).
const TORCH_RESERVED_ENV: [&str; 5] =
    ["PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"];
const MPI_RESERVED_ENV: [&str; 4] = [
    "OMPI_MCA_orte_default_hostfile",
    "OMPI_MCA_plm_rsh_args",
    "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
];
const XGBOOST_RESERVED_ENV: [&str; 4] = ["DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"];
const FLUX_INSTALLER: &str = "flux-installer";
/// The PriorityClasses Kubernetes defines itself.
const SYSTEM_PRIORITY_CLASSES: [&str; 2] = ["system-cluster-critical", "system-node-critical"];

fn spec() -> Path {
    Path::new("spec")
}

/// The TrainJob rules.
pub(super) fn check_train_job(
    settings: &Settings,
    job: &TrainJob,
    old: Option<&TrainJob>,
    namespace: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    check_train_job_shape(settings, job, v);
    if let Some(old) = old {
        check_train_job_update(job, old, v);
    }
    let r = &job.spec.runtime_ref;
    let ref_path = spec().child("runtimeRef");
    if r.runtime_kind().is_none() {
        let detail = format!("unsupported runtime: {}.{}", r.kind(), r.api_group());
        v.deny(RUNTIME_REF, FieldError::invalid(ref_path, r.shown(), detail));
        return;
    }
    let updated = old.is_some();
    let patches_checked = |o: &TrainJob| {
        o.spec.runtime_ref == *r
            && o.spec.runtime_patches != job.spec.runtime_patches
            && (o.is_suspended() || job.is_suspended())
    };
    if old.is_some_and(|o| !patches_checked(o)) {
        return;
    }
    let Some(RuntimeLookup { kind, what, found }) = trainer::lookup_runtime(cluster, job, namespace) else { return };
    let runtime = match found {
        Ok(Some(runtime)) => runtime,
        Ok(None) if updated => return,
        Ok(None) => {
            let (resource, noun) = match kind {
                TrainerKind::TrainingRuntime => ("trainingruntimes", "trainingRuntime"),
                _ => ("clustertrainingruntimes", "clusterTrainingRuntime"),
            };
            let detail = format!(
                "{resource}.{} {:?} not found: specified {noun} must be created before the TrainJob is created",
                trainer::GROUP,
                r.name
            );
            v.deny(RUNTIME_EXISTS, FieldError::invalid(ref_path, r.shown(), detail));
            return;
        }
        Err(e) => {
            v.lookup_failed(RUNTIME_EXISTS, ref_path, &what, &e, settings.fail_on_lookup_error);
            return;
        }
    };
    if updated {
        check_patches_against_runtime(job, &runtime, &what, v);
        return;
    }
    if kind == TrainerKind::ClusterTrainingRuntime && runtime.is_deprecated() {
        v.warn(
            RUNTIME_DEPRECATED,
            ref_path,
            format!(
                "Referenced ClusterTrainingRuntime {:?} is deprecated and will be removed in a future release of Kubeflow Trainer. See runtime deprecation policy: {DEPRECATION_POLICY_URL}",
                runtime.name()
            ),
        );
    }
    check_against_runtime(job, &runtime, &what, v);
    check_priority_classes(settings, job, &runtime, &what, cluster, v);
}

/// What the CRD checks of the TrainJob alone.
fn check_train_job_shape(settings: &Settings, job: &TrainJob, v: &mut Verdict) {
    check_train_job_name(job, v);
    check_train_job_fields(settings, job, v);
}

/// V2-01, the CRD's name rules. Before the apiserver generates a name (this policy may mutate,
/// so it can be called first) the prefix is checked as the name it will make: at most 58
/// characters of it and 5 lowercase alphanumerics.
fn check_train_job_name(job: &TrainJob, v: &mut Verdict) {
    let meta = &job.metadata;
    // A name the apiserver refuses never reaches the webhook: that is `meta.name`'s to say.
    if !crate::rules::meta::apiserver_accepts_name(
        meta.name.as_deref().unwrap_or_default(),
        meta.generate_name.as_deref(),
    ) {
        return;
    }
    let name = meta.name.as_deref().filter(|n| !n.is_empty());
    let (path, shown, name) = match (name, meta.generate_name.as_deref().filter(|p| !p.is_empty())) {
        (Some(name), _) => (Path::new("metadata").child("name"), name, name.to_string()),
        (None, Some(prefix)) => (
            Path::new("metadata").child("generateName"),
            prefix,
            prefix.chars().take(58).chain("x0000".chars()).collect(),
        ),
        (None, None) => return,
    };
    if !is_rfc1035_label(&name) {
        v.deny(
            TRAINJOB_NAME,
            FieldError::invalid(path.clone(), shown, "metadata.name must match RFC 1035 DNS label format"),
        );
    }
    if name.len() > 63 {
        v.deny(TRAINJOB_NAME, FieldError::invalid(path, shown, "metadata.name must be no more than 63 characters"));
    }
}

/// What the CRD checks of the TrainJob's spec.
fn check_train_job_fields(settings: &Settings, job: &TrainJob, v: &mut Verdict) {
    if let Some(m) = job.spec.managed_by.as_deref().filter(|m| ![TRAINJOB_CONTROLLER, MULTIKUEUE].contains(m)) {
        v.deny(
            MANAGED_BY,
            FieldError::invalid(
                spec().child("managedBy"),
                m,
                format!("ManagedBy must be {TRAINJOB_CONTROLLER} or {MULTIKUEUE} if set"),
            ),
        );
    }
    if let Some(d) = job.spec.active_deadline_seconds {
        check_active_deadline(settings, spec().child("activeDeadlineSeconds"), d, 1, v);
    }
    // v2.3.0's CRD has no bound, and a negative count builds Jobs that cannot run and a wrong
    // gang size; Trainer's main branch gives the CRD `Minimum=0`: its wording.
    if let Some(n) = job.num_nodes().filter(|n| *n < 0) {
        let path = spec().child("trainer").child("numNodes");
        let detail = format!("{path} in body should be greater than or equal to 0");
        v.deny(NUM_NODES, FieldError::invalid(path, n, detail));
    }
    let initializer = job.spec.initializer.as_ref().map(RawJson::value);
    for source in ["dataset", "model"] {
        if let Some(uri) = initializer.as_ref().and_then(|i| i[source]["storageUri"].as_str())
            && !(uri.is_empty() || is_uri(uri))
        {
            v.deny(
                INITIALIZERS,
                FieldError::invalid(
                    spec().child("initializer").child(source).child("storageUri"),
                    uri,
                    "storageUri may be empty, or it must be a valid URI (scheme://...)",
                ),
            );
        }
    }
    for (i, patch) in job.patches().iter().enumerate() {
        let path = spec().child("runtimePatches").index(i).child("manager");
        v.deny_all(RUNTIME_PATCHES, domain_prefixed_path(&path, &patch.manager));
    }
}

/// `^[a-z]([-a-z0-9]*[a-z0-9])?$`
fn is_rfc1035_label(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_lowercase)
        && b.last().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// `^[A-Za-z][A-Za-z0-9+.-]*://.+$`
fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else { return false };
    let b = scheme.as_bytes();
    !rest.is_empty()
        && b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
}

/// apimachinery's `IsDomainPrefixedPath`: `<DNS subdomain>/<path>`.
fn domain_prefixed_path(path: &Path, value: &str) -> Vec<FieldError> {
    let Some((host, rest)) = value.split_once('/').filter(|(h, p)| !h.is_empty() && !p.is_empty()) else {
        return vec![FieldError::invalid(
            path.clone(),
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errors: Vec<FieldError> =
        names::is_dns1123_subdomain(host).into_iter().map(|m| FieldError::invalid(path.clone(), host, m)).collect();
    let path_chars = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(path_chars) {
        errors.push(FieldError::invalid(path.clone(), rest, "Invalid path"));
    }
    errors
}

/// `self == oldSelf` on `runtimeRef`, `trainer`, `initializer`, `activeDeadlineSeconds` and
/// `managedBy` (CEL runs only when the field is in both copies), and the webhook's rule that
/// `runtimePatches` change only while the job is suspended, before or after the update.
fn check_train_job_update(job: &TrainJob, old: &TrainJob, v: &mut Verdict) {
    let (new_s, old_s) = (&job.spec, &old.spec);
    // CEL errors show an object's type, not its value.
    let immutable = |v: &mut Verdict, rule, field: &str, value: BadValue| {
        v.deny(rule, FieldError::invalid(spec().child(field), value, "field is immutable"));
    };
    if new_s.runtime_ref != old_s.runtime_ref {
        immutable(v, RUNTIME_REF, "runtimeRef", BadValue::from("object"));
    }
    if let (Some(new), Some(old)) = (&new_s.trainer, &old_s.trainer)
        && new != old
    {
        immutable(v, TRAINJOB_IMMUTABLE, "trainer", BadValue::from("object"));
    }
    if let (Some(new), Some(old)) = (&new_s.initializer, &old_s.initializer)
        && new != old
    {
        immutable(v, TRAINJOB_IMMUTABLE, "initializer", BadValue::from("object"));
    }
    if let (Some(new), Some(old)) = (new_s.active_deadline_seconds, old_s.active_deadline_seconds)
        && new != old
    {
        immutable(v, TRAINJOB_IMMUTABLE, "activeDeadlineSeconds", BadValue::of(&new));
    }
    if let (Some(new), Some(old)) = (&new_s.managed_by, &old_s.managed_by)
        && new != old
    {
        immutable(v, MANAGED_BY_IMMUTABLE, "managedBy", BadValue::of(new));
    }
    if new_s.runtime_patches != old_s.runtime_patches && !job.is_suspended() && !old.is_suspended() {
        v.deny(
            RUNTIME_PATCHES,
            FieldError::forbidden(
                spec().child("runtimePatches"),
                "RuntimePatches can only be modified when the TrainJob is suspended before or after the update",
            ),
        );
    }
}

/// What the webhook's plugins check of a TrainJob against its runtime: the initializer jobs,
/// the patches, the framework's reserved env and, for MPI and Flux, their shapes.
fn check_against_runtime(job: &TrainJob, runtime: &Runtime, what: &str, v: &mut Verdict) {
    let r = &job.spec.runtime_ref;
    let ref_path = spec().child("runtimeRef");
    let invalid_ref = |v: &mut Verdict, rule, detail: String| {
        v.deny(rule, FieldError::invalid(ref_path.clone(), r.shown(), format!("{detail} ({what})")));
    };
    let initializer = job.spec.initializer.as_ref().map(RawJson::value);
    for (source, job_name, config) in
        [("dataset", DATASET_INITIALIZER, "datasetConfig"), ("model", MODEL_INITIALIZER, "modelConfig")]
    {
        if initializer.as_ref().is_none_or(|i| i[source].is_null()) {
            continue;
        }
        let Some(init_job) = runtime.job(job_name) else {
            invalid_ref(
                v,
                INITIALIZERS,
                format!("must have {job_name} job when trainJob is configured with input {config}"),
            );
            continue;
        };
        let Some(container) = init_job
            .template
            .spec
            .template
            .spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == job_name))
        else {
            invalid_ref(v, INITIALIZERS, format!("must have container with name - {job_name} in the {job_name} job"));
            continue;
        };
        if !container.volume_mounts.iter().flatten().any(|m| m.name == INITIALIZER_VOLUME) {
            invalid_ref(
                v,
                INITIALIZERS,
                format!(
                    "must have volumeMount with name - {INITIALIZER_VOLUME} in container {job_name} of the {job_name} job"
                ),
            );
        }
    }

    check_patches_against_runtime(job, runtime, what, v);

    let Some(ml) = runtime.spec.ml_policy.as_ref() else { return };
    let trainer = job.spec.trainer.as_ref();
    let env = trainer.and_then(|t| t.env.as_deref()).unwrap_or_default();
    let env_path = spec().child("trainer").child("env");
    let reserved = |names: &[&str]| -> Vec<&str> {
        let mut set: Vec<&str> = env.iter().map(|e| e.name.as_str()).filter(|n| names.contains(n)).collect();
        set.sort_unstable();
        set.dedup();
        set
    };
    if ml.torch.is_some() || ml.mpi.is_some() {
        let found = reserved(if ml.torch.is_some() { &TORCH_RESERVED_ENV } else { &MPI_RESERVED_ENV });
        if !found.is_empty() {
            let detail = format!("must not have reserved envs, invalid envs configured: [{}]", found.join(" "));
            v.deny(RESERVED_ENV, FieldError::invalid(env_path.clone(), BadValue::of(env), detail));
        }
    }
    if ml.xgboost.is_some() {
        for (i, e) in env.iter().enumerate().filter(|(_, e)| XGBOOST_RESERVED_ENV.contains(&e.name.as_str())) {
            let detail = format!("{} is reserved for the XGBoost runtime", e.name);
            v.deny(RESERVED_ENV, FieldError::forbidden(env_path.index(i), detail));
        }
    }
    if let Some(targets) = ml.torch.as_ref().and_then(|t| t.env_injection.as_ref()).map(|e| e.targets.as_slice()) {
        for target in targets {
            for c in &target.container_names {
                if !runtime.job(&target.job_name).is_some_and(|j| j.container_names().any(|n| n == c)) {
                    let detail = format!(
                        "envInjection target podSet {:?} container {c:?} not found in runtime template",
                        target.job_name
                    );
                    invalid_ref(v, ML_POLICY, detail);
                }
            }
        }
    }
    let num_nodes = trainer.and_then(|t| t.num_nodes);
    if ml.runs_launcher_as_node()
        && num_nodes.unwrap_or(1) >= 2
        && (runtime.job(LAUNCHER).is_none() || runtime.job(NODE).is_none())
    {
        v.deny(
            ML_POLICY,
            FieldError::invalid(
                spec().child("trainer").child("numNodes"),
                BadValue::of(&num_nodes),
                "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node",
            ),
        );
    }
    if let Some(flux) = ml.flux.as_ref() {
        let procs = trainer.and_then(|t| t.num_proc_per_node).or(flux.num_proc_per_node);
        if let Some(n) = procs.filter(|n| *n < 1) {
            v.deny(
                ML_POLICY,
                FieldError::invalid(
                    spec().child("trainer").child("numProcPerNode"),
                    n,
                    "must be greater than or equal to 1 for Flux TrainJob",
                ),
            );
        }
        let node_init =
            runtime.job(NODE).and_then(|j| j.template.spec.template.spec.as_ref()?.init_containers.as_ref());
        if node_init.is_some_and(|init| init.iter().any(|c| c.name == FLUX_INSTALLER)) {
            invalid_ref(v, ML_POLICY, format!("InitContainer '{FLUX_INSTALLER}' is reserved"));
        }
    }
}

/// The patches against the runtime's own template: upstream checks the template with the
/// patches merged in, where a patch's new job or container already exists.
fn check_patches_against_runtime(job: &TrainJob, runtime: &Runtime, what: &str, v: &mut Verdict) {
    for (i, patch) in job.patches().iter().enumerate() {
        let jobs_path = spec()
            .child("runtimePatches")
            .index(i)
            .child("trainingRuntimeSpec")
            .child("template")
            .child("spec")
            .child("replicatedJobs");
        for patched in patch.patched_jobs() {
            let job_path = jobs_path.index(patched.index);
            let Some(runtime_job) = runtime.job(patched.name) else {
                v.deny(
                    RUNTIME_PATCHES,
                    FieldError::invalid(
                        job_path.child("name"),
                        patched.name,
                        format!("must not have replicated job that doesn't exist in the runtime job template ({what})"),
                    ),
                );
                continue;
            };
            // Filled by inserting: `collect` would compile a sort of its own.
            let mut known = BTreeSet::new();
            known.extend(runtime_job.container_names());
            let pod_spec = job_path.child("template").child("spec").child("template").child("spec");
            for (k, name) in patched.init_containers.iter().enumerate() {
                if !known.contains(name) {
                    v.deny(
                        RUNTIME_PATCHES,
                        FieldError::invalid(
                            pod_spec.child("initContainers").index(k).child("name"),
                            *name,
                            format!(
                                "must not have initContainer that doesn't exist in the runtime job {}",
                                patched.name
                            ),
                        ),
                    );
                }
            }
            for (k, (name, has_env)) in patched.containers.iter().enumerate() {
                let path = pod_spec.child("containers").index(k);
                if !known.contains(name) {
                    v.deny(
                        RUNTIME_PATCHES,
                        FieldError::invalid(
                            path.child("name"),
                            *name,
                            format!("must not have container that doesn't exist in the runtime job {}", patched.name),
                        ),
                    );
                } else if *has_env && [DATASET_INITIALIZER, MODEL_INITIALIZER, NODE].contains(name) {
                    v.deny(
                        RUNTIME_PATCHES,
                        FieldError::invalid(
                            path.child("env"),
                            BadValue::omitted(),
                            format!("must not have envs for the {DATASET_INITIALIZER}, {MODEL_INITIALIZER}, {NODE} containers"),
                        ),
                    );
                }
            }
        }
    }
}

/// The Volcano plugin's lookup: a Volcano runtime's Pods name PriorityClasses that exist
/// (`system-*` are Kubernetes' own). Upstream stops at the first `system-*` class; every job
/// is checked here.
fn check_priority_classes(
    settings: &Settings,
    job: &TrainJob,
    runtime: &Runtime,
    what: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    if runtime.spec.pod_group_policy.as_ref().is_none_or(|p| p.volcano.is_none()) {
        return;
    }
    let path = spec().child("runtimeRef");
    let mut checked = BTreeSet::new();
    for rjob in runtime.jobs() {
        let Some(class) = rjob.priority_class_name().filter(|c| !SYSTEM_PRIORITY_CLASSES.contains(c)) else { continue };
        if !checked.insert(class) {
            continue;
        }
        let query = Query {
            api_version: "scheduling.k8s.io/v1",
            kind: "PriorityClass",
            namespace: None,
            field_masks: &["metadata.name"],
        };
        let shown = job.spec.runtime_ref.shown();
        match cluster.get(&query, class) {
            Ok(Some(_)) => {}
            Ok(None) => v.deny(
                PRIORITY_CLASS,
                FieldError::invalid(
                    path.clone(),
                    shown,
                    format!(
                        "PriorityClass {class:?} doesn't exist: priorityclasses.scheduling.k8s.io {class:?} not found ({what} job {:?}, a Volcano runtime)",
                        rjob.name
                    ),
                ),
            ),
            Err(e) => {
                let lookup = format!("PriorityClass {class:?}");
                v.lookup_failed(PRIORITY_CLASS, path.clone(), &lookup, &e, settings.fail_on_lookup_error);
            }
        }
    }
}

/// The runtime rules (TrainingRuntime and ClusterTrainingRuntime): the CRD's `mlPolicy`
/// rules, the webhook's ancestor jobs, JobSet's startup rule, the deprecation warning (a
/// ClusterTrainingRuntime's creation), and the settings that carry over from Kubeflow v1
/// (the JobSet's TTL).
pub(super) fn check_runtime(settings: &Settings, runtime: &Runtime, kind: TrainerKind, create: bool, v: &mut Verdict) {
    if create && kind == TrainerKind::ClusterTrainingRuntime && runtime.is_deprecated() {
        v.warn(
            RUNTIME_DEPRECATED,
            Path::new("metadata").child("labels").key(trainer::SUPPORT_LABEL),
            format!(
                "ClusterTrainingRuntime {:?} is deprecated and will be removed in a future release of Kubeflow Trainer. See runtime deprecation policy: {DEPRECATION_POLICY_URL}",
                runtime.name()
            ),
        );
    }
    let ml_path = spec().child("mlPolicy");
    if let Some(ml) = runtime.spec.ml_policy.as_ref() {
        if ml.sources().len() > 1 {
            let detail = "Only one of the policy can be configured";
            v.deny(ML_POLICY, FieldError::invalid(ml_path.clone(), BadValue::from("object"), detail));
        }
        if let Some(targets) = ml.torch.as_ref().and_then(|t| t.env_injection.as_ref()) {
            let targets_path = ml_path.child("torch").child("envInjection").child("targets");
            for (i, t) in
                targets.targets.iter().enumerate().filter(|(_, t)| t.container_names.iter().any(|c| c == NODE))
            {
                v.deny(
                    ML_POLICY,
                    FieldError::invalid(
                        targets_path.index(i).child("containerNames"),
                        BadValue::of(&t.container_names),
                        "containerNames must not include the main node container because PET_* envs are always injected into it",
                    ),
                );
            }
        }
        if let Some(n) = ml.flux.as_ref().and_then(|f| f.num_proc_per_node).filter(|n| *n < 1) {
            let path = ml_path.child("flux").child("numProcPerNode");
            v.deny(ML_POLICY, FieldError::invalid(path, n, "NumProcPerNode in fluxPolicy must be >= 1"));
        }
    }
    for (i, job) in runtime.jobs().iter().enumerate() {
        let Some(ancestor) = job.ancestor() else { continue };
        let required = match ancestor {
            trainer::ANCESTOR_TRAINER => NODE,
            DATASET_INITIALIZER => DATASET_INITIALIZER,
            MODEL_INITIALIZER => MODEL_INITIALIZER,
            _ => continue,
        };
        let path = Runtime::job_path(i);
        let replicas = job.replicas.unwrap_or(1);
        if replicas != 1 {
            v.deny(ANCESTOR_JOBS, FieldError::invalid(path.child("replicas"), replicas, "always must be 1"));
        }
        if !job.has_container(required) {
            let containers: Vec<&str> =
                job.template.spec.template.spec.iter().flat_map(|s| &s.containers).map(|c| c.name.as_str()).collect();
            v.deny(
                ANCESTOR_JOBS,
                FieldError::invalid(
                    path.child("template").child("spec").child("template").child("spec").child("containers"),
                    BadValue::of(&containers),
                    format!("must contain the required container for the ancestor: {ancestor}"),
                ),
            );
        }
    }
    let jobset = &runtime.spec.template.spec;
    if jobset.startup_policy.is_some()
        && runtime.jobs().iter().any(|j| j.depends_on.as_ref().is_some_and(|d| !d.is_empty()))
    {
        v.deny(
            ANCESTOR_JOBS,
            FieldError::invalid(
                spec().child("template").child("spec"),
                BadValue::omitted(),
                "StartupPolicy and DependsOn APIs are mutually exclusive",
            ),
        );
    }
    if let Some(r) = jobset.failure_policy.as_ref().and_then(|f| f.max_restarts) {
        check_backoff_limit(
            settings,
            spec().child("template").child("spec").child("failurePolicy").child("maxRestarts"),
            r,
            v,
        );
    }
    for (i, job) in runtime.jobs().iter().enumerate() {
        if let Some(b) = job.template.spec.backoff_limit {
            check_backoff_limit(
                settings,
                Runtime::job_path(i).child("template").child("spec").child("backoffLimit"),
                b,
                v,
            );
        }
    }
    let ttl_path = spec().child("template").child("spec").child("ttlSecondsAfterFinished");
    match jobset.ttl_seconds_after_finished {
        Some(ttl) => {
            if let Some(max) = settings.max_ttl_seconds_after_finished.filter(|max| ttl > *max) {
                let detail = format!("must be less than or equal to {max} (settings.maxTtlSecondsAfterFinished)");
                v.deny(TTL, FieldError::invalid(ttl_path, ttl, detail));
            }
        }
        None if settings.require_ttl_seconds_after_finished => v.deny(
            TTL,
            FieldError::required(
                ttl_path,
                "finished JobSets of this runtime must be cleaned up (settings.requireTtlSecondsAfterFinished)",
            ),
        ),
        None => {}
    }
}

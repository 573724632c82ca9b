//! The Kubeflow `kubeflow.org/v1` jobs' replica specs, run policy, elastic policy and the
//! fields of each kind; the run policy of the MPI operator's `v2beta1` MPIJob too.

use super::*;
use crate::rules::meta;

/// the name is a DNS-1035 label.
pub(super) fn check_name(job: &KubeflowJob, v: &mut Verdict) {
    // The MPI controller does not check the name; MPIJob names are DNS subdomains.
    if job.kind == JobKind::MPIJob {
        return;
    }
    let Some((path, value, name)) = meta::name_as_created(&job.metadata) else { return };
    let errors = names::is_dns1035_label(&name);
    if !errors.is_empty() {
        v.deny(JOB_NAME, FieldError::invalid(path, value, format!("should match: {}", errors.join(","))));
    }
}

/// R-02..R-12, R-20, R-21, R-60, R-61: the replica-spec map and each replica spec in it.
pub(super) fn check_replica_specs(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
    let kind = job.kind;
    let map = map_path(kind);
    let Some(specs) = job.replica_specs().filter(|m| m.len_in_object() > 0) else {
        v.deny(REPLICA_SPECS, FieldError::required(map, "must be required"));
        return;
    };
    // Past the maximum only the specs of known replica types were read: one error for the
    // rest, then those specs are checked as usual.
    if specs.is_over_maximum() {
        v.deny(REPLICA_TYPE, FieldError::too_many(map.clone(), specs.len_in_object(), kind.replica_types().len()));
    }
    for (replica_type, spec) in specs {
        let path = map.key(replica_type);
        if !kind.replica_types().contains(&replica_type.as_str()) {
            v.deny(REPLICA_TYPE, FieldError::not_supported(path.clone(), replica_type, kind.replica_types()));
        }
        // Built only when something is reported: a map may hold thousands of replica specs.
        let containers_path = || path.child("template").child("spec").child("containers");
        let containers =
            spec.as_ref().and_then(|s| s.template.spec.as_ref()).map(|p| p.containers.as_slice()).unwrap_or_default();
        if containers.is_empty() {
            v.deny(CONTAINERS, FieldError::required(containers_path(), "must be specified"));
        }
        let restart_policy = spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref())
            .filter(|r| !r.is_empty())
            .or(settings.default_restart_policy.as_deref());
        check_containers(kind, &path, containers_path, containers, restart_policy, v);
        let Some(spec) = spec else { continue };
        check_replica_count(kind, replica_type, spec, &path, v);
        if let Some(r) = spec.restart_policy.as_deref().filter(|r| !r.is_empty() && !RESTART_POLICIES.contains(r)) {
            v.deny(RESTART_POLICY, FieldError::not_supported(path.child("restartPolicy"), r, &RESTART_POLICIES));
        }
    }

    match kind {
        JobKind::XGBoostJob | JobKind::MPIJob => {
            let required = if kind == JobKind::MPIJob { "Launcher" } else { "Master" };
            if !specs.contains_key(required) {
                v.deny(MASTER_REQUIRED, FieldError::required(map.key(required), "must be present"));
            }
        }
        JobKind::TFJob if specs.keys().filter(|t| matches!(t.as_str(), "Chief" | "Master")).count() > 1 => {
            v.deny(CHIEF_OR_MASTER, FieldError::forbidden(map, "must not have more than 1 Chief or Master role"));
        }
        JobKind::PyTorchJob if job.elastic_bounds().is_none() && !specs.contains_key("Master") => v.warn(
            PYTORCH_MASTER,
            map.key("Master"),
            "a PyTorchJob without elasticPolicy needs a Master: the operator sets MASTER_ADDR, MASTER_PORT and RANK only when one exists, so the workers cannot rendezvous",
        ),
        _ => {}
    }
}

/// The kind checks its default container; MPIJob only needs names on its containers.
pub(super) fn requires_default_container(kind: JobKind) -> bool {
    kind != JobKind::MPIJob
}

/// for one replica's containers.
pub(super) fn check_containers(
    kind: JobKind,
    replica_path: &Path,
    path: impl Fn() -> Path,
    containers: &[Container],
    restart_policy: Option<&str>,
    v: &mut Verdict,
) {
    let default = kind.default_container_name();
    for (i, c) in containers.iter().enumerate() {
        if c.image.as_deref().is_none_or(str::is_empty) {
            v.deny(IMAGE, FieldError::required(path().index(i).child("image"), "must be required"));
        }
        if !requires_default_container(kind) && c.name.is_empty() {
            v.deny(DEFAULT_CONTAINER, FieldError::required(path().index(i).child("name"), ""));
        }
        if c.ports.as_ref().is_some_and(|p| !p.is_empty()) {
            check_ports(kind, c, &path().index(i), v);
        }
    }
    if containers.iter().any(|c| c.name == default) {
        return;
    }
    if requires_default_container(kind) {
        // The Paddle webhook alone quotes the name.
        let name = if kind == JobKind::PaddleJob { format!("{default:?}") } else { default.to_string() };
        v.deny(
            DEFAULT_CONTAINER,
            FieldError::required(path(), format!("must have at least one container with name {name}")),
        );
    } else if restart_policy == Some("ExitCode") && !containers.is_empty() {
        v.warn(
            EXIT_CODE,
            replica_path.child("restartPolicy"),
            format!(
                "ExitCode reads the exit code of the container named {default:?}, which this replica does not have (it has {}), so the operator cannot tell permanent from retryable failures",
                quoted(containers.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().as_slice())
            ),
        );
    }
}

/// for one container (`path` is the container's).
pub(super) fn check_ports(kind: JobKind, c: &Container, path: &Path, v: &mut Verdict) {
    let default_container = kind.default_container_name();
    let mut seen = std::collections::HashSet::new();
    for (j, port) in c.ports.iter().flatten().enumerate() {
        let path = path.child("ports").index(j);
        if !(1..=65535).contains(&port.container_port) {
            v.deny(
                PORTS,
                FieldError::invalid(
                    path.child("containerPort"),
                    port.container_port,
                    "must be between 1 and 65535, inclusive",
                ),
            );
        }
        let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) else { continue };
        let name_path = path.child("name");
        v.deny_all(PORTS, names::check(path.field("name"), name, false, names::is_port_name));
        if !seen.insert(name) {
            v.deny(PORTS, FieldError::duplicate(name_path.clone(), name));
        }
        if kind.default_port_name() == Some(name) && c.name != default_container {
            v.deny(
                DEFAULT_PORT,
                FieldError::invalid(
                    name_path,
                    name,
                    format!(
                        "the operator reads this port from the container named {default_container:?}, so declare it there"
                    ),
                ),
            );
        }
    }
}

/// R-10 (replicas of the single-pod roles), R-11.
pub(super) fn check_replica_count(kind: JobKind, replica_type: &str, spec: &ReplicaSpec, path: &Path, v: &mut Verdict) {
    let path = || path.child("replicas");
    let single = match (kind, replica_type) {
        // The webhooks run before defaulting, so an unset count fails there too.
        (JobKind::PyTorchJob | JobKind::XGBoostJob, "Master") => Some(true),
        (JobKind::MPIJob, "Launcher") | (JobKind::TFJob, "Chief" | "Master") => Some(false),
        _ => None,
    };
    if let Some(explicit) = single {
        if spec.replicas.is_some_and(|n| n != 1) || (explicit && spec.replicas.is_none()) {
            v.deny(MASTER_REPLICAS, FieldError::forbidden(path(), "must be 1"));
        }
        return;
    }
    let Some(n) = spec.replicas else { return };
    let needs_one = kind == JobKind::PyTorchJob
        || (replica_type == "Worker"
            && matches!(kind, JobKind::TFJob | JobKind::JAXJob | JobKind::PaddleJob | JobKind::XGBoostJob));
    if needs_one && n < 1 {
        v.deny(REPLICAS, FieldError::forbidden(path(), "must be at least 1"));
    } else if n < 0 {
        v.deny(REPLICAS, FieldError::invalid(path(), n, "must be greater than or equal to 0"));
    }
}

/// The clean-pod policy a job sets, with its path: `runPolicy.cleanPodPolicy`, else MPIJob's
/// deprecated `spec.cleanPodPolicy`.
pub(super) fn own_clean_pod_policy(job: &KubeflowJob) -> Option<(Path, &str)> {
    if let Some(p) = job.run_policy().and_then(|r| r.clean_pod_policy.as_deref()) {
        return Some((run_policy_path().child("cleanPodPolicy"), p));
    }
    let p = job.as_mpi()?.clean_pod_policy.as_deref()?;
    Some((spec_path().child("cleanPodPolicy"), p))
}

/// and the organisational limits.
pub(super) fn check_run_policy(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
    let empty = RunPolicy::default();
    let rp = job.run_policy().unwrap_or(&empty);
    let rp_path = run_policy_path();

    check_clean_pod_policy(settings, job, v);

    let ttl_path = rp_path.child("ttlSecondsAfterFinished");
    match rp.ttl_seconds_after_finished {
        Some(t) if t < 0 => v.deny(TTL, FieldError::invalid(ttl_path, t, "must be greater than or equal to 0")),
        Some(t) => {
            if let Some(max) = settings.max_ttl_seconds_after_finished.filter(|max| t > *max) {
                v.deny(
                    TTL,
                    FieldError::invalid(
                        ttl_path,
                        t,
                        format!("must be less than or equal to {max} (settings.maxTtlSecondsAfterFinished)"),
                    ),
                );
            }
        }
        None if settings.require_ttl_seconds_after_finished
            && settings.default_ttl_seconds_after_finished.is_none() =>
        {
            v.deny(
                TTL,
                FieldError::required(
                    ttl_path,
                    "finished jobs must be cleaned up (settings.requireTtlSecondsAfterFinished)",
                ),
            );
        }
        None => {}
    }

    // The training operator wants a deadline of at least a second, the MPI operator one that
    // is not negative.
    if let Some(d) = rp.active_deadline_seconds {
        let min = if job.is_mpi_operator() { 0 } else { 1 };
        check_active_deadline(settings, rp_path.child("activeDeadlineSeconds"), d, min, v);
    }
    if let Some(b) = rp.backoff_limit {
        check_backoff_limit(settings, rp_path.child("backoffLimit"), b, v);
    }

    // The MPI operator's jobs are held to its own controllers; allowedManagedBy is about the
    // training operator's (its default lists them).
    let allowed: Vec<&str> = if job.is_mpi_operator() {
        super::mpi_operator::MANAGED_BY.to_vec()
    } else {
        settings.allowed_managed_by.iter().map(|m| m.as_ref()).collect()
    };
    if let Some(m) = rp.managed_by.as_deref().filter(|m| !allowed.contains(m)) {
        v.deny(MANAGED_BY, FieldError::not_supported(rp_path.child("managedBy"), m, &allowed));
    }
}

/// and `allowedCleanPodPolicies`.
pub(super) fn check_clean_pod_policy(settings: &Settings, job: &KubeflowJob, v: &mut Verdict) {
    let run_policy_value = job.run_policy().and_then(|r| r.clean_pod_policy.as_deref());
    let rp_path = run_policy_path().child("cleanPodPolicy");
    let deprecated = job.as_mpi().and_then(|m| m.clean_pod_policy.as_deref());
    let deprecated_path = spec_path().child("cleanPodPolicy");

    for (path, value) in [(&rp_path, run_policy_value), (&deprecated_path, deprecated)] {
        if let Some(p) = value.filter(|p| !CLEAN_POD_POLICIES.contains(p)) {
            v.deny(CLEAN_POD_POLICY, FieldError::not_supported(path.clone(), p, &CLEAN_POD_POLICIES));
        }
    }
    if let Some(old) = deprecated {
        v.warn(
            MPI_CLEAN_POD_POLICY,
            deprecated_path.clone(),
            "is deprecated, use spec.runPolicy.cleanPodPolicy instead",
        );
        if let Some(new) = run_policy_value.filter(|new| *new != old) {
            v.deny(
                MPI_CLEAN_POD_POLICY,
                FieldError::invalid(
                    deprecated_path,
                    old,
                    format!("must equal spec.runPolicy.cleanPodPolicy ({new:?}) when both are set"),
                ),
            );
        }
    }

    let Some(allowed) = &settings.allowed_clean_pod_policies else { return };
    match own_clean_pod_policy(job) {
        Some((path, p)) if CLEAN_POD_POLICIES.contains(&p) && !settings.allows_clean_pod_policy(p) => {
            v.deny(
                CLEAN_POD_POLICY,
                FieldError::invalid(
                    path,
                    p,
                    format!("settings.allowedCleanPodPolicies allows only {}", quoted(allowed.as_slice())),
                ),
            );
        }
        Some(_) => {}
        // defaultCleanPodPolicy, when set, is one of the allowed ones (checked at load).
        None if settings.default_clean_pod_policy.is_none()
            && !settings.allows_clean_pod_policy(DEFAULT_CLEAN_POD_POLICY) =>
        {
            v.deny(
                CLEAN_POD_POLICY,
                FieldError::required(
                    rp_path,
                    format!(
                        "unset means {DEFAULT_CLEAN_POD_POLICY:?}, and settings.allowedCleanPodPolicies allows only {}",
                        quoted(allowed.as_slice())
                    ),
                ),
            );
        }
        None => {}
    }
}

/// R-40..R-45: PyTorch and Paddle elastic policies.
pub(super) fn check_elastic_policy(job: &KubeflowJob, v: &mut Verdict) {
    let ep = spec_path().child("elasticPolicy");
    if let Some(py) = job.as_pytorch() {
        check_nproc_per_node(
            py.elastic_policy.as_ref().and_then(|e| e.n_proc_per_node),
            py.nproc_per_node.as_deref(),
            v,
        );
        if let Some(e) = &py.elastic_policy {
            if let Some(b) = e.rdzv_backend.as_deref().filter(|b| !RDZV_BACKENDS.contains(b)) {
                v.deny(ELASTIC_POLICY, FieldError::not_supported(ep.child("rdzvBackend"), b, &RDZV_BACKENDS));
            }
            if let Some(p) = e.rdzv_port.filter(|p| !(1..=65535).contains(p)) {
                v.deny(
                    ELASTIC_POLICY,
                    FieldError::invalid(ep.child("rdzvPort"), p, "must be between 1 and 65535, inclusive"),
                );
            }
            for (i, c) in e.rdzv_conf.iter().flatten().enumerate() {
                if c.key.as_deref().is_none_or(str::is_empty) {
                    v.deny(ELASTIC_POLICY, FieldError::required(ep.child("rdzvConf").index(i).child("key"), ""));
                }
            }
        }
    }
    let Some(bounds) = job.elastic_bounds() else { return };
    if let Some(n) = job.elastic_max_restarts().filter(|n| *n < 0) {
        v.deny(ELASTIC_POLICY, FieldError::invalid(ep.child("maxRestarts"), n, "must be greater than or equal to 0"));
    }

    let map = map_path(job.kind);
    let worker = job.replica_specs().and_then(|m| m.get("Worker"));
    if worker.is_none() {
        v.deny(ELASTIC_WORKER, FieldError::required(map.key("Worker"), "must be configured if elastic policy is used"));
    }

    let (min, max) = (bounds.min_replicas, bounds.max_replicas);
    let mut usable = true;
    for (field, value) in [("minReplicas", min), ("maxReplicas", max)] {
        if let Some(n) = value.filter(|n| *n < 1) {
            v.deny(ELASTIC_REPLICAS, FieldError::invalid(ep.child(field), n, "must be greater than or equal to 1"));
            usable = false;
        }
    }
    if let (Some(min), Some(max)) = (min, max)
        && usable
        && max < min
    {
        v.deny(
            ELASTIC_REPLICAS,
            FieldError::invalid(
                ep.child("maxReplicas"),
                max,
                format!("must be greater than or equal to spec.elasticPolicy.minReplicas ({min})"),
            ),
        );
        usable = false;
    }
    // Defaulting fills a missing bound from the other one; with neither, both become the
    // Worker count, which then always fits.
    let (Some(low), Some(high)) = (min.or(max), max.or(min)) else { return };
    if let Some(Some(w)) = worker
        && usable
    {
        let n = job.replica_count("Worker", w);
        if n < low || n > high {
            v.deny(
                ELASTIC_REPLICAS,
                FieldError::invalid(
                    map.key("Worker").child("replicas"),
                    n,
                    format!("must be between the elastic policy's minReplicas ({low}) and maxReplicas ({high})"),
                ),
            );
        }
    }
}

///
pub(super) fn check_nproc_per_node(deprecated: Option<i32>, nproc_per_node: Option<&str>, v: &mut Verdict) {
    let spec = spec_path();
    if let Some(n) = deprecated {
        let path = spec.child("elasticPolicy").child("nProcPerNode");
        v.warn(NPROC_PER_NODE, path.clone(), "is deprecated, use spec.nprocPerNode instead");
        if nproc_per_node.is_some() {
            v.deny(NPROC_PER_NODE, FieldError::forbidden(path, "must not be used with spec.nprocPerNode"));
        } else if n < 1 {
            v.deny(NPROC_PER_NODE, FieldError::invalid(path, n, "must be greater than or equal to 1"));
        }
    }
    if let Some(s) = nproc_per_node
        && !matches!(s, "auto" | "cpu" | "gpu")
        && !s.parse::<i32>().is_ok_and(|n| n > 0)
    {
        v.deny(
            NPROC_PER_NODE,
            FieldError::invalid(
                spec.child("nprocPerNode"),
                s,
                "must be \"auto\", \"cpu\", \"gpu\" or a positive integer",
            ),
        );
    }
}

/// R-24 (TF), R-50, R-51 (MPI).
pub(super) fn check_kind_fields(job: &KubeflowJob, v: &mut Verdict) {
    let spec = spec_path();
    if let Some(p) = job.as_tf().and_then(|tf| tf.success_policy.as_deref()).filter(|p| !SUCCESS_POLICIES.contains(p)) {
        v.deny(SUCCESS_POLICY, FieldError::not_supported(spec.child("successPolicy"), p, &SUCCESS_POLICIES));
    }
    let Some(mpi) = job.as_mpi() else { return };
    if let Some(n) = mpi.slots_per_worker.filter(|n| *n < 1) {
        v.deny(
            SLOTS_PER_WORKER,
            FieldError::invalid(spec.child("slotsPerWorker"), n, "must be greater than or equal to 1"),
        );
    }
    let Some(main) = mpi.main_container.as_deref().filter(|m| !m.is_empty()) else { return };
    let Some(worker) = job.replicas().find(|(t, _)| t.as_str() == "Worker").map(|(_, s)| s) else { return };
    let names: Vec<&str> =
        worker.template.spec.iter().flat_map(|p| p.containers.iter()).map(|c| c.name.as_str()).collect();
    if !names.is_empty() && !names.contains(&main) {
        v.deny(
            MAIN_CONTAINER,
            FieldError::invalid(
                spec.child("mainContainer"),
                main,
                format!(
                    "must name a container of spec.mpiReplicaSpecs[Worker] ({}): the launcher runs the MPI processes in it",
                    quoted(names.as_slice())
                ),
            ),
        );
    }
}

/// `managedBy` never changes, for every kind (the PyTorch webhook compares the new
/// object with itself, JAX and MPI have no check).
pub(super) fn check_update(job: &KubeflowJob, old: &KubeflowJob, v: &mut Verdict) {
    let managed_by = |j: &KubeflowJob| j.run_policy().and_then(|r| r.managed_by.clone());
    let new = managed_by(job);
    if new != managed_by(old) {
        // apimachinery prints an unset pointer as "null".
        let shown = new.unwrap_or_else(|| "null".to_string());
        v.deny(
            MANAGED_BY_IMMUTABLE,
            FieldError::invalid(run_policy_path().child("managedBy"), &shown, "field is immutable"),
        );
    }
}

//! The MPI operator's `kubeflow.org/v2beta1` MPIJob (v0.8): what its controller checks
//! (`pkg/apis/kubeflow/validation/validation.go`), at admission, with its wording.
//!
//! The operator has no admission webhook: it defaults a job (`v2beta1/default.go`), then
//! validates it, and a job that fails is stored anyway, gets an event and never starts. So the
//! checks run on the job as the operator's defaults complete it, and never ask for what a
//! default supplies: `slotsPerWorker` 1, `sshAuthMountPath` `/root/.ssh`, `mpiImplementation`
//! `OpenMPI`, `cleanPodPolicy` `None`, the Launcher's restart policy `OnFailure` and its count
//! 1, the Worker's `Never` and 0 (which the operator then refuses: a Worker spec must say how
//! many).

use super::*;

/// The MPI operator's restart policies: the launcher is a batch Job, whose Pods allow these.
const RESTART_POLICIES: [&str; 2] = ["Never", "OnFailure"];
/// `mpiImplementation`, in the CRD's enum order (the apiserver refuses others first).
const MPI_IMPLEMENTATIONS: [&str; 3] = ["OpenMPI", "Intel", "MPICH"];
const LAUNCHER_CREATION_POLICIES: [&str; 2] = ["AtStartup", "WaitForWorkersReady"];
/// The controllers the MPI operator accepts in `runPolicy.managedBy`, in its (sorted) order.
pub(super) const MANAGED_BY: [&str; 2] = ["kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"];

/// The operator's `validateMPIJobName`: every Pod and Service name the job makes, up to
/// `<name>-worker-<replicas - 1>`, is a DNS-1035 label (the name as it will be created).
pub(super) fn check_name(job: &KubeflowJob, v: &mut Verdict) {
    let Some((path, value, name)) = crate::rules::meta::name_as_created(&job.metadata) else { return };
    let workers = job
        .replicas()
        .find(|(t, _)| t.as_str() == "Worker")
        .and_then(|(_, s)| s.replicas)
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let hostname = format!("{name}-worker-{}", workers - 1);
    let errors = names::is_dns1035_label(&hostname);
    if !errors.is_empty() {
        v.deny(
            JOB_NAME,
            FieldError::invalid(
                path,
                value,
                format!(
                    "will not able to create pod and service with invalid DNS label {hostname:?}: {}",
                    errors.join(", ")
                ),
            ),
        );
    }
}

/// The operator's replica-spec checks, on the specs as its defaults complete them.
pub(super) fn check_replica_specs(job: &KubeflowJob, v: &mut Verdict) {
    let map = map_path(job.kind);
    let Some(specs) = job.replica_specs() else {
        v.deny(REPLICA_SPECS, FieldError::required(map, "must have replica specs"));
        return;
    };
    if specs.get("Launcher").is_none() {
        v.deny(MASTER_REQUIRED, FieldError::required(map.key("Launcher"), "must have Launcher replica spec"));
    }
    if specs.is_over_maximum() {
        v.deny(REPLICA_TYPE, FieldError::too_many(map.clone(), specs.len_in_object(), 2));
    }
    for (replica_type, spec) in specs {
        let path = map.key(replica_type);
        let (default_restart, default_count) = match replica_type.as_str() {
            "Launcher" => ("OnFailure", 1),
            "Worker" => ("Never", 0),
            // The operator never reads another type: its Pods would never be made.
            _ => {
                v.deny(REPLICA_TYPE, FieldError::not_supported(path, replica_type, job.kind.replica_types()));
                continue;
            }
        };
        let Some(spec) = spec else { continue };
        let restart = spec.restart_policy.as_deref().filter(|r| !r.is_empty()).unwrap_or(default_restart);
        if !RESTART_POLICIES.contains(&restart) {
            v.deny(RESTART_POLICY, FieldError::not_supported(path.child("restartPolicy"), restart, &RESTART_POLICIES));
        }
        if spec.template.spec.as_ref().is_none_or(|p| p.containers.is_empty()) {
            v.deny(
                CONTAINERS,
                FieldError::required(
                    path.child("template").child("spec").child("containers"),
                    "must define at least one container",
                ),
            );
        }
        let count = spec.replicas.unwrap_or(default_count);
        match replica_type.as_str() {
            "Launcher" if count != 1 => {
                v.deny(MASTER_REPLICAS, FieldError::invalid(path.child("replicas"), count, "must be 1"));
            }
            "Worker" if count <= 0 => v.deny(
                REPLICAS,
                FieldError::invalid(path.child("replicas"), count, "must be greater than or equal to 1"),
            ),
            _ => {}
        }
    }
}

/// `slotsPerWorker` (the operator: not negative), `mpiImplementation` (the CRD's enum), and
/// `launcherCreationPolicy`, which neither the CRD nor the operator checks: any other value
/// silently starts the launcher with the workers.
pub(super) fn check_kind_fields(job: &KubeflowJob, v: &mut Verdict) {
    let Some(mpi) = job.as_mpi() else { return };
    let spec = Path::new("spec");
    if let Some(n) = mpi.slots_per_worker.filter(|n| *n < 0) {
        v.deny(
            SLOTS_PER_WORKER,
            FieldError::invalid(spec.child("slotsPerWorker"), n, "must be greater than or equal to 0"),
        );
    }
    if let Some(m) = mpi.mpi_implementation.as_deref().filter(|m| !m.is_empty() && !MPI_IMPLEMENTATIONS.contains(m)) {
        v.deny(MPI_IMPLEMENTATION, FieldError::not_supported(spec.child("mpiImplementation"), m, &MPI_IMPLEMENTATIONS));
    }
    if let Some(p) =
        mpi.launcher_creation_policy.as_deref().filter(|p| !p.is_empty() && !LAUNCHER_CREATION_POLICIES.contains(p))
    {
        v.deny(
            LAUNCHER_CREATION_POLICY,
            FieldError::not_supported(spec.child("launcherCreationPolicy"), p, &LAUNCHER_CREATION_POLICIES),
        );
    }
}

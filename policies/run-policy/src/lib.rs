//! The run-policy policy: gangwarden's runPolicy rule set (replica specs, restart and
//! clean-up policies, run limits, managedBy, elastic and MPI settings of Kubeflow jobs, with
//! optional defaulting) as a Kubewarden policy.

gangwarden_kubewarden::policy!(gangwarden_core::rules::run_policy::RunPolicyRules, lookups: [get_resource]);

//! The topology policy: gangwarden's topology rule set as a Kubewarden policy. It guards
//! `schedulingConstraints.topology` on Workloads and PodGroups (checking the keys against the
//! cluster's node labels) and Kueue topology annotations on Kubeflow replica templates.

gangwarden_kubewarden::policy!(gangwarden_core::rules::topology::Topology, lookups: [get_resource, list_resources_all]);

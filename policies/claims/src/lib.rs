//! The claims policy: gangwarden's claims rule set (DRA ResourceClaims shared by a PodGroup
//! and the Pods that are meant to share them) as a Kubewarden policy.

gangwarden_kubewarden::policy!(gangwarden_core::rules::claims::Claims, lookups: [get_resource, list_resources_all]);

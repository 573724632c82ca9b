//! The gang policy: gangwarden's gang rule set as a Kubewarden policy.

gangwarden_kubewarden::policy!(gangwarden_core::rules::gang::Gang, lookups: [get_resource, list_resources_all]);

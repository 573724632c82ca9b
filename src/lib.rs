//! The gangwarden bundle policy: every rule set in one Kubewarden policy.

gangwarden_kubewarden::policy!(gangwarden_core::rules::bundle::Bundle, lookups: [get_resource, list_resources_all]);

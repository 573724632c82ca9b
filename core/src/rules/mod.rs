//! The rule sets. Each is a [`crate::engine::RuleSet`]; [`bundle::Bundle`] runs them all.

pub mod bundle;
pub mod catalog;
pub mod claims;
pub mod gang;
pub mod meta;
pub mod run_policy;
pub mod topology;

/// A rule's stable id (used in messages and docs), its number in the rule catalogue, and
/// what it guarantees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleInfo {
    pub id: &'static str,
    pub catalogue: &'static str,
    pub summary: &'static str,
}

/// The metadata rules, which the engine runs with every rule set ([`meta`]).
pub const METADATA: &[RuleInfo] = meta::RULES;

/// Every rule: the metadata rules, then each rule set's.
pub fn every_rule() -> impl Iterator<Item = &'static RuleInfo> {
    METADATA.iter().chain(ALL.iter().flat_map(|(_, rules)| rules.iter()))
}

/// Every rule set's rules, by the policy folder name that ships the set alone.
pub const ALL: &[(&str, &[RuleInfo])] = &[
    ("gang", gang::RULES),
    ("claims", claims::RULES),
    ("run-policy", run_policy::RULES),
    ("topology", topology::RULES),
];

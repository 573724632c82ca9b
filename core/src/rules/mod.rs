//! The rule sets. Each is a [`RuleSet`]; [`bundle::Bundle`] runs them all, and
//! [`crate::engine`] runs one over a validation payload.

use serde::de::DeserializeOwned;

use crate::cluster::Cluster;
use crate::review::Review;
use crate::verdict::Verdict;

pub mod bundle;
pub mod catalog;
pub mod claims;
pub mod gang;
pub mod meta;
pub mod run_policy;
pub mod topology;

/// One set of rules with its settings.
pub trait RuleSet {
    /// The name used in messages and in the bundle's settings.
    const NAME: &'static str;
    /// The kind families the rules read ([`crate::review::kinds`]); a policy module decodes
    /// only those.
    const KINDS: u32;
    type Settings: DeserializeOwned + Default;

    /// Checks that go beyond the settings' types (ranges, combinations).
    fn validate_settings(settings: &Self::Settings) -> Result<(), String>;

    fn check(settings: &Self::Settings, review: &Review, cluster: &dyn Cluster) -> Verdict;
}

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

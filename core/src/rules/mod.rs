//! The rule sets. Each is a [`RuleSet`]; [`bundle::Bundle`] runs them all, and
//! [`crate::engine`] runs one over a validation payload.

use std::borrow::Cow;

use serde::de::DeserializeOwned;

use crate::cluster::Cluster;
use crate::review::Review;
use crate::scheduling::GroupSpec;
use crate::verdict::Verdict;

pub mod bundle;
pub mod catalog;
pub mod claims;
pub mod gang;
pub mod meta;
pub mod run_policy;
pub mod topology;

/// A setting that lists names. Its default entries are borrowed from the module, so a request
/// with no settings makes no string for them; a user's list is read as owned strings.
pub type Names = Vec<Cow<'static, str>>;

/// Reads a [`Names`] setting with the decoder of the other string lists (a decoder of its own
/// would add a kilobyte to every module).
pub fn read_names<'de, D: serde::Deserializer<'de>>(names: D) -> Result<Names, D::Error> {
    Ok(<Vec<String> as serde::Deserialize>::deserialize(names)?.into_iter().map(Cow::Owned).collect())
}

/// `defaults` as a [`Names`] setting.
pub fn names(defaults: &[&'static str]) -> Names {
    defaults.iter().map(|&name| Cow::Borrowed(name)).collect()
}

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

    /// Checks the review; `groups` are its object's group specs
    /// ([`crate::review::Resource::group_specs`]), made once for every rule set that reads them.
    fn check_groups(settings: &Self::Settings, review: &Review, groups: &[GroupSpec], cluster: &dyn Cluster)
    -> Verdict;

    fn check(settings: &Self::Settings, review: &Review, cluster: &dyn Cluster) -> Verdict {
        Self::check_groups(settings, review, &review.object.group_specs(), cluster)
    }
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

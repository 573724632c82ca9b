//! Every rule set in one policy. Its settings hold each set's settings under the set's name.

use serde::Deserialize;

use crate::cluster::{Cluster, Memo};
use crate::review::Review;
use crate::review::kinds;
use crate::rules::RuleSet;
use crate::rules::claims::{self, Claims};
use crate::rules::gang::{self, Gang};
use crate::rules::run_policy::{self, RunPolicyRules};
use crate::rules::topology::{self, Topology};
use crate::scheduling::GroupSpec;
use crate::verdict::Verdict;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    pub gang: gang::Settings,
    pub claims: claims::Settings,
    pub run_policy: run_policy::Settings,
    pub topology: topology::Settings,
}

pub struct Bundle;

impl RuleSet for Bundle {
    const NAME: &'static str = "bundle";
    const KINDS: u32 = kinds::ALL;
    type Settings = Settings;

    fn validate_settings(s: &Settings) -> Result<(), String> {
        Gang::validate_settings(&s.gang).map_err(|e| format!("gang.{e}"))?;
        Claims::validate_settings(&s.claims).map_err(|e| format!("claims.{e}"))?;
        RunPolicyRules::validate_settings(&s.run_policy).map_err(|e| format!("runPolicy.{e}"))?;
        Topology::validate_settings(&s.topology).map_err(|e| format!("topology.{e}"))
    }

    fn check_groups(s: &Settings, review: &Review, groups: &[GroupSpec], cluster: &dyn Cluster) -> Verdict {
        // The rule sets read some objects alike (a TrainJob's runtime): each is asked for once.
        let memo = Memo::new(cluster);
        let cluster = &memo;
        let mut verdict = Gang::check_groups(&s.gang, review, groups, cluster);
        verdict.merge(Claims::check_groups(&s.claims, review, groups, cluster));
        verdict.merge(RunPolicyRules::check_groups(&s.run_policy, review, groups, cluster));
        verdict.merge(Topology::check_groups(&s.topology, review, groups, cluster));
        verdict
    }
}

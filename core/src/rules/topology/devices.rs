//! DRA devices for the capacity rules: the claims a pod shape names, read from its
//! ResourceClaims and ResourceClaimTemplates, and the ResourceSlices and DeviceClasses that
//! say what each Node offers them (`crate::capacity::devices`).

use super::*;
use crate::capacity::devices::{
    Asked, CLAIM_SOURCE_MASKS, Claim, MAX_DEVICES_PER_CLAIM, Supply, class_selectors, device_class_query,
};
use crate::capacity::fit::Finding;
use capacity::{Demand, resource_slice_query};

/// The most distinct claims and templates read for one request: each is a GET.
const MAX_CLAIM_READS: usize = 16;

/// What the cluster's devices say about the pods' claims.
pub(super) struct Devices {
    /// (shape, its claims that could be read).
    pub(super) pods: Vec<(usize, Vec<Claim>)>,
    pub(super) supply: Supply,
    pub(super) first: Vec<usize>,
}

/// Reads the claims of `demand`'s pods. Findings that need no Node (a claim that asks for more
/// devices than one allocation holds) are returned at once; the supply only when the cluster
/// lists some ResourceSlice. A failed lookup is a warning (a rejection with
/// `failOnLookupError`), never a finding.
pub(super) fn read_devices(
    settings: &Settings,
    demand: &Demand,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) -> (Vec<Finding>, Option<Devices>) {
    let mut findings = reserved_for_limit(demand);
    let mut read: Vec<(&str, &str, Option<Claim>)> = Vec::new();
    let mut pods = Vec::new();
    for (shape, named) in demand.claims.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
        let mut claims = Vec::new();
        // Two entries naming one ResourceClaim share it: it is allocated once.
        let mut shared = std::collections::HashSet::new();
        for c in named {
            let (at, kind, name) = (&c.at, &c.kind, &c.name);
            if *kind == "ResourceClaim" && !shared.insert(name.as_str()) {
                continue;
            }
            let known = read.iter().find(|(k, n, _)| k == kind && n == name).map(|(_, _, c)| c.clone());
            let claim = match known {
                Some(claim) => claim,
                None if read.len() == MAX_CLAIM_READS => None,
                None => {
                    let claim = read_claim(settings, demand, at, kind, name, cluster, v);
                    read.push((kind, name, claim.clone()));
                    claim
                }
            };
            // Read for another pod at another path: reported at this one's.
            let Some(claim) = claim.map(|claim| Claim { at: at.clone(), shared: c.shared(), ..claim }) else {
                continue;
            };
            let least = claim.least_devices();
            if least > MAX_DEVICES_PER_CLAIM {
                findings.push(Finding {
                    gang: false,
                    at: at.clone(),
                    value: BadValue::from(name.as_str()),
                    message: format!(
                        "no {} can ever be allocated this claim: its requests ask for at least {least} devices, and one allocation holds at most {MAX_DEVICES_PER_CLAIM}",
                        demand.shapes[shape].name
                    ),
                    resources: Vec::new(),
                });
            }
            claims.push(claim);
        }
        if claims.iter().any(|c| !c.requests.is_empty()) {
            pods.push((shape, claims));
        }
    }
    if pods.is_empty() {
        return (findings, None);
    }
    let at = demand.shapes[pods[0].0].spec_path.child("resourceClaims");
    let failed = |v: &mut Verdict, what: &str, e: &LookupError| {
        v.lookup_failed(POD_FITS, at.clone(), what, e, settings.fail_on_lookup_error)
    };
    let slices = match cluster.list(&resource_slice_query()).map(|l| serde_json::from_str::<serde_json::Value>(&l)) {
        // A cluster that lists no slice: its DRA drivers are not installed yet.
        Ok(Ok(list)) if Supply::items(&list).is_empty() => return (findings, None),
        Ok(Ok(list)) => list,
        Ok(Err(e)) => {
            failed(v, "ResourceSlices", &LookupError::Failed(format!("cannot read the ResourceSlice list: {e}")));
            return (findings, None);
        }
        // No DRA API, or `gangwarden check` given no slices: the devices are not known.
        Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => return (findings, None),
        Err(e) => {
            failed(v, "ResourceSlices, to count the devices the pods' claims may get", &e);
            return (findings, None);
        }
    };
    let classes = match cluster.list(&device_class_query()).map(|l| class_selectors(&l)) {
        Ok(Ok(classes)) => classes,
        Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => Default::default(),
        Ok(Err(e)) => {
            failed(v, "DeviceClasses", &LookupError::Failed(format!("cannot read the DeviceClass list: {e}")));
            return (findings, None);
        }
        Err(e) => {
            failed(v, "DeviceClasses, to count the devices the pods' claims may get", &e);
            return (findings, None);
        }
    };
    let (asked, unbounded) = Asked::new(&pods, &classes);
    let first = asked.first();
    let supply = Supply::read(Supply::items(&slices), &asked, unbounded);
    drop(asked);
    (findings, Some(Devices { pods, supply, first }))
}

/// How many pods a ResourceClaim's `status.reservedFor` holds (`ResourceClaimReservedForMaxSize`).
const MAX_RESERVED_FOR: u64 = 256;

/// Gangs more than [`MAX_RESERVED_FOR`] of whose pods name one ResourceClaim through their own
/// entries (not a group claim): every pod running at once must be in the claim's
/// `reservedFor`, which holds 256. The pods of members that do not name it may fill the rest of
/// the gang; nothing is read from the cluster.
fn reserved_for_limit(demand: &Demand) -> Vec<Finding> {
    let mut findings = Vec::new();
    for gang in demand.gangs.iter().filter(|g| g.what == "the gang" && g.size > MAX_RESERVED_FOR) {
        let own = |shape: usize| demand.claims[shape].iter().filter(|c| c.kind == "ResourceClaim" && !c.grouped);
        let mut reported: Vec<&str> = Vec::new();
        for claim in gang.members.iter().flat_map(|(s, _)| own(*s)) {
            if reported.contains(&claim.name.as_str()) {
                continue;
            }
            let others: u64 = gang
                .members
                .iter()
                .filter(|(s, _)| !own(*s).any(|c| c.name == claim.name))
                .map(|(_, count)| *count)
                .fold(0, u64::saturating_add);
            let naming = gang.size.saturating_sub(others);
            if naming > MAX_RESERVED_FOR {
                reported.push(&claim.name);
                findings.push(Finding {
                    gang: true,
                    at: claim.at.clone(),
                    value: BadValue::from(claim.name.as_str()),
                    message: format!(
                        "the gang of {} pods can never run at once: at least {naming} of them name ResourceClaim {:?} through their own entry, and a claim is reserved for at most {MAX_RESERVED_FOR} pods at once (status.reservedFor); a PodGroup's claim is reserved for the PodGroup instead",
                        gang.size, claim.name
                    ),
                    resources: Vec::new(),
                });
            }
        }
    }
    findings
}

/// One claim or claim template, read for its requests; `None` when it does not exist (the
/// claims rule set's business) or cannot be read.
fn read_claim(
    settings: &Settings,
    demand: &Demand,
    at: &Path,
    kind: &str,
    name: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) -> Option<Claim> {
    let spec = if kind == "ResourceClaimTemplate" { "/spec/spec" } else { "/spec" };
    let query = Query {
        api_version: "resource.k8s.io/v1",
        kind,
        namespace: Some(&demand.namespace),
        field_masks: CLAIM_SOURCE_MASKS,
    };
    match cluster.get(&query, name) {
        Ok(Some(object)) => {
            let object: serde_json::Value = serde_json::from_str(object.get()).ok()?;
            // An allocated claim needs no device now (its devices may even have left the
            // slices since): the scheduler only matches its allocation's node selector.
            if object.pointer("/status/allocation").is_some_and(|a| !a.is_null()) {
                return None;
            }
            Claim::read(at.clone(), kind, name, object.pointer(spec)?)
        }
        Ok(None) | Err(LookupError::NotServed { .. } | LookupError::NotGiven { .. }) => None,
        Err(e) => {
            let what = format!("{kind} {name:?}, to count the devices it asks for");
            v.lookup_failed(POD_FITS, at.clone(), &what, &e, settings.fail_on_lookup_error);
            None
        }
    }
}

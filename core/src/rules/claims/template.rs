//! C-15: a PodGroup made from a Workload template carries the template's claims.

use super::*;

/// C-15: a PodGroup made from a Workload template carries the template's claims (1.37: the
/// template may sit at any depth). A missing Workload or template is the gang set's business
/// (G-18), so it is skipped here.
pub(super) fn check_against_template(
    settings: &Settings,
    pg: &PodGroup,
    version: Version,
    namespace: &str,
    cluster: &dyn Cluster,
    v: &mut Verdict,
) {
    let Some(r) = pg.template_ref() else { return };
    // A malformed reference is rejected by the gang set and cannot be looked up.
    if !names::is_dns1123_subdomain(r.workload_name).is_empty() || !names::is_dns1123_label(r.template_name).is_empty()
    {
        return;
    }
    let workload = match get_workload(cluster, version, namespace, r.workload_name) {
        Ok(Some(w)) => w,
        Ok(None) => return,
        Err(e) => {
            let what = format!("Workload {:?} to compare resourceClaims with its template", r.workload_name);
            v.lookup_failed(TEMPLATE_CLAIMS, r.path.child("workloadName"), &what, &e, settings.fail_on_lookup_error);
            return;
        }
    };
    let templates = workload.group_specs();
    let Some(template) = find_template(&templates, r.template_name, scheduling::GroupOrigin::PodGroup) else {
        return;
    };
    let want = template.resource_claims.clone().unwrap_or_default();
    let have = pg.claims();
    if sorted_claims(&have) != sorted_claims(&want) {
        v.deny(
            TEMPLATE_CLAIMS,
            FieldError::invalid(
                Path::new("spec").child("resourceClaims"),
                BadValue::of(&have),
                format!(
                    "must equal the resourceClaims of Workload {:?} template {:?}: {}",
                    r.workload_name,
                    r.template_name,
                    BadValue::of(&want)
                ),
            ),
        );
    }
}

//! Pods joining a PodGroup through `spec.schedulingGroup`.

use super::*;

/// G-32, G-33, G-34: a Pod joining a PodGroup.
pub(super) fn check_pod(ctx: &Context, pod: &Pod, old: Option<&Pod>, v: &mut Verdict) {
    let spec_path = Path::new("spec").child("schedulingGroup");
    let group = pod.spec.as_ref().and_then(|s| s.scheduling_group.as_ref());
    if let Some(old) = old {
        let old_group = old.spec.as_ref().and_then(|s| s.scheduling_group.as_ref());
        if group != old_group {
            v.deny(SCHEDULING_GROUP, FieldError::immutable(spec_path.clone(), BadValue::of(&group)));
        }
        return; // the group was checked when the Pod was created
    }
    let Some(group) = group else { return };
    let Some(name) = group.pod_group_name.as_ref() else {
        v.deny(SCHEDULING_GROUP, FieldError::invalid(spec_path, "", "must specify one of: `podGroupName`"));
        return;
    };
    let path = spec_path.child("podGroupName");
    let errors = check(spec_path.field("podGroupName"), name, true, names::is_dns1123_subdomain);
    if !errors.is_empty() {
        v.deny_all(SCHEDULING_GROUP, errors);
        return;
    }
    let namespace = ctx.namespace;
    // The settings were validated when they were loaded.
    let versions = scheduling::parse_lookup_versions(&ctx.settings.scheduling_api_versions).unwrap_or_default();
    match scheduling::find_pod_group(ctx.cluster, &versions, namespace, name, &["metadata.name"]) {
        Ok(Some(_)) => {}
        Ok(None) => v.warn(
            POD_GROUP_EXISTS,
            path,
            format!("PodGroup {name:?} does not exist in namespace {namespace:?} yet; the Pod stays Pending until it is created"),
        ),
        Err(e) => {
            v.lookup_failed(POD_GROUP_EXISTS, path, &format!("PodGroup {name:?}"), &e, ctx.settings.fail_on_lookup_error)
        }
    }
}

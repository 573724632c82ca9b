//! PodGroups and CompositePodGroups: their references, what may change on update, and, on
//! create, the Workload template and parent group they are made from.

use super::*;

/// G-16 for the 1.37 `workloadRef` (PodGroups and CompositePodGroups). Returns whether it
/// is well formed, so it can be looked up.
pub(super) fn check_workload_ref(r: &TemplateRef, v: &mut Verdict) -> bool {
    let mut errors = check(r.path.field("workloadName"), r.workload_name, true, names::is_dns1123_subdomain);
    errors.extend(check(r.path.field(r.template_field), r.template_name, true, names::is_dns1123_label));
    let ok = errors.is_empty();
    v.deny_all(TEMPLATE_REF, errors);
    ok
}

/// N5: `parentCompositePodGroupName` is a DNS subdomain. Returns whether it is well formed.
pub(super) fn check_parent_name(parent: Option<&String>, v: &mut Verdict) -> bool {
    let Some(parent) = parent else { return true };
    let errors =
        check(Path::new("spec").field("parentCompositePodGroupName"), parent, false, names::is_dns1123_subdomain);
    let ok = errors.is_empty();
    v.deny_all(PARENT_GROUP, errors);
    ok
}

/// The non-empty parent name of a 1.37 PodGroup.
pub(super) fn parent_of(pg: &PodGroup) -> Option<&str> {
    match pg {
        PodGroup::V1alpha2(_) => None,
        PodGroup::V137(pg) => pg.spec.parent_composite_pod_group_name.as_deref().filter(|p| !p.is_empty()),
    }
}

/// G-16 and N5 for a PodGroup. Returns whether the references are well formed, so they can
/// be looked up.
pub(super) fn check_pod_group(pg: &PodGroup, v: &mut Verdict) -> bool {
    match pg {
        PodGroup::V1alpha2(pg) => {
            let Some(r) = &pg.spec.pod_group_template_ref else { return true };
            let path = Path::new("spec").child("podGroupTemplateRef");
            let Some(w) = &r.workload else {
                v.deny(TEMPLATE_REF, FieldError::invalid(path, "", "must specify one of: `workload`"));
                return false;
            };
            let path = path.child("workload");
            let mut errors = check(path.field("workloadName"), &w.workload_name, true, names::is_dns1123_subdomain);
            errors.extend(check(
                path.field("podGroupTemplateName"),
                &w.pod_group_template_name,
                true,
                names::is_dns1123_label,
            ));
            let ok = errors.is_empty();
            v.deny_all(TEMPLATE_REF, errors);
            ok
        }
        PodGroup::V137(inner) => {
            let s = &inner.spec;
            let ref_ok = pg.template_ref().is_none_or(|r| check_workload_ref(&r, v));
            let parent_ok = check_parent_name(s.parent_composite_pod_group_name.as_ref(), v);
            // Stricter than upstream, which only shadows this rule: a parent means nothing
            // without the Workload the hierarchy comes from.
            if parent_of(pg).is_some() && s.workload_ref.is_none() {
                v.deny(
                    PARENT_GROUP,
                    FieldError::required(
                        Path::new("spec").child("workloadRef"),
                        "must be set when spec.parentCompositePodGroupName is set",
                    ),
                );
            }
            ref_ok && parent_ok
        }
    }
}

/// G-14, G-17, G-20, G-22, G-23, N4, N5 (immutability of a PodGroup's spec fields).
pub(super) fn check_pod_group_update(pg: &PodGroup, old: &PodGroup, v: &mut Verdict) {
    let spec = Path::new("spec");
    match (pg, old) {
        (PodGroup::V1alpha2(new), PodGroup::V1alpha2(old_inner)) => {
            check_spec_update(&pg.group_spec(), &old.group_spec(), PolicyUpdate::Whole, v);
            if new.spec.pod_group_template_ref != old_inner.spec.pod_group_template_ref {
                let value = BadValue::of(&new.spec.pod_group_template_ref);
                v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("podGroupTemplateRef"), value));
            }
        }
        (PodGroup::V137(new), PodGroup::V137(old_inner)) => {
            check_spec_update(&pg.group_spec(), &old.group_spec(), PolicyUpdate::Variant, v);
            if new.spec.workload_ref != old_inner.spec.workload_ref {
                let value = BadValue::of(&new.spec.workload_ref);
                v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("workloadRef"), value));
            }
            if new.spec.parent_composite_pod_group_name != old_inner.spec.parent_composite_pod_group_name {
                let value = BadValue::of(&new.spec.parent_composite_pod_group_name);
                v.deny(PARENT_GROUP, FieldError::immutable(spec.child("parentCompositePodGroupName"), value));
            }
        }
        // A version switch does not happen within one object; nothing to compare.
        _ => {}
    }
}

/// N6: a CompositePodGroup's required `workloadRef` (its name is a metadata rule,
/// `meta.name`). Returns whether the references are well formed, so they can be looked up.
pub(super) fn check_composite_pod_group(cpg: &CompositePodGroup, v: &mut Verdict) -> bool {
    let ref_ok = match cpg.template_ref() {
        Some(r) => check_workload_ref(&r, v),
        None => {
            v.deny(TEMPLATE_REF, FieldError::required(Path::new("spec").child("workloadRef"), ""));
            false
        }
    };
    check_parent_name(cpg.spec.parent_composite_pod_group_name.as_ref(), v) && ref_ok
}

/// N6: a CompositePodGroup's spec is immutable field by field; its policy as a whole.
pub(super) fn check_composite_update(cpg: &CompositePodGroup, old: &CompositePodGroup, v: &mut Verdict) {
    let spec = Path::new("spec");
    check_spec_update(&cpg.group_spec(), &old.group_spec(), PolicyUpdate::Whole, v);
    if cpg.spec.workload_ref != old.spec.workload_ref {
        let value = BadValue::of(&cpg.spec.workload_ref);
        v.deny(TEMPLATE_REF_IMMUTABLE, FieldError::immutable(spec.child("workloadRef"), value));
    }
    if cpg.spec.parent_composite_pod_group_name != old.spec.parent_composite_pod_group_name {
        let value = BadValue::of(&cpg.spec.parent_composite_pod_group_name);
        v.deny(PARENT_GROUP, FieldError::immutable(spec.child("parentCompositePodGroupName"), value));
    }
}

/// A PodGroup or CompositePodGroup being created from a template.
pub(super) struct Group<'a> {
    pub(super) spec: &'a GroupSpec<'a>,
    pub(super) template_ref: TemplateRef<'a>,
    /// `parentCompositePodGroupName`, when set.
    pub(super) parent: Option<&'a str>,
}

/// The fields of a Workload the template rules read.
pub(super) fn workload_masks(version: Version) -> &'static [&'static str] {
    if version.is_137() {
        &["metadata.deletionTimestamp", "spec.podGroupTemplates", "spec.compositePodGroupTemplates"]
    } else {
        &["spec.podGroupTemplates"]
    }
}

/// Reads the Workload a template reference names, in the request's version.
pub(crate) fn get_workload(
    cluster: &dyn Cluster,
    version: Version,
    namespace: &str,
    name: &str,
) -> Result<Option<Workload>, LookupError> {
    let query = Query {
        api_version: version.api_version(),
        kind: "Workload",
        namespace: Some(namespace),
        field_masks: workload_masks(version),
    };
    match cluster.get(&query, name)? {
        None => Ok(None),
        Some(object) => Workload::decode(version, object.get())
            .map(Some)
            .map_err(|e| LookupError::Failed(format!("cannot decode Workload {name:?}: {e}"))),
    }
}

/// The template a reference names, at any depth: a PodGroupTemplate for a PodGroup, a
/// CompositePodGroupTemplate for a CompositePodGroup.
pub(crate) fn find_template<'a, 'b>(
    templates: &'b [GroupSpec<'a>],
    name: &str,
    origin: GroupOrigin,
) -> Option<&'b GroupSpec<'a>> {
    let want = if origin.is_composite() { GroupOrigin::CompositeTemplate } else { GroupOrigin::WorkloadTemplate };
    templates.iter().find(|t| t.origin == want && t.name == Some(name))
}

/// G-18, G-19, N7: on create, the referenced Workload and template exist, the group copies
/// the template, and (1.37) its place in the hierarchy matches the template's.
pub(super) fn check_against_template(ctx: &Context, version: Version, group: &Group, v: &mut Verdict) {
    let (r, namespace) = (&group.template_ref, ctx.namespace);
    let name_path = r.path.child("workloadName");
    let workload = match get_workload(ctx.cluster, version, namespace, r.workload_name) {
        Ok(Some(w)) => w,
        Ok(None) => {
            let detail = format!("Workload {:?} not found in namespace {namespace:?}", r.workload_name);
            v.deny(TEMPLATE_REF_EXISTS, FieldError::not_found(name_path, r.workload_name, detail));
            return;
        }
        Err(e) => {
            let what = format!("Workload {:?}", r.workload_name);
            v.lookup_failed(TEMPLATE_REF_EXISTS, name_path, &what, &e, ctx.settings.fail_on_lookup_error);
            return;
        }
    };
    if version.is_137() && workload.is_being_deleted() {
        let detail = format!("Workload {:?} is being deleted", r.workload_name);
        v.deny(TEMPLATE_REF_EXISTS, FieldError::invalid(name_path, r.workload_name, detail));
        return;
    }
    let templates = workload.group_specs();
    let Some(template) = find_template(&templates, r.template_name, group.spec.origin) else {
        let want = if group.spec.origin.is_composite() {
            GroupOrigin::CompositeTemplate
        } else {
            GroupOrigin::WorkloadTemplate
        };
        let names: Vec<String> =
            templates.iter().filter(|t| t.origin == want).filter_map(|t| t.name).map(|n| format!("{n:?}")).collect();
        let detail = format!("Workload {:?} has no such template (it has {})", r.workload_name, names.join(", "));
        v.deny(TEMPLATE_REF_EXISTS, FieldError::not_found(r.path.child(r.template_field), r.template_name, detail));
        return;
    };
    let source = format!("Workload {:?} template {:?}", r.workload_name, r.template_name);
    check_copies_template(group.spec, template, &source, version, v);
    if version.is_137() {
        let parent_template = template.parent.map(|p| &templates[p]);
        check_hierarchy(ctx, group, parent_template, v);
    }
}

/// G-19: the fields a group copies from its template on create. Values the template leaves
/// to defaulting need not be copied. 1.36 compares the policy, disruption mode and priority
/// class; 1.37 also the priority, preemption policy and scheduling constraints.
pub(super) fn check_copies_template(
    g: &GroupSpec,
    template: &GroupSpec,
    source: &str,
    version: Version,
    v: &mut Verdict,
) {
    let spec = Path::new("spec");
    if g.scheduling_policy != template.scheduling_policy {
        v.deny(
            TEMPLATE_CONSISTENCY,
            FieldError::invalid(
                spec.child("schedulingPolicy"),
                BadValue::of(&g.scheduling_policy),
                format!("must equal the schedulingPolicy of {source}: {}", BadValue::of(&template.scheduling_policy)),
            ),
        );
    }
    let mut differs = |field: &str, have: BadValue, want: BadValue| {
        v.deny(
            TEMPLATE_CONSISTENCY,
            FieldError::invalid(spec.child(field), have, format!("must equal the {field} of {source}: {want}")),
        );
    };
    if let Some(want) = template.disruption_mode.filter(|w| g.disruption_mode != Some(*w)) {
        differs("disruptionMode", BadValue::of(&g.disruption_mode), BadValue::of(&want));
    }
    if let Some(want) = template.priority_class_name.filter(|w| g.priority_class_name != Some(*w)) {
        differs("priorityClassName", BadValue::of(&g.priority_class_name), BadValue::of(want));
    }
    if !version.is_137() {
        return;
    }
    if let Some(want) = template.priority.filter(|w| g.priority != Some(*w)) {
        differs("priority", BadValue::of(&g.priority), BadValue::of(&want));
    }
    if let Some(want) = template.preemption_policy.filter(|w| g.preemption_policy != Some(*w)) {
        differs("preemptionPolicy", BadValue::of(&g.preemption_policy), BadValue::of(want));
    }
    // Constraints are not defaulted: the group has exactly the template's topology.
    let (have, want): (Vec<&str>, Vec<&str>) = (g.topology_keys().collect(), template.topology_keys().collect());
    if have != want {
        differs(
            "schedulingConstraints",
            BadValue::of(&g.scheduling_constraints),
            BadValue::of(&template.scheduling_constraints),
        );
    }
}

/// N7: the hierarchy the apiserver leaves to the scheduler (which would mark the group
/// `Invalid`). A group made from a nested template names the CompositePodGroup made from the
/// parent template, of the same Workload and with the same priority. Following the template
/// tree link by link also rules out cycles and depths over 4, which the Workload already
/// cannot have.
pub(super) fn check_hierarchy(ctx: &Context, group: &Group, parent_template: Option<&GroupSpec>, v: &mut Verdict) {
    let r = &group.template_ref;
    let parent_path = Path::new("spec").child("parentCompositePodGroupName");
    let (parent, parent_template) = match (group.parent, parent_template) {
        (None, None) => return,
        (Some(parent), None) => {
            v.deny(
                HIERARCHY,
                FieldError::invalid(
                    parent_path,
                    parent,
                    format!(
                        "Workload {:?} template {:?} is not nested in a CompositePodGroupTemplate, so the group has no parent",
                        r.workload_name, r.template_name
                    ),
                ),
            );
            return;
        }
        (None, Some(t)) => {
            v.deny(
                HIERARCHY,
                FieldError::required(
                    parent_path,
                    format!(
                        "Workload {:?} template {:?} is nested in CompositePodGroupTemplate {:?}, so the group must name the CompositePodGroup made from it",
                        r.workload_name,
                        r.template_name,
                        t.name.unwrap_or_default()
                    ),
                ),
            );
            return;
        }
        (Some(parent), Some(t)) => (parent, t),
    };
    let query = Query {
        api_version: COMPOSITE_VERSION.api_version(),
        kind: "CompositePodGroup",
        namespace: Some(ctx.namespace),
        field_masks: &["spec.workloadRef", "spec.priorityClassName", "spec.priority"],
    };
    let found = match ctx.cluster.get(&query, parent) {
        Ok(found) => {
            found.map(|object| CompositePodGroup::decode(object.get())).transpose().map_err(LookupError::Failed)
        }
        Err(e) => Err(e),
    };
    let cpg = match found {
        Ok(Some(cpg)) => cpg,
        Ok(None) => {
            let detail = format!("CompositePodGroup {parent:?} not found in namespace {:?}", ctx.namespace);
            v.deny(HIERARCHY, FieldError::not_found(parent_path, parent, detail));
            return;
        }
        Err(e) => {
            let what = format!("CompositePodGroup {parent:?}");
            v.lookup_failed(HIERARCHY, parent_path, &what, &e, ctx.settings.fail_on_lookup_error);
            return;
        }
    };
    let (parent_workload, parent_template_name) =
        cpg.spec.workload_ref.as_ref().map_or(("", ""), |w| (w.workload_name.as_str(), w.template_name.as_str()));
    let want_template = parent_template.name.unwrap_or_default();
    if parent_workload != r.workload_name {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                parent_path,
                parent,
                format!(
                    "CompositePodGroup {parent:?} belongs to Workload {parent_workload:?}, not {:?}",
                    r.workload_name
                ),
            ),
        );
    } else if parent_template_name != want_template {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                parent_path,
                parent,
                format!(
                    "CompositePodGroup {parent:?} is made from template {parent_template_name:?}, but template {:?} is nested in {want_template:?}",
                    r.template_name
                ),
            ),
        );
    }
    let spec = Path::new("spec");
    if group.spec.priority_class_name != cpg.spec.priority_class_name.as_ref() {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                spec.child("priorityClassName"),
                BadValue::of(&group.spec.priority_class_name),
                format!(
                    "must equal the priorityClassName of parent CompositePodGroup {parent:?}: {}",
                    BadValue::of(&cpg.spec.priority_class_name)
                ),
            ),
        );
    } else if group.spec.priority != cpg.spec.priority {
        v.deny(
            HIERARCHY,
            FieldError::invalid(
                spec.child("priority"),
                BadValue::of(&group.spec.priority),
                format!(
                    "must equal the priority of parent CompositePodGroup {parent:?}: {}",
                    BadValue::of(&cpg.spec.priority)
                ),
            ),
        );
    }
}

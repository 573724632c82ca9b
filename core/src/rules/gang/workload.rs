//! Workloads: the template lists and trees, `controllerRef`, and what may change on update.

use super::*;

/// G-07 (shape): `spec.controllerRef`, the same in every version.
pub(super) fn check_controller_ref(kind: &str, name: &str, api_group: Option<&String>, v: &mut Verdict) {
    let path = Path::new("spec.controllerRef");
    v.deny_all(CONTROLLER_REF, check(path.field("kind"), kind, true, names::is_path_segment_name));
    v.deny_all(CONTROLLER_REF, check(path.field("name"), name, true, names::is_path_segment_name));
    if let Some(group) = api_group {
        v.deny_all(CONTROLLER_REF, check(path.field("apiGroup"), group, false, names::is_dns1123_subdomain));
    }
}

/// The Workload rules of each version.
pub(super) fn check_workload(w: &Workload, old: Option<&Workload>, groups: &[GroupSpec], v: &mut Verdict) {
    match (w, old) {
        (Workload::V1alpha2(w), old) => {
            check_workload_136(w, v);
            if let Some(Workload::V1alpha2(old)) = old {
                if w.spec.pod_group_templates != old.spec.pod_group_templates {
                    v.deny(
                        TEMPLATES_IMMUTABLE,
                        FieldError::immutable(
                            Path::new("spec").child("podGroupTemplates"),
                            BadValue::of(w.spec.pod_group_templates.within_maximum()),
                        ),
                    );
                }
                if w.spec.controller_ref != old.spec.controller_ref {
                    v.deny(
                        CONTROLLER_REF,
                        FieldError::immutable(
                            Path::new("spec").child("controllerRef"),
                            BadValue::of(&w.spec.controller_ref),
                        ),
                    );
                }
            }
        }
        (Workload::V137(w), old) => {
            check_workload_137(w, groups, v);
            if let Some(old) = old {
                check_workload_update_137(w, groups, old, v);
            }
        }
    }
}

/// G-02..G-05, G-07 (shape) for 1.36.
pub(super) fn check_workload_136(w: &Workload136, v: &mut Verdict) {
    let path = Path::new("spec").child("podGroupTemplates");
    let templates = &w.spec.pod_group_templates;
    if templates.is_empty() {
        v.deny(TEMPLATES, FieldError::required(path.clone(), ""));
    } else if templates.len() > MAX_TEMPLATES_PER_LIST {
        v.deny(TEMPLATES, FieldError::too_many(path.clone(), templates.len(), MAX_TEMPLATES_PER_LIST));
    }
    // Past the maximum the one error above stands for the whole list, as in the apiserver.
    let mut seen = BTreeSet::new();
    for (i, t) in templates.within_maximum().iter().enumerate() {
        v.deny_all(TEMPLATE_NAME, check(path.index(i).field("name"), &t.name, true, names::is_dns1123_label));
        if !seen.insert(t.name.as_str()) {
            v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(path.index(i), BadValue::of(t)));
        }
    }
    if let Some(r) = &w.spec.controller_ref {
        check_controller_ref(&r.kind, &r.name, r.api_group.as_ref(), v);
    }
}

/// Template names seen so far in the whole tree (1.37 names are unique across it). The sets
/// of names are ordered, not hashed: a hash set's random keys cost a WASI call in every fresh
/// instance.
type SeenNames<'a> = BTreeSet<&'a str>;

/// N1, N2, N3, G-04, G-05, G-07 (shape) for 1.37.
pub(super) fn check_workload_137(w: &Workload137, groups: &[GroupSpec], v: &mut Verdict) {
    let spec = Path::new("spec");
    let s = &w.spec;
    let has_groups = s.pod_group_templates.as_ref().is_some_and(|l| !l.is_empty());
    let has_composites = s.composite_pod_group_templates.as_ref().is_some_and(|l| !l.is_empty());
    match (has_groups, has_composites) {
        (false, false) => v.deny(
            TEMPLATES,
            FieldError::invalid(
                spec.clone(),
                "",
                "must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`",
            ),
        ),
        (true, true) => v.deny(
            TEMPLATES,
            FieldError::invalid(
                spec.clone(),
                "{podGroupTemplates, compositePodGroupTemplates}",
                "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`",
            ),
        ),
        _ => {}
    }
    let mut seen = SeenNames::new();
    check_template_lists(
        s.pod_group_templates.as_deref(),
        s.composite_pod_group_templates.as_deref(),
        &spec,
        true,
        &mut seen,
        v,
    );
    // HW (b): a tree with a composite at depth 4 is reported once, on its top-level
    // composite, with that composite's children (as the apiserver's walk does).
    for (i, t) in s.composite_pod_group_templates.as_deref().unwrap_or_default().iter().enumerate() {
        if too_deep(t, 1) {
            let path = spec.child("compositePodGroupTemplates").index(i);
            let detail = format!("maximum template hierarchy depth is {MAX_TREE_DEPTH}");
            v.deny(TEMPLATE_DEPTH, FieldError::invalid(path, BadValue::of(&t.composite_pod_group_templates), detail));
        }
    }
    if let Some(r) = &s.controller_ref {
        check_controller_ref(&r.kind, &r.name, r.api_group.as_ref(), v);
    }
    // HW (c): one priority configuration for the whole Workload; a missing value counts as
    // a value of its own.
    if let Some(first) = groups.first()
        && groups.iter().any(|g| (g.priority_class_name, g.priority) != (first.priority_class_name, first.priority))
    {
        let detail = if has_composites {
            "all priority and priorityClassName values must be identical, detected multiple values"
        } else {
            "detected multiple priority configurations"
        };
        v.deny(WORKLOAD_PRIORITY, FieldError::invalid(spec, BadValue::of(&serde_json::Value::Null), detail));
    }
}

/// The per-list and per-name rules for one level of a 1.37 template tree (and, below it,
/// every deeper level): at most 8 per list, DNS-label names unique in the list and in the
/// tree, composites with children (the depth is checked from the top: [`too_deep`]).
///
/// `declarative` is false below a list that is over its maximum: the apiserver's
/// declarative `maxItems` short-circuits every other declarative check of that list and of
/// what it holds, while its hand-written checks (names unique across the tree, children)
/// still walk the whole tree.
pub(super) fn check_template_lists<'a>(
    groups: Option<&'a [b1::PodGroupTemplate]>,
    composites: Option<&'a [b1::CompositePodGroupTemplate]>,
    parent: &Path,
    declarative: bool,
    seen: &mut SeenNames<'a>,
    v: &mut Verdict,
) {
    let groups = groups.unwrap_or_default();
    check_names(groups, |t| t.name.as_str(), &parent.child("podGroupTemplates"), declarative, seen, v);
    let list = parent.child("compositePodGroupTemplates");
    let composites = composites.unwrap_or_default();
    let declarative = check_names(composites, |t| t.name.as_str(), &list, declarative, seen, v);
    for (i, t) in composites.iter().enumerate() {
        let path = list.index(i);
        let children = (t.pod_group_templates.as_deref().unwrap_or_default().len())
            + t.composite_pod_group_templates.as_deref().unwrap_or_default().len();
        if children == 0 {
            v.deny(
                COMPOSITE_CHILDREN,
                FieldError::invalid(
                    path.clone(),
                    &t.name,
                    "must have at least one child PodGroupTemplate or CompositePodGroupTemplate",
                ),
            );
        }
        check_template_lists(
            t.pod_group_templates.as_deref(),
            t.composite_pod_group_templates.as_deref(),
            &path,
            declarative,
            seen,
            v,
        );
    }
}

/// Whether a composite at `depth` (1 at the top) or one below it sits at [`MAX_TREE_DEPTH`]:
/// there is room for 3 composite levels and the leaf level.
fn too_deep(t: &b1::CompositePodGroupTemplate, depth: usize) -> bool {
    depth >= MAX_TREE_DEPTH || t.composite_pod_group_templates.iter().flatten().any(|c| too_deep(c, depth + 1))
}

/// One list's names: at most 8 entries, DNS labels, unique in the list (reported on the
/// item, as the apiserver's list-map check does) and across the tree (on the name). Past
/// the maximum, or with `declarative` false, only the tree-wide check runs (see
/// [`check_template_lists`]); returns whether the declarative checks ran.
pub(super) fn check_names<'a, T: Serialize>(
    items: &'a [T],
    name_of: impl Fn(&'a T) -> &'a str,
    list: &Path,
    declarative: bool,
    seen: &mut SeenNames<'a>,
    v: &mut Verdict,
) -> bool {
    let declarative = declarative && {
        let within = items.len() <= MAX_TEMPLATES_PER_LIST;
        if !within {
            v.deny(TEMPLATES, FieldError::too_many(list.clone(), items.len(), MAX_TEMPLATES_PER_LIST));
        }
        within
    };
    let mut in_list = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let name = name_of(item);
        if declarative {
            v.deny_all(TEMPLATE_NAME, check(list.index(i).field("name"), name, true, names::is_dns1123_label));
            if !in_list.insert(name) {
                v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(list.index(i), BadValue::of(item)));
                continue;
            }
        }
        if !seen.insert(name) {
            v.deny(TEMPLATE_UNIQUE, FieldError::duplicate(list.index(i).child("name"), name));
        }
    }
    declarative
}

/// The path of the list an item path sits in: `spec.podGroupTemplates[2]` → `spec.podGroupTemplates`.
pub(super) fn list_of(item: &Path) -> Path {
    let s = item.as_str();
    Path::new(s.rfind('[').map_or(s, |i| &s[..i]))
}

/// N8 and the per-field update rules of 1.37 templates: none added or removed (templates
/// are matched by their names from the top), each field as mutable as upstream allows.
pub(super) fn check_workload_update_137(w: &Workload137, groups: &[GroupSpec], old: &Workload, v: &mut Verdict) {
    let spec = Path::new("spec");
    let (old_groups, old_controller) = match old {
        Workload::V137(old) => (old.group_specs(), old.spec.controller_ref.as_ref()),
        // A version switch does not happen within one object; nothing to compare.
        Workload::V1alpha2(_) => return,
    };
    if w.spec.controller_ref.as_ref() != old_controller {
        v.deny(
            CONTROLLER_REF,
            FieldError::immutable(spec.child("controllerRef"), BadValue::of(&w.spec.controller_ref)),
        );
    }
    let old_by_key: HashMap<&str, &GroupSpec> = old_groups.iter().map(|g| (g.key.as_str(), g)).collect();
    let new_keys: HashSet<&str> = groups.iter().map(|g| g.key.as_str()).collect();
    for g in groups {
        match old_by_key.get(g.key.as_str()) {
            Some(old) => check_spec_update(g, old, PolicyUpdate::Variant, v),
            // Report the topmost added template only.
            None if g.parent.is_none_or(|p| old_by_key.contains_key(groups[p].key.as_str())) => {
                v.deny(TEMPLATES_IMMUTABLE, FieldError::forbidden(g.path.clone(), "item may not be added"));
            }
            None => {}
        }
    }
    let mut reported = HashSet::new();
    for old in &old_groups {
        let parent_kept = old.parent.is_none_or(|p| new_keys.contains(old_groups[p].key.as_str()));
        if !new_keys.contains(old.key.as_str()) && parent_kept {
            let list = list_of(&old.path);
            if reported.insert(list.as_str().to_string()) {
                v.deny(TEMPLATES_IMMUTABLE, FieldError::forbidden(list, "item may not be removed"));
            }
        }
    }
}

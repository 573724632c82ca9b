//! The rules every holder of a group spec shares: a PodGroup, a CompositePodGroup, a
//! Workload template at any depth and a Job's `spec.scheduling`.

use super::*;

/// G-10, G-12, G-20..G-23, G-25, N4 and the minCount cap: the parts of a group spec shared
/// by every holder (PodGroups, CompositePodGroups, Workload templates at any depth and a
/// Job's `spec.scheduling`).
pub(super) fn check_group_spec(settings: &Settings, g: &GroupSpec, v: &mut Verdict) {
    let policy_path = g.path.child("schedulingPolicy");
    let policy = g.scheduling_policy;
    let gang_size = policy.gang_size();
    match (policy.has_basic(), policy.has_gang()) {
        // A Job may leave its policy out: the controller compiles `basic`.
        (false, false) if policy.is_defaulted() => {}
        (false, false) => {
            v.deny(POLICY_UNION, FieldError::invalid(policy_path.clone(), "", "must specify one of: `basic`, `gang`"))
        }
        (true, true) => v.deny(
            POLICY_UNION,
            FieldError::invalid(policy_path.clone(), "{basic, gang}", "must specify exactly one of: `basic`, `gang`"),
        ),
        _ => {}
    }
    let size_ok = match gang_size {
        None => true,
        Some(size) => {
            let path = policy_path.child("gang").child(policy.gang_size_field());
            match size {
                // A required field: Go reads 0 as left out.
                0 if policy.gang_size_required() => v.deny(MIN_COUNT, FieldError::required(path, "")),
                n if n < 1 => v.deny(MIN_COUNT, FieldError::invalid(path, n, "must be greater than or equal to 1")),
                _ => {}
            }
            size >= 1
        }
    };
    // The cap counts pods: a Job gang that leaves minCount out has its parallelism.
    if let Some(max) = settings.max_min_count
        && let Some((n, path)) = g.gang_min_count_at().filter(|(n, _)| size_ok && *n > max)
    {
        let detail = if policy.gang_size().is_some() {
            format!("must be less than or equal to {max} (settings.maxMinCount)")
        } else {
            format!(
                "must be less than or equal to {max} (settings.maxMinCount): with schedulingPolicy.gang.minCount left out, the gang's size is the Job's parallelism"
            )
        };
        v.deny(MAX_MIN_COUNT, FieldError::invalid(path, n, detail));
    }

    let mode_path = g.path.child("disruptionMode");
    let whole_group = match g.disruption_mode {
        None => false,
        Some(Disruption::V1alpha2(mode)) if !DISRUPTION_MODES.contains(&mode) => {
            v.deny(DISRUPTION_MODE, FieldError::not_supported(mode_path.clone(), mode, &DISRUPTION_MODES));
            false
        }
        Some(Disruption::V1alpha2(mode)) => mode == "PodGroup",
        Some(Disruption::Union { single: false, all: false }) => {
            v.deny(DISRUPTION_MODE, FieldError::invalid(mode_path.clone(), "", "must specify one of: `single`, `all`"));
            false
        }
        Some(Disruption::Union { single: true, all: true }) => {
            v.deny(
                DISRUPTION_MODE,
                FieldError::invalid(mode_path.clone(), "{single, all}", "must specify exactly one of: `single`, `all`"),
            );
            false
        }
        Some(Disruption::Union { all, .. }) => all,
    };
    if let Some(mode) = g.disruption_mode.filter(|_| whole_group && g.is_basic()) {
        let (members, instead) = match mode {
            Disruption::V1alpha2(_) => ("pods", "disruptionMode \"Pod\""),
            Disruption::Union { .. } if g.origin.is_composite() => ("child groups", "disruptionMode {\"single\": {}}"),
            Disruption::Union { .. } => ("pods", "disruptionMode {\"single\": {}}"),
        };
        let policy = if policy.is_defaulted() {
            "schedulingPolicy is left out, so the Job controller makes a basic one, which"
        } else {
            "a basic schedulingPolicy"
        };
        v.deny(
            DISRUPTION_MODE_BASIC,
            FieldError::invalid(
                mode_path,
                BadValue::of(&mode),
                format!("{policy} schedules {members} one by one, so the group cannot be disrupted as a whole (use a gang policy or {instead})"),
            ),
        );
    }

    if let Some(name) = g.priority_class_name {
        v.deny_all(
            PRIORITY_CLASS_NAME,
            check(g.path.field("priorityClassName"), name, false, names::is_dns1123_subdomain),
        );
    }
    if let Some(priority) = g.priority {
        let path = g.path.child("priority");
        if priority > HIGHEST_USER_DEFINABLE_PRIORITY {
            v.deny(
                PRIORITY,
                FieldError::invalid(
                    path.clone(),
                    priority,
                    format!("must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}"),
                ),
            );
        }
        // Admission computes a group's priority from its class (or the global default,
        // which also sets the class); a value with no class and not 0 came from a user.
        let user_set = g.origin.is_template() || (g.priority_class_name.is_none_or(|c| c.is_empty()) && priority != 0);
        if settings.forbid_user_priority && user_set {
            v.deny(
                USER_PRIORITY,
                FieldError::forbidden(
                    path,
                    "set priorityClassName instead (the priority is computed from the class at admission)",
                ),
            );
        }
    }
    if let Some(p) = g.preemption_policy.filter(|p| !PREEMPTION_POLICIES.contains(&p.as_str())) {
        v.deny(PREEMPTION_POLICY, FieldError::not_supported(g.path.child("preemptionPolicy"), p, &PREEMPTION_POLICIES));
    }
}

/// How much of `schedulingPolicy` may change on update.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PolicyUpdate {
    /// Nothing (1.36 PodGroups, CompositePodGroups).
    Whole,
    /// `basic` is immutable and `gang` cannot be set or cleared; the gang's size may change
    /// (1.37 PodGroups, templates and Jobs; a Job's policy is also never added or removed).
    Variant,
}

/// G-14, G-20, G-22, G-23, N4: the immutable fields of one group spec against its old self.
/// Constraints and claims are the topology and claims sets' business.
pub(super) fn check_spec_update(new: &GroupSpec, old: &GroupSpec, policy: PolicyUpdate, v: &mut Verdict) {
    let policy_path = new.path.child("schedulingPolicy");
    match policy {
        PolicyUpdate::Whole if new.scheduling_policy != old.scheduling_policy => {
            v.deny(POLICY_IMMUTABLE, FieldError::immutable(policy_path, BadValue::of(&new.scheduling_policy)));
        }
        PolicyUpdate::Whole => {}
        PolicyUpdate::Variant => {
            let (new_p, old_p) = (new.scheduling_policy, old.scheduling_policy);
            match (new_p.is_defaulted(), old_p.is_defaulted()) {
                // A Job's schedulingPolicy is never added or removed (`+k8s:update=NoSet,NoUnset`).
                (false, true) => {
                    v.deny(POLICY_IMMUTABLE, FieldError::forbidden(policy_path, "field cannot be set once created"))
                }
                (true, false) => {
                    v.deny(POLICY_IMMUTABLE, FieldError::forbidden(policy_path, "field cannot be cleared once set"))
                }
                _ => {
                    if new_p.has_basic() != old_p.has_basic() {
                        let basic = new_p.has_basic().then(|| serde_json::json!({}));
                        v.deny(
                            POLICY_IMMUTABLE,
                            FieldError::immutable(policy_path.child("basic"), BadValue::of(&basic)),
                        );
                    }
                    match (new_p.has_gang(), old_p.has_gang()) {
                        (true, false) => v.deny(
                            POLICY_IMMUTABLE,
                            FieldError::forbidden(policy_path.child("gang"), "field cannot be set once created"),
                        ),
                        (false, true) => v.deny(
                            POLICY_IMMUTABLE,
                            FieldError::forbidden(policy_path.child("gang"), "field cannot be cleared once set"),
                        ),
                        _ => {}
                    }
                }
            }
        }
    }
    if new.disruption_mode != old.disruption_mode {
        let value = BadValue::of(&new.disruption_mode);
        v.deny(DISRUPTION_MODE, FieldError::immutable(new.path.child("disruptionMode"), value));
    }
    if new.priority_class_name != old.priority_class_name {
        let value = BadValue::of(&new.priority_class_name);
        v.deny(PRIORITY_CLASS_NAME, FieldError::immutable(new.path.child("priorityClassName"), value));
    }
    if new.priority != old.priority {
        v.deny(PRIORITY, FieldError::immutable(new.path.child("priority"), BadValue::of(&new.priority)));
    }
    if new.preemption_policy != old.preemption_policy {
        let value = BadValue::of(&new.preemption_policy);
        v.deny(PREEMPTION_POLICY, FieldError::immutable(new.path.child("preemptionPolicy"), value));
    }
}

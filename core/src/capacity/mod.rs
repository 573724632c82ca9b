//! Capacity: whether the pods an object makes can ever fit the cluster's Nodes.
//!
//! - [`request`]: what one pod asks of a Node (the scheduler's `PodRequests`, on the Pod as
//!   the apiserver defaults it);
//! - [`placement`]: which Nodes a pod may use (nodeSelector, required node affinity, taints
//!   and tolerations);
//! - [`fit`]: the necessary conditions a pod and a gang must meet on the Nodes, and what to
//!   say when they cannot.
//!
//! The principle: a finding uses only what will still hold when the pod reaches the scheduler.
//! Between the object at the door and the Pod the scheduler sees, admission steps change the
//! pod; anything a later step may add counts in the pod's favour:
//!
//! - Kueue, when it admits a workload, merges its ResourceFlavor's tolerations and node labels
//!   into the pod template: a Kueue-managed object's pods are held to no taint;
//! - the RuntimeClass admission plugin merges its class's `scheduling.tolerations`: they are
//!   counted, and a class that cannot be read holds the pods to no taint;
//! - the ExtendedResourceToleration plugin tolerates the taints named after the extended
//!   resources a pod asks for;
//! - LimitRange defaults only add requests, and are not counted;
//! - a cluster's own mutating webhooks are unknown: the topology setting
//!   `capacityAddedTolerations` names the tolerations they add.
//!
//! What a step only narrows (a flavor's node labels, a class's nodeSelector) is not needed
//! for a proof and is left out. Supply is over-estimated (every Node taken as empty, an amount
//! that cannot be read as unlimited) and demand under-estimated (amounts rounded down before
//! they are added, an amount that cannot be read as none): so only what is provably
//! impossible is reported, and a false alarm on a gang that fits is never made. Nothing here
//! reads the cluster; the topology rules feed it the Node list.

pub mod cel;
pub mod devices;
pub mod fit;
pub mod placement;
pub mod request;

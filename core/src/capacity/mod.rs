//! Capacity: whether the pods an object makes can ever fit the cluster's Nodes.
//!
//! - [`quantity`]: resource amounts as the scheduler counts them;
//! - [`request`]: what one pod asks of a Node (the scheduler's `PodRequests`);
//! - [`placement`]: which Nodes a pod may use (nodeSelector, required node affinity, taints
//!   and tolerations);
//! - [`fit`]: the necessary conditions a pod and a gang must meet on the Nodes, and what to
//!   say when they cannot.
//!
//! Only what is provably impossible is reported: a false alarm on a gang that fits is worse
//! than silence. Nothing here reads the cluster; the topology rules feed it the Node list.

pub mod fit;
pub mod placement;
pub mod quantity;
pub mod request;

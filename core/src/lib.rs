//! gangwarden-core: the typed model of every object gangwarden guards, and the rules.
//!
//! Data flows one way: an admission payload is decoded into a [`review::Review`], a rule set
//! ([`engine::RuleSet`]) turns it into a [`verdict::Verdict`], and [`engine::evaluate`] makes
//! that a transport-neutral [`engine::Response`]. Cluster reads go through [`cluster::Cluster`].
//! Nothing here does I/O or knows about waPC or wasm-bindgen.

pub mod batch;
pub mod capacity;
pub mod cluster;
pub mod decode;
pub mod engine;
pub mod field;
pub mod kubeflow;
pub mod meta;
pub mod names;
pub mod nodes;
pub mod order;
pub mod pod;
pub mod quantity;
pub mod request;
pub mod review;
pub mod rules;
pub mod scheduling;
mod track;
pub mod trainer;
pub mod verdict;
pub mod volcano;

#[path = "../../e2e-tests/src/payloads.rs"]
#[allow(dead_code)]
mod payloads;
use gangwarden_core::engine::evaluate;
use gangwarden_core::rules::*;
use std::time::Instant;
fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    for s in payloads::large_scenarios() {
        if !s.name.contains(&filter) {
            continue;
        }
        let mut line = format!("{:60}", s.name);
        macro_rules! t {
            ($r:ty, $n:expr) => {{
                let st = Instant::now();
                let r = evaluate::<$r>(&s.payload, &s.cluster);
                line += &format!(
                    " {}={:.0}ms({})",
                    $n,
                    st.elapsed().as_secs_f64() * 1e3,
                    r.message.as_deref().map_or(0, str::len)
                );
            }};
        }
        let st = Instant::now();
        let _: serde_json::Value = serde_json::from_slice(&s.payload).unwrap();
        line += &format!(" parse={:.0}ms", st.elapsed().as_secs_f64() * 1e3);
        t!(gang::Gang, "gang");
        t!(claims::Claims, "claims");
        t!(topology::Topology, "topo");
        t!(run_policy::RunPolicyRules, "run");
        println!("{line}");
    }
}

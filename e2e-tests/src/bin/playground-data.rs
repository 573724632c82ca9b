//! `make playground`: writes the playground's build-time data into a folder:
//! `gallery.json` (examples, e2e cases and corpus files as playground states) and
//! `site.json` (version, API versions, settings tables, rule reference).

use std::path::PathBuf;
use std::process::ExitCode;

use gangwarden_e2e_tests::playground::{gallery, site_data};
use serde_json::json;

fn run(out: PathBuf) -> Result<(), String> {
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let write = |name: &str, value: serde_json::Value| {
        let path = out.join(name);
        std::fs::write(&path, value.to_string()).map_err(|e| format!("{}: {e}", path.display()))
    };
    write("gallery.json", json!({ "groups": gallery()? }))?;
    write("site.json", site_data()?)
}

fn main() -> ExitCode {
    let Some(out) = std::env::args_os().nth(1) else {
        eprintln!("usage: playground-data <output folder>");
        return ExitCode::FAILURE;
    };
    match run(PathBuf::from(out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("playground-data: {e}");
            ExitCode::FAILURE
        }
    }
}

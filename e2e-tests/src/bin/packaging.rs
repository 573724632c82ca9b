//! `make packaging`: rewrites the files generated from metadata.yml, questions-ui.yml and the
//! settings types (artifacthub-pkg.yml, the bundle's questions-ui.yml, deploy/, the READMEs'
//! test_data/). `packaging --check` only lists the files that are out of date.

use std::process::ExitCode;

use gangwarden_e2e_tests::packaging::{shown, stale_files, write_all};

fn main() -> ExitCode {
    let check = std::env::args().nth(1).is_some_and(|a| a == "--check");
    let result = if check { stale_files() } else { write_all() };
    match result {
        Ok(files) if files.is_empty() => {
            println!("packaging: every generated file is up to date");
            ExitCode::SUCCESS
        }
        Ok(files) => {
            for file in &files {
                println!("{} {}", if check { "out of date:" } else { "wrote" }, shown(file));
            }
            if check { ExitCode::FAILURE } else { ExitCode::SUCCESS }
        }
        Err(e) => {
            eprintln!("packaging: {e}");
            ExitCode::FAILURE
        }
    }
}

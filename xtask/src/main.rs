//! `cargo xtask <job>`: gangwarden's project automation. The Makefile's targets call these;
//! each job's `--help` says what it does.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gangwarden_harness::metadata::{read_metadata, shown};
use gangwarden_harness::{POLICIES, repo_root};
use gangwarden_harness::{playground, release, sign};

mod artifacthub;
mod sbom;

// The jobs that run policy modules need the harness's waPC host (wasmtime): only the `host`
// feature builds them, so that the other jobs compile in seconds.
#[cfg(feature = "host")]
mod bench;
#[cfg(feature = "host")]
mod bench_case;
#[cfg(feature = "host")]
mod demo;
mod fuzz_seeds;
#[cfg(feature = "host")]
mod kwctl_bench;
#[cfg(feature = "host")]
mod policy_server_bench;

#[derive(Parser)]
#[command(bin_name = "cargo xtask", about = "gangwarden's project automation (the Makefile's targets call these)")]
struct Cli {
    #[command(subcommand)]
    job: Job,
}

#[derive(Subcommand)]
enum Job {
    /// Rewrite the files generated from metadata.yml, questions-ui.yml and the settings types:
    /// artifacthub-pkg.yml, the bundle's questions-ui.yml, deploy/, the READMEs' test_data/
    /// (`make packaging`).
    Packaging {
        /// Only list the files that are out of date, and fail if there are any.
        #[arg(long)]
        check: bool,
    },
    /// Evaluate every example request in a folder (the case-file format) with every built
    /// policy and default settings, one line per policy and request (`make demo`).
    Demo {
        /// The folder of example requests.
        #[arg(default_value = "examples")]
        dir: PathBuf,
    },
    /// Time every built policy in the waPC host against the baseline policy, the large and
    /// hostile payloads, the Node lookups, module sizes and compile times (`make bench`,
    /// `make bench-check`).
    Bench {
        /// Requests per row.
        #[arg(long, default_value_t = 300)]
        runs: usize,
        /// Fail when a CI bar (looser than the target) is exceeded.
        #[arg(long)]
        check: bool,
        /// Replace the table between the markers in this file (BENCHMARKS.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Time one case file against one built policy in the waPC host.
    BenchCase {
        /// The policy's folder (holding policy.wasm and metadata.yml).
        policy_dir: String,
        /// The case file.
        case: String,
        /// Requests to time.
        #[arg(default_value_t = 100)]
        iterations: usize,
        /// Every request on one instance, as `kwctl bench` times them (policy-server makes a
        /// fresh instance per request, and so does this job without the flag).
        #[arg(long)]
        one_instance: bool,
        /// Have wasmtime write `/tmp/perf-<pid>.map`, so that `perf record` names the guest's
        /// functions (build the module with its name section: see BENCHMARKS.md).
        #[arg(long)]
        perf_map: bool,
    },
    /// The everyday requests through one real policy-server behind the test API server, against
    /// the baseline policy, and the Node lookup's floor there (`make bench`; needs kwctl and
    /// policy-server, and says it skipped without them).
    PolicyServerBench {
        /// Keep-alive connections per phase.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
        connections: u64,
        /// Seconds per phase.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Rounds per scenario (medians are taken over them).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
        rounds: u64,
        /// Fail when a policy's throughput is below a third of the baseline's.
        #[arg(long)]
        check: bool,
        /// Replace the text between the markers in this file (BENCHMARKS.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Write the fuzzers' seed corpus: every e2e case, corpus document, benchmark request and
    /// hostile payload as a validate payload, and every case's settings (`make fuzz`).
    FuzzSeeds {
        /// The cargo-fuzz corpus folder.
        dir: PathBuf,
    },
    /// Check that every file states the project's version (and that it is VERSION, when
    /// given: a tag's), and print what a `v<version>` tag publishes (`make release-check`).
    ReleaseCheck {
        /// The version a tag would publish (`v` and all).
        #[arg(long)]
        version: Option<String>,
    },
    /// Write cosign.key (sealed with COSIGN_PASSWORD, in cosign's format) and cosign.pub.
    GenerateKeyPair {
        /// Where to write them.
        #[arg(long, default_value = ".")]
        output_dir: PathBuf,
    },
    /// Sign a pushed module with a cosign key (password in COSIGN_PASSWORD), pushing the
    /// signature next to it, for a registry reached over plain HTTP (a local or air-gapped
    /// one); `kwctl verify -k cosign.pub` checks it.
    Sign {
        /// The cosign private key.
        #[arg(long)]
        key: PathBuf,
        /// The module, by digest: `[registry://]host:port/repository@sha256:<hex>` (what
        /// `kwctl push -o json` prints as immutable_ref).
        reference: String,
    },
    /// Sign every module `make publish` pushed (it collects `kwctl push -o json`'s output in
    /// PUBLISHED): with a cosign key, for a registry reached over plain HTTP, or keyless with
    /// `cosign sign` (Sigstore v2 and v3 bundle formats). Fails unless each project module was
    /// published once and signed (`make sign-published`).
    SignPublished {
        /// The collected `kwctl push -o json` output.
        published: PathBuf,
        /// The cosign private key (password in COSIGN_PASSWORD).
        #[arg(long, conflicts_with = "keyless", required_unless_present = "keyless")]
        key: Option<PathBuf>,
        /// Sign keyless with the `cosign` on PATH (the release workflow).
        #[arg(long)]
        keyless: bool,
    },
    /// Check each module's SBOM (CycloneDX JSON, `make sbom`): it describes the module's crate
    /// and lists every crate the module is built from for wasm32-wasip1, with Cargo.lock's
    /// versions, and nothing else.
    SbomCheck {
        /// The folder holding gangwarden-<name>-v<version>.cdx.json per module.
        dir: PathBuf,
    },
    /// Add this release's artifacthub-pkg.yml and README of each policy to an Artifact Hub
    /// tree (the artifacthub branch): <package>/<version>/, keeping older versions, and
    /// artifacthub-repo.yml at the root (`make artifacthub-tree`).
    Artifacthub {
        /// The tree (created when missing).
        tree: PathBuf,
    },
    /// Write the playground's build-time data into a folder: gallery.json (examples, e2e cases
    /// and corpus files as playground states) and site.json (version, API versions, settings
    /// tables, rule reference) (`make playground`).
    PlaygroundData {
        /// The output folder.
        out: PathBuf,
    },
}

/// A job's outcome: done, failed as checked (exit 1), or could not run (exit 2).
fn exit(name: &str, result: Result<bool, String>) -> ExitCode {
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "host")]
fn packaging_job(check: bool) -> Result<bool, String> {
    use gangwarden_harness::{metadata::shown, packaging};
    let files = if check { packaging::stale_files()? } else { packaging::write_all()? };
    if files.is_empty() {
        println!("packaging: every generated file is up to date");
    }
    for file in &files {
        println!("{} {}", if check { "out of date:" } else { "wrote" }, shown(file));
    }
    Ok(!check || files.is_empty())
}

/// The last part of each module's repository (`gang`, …, `gangwarden`).
fn module_names() -> Result<Vec<String>, String> {
    POLICIES
        .iter()
        .map(|(_, dir)| {
            let image = read_metadata(dir)?.image()?;
            let repository = image.rsplit_once(':').map_or(image.as_str(), |(r, _)| r);
            Ok(repository.rsplit('/').next().unwrap_or_default().to_string())
        })
        .collect()
}

fn sign_published(published: &std::path::Path, key: Option<PathBuf>) -> Result<bool, String> {
    let output = std::fs::read_to_string(published).map_err(|e| format!("{}: {e}", published.display()))?;
    let references = sign::published_references(&output)?;
    let modules = module_names()?;
    let signed = match key {
        Some(key) => {
            let key = sign::read_private_key(&key, &sign::password_from_env())?;
            sign::sign_published(&references, &modules, |r| sign::sign(&key, r).map(|_| ()))?
        }
        None => sign::sign_published(&references, &modules, sign::cosign_keyless)?,
    };
    println!("signed {} of {} published modules:", signed.len(), modules.len());
    for reference in signed {
        println!("  {reference}");
    }
    Ok(true)
}

fn sbom_check(dir: &std::path::Path) -> Result<bool, String> {
    let version = release::project_version()?;
    let lock = std::fs::read_to_string(repo_root().join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    for (name, dir_of) in POLICIES {
        let file = dir.join(format!("gangwarden-{name}-v{version}.cdx.json"));
        let crates = sbom::module_crates(&repo_root().join(dir_of))?;
        let listed = sbom::check(&file, &crates, &lock)?;
        println!("{}: {listed} crates, as Cargo.lock has them", shown(&file));
    }
    Ok(true)
}

/// What a job that runs policy modules says in an xtask built without the waPC host.
#[cfg(not(feature = "host"))]
fn without_host(name: &str) -> ExitCode {
    exit(
        name,
        Err(format!(
            "this job runs the policy modules in the waPC host, which this xtask was built without: \
             run `cargo xtask-host {name} ...` (the Makefile's targets do)"
        )),
    )
}

#[cfg(not(feature = "host"))]
fn main() -> ExitCode {
    match Cli::parse().job {
        Job::Packaging { .. } => without_host("packaging"),
        Job::Demo { .. } => without_host("demo"),
        Job::Bench { .. } => without_host("bench"),
        Job::BenchCase { .. } => without_host("bench-case"),
        Job::PolicyServerBench { .. } => without_host("policy-server-bench"),
        job => common_job(job),
    }
}

#[cfg(feature = "host")]
fn main() -> ExitCode {
    match Cli::parse().job {
        Job::Packaging { check } => exit("packaging", packaging_job(check)),
        Job::Demo { dir } => {
            let dir = if dir.is_absolute() { dir } else { gangwarden_harness::repo_root().join(dir) };
            exit("demo", demo::run(&dir).map(|()| true))
        }
        Job::Bench { runs, check, write } => exit("bench", bench::run(runs, check, write)),
        Job::BenchCase { policy_dir, case, iterations, one_instance, perf_map } => {
            let how = bench_case::How { one_instance, perf_map };
            exit("bench-case", bench_case::run(&policy_dir, &case, iterations, how).map(|()| true))
        }
        Job::PolicyServerBench { connections, seconds, rounds, check, write } => {
            if seconds.is_nan() || seconds <= 0.0 {
                return exit("policy-server-bench", Err("--seconds needs a positive number".into()));
            }
            let args = policy_server_bench::Args {
                connections: connections as usize,
                seconds,
                rounds: rounds as usize,
                check,
                write,
            };
            exit("policy-server-bench", policy_server_bench::run(&args))
        }
        job => common_job(job),
    }
}

/// The jobs that run no policy module.
fn common_job(job: Job) -> ExitCode {
    match job {
        Job::FuzzSeeds { dir } => exit("fuzz-seeds", fuzz_seeds::run(&dir).map(|()| true)),
        Job::ReleaseCheck { version } => {
            let version = version.as_deref().map(|v| v.strip_prefix('v').unwrap_or(v));
            exit("release-check", release::check(version).map(|plan| print!("{plan}")).map(|()| true))
        }
        Job::GenerateKeyPair { output_dir } => exit(
            "generate-key-pair",
            sign::generate_key_pair(&output_dir, &sign::password_from_env()).map(|(key, public)| {
                println!("wrote {} and {}", key.display(), public.display());
                true
            }),
        ),
        Job::Sign { key, reference } => {
            let signed =
                sign::read_private_key(&key, &sign::password_from_env()).and_then(|k| sign::sign(&k, &reference));
            exit("sign", signed.map(|tag| println!("pushed the signature {tag}")).map(|()| true))
        }
        Job::SignPublished { published, key, keyless: _ } => exit("sign-published", sign_published(&published, key)),
        Job::SbomCheck { dir } => exit("sbom-check", sbom_check(&dir)),
        Job::Artifacthub { tree } => {
            let packages: Vec<PathBuf> = POLICIES.iter().map(|(_, dir)| repo_root().join(dir)).collect();
            exit(
                "artifacthub",
                artifacthub::add_release(&tree, &packages).map(|written| {
                    println!("{}: artifacthub-repo.yml, {}", tree.display(), written.join(", "));
                    true
                }),
            )
        }
        Job::PlaygroundData { out } => exit("playground-data", playground::write_data(&out).map(|()| true)),
        Job::Packaging { .. }
        | Job::Demo { .. }
        | Job::Bench { .. }
        | Job::BenchCase { .. }
        | Job::PolicyServerBench { .. } => {
            unreachable!("main runs the jobs that need the waPC host")
        }
    }
}

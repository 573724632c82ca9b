//! `gangwarden`: gangwarden's admission verdicts on manifest files, before they reach a
//! cluster. A thin face over `gangwarden-manifests`, which runs the same rule code as the
//! published policy modules.
//!
//! Exit codes: 0 everything passes, 1 something is rejected (or warned about, with
//! `--strict`), 2 bad usage or input that cannot be read.

mod inputs;
mod output;
mod rules;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use gangwarden_manifests::{Input, KubernetesVersion, RuleSetName};

#[derive(Parser)]
#[command(name = "gangwarden", version, about = "Check Kubernetes manifests with gangwarden's admission rules")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check manifest files as the admission policies would: exit 0 when all pass, 1 when
    /// something is rejected, 2 when the input cannot be read.
    Check(CheckArgs),
    /// List every rule: id, rule set, kinds, summary and an example message.
    Rules(RulesArgs),
    /// Print the AdmissionRequest JSON for a manifest, as `kwctl run --request-path` takes it.
    PolicyRequest(PolicyRequestArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories (searched recursively for *.yaml, *.yml and *.json); `-` reads stdin.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Settings in the bundle policy's format (`gang`, `topology`, `claims`, `runPolicy` keys), YAML or JSON.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,
    /// Run only this rule set (gang, topology, claims, runPolicy); repeat for several. Default: all.
    #[arg(long = "rule-set", value_name = "NAME", value_parser = parse_rule_set)]
    rule_sets: Vec<RuleSetName>,
    /// Previous versions of the objects: a document that matches one (API group, kind, namespace,
    /// name) is checked as an UPDATE from it. Files or directories; repeatable.
    #[arg(long, value_name = "PATH")]
    old: Vec<PathBuf>,
    /// Extra objects that lookups see (e.g. `kubectl get nodes -o yaml`), not checked. Repeatable.
    #[arg(long, value_name = "PATH")]
    cluster: Vec<PathBuf>,
    /// The files and --cluster objects are the whole cluster: a kind none of them holds (e.g.
    /// Node) lists as empty. Without it, checks that list such a kind are skipped with a warning.
    #[arg(long = "whole-cluster")]
    whole_cluster: bool,
    /// The Kubernetes release the manifests are for: reports Workloads and PodGroups in a
    /// scheduling.k8s.io version it does not serve, and what its apiserver refuses before any
    /// policy (1.38: a Job's spec.scheduling next to a schedulingGroup). Supported: 1.36, 1.37,
    /// 1.38 (1.38 as planned: v1, v1beta1 and v1alpha3).
    #[arg(long = "api-version", value_name = "VERSION", value_parser = parse_kubernetes_version)]
    api_version: Option<KubernetesVersion>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Human)]
    output: Format,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    strict: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
    Junit,
    Sarif,
}

#[derive(clap::Args)]
struct RulesArgs {
    /// Only this rule set's rules; repeatable.
    #[arg(long = "rule-set", value_name = "NAME", value_parser = parse_rule_set)]
    rule_sets: Vec<RuleSetName>,
    #[arg(long, short, value_enum, default_value_t = rules::Format::Human)]
    output: rules::Format,
}

#[derive(clap::Args)]
struct PolicyRequestArgs {
    /// A manifest holding one object (`-` reads stdin).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The object's previous version: the request is an UPDATE.
    #[arg(long, value_name = "FILE")]
    old: Option<PathBuf>,
}

fn parse_rule_set(name: &str) -> Result<RuleSetName, String> {
    RuleSetName::parse(name).ok_or_else(|| {
        let names: Vec<&str> = RuleSetName::ALL.iter().map(|r| r.as_str()).collect();
        format!("unknown rule set {name:?}; rule sets: {}", names.join(", "))
    })
}

fn parse_kubernetes_version(text: &str) -> Result<KubernetesVersion, String> {
    KubernetesVersion::parse(text).ok_or_else(|| {
        let versions: Vec<&str> = KubernetesVersion::ALL.iter().map(|v| v.as_str()).collect();
        format!("unsupported Kubernetes version {text:?}; supported: {}", versions.join(", "))
    })
}

const EXIT_REJECTED: u8 = 1;
const EXIT_INPUT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check(args),
        Command::Rules(args) => emit(&rules::render(&args.rule_sets, args.output)),
        Command::PolicyRequest(args) => policy_request(args),
    }
}

/// Prints `text` to stdout; a closed pipe is not an error worth a panic.
fn emit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gangwarden: cannot write the output: {e}");
            ExitCode::from(EXIT_INPUT)
        }
    }
}

fn input_errors(errors: &[impl std::fmt::Display]) -> ExitCode {
    let style = output::Style::for_stderr();
    for e in errors {
        eprintln!("{}: {e}", style.error("error"));
    }
    ExitCode::from(EXIT_INPUT)
}

fn check(args: CheckArgs) -> ExitCode {
    let mut errors = Vec::new();
    let files = inputs::read_paths(&args.paths, &mut errors);
    let old = inputs::read_paths(&args.old, &mut errors);
    let cluster = inputs::read_paths(&args.cluster, &mut errors);
    let settings_file = args.settings.as_ref().and_then(|p| inputs::read_file(p, &mut errors));
    if !errors.is_empty() {
        return input_errors(&errors);
    }
    let input = Input {
        files,
        old,
        cluster,
        settings_file,
        rule_sets: args.rule_sets,
        kubernetes_version: args.api_version,
        partial_cluster: !args.whole_cluster,
        ..Input::default()
    };
    let report = match gangwarden_manifests::check(&input) {
        Ok(report) => report,
        Err(errors) => return input_errors(&errors),
    };
    let text = match args.output {
        Format::Human => output::human(&report, &input.files, output::Style::for_stdout()),
        Format::Json => output::json(&report),
        Format::Junit => output::junit(&report),
        Format::Sarif => output::sarif(&report),
    };
    let written = emit(&text);
    if written != ExitCode::SUCCESS {
        return written;
    }
    if report.rejected() || (args.strict && report.summary.warnings > 0) {
        ExitCode::from(EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    }
}

fn policy_request(args: PolicyRequestArgs) -> ExitCode {
    let mut errors = Vec::new();
    let object = inputs::read_one_object(&args.file, &mut errors);
    let old = args.old.as_ref().and_then(|p| inputs::read_one_object(p, &mut errors));
    let Some(object) = object.filter(|_| errors.is_empty()) else { return input_errors(&errors) };
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    let request =
        gangwarden_core::request::admission_request("gangwarden-policy-request", operation, &object, old.as_ref());
    emit(&format!("{}\n", serde_json::to_string_pretty(&request).unwrap_or_default()))
}

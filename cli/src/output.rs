//! Rendering a report: for people (human), for programs (json), for CI test reports (junit)
//! and for code-scanning UIs (sarif).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::IsTerminal;

use gangwarden_core::rules::catalog;
use gangwarden_manifests::{DocumentReport, Finding, Report, RuleSetName, SourceFile};
use serde_json::{Value, json};

/// ANSI colour, only on a terminal and never with `NO_COLOR` set (https://no-color.org).
#[derive(Clone, Copy)]
pub struct Style {
    colour: bool,
}

/// `no_color`: the value of `NO_COLOR`; set and not empty turns colour off.
fn colour_wanted(is_terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

impl Style {
    pub fn for_stdout() -> Style {
        Style { colour: colour_wanted(std::io::stdout().is_terminal(), std::env::var_os("NO_COLOR")) }
    }

    pub fn for_stderr() -> Style {
        Style { colour: colour_wanted(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR")) }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    pub fn error(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    fn warning(self, text: &str) -> String {
        self.paint("1;33", text)
    }

    fn note(self, text: &str) -> String {
        self.paint("1;36", text)
    }

    fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

fn object_label(doc: &DocumentReport) -> String {
    label(&doc.kind, &doc.namespace, &doc.name)
}

/// `PodGroup ml/train`; a cluster-scoped object has no namespace: `ClusterTrainingRuntime torch`.
fn label(kind: &str, namespace: &str, name: &str) -> String {
    match namespace {
        "" => format!("{kind} {name}"),
        _ => format!("{kind} {namespace}/{name}"),
    }
}

/// A document's findings, each once: the rule sets share a 400 for an object that does not
/// decode, and that is one problem, not four.
fn distinct<'a>(
    doc: &'a DocumentReport,
    pick: impl Fn(&'a gangwarden_manifests::RuleSetResult) -> &'a [Finding],
) -> Vec<&'a Finding> {
    let mut seen = BTreeSet::new();
    doc.results.iter().flat_map(pick).filter(|f| seen.insert((f.line, f.column, f.message.as_str()))).collect()
}

fn errors_of(doc: &DocumentReport) -> Vec<&Finding> {
    distinct(doc, |r| &r.violations)
}

fn warnings_of(doc: &DocumentReport) -> Vec<&Finding> {
    distinct(doc, |r| &r.warnings)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line per finding (`file:line:column: error: Kind namespace/name: message [rule]`),
/// each mutation, then a summary.
pub fn human(report: &Report, files: &[SourceFile], style: Style) -> String {
    let mut out = String::new();
    for doc in &report.documents {
        let label = object_label(doc);
        for (severity, findings) in
            [(style.error("error"), errors_of(doc)), (style.warning("warning"), warnings_of(doc))]
        {
            for f in findings {
                let location = style.bold(&format!("{}:{}:{}:", doc.file, f.line, f.column));
                let (text, rule) = split_rule(&f.message, &f.rule);
                let _ = writeln!(out, "{location} {severity}: {label}: {text} {}", style.dim(&format!("[{rule}]")));
            }
        }
        for result in doc.results.iter().filter(|r| r.accepted) {
            let Some(Value::Array(ops)) = &result.patch else { continue };
            for op in ops {
                let location = style.bold(&format!("{}:{}:{}:", doc.file, doc.line, doc.column));
                let value = op.get("value").map(|v| format!(" {v}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{location} {}: {label}: {} would {} {}{value}",
                    style.note("mutation"),
                    result.rule_set,
                    op["op"].as_str().unwrap_or_default(),
                    op["path"].as_str().unwrap_or_default(),
                );
            }
        }
    }
    for doc in &report.unserved {
        let location = style.bold(&format!("{}:{}:{}:", doc.file, doc.line, doc.column));
        let label = label(&doc.kind, &doc.namespace, &doc.name);
        let _ = writeln!(
            out,
            "{location} {}: {label}: {} {}",
            style.error("error"),
            doc.message,
            style.dim("[api-version]")
        );
    }
    let placed = report.refused.iter().map(|doc| (&doc.at, style.error("error"), &doc.message, "apiserver"));
    let notes = report
        .notes
        .iter()
        .map(|note| (&note.at, style.note("note"), &note.message, gangwarden_manifests::GROUP_CLAIMS_GATE));
    for (at, severity, message, tag) in placed.chain(notes) {
        let location = style.bold(&format!("{}:{}:{}:", at.file, at.line, at.column));
        let label = label(&at.kind, &at.namespace, &at.name);
        let _ = writeln!(out, "{location} {severity}: {label}: {message} {}", style.dim(&format!("[{tag}]")));
    }
    let s = &report.summary;
    let mut parts = vec![format!("{} accepted", s.accepted), format!("{} rejected", s.rejected)];
    if s.unserved > 0 {
        parts.push(format!("{} in an API version not served", s.unserved));
    }
    if let (true, Some(version)) = (s.refused > 0, report.kubernetes_version) {
        parts.push(format!("{} refused by the Kubernetes {} apiserver", s.refused, version.as_str()));
    }
    parts.push(plural(s.warnings, "warning", "warnings"));
    if s.mutated > 0 {
        parts.push(format!("{} would be mutated", s.mutated));
    }
    let mut line = format!(
        "{} in {}: {}",
        plural(s.checked + s.unserved, "document checked", "documents checked"),
        plural(files.len(), "file", "files"),
        parts.join(", ")
    );
    if s.skipped > 0 {
        let _ = write!(line, "; {} skipped (no rule set guards them)", plural(s.skipped, "document", "documents"));
    }
    let painted = if report.rejected() {
        style.error(&line)
    } else if s.warnings > 0 {
        style.warning(&line)
    } else {
        style.bold(&line)
    };
    let _ = writeln!(out, "{painted}");
    out
}

/// The policy's message without its trailing ` [rule]`, and the rule.
fn split_rule<'a>(message: &'a str, rule: &'a str) -> (&'a str, &'a str) {
    let suffix = format!(" [{rule}]");
    (message.strip_suffix(&suffix).unwrap_or(message), rule)
}

pub fn json(report: &Report) -> String {
    format!("{}\n", serde_json::to_string_pretty(report).unwrap_or_default())
}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 cannot carry most control characters, even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test case per document and rule set (a failure when rejected, warnings in
/// `system-out`), skipped documents as skipped test cases.
pub fn junit(report: &Report) -> String {
    let mut cases = String::new();
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    for doc in &report.documents {
        for result in &doc.results {
            tests += 1;
            let name = format!("{} [{}]", object_label(doc), result.rule_set);
            let classname = format!("{}:{}:{}", doc.file, doc.line, doc.column);
            let _ =
                write!(cases, "    <testcase name=\"{}\" classname=\"{}\">", xml_escape(&name), xml_escape(&classname));
            if !result.accepted {
                failures += 1;
                let body: Vec<String> = result
                    .violations
                    .iter()
                    .map(|f| format!("{}:{}:{}: {}", doc.file, f.line, f.column, f.message))
                    .collect();
                let _ = write!(
                    cases,
                    "\n      <failure message=\"{}\" type=\"rejected\">{}</failure>",
                    xml_escape(result.message.as_deref().unwrap_or_default()),
                    xml_escape(&body.join("\n"))
                );
            }
            if !result.warnings.is_empty() {
                let body: Vec<String> = result
                    .warnings
                    .iter()
                    .map(|f| format!("warning: {}:{}:{}: {}", doc.file, f.line, f.column, f.message))
                    .collect();
                let _ = write!(cases, "\n      <system-out>{}</system-out>", xml_escape(&body.join("\n")));
            }
            cases.push_str(if result.accepted && result.warnings.is_empty() {
                "</testcase>\n"
            } else {
                "\n    </testcase>\n"
            });
        }
    }
    // What the chosen release's apiserver refuses: one failed test case each.
    let unserved = report.unserved.iter().map(|doc| {
        (
            format!("{} {}/{} [api-version]", doc.kind, doc.namespace, doc.name),
            &doc.file,
            doc.line,
            doc.column,
            &doc.message,
        )
    });
    let refused = report.refused.iter().map(|doc| {
        (
            format!("{} [apiserver]", label(&doc.at.kind, &doc.at.namespace, &doc.at.name)),
            &doc.at.file,
            doc.at.line,
            doc.at.column,
            &doc.message,
        )
    });
    for (name, file, line, column, message) in unserved.chain(refused) {
        tests += 1;
        failures += 1;
        let _ = writeln!(
            cases,
            "    <testcase name=\"{}\" classname=\"{}\">\n      <failure message=\"{}\" type=\"rejected\"/>\n    </testcase>",
            xml_escape(&name),
            xml_escape(&format!("{file}:{line}:{column}")),
            xml_escape(message)
        );
    }
    for doc in &report.skipped {
        tests += 1;
        skipped += 1;
        let name = format!("{} {}", doc.kind, doc.name);
        let classname = format!("{}:{}:{}", doc.file, doc.line, doc.column);
        let _ = writeln!(
            cases,
            "    <testcase name=\"{}\" classname=\"{}\">\n      <skipped message=\"{}\"/>\n    </testcase>",
            xml_escape(&name),
            xml_escape(&classname),
            xml_escape(&doc.reason)
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gangwarden\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n  <testsuite name=\"gangwarden check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n{cases}  </testsuite>\n</testsuites>\n"
    )
}

/// A path as a SARIF artifact URI (relative, forward slashes, percent-encoded where needed).
fn artifact_uri(file: &str) -> String {
    let mut out = String::new();
    for b in file.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out.trim_start_matches("./").to_string()
}

/// SARIF 2.1.0: every rule as a reporting descriptor, every violation and warning as a result.
pub fn sarif(report: &Report) -> String {
    let rule_ids: Vec<(&str, &str, &str)> = gangwarden_core::rules::every_rule()
        .map(|r| (r.id, r.summary, catalog::doc(r.id).map_or("", |d| d.example)))
        .collect();
    let mut rules: Vec<Value> = rule_ids
        .iter()
        .map(|(id, summary, example)| {
            json!({"id": id, "shortDescription": {"text": summary}, "fullDescription": {"text": format!("{summary}. Example: {example}")},
                   "defaultConfiguration": {"level": "error"}})
        })
        .collect();
    for (id, text) in [
        ("request", "the object decodes as its kind (the policies refuse one that does not, with code 400)"),
        ("api-version", "the object's API version is served by the chosen Kubernetes release"),
        (
            "apiserver",
            "the chosen Kubernetes release's apiserver takes the object (its built-in validation runs before any webhook)",
        ),
    ] {
        rules.push(json!({"id": id, "shortDescription": {"text": text}, "defaultConfiguration": {"level": "error"}}));
    }
    let index_of = |rule: &str| rules.iter().position(|r| r["id"] == rule);
    let result = |rule: &str, level: &str, text: &str, file: &str, line: usize, column: usize| {
        let mut r = json!({
            "ruleId": rule,
            "level": level,
            "message": {"text": text},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(file)},
                "region": {"startLine": line.max(1), "startColumn": column.max(1)}
            }}]
        });
        if let Some(i) = index_of(rule) {
            r["ruleIndex"] = json!(i);
        }
        r
    };
    let mut results = Vec::new();
    for doc in &report.documents {
        for f in errors_of(doc) {
            results.push(result(&f.rule, "error", &f.message, &doc.file, f.line, f.column));
        }
        for f in warnings_of(doc) {
            results.push(result(&f.rule, "warning", &f.message, &doc.file, f.line, f.column));
        }
    }
    for doc in &report.unserved {
        results.push(result("api-version", "error", &doc.message, &doc.file, doc.line, doc.column));
    }
    for doc in &report.refused {
        results.push(result("apiserver", "error", &doc.message, &doc.at.file, doc.at.line, doc.at.column));
    }
    let log = json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "gangwarden",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/gangwarden/gangwarden",
                "rules": rules
            }},
            "results": results,
            "properties": {"ruleSets": report.rule_sets.iter().map(|r: &RuleSetName| r.as_str()).collect::<Vec<_>>()}
        }]
    });
    format!("{}\n", serde_json::to_string_pretty(&log).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_wanted(true, None));
        assert!(colour_wanted(true, Some("".into())));
        assert!(!colour_wanted(true, Some("1".into())));
        assert!(!colour_wanted(false, None));
        assert_eq!(Style { colour: true }.error("error"), "\x1b[1;31merror\x1b[0m");
        assert_eq!(Style { colour: false }.error("error"), "error");
    }

    #[test]
    fn xml_and_uris_are_escaped() {
        assert_eq!(xml_escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;\u{fffd}");
        assert_eq!(artifact_uri("./deploy/my app.yaml"), "deploy/my%20app.yaml");
    }
}

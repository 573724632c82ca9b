// Assembles playground/dist/ from the static page (web/), the engine built by wasm-pack and
// wasm-opt, the data written by `playground-data`, and CodeMirror bundled by esbuild.
//
//   node build/build.mjs --pkg <wasm-pack output> --data <playground-data output> --out <dist>
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, "..", "web");
const { values: args } = parseArgs({ options: { pkg: { type: "string" }, data: { type: "string" }, out: { type: "string" } } });
for (const k of ["pkg", "data", "out"]) if (!args[k]) throw new Error(`--${k} is required`);

const ENGINE_JS = "gangwarden_playground.js";
const ENGINE_WASM = "gangwarden_playground_bg.wasm";
// The gallery entry a first visit opens on: one the gang policy rejects.
const DEFAULT_EXAMPLE = "examples/04-podgroup-broken";
const RULE_SETS = { gang: "gang", topology: "topology", claims: "claims", runPolicy: "run-policy" };

const escapeHtml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
// Markdown table cells hold `code` spans and little else.
const inlineMd = (s) => escapeHtml(s).replace(/`([^`]*)`/g, "<code>$1</code>");

rmSync(args.out, { recursive: true, force: true });
mkdirSync(join(args.out, "pkg"), { recursive: true });
for (const f of readdirSync(web)) {
  if (f !== "index.html" && f !== "sw.js") cpSync(join(web, f), join(args.out, f));
}
for (const f of [ENGINE_JS, ENGINE_WASM]) cpSync(join(args.pkg, f), join(args.out, "pkg", f));
cpSync(join(args.data, "gallery.json"), join(args.out, "gallery.json"));

await build({
  entryPoints: [join(here, "editor-src.js")],
  bundle: true,
  minify: true,
  format: "esm",
  outfile: join(args.out, "editor.js"),
  legalComments: "eof",
  logLevel: "warning",
});

const site = JSON.parse(readFileSync(join(args.data, "site.json"), "utf8"));
const gallery = JSON.parse(readFileSync(join(args.data, "gallery.json"), "utf8"));
const defaultEntry = gallery.groups.flatMap((g) => g.entries).find((e) => e.id === DEFAULT_EXAMPLE);
if (!defaultEntry) throw new Error(`the default example ${DEFAULT_EXAMPLE} is not in the gallery`);
const wasmSha256 = createHash("sha256").update(readFileSync(join(args.out, "pkg", ENGINE_WASM))).digest("hex");

function settingsPanel() {
  const parts = [
    `<p class="hint">Uncheck a policy to leave it out. Settings are a JSON object in the policy's own format
(the bundle's <code>{"gang": {…}, "topology": {…}, …}</code>, one part per policy); empty means the defaults below.</p>`,
  ];
  for (const [key, folder] of Object.entries(RULE_SETS)) {
    const rows = (site.settings[key] ?? [])
      .map((cells) => `<tr>${cells.map((c) => `<td>${inlineMd(c)}</td>`).join("")}</tr>`)
      .join("\n");
    parts.push(`<fieldset>
<legend>${key}</legend>
<label><input type="checkbox" id="enabled-${key}" checked> run the ${folder} policy</label>
<label for="settings-${key}" class="pane-label">${key} settings (JSON)</label>
<textarea id="settings-${key}" rows="3" spellcheck="false" autocapitalize="off" autocomplete="off" aria-describedby="settings-${key}-feedback"></textarea>
<p id="settings-${key}-feedback" class="settings-feedback" aria-live="polite">Defaults.</p>
<details><summary>${key} settings and their defaults</summary>
<div class="table-wrap"><table class="defaults">
<thead><tr><th scope="col">setting</th><th scope="col">type</th><th scope="col">default</th><th scope="col">meaning</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></details>
</fieldset>`);
  }
  return parts.join("\n");
}

const index = readFileSync(join(web, "index.html"), "utf8")
  .replace("{{DEFAULT_MANIFESTS}}", escapeHtml(defaultEntry.state.manifests))
  .replace('<div id="settings"></div>', `<div id="settings">\n${settingsPanel()}\n</div>`)
  .replace("{{VERSION}}", escapeHtml(site.version))
  .replace("{{API_VERSIONS}}", site.apiVersions.map((v) => `<code>${escapeHtml(v)}</code>`).join(", "))
  .replace("{{ENGINE_FILE}}", `pkg/${ENGINE_WASM}`)
  .replace("{{ENGINE_SHA256}}", wasmSha256);
if (/\{\{[A-Z_]+\}\}/.test(index)) throw new Error(`index.html has an unfilled placeholder: ${index.match(/\{\{[A-Z_]+\}\}/)[0]}`);
writeFileSync(join(args.out, "index.html"), index);

// The rule reference the verdicts link to: one anchor per rule id.
// The metadata rules run with every rule set; their section comes last.
const RULE_SECTIONS = { ...Object.fromEntries(Object.keys(RULE_SETS).map((k) => [k, `policies/${RULE_SETS[k]}/README.md`])), metadata: "every policy" };
const rulesBySet = Object.keys(RULE_SECTIONS).map((key) => {
  const rows = site.rules
    .filter((r) => r.ruleSet === key)
    .map(
      (r) => `<tr id="${escapeHtml(r.id)}"><th scope="row"><code>${escapeHtml(r.id)}</code></th><td>${escapeHtml(r.catalogue)}</td><td>${escapeHtml(r.summary)}</td><td>${inlineMd(r.example)}</td></tr>`,
    )
    .join("\n");
  return `<section aria-labelledby="set-${key}"><h2 id="set-${key}">${key} (${RULE_SECTIONS[key]})</h2>
<div class="table-wrap"><table class="matrix">
<thead><tr><th scope="col">rule id</th><th scope="col">catalogue</th><th scope="col">guarantees</th><th scope="col">example message</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
});
writeFileSync(
  join(args.out, "rules.html"),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'">
<title>gangwarden rules</title>
<link rel="stylesheet" href="style.css">
<link rel="icon" href="favicon.svg" type="image/svg+xml">
</head>
<body>
<header><h1>gangwarden rules</h1><p><a href="./">Back to the playground</a>. Every rule id a verdict can name, by policy, as in each policy's README.</p></header>
<main class="single">
${rulesBySet.join("\n")}
</main>
<footer><p>gangwarden ${escapeHtml(site.version)}</p></footer>
</body>
</html>
`,
);

// The service worker caches every file; its cache name changes whenever a file does.
function listFiles(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? listFiles(p) : [p];
  });
}
const files = listFiles(args.out).sort();
const contentHash = createHash("sha256");
for (const f of files) contentHash.update(relative(args.out, f)).update(readFileSync(f));
const urls = ["./", ...files.map((f) => relative(args.out, f).split("\\").join("/"))];
const sw = readFileSync(join(web, "sw.js"), "utf8")
  .replace("{{CACHE_NAME}}", `gangwarden-playground-${contentHash.digest("hex").slice(0, 16)}`)
  .replace("{{FILES}}", JSON.stringify(urls));
writeFileSync(join(args.out, "sw.js"), sw);

writeFileSync(
  join(args.out, "build-info.json"),
  JSON.stringify({ version: site.version, apiVersions: site.apiVersions, engine: `pkg/${ENGINE_WASM}`, engineSha256: wasmSha256, defaultExample: DEFAULT_EXAMPLE }, null, 2),
);
console.log(`playground: ${files.length + 2} files in ${args.out}, engine sha256 ${wasmSha256}`);

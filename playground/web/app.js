// The playground page: collects the inputs, sends them to the engine in a Web Worker, renders
// the report. It holds no rules: every verdict comes from the gangwarden engine (wasm).
import { lineDiff } from "./diff.js";
import { decodeState, encodeState } from "./share.js";

const RULE_SETS = ["gang", "topology", "claims", "runPolicy"];
const STORAGE_KEY = "gangwarden-playground/state";
const MANIFESTS_FILE = "manifests.yaml";
const OLD_FILE = "previous.yaml";
const CLUSTER_FILE = "cluster.yaml";
// Kubewarden's default policy timeout: an evaluation running longer is stopped.
const DEFAULT_TIME_LIMIT_MS = 2000;
const $ = (id) => document.getElementById(id);

// What tests and curious users can read: timings and the last report.
const pg = (window.__pg = { firstVerdictMs: null, lastResult: null, evaluations: 0, timeLimitMs: DEFAULT_TIME_LIMIT_MS });

// ---------------------------------------------------------------------------------------------
// The engine worker. One request at a time; while one runs, only the newest waiting one is kept.

class Engine {
  constructor() {
    this.seq = 0;
    this.pending = new Map();
    this.start();
  }

  start() {
    this.worker = new Worker("worker.js", { type: "module" });
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => this.failAll(new Error(`the engine could not start: ${e.message || "worker error"}`));
  }

  onMessage({ id, result, error, ms }) {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (error !== undefined) p.reject(new Error(error));
    else p.resolve({ result, ms });
  }

  failAll(err) {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }

  /// Stops the worker (and whatever it runs) and starts a fresh one.
  restart(err) {
    this.worker.terminate();
    this.failAll(err);
    this.start();
  }

  call(op, arg) {
    return new Promise((resolve, reject) => {
      const id = ++this.seq;
      const timer = setTimeout(() => {
        const err = new Error(
          `The evaluation took longer than ${pg.timeLimitMs / 1000} s and was stopped (Kubewarden stops a policy after the same time). The page is still usable: shorten the input and try again.`,
        );
        err.timeout = true;
        this.restart(err);
      }, pg.timeLimitMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker.postMessage({ id, op, arg });
    });
  }
}

const engine = new Engine();

// ---------------------------------------------------------------------------------------------
// Inputs: the textareas until the editor has loaded, then the editor for the manifests.

let editor = null;
// The default example, as the page was served (the textarea's original content).
const defaultManifests = $("manifests").defaultValue;

function manifestsText() {
  return editor ? editor.getText() : $("manifests").value;
}

function setManifestsText(text) {
  if (editor) editor.setText(text);
  else $("manifests").value = text;
}

function currentState() {
  const settings = {};
  const ruleSets = [];
  for (const name of RULE_SETS) {
    settings[name] = $(`settings-${name}`).value;
    if ($(`enabled-${name}`).checked) ruleSets.push(name);
  }
  const kubernetesVersion = $("kubernetes-version").value;
  return { manifests: manifestsText(), old: $("old").value, cluster: $("cluster").value, settings, ruleSets, kubernetesVersion };
}

function applyState(state) {
  setManifestsText(state.manifests ?? "");
  $("old").value = state.old ?? "";
  $("cluster").value = state.cluster ?? "";
  $("old-pane").open = Boolean(state.old);
  $("cluster-pane").open = Boolean(state.cluster);
  $("kubernetes-version").value = state.kubernetesVersion ?? "";
  const ruleSets = state.ruleSets?.length ? state.ruleSets : RULE_SETS;
  for (const name of RULE_SETS) {
    $(`settings-${name}`).value = state.settings?.[name] ?? "";
    $(`enabled-${name}`).checked = ruleSets.includes(name);
  }
  validateAllSettings();
}

function files(name, text) {
  return text.trim() ? [{ name, text }] : [];
}

/// The engine input, or an error message when a settings box is not JSON.
function engineInput(state) {
  const settings = {};
  for (const name of RULE_SETS) {
    const text = state.settings[name].trim();
    if (!text) continue;
    try {
      settings[name] = JSON.parse(text);
    } catch (e) {
      return { error: `The ${name} settings are not valid JSON: ${e.message}` };
    }
  }
  return {
    input: {
      files: files(MANIFESTS_FILE, state.manifests),
      old: files(OLD_FILE, state.old),
      cluster: files(CLUSTER_FILE, state.cluster),
      settings,
      ruleSets: state.ruleSets,
      // Like `gangwarden check --api-version`: the same engine input.
      ...(state.kubernetesVersion ? { kubernetesVersion: state.kubernetesVersion } : {}),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

let running = false;
let queued = false;

async function evaluateNow() {
  if (running) {
    queued = true;
    return;
  }
  running = true;
  const state = currentState();
  saveState(state);
  const { input, error } = engineInput(state);
  try {
    if (error) {
      showError(error);
    } else {
      const started = performance.now();
      const { result } = await engine.call("evaluate", input);
      render(result, performance.now() - started);
    }
  } catch (e) {
    showError(e.message);
  } finally {
    running = false;
    pg.evaluations += 1;
    if (queued) {
      queued = false;
      evaluateNow();
    }
  }
}

let debounce = null;
function evaluateSoon() {
  clearTimeout(debounce);
  debounce = setTimeout(evaluateNow, 150);
}

function showError(message) {
  pg.lastResult = { error: message };
  $("summary").textContent = message;
  $("verdicts").replaceChildren(el("p", { class: "error" }, message));
  if (editor) editor.setDiagnostics([]);
}

// ---------------------------------------------------------------------------------------------
// Rendering the report.

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function docLabel(doc) {
  const name = doc.namespace ? `${doc.namespace}/${doc.name ?? ""}` : (doc.name ?? "(no name)");
  return `${doc.kind ?? "(no kind)"} ${name}`;
}

/// accepted / rejected / warned / mutated for one rule set's result.
function outcome(r) {
  if (!r.accepted) return "rejected";
  if (r.patch && r.patch.length) return "mutated";
  if (r.warnings && r.warnings.length) return "warned";
  return "accepted";
}

function ruleLink(rule) {
  return el("a", { class: "rule", href: `rules.html#${encodeURIComponent(rule)}` }, rule);
}

function jumpButton(file, line, column) {
  if (file !== MANIFESTS_FILE || !line) return line ? el("span", { class: "timing" }, ` (${file} line ${line})`) : null;
  return el(
    "button",
    { type: "button", class: "jump", onclick: () => jumpTo(line, column), "aria-label": `Go to line ${line}` },
    `line ${line}`,
  );
}

function jumpTo(line, column) {
  if (editor) {
    editor.jumpTo(line, column || 1);
    return;
  }
  const ta = $("manifests");
  const lines = ta.value.split("\n");
  let at = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) at += lines[i].length + 1;
  ta.focus();
  ta.setSelectionRange(at, at + (lines[line - 1]?.length ?? 0));
}

/// The message without the path in front and the rule id behind, which are shown apart.
function findingDetail(f) {
  let text = f.message;
  if (f.path && text.startsWith(`${f.path}: `)) text = text.slice(f.path.length + 2);
  if (text.endsWith(` [${f.rule}]`)) text = text.slice(0, -(f.rule.length + 3));
  return text;
}

function findingItem(kind, f, file) {
  return el(
    "li",
    { class: kind },
    el("span", { class: "v " + (kind === "violation" ? "rejected" : "warned") }, kind === "violation" ? "denied" : "warning"),
    " ",
    ruleLink(f.rule),
    " ",
    f.path ? el("span", { class: "path" }, f.path) : null,
    f.path ? ": " : "",
    findingDetail(f),
    " ",
    jumpButton(file, f.line, f.column),
  );
}

function formatMs(micros) {
  if (micros === undefined || micros === null) return "";
  return micros >= 1000 ? `${(micros / 1000).toFixed(1)} ms` : `${(micros / 1000).toFixed(2)} ms`;
}

function resultOf(doc, name) {
  return doc.results.find((r) => r.ruleSet === name);
}

function documentTime(doc) {
  return doc.results.reduce((sum, r) => sum + (r.elapsedMicros ?? 0), 0);
}

function render(report, roundTripMs) {
  pg.lastResult = report;
  if (pg.firstVerdictMs === null) {
    pg.firstVerdictMs = performance.now();
    afterFirstVerdict();
  }
  const out = [];
  const diagnostics = [];
  const errors = report.errors ?? [];
  if (errors.length) {
    out.push(
      el(
        "div",
        { class: "error", role: "alert" },
        el("strong", {}, "The input cannot be checked:"),
        el("ul", {}, errors.map((e) => el("li", {}, `${e.file ?? ""}${e.line ? `:${e.line}:${e.column}` : ""}: ${e.message} `, jumpButton(e.file, e.line, e.column)))),
      ),
    );
    for (const e of errors) if (e.file === MANIFESTS_FILE && e.line) diagnostics.push({ line: e.line, column: e.column, severity: "error", message: e.message });
  }
  const docs = report.documents ?? [];
  const ruleSets = report.ruleSets ?? RULE_SETS;
  if (docs.length) {
    const head = el("tr", {}, el("th", { scope: "col" }, "Document"), ruleSets.map((n) => el("th", { scope: "col" }, n)), el("th", { scope: "col" }, "time"));
    const rows = docs.map((doc, i) =>
      el(
        "tr",
        {},
        el("th", { scope: "row" }, el("a", { href: `#doc-${i}`, onclick: (e) => { e.preventDefault(); $(`doc-${i}`).scrollIntoView(); } }, docLabel(doc)), el("span", { class: "timing" }, ` ${doc.operation}, line ${doc.line}`)),
        ruleSets.map((n) => {
          const r = resultOf(doc, n);
          if (!r) return el("td", {}, el("span", { class: "v skipped" }, "—"));
          const o = outcome(r);
          const count = o === "rejected" ? ` ${r.violations?.length || 1}` : o === "warned" ? ` ${r.warnings.length}` : "";
          return el("td", {}, el("span", { class: `v ${o}` }, o + count));
        }),
        el("td", { class: "timing" }, formatMs(documentTime(doc))),
      ),
    );
    out.push(
      el(
        "div",
        { class: "table-wrap" },
        el("table", { class: "matrix" }, el("caption", { class: "timing" }, "Each document × each policy"), el("thead", {}, head), el("tbody", {}, rows)),
      ),
    );
    docs.forEach((doc, i) => out.push(renderDocument(doc, i, ruleSets, diagnostics)));
  } else if (!errors.length) {
    out.push(el("p", {}, "No document to check: paste a Workload, PodGroup, Pod or Kubeflow job."));
  }
  placedFindings(out, diagnostics, apiserverRefusals(report), {
    box: { class: "error", id: "apiserver" },
    title: `Refused by the Kubernetes ${report.kubernetesVersion} apiserver, before any policy:`,
    item: "violation",
    badge: ["v rejected", "refused"],
    severity: "error",
  });
  // Group claims the apiserver drops where a feature gate is off: no policy sees them go.
  placedFindings(out, diagnostics, report.notes ?? [], {
    box: { class: "notes", id: "notes" },
    title: "Notes: what no policy can see from inside the cluster",
    item: "note",
    badge: ["v noted", "note"],
    severity: "info",
  });
  const skipped = report.skipped ?? [];
  if (skipped.length) {
    out.push(el("p", { class: "timing" }, `Not guarded by any policy (accepted untouched): ${skipped.map((s) => `${s.kind ?? "?"} at ${s.file}:${s.line}`).join(", ")}`));
  }
  $("verdicts").replaceChildren(...out);
  $("summary").textContent = summaryText(report, roundTripMs);
  if (editor) editor.setDiagnostics(diagnostics);
}

/// A list of what is said of a place in a document (an apiserver refusal, a note), each with a
/// jump to its line and a mark in the editor; `category`, when set, is shown as a tag.
function placedFindings(out, diagnostics, found, { box, title, item, badge, severity }) {
  if (!found.length) return;
  const tag = (f) => (f.category ? ` [${f.category}]` : "");
  const entry = (f) => [el("span", { class: badge[0] }, badge[1]), " ", `${docLabel(f)}: ${f.message} `, ...(f.category ? [el("span", { class: "timing" }, `[${f.category}]`), " "] : []), jumpButton(f.file, f.line, f.column)];
  out.push(el("div", box, el("strong", {}, title), el("ul", { class: "findings" }, found.map((f) => el("li", { class: item }, ...entry(f))))));
  for (const f of found) if (f.file === MANIFESTS_FILE && f.line) diagnostics.push({ line: f.line, column: f.column, severity, message: `${f.message}${tag(f)}` });
}

function renderDocument(doc, i, ruleSets, diagnostics) {
  const parts = [el("h3", {}, `${docLabel(doc)} `, el("span", { class: "timing" }, `${doc.apiVersion ?? ""} · ${doc.operation} · ${doc.file} line ${doc.line} · ${formatMs(documentTime(doc))}`))];
  for (const n of ruleSets) {
    const r = resultOf(doc, n);
    if (!r) continue;
    const o = outcome(r);
    const items = [];
    for (const v of r.violations ?? []) {
      items.push(findingItem("violation", v, doc.file));
      if (doc.file === MANIFESTS_FILE && v.line) diagnostics.push({ line: v.line, column: v.column, severity: "error", message: v.message });
    }
    if (!r.accepted && !(r.violations ?? []).length && r.message) items.push(el("li", { class: "violation" }, `${r.code ? `code ${r.code}: ` : ""}${r.message}`));
    for (const w of r.warnings ?? []) {
      items.push(findingItem("warning", w, doc.file));
      if (doc.file === MANIFESTS_FILE && w.line) diagnostics.push({ line: w.line, column: w.column, severity: "warning", message: w.message });
    }
    const section = [el("p", {}, el("strong", {}, n), " ", el("span", { class: `v ${o}` }, o), " ", el("span", { class: "timing" }, formatMs(r.elapsedMicros)))];
    if (items.length) section.push(el("ul", { class: "findings" }, items));
    if (r.patch && r.patch.length) section.push(renderMutation(doc, r));
    if (r.lookups && r.lookups.length) section.push(renderLookups(r.lookups));
    parts.push(el("div", {}, section));
  }
  return el("section", { class: "doc", id: `doc-${i}`, "aria-label": docLabel(doc) }, parts);
}

function renderMutation(doc, r) {
  const before = JSON.stringify(doc.object ?? {}, null, 2);
  const after = JSON.stringify(r.mutatedObject ?? {}, null, 2);
  const diff = lineDiff(before.split("\n"), after.split("\n"));
  return el(
    "details",
    { open: true },
    el("summary", {}, "Mutation: JSON patch and diff"),
    el("pre", { "aria-label": "JSON patch (RFC 6902)" }, JSON.stringify(r.patch, null, 2)),
    el("pre", { class: "diff", "aria-label": "diff of the object" }, diff.map(([op, line]) => el("span", { class: op === "+" ? "add" : op === "-" ? "del" : null }, `${op === "=" ? " " : op} ${line}\n`))),
  );
}

function renderLookups(lookups) {
  return el(
    "details",
    {},
    el("summary", {}, `${lookups.length} lookup${lookups.length === 1 ? "" : "s"} in the pasted documents`),
    el("ul", {}, lookups.map((l) => el("li", {}, lookupText(l)))),
  );
}

function lookupText(l) {
  const what = `${l.apiVersion}/${l.kind}${l.namespace ? ` in ${l.namespace}` : ""}${l.name ? ` named ${l.name}` : " (list)"}`;
  const result = typeof l.result === "string" ? l.result : JSON.stringify(l.result);
  return `${what}${l.fieldMasks?.length ? ` [${l.fieldMasks.join(", ")}]` : ""}: ${result}`;
}

/// What the chosen release's apiserver refuses: documents in an API version it does not serve
/// (not checked) and what its validation refuses (checked all the same).
function apiserverRefusals(report) {
  return [...(report.unserved ?? []).map((u) => ({ ...u, category: "api-version" })), ...(report.refused ?? []).map((r) => ({ ...r, category: "apiserver" }))];
}

function summaryText(report, roundTripMs) {
  const docs = report.documents ?? [];
  if ((report.errors ?? []).length) return `The input cannot be checked: ${report.errors[0].message}`;
  const rejected = [];
  let warned = 0;
  let mutated = 0;
  for (const doc of docs) {
    for (const r of doc.results) {
      const n = r.ruleSet;
      const o = outcome(r);
      if (o === "rejected") rejected.push(`${docLabel(doc)} by ${n} [${(r.violations ?? []).map((v) => v.rule).join(", ") || `code ${r.code}`}]`);
      if (o === "warned") warned++;
      if (o === "mutated") mutated++;
    }
  }
  const refusals = apiserverRefusals(report);
  let head = rejected.length ? `Rejected: ${rejected.join("; ")}.` : "Every document is accepted.";
  if (refusals.length) head += ` Refused by the Kubernetes ${report.kubernetesVersion} apiserver: ${refusals.map((r) => `${docLabel(r)} [${r.category}]`).join("; ")}.`;
  const extra = [warned ? `${warned} with warnings` : "", mutated ? `${mutated} mutated` : ""].filter(Boolean).join(", ");
  return `${head}${extra ? ` ${extra}.` : ""} ${docs.length} document${docs.length === 1 ? "" : "s"} checked in ${roundTripMs.toFixed(1)} ms.`;
}

// ---------------------------------------------------------------------------------------------
// Settings: each rule set's JSON, checked by the engine's validate_settings as you type.

async function validateSettings(name) {
  const box = $(`settings-${name}`);
  const feedback = $(`settings-${name}-feedback`);
  const text = box.value.trim();
  if (!text) {
    feedback.className = "settings-feedback ok";
    feedback.textContent = "Defaults.";
    box.removeAttribute("aria-invalid");
    return;
  }
  try {
    JSON.parse(text);
  } catch (e) {
    feedback.className = "settings-feedback bad";
    feedback.textContent = `Not valid JSON: ${e.message}`;
    box.setAttribute("aria-invalid", "true");
    return;
  }
  try {
    const { result } = await engine.call("validateSettings", { ruleSet: name, settings: text });
    feedback.className = `settings-feedback ${result.valid ? "ok" : "bad"}`;
    feedback.textContent = result.valid ? "Valid settings." : result.message;
    if (result.valid) box.removeAttribute("aria-invalid");
    else box.setAttribute("aria-invalid", "true");
  } catch (e) {
    feedback.className = "settings-feedback bad";
    feedback.textContent = e.message;
  }
}

function validateAllSettings() {
  for (const name of RULE_SETS) validateSettings(name);
}

// ---------------------------------------------------------------------------------------------
// Persistence: localStorage autosave, shared links, gallery deep links.

function saveState(state) {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
  } catch {
    // Storage may be full or disabled; the page works without it.
  }
}

function storedState() {
  try {
    const text = localStorage.getItem(STORAGE_KEY);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

let gallery = null;
async function loadGallery() {
  if (!gallery) {
    gallery = fetch("gallery.json").then((r) => {
      if (!r.ok) throw new Error(`gallery.json: HTTP ${r.status}`);
      return r.json();
    });
  }
  return gallery;
}

async function renderGallery() {
  try {
    const data = await loadGallery();
    const groups = data.groups.map((g) =>
      el(
        "details",
        { class: "gallery-group", open: g.policy === "examples" },
        el("summary", {}, el("strong", {}, g.title), ` (${g.entries.length})`),
        el(
          "ul",
          {},
          g.entries.map((e) =>
            el(
              "li",
              {},
              el("a", { href: `#ex=${encodeURIComponent(e.id)}` }, e.title),
              " ",
              el("span", { class: `expect v ${e.expected}` }, e.expected),
            ),
          ),
        ),
      ),
    );
    $("gallery-list").replaceChildren(...groups);
  } catch (e) {
    $("gallery-list").replaceChildren(el("p", { class: "error" }, `The examples could not be loaded: ${e.message}`));
  }
}

/// Applies the state the fragment names (#s=… or #ex=…); false when it names none.
async function stateFromHash() {
  const hash = location.hash.slice(1);
  if (hash.startsWith("s=")) {
    try {
      applyState(await decodeState(hash.slice(2)));
      $("share-status").textContent = "Loaded the shared state.";
    } catch (e) {
      showError(`The shared link cannot be read: ${e.message}`);
      return "error";
    }
    return true;
  }
  if (hash.startsWith("ex=")) {
    const id = decodeURIComponent(hash.slice(3));
    const data = await loadGallery();
    const entry = data.groups.flatMap((g) => g.entries).find((e) => e.id === id);
    if (!entry) {
      showError(`There is no example named ${id}.`);
      return "error";
    }
    applyState(entry.state);
    return true;
  }
  return false;
}

async function share() {
  const state = currentState();
  const encoded = await encodeState(state);
  const url = `${location.origin}${location.pathname}#s=${encoded}`;
  history.replaceState(null, "", url);
  const status = $("share-status");
  const field = el("input", { id: "share-url", type: "text", readonly: true, value: url, "aria-label": "Link to this state", size: 24 });
  status.replaceChildren(field, ` ${url.length} characters${url.length > 8192 ? " (long: some chat tools cut links this long)" : ""}`);
  field.select();
  try {
    await navigator.clipboard.writeText(url);
    status.append(", copied.");
  } catch {
    status.append(", select it and copy.");
  }
}

// ---------------------------------------------------------------------------------------------
// After the first verdict: the editor, the gallery and the offline cache load.

async function afterFirstVerdict() {
  renderGallery();
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("sw.js").catch(() => {});
  }
  try {
    const { createEditor } = await import("./editor.js");
    const ta = $("manifests");
    const host = el("div", { class: "editor" });
    editor = createEditor({ host, doc: ta.value, label: "Documents to check", onChange: evaluateSoon });
    ta.replaceWith(host);
    $("editor-host").previousElementSibling.removeAttribute("for");
    pg.editorLoaded = true;
    evaluateNow();
  } catch (e) {
    // The textarea keeps working without the editor.
    pg.editorError = String(e);
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  for (const id of ["manifests", "old", "cluster"]) $(id).addEventListener("input", evaluateSoon);
  for (const name of RULE_SETS) {
    $(`settings-${name}`).addEventListener("input", () => {
      validateSettings(name);
      evaluateSoon();
    });
    $(`enabled-${name}`).addEventListener("change", evaluateNow);
  }
  $("kubernetes-version").addEventListener("change", evaluateNow);
  $("share").addEventListener("click", share);
  $("reset").addEventListener("click", () => {
    history.replaceState(null, "", location.pathname);
    applyState({ manifests: defaultManifests });
    evaluateNow();
  });
  window.addEventListener("hashchange", async () => {
    if ((await stateFromHash()) === true) evaluateNow();
  });
  pg.setTimeLimit = (ms) => (pg.timeLimitMs = ms);
  pg.evaluate = () => evaluateNow();
  pg.call = (op, arg) => engine.call(op, arg);
  pg.editorText = () => editor?.getText();
  pg.setManifests = (text) => {
    setManifestsText(text);
    if (!editor) evaluateSoon();
  };
  pg.editorSelectionLine = () => editor?.selectionLine();
  pg.editorFocused = () => Boolean(editor?.hasFocus());

  const fromHash = await stateFromHash();
  if (fromHash === false) {
    const saved = storedState();
    if (saved) applyState(saved);
  }
  if (fromHash !== "error") evaluateNow();
}

main();

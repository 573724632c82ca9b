// Runs the gangwarden engine (wasm-bindgen build of the playground crate) off the page's
// thread. The page terminates this worker when an evaluation runs past its time limit.
import init, { evaluate, validate_settings, version_info } from "./pkg/gangwarden_playground.js";

const ready = init({ module_or_path: new URL("./pkg/gangwarden_playground_bg.wasm", import.meta.url) });

const calls = {
  evaluate: (input) => JSON.parse(evaluate(JSON.stringify(input))),
  validateSettings: ({ ruleSet, settings }) => JSON.parse(validate_settings(ruleSet, settings)),
  versionInfo: () => JSON.parse(version_info()),
};

self.onmessage = async (event) => {
  const { id, op, arg } = event.data;
  try {
    await ready;
    const started = performance.now();
    const result = calls[op](arg);
    self.postMessage({ id, result, ms: performance.now() - started });
  } catch (e) {
    self.postMessage({ id, error: String(e && e.message ? e.message : e) });
  }
};

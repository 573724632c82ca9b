// A static file server for playground/dist/ on the loopback interface only, sending the same
// Content-Security-Policy as the page's meta tag (workers take theirs from the header).
//
//   node playground/serve.mjs [dist folder] [port]     (make playground-serve)
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/// Serves `dir` on 127.0.0.1:`port` (0 picks a free port); resolves to the listening server.
export function serve(dir, port = 0) {
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    const headers = { "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache" };
    try {
      const path = decodeURIComponent(new URL(req.url, "http://127.0.0.1").pathname);
      let file = normalize(join(root, path));
      if (file !== root && !file.startsWith(root + sep)) throw Object.assign(new Error("outside"), { code: "ENOENT" });
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, { ...headers, "Content-Type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (e) {
      res.writeHead(e.code === "ENOENT" || e.code === "EISDIR" ? 404 : 500, { ...headers, "Content-Type": "text/plain" });
      res.end(e.code === "ENOENT" ? "not found\n" : "error\n");
    }
  });
  return new Promise((ok) => server.listen(port, "127.0.0.1", () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? join(fileURLToPath(new URL(".", import.meta.url)), "dist");
  const server = await serve(dir, Number(process.argv[3] ?? 8123));
  console.log(`serving ${dir} at http://127.0.0.1:${server.address().port}/`);
}

// The whole state in the URL fragment, which browsers never send to a server:
// "v1." + base64url(deflate-raw(JSON)), compressed by the browser's own CompressionStream.
const PREFIX = "v1.";

async function pipe(bytes, transform) {
  const stream = new Blob([bytes]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function toBase64Url(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export async function encodeState(state) {
  const json = new TextEncoder().encode(JSON.stringify(state));
  return PREFIX + toBase64Url(await pipe(json, new CompressionStream("deflate-raw")));
}

export async function decodeState(encoded) {
  if (!encoded.startsWith(PREFIX)) throw new Error(`unknown link format (expected it to start with ${PREFIX})`);
  const bytes = await pipe(fromBase64Url(encoded.slice(PREFIX.length)), new DecompressionStream("deflate-raw"));
  const state = JSON.parse(new TextDecoder().decode(bytes));
  if (typeof state !== "object" || state === null || typeof state.manifests !== "string") {
    throw new Error("the link does not hold a playground state");
  }
  return state;
}

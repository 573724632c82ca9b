// A line diff for showing mutations: common prefix and suffix are cut first, and the middle is
// aligned by longest common subsequence only while it stays small (mutations touch a few lines);
// a larger middle is shown as removed-then-added, so the cost never grows quadratically.
const MAX_TABLE = 250_000;

/// [[op, line]] with op "=" (kept), "-" (removed) or "+" (added).
export function lineDiff(before, after) {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let endB = before.length;
  let endA = after.length;
  while (endB > start && endA > start && before[endB - 1] === after[endA - 1]) {
    endB--;
    endA--;
  }
  const out = before.slice(0, start).map((l) => ["=", l]);
  const midB = before.slice(start, endB);
  const midA = after.slice(start, endA);
  if ((midB.length + 1) * (midA.length + 1) <= MAX_TABLE) {
    out.push(...lcsDiff(midB, midA));
  } else {
    out.push(...midB.map((l) => ["-", l]), ...midA.map((l) => ["+", l]));
  }
  out.push(...before.slice(endB).map((l) => ["=", l]));
  return out;
}

function lcsDiff(a, b) {
  const w = b.length + 1;
  const table = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * w + j] = a[i] === b[j] ? table[(i + 1) * w + j + 1] + 1 : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(["=", a[i]]);
      i++;
      j++;
    } else if (table[(i + 1) * w + j] >= table[i * w + j + 1]) {
      out.push(["-", a[i++]]);
    } else {
      out.push(["+", b[j++]]);
    }
  }
  while (i < a.length) out.push(["-", a[i++]]);
  while (j < b.length) out.push(["+", b[j++]]);
  return out;
}

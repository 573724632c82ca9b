// The CodeMirror 6 editor the page swaps in for its textarea once loaded. esbuild bundles this
// file and CodeMirror into one vendored module, dist/editor.js (see build.mjs).
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { yaml } from "@codemirror/lang-yaml";
import { setDiagnostics, lintGutter } from "@codemirror/lint";

/// Offset of 1-based `line`/`column` in the document, clamped to it.
function offsetOf(doc, line, column) {
  const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
  return Math.min(l.from + Math.max(column - 1, 0), l.to);
}

// The page's colours (CSS custom properties inherit into the shadow root).
const theme = EditorView.theme({
  "&": {
    height: "60vh",
    minHeight: "240px",
    border: "1px solid var(--line)",
    borderRadius: "4px",
    backgroundColor: "var(--panel)",
    color: "var(--fg)",
    fontSize: "13px",
  },
  "&.cm-focused": { outline: "3px solid var(--accent)" },
  ".cm-scroller": { fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace', overflow: "auto" },
  ".cm-gutters": { backgroundColor: "var(--panel)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
  // @codemirror/lint draws its markers and underlines with data: images, which the CSP
  // (img-src 'self') refuses: plain CSS shapes instead.
  ".cm-lint-marker": { content: "normal", width: "0.7em", height: "0.7em", borderRadius: "50%", margin: "0.25em" },
  ".cm-lint-marker-error": { content: "normal", backgroundColor: "#d0342c" },
  ".cm-lint-marker-warning": { content: "normal", backgroundColor: "#d08a00" },
  ".cm-lint-marker-info": { content: "normal", backgroundColor: "#2f6fb0" },
  ".cm-lintRange": { backgroundImage: "none", textDecorationLine: "underline", textDecorationStyle: "wavy", textUnderlineOffset: "3px" },
  ".cm-lintRange-error": { backgroundImage: "none", textDecorationColor: "#d0342c" },
  ".cm-lintRange-warning": { backgroundImage: "none", textDecorationColor: "#d08a00" },
  ".cm-lintRange-info": { backgroundImage: "none", textDecorationColor: "#2f6fb0" },
});

/// Mounts the editor in a shadow root on `host`: there CodeMirror's styles go into an adopted
/// style sheet, which the page's CSP (no inline styles) allows; in the document it would
/// add a <style> element, which the CSP blocks.
export function createEditor({ host, doc, label, onChange }) {
  const root = host.attachShadow({ mode: "open" });
  const view = new EditorView({
    root,
    parent: root,
    state: EditorState.create({
      doc,
      extensions: [
        basicSetup,
        theme,
        yaml(),
        lintGutter(),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": label }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    // diagnostics: [{line, column, severity: "error" | "warning" | "info", message}]
    setDiagnostics(diagnostics) {
      const doc = view.state.doc;
      const list = diagnostics.map((d) => {
        const from = offsetOf(doc, d.line, d.column);
        const to = Math.max(doc.lineAt(from).to, from);
        return { from, to, severity: d.severity, message: d.message };
      });
      view.dispatch(setDiagnostics(view.state, list));
    },
    jumpTo(line, column) {
      const at = offsetOf(view.state.doc, line, column);
      view.dispatch({ selection: { anchor: at, head: view.state.doc.lineAt(at).to }, scrollIntoView: true });
      view.focus();
    },
    focus: () => view.focus(),
    hasFocus: () => view.hasFocus,
    selectionLine: () => view.state.doc.lineAt(view.state.selection.main.head).number,
  };
}

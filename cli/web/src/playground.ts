// The playground: write a job, drop input files, Run. The gate checks the code as you
// type (debounced) and its violations are marked at their line and column; a run shows
// the report as a model would read it.

import { python } from "@codemirror/lang-python";
import { type Diagnostic, linter, lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorView, basicSetup } from "codemirror";
import { call, ApiError } from "./api";
import { bytes, h, replace } from "./dom";
import { embeddedImages, reportView } from "./report";
import { checkedTables } from "./table";
import type { Report, Violation } from "./types";

const STARTER = `import numpy as np
import matplotlib.pyplot as plt

x = np.linspace(0, 2 * np.pi, 200)
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.plot(x, np.sin(x), label="sin")
ax.plot(x, np.cos(x), label="cos")
ax.set_title("Two waves")
ax.set_xlabel("x (radians)")
ax.set_ylabel("value")
ax.legend()
fig.savefig(OUT)
`;

/**
 * Typing over a selection goes through the editor, not the browser's own editing: over
 * a selection that spans highlighted tokens (after Ctrl+A, say) Chromium keeps the
 * removed text's look by inserting a span with an inline `style` attribute, which the
 * page's Content-Security-Policy refuses (issue 36).
 */
const typedOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    const typed = event.inputType === "insertText" || event.inputType === "insertReplacementText";
    if (!typed || view.state.selection.main.empty || view.composing) return false;
    event.preventDefault();
    const text = event.data ?? event.dataTransfer?.getData("text/plain") ?? "";
    view.dispatch(view.state.replaceSelection(text), { userEvent: "input.type", scrollIntoView: true });
    return true;
  },
});

/** Milliseconds of quiet typing before the gate checks the code. */
const CHECK_DELAY_MS = 400;

/** The editor and its inputs survive switching views. */
let state: { root: HTMLElement; recheck: () => void } | null = null;

export function playground(): HTMLElement {
  if (state) state.recheck(); // the token may have changed since the last visit
  else state = build();
  return state.root;
}

function build() {
  const files = new Map<string, File>();
  const gateNote = h("span", { id: "gate-note", class: "muted" }, "");
  const violations = h("ul", { id: "violations", class: "violations" });
  const result = h("div", { id: "result" });
  const fileList = h("ul", { id: "files", class: "files" });
  const timeout = h("input", { id: "timeout", type: "number", min: "0.1", step: "0.1", value: "10" });
  // A table job's declaration (options.expect): the files it must write and the checks
  // on its tables, in the JSON form every door takes. Empty: a figure job as before.
  const expect = h("textarea", {
    id: "expect",
    rows: 6,
    spellcheck: "false",
    placeholder: '{"version": 1, "artifacts": ["result.csv"],\n "tables": [{"artifact": "result.csv", "required_columns": ["dept", "cost"]}]}',
  });
  const checksPanel = h("details", { id: "checks-panel", class: "checks-panel" }, h("summary", {}, "Checks (a table job's declaration, JSON)"), expect);
  const runButton = h("button", { id: "run", type: "button", class: "primary" }, "Run");
  const picker = h("input", { id: "file-input", type: "file", multiple: true });
  const drop = h("div", { id: "drop", class: "drop" }, "Drop input files here, or ", picker);

  const showViolations = (found: Violation[]) => {
    replace(
      violations,
      ...found.map((v) =>
        h(
          "li",
          { "data-line": v.line, "data-col": v.col },
          h("span", { class: "where" }, `line ${v.line}, col ${v.col}`),
          " ",
          h("span", { class: "rule" }, v.rule),
          `: ${v.message}`,
          v.hint ? h("div", { class: "hint" }, v.hint) : null,
        ),
      ),
    );
    gateNote.textContent = found.length === 0 ? "gate: ok" : `gate: ${found.length} violation${found.length > 1 ? "s" : ""}`;
  };

  const check = async (view: EditorView): Promise<Diagnostic[]> => {
    const code = view.state.doc.toString();
    try {
      const report = await call<Report>("POST", "/v1/check", { code });
      showViolations(report.violations);
      return diagnostics(view, report.violations);
    } catch (e) {
      gateNote.textContent = `gate: ${e instanceof Error ? e.message : String(e)}`;
      return [];
    }
  };
  // The linter runs the check once typing pauses.
  const gate = linter(check, { delay: CHECK_DELAY_MS });

  const editor = new EditorView({
    doc: STARTER,
    extensions: [
      basicSetup,
      python(),
      lintGutter(),
      gate,
      EditorView.lineWrapping,
      EditorView.cspNonce.of(styleNonce()),
      typedOverSelection,
    ],
  });

  const renderFiles = () => {
    replace(
      fileList,
      ...[...files.values()].map((f) => {
        const remove = h("button", { type: "button", class: "link" }, "remove");
        remove.addEventListener("click", () => {
          files.delete(f.name);
          renderFiles();
        });
        return h("li", {}, h("code", {}, f.name), ` ${bytes(f.size)} `, remove);
      }),
    );
  };
  const addFiles = (list: FileList | null) => {
    for (const f of Array.from(list ?? [])) files.set(f.name, f);
    renderFiles();
  };
  picker.addEventListener("change", () => addFiles(picker.files));
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    addFiles(e.dataTransfer?.files ?? null);
  });

  runButton.addEventListener("click", async () => {
    runButton.disabled = true;
    replace(result, h("p", { class: "muted" }, "Running…"));
    try {
      const inputs: Record<string, string> = {};
      for (const f of files.values()) inputs[f.name] = await base64(f);
      const seconds = Number(timeout.value);
      const options: Record<string, unknown> = Number.isFinite(seconds) && seconds > 0 ? { timeout_ms: Math.round(seconds * 1000) } : {};
      const declared = declaration(expect.value);
      if (declared instanceof Error) {
        replace(result, h("p", { class: "error", id: "request-error" }, declared.message));
        return;
      }
      if (declared !== null) options.expect = declared;
      const report = await call<Report>("POST", "/v1/jobs", {
        code: editor.state.doc.toString(),
        inputs,
        options,
      });
      replace(result, reportView(report, embeddedImages(report), declared === null ? [] : declaredTables(declared)));
      showViolations(report.violations);
      editor.dispatch(setDiagnostics(editor.state, diagnostics(editor, report.violations)));
    } catch (e) {
      const text = e instanceof ApiError ? `${e.status} ${e.code}: ${e.message}` : String(e);
      replace(result, h("p", { class: "error", id: "request-error" }, text));
    } finally {
      runButton.disabled = false;
    }
  });

  const root = h(
    "div",
    { class: "playground" },
    h(
      "div",
      { class: "left" },
      h("div", { class: "toolbar" }, runButton, h("label", {}, "Timeout (s) ", timeout), gateNote),
      h("div", { id: "editor" }, editor.dom),
      violations,
      checksPanel,
      drop,
      fileList,
      h("p", { class: "muted" }, "The code reads inputs with srcpath('name') and saves its figure to OUT; a table job writes the files its Checks declare."),
    ),
    h("div", { class: "right" }, result),
  );
  const recheck = () => void check(editor).then((found) => editor.dispatch(setDiagnostics(editor.state, found)));
  return { root, recheck };
}

/** The declaration typed under Checks: `null` when empty, an error when it is not a JSON
 *  object (the server says what else is wrong with it). */
function declaration(text: string): Record<string, unknown> | null | Error {
  if (text.trim() === "") return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    return new Error("Checks: the declaration is a JSON object ({\"version\": 1, ...})");
  } catch (e) {
    return new Error(`Checks: not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The tables a declaration checks, in the order their checks run. */
function declaredTables(declared: Record<string, unknown>): string[] {
  const tables = Array.isArray(declared.tables) ? declared.tables : [];
  return checkedTables(
    tables.flatMap((t) => (typeof t === "object" && t !== null && typeof t.artifact === "string" ? [`table:${t.artifact}`] : [])),
  );
}

/** The nonce the server put in this answer's CSP for the editor's generated stylesheet. */
function styleNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? "";
}

/** Gate violations as editor diagnostics at their 1-based line and column. */
function diagnostics(view: EditorView, found: Violation[]): Diagnostic[] {
  const doc = view.state.doc;
  return found.map((v) => {
    const line = doc.line(Math.min(Math.max(v.line, 1), doc.lines));
    const from = Math.min(line.from + Math.max(v.col - 1, 0), line.to);
    // Underline the offending word, or the rest of the line.
    const word = view.state.wordAt(from);
    const to = word && word.to > from ? word.to : Math.max(line.to, from);
    return {
      from,
      to,
      severity: "error",
      source: v.rule,
      message: v.hint ? `${v.message}. ${v.hint}` : v.message,
    };
  });
}

async function base64(file: File): Promise<string> {
  const data = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < data.length; i += chunk) {
    binary += String.fromCharCode(...data.subarray(i, i + chunk));
  }
  return btoa(binary);
}

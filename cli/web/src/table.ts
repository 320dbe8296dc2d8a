// A table artifact (CSV, xlsx) as the report previews it: the sheet and the workbook's
// sheets, its shape, each column's header and kind, the first rows; and, for a table job
// with checks, the checks' verdict beside it. Every header and cell is the file's data,
// written by the job's code: it goes into the page as text only (through `h`), so a cell
// like `<img src=x onerror=...>` or `=HYPERLINK(...)` is shown, never made into anything.

import { bytes, h } from "./dom";
import type { ArtifactReport, Report, TablePreview } from "./types";

/** What the checks on one table artifact found. */
export interface Verdict {
  /** `ok`: every check passed; `failed`: this table's check failed; `not_run`: the run
   *  ended before its checks (an error, or another artifact's check failed first). */
  state: "ok" | "failed" | "not_run";
  text: string;
}

/** The table artifacts a job checks, from the ids of its checks (`table:<artifact>`), in
 *  the order they run. */
export function checkedTables(validators: string[] | undefined): string[] {
  const names: string[] = [];
  for (const id of validators ?? []) {
    if (!id.startsWith("table:")) continue;
    const name = id.slice("table:".length);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** The artifact whose table check failed, when that is how the run failed. */
export function failedTable(report: Report): string | null {
  const check = report.error?.check;
  if (report.status !== "invalid_output" || !check?.startsWith("table:")) return null;
  return check.slice("table:".length);
}

/**
 * The verdict on `name`'s checks, or `null` when the run checks no table of that name.
 * `checked` lists the checked tables in the order their checks run: those before a
 * failing one passed, those after it did not run.
 */
export function verdictFor(report: Report, name: string, checked: string[]): Verdict | null {
  const failed = failedTable(report);
  if (failed === name) return { state: "failed", text: failedCheckText(report, name) };
  if (!checked.includes(name)) return null;
  if (report.status === "ok") return { state: "ok", text: "every check passed" };
  if (failed !== null && checked.indexOf(name) < checked.indexOf(failed)) {
    return { state: "ok", text: `every check passed (a check on ${failed} failed)` };
  }
  if (failed !== null) return { state: "not_run", text: `not reached: the check on ${failed} failed first` };
  return { state: "not_run", text: `the run ended ${report.status} before this table's checks` };
}

/** The failing check's own words: the error's message without its `invalid output:
 *  table:<name>:` prefix, else the feedback. */
function failedCheckText(report: Report, name: string): string {
  const message = report.error?.message ?? "";
  const prefix = `invalid output: table:${name}: `;
  if (message.startsWith(prefix)) return message.slice(prefix.length);
  return message || report.feedback;
}

/** The verdict as a line; `named` puts the artifact's name first (a verdict shown away
 *  from its table). */
export function verdictView(name: string, verdict: Verdict, named = false): HTMLElement {
  const label = verdict.state === "ok" ? "checks ok" : verdict.state === "failed" ? "check failed" : "not checked";
  return h(
    "div",
    { class: `verdict ${verdict.state}`, "data-verdict": verdict.state, "data-artifact": name },
    named ? h("code", { class: "verdict-name" }, name) : null,
    h("span", { class: "verdict-label" }, label),
    h("span", { class: "verdict-text" }, verdict.text),
  );
}

/** A table artifact: caption, sheet, shape, verdict, and the preview as an HTML table. */
export function tableArtifactView(a: ArtifactReport & { table: TablePreview }, verdict: Verdict | null): HTMLElement {
  const t = a.table;
  const sheets = t.sheets ?? [];
  const headRows = t.head.length;
  const shownColumns = t.columns.length;
  return h(
    "figure",
    { class: "artifact table-artifact", "data-name": a.name },
    h("figcaption", {}, `${a.name} · ${a.media_type} · ${bytes(a.bytes)}`),
    h(
      "div",
      { class: "table-meta" },
      t.sheet != null ? h("span", { class: "sheet" }, "Sheet ", h("strong", { class: "sheet-name" }, t.sheet)) : null,
      sheets.length > 0
        ? h("span", { class: "sheets" }, "sheets: ", ...sheets.flatMap((s, i) => [i > 0 ? ", " : "", h("span", { class: "sheet-item" }, s)]))
        : null,
      h("span", { class: "shape" }, `${count(t.rows, "row")} × ${count(t.column_count, "column")}`),
    ),
    verdict ? verdictView(a.name, verdict) : null,
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "preview" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...t.columns.map((c) =>
              h("th", { "data-kind": c.kind }, h("span", { class: "col-name" }, c.name), h("span", { class: "kind" }, c.kind)),
            ),
          ),
        ),
        h(
          "tbody",
          {},
          ...t.head.map((row) =>
            h("tr", {}, ...t.columns.map((_, i) => h("td", {}, row[i] ?? ""))),
          ),
        ),
      ),
    ),
    headRows < t.rows || shownColumns < t.column_count
      ? h(
          "p",
          { class: "muted table-note" },
          [
            headRows < t.rows ? `the first ${headRows} of ${count(t.rows, "row")}` : null,
            shownColumns < t.column_count ? `the first ${shownColumns} of ${count(t.column_count, "column")}` : null,
          ]
            .filter((x) => x !== null)
            .join("; "),
        )
      : null,
  );
}

function count(n: number, unit: string): string {
  return `${n.toLocaleString("en-US")} ${unit}${n === 1 ? "" : "s"}`;
}

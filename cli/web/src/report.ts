// How a report reads on the page: status, figures and tables (with the table checks'
// verdicts), the figure summary, the feedback exactly as a model gets it, stdout, timings
// and the traceback. Used by the playground (a fresh report) and the run browser (a
// recorded attempt's).

import { badge, bytes, h, ms } from "./dom";
import { failedTable, tableArtifactView, verdictFor, verdictView } from "./table";
import type { ArtifactReport, Report } from "./types";

/** The sections of a report; `images` supplies each artifact's displayable URL, `checked`
 *  the table artifacts the job checks, in the order the checks run (a failed table check
 *  is read from the report itself). Classes, not ids: the run browser shows one report
 *  per attempt. */
export function reportView(report: Report, images: Map<string, string>, checked: string[] = []): HTMLElement {
  const artifacts = report.artifacts ?? [];
  const t = report.timings_ms;
  // Checked tables the report has no artifact for (a failed run returns none): their
  // verdicts stand on their own.
  const failed = failedTable(report);
  const unshown = [...checked, ...(failed !== null && !checked.includes(failed) ? [failed] : [])].filter(
    (name) => !artifacts.some((a) => a.name === name && a.table),
  );
  const verdicts = unshown.flatMap((name) => {
    const v = verdictFor(report, name, checked);
    return v ? [verdictView(name, v, true)] : [];
  });
  const ran = report.stdout !== undefined;
  return h(
    "div",
    { class: "report" },
    h("div", { class: "status-line" }, "Status ", h("span", { class: "status" }, badge(report.status))),
    artifacts.length > 0
      ? h(
          "section",
          { class: "figures" },
          ...artifacts.map((a) =>
            a.table ? tableArtifactView({ ...a, table: a.table }, verdictFor(report, a.name, checked)) : artifactView(a, images.get(a.name)),
          ),
        )
      : null,
    verdicts.length > 0 ? h("section", { class: "checks" }, h("h3", {}, "Table checks"), ...verdicts) : null,
    report.description
      ? h("section", {}, h("h3", {}, "Figure summary"), h("pre", { class: "figure-summary" }, report.description))
      : null,
    h("section", {}, h("h3", {}, "Feedback"), h("pre", { class: "feedback" }, report.feedback || "(none: the job did what was asked)")),
    ran
      ? h(
          "section",
          {},
          h("h3", {}, "Stdout", report.stdout_dropped ? ` (${report.stdout_dropped} bytes dropped)` : ""),
          h("pre", { class: "stdout" }, report.stdout || "(nothing printed)"),
        )
      : null,
    report.stderr
      ? h("section", {}, h("h3", {}, "Stderr (warnings, log lines)"), h("pre", { class: "stderr" }, report.stderr))
      : null,
    t
      ? h(
          "section",
          {},
          h("h3", {}, "Timings"),
          h(
            "table",
            { class: "timings" },
            h("tr", {}, ...["gate", "queue", "exec", "total"].map((k) => h("th", {}, k))),
            h("tr", {}, ...[t.gate, t.queue, t.exec, t.total].map((v) => h("td", {}, ms(v)))),
          ),
        )
      : null,
    report.error?.traceback
      ? h("section", {}, h("h3", {}, "Traceback"), h("pre", { class: "traceback" }, report.error.traceback))
      : null,
  );
}

function artifactView(a: ArtifactReport, url: string | undefined): HTMLElement {
  const isImage = a.media_type === "image/png" || a.media_type === "image/svg+xml";
  return h(
    "figure",
    { class: "artifact" },
    isImage && url ? h("img", { src: url, alt: a.name, "data-name": a.name }) : null,
    h("figcaption", {}, `${a.name} · ${a.media_type} · ${bytes(a.bytes)}`),
  );
}

/** `data:` URLs for a fresh report's embedded artifacts. */
export function embeddedImages(report: Report): Map<string, string> {
  const urls = new Map<string, string>();
  for (const a of report.artifacts ?? []) {
    if (a.data_base64 && (a.media_type === "image/png" || a.media_type === "image/svg+xml")) {
      urls.set(a.name, `data:${a.media_type};base64,${a.data_base64}`);
    }
  }
  return urls;
}

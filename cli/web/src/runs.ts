// The run browser: recorded runs newest first (filter by status), and one run's attempts
// with the code diff between them, artifacts, feedback, and a Replay button that runs it
// again on the server's pool and says, per artifact, whether the bytes are identical.

import { blobUrl, call } from "./api";
import { lineDiff } from "./diff";
import { badge, bytes, h, replace } from "./dom";
import { reportView } from "./report";
import { checkedTables } from "./table";
import type { AttemptRecord, ReplayAnswer, RunList, RunRecord } from "./types";

const STATUSES = ["", "ok", "rejected", "bad_input", "python_error", "timeout", "memory_exceeded", "crashed", "protocol_violation", "invalid_output", "scratch_full", "cancelled"];

/** Object URLs of artifacts shown, released when the view is left. */
const shown: string[] = [];

/** Frees the artifacts' object URLs (when the view is left or redrawn). */
export function releaseRunImages(): void {
  for (const url of shown.splice(0)) URL.revokeObjectURL(url);
}

export function runList(status: string): HTMLElement {
  const filter = h(
    "select",
    { id: "status-filter" },
    ...STATUSES.map((s) => h("option", { value: s, selected: s === status }, s || "any status")),
  );
  filter.addEventListener("change", () => {
    location.hash = filter.value ? `#/runs?status=${encodeURIComponent(filter.value)}` : "#/runs";
  });
  const body = h("tbody", {});
  const note = h("p", { class: "muted" }, "Loading…");
  const root = h(
    "div",
    { class: "runs" },
    h("div", { class: "toolbar" }, h("h2", {}, "Runs"), h("label", {}, "Status ", filter)),
    note,
    h(
      "table",
      { id: "run-list", class: "list" },
      h("thead", {}, h("tr", {}, h("th", {}, "When"), h("th", {}, "Status"), h("th", {}, "Attempts"), h("th", {}, "Artifacts"), h("th", {}, "Task"))),
      body,
    ),
  );
  const query = status ? `?status=${encodeURIComponent(status)}` : "";
  call<RunList>("GET", `/v1/runs${query}`)
    .then((list) => {
      note.textContent = list.runs.length === 0 ? "No runs recorded yet." : list.unreadable ? `${list.unreadable} unreadable records skipped.` : "";
      replace(
        body,
        ...list.runs.map((r) =>
          h(
            "tr",
            { "data-run": r.name },
            h("td", {}, h("a", { href: `#/runs/${encodeURIComponent(r.name)}` }, when(r.created_unix_ms))),
            h("td", {}, badge(r.status)),
            h("td", {}, r.statuses.join(" → ")),
            h("td", {}, r.artifacts),
            h("td", {}, r.task ?? ""),
          ),
        ),
      );
    })
    .catch((e) => (note.textContent = String(e.message ?? e)));
  return root;
}

export function runDetail(name: string): HTMLElement {
  const root = h("div", { class: "run" }, h("p", { class: "muted" }, "Loading…"));
  call<RunRecord>("GET", `/v1/runs/${encodeURIComponent(name)}`)
    .then((record) => replace(root, ...detail(name, record)))
    .catch((e) => replace(root, h("p", { class: "error" }, String(e.message ?? e))));
  return root;
}

function detail(name: string, record: RunRecord): Node[] {
  const replayButton = h("button", { id: "replay", type: "button", class: "primary" }, "Replay");
  const replayResult = h("div", { id: "replay-result" });
  replayButton.addEventListener("click", async () => {
    replayButton.disabled = true;
    replace(replayResult, h("p", { class: "muted" }, "Replaying on the pool…"));
    try {
      const answer = await call<ReplayAnswer>("POST", `/v1/runs/${encodeURIComponent(name)}/replay`);
      replace(replayResult, replayView(answer));
    } catch (e) {
      replace(replayResult, h("p", { class: "error" }, String((e as Error).message ?? e)));
    } finally {
      replayButton.disabled = false;
    }
  });
  const inputs = record.inputs.map((i) => `${i.name} (${bytes(i.bytes)})`).join(", ");
  return [
    h("p", {}, h("a", { href: "#/runs" }, "← all runs")),
    h("h2", {}, `Run ${record.id}`),
    h(
      "p",
      { class: "muted" },
      `${when(record.created_unix_ms)} · timeout ${record.timeout_ms} ms · memory ${bytes(record.memory_bytes)}`,
      inputs ? ` · inputs: ${inputs}` : "",
    ),
    record.task ? h("p", {}, "Task: ", record.task) : null,
    h("div", { class: "toolbar" }, replayButton),
    replayResult,
    ...record.attempts.map((a, i) => attemptView(name, a, i, checkedTables(record.validators), record.attempts[i - 1])),
  ].filter((n): n is HTMLElement => n !== null);
}

/** One attempt; `checked` are the table artifacts the run's checks read. */
function attemptView(run: string, attempt: AttemptRecord, index: number, checked: string[], previous?: AttemptRecord): HTMLElement {
  const images = new Map<string, string>();
  const report = h("div", {});
  const section = h(
    "section",
    { class: "attempt", "data-attempt": index + 1 },
    h("h3", {}, `Attempt ${index + 1} `, badge(attempt.status)),
    previous ? diffView(previous.code, attempt.code) : h("pre", { class: "code" }, attempt.code),
    report,
  );
  // Artifacts are fetched with the token, then shown from blob: URLs.
  Promise.all(
    attempt.artifacts
      .filter((a) => a.media_type === "image/png" || a.media_type === "image/svg+xml")
      .map(async (a) => {
        const url = await blobUrl(`/v1/runs/${encodeURIComponent(run)}/attempts/${index + 1}/${encodeURIComponent(a.name)}`);
        shown.push(url);
        images.set(a.name, url);
      }),
  )
    .catch(() => {})
    .finally(() => replace(report, reportView(attempt.outcome, images, checked)));
  return section;
}

function diffView(before: string, after: string): HTMLElement {
  const lines = lineDiff(before, after);
  if (!lines) return h("pre", { class: "code" }, after);
  const sign = { same: "  ", added: "+ ", removed: "- " } as const;
  return h(
    "div",
    {},
    h("h4", {}, "Code (changes from the previous attempt)"),
    h("pre", { class: "code diff" }, ...lines.map((l) => h("div", { class: l.kind }, sign[l.kind] + l.text))),
  );
}

function replayView(answer: ReplayAnswer): HTMLElement {
  return h(
    "div",
    { class: "replay" },
    h("p", { id: "replay-verdict", class: answer.identical ? "ok" : "bad" }, answer.identical ? "identical" : "different"),
    ...answer.attempts.map((a, i) =>
      h(
        "div",
        {},
        `Attempt ${i + 1}: status ${a.status} (recorded ${a.recorded_status})`,
        h("ul", {}, ...a.artifacts.map((x) => h("li", { "data-artifact": x.name, "data-verdict": x.verdict }, `${x.name}: ${x.verdict}`))),
      ),
    ),
  );
}

function when(unixMs: number): string {
  return new Date(unixMs).toLocaleString();
}

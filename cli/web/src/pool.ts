// The pool view: workers busy and idle, the queue, the places jobs hold (what admission
// counts: jobs not answered yet, of workers + queue depth; a job is refused when all are
// taken), retirements and recent replacements with their causes, latency quantiles; all
// from GET /v1/pool (the numbers of /metrics), refreshed every two seconds while the view
// is open.

import { call } from "./api";
import { bytes, h, ms, replace } from "./dom";
import type { PoolView } from "./types";

const REFRESH_MS = 2000;
let timer: number | undefined;

export function stopPool(): void {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
}

export function pool(): HTMLElement {
  stopPool();
  const root = h("div", { class: "pool", id: "pool" }, h("p", { class: "muted" }, "Loading…"));
  const refresh = () =>
    call<PoolView>("GET", "/v1/pool")
      .then((view) => replace(root, ...poolView(view)))
      .catch((e) => replace(root, h("p", { class: "error" }, String(e.message ?? e))));
  refresh();
  timer = window.setInterval(refresh, REFRESH_MS);
  return root;
}

function poolView(view: PoolView): HTMLElement[] {
  const s = view.stats;
  const state = view.draining ? "draining" : view.ready ? "ready" : "warming up";
  const out: HTMLElement[] = [h("h2", {}, "Pool ", h("span", { id: "pool-state", class: "muted" }, state))];
  if (s) {
    const idle = s.workers.length - s.busy;
    const places = s.max_workers + s.queue_depth;
    out.push(
      h(
        "div",
        { class: "cards" },
        card("Busy", s.busy, "busy"),
        card("Idle", idle, "idle"),
        card("Queue depth", s.queued, "queued"),
        card("Unanswered jobs", `${s.unanswered} of ${places} places`, "places"),
        card("Workers", `${s.workers.length} of ${s.max_workers}`, "workers"),
        card("Forked", s.forked, "forked"),
        card("Cold starts", s.cold_fallbacks, "cold"),
      ),
      h("h3", {}, "Workers"),
      h(
        "table",
        { class: "list", id: "workers" },
        h("thead", {}, h("tr", {}, ...["Slot", "PID", "State", "Born", "Jobs", "PSS"].map((c) => h("th", {}, c)))),
        h(
          "tbody",
          {},
          ...s.workers.map((w) =>
            h(
              "tr",
              {},
              h("td", {}, w.slot),
              h("td", {}, w.pid),
              h("td", {}, w.busy ? "busy" : "idle"),
              h("td", {}, w.birth),
              h("td", {}, w.jobs_served),
              h("td", {}, bytes(w.memory?.pss_bytes)),
            ),
          ),
        ),
      ),
      h("h3", {}, "Retired workers"),
      h("p", { id: "retired" }, Object.entries(s.retired).map(([k, v]) => `${k} ${v}`).join(" · ")),
    );
  }
  out.push(
    h("h3", {}, "Latency"),
    h(
      "table",
      { class: "list", id: "latency" },
      h("thead", {}, h("tr", {}, ...["Step", "Jobs", "p50", "p90", "p99"].map((c) => h("th", {}, c)))),
      h(
        "tbody",
        {},
        ...["gate", "queue", "exec", "total"]
          .filter((k) => view.latency_ms[k])
          .map((k) => {
            const q = view.latency_ms[k];
            return h("tr", { "data-step": k }, h("td", {}, k), h("td", {}, q.count), h("td", {}, ms(q.p50)), h("td", {}, ms(q.p90)), h("td", {}, ms(q.p99)));
          }),
      ),
    ),
    h("h3", {}, "Recent replacements"),
    view.recent_replacements.length === 0
      ? h("p", { class: "muted" }, "No worker replaced because of its job.")
      : h(
          "ul",
          { id: "replacements" },
          ...view.recent_replacements.map((r) =>
            h("li", {}, `${new Date(r.at_unix_ms).toLocaleTimeString()} · slot ${r.slot} (pid ${r.pid}) ${r.kind}: ${r.cause}`, r.detail ? ` — ${r.detail}` : ""),
          ),
        ),
  );
  return out;
}

function card(label: string, value: string | number, id: string): HTMLElement {
  return h("div", { class: "card", id: `card-${id}` }, h("div", { class: "value" }, value), h("div", { class: "label" }, label));
}

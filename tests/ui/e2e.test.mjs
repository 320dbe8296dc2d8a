// The page `pyward serve` serves at `/`, end to end: a real server (the workspace's
// `pyward` binary, with a token and run records) and Debian's Chromium, headless,
// driven by Playwright. The steps share one browser tab and run in order, as a person
// would use the page: token, run, dropped input, typo, timeout, hostile stdout, runs
// (a repair loop's attempts, replay), pool, tables (a CSV and a workbook). The records
// start with one repair loop of three attempts, written by the `repair_loop` example
// through a real pool.
//
// Screenshots of each view go to $PYWARD_UI_OUT (default: target/ui-test).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binary = process.env.PYWARD_BIN ?? join(root, "target/debug/pyward");
const repairLoop = join(dirname(binary), "examples/repair_loop");
const out = resolve(process.env.PYWARD_UI_OUT ?? join(root, "target/ui-test"));
const TOKEN = "ui-test-token-0123456789abcdef";

let server;
let base;
let scratch;
let browser;
let page;
/** Content-Security-Policy violations and uncaught errors seen in the page. */
const violations = [];
const pageErrors = [];

before(async () => {
  mkdirSync(out, { recursive: true });
  scratch = mkdtempSync(join(tmpdir(), "pyward-ui-"));
  writeFileSync(join(scratch, "token"), TOKEN);
  execFileSync(repairLoop, ["--records", join(scratch, "runs")], { cwd: scratch, stdio: "ignore" });
  server = spawn(
    binary,
    ["serve", "--listen", "127.0.0.1:0", "--workers", "2", "--token-file", join(scratch, "token"), "--records", join(scratch, "runs"), "--timeout", "10"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  base = await new Promise((resolveBase, reject) => {
    server.once("exit", (code) => reject(new Error(`pyward serve exited with ${code}`)));
    createInterface({ input: server.stdout }).once("line", (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      m ? resolveBase(m[1]) : reject(new Error(`unexpected first line: ${line}`));
    });
  });
  for (let i = 0; ; i++) {
    const ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (i > 600) throw new Error("the pool did not become ready in 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (e) => console.log(`CSP violation: ${e.effectiveDirective} ${e.sample}`)),
  );
  page.on("console", (m) => {
    if (m.text().startsWith("CSP violation") || m.text().includes("Content Security Policy")) violations.push(m.text());
  });
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("dialog", (d) => {
    pageErrors.push(`a dialog opened: ${d.message()}`);
    return d.dismiss();
  });
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Replaces the editor's text as a paste does (CodeMirror reads the clipboard event). */
async function setCode(code) {
  const editor = page.locator(".cm-content");
  await editor.click();
  await page.keyboard.press("Control+A");
  await editor.evaluate((el, text) => {
    const data = new DataTransfer();
    data.setData("text/plain", text);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, code);
}

async function run() {
  // A fresh result replaces "Running…" once the report is in.
  await page.click("#run");
  await page.locator("#result .report").waitFor({ timeout: 30_000 });
  return page.locator("#result .status [data-status]").getAttribute("data-status");
}

async function shot(name) {
  await page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
}

const PLOT = `import numpy as np
import matplotlib.pyplot as plt

x = np.linspace(0, 10, 200)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(x, np.sin(x), label="sin")
ax.plot(x, np.random.normal(size=x.size) * 0.1, label="noise")
ax.set_title("A wave and its noise")
ax.set_xlabel("x")
ax.set_ylabel("value")
ax.legend()
print("mean", round(float(np.sin(x).mean()), 4))
fig.savefig(OUT)
`;

test("the page asks for the token, then the gate checks the starter code", async () => {
  const answer = await page.goto(`${base}/`);
  const csp = answer.headers()["content-security-policy"];
  assert.match(csp, /script-src 'self';/, "scripts only from the server itself");
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  // The API refuses the page's first check without the token: the page asks for it.
  await page.locator("#token-form").waitFor({ state: "visible" });
  await page.fill("#token", TOKEN);
  await page.click("#token-form button");
  await page.locator("#token-form").waitFor({ state: "hidden" });
  await page.locator("#gate-note", { hasText: "gate: ok" }).waitFor();
});

test("a script runs and its PNG is shown with status, timings, stdout and summary", async () => {
  await setCode(PLOT);
  assert.equal(await run(), "ok");
  const img = page.locator("#result .figures img").first();
  await img.waitFor();
  const src = await img.getAttribute("src");
  assert.match(src, /^data:image\/png;base64,/);
  const png = Buffer.from(src.slice(src.indexOf(",") + 1), "base64");
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], "PNG bytes");
  const width = await img.evaluate(async (el) => (await el.decode(), el.naturalWidth));
  assert.ok(width > 100, `the figure decodes (${width} px wide)`);
  assert.match(await page.textContent("#result .stdout"), /mean -?\d/);
  assert.equal(await page.locator("#result .timings td").count(), 4, "gate, queue, exec, total");
  assert.match(await page.textContent("#result .figure-summary"), /"A wave and its noise" \(x "x", y "value"\)/);
  assert.ok((await page.textContent("#result .feedback")).length > 0, "the feedback section");
  await shot("playground");
});

test("an input file dropped on the page reaches the job", async () => {
  const csv = "a,b\n1,4\n2,5\n3,7\n";
  const dropped = await page.evaluateHandle((text) => {
    const data = new DataTransfer();
    data.items.add(new File([text], "data.csv", { type: "text/csv" }));
    return data;
  }, csv);
  await page.dispatchEvent("#drop", "dragover", { dataTransfer: dropped });
  await page.dispatchEvent("#drop", "drop", { dataTransfer: dropped });
  assert.match(await page.textContent("#files"), /data\.csv/);
  await setCode("df = pd.read_csv(srcpath('data.csv'))\nprint('rows', len(df), 'sum', df['b'].sum())\ndf.plot(x='a', y='b')\nplt.savefig(OUT)\n");
  assert.equal(await run(), "ok");
  assert.match(await page.textContent("#result .stdout"), /rows 3 sum 16/);
  // Removed again: later jobs run without it.
  await page.locator("#files button").click();
  assert.equal(await page.locator("#files li").count(), 0);
});

test("a typo is marked at its line and column as you type, and a run is rejected", async () => {
  const code = PLOT.replace('ax.set_title("A wave and its noise")', 'ax.set_title("A wave and its noise"))');
  const line = code.split("\n").findIndex((l) => l.startsWith("ax.set_title")) + 1;
  await setCode(code);
  // No click: the debounced check marks it.
  const item = page.locator(`#violations li[data-line="${line}"]`);
  await item.waitFor();
  assert.match(await item.textContent(), /syntax/);
  const mark = page.locator(".cm-lintRange-error").first();
  await mark.waitFor();
  const markBox = await mark.boundingBox();
  const lineBox = await page.locator(".cm-line").nth(line - 1).boundingBox();
  assert.ok(Math.abs(markBox.y - lineBox.y) < lineBox.height, `the underline is on line ${line}`);
  const gutterBox = await page.locator(".cm-lint-marker-error").first().boundingBox();
  assert.ok(Math.abs(gutterBox.y + gutterBox.height / 2 - (lineBox.y + lineBox.height / 2)) < lineBox.height, "the gutter marker too");
  assert.equal(await run(), "rejected");
  await shot("playground-violation");
});

test("a job that runs too long shows the timeout status", async () => {
  await setCode("while True:\n    pass\n");
  await page.fill("#timeout", "1");
  assert.equal(await run(), "timeout");
  assert.match(await page.textContent("#result .feedback"), /did not finish within 1\.0 s/);
  await page.fill("#timeout", "10");
});

test("select-all in the editor and typing over it keep the Content-Security-Policy", async () => {
  // Issue 36: Chromium's own editing over a selection of highlighted tokens inserts a
  // span with an inline style, which the policy refuses; the editor types it instead.
  await setCode("while True:\n    pass\n");
  const before = violations.length;
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Control+C");
  await page.keyboard.type("print(1)");
  await page.waitForTimeout(300);
  assert.equal(await page.locator(".cm-content").innerText(), "print(1)");
  assert.deepEqual(violations.slice(before), []);
});

test("stdout with markup is shown as text, never run", async () => {
  const payload = `<script>document.body.dataset.pwned = "script"</script><img src=x onerror="document.body.dataset.pwned = 'img'"><b>bold</b>`;
  await setCode(`print(${JSON.stringify(payload)})\n${PLOT}`);
  assert.equal(await run(), "ok");
  const stdout = page.locator("#result .stdout");
  assert.ok((await stdout.textContent()).includes(payload), "the bytes as text");
  assert.equal(await stdout.locator("*").count(), 0, "no element made from stdout");
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => document.body.dataset.pwned ?? null), null, "no script ran");
});

test("the runs are listed newest first and filter by status; a repair loop shows its diffs", async () => {
  await page.goto(`${base}/#/runs`);
  const rows = page.locator("#run-list tbody tr");
  await rows.nth(5).waitFor();
  const statuses = await rows.locator("[data-status]").evaluateAll((els) => els.map((e) => e.dataset.status));
  // Newest first: the hostile stdout, timeout, typo, dropped input, plot, then the repair loop.
  assert.deepEqual(statuses, ["ok", "timeout", "rejected", "ok", "ok", "ok"]);
  assert.match(await rows.nth(5).textContent(), /python_error → rejected → ok/);
  await shot("runs");

  await page.selectOption("#status-filter", "timeout");
  await page.waitForURL(/status=timeout/);
  await page.locator("#run-list tbody tr [data-status=timeout]").first().waitFor();
  const filtered = await page.locator("#run-list tbody tr [data-status]").evaluateAll((els) => els.map((e) => e.dataset.status));
  assert.deepEqual(filtered, ["timeout"]);

  // The repair loop: each attempt's code against the one before.
  await page.goto(`${base}/#/runs`);
  await rows.nth(5).locator("a").click();
  await page.locator(".attempt[data-attempt='3']").waitFor();
  const attempt = (n) => page.locator(`.attempt[data-attempt='${n}']`);
  assert.match(await attempt(1).locator(".feedback").textContent(), /regoin/);
  assert.match(await attempt(2).locator(".diff .added").allTextContents().then((t) => t.join("\n")), /import tempfile/);
  assert.match(await attempt(3).locator(".diff .removed").allTextContents().then((t) => t.join("\n")), /import tempfile/);
  assert.equal(await attempt(3).locator(".diff .added").count(), 1, "one line changed back");
  await attempt(3).locator("img").waitFor();
  await shot("run-repair");
});

test("a recorded figure replays identical on the server's pool", async () => {
  await page.goto(`${base}/#/runs`);
  const plot = page.locator("#run-list tbody tr").nth(4);
  await plot.waitFor();
  await plot.locator("a").click();
  const img = page.locator(".attempt img").first();
  await img.waitFor();
  assert.match(await img.getAttribute("src"), /^blob:/, "fetched with the token");
  assert.ok(await img.evaluate(async (el) => (await el.decode(), el.naturalWidth)) > 100);
  await page.click("#replay");
  const verdict = page.locator("#replay-verdict");
  await verdict.waitFor({ timeout: 30_000 });
  assert.equal(await verdict.textContent(), "identical");
  assert.equal(await page.locator('[data-artifact="figure.png"]').getAttribute("data-verdict"), "identical");
  await shot("run");
});

test("the pool shows workers, latency and the worker the timeout replaced", async () => {
  await page.goto(`${base}/#/pool`);
  await page.locator("#latency [data-step=total]").waitFor();
  // The worker the timeout killed may still be starting on a busy machine: the view
  // refreshes every two seconds until both are back.
  const bothBack = () =>
    ["#card-busy", "#card-idle"].reduce((n, id) => n + Number(document.querySelector(`${id} .value`)?.textContent), 0) === 2;
  await page.waitForFunction(bothBack, null, { timeout: 30_000 }).catch(() => {});
  const busy = Number(await page.textContent("#card-busy .value"));
  const idle = Number(await page.textContent("#card-idle .value"));
  assert.equal(busy + idle, 2, "two workers");
  // Admission's count: every job answered, of 2 workers + a queue of one per worker.
  assert.equal(await page.textContent("#card-places .value"), "0 of 4 places");
  const jobs = Number(await page.textContent("#latency [data-step=total] td:nth-child(2)"));
  assert.equal(jobs, 5, "the five runs of this server (a replay is not a job)");
  assert.match(await page.textContent("#replacements"), /killed: timeout/);
  await shot("pool");
});

const HOSTILE = ["<img src=x onerror=alert(1)>", '=HYPERLINK("http://x.example","c")'];

const TABLES = `import pandas as pd

hostile = ${JSON.stringify(HOSTILE)}
pd.DataFrame({"dept": ["R&D", "Sales"], "cost": [1200.5, 800.25], "note": hostile}).to_csv("result.csv", index=False)
with pd.ExcelWriter("result.xlsx") as w:
    pd.DataFrame({"部门": ["研发", "销售", "总部"], "headcount": [12, 30, 5]}).to_excel(w, sheet_name="Allocation", index=False)
    pd.DataFrame({"note": hostile}).to_excel(w, sheet_name="Notes", index=False)
`;

/** A table artifact's preview as the page shows it. */
async function tablePreview(figure) {
  return {
    shape: await figure.locator(".shape").textContent(),
    headers: await figure.locator("thead th .col-name").allTextContents(),
    kinds: await figure.locator("thead th .kind").allTextContents(),
    rows: await figure.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent))),
  };
}

test("a job writing a CSV and a workbook shows them as tables, cells as text, in the playground and the runs", async () => {
  // After the pool's count: these runs are not among the five it counts.
  await page.goto(`${base}/#/play`);
  await setCode(TABLES);
  const errorsBefore = pageErrors.length;
  assert.equal(await run(), "ok");
  const csv = page.locator('#result .table-artifact[data-name="result.csv"]');
  const xlsx = page.locator('#result .table-artifact[data-name="result.xlsx"]');
  await csv.waitFor();
  assert.deepEqual(await tablePreview(csv), {
    shape: "2 rows × 3 columns",
    headers: ["dept", "cost", "note"],
    kinds: ["text", "number", "text"],
    rows: [["R&D", "1200.5", HOSTILE[0]], ["Sales", "800.25", HOSTILE[1]]],
  });
  assert.equal(await csv.locator(".sheet").count(), 0, "a CSV has no sheet");
  const book = await tablePreview(xlsx);
  assert.equal(book.shape, "3 rows × 2 columns");
  assert.deepEqual(book.headers, ["部门", "headcount"]);
  assert.deepEqual(book.kinds, ["text", "integer"]);
  assert.deepEqual(book.rows[0], ["研发", "12"]);
  assert.equal(await xlsx.locator(".sheet-name").textContent(), "Allocation");
  assert.deepEqual(await xlsx.locator(".sheet-item").allTextContents(), ["Allocation", "Notes"]);
  // The cells are the file's data: no element made from them, nothing ran.
  assert.equal(await page.locator("#result table.preview *:not(thead):not(tbody):not(tr):not(th):not(td):not(.col-name):not(.kind)").count(), 0, "only rows and cells");
  assert.equal(await page.locator("img").count(), 0, "no img element anywhere");
  assert.equal(await page.locator("#result a").count(), 0, "no link");
  assert.equal(await page.locator("#result .verdict").count(), 0, "no checks, no verdict");
  await page.waitForTimeout(300);
  assert.deepEqual(pageErrors.slice(errorsBefore), [], "no dialog, nothing threw");
  await shot("playground-tables");

  // The same run recorded: its attempt shows the tables. Its record lists no checks; a
  // table job's record lists them as `table:<artifact>` (here added to the record as
  // the server sends it), and the page puts their verdict beside each table.
  await page.route(/\/v1\/runs\/[^/?]+$/, async (route) => {
    const response = await route.fetch();
    const record = await response.json();
    record.validators = ["table:result.csv", "table:result.xlsx"];
    await route.fulfill({ response, json: record });
  });
  await page.goto(`${base}/#/runs`);
  const newest = page.locator("#run-list tbody tr").first();
  await newest.waitFor();
  await newest.locator("a").click();
  const recorded = page.locator('.attempt .table-artifact[data-name="result.csv"]');
  await recorded.waitFor();
  assert.deepEqual((await tablePreview(recorded)).rows[0], ["R&D", "1200.5", HOSTILE[0]]);
  assert.equal(await page.locator('.attempt .table-artifact[data-name="result.xlsx"] .sheet-name').textContent(), "Allocation");
  for (const name of ["result.csv", "result.xlsx"]) {
    const verdict = page.locator(`.attempt .table-artifact[data-name="${name}"] .verdict`);
    assert.equal(await verdict.getAttribute("data-verdict"), "ok");
    assert.match(await verdict.textContent(), /every check passed/);
  }
  assert.equal(await page.locator("img").count(), 0);
  await page.unroute(/\/v1\/runs\/[^/?]+$/);
  await shot("run-tables");

  // The playground's Checks panel sends a table job's declaration as options.expect;
  // the server checks the tables and the verdicts follow them. The job's cells begin
  // with "=" on purpose (it shows they stay text), so the declaration turns no_formulas
  // off; asking for at most 1 decimal of cost then fails for real: no artifacts, the
  // check's id in error.check, its words in the message and feedback.
  const declared = {
    version: 1,
    artifacts: ["result.csv", "result.xlsx"],
    tables: [
      { artifact: "result.csv", required_columns: ["dept", "cost"], no_formulas: false },
      { artifact: "result.xlsx", required_columns: ["headcount"], no_formulas: false },
    ],
  };
  let sent;
  const remember = (request) => {
    if (request.url().endsWith("/v1/jobs")) sent = request.postDataJSON().options.expect;
  };
  page.on("request", remember);
  await page.goto(`${base}/#/play`);
  await page.click("#checks-panel summary");
  await page.fill("#expect", JSON.stringify(declared, null, 1));
  assert.equal(await run(), "ok");
  assert.deepEqual(sent, declared, "the declaration goes with the job");
  for (const name of ["result.csv", "result.xlsx"]) {
    assert.equal(await page.locator(`#result .table-artifact[data-name="${name}"] .verdict`).getAttribute("data-verdict"), "ok");
  }
  const failing = structuredClone(declared);
  failing.tables[0].decimals = [{ column: "cost", max: 1 }];
  await page.fill("#expect", JSON.stringify(failing, null, 1));
  assert.equal(await run(), "invalid_output");
  assert.deepEqual(sent, failing);
  page.off("request", remember);
  const failed = page.locator('#result .checks .verdict[data-artifact="result.csv"]');
  assert.equal(await failed.getAttribute("data-verdict"), "failed");
  assert.match(await failed.locator(".verdict-text").textContent(), /^cost must have at most 1 decimals; 1 rows have more: result\.csv!B3 is "800\.25"/);
  assert.equal(await page.locator('#result .checks .verdict[data-artifact="result.xlsx"]').getAttribute("data-verdict"), "not_run", "checked after the failed one");
  assert.match(await page.textContent("#result .feedback"), /not valid \(table:result\.csv\): cost must have/);
  await shot("playground-check-failed");
  // A declaration that is not JSON is said on the page; no job is sent.
  let posted = 0;
  const count = (request) => void (request.url().endsWith("/v1/jobs") && posted++);
  page.on("request", count);
  await page.fill("#expect", "{not json");
  await page.click("#run");
  assert.match(await page.locator("#request-error").textContent(), /Checks: not JSON/);
  page.off("request", count);
  assert.equal(posted, 0);
  await page.fill("#expect", "");
});

test("nothing broke the page's Content-Security-Policy and nothing threw", () => {
  assert.deepEqual(violations, []);
  assert.deepEqual(pageErrors, []);
});

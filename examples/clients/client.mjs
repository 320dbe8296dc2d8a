// Run a file on a pyward server and save its figure (Node 18+, no packages).
// usage: node client.mjs http://127.0.0.1:8080 plot.py figure.png
import { readFile, writeFile } from "node:fs/promises";

const [url, codeFile, out] = process.argv.slice(2);
const headers = { "Content-Type": "application/json", Accept: "image/png" };
if (process.env.PYWARD_TOKEN) headers.Authorization = `Bearer ${process.env.PYWARD_TOKEN}`;
const response = await fetch(`${url}/v1/jobs`, {
  method: "POST",
  headers,
  body: JSON.stringify({ code: await readFile(codeFile, "utf8") }),
});
if (response.headers.get("content-type") !== "image/png") {
  // Not a figure: the JSON report (a job failure) or a problem (the request's fault).
  const answer = await response.json();
  console.error(`${response.status} ${answer.status ?? ""}: ${answer.feedback ?? answer.detail}`);
  process.exit(1);
}
await writeFile(out, Buffer.from(await response.arrayBuffer()));
console.log(`${out}: ${response.headers.get("server-timing")}`);

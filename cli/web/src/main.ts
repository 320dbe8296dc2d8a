// The page's shell: hash routes (#/play, #/runs, #/runs/NAME, #/pool), and the token
// form, shown when the server answers 401.

import { setToken, whenTokenNeeded } from "./api";
import { replace } from "./dom";
import { playground } from "./playground";
import { pool, stopPool } from "./pool";
import { releaseRunImages, runDetail, runList } from "./runs";

const view = document.getElementById("view") as HTMLElement;
const tokenForm = document.getElementById("token-form") as HTMLFormElement;
const tokenInput = document.getElementById("token") as HTMLInputElement;

whenTokenNeeded(() => {
  tokenForm.hidden = false;
  tokenInput.focus();
});
tokenForm.addEventListener("submit", (e) => {
  e.preventDefault();
  setToken(tokenInput.value.trim());
  tokenInput.value = "";
  tokenForm.hidden = true;
  route();
});

function route(): void {
  stopPool();
  releaseRunImages();
  const hash = location.hash.replace(/^#/, "") || "/play";
  const [path, query = ""] = hash.split("?", 2);
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  let name = parts[0] ?? "play";
  let page: HTMLElement;
  if (name === "runs" && parts[1]) page = runDetail(decodeURIComponent(parts[1]));
  else if (name === "runs") page = runList(params.get("status") ?? "");
  else if (name === "pool") page = pool();
  else {
    name = "play";
    page = playground();
  }
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    a.classList.toggle("active", a.dataset.view === name);
  }
  replace(view, page);
  document.title = `pyward · ${name}`;
}

window.addEventListener("hashchange", route);
route();

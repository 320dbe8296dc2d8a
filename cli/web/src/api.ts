// The page's only way to the server: the same JSON API every client uses, with the same
// bearer token. The token lives in this tab's sessionStorage, never in a URL or cookie.

const TOKEN_KEY = "pyward.token";

/** An API answer that was not 2xx, with the problem's `detail` when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type NeedToken = () => void;
let onNeedToken: NeedToken = () => {};

/** Called when the server answers 401: the page then asks for the token. */
export function whenTokenNeeded(f: NeedToken): void {
  onNeedToken = f;
}

export function setToken(token: string): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(extra: Record<string, string> = {}): Headers {
  const h = new Headers(extra);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h.set("Authorization", `Bearer ${token}`);
  return h;
}

async function fail(response: Response): Promise<never> {
  let code = "http";
  let detail = `${response.status} ${response.statusText}`;
  try {
    const problem = await response.json();
    if (typeof problem.detail === "string") detail = problem.detail;
    if (typeof problem.code === "string") code = problem.code;
    else if (typeof problem.type === "string") code = problem.type;
  } catch {
    // Not a problem document: the status line says enough.
  }
  if (response.status === 401) onNeedToken();
  throw new ApiError(response.status, code, detail);
}

/** GET or POST JSON; the parsed answer. */
export async function call<T>(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!response.ok) return fail(response);
  return (await response.json()) as T;
}

/** Fetches bytes (a recorded artifact) as an object URL the page can show in an <img>. */
export async function blobUrl(path: string): Promise<string> {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) return fail(response);
  return URL.createObjectURL(await response.blob());
}

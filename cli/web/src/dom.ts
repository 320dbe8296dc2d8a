// Building the page without ever parsing a string as HTML: text goes in as text nodes,
// attributes are set one by one. Job code, stdout, feedback and file names all pass
// through here, so none of them can become markup.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined>;

/** An element with attributes (`class`, `data-*`, ...) and children (strings become text). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name.startsWith("on")) throw new Error(`no handler attributes: ${name}`);
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children.flat());
  return el;
}

/** Appends children; strings and numbers as text nodes. */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Empties `el` and fills it with `children`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Milliseconds, readably. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  return value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(1)} ms`;
}

/** A byte count, readably. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A status word as a badge (its class is from a fixed set, never the word itself). */
export function badge(status: string): HTMLElement {
  const kind = status === "ok" ? "ok" : status === "rejected" || status === "bad_input" ? "warn" : "bad";
  return h("span", { class: `badge ${kind}`, "data-status": status }, status);
}

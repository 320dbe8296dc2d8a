import { defineConfig } from "vite";

// Built into dist/, which the `pyward` binary embeds (cli/src/serve/page.rs). The server's
// Content-Security-Policy allows no inline script, so nothing is inlined: no
// module-preload polyfill, no assets as data: URLs; styles only from files or with the
// page's nonce.
export default defineConfig({
  base: "/",
  // The server puts a fresh nonce in place of this word in every answer for index.html
  // and in its CSP: CodeMirror's generated stylesheet is the one inline style allowed.
  html: { cspNonce: "PYWARD_CSP_NONCE" },
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
});

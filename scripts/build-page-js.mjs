// The page's script as one file: static/js/main.js and every module it imports, bundled by
// esbuild (pinned in package-lock.json) into build/js/main.js. Run by scripts/setup; the
// app serves it in place of the ES modules while it was built from the static/js of now
// (app/api/assets.py compares the digest in its first line), else the modules themselves.
//
//   node scripts/build-page-js.mjs           # build/js/main.js, unless it is up to date
//
// Why: a phone's main thread handles each fetched module in a task of its own (~60 of them,
// 2-6 ms each at Chromium's CPU slowdown 4x) before main.js can run; one file is one task.
// The names stay (whitespace and syntax minified only): a profile still reads them.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCES = join(ROOT, "static", "js");
const OUTFILE = join(ROOT, "build", "js", "main.js");

/** Every .js file under static/js, as paths relative to it with "/", sorted. */
function sources(dir = SOURCES) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".js") ? [relative(SOURCES, path).split(sep).join("/")] : [];
  }).sort();
}

/** SHA-256 over each source's relative path, a NUL and its bytes, in sorted order
 * (`page_sources_digest` in app/api/assets.py computes the same). */
function digest() {
  const hash = createHash("sha256");
  for (const name of sources()) {
    hash.update(name);
    hash.update("\0");
    hash.update(readFileSync(join(SOURCES, name)));
  }
  return hash.digest("hex");
}

const want = digest();
const banner = `/* FFN Lab's page script: static/js/main.js and its imports (sources sha256:${want}) */`;
if (existsSync(OUTFILE) && readFileSync(OUTFILE, "utf8").startsWith(banner)) process.exit(0);

await build({
  entryPoints: [join(SOURCES, "main.js")],
  outfile: OUTFILE,
  bundle: true,
  format: "esm",
  // the browsers the page supports run ES2020 modules; import.meta.url stays (i18n.js reads
  // its catalogs next to it: the bundle is served under the modules' own URL prefix)
  target: "es2020",
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  banner: { js: banner },
  logLevel: "warning",
});
console.log(`the page's script -> ${relative(ROOT, OUTFILE)}`);

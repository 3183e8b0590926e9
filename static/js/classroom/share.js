// "Copy link" and "copy embed code": the current state as a URL or an <iframe> snippet,
// shown in a dialog (selected, so Ctrl+C works where the clipboard API is refused).
import { currentLanguage, t } from "../i18n.js";
import { formatFragment, MAX_FRAGMENT_CHARS, stateUrl } from "../state.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
/** A 16:9 frame; the embedded page fits any 16:9 size from 640x360 to 1920x1080. */
const EMBED_SIZE = { width: 960, height: 540 };

function escapeAttr(text) {
  return text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
}

/** The <iframe> snippet for the current state in embed mode (lesson off). */
export function embedSnippet(schema, state) {
  const url = stateUrl(schema, state, { embed: true, lesson: false, step: 1, lang: currentLanguage() });
  const title = t("share.embed_title");
  return `<iframe src="${escapeAttr(url)}" title="${escapeAttr(title)}" width="${EMBED_SIZE.width}" `
    + `height="${EMBED_SIZE.height}" style="border:0;aspect-ratio:16/9;width:100%;height:auto" `
    + `loading="lazy" allow="clipboard-write"></iframe>`;
}

/**
 * Open the share dialog with `text`; `download` = { name, type } adds a download button.
 * Tries the clipboard first when `copy` is true.
 * @param {{ title: string, text: string, hint?: string, copy?: boolean,
 *   download?: { name: string, type: string } | null }} options
 */
export async function showText({ title, text, hint, copy = false, download = null }) {
  const dialog = $("share-dialog");
  $("share-title").textContent = title;
  const area = $("share-text");
  area.value = text;
  let copied = false;
  if (copy) copied = await writeClipboard(text);
  $("share-hint").textContent = copied ? t("share.copied") : hint ?? t("share.select_hint");
  dialog.dataset.copied = String(copied);
  const button = $("share-download");
  button.hidden = !download;
  button.onclick = download ? () => downloadText(text, download.name, download.type) : null;
  if (!dialog.open) dialog.showModal();
  area.focus();
  area.select();
}

async function writeClipboard(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Save `text` as a file through a Blob URL (no request leaves the page). */
export function downloadText(text, name, type) {
  downloadBlob(new Blob([text], { type }), name);
}

export function downloadBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A sentence when own numbers are too large for a link (they are left out of it), else null. */
function tooLargeHint(app) {
  const { tooLarge } = formatFragment(app.schema, app.state);
  if (!tooLarge.length) return null;
  const what = tooLarge.map((name) => t(`share.own_${name}`)).join(t("share.list_sep"));
  return t("share.too_large", { what, max: MAX_FRAGMENT_CHARS.toLocaleString() });
}

export function initShare(app) {
  $("copy-link").addEventListener("click", async () => {
    // The language shown now is part of the view, so the link carries it.
    const hint = tooLargeHint(app);
    await showText({
      title: t("share.link_title"), text: stateUrl(app.schema, app.state, { lang: currentLanguage() }),
      copy: true,
    });
    $("share-dialog").dataset.tooLarge = hint ? "1" : "";
    if (hint) $("share-hint").textContent = hint; // said even when the copy worked
  });
  $("copy-embed").addEventListener("click", () => showText({
    title: t("share.embed_heading"), text: embedSnippet(app.schema, app.state), copy: true,
    hint: t("share.embed_hint"),
  }));
  $("share-copy").addEventListener("click", async () => {
    const ok = await writeClipboard($("share-text").value);
    $("share-hint").textContent = ok ? t("share.copied") : t("share.select_hint");
    $("share-text").select();
  });
  $("share-close").addEventListener("click", () => $("share-dialog").close());
}

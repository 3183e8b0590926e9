// Message catalogs: every visible string comes from static/i18n/<lang>.json.
// Each language is a folder of catalogs (static/i18n/<lang>/<part>.json); the server lists
// the parts in the boot data, so each panel can keep its strings in a file of its own.
export const LANGUAGES = ["en", "zh-CN"];

let catalog = {};
let language = "en";

export function currentLanguage() {
  return language;
}

/** The language to start with: the URL's, else the browser's (zh* -> zh-CN), else English. */
export function pickLanguage(fromUrl) {
  if (LANGUAGES.includes(fromUrl)) return fromUrl;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    if (tag.toLowerCase().startsWith("zh")) return "zh-CN";
    if (tag.toLowerCase().startsWith("en")) return "en";
  }
  return "en";
}

/** Load every catalog of `lang` (parts listed in the boot data) and translate the page. */
export async function loadLanguage(lang, parts) {
  const loaded = await Promise.all(
    parts[lang].map(async (part) => {
      const response = await fetch(new URL(`../i18n/${lang}/${part}.json`, import.meta.url));
      return response.json();
    }),
  );
  catalog = Object.assign({}, ...loaded);
  language = lang;
  document.documentElement.lang = lang;
  applyTranslations();
}

/** The message for `key`, with {name} placeholders filled from `params`. */
export function t(key, params = {}) {
  const template = catalog[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

/** Full-width punctuation: a sentence after it follows without a space (Chinese). */
const FULL_WIDTH_END = /[\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f\u2026\u201d\u2019]$/;

/** What goes between `text` and the next sentence: a space, or nothing after full-width. */
export function separator(text) {
  return FULL_WIDTH_END.test(text) ? "" : " ";
}

/** Sentences joined into one text: a space after Latin punctuation, none after full-width. */
export function sentences(...parts) {
  return parts.filter(Boolean).reduce((text, part) => (
    !text ? part : `${text}${FULL_WIDTH_END.test(text) ? "" : " "}${part}`), "");
}

/** Fill every element that has data-i18n="key" (text), data-i18n-label (aria-label), data-i18n-title. */
export function applyTranslations(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  document.title = t("app.title");
}

// The join page (/join): a code field in the reader's language.
import { applyTranslations, loadLanguage, pickLanguage } from "../i18n.js";

const boot = JSON.parse(document.getElementById("boot").textContent);
const select = document.getElementById("lang");
const lang = pickLanguage(new URLSearchParams(window.location.search).get("lang"));
select.value = lang;
select.addEventListener("change", () => loadLanguage(select.value, boot.i18n));
loadLanguage(lang, boot.i18n).then(() => applyTranslations());
document.getElementById("join-code").focus();

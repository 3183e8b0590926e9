// "Read this in your library": each tensor of the flow by its TransformerLens 4 hook, its
// Hugging Face module path and its nnsight path (the answer's `tensor_names`), with code
// that reads them (GET /api/tensor-names, app/analysis/library_snippets.py: CI runs it
// against FFN Lab's numbers). The same names go into the flow captions' tooltips.
import { getJson } from "../api.js";
import { on } from "../bus.js";
import { t } from "../i18n.js";
import { setAttr } from "../dom.js";

const $ = (id) => document.getElementById(id);
const ORDER = ["input", "pre_activation", "up", "hidden", "output"];
const FAMILIES_OF = { gated: ["llama"], plain: ["bert", "gpt2"] };
const codeByLayer = new Map();

let lastData = null;
let family = null; // the family the student picked (null: the answer's)
let library = "transformer_lens";

function layerOf(data) {
  return data.config.model ? data.config.layer ?? 0 : 0;
}

async function snippets(layer) {
  if (!codeByLayer.has(layer)) {
    codeByLayer.set(layer, getJson(`/api/tensor-names?layer=${layer}`).catch((err) => {
      codeByLayer.delete(layer);
      throw err;
    }));
  }
  return codeByLayer.get(layer);
}

function huggingface(entry) {
  return `${entry.huggingface} → ${t(`names.reads.${entry.huggingface_reads}`)}`;
}

/** The names of one tensor as tooltip lines. */
export function namesTooltip(entry, label) {
  return [
    t("names.tooltip", { family: label }),
    `${t("names.lib.transformer_lens")}: ${entry.transformer_lens}`,
    `${t("names.lib.huggingface")}: ${huggingface(entry)}`,
    `${t("names.lib.nnsight")}: ${entry.nnsight}.save()`,
  ].join("\n");
}

function cell(text, mono = true) {
  const td = document.createElement("td");
  if (mono) td.className = "mono";
  // a long path may break after a dot, never inside a name
  text.split(/(?<=\.)/).forEach((part, i) => {
    if (i) td.append(document.createElement("wbr"));
    td.append(part);
  });
  return td;
}

async function render() {
  const data = lastData;
  if (!data || !data.tensor_names) return;
  const section = $("names");
  const gated = Boolean(data.config.gated);
  const choices = FAMILIES_OF[gated ? "gated" : "plain"];
  const answerFamily = Object.values(data.tensor_names)[0].family;
  const chosen = family && choices.includes(family) ? family : answerFamily;
  const all = await snippets(layerOf(data));
  const info = all[chosen];
  const select = $("names-family");
  select.replaceChildren(...choices.map((f) => new Option(`${all[f].label} (${all[f].class})`, f)));
  select.value = chosen;
  select.disabled = choices.length < 2;
  // the answer's names for its own family (layer filled in for a pretrained layer); the
  // table of the family picked otherwise
  const names = chosen === answerFamily ? data.tensor_names : info.tensors;
  // the plain intro shows {layer} itself: the names keep it as a placeholder
  const params = { family: info.label, cls: info.class };
  $("names-intro").textContent = data.config.model
    ? t("names.intro_model", { ...params, layer: layerOf(data) })
    : t("names.intro", params);
  const rows = ORDER.filter((key) => names[key]).flatMap((key) => {
    const entry = names[key];
    const lines = [
      [t("names.lib.transformer_lens"), entry.transformer_lens],
      [t("names.lib.huggingface"), huggingface(entry)],
      [t("names.lib.nnsight"), `${entry.nnsight}.save()`],
    ];
    return lines.map(([lib, name], i) => {
      const tr = document.createElement("tr");
      tr.dataset.tensor = key;
      if (i === 0) {
        const th = document.createElement("th");
        th.scope = "rowgroup";
        th.rowSpan = lines.length;
        const shape = document.createElement("span");
        shape.className = "names-shape";
        shape.textContent = entry.shape;
        th.append(key, document.createElement("br"), shape);
        th.className = "mono";
        tr.append(th);
      }
      const libCell = cell(lib, false);
      libCell.className = "names-library";
      tr.append(libCell, cell(name));
      return tr;
    });
  });
  $("names-rows").replaceChildren(...rows);
  for (const tab of section.querySelectorAll("[data-library]")) {
    setAttr(tab, "aria-selected", String(tab.dataset.library === library));
  }
  $("names-snippet").textContent = info.code[library];
  $("names-snippet").dataset.family = chosen;
  $("names-snippet").dataset.library = library;
  // hover: every caption of the flow carries its tensor's names
  for (const key of ORDER) {
    const caption = $(`shape-${key}`);
    const entry = data.tensor_names[key];
    if (!caption || !entry) continue;
    const own = (caption.title || "").split("\n\n")[0];
    setAttr(caption, "title", [own, namesTooltip(entry, all[answerFamily].label)].join("\n\n"));
    setAttr(caption, "data-hook", entry.transformer_lens);
  }
  section.dataset.rendered = String(Number(section.dataset.rendered || 0) + 1);
}

function fail(err) {
  const error = $("names").querySelector(".panel-error");
  if (error) error.textContent = err.message;
}

on("forward", ({ data }) => {
  lastData = data;
  return render().catch(fail);
});
on("language", () => render().catch(fail));

$("names-family").addEventListener("change", (e) => {
  family = /** @type {HTMLSelectElement} */ (e.target).value;
  render().catch(fail);
});
for (const tab of $("names").querySelectorAll("[data-library]")) {
  tab.addEventListener("click", () => {
    library = tab.dataset.library;
    render().catch(fail);
  });
}
$("names-copy").addEventListener("click", async () => {
  const code = $("names-snippet").textContent;
  const status = $("names-copied");
  try {
    await navigator.clipboard.writeText(code);
    status.textContent = t("names.copied");
  } catch {
    // no clipboard (an http page, a refused permission): select the code for Ctrl+C
    const range = document.createRange();
    range.selectNodeContents($("names-snippet"));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    status.textContent = t("names.selected");
  }
});

// Export: each plot as PNG/SVG (Plotly's own export), the current run as JSON and CSV (built
// in the browser from the last API answers), a PyTorch program, and a standalone HTML
// snapshot rendered by the server with plotly.io (Plotly inlined, opens offline).
/* global Plotly */
import { on } from "../bus.js";
import { downloadBlob, downloadText, showText } from "../classroom/share.js";
import { describeError } from "../errors.js";
import { ApiError } from "../api.js";
import { t } from "../i18n.js";
import { stateUrl } from "../state.js";
import { pytorchSnippet } from "./pytorch.js";
import { runCsv, runJson } from "./tables.js";
import { setAttr, setText } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const IMAGE_SCALE = 2;

/**
 * "ffn-lab_16x64_relu_T6": the configuration in a file name, from the `config` block of the
 * answer that is on screen (what really ran: e.g. the pretrained layer's 384x1536 GELU, and
 * "minilm-l6-layer2" in front), else from the request body.
 */
export function baseName(state, body, config = null) {
  const c = config ?? {
    ...body, num_tokens: body.tokens ? body.tokens.length : body.num_tokens,
  };
  const model = c.model ? `_${c.model}-layer${c.layer}` : "";
  const mode = c.mode === "train" ? "_train" : "";
  return `ffn-lab${model}_${c.d_model}x${c.d_ff}_${c.activation}_T${c.num_tokens}${mode}`;
}

/** The file name base of the run on screen (the last forward answer, else the request). */
function runName(app) {
  return baseName(app.state, app.requestBody(), app.last().forward?.config ?? null);
}

/** The pretrained layer's weights live in a package: the program cannot rebuild them. */
function codeAvailable(app) {
  const pretrained = app.last().forward?.config?.weights_source === "pretrained";
  $("export-code").disabled = pretrained;
  $("export-code-note").hidden = !pretrained;
  return !pretrained;
}

/** The last answers, once they are for the current state (a pending request is waited for). */
async function current(app) {
  await app.settle();
  return app.last();
}

function plotTitle(el) {
  // the whole title (the drawn one may be wrapped with <br> or shortened), as plain text;
  // a plot not drawn yet (or untitled) is named by its panel's heading
  const title = el.layout?.title?.ffnText || el.layout?.title?.text || "";
  const text = title.replace(/<br\s*\/?>/gi, " ").replace(/<[^>]*>/g, "").trim();
  if (text) return text;
  const heading = el.closest("section")?.querySelector("h2")?.textContent?.trim();
  return heading || el.id;
}

/**
 * The plot as a figure to export. On the page a plot beside the first of its row (or too
 * small for them) leaves its axis titles to the hover text; a picture on its own has no
 * neighbour and no hover, so those titles come back, with room made for them.
 */
export function exportFigure(el) {
  const layout = JSON.parse(JSON.stringify(el.layout));
  const full = el._fullLayout ?? {};
  let width = full.width ?? el.clientWidth;
  let height = full.height ?? el.clientHeight;
  const room = 28;
  for (const [name, grow] of [["xaxis", "height"], ["yaxis", "width"]]) {
    const ax = layout[name];
    const whole = ax?.title?.exportText;
    if (!ax || !whole || ax.title.text) continue;
    ax.title.text = whole;
    ax.automargin = true;
    if (grow === "width") width += room;
    else height += room;
  }
  layout.width = width;
  layout.height = height;
  layout.margin = { ...layout.margin, l: (layout.margin?.l ?? 0) + (width > full.width ? room : 0) };
  return { data: el.data, layout };
}

function addPlotTools(app) {
  const tools = [];
  for (const el of document.querySelectorAll(".plot[id]")) {
    const bar = document.createElement("div");
    bar.className = "plot-tools";
    bar.setAttribute("role", "group");
    const buttons = ["png", "svg"].map((format) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "small";
      button.dataset.format = format;
      button.dataset.plot = el.id;
      button.textContent = t(`export.${format}`);
      button.addEventListener("click", async () => {
        if (!el.layout) return;
        const name = `${runName(app)}_${el.id.replace(/^plot-/, "")}`;
        const figure = exportFigure(el);
        const url = await Plotly.toImage(figure, {
          format, width: figure.layout.width, height: figure.layout.height,
          scale: format === "png" ? IMAGE_SCALE : 1,
        });
        const link = document.createElement("a");
        link.href = url;
        link.download = `${name}.${format}`;
        link.click();
      });
      bar.append(button);
      return button;
    });
    // The plot and its toolbar share a wrapper, which takes the plot's place in the layout.
    const wrap = document.createElement("div");
    wrap.className = "plot-wrap";
    el.before(wrap);
    wrap.append(bar, el);
    if (el.layout) wrap.setAttribute("data-drawn", ""); // drawn before its toolbar came
    tools.push({ el, bar, buttons });
  }
  // Written only where the words changed: rewriting ~120 buttons' unchanged text on every
  // answer made the browser lay all of them out again (~450 boxes) in each step's frame.
  const label = () => {
    for (const { el, bar, buttons } of tools) {
      const plot = plotTitle(el);
      setAttr(bar, "aria-label", t("export.plot_tools", { plot }));
      for (const b of buttons) {
        setText(b, t(`export.${b.dataset.format}`));
        setAttr(b, "aria-label", t(`export.${b.dataset.format}_of`, { plot }));
      }
    }
  };
  on("forward", label);
  on("perturb", label);
  on("language", label);
}

async function snapshot(app) {
  const button = $("export-snapshot");
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    const body = { ...app.perturbBody(), lang: document.documentElement.lang };
    const response = await fetch("/api/snapshot", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new ApiError(response.status, await response.json());
    const name = (response.headers.get("content-disposition") ?? "").match(/filename="?([^";]+)"?/);
    downloadBlob(await response.blob(), name ? name[1] : `${baseName(app.state, body)}_snapshot.html`);
  } catch (err) {
    const status = $("status");
    status.textContent = describeError(err);
    status.dataset.kind = "error";
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

/**
 * The lesson handout (POST /api/handout): every lesson step computed on the server in the
 * page's language, downloaded as one offline HTML file. The build takes seconds, so where
 * the reader clicked says so: the Export button and the handout's own item are marked busy
 * (aria-busy, the item disabled and named "Building…"), and a status beside the Export
 * button says what is happening and, at the end, that the file is downloaded or why not.
 */
async function handout() {
  const button = $("export-handout");
  const menu = $("export-menu");
  const note = $("export-progress");
  /** @param {string} kind @param {string} text @param {string} [key] the catalog key, so that a language switch retranslates it */
  const say = (kind, text, key) => {
    note.textContent = text;
    note.dataset.kind = kind;
    if (key) note.dataset.i18n = key;
    else delete note.dataset.i18n;
  };
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  button.dataset.i18n = "export.handout_building";
  button.textContent = t("export.handout_building");
  menu.setAttribute("aria-busy", "true");
  say("busy", t("export.handout_busy"), "export.handout_busy");
  try {
    const lang = document.documentElement.lang;
    const body = { lang, base_url: `${location.origin}${location.pathname}` };
    const response = await fetch("/api/handout", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new ApiError(response.status, await response.json());
    const name = (response.headers.get("content-disposition") ?? "").match(/filename="?([^";]+)"?/);
    downloadBlob(await response.blob(), name ? name[1] : `ffn-lab_lesson-handout_${lang}.html`);
    say("done", t("export.handout_done"), "export.handout_done");
  } catch (err) {
    say("error", describeError(err));
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
    button.dataset.i18n = "export.handout";
    button.textContent = t("export.handout");
    menu.removeAttribute("aria-busy");
  }
}

export function initExport(app) {
  addPlotTools(app);
  const close = () => { $("export-menu").open = false; };
  // a menu closes when the reader clicks anywhere else (e.g. "Copy embed code") or presses Esc
  document.addEventListener("click", (e) => { if (!$("export-menu").contains(/** @type {Node} */ (e.target))) close(); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
  on("forward", () => codeAvailable(app));
  $("export-json").addEventListener("click", async () => {
    close();
    // Wait for the answers of the current state (a view out of sight is fetched now).
    const last = await current(app);
    const text = runJson({ state: app.state, last: () => last }, last.forwardBody ?? app.requestBody(),
      stateUrl(app.schema, app.state));
    downloadText(text, `${runName(app)}.json`, "application/json");
  });
  $("export-csv").addEventListener("click", async () => {
    close();
    const last = await current(app);
    downloadText(runCsv(last), `${runName(app)}.csv`, "text/csv");
  });
  $("export-code").addEventListener("click", () => {
    if (!codeAvailable(app)) return;
    const body = app.requestBody();
    const activation = app.boot.activations.find((a) => a.name === body.activation);
    const code = pytorchSnippet(body, activation, stateUrl(app.schema, app.state));
    close();
    showText({
      title: t("export.code_title"), text: code, hint: t("export.code_hint"),
      download: { name: `${runName(app).replaceAll("-", "_")}.py`, type: "text/x-python" },
    });
  });
  $("export-snapshot").addEventListener("click", () => { close(); snapshot(app); });
  $("export-handout").addEventListener("click", () => { close(); handout(); });
}

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

const $ = (id) => document.getElementById(id);
const IMAGE_SCALE = 2;

/**
 * "ffn-lab_16x64_relu_T6": the configuration that ran, in a file name. `config` is the
 * answer's (so typed text names the pretrained layer: "ffn-lab_minilm-l6-L0_384x1536_gelu_T8").
 */
export function baseName(config) {
  const model = config.model ? `${config.model}-L${config.layer}_` : "";
  const mode = config.mode === "train" ? "_train" : "";
  return `ffn-lab_${model}${config.d_model}x${config.d_ff}_${config.activation}_T${config.num_tokens}${mode}`;
}

/** The page state as it ran: the shape fields from the answer's config (typed text: 384...). */
function ranState(state, config) {
  return {
    ...state, d_model: config.d_model, d_ff: config.d_ff, activation: config.activation,
    bias: config.bias, tokens: config.num_tokens,
  };
}

/** The last answers, once they are for the current state (a pending request is waited for). */
async function current(app) {
  await app.settle();
  return app.last();
}

function plotTitle(el) {
  return el.layout?.title?.text || el.id;
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
      button.addEventListener("click", () => {
        if (!el.layout) return;
        const config = app.last().forward?.config;
        const name = `${config ? baseName(config) : "ffn-lab"}_${el.id.replace(/^plot-/, "")}`;
        Plotly.downloadImage(el, { format, filename: name, scale: format === "png" ? IMAGE_SCALE : 1 });
      });
      bar.append(button);
      return button;
    });
    // The plot and its toolbar share a wrapper, which takes the plot's place in the layout.
    const wrap = document.createElement("div");
    wrap.className = "plot-wrap";
    el.before(wrap);
    wrap.append(bar, el);
    tools.push({ el, bar, buttons });
  }
  const label = () => {
    for (const { el, bar, buttons } of tools) {
      const plot = plotTitle(el);
      bar.setAttribute("aria-label", t("export.plot_tools", { plot }));
      for (const b of buttons) {
        b.textContent = t(`export.${b.dataset.format}`);
        b.setAttribute("aria-label", t(`export.${b.dataset.format}_of`, { plot }));
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
    const { forward } = await current(app);
    downloadBlob(await response.blob(), `${baseName(forward.config)}_snapshot.html`);
  } catch (err) {
    const status = $("status");
    status.textContent = describeError(err);
    status.dataset.kind = "error";
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

export function initExport(app) {
  addPlotTools(app);
  const close = () => { $("export-menu").open = false; };
  $("export-json").addEventListener("click", async () => {
    close();
    const last = await current(app);
    const state = ranState(app.state, last.forward.config);
    const text = runJson({ state, last: () => last }, last.forwardBody, stateUrl(app.schema, app.state));
    downloadText(text, `${baseName(last.forward.config)}.json`, "application/json");
  });
  $("export-csv").addEventListener("click", async () => {
    close();
    const last = await current(app);
    downloadText(runCsv(last), `${baseName(last.forward.config)}.csv`, "text/csv");
  });
  // The pretrained layer's weights come from its package, not from a seed: no program for it.
  const code = $("export-code");
  const codeNote = $("export-code-note");
  const pretrained = (state) => state.source === "text";
  const showCodeState = ({ state }) => {
    code.disabled = pretrained(state);
    codeNote.hidden = !code.disabled;
    codeNote.textContent = code.disabled ? t("export.code_pretrained") : "";
    code.title = code.disabled ? t("export.code_pretrained") : "";
  };
  on("state", showCodeState);
  on("language", () => showCodeState({ state: app.state }));
  $("export-code").addEventListener("click", () => {
    if (pretrained(app.state)) return;
    const body = app.requestBody();
    const activation = app.boot.activations.find((a) => a.name === body.activation);
    const code = pytorchSnippet(body, activation, stateUrl(app.schema, app.state));
    close();
    showText({
      title: t("export.code_title"), text: code, hint: t("export.code_hint"),
      download: { name: `${baseName(app.last().forward?.config ?? { ...body, num_tokens: body.tokens ? body.tokens.length : body.num_tokens }).replaceAll("-", "_")}.py`, type: "text/x-python" },
    });
  });
  $("export-snapshot").addEventListener("click", () => { close(); snapshot(app); });
}

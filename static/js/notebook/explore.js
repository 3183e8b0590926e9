// lab.explore(): the page's main sliders inside a notebook (an anywidget ES module).
// The kernel computes (app/lab/explore.py); this draws the flow it sends as three heatmaps
// on canvases, on the page's colour scale. No plotly.js, nothing from a CDN.

// The page's diverging scale (static/js/charts/rules.json), sent by the kernel with the data
// ("colors", evenly spaced): blue < 0 < red, white at 0.
let STOPS = [[33, 102, 172], [247, 247, 247], [178, 24, 43]];

/** @param {string[]} colors */
function setScale(colors) {
  if (colors?.length > 1) STOPS = colors.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
}

function colour(v, zmax) {
  const t = Math.max(0, Math.min(1, (v / zmax + 1) / 2)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(t));
  const f = t - i;
  const [a, b] = [STOPS[i], STOPS[i + 1]];
  return `rgb(${a.map((c, k) => Math.round(c + (b[k] - c) * f)).join(",")})`;
}

function heatmap(canvas, z) {
  const rows = z.length;
  const cols = rows ? z[0].length : 0;
  let zmax = 0;
  for (const row of z) for (const v of row) zmax = Math.max(zmax, Math.abs(v));
  zmax = zmax || 1e-12;
  const cell = Math.max(2, Math.min(16, Math.floor(560 / Math.max(cols, 1))));
  canvas.width = cols * cell;
  canvas.height = rows * cell;
  const ctx = canvas.getContext("2d");
  z.forEach((row, r) => row.forEach((v, c) => {
    ctx.fillStyle = colour(v, zmax);
    ctx.fillRect(c * cell, r * cell, cell, cell);
  }));
  return zmax;
}

function slider(model, el, name, label, values) {
  const wrap = document.createElement("label");
  wrap.className = "ffn-lab-explore-field";
  const input = document.createElement("input");
  input.type = "range";
  input.name = name;
  input.min = "0";
  input.max = String(values.length - 1);
  input.step = "1";
  const out = document.createElement("output");
  const show = () => {
    const i = Math.max(0, values.indexOf(model.get(name)));
    input.value = String(i);
    out.textContent = String(values[i]);
  };
  input.addEventListener("input", () => {
    model.set(name, values[Number(input.value)]);
    model.save_changes();
    out.textContent = String(values[Number(input.value)]);
  });
  model.on(`change:${name}`, show);
  show();
  wrap.append(`${label} `, input, out);
  el.append(wrap);
}

function render({ model, el }) {
  const options = model.get("options");
  el.classList.add("ffn-lab-explore");
  const controls = document.createElement("div");
  controls.style.cssText = "display:flex;flex-wrap:wrap;gap:12px;font:13px system-ui,sans-serif";
  el.append(controls);
  slider(model, controls, "d_model", "d_model", options.d_model);
  slider(model, controls, "d_ff", "d_ff", options.d_ff);
  const tokens = Array.from({ length: options.max_tokens }, (_, i) => i + 1);
  slider(model, controls, "num_tokens", "T", tokens);
  const seeds = Array.from({ length: 10 }, (_, i) => i);
  slider(model, controls, "seed", "seed", seeds);
  const act = document.createElement("select");
  act.name = "activation";
  for (const a of options.activations) act.add(new Option(a.label, a.name));
  act.value = model.get("activation");
  act.addEventListener("change", () => { model.set("activation", act.value); model.save_changes(); });
  model.on("change:activation", () => { act.value = model.get("activation"); });
  const actLabel = document.createElement("label");
  actLabel.append("activation ", act);
  controls.append(actLabel);

  const error = document.createElement("p");
  error.setAttribute("role", "alert");
  error.style.cssText = "color:rgb(178,24,43);font:13px system-ui,sans-serif";
  const flow = document.createElement("div");
  flow.style.cssText = "display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin-top:8px";
  el.append(error, flow);
  const figures = {};
  for (const key of ["pre_activation", "hidden", "output"]) {
    const fig = document.createElement("figure");
    fig.style.margin = "0";
    fig.dataset.tensor = key;
    const canvas = document.createElement("canvas");
    canvas.style.cssText = "image-rendering:pixelated;border:1px solid #ddd;max-width:100%";
    const caption = document.createElement("figcaption");
    caption.style.cssText = "font:12px system-ui,sans-serif";
    fig.append(canvas, caption);
    flow.append(fig);
    figures[key] = { fig, canvas, caption };
  }
  const draw = () => {
    const data = model.get("data") || {};
    error.textContent = data.error || "";
    flow.style.opacity = data.error ? "0.35" : "1";
    if (data.error) return;
    setScale(data.colors);
    for (const [key, f] of Object.entries(figures)) {
      const t = data[key];
      if (!t) continue;
      const zmax = heatmap(f.canvas, t.z);
      const hook = data.names?.[key]?.transformer_lens || "";
      f.caption.textContent = `${key} [${t.shape.join(" × ")}] · ±${zmax.toPrecision(3)}`;
      f.fig.title = hook;
      f.canvas.dataset.zmax = String(zmax);
    }
  };
  model.on("change:data", draw);
  draw();
}

export default { render };

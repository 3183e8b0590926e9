// Common misconceptions as checks computed on the current FFN.
import { compact, count, magnitude } from "../format.js";
import { currentLanguage, t } from "../i18n.js";
import { panel, readout } from "./teaching-common.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));

function render(data) {
  const layers = data.layers;
  $("myth-layers").textContent = t("myth.one_layer.layers", {
    n: layers.length,
    list: layers.map((l) => `${l.name} (${t(`myth.role.${l.role}`)}) [${l.shape.join(" × ")}]`).join(", "),
  });
  $("myth-layers").dataset.value = String(layers.length);
  readout($("myth-additivity"), t("myth.one_layer.additivity", { value: magnitude(data.additivity_gap) }),
    data.additivity_gap);
  // With a gate, dropping the activation leaves a bilinear map, not one linear layer.
  const bilinear = data.no_activation_bilinear_gap;
  if (data.config.gated && bilinear !== null && bilinear !== undefined) {
    readout($("myth-collapse"), t("myth.one_layer.bilinear", { value: magnitude(bilinear) }), bilinear);
  } else {
    readout($("myth-collapse"), t("myth.one_layer.collapse", {
      value: magnitude(data.no_activation_gap), d_model: data.config.d_model,
    }), data.no_activation_gap);
  }
  const m = data.mixing;
  const one = m.changed_positions.length === 1 ? "myth.mixing.result_one" : "myth.mixing.result";
  readout($("myth-mixing-result"), t(one, {
    position: m.position, changed: m.changed_positions.join(", ") || "—",
    other: magnitude(m.max_abs_change_other_positions),
  }), m.max_abs_change_other_positions);
  $("myth-mixing-result").dataset.changed = String(m.changed_positions.length);
  const s = data.shared_weights;
  $("myth-shapes").textContent = Object.entries(s.param_shapes)
    .map(([k, shape]) => `${k} [${shape.join(" × ")}]`).join(" · ");
  const rows = s.tokens.map((n, i) => {
    const tr = document.createElement("tr");
    // FLOPs grow with T to 11+ digits at LLaMA size: compact (17.3B), exact in the tooltip
    const flops = s.flops[i] >= 1e7 ? compact(s.flops[i]) : count(s.flops[i]);
    for (const [text, value] of [[count(n), n], [count(s.params_measured[i]), s.params_measured[i]],
      [flops, s.flops[i]]]) {
      const td = document.createElement("td");
      td.textContent = text;
      td.dataset.value = String(value);
      if (text !== count(value)) td.title = count(value);
      tr.append(td);
    }
    return tr;
  });
  $("myth-tokens-table").querySelector("tbody").replaceChildren(...rows);
  const alone = s.row_by_row_positions ?? [];
  const some = alone.length && alone.length < data.config.num_tokens;
  const rowKey = data.config.gated ? "myth.own_weights.row_by_row_gated" : "myth.own_weights.row_by_row";
  readout($("myth-row-by-row"), t(rowKey, {
    value: magnitude(s.row_by_row_max_abs_diff), formula: count(s.params_formula),
  }) + (some ? ` ${t("myth.own_weights.rows_alone", {
    rows: new Intl.ListFormat(currentLanguage(), { type: "conjunction" }).format(alone.map((i) => count(i))),
    t: count(data.config.num_tokens),
  })}` : ""),
  s.row_by_row_max_abs_diff);
}

panel({
  id: "misconceptions",
  url: "/api/misconceptions",
  event: "perturb",
  body: (base) => base,
  render,
});

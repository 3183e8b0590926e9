// Measures the page's plots for tests/browser/test_layout.py (evaluated in the page; not
// part of the app). Returns { plots, problems: [{ kind, plot, text, other }] } where kind is
//   "outside": a text Plotly drew lies (partly) outside its plot's container (clipped),
//   "overlap": two texts of one plot overlap,
//   "plots": two plot containers overlap, "arrow": a flow arrow overlaps a plot,
//   "edge": a plot reaches past the right edge of the window,
//   "row": two plots of one row of the flow start at different heights (a neighbour's
//   two-line caption pushed one down),
//   "cells": a heatmap with more columns (rows) than CSS pixels across (down) its plot area.
// With { phone: true } (phone and tablet sizes) also
//   "scroll": the page is wider than the window (document scrollWidth > viewport width),
//   "beside": two plots side by side (a phone shows one plot per row),
//   "font": a text smaller than 12 px (HTML text, or text Plotly drew),
//   "target": a control smaller than 44 x 44 px to touch (buttons, selects, menus, sliders,
//   number fields; a checkbox or radio by its label), or one that reaches past the window.
(opts = {}) => {
  const TEXT = [
    ".gtitle", ".xtitle", ".ytitle", ".xtick text", ".ytick text",
    ".colorbar text", ".cbaxis text", ".legend text", ".annotation text",
  ].join(", ");
  const SLACK = 2; // px: boxes include the font's ascent/descent, glyphs touch at ~1 px
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const overlap = (a, b) =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > SLACK &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > SLACK;
  const problems = [];
  const viewport = document.documentElement.clientWidth;
  const plots = [...document.querySelectorAll(".js-plotly-plot")].filter(
    (el) => el.offsetParent !== null && shown(el),
  );
  const boxes = [];
  for (const el of plots) {
    const box = el.getBoundingClientRect();
    boxes.push([el, box]);
    if (box.right > viewport + 1) problems.push({ kind: "edge", plot: el.id, text: String(Math.round(box.right)) });
    const texts = [...new Set(el.querySelectorAll(TEXT))]
      .filter((t) => t.textContent.trim() && shown(t) && Number(getComputedStyle(t).opacity) > 0)
      .map((t) => ({ text: t.textContent.trim(), r: t.getBoundingClientRect() }))
      .filter((t) => t.r.width > 0 && t.r.height > 0);
    for (const t of texts) {
      if (t.r.left < box.left - 1 || t.r.right > box.right + 1 || t.r.top < box.top - 1 || t.r.bottom > box.bottom + 1) {
        problems.push({ kind: "outside", plot: el.id, text: t.text });
      }
    }
    for (let i = 0; i < texts.length; i += 1) {
      for (let j = i + 1; j < texts.length; j += 1) {
        if (overlap(texts[i].r, texts[j].r)) {
          problems.push({ kind: "overlap", plot: el.id, text: texts[i].text, other: texts[j].text });
        }
      }
    }
  }
  for (let i = 0; i < boxes.length; i += 1) {
    for (let j = i + 1; j < boxes.length; j += 1) {
      if (overlap(boxes[i][1], boxes[j][1])) {
        problems.push({ kind: "plots", plot: boxes[i][0].id, other: boxes[j][0].id });
      }
    }
  }
  for (const arrow of document.querySelectorAll(".flow .arrow")) {
    if (!shown(arrow)) continue;
    const r = arrow.getBoundingClientRect();
    for (const [el, box] of boxes) {
      if (overlap(r, box)) problems.push({ kind: "arrow", plot: el.id, text: arrow.textContent.trim() });
    }
  }
  const flow = boxes.filter(([el]) => el.closest(".flow > .stage"));
  for (let i = 0; i < flow.length; i += 1) {
    for (let j = i + 1; j < flow.length; j += 1) {
      const [a, b] = [flow[i][1], flow[j][1]];
      const sameRow = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > Math.min(a.height, b.height) / 2;
      if (sameRow && Math.abs(a.top - b.top) > SLACK) {
        problems.push({ kind: "row", plot: flow[i][0].id, other: flow[j][0].id, text: String(Math.round(a.top - b.top)) });
      }
    }
  }
  // every heatmap cell is one entry of the tensor, at least a CSS pixel wide and tall, at
  // every size (a window of columns, never more columns than pixels: Plotly's image of one
  // pixel per cell, scaled down with nearest-neighbour sampling, would leave some unseen)
  for (const [el] of boxes) {
    const trace = (el.data || []).find((t) => t.type === "heatmap");
    const full = el._fullLayout;
    if (!trace || !full?.xaxis?._length || !trace.z?.length) continue;
    const cols = trace.z[0].length, rows = trace.z.length;
    if (cols > full.xaxis._length + 0.5 || rows > full.yaxis._length + 0.5) {
      problems.push({ kind: "cells", plot: el.id, text: `${rows}x${cols} cells in ${Math.round(full.xaxis._length)}x${Math.round(full.yaxis._length)} px` });
    }
  }
  if (opts && opts.phone) phoneProblems(boxes, problems);
  return { plots: plots.length, problems };

  function phoneProblems(boxes, problems) {
    const MIN_FONT = 12;
    const MIN_TARGET = 44;
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) {
      problems.push({ kind: "scroll", plot: "", text: `${root.scrollWidth} > ${root.clientWidth}` });
    }
    for (let i = 0; i < boxes.length; i += 1) {
      for (let j = i + 1; j < boxes.length; j += 1) {
        const [a, b] = [boxes[i][1], boxes[j][1]];
        const sameRow = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > Math.min(a.height, b.height) / 2;
        if (sameRow) problems.push({ kind: "beside", plot: boxes[i][0].id, other: boxes[j][0].id });
      }
    }
    // a box a reader can see: laid out, not clipped to a pixel (screen-reader-only text)
    const seen = (el) => {
      if (!shown(el) || (el.checkVisibility && !el.checkVisibility())) return false;
      const r = el.getBoundingClientRect();
      return r.width > 2 && r.height > 2;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const small = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.textContent.trim() || !el || small.has(el) || el.closest("script, style, [hidden]")) continue;
      if (el.closest(".js-plotly-plot") && !el.closest("svg")) continue; // Plotly's hidden helpers
      if (!seen(el)) continue;
      const size = parseFloat(getComputedStyle(el).fontSize);
      if (size < MIN_FONT - 0.05) {
        small.add(el);
        problems.push({ kind: "font", plot: el.closest(".js-plotly-plot")?.id ?? "", text: `${size.toFixed(1)}px ${node.textContent.trim().slice(0, 40)}` });
      }
    }
    const controls = "button, select, summary, input:not([type=hidden]), [role=button], [role=tab]";
    for (const el of document.querySelectorAll(controls)) {
      if (el.closest(".js-plotly-plot") || el.disabled && el.closest("[hidden]")) continue;
      const target = ["checkbox", "radio"].includes(el.type) ? el.closest("label") ?? el : el;
      if (!seen(target)) continue;
      const r = target.getBoundingClientRect();
      const name = el.id || el.getAttribute("data-i18n") || el.textContent.trim().slice(0, 30) || el.type;
      if (r.width < MIN_TARGET - 0.5 || r.height < MIN_TARGET - 0.5) {
        problems.push({ kind: "target", plot: "", text: `${name} ${Math.round(r.width)}x${Math.round(r.height)}` });
      }
      if (r.left < -1 || r.right > root.clientWidth + 1) {
        problems.push({ kind: "target", plot: "", text: `${name} off the window (${Math.round(r.left)}-${Math.round(r.right)})` });
      }
    }
  }
}

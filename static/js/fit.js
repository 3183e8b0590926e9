// Text that fits its plot: wrapped titles, tick density from the space there is. Plotly's
// automargin makes room for what is drawn; these choose what to draw so that nothing
// overlaps (no rotated ticks, no title wider than its plot). No DOM writes, no Plotly.
// The Python figures follow the same rules (app/lab/figures/fit.py).
import RULES from "./charts/rules.json" with { type: "json" };

const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/;

let context = null;

/** How wide `text` is at font size `size` px in the charts' font (measured on a canvas). */
export function textWidth(text, size) {
  if (typeof document !== "undefined") {
    context ??= document.createElement("canvas").getContext("2d");
    if (context) {
      context.font = `${size}px system-ui, sans-serif`;
      return context.measureText(String(text)).width;
    }
  }
  let em = 0; // no canvas: CJK and full-width characters are 1 em, others about 0.6
  for (const ch of String(text)) em += WIDE.test(ch) ? 1 : ch === " " ? 0.3 : /[A-Z]/.test(ch) ? 0.7 : 0.62;
  return em * size;
}

// Break after spaces and before CJK characters, never before closing punctuation.
const BREAK = /(?<=\s)|(?<![（【「『])(?=[\u2e80-\u9fff\uff00-\uff60])(?![）】」』，。、；：！？])/u;

/**
 * An axis title fitted as fitText does; one that would wrap or be cut loses a trailing gloss
 * without numbers ("feature (d_model)", "位置（词元）") when that makes it one whole line, so
 * that plots side by side keep plot areas of one height (the hover text keeps the title).
 */
export function fitTitle(title, width, size, maxLines = 2) {
  const text = String(title ?? "");
  const fitted = fitText(text, width, size, maxLines);
  const bare = text.replace(/\s*[(（][^()（）\d]*[)）]$/u, "");
  if ((fitted.lines > 1 || fitted.cut) && bare && bare !== text) {
    const short = fitText(bare, width, size, 1);
    if (!short.cut) return short;
  }
  return fitted;
}

/**
 * `text` wrapped into at most `maxLines` lines no wider than `width` px (Plotly's <br>).
 * Returns { text, lines, cut } where cut says the text had to be shortened (then the
 * caller puts the whole text into a tooltip).
 */
export function fitText(text, width, size, maxLines = 2) {
  const words = String(text).split(BREAK).filter((w) => w !== "");
  let wrapped = wrapWords(words, width, size);
  // A full-width gloss that fits on a line stays whole ("单元 0–255" above "（共 2048 个）",
  // not "…（共 2048" above "个）"), unless that would take one more line or be cut.
  const glossed = keepGlosses(words, width, size);
  if (glossed !== words) {
    const whole = wrapWords(glossed, width, size);
    if (whole.length <= Math.min(wrapped.length, maxLines)) wrapped = whole;
  }
  if (wrapped.length <= maxLines) noOrphan(wrapped, width, size);
  const lines = wrapped.map(joined);
  let cut = false;
  if (lines.length > maxLines) {
    lines.length = maxLines;
    cut = true;
  }
  const last = lines.length - 1;
  while (last >= 0 && textWidth(lines[last], size) > width && lines[last].length > 1) {
    lines[last] = lines[last].slice(0, -1);
    cut = true;
  }
  if (cut && last >= 0) lines[last] = `${lines[last].slice(0, -1).trimEnd()}…`;
  return { text: lines.join("<br>"), lines: Math.max(1, lines.length), cut };
}

/**
 * `words` (the pieces fitText may break between) greedily into lines of at most `width` px:
 * each line the list of its words (with their spaces, so that a word can move to another).
 */
function wrapWords(words, width, size) {
  const lines = [];
  let line = [];
  for (const word of words) {
    if (line.length && textWidth(joined([...line, word]), size) > width) {
      lines.push(line);
      line = [word];
    } else {
      line.push(word);
    }
  }
  if (joined(line)) lines.push(line);
  return lines;
}

/** A line's words as its text, without the spaces at its ends. */
function joined(line) {
  return line.join("").trim();
}

/** `words` with each full-width gloss "（…）" that fits in `width` px joined into one word. */
function keepGlosses(words, width, size) {
  const out = [];
  let changed = false;
  for (let i = 0; i < words.length; i += 1) {
    const end = words[i].startsWith("（") ? words.findIndex((w, j) => j >= i && w.includes("）")) : -1;
    const gloss = end > i ? words.slice(i, end + 1).join("") : "";
    if (gloss && textWidth(gloss.trim(), size) <= width) {
      out.push(gloss);
      i = end;
      changed = true;
    } else {
      out.push(words[i]);
    }
  }
  return changed ? out : words;
}

/**
 * No last line of a single character ("曲）" under "…在零附近弯"): the word before it moves
 * down to it when both fit, so a word or a measure word is not left alone.
 */
function noOrphan(lines, width, size) {
  const last = lines.length - 1;
  if (last < 1 || lines[last - 1].length < 2) return;
  if ([...joined(lines[last]).replace(/[）】」』，。、；：！？)\].,;:!?]/gu, "")].length > 1) return;
  const moved = [lines[last - 1][lines[last - 1].length - 1], ...lines[last]];
  if (textWidth(joined(moved), size) > width) return;
  lines[last - 1] = lines[last - 1].slice(0, -1);
  lines[last] = moved;
}

/** How many labels of width `labelWidth` fit along `length` px (at least `min`). */
export function fitting(length, labelWidth, min = 2) {
  return Math.max(min, Math.floor(length / Math.max(1, labelWidth)));
}

/**
 * Explicit, evenly spaced tick values for categories (labels), at most `n` of them; the
 * first is always shown. Returns { tickvals, ticktext } (all labels when they fit).
 */
export function categoryTicks(labels, n) {
  if (labels.length <= n) return { tickmode: "array", tickvals: labels, ticktext: labels };
  const step = Math.ceil(labels.length / n);
  const shown = labels.filter((_, i) => i % step === 0);
  return { tickmode: "array", tickvals: shown, ticktext: shown };
}

/** Integer positions 0..count-1 at a nice step (rules.json `tick_steps`) so that at most `n` are labelled. */
export function integerDtick(count, n) {
  const raw = Math.max(1, Math.ceil(count / Math.max(1, n)));
  for (const nice of RULES.tick_steps) {
    if (nice >= raw) return nice;
  }
  return raw;
}

/** A signed tick label: "+1.5", "0", "−0.25" (zero unsigned; U+2212 minus, as Plotly). */
export function signedLabel(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  const text = a < 1e-3 || a >= 1e5 ? a.toExponential(1).replace(".0e", "e") : String(Number(a.toPrecision(3)));
  return `${v > 0 ? "+" : "−"}${text}`;
}

/**
 * Colour-bar ticks of a signed range [zmin, zmax]: 0 and nice steps either side, at most
 * about `n` in all (the two ends only when `n` < 3), labelled "+1", "0", "−1" (a "+.2~g"
 * format would print "+0").
 * Returns { tickmode, tickvals, ticktext }.
 */
export function signedTicks(zmin, zmax, n) {
  const m = Math.max(Math.abs(zmin), Math.abs(zmax));
  // room for two labels only (a short bar in a slide's frame): its two ends, no zero between
  const ends = (vals) => (n < 3 && vals.length > 2 ? [vals[0], vals[vals.length - 1]] : vals);
  const out = (vals) => ({ tickmode: "array", tickvals: ends(vals), ticktext: ends(vals).map(signedLabel) });
  if (!(m > 0)) return out([0]);
  const half = Math.max(1, Math.floor((n - 1) / 2));
  const raw = m / half;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((k) => k * mag).find((s) => s >= raw * (1 - 1e-9)) ?? 10 * mag;
  const k = Math.floor(m / step + 1e-9);
  if (k < 1) {
    // the range is narrower than one nice step: the largest nice value inside it, and zero
    const mm = 10 ** Math.floor(Math.log10(m));
    const end = Number(([5, 2.5, 2, 1].map((f) => f * mm).find((v) => v <= m * (1 + 1e-9)) ?? mm).toPrecision(12));
    return out([-end, 0, end].filter((v) => v >= zmin - 1e-12 && v <= zmax + 1e-12));
  }
  const vals = [];
  for (let i = -k; i <= k; i += 1) {
    const v = Number((i * step).toPrecision(12));
    if (v >= zmin - 1e-12 && v <= zmax + 1e-12) vals.push(v);
  }
  return out(vals);
}

/**
 * The font size at which every one of `rows` category labels fits along `length` px
 * (a label's box is about 1.25 of its size): `size` when they fit, else smaller down to
 * `min`. Returns { size, all } where `all` says every row can be labelled.
 */
export function rowFont(rows, length, size, min) {
  const room = length / Math.max(1, rows) / 1.25;
  if (room >= size) return { size, all: true };
  if (room >= min) return { size: Math.floor(room), all: true };
  return { size: min, all: false };
}

/**
 * A tick step for a linear axis over [lo, hi] with about `n` labels and never fewer than
 * two inside the range (Plotly's nticks on a narrow plot may label only "0").
 */
export function linearDtick(lo, hi, n) {
  const span = hi - lo;
  if (!(span > 0)) return null;
  const raw = span / Math.max(1, n);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const steps = [1, 2, 2.5, 5, 10].map((k) => k * mag);
  const inside = (d) => Math.floor(hi / d + 1e-9) - Math.ceil(lo / d - 1e-9) + 1;
  const up = steps.find((d) => d >= raw * (1 - 1e-9)) ?? 10 * mag;
  if (inside(up) >= 2) return up;
  return [...steps].reverse().find((d) => d <= span && inside(d) >= 2) ?? mag;
}

// Number formatting: every signed number shows its sign; exact zero reads "0".
import { currentLanguage } from "./i18n.js";

const cache = new Map();
function formatter(key, options) {
  const id = `${currentLanguage()}|${key}`;
  if (!cache.has(id)) cache.set(id, new Intl.NumberFormat(currentLanguage(), options));
  return cache.get(id);
}

/** A signed number with 4 significant digits: "+1.234", "−0.5", "0" (exact zero only). */
export function signed(x) {
  return signedDigits(x, 4);
}

/**
 * A signed number with at most `digits` significant digits (1 to 4): signedDigits(-0.05761, 2)
 * is "−0.058"; for a heatmap's cells too narrow for signed's four digits.
 */
export function signedDigits(x, digits) {
  if (x === 0) return "0";
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) {
    const s = abs.toExponential(Math.min(2, digits - 1));
    return (x < 0 ? "−" : "+") + s;
  }
  return formatter(`signed${digits}`, { signDisplay: "exceptZero", maximumSignificantDigits: digits }).format(x);
}

/** A non-negative magnitude (norm, count fraction) with 4 significant digits; 0 stays "0". */
export function magnitude(x) {
  if (x === 0) return "0";
  if (x < 1e-3 || x >= 1e6) return x.toExponential(2);
  return formatter("mag", { maximumSignificantDigits: 4 }).format(x);
}

/** An integer with grouping: 2,099,712. */
export function count(n) {
  return formatter("count", { maximumFractionDigits: 0 }).format(n);
}

/** A large count in a few characters, for narrow tables: 17.3B (en), 173亿 (zh-CN). */
export function compact(n) {
  return formatter("compact", { notation: "compact", maximumSignificantDigits: 3 }).format(n);
}

/** A fraction in [0, 1] as a percentage: 37.5%. */
export function percent(x) {
  return formatter("pct", { style: "percent", maximumFractionDigits: 1 }).format(x);
}

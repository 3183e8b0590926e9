// Types for `tsc --noEmit` over static/js (JSDoc-checked ES modules, no build step).

/** plotly.js, loaded by the page as a classic script (window.Plotly). */
declare const Plotly: any;

/** What Plotly adds to the element it draws in, and the page's own marks on a chart. */
interface PlotlyElement {
  data?: any[];
  layout?: any;
  _fullLayout?: any;
  _context?: any;
  /** Plotly's full data and calculated data (the heatmap's values repainted: charts/heatmap.js) */
  _fullData?: any[];
  calcdata?: any[];
  _hmpixcount?: number;
  _hmlumcount?: number;
  on?(event: string, handler: (event: any) => void): void;
  emit?(event: string, data?: any): void;
  removeAllListeners?(event?: string): void;
  /** the last values drawn (static/js/charts/redraw.js) */
  ffnLast?: any;
  /** what an element built from the answer shows now: rebuilt only when it changes (views.js) */
  ffnShown?: string;
}

interface HTMLElement extends PlotlyElement {}

/**
 * The page looks elements up by class or attribute as it does by id: as a `Control` (the
 * lib's default, Element, has no dataset, hidden, value or focus).
 */
interface ParentNode {
  querySelector(selectors: string): Control | null;
  querySelectorAll(selectors: string): NodeListOf<Control>;
}

/** The Resource Timing fields the status line reads. */
interface PerformanceEntry {
  responseEnd?: number;
}

/**
 * An element the page looks up by id (`$(id)`): a form control, a select, a dialog or a
 * details menu. Each module's `$` is typed so; what an element is, its markup says
 * (templates/).
 */
type Control = HTMLInputElement & HTMLSelectElement & HTMLDialogElement & HTMLDetailsElement &
  Pick<HTMLAnchorElement, "href"> & Pick<HTMLTableElement, "tBodies">;

/** `document.getElementById` as the modules' `$`: a `Control` (see above). */
interface Document {
  getElementById(elementId: string): Control | null;
}

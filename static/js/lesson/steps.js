// The guided lesson as data: each step sets the controls, points at one thing, and says one
// sentence. Append a step by adding an entry (and its two catalog keys in every language).
//   id         stable name (tests and the URL use the 1-based index, `step=N`)
//   state      settings applied on top of LESSON_BASE (any names of the state schema)
//   panel      the view to open: a list of alternatives, the first one the page has wins
//   highlight  what to look at: CSS selectors, or a list of alternatives (first found wins);
//              the first highlighted element is scrolled into view
//   title/text catalog keys (static/i18n/<lang>/lesson.json)
//   start      (optional) a panel whose run the step starts when it is shown, e.g. "train":
//              the step shows what its sentence says happening, not a button to press
//   startValues (optional) what the start asks of that panel (default { start: true }; the
//              training panel also takes capacity: true, its width sweep)
// The steps on the teaching panels (attention-vs-ffn, budget, dropout, block, variants,
// misconceptions) name a core panel as the alternative and highlight lists with fallbacks,
// so a page without those panels still shows a sensible step.

/** Every step starts from these settings, so a step looks the same however you got there. */
export const LESSON_BASE = {
  preset: "custom", d_model: 16, d_ff: 64, activation: "relu", tokens: 6, bias: true, seed: 0,
  input_seed: 0, position: 0, scale: 1, mode: "eval", dropout: 0.1, panel: "",
  heads: 1, norm: "post", match: false, dropout_seed: 0, unit: -1,
};

export const STEPS = [
  { id: "what", state: { d_model: 8, d_ff: 32 }, panel: ["flow"],
    highlight: ["#flow .flow"], title: "lesson.what.title", text: "lesson.what.text" },
  { id: "shapes", state: { preset: "tiny" }, panel: ["flow"],
    highlight: ["#flow .flow", "#readout-shapes"], title: "lesson.shapes.title", text: "lesson.shapes.text" },
  { id: "up", state: { preset: "transformer-base" }, panel: ["flow"],
    highlight: ["#plot-pre_activation", "#ratio"], title: "lesson.up.title", text: "lesson.up.text" },
  { id: "activation", state: {}, panel: ["sparsity"],
    highlight: ["#sparsity"], title: "lesson.activation.title", text: "lesson.activation.text" },
  { id: "position", state: { position: 2, scale: 2 }, panel: ["perturb"],
    highlight: ["#perturb"], title: "lesson.position.title", text: "lesson.position.text" },
  { id: "attention", state: { position: 2, scale: 2 }, panel: ["attention-vs-ffn", "perturb"],
    highlight: [["#attention-moved", "#perturb"], "#ffn-moved", "#plot-attention-norms", "#plot-ffn-norms"],
    title: "lesson.attention.title", text: "lesson.attention.text" },
  { id: "shared", state: { tokens: 12 }, panel: ["readout"],
    highlight: ["#readout", "[data-control='tokens']"], title: "lesson.shared.title", text: "lesson.shared.text" },
  { id: "budget", state: { d_model: 512, d_ff: 2048, tokens: 12 }, panel: ["budget", "readout"],
    highlight: [["#budget-table", "#readout"], "#plot-budget-flops", "#conv-diff"],
    title: "lesson.budget.title", text: "lesson.budget.text" },
  { id: "dropout", state: { mode: "train", dropout: 0.1, dropout_seed: 0 }, panel: ["dropout", "flow"],
    highlight: [["#dropout", "#plot-output"], "[data-control='mode']"],
    title: "lesson.dropout.title", text: "lesson.dropout.text" },
  { id: "residual", state: { norm: "post" }, panel: ["block", "flow"],
    highlight: [["#block", "#plot-output"], ".formula"], title: "lesson.residual.title", text: "lesson.residual.text" },
  { id: "gelu", state: { activation: "gelu" }, panel: ["sparsity"],
    highlight: ["#sparsity"], title: "lesson.gelu.title", text: "lesson.gelu.text" },
  { id: "swiglu", state: { activation: "swiglu" }, panel: ["flow"],
    highlight: ["#flow .flow", "[data-control='activation']"], title: "lesson.swiglu.title", text: "lesson.swiglu.text" },
  { id: "variants", state: { d_model: 512, d_ff: 2048, match: true }, panel: ["variants", "sparsity"],
    highlight: [["#variants-table", "#sparsity"], "#variants-llama", "#plot-variant-sparsity"],
    title: "lesson.variants.title", text: "lesson.variants.text" },
  { id: "misconceptions", state: { position: 2, scale: 2 }, panel: ["misconceptions", "perturb"],
    highlight: [["#myth-one-layer", "#flow .flow"], "#myth-mixing", "#myth-own-weights"],
    title: "lesson.misconceptions.title", text: "lesson.misconceptions.text" },
  { id: "cheaper", state: { d_model: 512, d_ff: 2048, cheap_rank: 128 }, panel: ["cheaper", "readout"],
    highlight: [["#cheaper-table", "#readout"], "#cheaper-energy"],
    title: "lesson.cheaper.title", text: "lesson.cheaper.text" },
  { id: "depth", state: { position: 2, scale: 2, layers: 6, stack_attention: false }, panel: ["stack", "perturb"],
    highlight: [["#plot-stack-delta", "#perturb"], "#stack-changed", "#stack-params"],
    title: "lesson.depth.title", text: "lesson.depth.text" },
  { id: "learn", state: { train_d_ff: 64, train_act: "relu", train_lr: 0.03, train_compare: true },
    panel: ["train", "readout"], start: "train",
    highlight: [["#train .train-run", "#readout"], "#plot-train-loss", "#plot-train-accuracy"],
    title: "lesson.learn.title", text: "lesson.learn.text" },
  { id: "deadzone", state: { train_d_ff: 64, train_act: "relu", train_lr: 1, train_compare: false },
    panel: ["train", "readout"], start: "train",
    highlight: [["#plot-train-dead", "#readout"], "#train-lr", "#train-activation"],
    title: "lesson.deadzone.title", text: "lesson.deadzone.text" },
  { id: "memory", state: { train_d_ff: 64, train_act: "relu", train_lr: 0.03, train_compare: false },
    panel: ["train", "readout"], start: "train",
    highlight: [["#plot-train-key", "#readout"], "#plot-train-value"],
    title: "lesson.memory.title", text: "lesson.memory.text" },
  { id: "capacity", state: { train_act: "relu", train_lr: 0.03 },
    panel: ["train", "readout"], start: "train", startValues: { capacity: true },
    highlight: [["#plot-train-capacity", "#readout"]],
    title: "lesson.capacity.title", text: "lesson.capacity.text" },
];

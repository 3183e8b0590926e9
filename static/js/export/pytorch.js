// A PyTorch program that rebuilds the current configuration with torch alone: the same
// seeded weights (nn.Linear's default init drawn from one generator, in the order w1, b1,
// w2, b2, w_gate, b_gate), the same input tokens and, in train mode, the same dropout mask.
// Each random stream has its own generator, seeded by stream_seed(seed, name): the same
// SHA-256 rule as app/model/seeding.py, carried in the program with the standard library.
// tests/browser/test_export.py runs it and compares `y` with /api/forward's output.

/** Element-wise activation modules, by registry key (app/model/activations.py). */
const ACT_CODE = {
  relu: "nn.ReLU()",
  gelu: "nn.GELU()",
  gelu_tanh: 'nn.GELU(approximate="tanh")',
  silu: "nn.SiLU()",
  swiglu: "nn.SiLU()",
  geglu: "nn.GELU()",
  geglu_tanh: 'nn.GELU(approximate="tanh")',
};

const py = (value) => JSON.stringify(value);

/** The header's formula: the FFN in view, with the bias terms only when it has biases. */
function formulaLine(gated, bias) {
  if (gated) {
    return bias
      ? "FFN(x) = (act(x W_gate + b_gate) * (x W1 + b1)) W2 + b2, a gated FFN (Shazeer 2020), the same for every position."
      : "FFN(x) = (act(x W_gate) * (x W1)) W2, a gated FFN (Shazeer 2020) without biases, the same for every position.";
  }
  return bias
    ? "FFN(x) = act(x W1 + b1) W2 + b2, the same for every position (Vaswani et al. 2017, eq. 2)."
    : "FFN(x) = act(x W1) W2: Vaswani et al. 2017's eq. 2 without its biases b1, b2, the same for every position.";
}
const pyBool = (value) => (value ? "True" : "False");

/**
 * The program as text. `body` is the /api/forward request body of the current state,
 * `activation` the activation's boot entry ({ name, label, gated }), `url` the page link.
 */
export function pytorchSnippet(body, activation, url) {
  const gated = activation.gated;
  const bias = pyBool(body.bias);
  const train = body.mode === "train" && body.dropout > 0;
  const ownWeights = Boolean(body.weights);
  const ownTokens = Array.isArray(body.tokens);
  const seeded = !ownWeights || !ownTokens || train;
  const lines = [];
  const add = (...more) => lines.push(...more);
  add(
    "# FFN Lab: this configuration rebuilt with PyTorch alone.",
    `# ${url}`,
    `# ${formulaLine(gated, body.bias)}`,
  );
  if (seeded) add("import hashlib");
  add("import math", "", "import torch", "from torch import nn", "");
  if (seeded) {
    add(
      "",
      "def generator(seed, stream):",
      '    """FFN Lab\'s independent random streams ("weights", "inputs", "dropout"): one',
      '    generator per (seed, stream name), so equal seeds never correlate two streams."""',
      '    digest = hashlib.sha256(f"ffn-lab/{stream}/{seed}".encode()).digest()',
      '    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") & (2**63 - 1))',
      "",
      "",
    );
  }
  add(`d_model, d_ff = ${body.d_model}, ${body.d_ff}`);
  if (train) add(`p, dropout_seed = ${body.dropout}, ${body.dropout_seed ?? 0}`);
  add(
    "",
    "",
    "class FeedForward(nn.Module):",
    `    """${gated ? `${activation.label}: down(act(gate(x)) * up(x)), three matrices` : "Two linear layers with an activation between them"}."""`,
    "",
    "    def __init__(self):",
    "        super().__init__()",
    `        self.w1 = nn.Linear(d_model, d_ff, bias=${bias})  # up-projection W1${body.bias ? ", b1" : ""}`,
    `        self.w2 = nn.Linear(d_ff, d_model, bias=${bias})  # down-projection W2${body.bias ? ", b2" : ""}`,
  );
  if (gated) add(`        self.w_gate = nn.Linear(d_model, d_ff, bias=${bias})  # gate W_gate${body.bias ? ", b_gate" : ""}`);
  add(
    `        self.act = ${ACT_CODE[activation.name] ?? "nn.Identity()  # unknown activation"}`,
    "",
    "    def forward(self, x):",
    gated
      ? "        h = self.act(self.w_gate(x)) * self.w1(x)  # (T, d_ff)"
      : "        h = self.act(self.w1(x))  # (T, d_ff)",
  );
  if (train) {
    add(
      "        if self.training and p > 0:  # inverted dropout with a seeded mask (train mode only)",
      "            mask = torch.rand(h.shape, generator=generator(dropout_seed, \"dropout\")) < p",
      "            h = h.masked_fill(mask, 0.0) / (1 - p)",
    );
  }
  add("        return self.w2(h)  # (T, d_model)", "", "", "ffn = FeedForward()");
  if (ownWeights) {
    add("with torch.no_grad():  # the preset's numbers, paper orientation [in, out] -> nn.Linear's [out, in]");
    for (const [name, value] of Object.entries(body.weights)) {
      const layer = name.endsWith("gate") ? "w_gate" : name.endsWith("1") ? "w1" : "w2";
      const target = name.startsWith("w") ? `ffn.${layer}.weight` : `ffn.${layer}.bias`;
      const tensor = `torch.tensor(${py(value)}, dtype=torch.float32)`;
      add(`    ${target}.copy_(${tensor}${name.startsWith("w") ? ".T" : ""})`);
    }
  } else {
    add(
      `seed = ${body.seed ?? 0}`,
      'weights = generator(seed, "weights")',
      "with torch.no_grad():  # FFN Lab's seeded weights: nn.Linear's default init, in this order",
      `    for layer in [ffn.w1, ffn.w2${gated ? ", ffn.w_gate" : ""}]:`,
      "        nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=weights)",
      "        bound = 1 / math.sqrt(layer.in_features)",
      "        b = torch.empty(layer.out_features).uniform_(-bound, bound, generator=weights)",
      "        if layer.bias is not None:",
      "            layer.bias.copy_(b)",
    );
  }
  if (ownTokens) {
    add(`x = torch.tensor(${py(body.tokens)}, dtype=torch.float32)  # (T, d_model), the given vectors`);
  } else {
    add(
      `input_seed, num_tokens = ${body.input_seed ?? 0}, ${body.num_tokens}`,
      'x = torch.randn(num_tokens, d_model, generator=generator(input_seed, "inputs"))  # (T, d_model)',
    );
  }
  add(
    train ? "ffn.train()" : "ffn.eval()",
    "with torch.no_grad():",
    "    y = ffn(x)  # (T, d_model)",
    'print("x", tuple(x.shape), "-> y", tuple(y.shape))',
    "print(y)",
    "",
  );
  return lines.join("\n");
}

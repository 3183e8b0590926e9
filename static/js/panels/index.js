// Extra panels register themselves on the bus when imported; one line per panel.
import "./source.js";
import "./contrast.js";
import "./neuron.js";
import "./attention.js";
import "./block.js";
import "./variants.js";
import "./budget.js";
import "./dropout.js";
import "./misconceptions.js";
import "./stack.js";
import "./train.js";
import "./cheaper.js";
import "./names.js";

// Extra panels register themselves on the bus when imported; one line per panel.
import "./source.js";
import "./contrast.js";
import "./neuron.js";

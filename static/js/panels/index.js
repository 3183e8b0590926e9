// Extra panels register themselves on the bus when imported; one line per panel.

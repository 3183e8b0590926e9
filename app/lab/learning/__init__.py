"""An FFN learning a key-value memory: the task (`memory`), the training loop (`train`), what
one hidden unit has learned (`reading`), the capacity sweep (`capacity`)."""

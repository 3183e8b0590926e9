"""A stack of layers, each with its own FFN: build and run it (`run`), the POST /api/stack
answer (`answer`), the pretrained encoder's layers as a stack (`pretrained`)."""

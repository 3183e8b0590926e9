"""Experiments and runs built on the model, without HTTP.

The endpoints' runs (ffn, block, contrast, pretrained, snapshot) take validated request
models; the plain-Python experiments (stack, train, cheaper) take plain arguments and return
dataclasses of tensors/arrays, with domain errors as `ValueError` subclasses.
"""

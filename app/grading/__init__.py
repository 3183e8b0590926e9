"""The light side of `ffn-lab check`: no torch, so `ffn-lab check --help` answers at once.

Modules: `report` (the checks' names, `CheckResult`, `CheckReport`, `CannotCheck`),
`runner` (start `python -m app.lab.checker.worker` with a time limit that starts when the
student's code does), `gradescope` (results.json and the TA's weights file), `cli`
(argument parsing and output formats). The checks themselves, which import torch, live in
`app.lab.checker` and run only in the worker (or in-process through `lab.check`).
"""

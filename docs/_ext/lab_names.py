"""A griffe extension: document `app.lab`'s public names as Python sees them.

`app.lab` exports functions whose names are also its submodules (`lab.stack`, `lab.cheaper`,
`lab.from_module`). Python binds the name to the function (the package imports it last);
griffe, reading the files, binds it to the submodule. For every name in `app.lab.__all__`
this extension points the documented member at the object Python imports.
"""

from __future__ import annotations

import importlib
from typing import Any

import griffe

PACKAGE = "app.lab"


class LabPublicNames(griffe.Extension):
    """Replace a submodule that shadows a public name of `app.lab` by that name's object."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != PACKAGE.split(".")[0]:
            return
        runtime = importlib.import_module(PACKAGE)
        lab = loader.modules_collection.get_member(PACKAGE)
        for name in getattr(runtime, "__all__", []):
            member = lab.members.get(name)
            if member is None or not member.is_module:
                continue
            obj = getattr(runtime, name)
            path = f"{obj.__module__}.{obj.__qualname__}"
            target = loader.modules_collection.get_member(path)
            lab.set_member(name, griffe.Alias(name, target, parent=lab))

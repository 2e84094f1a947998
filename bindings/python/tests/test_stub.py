"""The type stub (`slipstream/__init__.pyi`) names every public class, method and function the
extension has, and nothing it lacks: a call added without its types, or a stub entry left after
a rename, fails here rather than in a user's type checker."""

import ast
import io
import pathlib

import slipstream

STUB = pathlib.Path(slipstream.__file__).with_name("__init__.pyi")


def members(classes, cls):
    """The public methods a stub class declares, with those of its stub base classes."""
    own = {n.name for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            own |= members(classes, classes[base.id])
    return own


def test_the_stub_and_the_module_name_the_same_calls():
    tree = ast.parse(STUB.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    checked = 0
    for name in (n for n in dir(slipstream) if not n.startswith("_")):
        obj = getattr(slipstream, name)
        if isinstance(obj, type):
            assert name in classes, f"{name} is not in the stub"
            stub = members(classes, classes[name])
            real = {n for n in dir(obj) if not n.startswith("_")}
            # What an exception or a file object inherits unchanged needs no stub entry.
            own = real - set(dir(OSError)) - set(dir(io.BufferedIOBase))
            assert own <= stub | {t.target.id for t in classes[name].body if isinstance(t, ast.AnnAssign)}, \
                (name, sorted(own - stub))
            assert stub <= real, (name, sorted(stub - real))
            checked += len(real)
        elif callable(obj):
            assert name in functions, f"{name}() is not in the stub"
            checked += 1
    assert checked > 30, "the module's calls were found"

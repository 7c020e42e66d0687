"""Every public host-side callable that docs/api.md lists has a signature inspect shows and a
docstring naming each of its parameters; jit's options in api.md are those of its signature.
(The kernel-language names and the types are used in kernels and signatures, not called from
Python with arguments, and are left out.)"""
import inspect
import os
import re

import pytest

import gpujit as gpu

API = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "api.md")
NOT_HOST = ("Kernel language", "Types", "Errors", "Submodules")


def _api_text():
    with open(API, encoding="utf-8") as f:
        return f.read()


def host_callables():
    names = set()
    for section in re.split(r"^## ", _api_text(), flags=re.M)[1:]:
        if section.startswith(NOT_HOST):
            continue
        for line in section.splitlines():
            if line.startswith("| `"):
                names.update(re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1]))
    return sorted(n for n in names if callable(getattr(gpu, n, None)) and not inspect.ismodule(getattr(gpu, n)))


def test_found_the_host_api():
    names = host_callables()
    assert {"jit", "to_device", "device_array", "compile_ptx", "vectorize", "Stream", "Event"} <= set(names)
    assert len(names) > 60


@pytest.mark.parametrize("name", host_callables())
def test_signature_and_docstring(name):
    obj = getattr(gpu, name)
    sig = inspect.signature(obj)  # raises ValueError where inspect shows none
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and obj.__init__ is not object.__init__:
        doc += "\n" + (inspect.getdoc(obj.__init__) or "")
    assert doc.strip(), "%s has no docstring" % name
    missing = [p for p in sig.parameters if p != "self" and not re.search(r"\b%s\b" % re.escape(p), doc)]
    assert not missing, "the docstring of %s%s does not name %s" % (name, sig, ", ".join(missing))


def test_jit_signature_has_every_option_and_api_md_lists_them():
    params = inspect.signature(gpu.jit).parameters
    assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params.values())
    row = next(line for line in _api_text().splitlines() if line.startswith("| `jit` |"))
    listed = set(re.findall(r"`(\w+)`", row))
    options = set(params) - {"func_or_sig", "device"}
    assert options <= listed, "api.md's jit row lacks %s" % ", ".join(sorted(options - listed))
    with pytest.raises(TypeError, match="nonsense"):
        gpu.jit(nonsense=1)

"""The user documentation stays true: its examples run, and its lists are complete.

- Every ```python block of docs/quickstart.md and docs/porting.md runs. A page's blocks run in
  order as one script (a later block may use what an earlier one defined), in a fresh process
  on the CPU target. A block meant only to be read (it needs a GPU, or shows an error) starts
  with the line `# not run` and is skipped. Indented blocks and ```bash blocks are not run.
- docs/api.md names, in backticks, every public name of the gpujit package: what dir(gpujit)
  lists without a leading underscore (the lazily loaded names included).
- docs/environment.md names every GPUJIT_* environment variable the sources read.
"""
import os
import re
import subprocess
import sys

import pytest


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
# the sources, also when the tests run from a copy of the checkout without python/ against an
# installed gpujit (scripts/test_wheel.sh names the checkout in GPUJIT_SOURCE_TREE)
SOURCE = os.environ.get("GPUJIT_SOURCE_TREE", ROOT)
SKIP_MARK = "# not run"


def _read(name):
    with open(os.path.join(DOCS, name), encoding="utf-8") as f:
        return f.read()


def python_blocks(text):
    """The ```python blocks of a Markdown text, without those marked SKIP_MARK."""
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    return [b for b in blocks if not b.lstrip().startswith(SKIP_MARK)]


def test_python_blocks_found():
    text = "a\n```python\nx = 1\n```\n```python\n# not run\nboom()\n```\n```bash\nls\n```\n"
    assert python_blocks(text) == ["x = 1\n"]


@pytest.mark.parametrize("page", ["quickstart.md", "porting.md"])
def test_page_examples_run(page, tmp_path):
    blocks = python_blocks(_read(page))
    assert blocks, "%s has no ```python block" % page
    script = tmp_path / ("example_" + page.replace(".md", ".py"))
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    env = dict(os.environ, GPUJIT_TARGET="cpu", GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(ROOT, "python"), env.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, "the examples of docs/%s failed:\n%s" % (page, r.stderr[-4000:])


def public_names():
    """dir(gpujit) without leading underscores, in a fresh process: in this one, submodules other
    tests imported are attributes too."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(ROOT, "python"), env.get("PYTHONPATH")) if p)
    out = subprocess.run([sys.executable, "-c", "import gpujit; print(' '.join(dir(gpujit)))"],
                         env=env, capture_output=True, text=True, check=True).stdout
    return sorted(n for n in out.split() if not n.startswith("_"))


def test_api_reference_names_every_public_name():
    text = _read("api.md")
    mentioned = set(re.findall(r"`([^`\n]+)`", text))
    # a backticked call or attribute path counts for its first name: `jit(...)`, `gpujit.jit`
    words = set()
    for m in mentioned:
        for part in re.split(r"[^A-Za-z0-9_]+", m):
            words.add(part)
    missing = [n for n in public_names() if n not in mentioned and n not in words]
    assert not missing, "public names missing from docs/api.md: %s" % ", ".join(missing)


def env_vars_read():
    """GPUJIT_* names the sources read: getenv("GPUJIT_X"), os.environ...("GPUJIT_X"), and the
    settings of gpujit.config, read as GPUJIT_<NAME> through its _env()."""
    names = set()
    for sub in ("python", "src", "runtime"):
        for dirpath, _, files in os.walk(os.path.join(SOURCE, sub)):
            for f in files:
                if not f.endswith((".py", ".c", ".h", ".pth")):
                    continue
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                # string literals only: header guards (GPUJIT_RUNTIME_H) are not read
                names.update(re.findall(r"[\"'](GPUJIT_[A-Z0-9_]+)[\"']", text))
                if f == "config.py":
                    names.update("GPUJIT_" + n for n in re.findall(r"_env\(\s*\"([A-Z0-9_]+)\"", text))
    return names


def test_environment_page_names_every_variable():
    names = env_vars_read()
    assert "GPUJIT_TARGET" in names and "GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS" in names
    text = _read("environment.md")
    missing = sorted(n for n in names if not re.search(r"\b%s\b" % n, text))
    assert not missing, "environment variables missing from docs/environment.md: %s" % ", ".join(missing)

"""scripts/sass_compare.py: two PTX snapshots' kernels assembled and their SASS compared.
Needs ptxas and a disassembler (nvdisasm or cuobjdump); skipped without them."""
import json
import os
import subprocess
import sys

import pytest

import gpujit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "sass_compare.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import sass_compare  # noqa: E402

pytestmark = pytest.mark.skipif(not sass_compare.PTXAS or not (sass_compare.NVDISASM or sass_compare.CUOBJDUMP),
                                reason="needs ptxas and nvdisasm or cuobjdump")


def scale(out, x, a):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * a


def scale_add(out, x, a):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * a + 1.0


SIG = "void(float32[::1], float32[::1], float32)"


def ptx(f):
    return gpujit.compile_ptx(f, SIG, cc=(9, 0))[0]


def snapshot(path, entries):
    with open(path, "w") as f:
        json.dump({k: [["sha-" + str(hash(p)), p] for p in ps] for k, ps in entries.items()}, f)


def run(tmp_path, before, after, *extra):
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    snapshot(a, before)
    snapshot(b, after)
    return subprocess.run([sys.executable, SCRIPT, a, b, "-j", "2", *extra], capture_output=True, text=True)


def test_same_ptx_is_not_assembled_and_same(tmp_path):
    p = ptx(scale)
    r = run(tmp_path, {"k": [p]}, {"k": [p]})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PTX identical (not assembled) 1; assembled 0" in r.stdout


def test_ptx_differing_only_in_comments_and_names_gives_identical_sass(tmp_path):
    p = ptx(scale)
    q = p.replace("\n\t", "\n\t// a comment ptxas drops\n\t", 1)
    assert q != p
    r = run(tmp_path, {"k": [p]}, {"k": [q]})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "assembled 1, of which SASS identical 1, SASS differs 0" in r.stdout


def test_different_code_is_reported_with_instruction_counts(tmp_path):
    p, q = ptx(scale), ptx(scale_add)
    r = run(tmp_path, {"k": [p], "same": [p]}, {"k": [q], "same": [p]}, "--all")
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("SASS DIFFERS"))
    na, nb = map(int, line.split(": ")[-1].split()[0:3:2])
    d = str(tmp_path)
    assert (na, nb) == (sass_compare.count(sass_compare.sass(p, d, "x")),
                        sass_compare.count(sass_compare.sass(q, d, "y")))
    assert na > 0 and nb > 0
    assert "assembled 2, of which SASS identical 1, SASS differs 1" in r.stdout


def test_bad_ptx_is_an_error_not_a_match(tmp_path):
    p = ptx(scale)
    r = run(tmp_path, {"k": [p]}, {"k": [p.replace(".entry", ".entry_broken", 1)]})
    assert r.returncode == 1
    assert "ERROR" in r.stdout and "ptxas failed" in r.stdout


def test_sass_of_a_kernel_lists_its_instructions(tmp_path):
    s = sass_compare.sass(ptx(scale), str(tmp_path), "k")
    assert any(x.startswith("FMUL") for x in s), s
    assert any(x.startswith("EXIT") for x in s), s
    assert not any("/*" in x for x in s)  # no addresses or encodings
    assert s == sass_compare.sass(ptx(scale), str(tmp_path), "k2")  # deterministic

"""The on-disk cache and other users of the machine (gpujit/caching.py): its lock files live in
the cache directory, are never followed through a link and are used only when they are this
user's; a cache directory that another user could write is refused with a NumbaWarning (whoever
writes it runs code in the process that loads from it); $GPUJIT_CACHE_DIR that cannot be used
says so, at jit() and in `python -m gpujit info`. The other user is `nobody`, through setpriv:
those tests skip where this process cannot switch users (it is not root, or there is no setpriv)."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import gpujit as gpu
from gpujit import caching
from gpujit.errors import NumbaWarning

OTHER = 65534      # nobody

MODULE = '''
import gpujit as gpu


@gpu.jit(cache=True)
def k(r, x):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = x[i] * 3 + 1
'''

CHILD = '''
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import secmod
    x = np.random.default_rng().integers(-1000, 1000, 50).astype(np.float64)
    r = np.full_like(x, np.nan)
    secmod.k[1, 64](r, x)
print(json.dumps({"ok": bool((r == x * 3 + 1).all()), "path": secmod.k.stats.cache_path,
                  "misses": sum(secmod.k.stats.cache_misses.values()),
                  "warnings": [str(w.message) for w in caught]}))
'''


def as_other(cmd):
    """`cmd` (a shell command) run as the other user; its exit status."""
    return subprocess.run(["setpriv", "--reuid=%d" % OTHER, "--regid=%d" % OTHER, "--clear-groups", "sh", "-c", cmd],
                          capture_output=True, text=True, timeout=60).returncode


@pytest.fixture
def two_users():
    """A directory both users can reach (sticky and world-writable, as /tmp), for the other user's
    files; skips where this process cannot act as another user."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to act as a second user")
    if as_other("true") != 0:
        pytest.skip("setpriv cannot switch to uid %d here" % OTHER)
    shared = tempfile.mkdtemp(prefix="gpujit-two-users-")
    os.chmod(shared, 0o1777)
    try:
        yield shared
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def run_child(src, **env):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)), e.get("PYTHONPATH", "")])
    e.pop("NUMBA_CACHE_DIR", None)
    # the child lists the warnings it got: the GPU's performance warnings are not the cache's
    e.update(NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0", NUMBA_CUDA_WARN_ON_IMPLICIT_COPY="0")
    e.update(env)
    p = subprocess.run([sys.executable, "-c", CHILD, str(src)], capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def cache_files(d):
    return [f for _, _, fs in os.walk(d) for f in fs if f.endswith((".nbi", ".nbc", ".lock"))]


def test_lock_directory_planted_in_tmp_is_not_followed(two_users, tmp_path):
    """The other user makes the lock directory the cache once used in $TMPDIR, with a link in
    the place of the kernel's lock: the first compile must not make the file it names."""
    (tmp_path / "secmod.py").write_text(MODULE)
    cache = tmp_path / "cache"
    name = "secmod.k-5.py%d%d.gpujit" % sys.version_info[:2]      # the kernel's files' names
    index = os.path.join(str(cache), caching._mangled(str(tmp_path)), name + ".nbi")
    old_name = caching._digest(index.encode()).hexdigest()[:32] + ".lock"
    victim = os.path.join(two_users, "made-by-the-victim")
    lockdir = os.path.join(two_users, "gpujit-cache-locks-0")
    assert as_other("mkdir -m 777 %s && ln -s %s %s/%s" % (lockdir, victim, lockdir, old_name)) == 0
    res = run_child(tmp_path, TMPDIR=two_users, GPUJIT_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert res["ok"] and res["misses"] == 1 and res["warnings"] == []
    assert res["path"].startswith(str(cache))
    assert not os.path.lexists(victim)
    # the cache directory holds the kernel's files alone (numba's tests count them); the lock is
    # in this user's private directory
    assert sorted(f for f in cache_files(cache) if not f.endswith(".nbc")) == [name + ".nbi"]
    locks = str(tmp_path / "xdg" / "gpujit" / "locks")
    assert os.listdir(locks) and stat.S_IMODE(os.stat(locks).st_mode) == 0o700


def test_lock_files_of_another_user_are_not_used(two_users):
    """In a cache directory others may write (this user's, so accepted), the other user's file in
    the place of the lock, or a link there, is not used: not waited on, nothing made through it."""
    mine = os.path.join(two_users, "mine")
    os.mkdir(mine)
    os.chmod(mine, 0o777)
    planted, link, victim = (os.path.join(mine, n) for n in ("a.lock", "b.lock", "made-by-the-victim"))
    assert as_other("umask 0; touch %s && ln -s %s %s" % (planted, victim, link)) == 0
    assert os.stat(planted).st_uid == OTHER and os.stat(planted).st_mode & 0o666 == 0o666
    for path in (planted, link):
        with caching._interprocess_lock(path) as held:
            assert held is False
    assert not os.path.lexists(victim)
    # this user's own lock is held, and the other user cannot open it
    own = os.path.join(mine, "c.lock")
    with caching._interprocess_lock(own) as held:
        assert held is True
        st = os.stat(own)
        assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0
        assert as_other("exec 3< %s" % own) != 0


def test_cache_directory_of_another_user_is_refused(two_users, tmp_path):
    (tmp_path / "secmod.py").write_text(MODULE)
    # $GPUJIT_CACHE_DIR made by the other user, writable by all
    theirs = os.path.join(two_users, "theirs")
    assert as_other("mkdir -m 777 %s" % theirs) == 0
    res = run_child(tmp_path, GPUJIT_CACHE_DIR=theirs)
    assert res["ok"] and res["path"] == str(tmp_path / "__pycache__")
    assert len(res["warnings"]) == 1
    assert ("does not use $GPUJIT_CACHE_DIR=%s: it belongs to another user (uid %d" % (theirs, OTHER)
            in res["warnings"][0])
    assert cache_files(theirs) == []
    # in a shared root (sticky, as /tmp), the other user made this source directory's cache first
    leaf = os.path.join(two_users, caching._mangled(str(tmp_path)))
    assert as_other("mkdir -m 777 %s" % leaf) == 0
    res = run_child(tmp_path, GPUJIT_CACHE_DIR=two_users)
    assert res["ok"] and res["path"] == str(tmp_path / "__pycache__")
    assert "does not use $GPUJIT_CACHE_DIR's directory %s: it belongs to another user" % leaf in res["warnings"][0]
    assert cache_files(leaf) == []
    # ... or made it a link to a directory of this user's
    assert as_other("rmdir %s" % leaf) == 0
    target = tmp_path / "target"
    target.mkdir()
    assert as_other("ln -s %s %s" % (target, leaf)) == 0
    res = run_child(tmp_path, GPUJIT_CACHE_DIR=two_users)
    assert res["ok"] and res["path"] == str(tmp_path / "__pycache__")
    assert ("does not use $GPUJIT_CACHE_DIR's directory %s: it is a link that another user (uid %d) made"
            % (leaf, OTHER) in res["warnings"][0])
    assert cache_files(target) == []
    # a root of this user's own: used, and kept to this user
    res = run_child(tmp_path, GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    assert res["ok"] and res["warnings"] == [] and res["path"].startswith(str(tmp_path / "cache"))
    assert as_other("touch %s/x" % res["path"]) != 0


def test_pycache_of_another_user(two_users, tmp_path):
    """__pycache__ beside the source is used when it is this user's or the source file's owner's
    (who may change the code this process runs anyway), and refused when it is another's."""
    src = os.path.join(two_users, "src")
    os.mkdir(src)
    with open(os.path.join(src, "secmod.py"), "w") as f:
        f.write(MODULE)
    pycache = os.path.join(src, "__pycache__")
    os.mkdir(pycache)
    for p in (src, pycache, os.path.join(src, "secmod.py")):
        os.chown(p, OTHER, OTHER)
    xdg = str(tmp_path / "xdg")
    res = run_child(src, XDG_CACHE_HOME=xdg)
    assert res["ok"] and res["path"] == pycache and res["warnings"] == []
    os.chown(os.path.join(src, "secmod.py"), os.getuid(), os.getgid())
    res = run_child(src, XDG_CACHE_HOME=xdg)
    assert res["ok"] and res["path"] == os.path.join(xdg, "gpujit", caching._mangled(src))
    assert res["warnings"] == ["the cache (cache=True) does not use %s: it belongs to another user (uid %d, this "
                               "process's is %d), who could put code in it that this process would run; it uses %s"
                               % (pycache, OTHER, os.getuid(), res["path"])]


def test_cache_dir_that_is_a_file(tmp_path):
    (tmp_path / "secmod.py").write_text(MODULE)
    afile = tmp_path / "afile"
    afile.write_text("")
    res = run_child(tmp_path, GPUJIT_CACHE_DIR=str(afile))
    assert res["ok"] and res["path"] == str(tmp_path / "__pycache__") and res["misses"] == 1
    assert res["warnings"] == ["the cache (cache=True) does not use $GPUJIT_CACHE_DIR=%s: it is not a directory; "
                               "it uses %s" % (afile, tmp_path / "__pycache__")]
    e = dict(os.environ, GPUJIT_CACHE_DIR=str(afile))
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)), e.get("PYTHONPATH", "")])
    e.pop("NUMBA_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-m", "gpujit", "info"], capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("cache directory"))
    assert line.endswith("$GPUJIT_CACHE_DIR=%s is not used: it is not a directory: not usable" % afile), line
    used = next(ln for ln in p.stdout.splitlines() if ln.startswith("cache directory used instead"))
    assert used.endswith("__pycache__ beside each source file (else %s)" % caching._user_cache()), used


def test_read_only_cache_dir(tmp_path, monkeypatch):
    """A read-only directory (as access() reports it, a read-only mount too) is not used, and
    says so; the cache goes where it would without the variable."""
    ro = str(tmp_path / "ro")
    os.mkdir(ro)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p).startswith(ro) else real(p, mode, **kw))
    monkeypatch.setenv("GPUJIT_CACHE_DIR", ro)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert caching._root_problem(ro) == "it is not writable"
    assert caching.cache_location().endswith("$GPUJIT_CACHE_DIR=%s is not used: it is not writable" % ro)
    src = tmp_path / "src"
    src.mkdir()
    (src / "rosec.py").write_text(MODULE)
    with pytest.warns(NumbaWarning, match="does not use [$]GPUJIT_CACHE_DIR=%s: it is not writable; it uses %s"
                                          % (ro, src / "__pycache__")):
        assert caching._cache_dir(str(src / "rosec.py")) == str(src / "__pycache__")
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(tmp_path / "rw"))
    assert caching.cache_location() == "$GPUJIT_CACHE_DIR=%s" % (tmp_path / "rw")
    assert not os.path.exists(tmp_path / "rw")          # info makes nothing


def test_cache_location_follows_the_cache(tmp_path, monkeypatch):
    """info's cache line is the cache's own choice: GPUJIT_CACHE_DIR before NUMBA_CACHE_DIR."""
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    monkeypatch.setenv("GPUJIT_CACHE_DIR", a)
    monkeypatch.setenv("NUMBA_CACHE_DIR", b)
    assert caching.cache_location() == "$GPUJIT_CACHE_DIR=%s" % a
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text("")
    assert caching._cache_dir(str(src / "m.py")).startswith(a + os.sep)
    c = str(tmp_path / "c")
    open(c, "w").close()                 # a file: NUMBA_CACHE_DIR is used, and both say so
    monkeypatch.setenv("GPUJIT_CACHE_DIR", c)
    assert caching.cache_location() == ("$NUMBA_CACHE_DIR=%s; $GPUJIT_CACHE_DIR=%s is not used: it is not a "
                                        "directory" % (b, c))
    with pytest.warns(NumbaWarning, match="does not use [$]GPUJIT_CACHE_DIR=%s: it is not a directory" % c):
        assert caching._cache_dir(str(src / "m.py")).startswith(b + os.sep)

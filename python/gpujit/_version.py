"""gpujit's version, read from the VERSION file beside this module: that file is
the one owner, which meson.build's project() also reads (and so the wheel's
metadata). Importing this module does not import the rest of gpujit."""
import os

with open(os.path.join(os.path.dirname(__file__), "VERSION")) as _f:
    __version__ = _f.read().strip()

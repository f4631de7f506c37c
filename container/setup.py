"""Builds in a scratch folder: setuptools would write build/ and *.egg-info into container/ (pip
builds in place), which is the npm package's folder when built from node_modules. Everything else is
in pyproject.toml."""
import atexit
import shutil
import tempfile

from setuptools import setup

scratch = tempfile.mkdtemp(prefix="shardio-build-")
atexit.register(shutil.rmtree, scratch, True)
setup(options={"build": {"build_base": scratch}, "egg_info": {"egg_base": scratch}})

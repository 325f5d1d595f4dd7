"""lit configuration of MeshIR's FileCheck tests: `lit test/` (or `lit -v test/`).

RUN lines use `meshir-opt`, `filecheck` (the Python FileCheck) and `not` (lit's own).
The tools are looked up next to the Python running lit first (a virtualenv's bin/), then
on PATH, so `/work/venv/bin/lit test/` and an activated venv behave the same.
"""
import os
import shutil
import sys

import lit.formats

config.name = "MeshIR"
# lit's internal shell: lit >= 23 refuses ShTest(True) (external shell) without a force flag.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["python", "fuzz", "Output", "lit.cfg.py"]  # fuzz/corpus: replayed by pytest
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.test_source_root, "Output")  # git-ignored

bin_dir = os.path.dirname(sys.executable)
path = os.pathsep.join([bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
for var in ("HOME", "MESHIR_DEBUG", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


def _tool(name):
    found = shutil.which(name, path=path)
    if found is None:
        lit_config.fatal(f"cannot find '{name}' next to {sys.executable} or on PATH; pip install -e '.[test]'")
    return found


# Replace whole words only, so file names such as `meshir-opt-help.mlir` in %s survive.
for tool in ("meshir-opt", "filecheck"):
    config.substitutions.append((rf"(?<![\w/.-]){tool}(?![\w/.-])", _tool(tool)))
config.substitutions.append(("%python", sys.executable))

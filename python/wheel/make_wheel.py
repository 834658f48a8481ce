#!/usr/bin/env python3
"""Build the wheel of the Python module anec, offline, from a built extension.

    make_wheel.py --module BUILD/python/module/_anec...so --tables tables --version 0.1.0 --out DIR \
                  [--plugin BUILD/.../anec_onnx_backend.so ...]

Stages the package (python/anec with the extension, its type stubs, the tables and, in modules/, the
modules the libraries load on first use; the package uses these by default) and runs Debian's
python3-build without isolation, so no package is downloaded: setuptools and wheel are the
system's. Prints the wheel's path. The wheel links the system's libraries (toml++, libplist,
simdjson, and through its modules libonnx and OpenBLAS): it is for a machine with those installed.
"""
import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

SETUP = '''from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    """The extension is built by CMake: the wheel is platform-specific all the same."""

    def has_ext_modules(self):
        return True


setup(
    name="anec",
    version={version!r},
    description="Apple Neural Engine targets, model checks, estimates and host evaluation",
    packages=["anec"],
    package_data={{"anec": ["_anec*.so", "*.pyi", "py.typed", "tables/**/*", "modules/*.so"]}},
    install_requires=["numpy"],
    python_requires=">={python}",
    distclass=BinaryDistribution,
    zip_safe=False,
)
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", required=True, type=pathlib.Path, help="the built _anec extension")
    parser.add_argument("--tables", required=True, type=pathlib.Path, help="the tables/ folder to carry")
    parser.add_argument("--version", required=True)
    parser.add_argument("--plugin", action="append", default=[], type=pathlib.Path,
                        help="a module to carry (the ONNX reader, the BLAS module); repeatable")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="where the wheel is written")
    args = parser.parse_args()
    source = pathlib.Path(__file__).resolve().parents[1] / "anec"
    with tempfile.TemporaryDirectory(prefix="anec-wheel-") as staging:
        package = pathlib.Path(staging) / "anec"
        shutil.copytree(source, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy2(args.module, package / args.module.name)
        # Without its debug information: a tenth of the size (a RelWithDebInfo build's is 40 MB).
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug", str(package / args.module.name)], check=True)
        shutil.copytree(args.tables, package / "tables")
        for plugin in args.plugin:
            (package / "modules").mkdir(exist_ok=True)
            shutil.copy2(plugin, package / "modules" / plugin.name)
        (package / "py.typed").touch()
        python = "{}.{}".format(*sys.version_info[:2])
        (pathlib.Path(staging) / "setup.py").write_text(SETUP.format(version=args.version, python=python))
        args.out.mkdir(parents=True, exist_ok=True)
        before = set(args.out.glob("anec-*.whl"))
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(args.out),
                        staging], check=True, stdout=subprocess.DEVNULL)
        built = sorted(set(args.out.glob("anec-*.whl")) - before)
    if not built:  # the same wheel built again over an old one: the one this version names
        built = sorted(args.out.glob(f"anec-{args.version}-*.whl"), key=lambda w: w.stat().st_mtime)
    print(built[-1])


if __name__ == "__main__":
    main()

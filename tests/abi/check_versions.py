#!/usr/bin/env python3
"""Every statement of gpuu's version agrees with its one home, gpuu.h's GPUU_VERSION_MAJOR/MINOR/PATCH.

Checked: the library at run time (gpuu_version, gpuu_version_string), the CMake project version, the
CMake package's version file, pkg-config's gpuu.pc, the shared library's file name and SONAME (the
policy gpuu.h states), the ABI manifest, the Python package's metadata (pyproject.toml, read through
scikit-build-core's PEP 517 metadata hook as pip reads it) and, with --python-package, gpuu.__version__.

  check_versions.py SOURCE_DIR BUILD_DIR LIBGPUU PROJECT_VERSION [--python-package]
"""
import argparse
import ctypes
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def header_version(source):
    text = (source / "include" / "gpuu.h").read_text()
    parts = [re.search(rf"^#define GPUU_VERSION_{p} (\d+)$", text, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        sys.exit("include/gpuu.h lacks a GPUU_VERSION_MAJOR/MINOR/PATCH line")
    return tuple(int(m.group(1)) for m in parts)


def one_match(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m:
        raise AssertionError(f"{what}: no version found (pattern {pattern!r})")
    return m.group(1)


def python_metadata_version(source):
    """The Version: line pip would give the package (without building it)."""
    with tempfile.TemporaryDirectory() as out:
        code = ("import sys\nfrom scikit_build_core.build import prepare_metadata_for_build_wheel\n"
                "print(prepare_metadata_for_build_wheel(sys.argv[1]))")
        done = subprocess.run([sys.executable, "-c", code, out], cwd=source, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"scikit-build-core's metadata hook failed:\n{done.stdout}{done.stderr}")
        dist_info = done.stdout.strip().splitlines()[-1]
        return one_match(r"^Version: (\S+)$", (Path(out) / dist_info / "METADATA").read_text(), "METADATA")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("build", type=Path)
    parser.add_argument("libgpuu", type=Path)
    parser.add_argument("project_version")
    parser.add_argument("--python-package", action="store_true")
    args = parser.parse_args()

    major, minor, patch = header_version(args.source)
    want = f"{major}.{minor}.{patch}"
    lib = ctypes.CDLL(str(args.libgpuu))
    lib.gpuu_version.restype = ctypes.c_uint32
    lib.gpuu_version_string.restype = ctypes.c_char_p
    packed = lib.gpuu_version()
    readelf = subprocess.run(["readelf", "-d", str(args.libgpuu)], capture_output=True, text=True, check=True).stdout

    found = {
        "gpuu_version_string()": lib.gpuu_version_string().decode(),
        "gpuu_version()": f"{packed >> 22}.{(packed >> 12) & 0x3FF}.{packed & 0xFFF}",
        "CMake project version": args.project_version,
        "gpuuConfigVersion.cmake": one_match(r'^set\(PACKAGE_VERSION "([^"]+)"\)$',
                                             (args.build / "src/capi/gpuuConfigVersion.cmake").read_text(),
                                             "gpuuConfigVersion.cmake"),
        "gpuu.pc": one_match(r"^Version: (\S+)$", (args.build / "pkgconfig/gpuu.pc").read_text(), "gpuu.pc"),
        "libgpuu file name": one_match(r"^libgpuu\.so\.(\S+)$", args.libgpuu.name, "libgpuu file name"),
        "gpuu_abi.json": json.loads((args.source / "bindings/c/gpuu_abi.json").read_text())["version"],
        "Python package metadata": python_metadata_version(args.source),
    }
    if args.python_package:
        import gpuu
        from gpuu import gpuu_c

        found["gpuu.__version__"] = gpuu.__version__
        found["gpuu.gpuu_c.GPUU_VERSION_*"] = (
            f"{gpuu_c.GPUU_VERSION_MAJOR}.{gpuu_c.GPUU_VERSION_MINOR}.{gpuu_c.GPUU_VERSION_PATCH}")

    # gpuu.h's policy: the SONAME follows the major; before 1.0 it names the 0.2 ABI baseline.
    soname = one_match(r"Library soname: \[(\S+)\]", readelf, "readelf -d")
    want_soname = "libgpuu.so.0.2" if major == 0 else f"libgpuu.so.{major}"

    wrong = [f"  {where}: {value}" for where, value in found.items() if value != want]
    if soname != want_soname:
        wrong.append(f"  SONAME: {soname} (the policy in gpuu.h gives {want_soname})")
    if wrong:
        print(f"gpuu.h says {want}, but:\n" + "\n".join(wrong))
        return 1
    print(f"{want} everywhere ({', '.join(found)}); SONAME {soname}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

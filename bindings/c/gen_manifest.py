#!/usr/bin/env python3
"""The machine-readable ABI of gpuu: parses include/gpuu.h into gpuu_abi.json.

gpuu.h keeps to one regular style (typedef enum / typedef struct, GPUU_API
prototypes, #define constants); this reads that style, not C at large, and
lays structs out for LP64 (x86_64, aarch64 Linux), the ABI FFI bindings see.

  gen_manifest.py [--header H] [--out FILE]     write the manifest (default: bindings/c/gpuu_abi.json)
  gen_manifest.py --check [--header H]          fail with a diff when the committed file is stale
  gen_manifest.py --asserts FILE [--manifest M] C11 _Static_asserts of every size, offset and value
"""
import argparse
import difflib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_HEADER = HERE.parent.parent / "include" / "gpuu.h"
DEFAULT_MANIFEST = HERE / "gpuu_abi.json"

# What the preprocessor sees on an LP64 GCC/Clang build of C code.
DEFINED = {"__GNUC__", "__LP64__", "__x86_64__"}

# Scalar types: (size, alignment, ffi kind). Enums are 32-bit (the header forces it).
SCALARS = {
    "void": (0, 1, "void"),
    "char": (1, 1, "sint8"),
    "int8_t": (1, 1, "sint8"), "uint8_t": (1, 1, "uint8"),
    "int16_t": (2, 2, "sint16"), "uint16_t": (2, 2, "uint16"),
    "int32_t": (4, 4, "sint32"), "uint32_t": (4, 4, "uint32"),
    "int64_t": (8, 8, "sint64"), "uint64_t": (8, 8, "uint64"),
    "int": (4, 4, "sint32"), "unsigned": (4, 4, "uint32"),
    "size_t": (8, 8, "uint64"),
    "float": (4, 4, "float"), "double": (8, 8, "double"),
}
POINTER = (8, 8, "pointer")


class HeaderError(Exception):
    pass


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def preprocess(text):
    """Keeps the lines of taken #if branches; returns (code, object-like and function-like macros)."""
    lines = strip_comments(text).replace("\\\n", " ").split("\n")
    macros, functions, out, stack = {}, {}, [], []  # stack: (taking now, some branch taken)

    def cond(expr):
        expr = re.sub(r"defined\s*\(?\s*(\w+)\s*\)?", lambda m: "1" if m.group(1) in DEFINED | set(macros) else "0", expr)
        expr = re.sub(r"\b[A-Za-z_]\w*\b", "0", expr).replace("&&", " and ").replace("||", " or ")
        expr = re.sub(r"!(?!=)", " not ", expr)
        return bool(eval(expr, {"__builtins__": {}}))

    for line in lines:
        s = line.strip()
        taking = all(t for t, _ in stack)
        m = re.match(r"#\s*(\w+)\s*(.*)", s)
        if not m:
            if taking:
                out.append(line)
            continue
        directive, rest = m.groups()
        if directive in ("if", "ifdef", "ifndef"):
            if directive == "ifdef":
                value = rest in DEFINED or rest in macros
            elif directive == "ifndef":
                value = not (rest in DEFINED or rest in macros)
            else:
                value = cond(rest)
            stack.append((value, value))
        elif directive == "elif":
            _, done = stack.pop()
            value = not done and cond(rest)
            stack.append((value, done or value))
        elif directive == "else":
            _, done = stack.pop()
            stack.append((not done, True))
        elif directive == "endif":
            stack.pop()
        elif directive == "define" and taking:
            fm = re.match(r"(\w+)\(([^)]*)\)\s*(.*)", rest)
            if fm:
                functions[fm.group(1)] = ([p.strip() for p in fm.group(2).split(",")], fm.group(3))
            else:
                name, _, value = rest.partition(" ")
                macros[name] = value.strip()
    return "\n".join(out), macros, functions


def expand(text, functions):
    """Expands the header's function-like macros (one level per pass, until none is left)."""
    for _ in range(8):
        changed = False
        for name, (params, body) in functions.items():
            def sub(m, params=params, body=body):
                args = [a.strip() for a in m.group(1).split(",")]
                result = body
                for p, a in zip(params, args):
                    result = re.sub(r"##\s*\b%s\b|\b%s\b\s*##" % (p, p), a, result)
                    result = re.sub(r"\b%s\b" % p, a, result)
                return result
            new = re.sub(r"\b%s\s*\(((?:[^()]|\([^()]*\))*)\)" % name, sub, text)
            changed |= new != text
            text = new
        if not changed:
            return text
    raise HeaderError("macro expansion does not end")


def eval_int(expr, names):
    expr = re.sub(r"\(\s*u?int\d+_t\s*\)", "", expr)  # casts
    expr = re.sub(r"\b(0x[0-9A-Fa-f]+|\d+)[uUlL]*\b", r"\1", expr)
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: "(%s)" % names[m.group(0)] if m.group(0) in names else m.group(0), expr)
    return int(eval(expr, {"__builtins__": {}}))


class Abi:
    def __init__(self, header_text):
        code, self.macro_text, self.function_macros = preprocess(header_text)
        code = expand(code, self.function_macros)
        self.constants, self.enums, self.structs, self.handles = {}, {}, {}, []
        self.aliases, self.callbacks, self.functions = {}, {}, []
        self._read_constants()
        self._read_declarations(code)

    # ---- constants --------------------------------------------------------
    def _read_constants(self):
        ints = {}
        for name, value in self.macro_text.items():
            if not name.startswith("GPUU_") or name in ("GPUU_API", "GPUU_H_") or not value:
                continue
            value = expand(value, self.function_macros)
            if re.fullmatch(r'"[^"]*"', value):
                self.constants[name] = value[1:-1]
                continue
            try:
                ints[name] = eval_int(value, {**ints, **{k: str(v) for k, v in ints.items()}})
            except (NameError, SyntaxError, TypeError):
                continue  # a type or attribute macro, not a constant
            self.constants[name] = ints[name]
        self.int_names = {k: str(v) for k, v in ints.items()}

    # ---- types ------------------------------------------------------------
    def type_info(self, spelling):
        """(size, alignment, ffi kind) of a type as spelled in the header."""
        t = spelling.replace("const", " ").strip()
        if t.endswith("*"):
            return POINTER
        t = re.sub(r"^(struct|enum)\s+", "", t).strip()
        if t in SCALARS:
            return SCALARS[t]
        if t in self.enums:
            return (4, 4, "sint32")
        if t in self.aliases:
            return self.type_info(self.aliases[t])
        if t in self.callbacks:
            return POINTER
        if t in self.structs:
            s = self.structs[t]
            return (s["size"], s["align"], "struct")
        raise HeaderError("unknown type '%s'" % spelling)

    @staticmethod
    def normalize(spelling):
        t = re.sub(r"\s+", " ", spelling).strip()
        t = re.sub(r"\s*\*\s*", "*", t)
        return re.sub(r"\*(?=\w)", "* ", t)

    def declarator(self, decl):
        """A parameter or field: name, type, and array length or function-pointer signature."""
        decl = " ".join(decl.split())
        fp = re.fullmatch(r"(.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", decl)
        if fp:
            ret, name, params = fp.groups()
            return {"name": name, "type": "function pointer", "returns": self.normalize(ret),
                    "params": self.params(params)}
        arr = re.fullmatch(r"(.+?)(\w+)\s*\[(.+)\]", decl)
        if arr:
            return {"name": arr.group(2), "type": self.normalize(arr.group(1)),
                    "count": eval_int(arr.group(3), self.int_names)}
        m = re.fullmatch(r"(.+?)(\w+)", decl)
        if not m:
            raise HeaderError("cannot read declaration '%s'" % decl)
        return {"name": m.group(2), "type": self.normalize(m.group(1))}

    def params(self, text):
        text = text.strip()
        if text in ("", "void"):
            return []
        parts, depth, cur = [], 0, ""
        for ch in text:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "("
            depth -= ch == ")"
            cur += ch
        parts.append(cur)
        out = []
        for p in parts:
            d = self.declarator(p)
            d["ffi"] = "pointer" if d["type"] == "function pointer" else self.type_info(d["type"])[2]
            out.append(d)
        return out

    def layout(self, name, body):
        fields, offset, align = [], 0, 1
        for decl in [d for d in body.split(";") if d.strip()]:
            f = self.declarator(decl)
            if f["type"] == "function pointer":
                size, falign, ffi = POINTER
            else:
                size, falign, ffi = self.type_info(f["type"])
            count = f.get("count", 1)
            offset = (offset + falign - 1) // falign * falign
            f.update(offset=offset, size=size * count, ffi=ffi)
            fields.append(f)
            offset += size * count
            align = max(align, falign)
        size = (offset + align - 1) // align * align
        self.structs[name] = {"size": size, "align": align, "fields": fields}

    def _read_declarations(self, code):
        for stmt in [s.strip() for s in re.split(r";(?![^{]*\})", code) if s.strip()]:
            stmt = " ".join(stmt.split())
            stmt = re.sub(r'^extern "C" \{\s*|^\}\s*', "", stmt)
            if not stmt:
                continue
            if stmt.startswith("GPUU_API "):
                m = re.fullmatch(r"GPUU_API (.+?)(\w+)\s*\((.*)\)", stmt)
                if not m:
                    raise HeaderError("cannot read prototype '%s'" % stmt)
                ret = self.normalize(m.group(1))
                self.functions.append({"name": m.group(2), "returns": ret, "ffi": self.type_info(ret)[2],
                                       "params": self.params(m.group(3))})
            elif m := re.fullmatch(r"typedef enum (\w+) \{(.*)\} (\w+)", stmt):
                values, last = {}, -1
                for item in [i.strip() for i in m.group(2).split(",") if i.strip()]:
                    key, _, value = item.partition("=")
                    last = eval_int(value, {**self.int_names, **{k: str(v) for k, v in values.items()}}) \
                        if value.strip() else last + 1
                    values[key.strip()] = last
                self.enums[m.group(3)] = values
            elif m := re.fullmatch(r"typedef struct (\w+) \{(.*)\} (\w+)", stmt):
                self.layout(m.group(3), m.group(2))
            elif m := re.fullmatch(r"typedef struct (\w+) (\w+)", stmt):
                self.handles.append(m.group(2))
            elif m := re.fullmatch(r"typedef (.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", stmt):
                ret = self.normalize(m.group(1))
                self.callbacks[m.group(2)] = {"returns": ret, "params": self.params(m.group(3))}
            elif m := re.fullmatch(r"typedef (.+?)(\w+)", stmt):
                self.aliases[m.group(2)] = self.normalize(m.group(1))
            else:
                raise HeaderError("cannot read '%s'" % stmt[:120])

    def manifest(self):
        return {
            "comment": "Generated from include/gpuu.h by bindings/c/gen_manifest.py; do not edit. Layouts are LP64.",
            "version": "%d.%d.%d" % tuple(self.constants["GPUU_VERSION_" + p] for p in ("MAJOR", "MINOR", "PATCH")),
            "constants": self.constants,
            "enums": self.enums,
            "handles": sorted(self.handles),
            "aliases": self.aliases,
            "callbacks": self.callbacks,
            "structs": self.structs,
            "functions": sorted(self.functions, key=lambda f: f["name"]),
        }


def render(manifest):
    return json.dumps(manifest, indent=1) + "\n"


def static_asserts(manifest):
    """C11 checks that the compiler agrees with the manifest: sizes, offsets, values, prototypes."""
    out = ["/* Generated by bindings/c/gen_manifest.py --asserts from gpuu_abi.json. */",
           "#include <stddef.h>", '#include "gpuu.h"', ""]
    check = lambda cond, why: out.append('_Static_assert(%s, "%s");' % (cond, why))
    for name, s in manifest["structs"].items():
        check("sizeof(%s) == %d" % (name, s["size"]), name + " size")
        check("_Alignof(%s) == %d" % (name, s["align"]), name + " alignment")
        for f in s["fields"]:
            check("offsetof(%s, %s) == %d" % (name, f["name"], f["offset"]), name + "." + f["name"] + " offset")
            check("sizeof(((%s*)0)->%s) == %d" % (name, f["name"], f["size"]), name + "." + f["name"] + " size")
    for name, values in manifest["enums"].items():
        check("sizeof(%s) == 4" % name, name + " is 32-bit")
        for key, value in values.items():
            check("%s == %d" % (key, value), key)
    for name, value in manifest["constants"].items():
        if isinstance(value, str):
            check("sizeof(%s) == %d" % (name, len(value.encode()) + 1), name + " length")
        else:
            check("%s == %dULL" % (name, value), name)
    for fn in manifest["functions"]:
        params = ", ".join(p["type"] if p["type"] != "function pointer" else
                           "%s (*)(%s)" % (p["returns"], ", ".join(q["type"] for q in p["params"]) or "void")
                           for p in fn["params"]) or "void"
        check("__builtin_types_compatible_p(__typeof__(&%s), %s (*)(%s))" % (fn["name"], fn["returns"], params),
              fn["name"] + " prototype")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", type=Path, default=DEFAULT_HEADER)
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--asserts", type=Path)
    args = ap.parse_args()
    if args.asserts:
        args.asserts.write_text(static_asserts(json.loads(args.manifest.read_text())))
        return 0
    try:
        text = render(Abi(args.header.read_text()).manifest())
    except HeaderError as e:
        print("gen_manifest: %s: %s" % (args.header, e), file=sys.stderr)
        return 1
    if args.check:
        committed = args.manifest.read_text() if args.manifest.exists() else ""
        if committed == text:
            print("OK: %s matches %s" % (args.manifest, args.header))
            return 0
        sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), text.splitlines(True),
                                                   str(args.manifest), "generated from " + str(args.header)))
        print("\n%s is stale: run bindings/c/gen_manifest.py" % args.manifest)
        return 1
    (args.out or args.manifest).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

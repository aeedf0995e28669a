#!/usr/bin/python3
"""Generates gpuu's TOSA tables from the SPIR-V grammar data.

Reads extinst.tosa.001000.1.grammar.json (every TOSA operator: name, opcode,
operand names, order and quantifiers) and arm-graph-tensor-subset.json (the
SPV_ARM_graph / SPV_ARM_tensors opcodes and capabilities) and writes
  tosa_grammar.h        enum TosaOp, grammar version, ARM opcodes/capabilities
  tosa_grammar_ops.inc  one TosaOpInfo row per operator (operand roles)
next to this script. The grammar lists every operand as a plain IdRef; what
kind of constant an attribute operand must be (tosa-ops.md, "How to read the
operand column") is the ROLES table below, keyed by operand name. The script
fails on an operand name it does not know, so a grammar update cannot slip
through half-classified.

Usage: gen_tosa_tables.py [--grammar-dir DIR] [--check]
  --check: compare with the committed files instead of writing (exit 1 if stale).
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GRAMMAR_DIR = "/work/shared/reference/grammar"
TOSA_GRAMMAR = "extinst.tosa.001000.1.grammar.json"
ARM_GRAMMAR = "arm-graph-tensor-subset.json"

# Enumerated attribute values (tosa-ops.md, "Enumerated attribute values";
# the TOSA grammar file carries no operand_kinds). Values start at 1.
ENUMS = {
    "AccType": [("INT32", 1), ("FP16", 2), ("FP32", 3), ("INT48", 4)],
    "NanPropagationMode": [("PROPAGATE", 1), ("IGNORE", 2)],
    "RoundingMode": [("SINGLE_ROUND", 1), ("INEXACT_ROUND", 2), ("DOUBLE_ROUND", 3)],
    "ResizeMode": [("NEAREST_NEIGHBOR", 1), ("BILINEAR", 2)],
}

# Operand name -> role. Anything not listed here is refused; tensor inputs are
# listed explicitly for the same reason.
#  ("u32",)                       const u32
#  ("enum", Enum)                 const u32 holding a value of Enum
#  ("bool",)                      OpConstantTrue/False
#  ("shape", length)              rank-1 const tensor<i32>; length: int, or
#                                 ("rank", operand) / ("2rank", operand) / ("rank", "result")
#  ("tensor", type, length)       rank-1 const tensor; type: ("of", operand|"result"),
#                                 ("fixed", "I8"), ("i16_or_i32",); length int or "any"
#  ("scalar", type)               scalar constant of an element type
#  ("input",)                     any tensor value
SHAPE_2 = ("shape", 2)
ROLES = {
    "axis": ("u32",),
    "nan_mode": ("enum", "NanPropagationMode"),
    "acc_type": ("enum", "AccType"),
    "rounding_mode": ("enum", "RoundingMode"),
    "mode": ("enum", "ResizeMode"),
    "local_bound": ("bool",),
    "inverse": ("bool",),
    "round": ("bool",),
    "scale32": ("bool",),
    "per_channel": ("bool",),
    "input_unsigned": ("bool",),
    "output_unsigned": ("bool",),
    "kernel": SHAPE_2,
    "stride": SHAPE_2,
    "dilation": SHAPE_2,
    "pad": ("shape", 4),
    "out_pad": ("shape", 4),
    "scale": ("shape", 4),
    "offset": SHAPE_2,
    "border": SHAPE_2,
    "perms": ("shape", ("rank", "input1")),
    "start": ("shape", ("rank", "input1")),
    "size": ("shape", ("rank", "input1")),
    "multiples": ("shape", ("rank", "input1")),
    "padding": ("shape", ("2rank", "input1")),
    "shape": ("shape", ("rank", "result")),
    "input_zp": ("tensor", ("of", "input"), 1),
    "output_zp": ("tensor", ("of", "result"), 1),
    "weight_zp": ("tensor", ("of", "weight"), 1),
    "A_zp": ("tensor", ("of", "A"), 1),
    "B_zp": ("tensor", ("of", "B"), 1),
    "input1_zp": ("tensor", ("of", "input1"), 1),
    "pad_const": ("tensor", ("of", "input1"), 1),
    "table": ("tensor", ("of", "input1"), "any"),
    "shift": ("tensor", ("fixed", "I8"), 1),
    "multiplier": ("tensor", ("i16_or_i32",), "any"),
    "min_val": ("scalar", ("of", "input")),
    "max_val": ("scalar", ("of", "input")),
}
for name in ["input", "input1", "input2", "input3", "weight", "bias", "A", "B", "values", "values_in", "indices",
             "input_real", "input_imag"]:
    ROLES[name] = ("input",)

# Per-operator exceptions to ROLES (tosa-ops.md operand column).
OVERRIDES = {
    ("CONV3D", "pad"): ("shape", 6),
    ("CONV3D", "stride"): ("shape", 3),
    ("CONV3D", "dilation"): ("shape", 3),
    ("RESCALE", "shift"): ("tensor", ("fixed", "I8"), "any"),  # one per channel
}
# Operators returning an OpTypeStruct of two tensors (tosa-ops.md result column).
RESULT_COUNTS = {"FFT2D": 2, "RFFT2D": 2}


def camel(name):
    """AVG_POOL2D -> AvgPool2d."""
    return "".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))



def operand_row(op, operands, index):
    operand = operands[index]
    name = operand["name"]
    if operand.get("kind") != "IdRef":
        sys.exit(f"{op}: operand {name} has kind {operand.get('kind')}, expected IdRef")
    role = OVERRIDES.get((op, name), ROLES.get(name))
    if role is None:
        sys.exit(f"{op}: operand '{name}' is not classified in ROLES; add it from tosa-ops.md")
    quantifier = operand.get("quantifier", "")
    names = [o["name"] for o in operands]

    def operand_index(ref):
        if ref == "result":
            return -1
        if ref not in names:
            sys.exit(f"{op}: operand {name} refers to '{ref}', which {op} does not have")
        return names.index(ref)

    fields = {
        "role": "kInput",
        "enum_kind": "kNone",
        "length_rule": "kNone",
        "length": 0,
        "type_rule": "kNone",
        "fixed_type": "kBool",
        "ref": 0,
    }
    kind = role[0]
    if kind == "input":
        fields["role"] = "kInputList" if quantifier == "*" else "kInput"
    elif quantifier:
        sys.exit(f"{op}: attribute operand {name} has quantifier '{quantifier}'")
    elif kind == "u32":
        fields["role"] = "kAttrU32"
    elif kind == "enum":
        fields["role"] = "kAttrEnum"
        fields["enum_kind"] = "k" + role[1]
    elif kind == "bool":
        fields["role"] = "kAttrBool"
    elif kind == "shape":
        fields["role"] = "kAttrShape"
        length = role[1]
        if isinstance(length, int):
            fields["length_rule"], fields["length"] = "kFixed", length
        else:
            rule, ref = length
            fields["ref"] = operand_index(ref)
            fields["length_rule"] = {"rank": "kRankOf", "2rank": "kTwiceRankOf"}[rule]
            if ref == "result":
                fields["length_rule"] = "kRankOfResult"
                fields["ref"] = 0
    elif kind in ("tensor", "scalar"):
        fields["role"] = "kAttrTensor" if kind == "tensor" else "kAttrScalar"
        type_rule = role[1]
        if type_rule[0] == "of":
            if type_rule[1] == "result":
                fields["type_rule"] = "kOfResult"
            else:
                fields["type_rule"], fields["ref"] = "kOfOperand", operand_index(type_rule[1])
        elif type_rule[0] == "fixed":
            fields["type_rule"], fields["fixed_type"] = "kFixed", "k" + camel(type_rule[1])
        else:
            fields["type_rule"] = "kI16OrI32"
        if kind == "tensor":
            length = role[2]
            if length == "any":
                fields["length_rule"] = "kAny"
            else:
                fields["length_rule"], fields["length"] = "kFixed", length
    else:
        sys.exit(f"bad role {role}")
    return (
        f'{{"{name}", TosaOperandRole::{fields["role"]}, TosaEnumKind::{fields["enum_kind"]}, '
        f'TosaLengthRule::{fields["length_rule"]}, {fields["length"]}, TosaTypeRule::{fields["type_rule"]}, '
        f'TosaElementType::{fields["fixed_type"]}, {fields["ref"]}}}'
    )


def generate(grammar_dir):
    with open(os.path.join(grammar_dir, TOSA_GRAMMAR)) as f:
        tosa = json.load(f)
    with open(os.path.join(grammar_dir, ARM_GRAMMAR)) as f:
        arm = json.load(f)
    # "extinst.tosa.001000.1.grammar.json" -> import name "TOSA.001000.1".
    set_name = TOSA_GRAMMAR[len("extinst."):-len(".grammar.json")]
    set_name = set_name.split(".", 1)[0].upper() + "." + set_name.split(".", 1)[1]

    instructions = sorted(tosa["instructions"], key=lambda i: i["opcode"])
    opcodes = [i["opcode"] for i in instructions]
    if opcodes != list(range(len(instructions))):
        sys.exit("TOSA opcodes are not dense from 0; TosaOp indexing assumes they are")

    banner = ("// GENERATED by src/vgf/gen_tosa_tables.py from the SPIR-V grammar data\n"
              f"// ({TOSA_GRAMMAR}, {ARM_GRAMMAR}). Do not edit; rerun the script.\n")

    h = [banner.replace("// GENERATED", "// TOSA operators and SPV_ARM_graph/tensors numbers, GENERATED", 1),
         "#pragma once\n\n#include <cstdint>\n\nnamespace gpuu::vgf {\n"]
    h.append(f'// The OpExtInstImport name of the instruction set.\ninline constexpr const char kTosaInstructionSet[] = "{set_name}";')
    h.append(f"inline constexpr uint32_t kTosaGrammarVersion = {tosa['version']};")
    h.append(f"inline constexpr uint32_t kTosaGrammarRevision = {tosa['revision']};\n")
    h.append("// One enumerator per TOSA operator; the value is the OpExtInst instruction number.")
    h.append("enum class TosaOp : uint32_t {")
    for i in instructions:
        h.append(f"  k{camel(i['opname'])} = {i['opcode']},")
    h.append("};")
    h.append(f"inline constexpr uint32_t kTosaOpCount = {len(instructions)};\n")
    h.append("// Enumerated attribute values (const u32 enum operands). One enum and its bounds\n"
             "// per kind, alike by design: each is written from ENUMS in the script, their one home.")
    for enum, values in ENUMS.items():
        h.append(f"enum class Tosa{enum} : uint32_t {{")
        for name, value in values:
            h.append(f"  k{camel(name)} = {value},")
        h.append("};")
        h.append(f"inline constexpr uint32_t kTosa{enum}Min = {min(v for _, v in values)};")
        h.append(f"inline constexpr uint32_t kTosa{enum}Max = {max(v for _, v in values)};")
    h.append("\n// SPV_ARM_tensors / SPV_ARM_graph opcodes and capabilities.")
    for inst in sorted(arm["instructions"], key=lambda i: i["opcode"]):
        h.append(f"inline constexpr uint16_t k{inst['opname']} = {inst['opcode']};")
    for kind in arm["operand_kinds"]:
        if kind["kind"] != "Capability":
            continue
        for e in kind["enumerants"]:
            h.append(f"inline constexpr uint32_t kCapability{e['enumerant']} = {e['value']};")
    h.append("\n}  // namespace gpuu::vgf\n")

    inc = [banner, "// One row per TOSA operator, in opcode order: {op, name, opcode, operands, operand count, results}.",
           "// Operand rows: {name, role, enum, length rule, length, type rule, fixed type, referenced operand}."]
    for i in instructions:
        operands = i.get("operands", [])
        rows = [operand_row(i["opname"], operands, k) for k in range(len(operands))]
        ident = f"kOperands{camel(i['opname'])}"
        inc.append(f"constexpr TosaOperandInfo {ident}[] = {{")
        for r in rows:
            inc.append(f"    {r},")
        inc.append("};")
    inc.append("constexpr TosaOpInfo kTosaOpTable[] = {")
    for i in instructions:
        n = len(i.get("operands", []))
        results = RESULT_COUNTS.get(i["opname"], 1)
        inc.append(f'    {{TosaOp::k{camel(i["opname"])}, "{i["opname"]}", {i["opcode"]}, '
                   f'kOperands{camel(i["opname"])}, {n}, {results}}},')
    inc.append("};\n")
    return {"tosa_grammar.h": "\n".join(h), "tosa_grammar_ops.inc": "\n".join(inc)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grammar-dir", default=DEFAULT_GRAMMAR_DIR)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    files = generate(args.grammar_dir)
    stale = []
    for name, text in files.items():
        path = os.path.join(HERE, name)
        if args.check:
            try:
                with open(path) as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("stale generated files (rerun src/vgf/gen_tosa_tables.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Writes the generated proto fixtures of testdata/proto/ (run by hand; the
output is checked in, CI does not run this). The .pbtxt fixtures other than
bad/deep.pbtxt, the .inputs and the .golden files are written by hand.

The modules are built with Google's own protobuf library from hloi's
proto/*.proto, field by field the way XLA writes them: every array shape
with a layout, scalars with an empty `layout {}`, packed repeated fields,
empty `metadata {}` and `frontend_attributes {}` on instructions, program
shapes, large 64-bit ids, and XLA's `sharding` spliced in after the other
fields as raw bytes (as an unknown field would come). The malformed files are made from the good ones
by cutting, patching or nesting bytes directly.

    /usr/bin/python3 tests/proto/gen_fixtures.py   (needs python3-protobuf
                                                    and protoc)
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "testdata", "proto")

gen = tempfile.mkdtemp()
subprocess.run(["protoc", "-I", os.path.join(ROOT, "proto"), "--python_out", gen,
                "xla_data.proto", "hlo.proto"], check=True)
sys.path.insert(0, gen)
import hlo_pb2  # noqa: E402
import xla_data_pb2 as xd  # noqa: E402

F32, S32, PRED, F16, BF16, U8, TUPLE = (xd.F32, xd.S32, xd.PRED, xd.F16, xd.BF16,
                                        xd.U8, xd.TUPLE)


def shape(msg, etype, dims, m2m=None):
    """Fills a ShapeProto; m2m None means the default (descending) layout."""
    msg.element_type = etype
    msg.dimensions.extend(dims)
    if m2m is None:
        m2m = list(range(len(dims) - 1, -1, -1))
    msg.layout.SetInParent()           # scalars get `layout {}`
    msg.layout.minor_to_major.extend(m2m)
    return msg


class Comp:
    """Builds a computation the way XLA's ToProto does."""

    def __init__(self, module, name, comp_id):
        self.c = module.computations.add()
        self.c.name = name
        self.c.id = comp_id
        self.next = (comp_id << 32) + 1     # XLA-like 64-bit unique ids
        self.params = []

    def instr(self, name, opcode, etype, dims, m2m=None, operands=(), metadata=None):
        i = self.c.instructions.add()
        i.name = name
        i.opcode = opcode
        shape(i.shape, etype, dims, m2m)
        i.id = self.next
        self.next += 1
        i.operand_ids.extend(o.id for o in operands)
        i.metadata.SetInParent()
        if metadata:
            i.metadata.op_type, i.metadata.op_name = metadata
        i.frontend_attributes.SetInParent()
        return i

    def param(self, name, number, etype, dims):
        i = self.instr(name, "parameter", etype, dims)
        i.parameter_number = number
        self.params.append(i)
        return i

    def finish(self, root):
        self.c.root_id = root.id
        ps = self.c.program_shape
        for p in self.params:
            ps.parameters.add().CopyFrom(p.shape)
            ps.parameter_names.append(p.name)
        ps.result.CopyFrom(root.shape)
        return self.c


def module(name):
    m = hlo_pb2.HloModuleProto()
    m.name = name
    m.id = 7
    return m


def set_entry(m, c):
    m.entry_computation_name = c.name
    m.entry_computation_id = c.id
    m.host_program_shape.CopyFrom(c.program_shape)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return varint((num << 3) | 2) + varint(len(payload)) + payload


# XLA's OpSharding{type: REPLICATED} as field 40 of an instruction, as raw
# bytes: a field hloi's IR does not model (the loader keeps it aside).
SHARDING = field(40, bytes([0x08, 0x00]))


def xla_style():
    """f32[2,3] (p0 + col-major constant) * broadcast(2)."""
    m = module("jit_f")
    c = Comp(m, "main.8", 3)
    p0 = c.param("Arg_0.1", 0, F32, [2, 3])
    p0.MergeFromString(SHARDING)
    k = c.instr("constant.2", "constant", F32, [2, 3], m2m=[0, 1])
    shape(k.literal.shape, F32, [2, 3], m2m=[0, 1])
    k.literal.f32s.extend([1, 4, 2, 5, 3, 6])       # physical (column-major) order
    add = c.instr("add.3", "add", F32, [2, 3], operands=[p0, k],
                  metadata=("add", "jit(f)/jit(main)/add"))
    two = c.instr("constant.4", "constant", F32, [])
    shape(two.literal.shape, F32, [])
    two.literal.f32s.append(2)
    b = c.instr("broadcast.5", "broadcast", F32, [2, 3], operands=[two])
    mul = c.instr("multiply.6", "multiply", F32, [2, 3], operands=[add, b],
                  metadata=("mul", "jit(f)/jit(main)/mul"))
    set_entry(m, c.finish(mul))
    return m


def snapshot():
    """s32[3] < s32[3], with the arguments it ran on and its result."""
    m = module("jit_lt")
    c = Comp(m, "main.4", 1)
    a = c.param("Arg_0.1", 0, S32, [3])
    b = c.param("Arg_1.2", 1, S32, [3])
    lt = c.instr("compare.3", "compare", PRED, [3], operands=[a, b])
    lt.comparison_direction = "LT"
    lt.comparison_type = "SIGNED"
    set_entry(m, c.finish(lt))
    s = hlo_pb2.HloSnapshot()
    s.hlo.hlo_module.CopyFrom(m)
    for vals in ([1, 5, 3], [2, 5, 1]):
        arg = s.arguments.add()
        shape(arg.shape, S32, [3])
        arg.s32s.extend(vals)
    shape(s.result.shape, PRED, [3])
    s.result.preds.extend([True, False, False])
    s.execution_platform = "Host"
    return s


def hlo_proto():
    """An HloProto around f16 arithmetic: little-endian `bytes` literals."""
    m = module("half")
    c = Comp(m, "main.3", 1)
    p = c.param("p.1", 0, F16, [2])
    k = c.instr("constant.2", "constant", F16, [2])
    shape(k.literal.shape, F16, [2])
    k.literal.f16s = struct.pack("<2e", 0.5, -2.0)
    add = c.instr("add.3", "add", F16, [2], operands=[p, k])
    set_entry(m, c.finish(add))
    h = hlo_pb2.HloProto()
    h.hlo_module.CopyFrom(m)
    return h


def deep_tuple(levels):
    """A module whose parameter's shape nests `levels` tuple_shapes."""
    inner = bytes([0x10, F32])                       # ShapeProto{element_type: F32}
    # Sizes from the inside out, then the prefixes from the outside in.
    sizes = [len(inner)]
    for _ in range(levels):
        n = sizes[-1]
        sizes.append(1 + len(varint(n)) + n + 2)     # tag, length, body, element_type TUPLE
    parts = []
    for i in range(levels, 0, -1):
        body = sizes[i - 1]
        parts.append(bytes([0x10, TUPLE]) + bytes([0x22]) + varint(body))
    shape_bytes = b"".join(parts) + inner
    instr = (field(1, b"p") + field(2, b"parameter") + field(3, shape_bytes) +
             varint((35 << 3) | 0) + varint(1))
    comp = field(1, b"main") + field(2, instr) + varint((5 << 3) | 0) + varint(1) + \
        varint((6 << 3) | 0) + varint(1)
    return field(1, b"deep") + field(2, b"main") + field(3, comp) + varint(6 << 3) + varint(1)


def patched(make, fix):
    m = make()
    fix(m)
    return m.SerializeToString()


def main():
    os.makedirs(OUT, exist_ok=True)
    good = xla_style().SerializeToString()
    write("xla_style.pb", good)
    write("snapshot.pb", snapshot().SerializeToString())
    write("hlo_proto.pb", hlo_proto().SerializeToString())

    bad = os.path.join(OUT, "bad")
    os.makedirs(bad, exist_ok=True)

    def w(name, data):
        write(os.path.join("bad", name), data)

    w("truncated.pb", good[:len(good) // 2])
    w("garbage.pb", bytes((i * 37 + 11) & 0xff for i in range(64)) + b"\xff\xff\xff")
    w("deep_tuple.pb", deep_tuple(100000))

    def unknown_operand(m):
        m.computations[0].instructions[2].operand_ids[1] = 999
    w("unknown_operand.pb", patched(xla_style, unknown_operand))

    def use_before_def(m):
        ins = m.computations[0].instructions
        ins[2].operand_ids[1] = ins[4].id
    w("use_before_def.pb", patched(xla_style, use_before_def))

    def wrong_length(m):
        del m.computations[0].instructions[1].literal.f32s[5]
    w("wrong_literal_length.pb", patched(xla_style, wrong_length))

    def negative_dim(m):
        m.computations[0].instructions[0].shape.dimensions[0] = -2
    w("negative_dim.pb", patched(xla_style, negative_dim))

    def bad_enum(m):
        m.computations[0].instructions[2].shape.element_type = 99
    w("bad_enum.pb", patched(xla_style, bad_enum))

    def duplicate_id(m):
        ins = m.computations[0].instructions
        ins[4].id = ins[3].id
    w("duplicate_id.pb", patched(xla_style, duplicate_id))

    def no_root(m):
        m.computations[0].root_id = 12345
    w("missing_root.pb", patched(xla_style, no_root))

    def bad_opcode(m):
        m.computations[0].instructions[5].opcode = "mutliply"
    w("bad_opcode.pb", patched(xla_style, bad_opcode))

    def no_entry(m):
        m.entry_computation_id = 9
        m.entry_computation_name = "nope"
    w("missing_entry.pb", patched(xla_style, no_entry))

    # A name with bytes that are not UTF-8: patched in the serialized bytes,
    # since Google's library refuses to write it.
    w("bad_utf8_name.pb", good.replace(b"add.3", b"add\xff3"))

    # Text nested deeper than hloi reads (one level per line, so that the
    # diagnostic's source line stays short).
    n = 150
    deep = ("# 150 nested tuple shapes: deeper than the 100 levels hloi reads.\n"
            "computations {\n  name: \"main\"\n  instructions {\n    name: \"p\"\n    shape {\n" +
            "      element_type: TUPLE tuple_shapes {\n" * n + "      element_type: F32\n" +
            "      }\n" * n + "    }\n  }\n}\n")
    with open(os.path.join(bad, "deep.pbtxt"), "w") as f:
        f.write(deep)


if __name__ == "__main__":
    main()

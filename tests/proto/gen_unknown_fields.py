#!/usr/bin/python3
"""Writes testdata/proto/unknown_fields.pb (run by hand; the output is
checked in): an HloModuleProto as hloi writes it, `p + {1, 2, 3}`, with
fields no version of XLA's schema has (numbers 1000 to 1006) spliced in the
way a newer XLA would write its new fields: on the instruction `a` (one of
each wire type), inside `a`'s shape, on the computation and on the module.
`hloi convert unknown_fields.pb out.pb` must give the same bytes back.

    /usr/bin/python3 tests/proto/gen_unknown_fields.py   (needs protoc)
"""
import os
import struct
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "testdata", "proto", "unknown_fields.pb")

F32_3 = 'element_type: F32 dimensions: 3 layout { minor_to_major: 0 }'
BASE = f'''
name: "unknown_fields"
entry_computation_name: "main"
computations {{
  name: "main"
  instructions {{ name: "p" opcode: "parameter" shape {{ {F32_3} }} id: 1 }}
  instructions {{
    name: "k" opcode: "constant" shape {{ {F32_3} }}
    literal {{ shape {{ {F32_3} }} f32s: [1, 2, 3] }}
    id: 2
  }}
  instructions {{
    name: "a" opcode: "add" shape {{ {F32_3} }} id: 3 operand_ids: [1, 2]
  }}
  program_shape {{ parameters {{ {F32_3} }} result {{ {F32_3} }} parameter_names: "p" }}
  id: 1
  root_id: 3
}}
host_program_shape {{ parameters {{ {F32_3} }} result {{ {F32_3} }} parameter_names: "p" }}
entry_computation_id: 1
'''


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def read_varint(data, pos):
    v = shift = 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def key(num, wire_type):
    return varint(num << 3 | wire_type)


def splice(data, path, extra):
    """Appends `extra` to the message at `path`, a list of (field number,
    occurrence) steps of length-delimited fields, fixing the lengths."""
    if not path:
        return data + extra
    (num, nth), rest = path[0], path[1:]
    pos = 0
    while pos < len(data):
        start = pos
        k, pos = read_varint(data, pos)
        wt = k & 7
        if wt == 0:
            _, pos = read_varint(data, pos)
            continue
        if wt == 1 or wt == 5:
            pos += 8 if wt == 1 else 4
            continue
        n, pos = read_varint(data, pos)
        if k >> 3 == num:
            if nth == 0:
                inner = splice(data[pos:pos + n], rest, extra)
                return data[:start] + varint(k) + varint(len(inner)) + inner + data[pos + n:]
            nth -= 1
        pos += n
    raise ValueError("path not found")


base = subprocess.run(["protoc", "--encode=xla.HloModuleProto", "-I", os.path.join(ROOT, "proto"),
                       "hlo.proto"], input=BASE.encode(), stdout=subprocess.PIPE,
                      check=True).stdout
instr_a = [(3, 0), (2, 2)]
data = splice(base, instr_a,
              key(1000, 0) + varint(7) +
              key(1001, 2) + varint(3) + b"new" +
              key(1002, 5) + struct.pack("<I", 0x01020304) +
              key(1003, 1) + struct.pack("<Q", 0x0102030405060708))
data = splice(data, instr_a + [(3, 0)], key(1004, 0) + varint(1))
data = splice(data, [(3, 0)], key(1005, 0) + varint(2))
data = splice(data, [], key(1006, 2) + varint(2) + b"\x08\x01")
with open(OUT, "wb") as f:
    f.write(data)

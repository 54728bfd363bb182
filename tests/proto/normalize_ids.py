#!/usr/bin/env python3
"""Rewrites `protoc --decode=xla.HloModuleProto` output so that two modules
that differ only in their ids compare equal: every instruction and
computation id (and every field naming one: operand_ids,
control_predecessor_ids, called_computation_ids, root_id,
entry_computation_id, the schedule's keys and instruction_ids) becomes the
name of what it names. Reads stdin, writes stdout."""
import re
import sys

TOKEN = re.compile(r'\s*(?:(\})|([A-Za-z_][A-Za-z0-9_]*)\s*(?:(\{)|:\s*("(?:[^"\\]|\\.)*"|[^\s]+)))')


def parse(text):
    """A list of (key, value-or-children) in order."""
    pos = 0
    stack = [[]]
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                raise SystemExit("cannot read protoc's text at: %r" % text[pos:pos + 40])
            break
        pos = m.end()
        if m.group(1):
            done = stack.pop()
            stack[-1][-1] = (stack[-1][-1][0], done)
        elif m.group(3):
            stack[-1].append((m.group(2), None))
            stack.append([])
        else:
            stack[-1].append((m.group(2), m.group(4)))
    if len(stack) != 1:
        raise SystemExit("unbalanced braces in protoc's text")
    return stack[0]


def emit(node, indent, out):
    for key, val in node:
        if isinstance(val, list):
            out.append("%s%s {" % ("  " * indent, key))
            emit(val, indent + 1, out)
            out.append("%s}" % ("  " * indent))
        else:
            out.append("%s%s: %s" % ("  " * indent, key, val))


def get(node, key):
    for k, v in node:
        if k == key:
            return v
    return None


def main():
    tree = parse(sys.stdin.read())
    comp_name = {}
    instr_name = {}  # id -> "comp/instr"
    for k, comp in tree:
        if k != "computations":
            continue
        cname = get(comp, "name")
        cid = get(comp, "id") or "0"
        comp_name[cid] = cname
        for k2, ins in comp:
            if k2 == "instructions":
                instr_name[get(ins, "id") or "0"] = "%s/%s" % (cname, get(ins, "name"))

    def ins(v):
        return '"%s"' % instr_name.get(v, "?" + v).replace('"', '')

    def cmp(v):
        return '"%s"' % comp_name.get(v, "?" + v).replace('"', '')

    def fix_instr(node):
        out = []
        for k, v in node:
            if k in ("id", "operand_ids", "control_predecessor_ids"):
                out.append((k, ins(v)))
            elif k == "called_computation_ids":
                out.append((k, cmp(v)))
            else:
                out.append((k, v))
        return out

    def fix_comp(node):
        out = []
        for k, v in node:
            if k == "instructions":
                out.append((k, fix_instr(v)))
            elif k == "id":
                out.append((k, cmp(v)))
            elif k == "root_id":
                out.append((k, ins(v)))
            else:
                out.append((k, v))
        return out

    def fix_schedule(node):
        out = []
        for k, v in node:
            if k == "sequences":
                seq = []
                for k2, v2 in v:
                    if k2 == "key":
                        seq.append((k2, cmp(v2)))
                    elif k2 == "value":
                        seq.append((k2, [(a, ins(b)) for a, b in v2]))
                    else:
                        seq.append((k2, v2))
                out.append((k, seq))
            else:
                out.append((k, v))
        # the map by key, whatever order it was written in
        return sorted(out, key=lambda kv: str(kv[1]))

    result = []
    for k, v in tree:
        if k == "computations":
            result.append((k, fix_comp(v)))
        elif k == "entry_computation_id":
            result.append((k, cmp(v)))
        elif k == "schedule":
            result.append((k, fix_schedule(v)))
        elif k == "id":
            continue  # the module's own id
        else:
            result.append((k, v))
    out = []
    emit(result, 0, out)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""wire_compare.py — a job's RPCs (the helper's QUERY reply, "wire") against
the mount's /proc/self/mountstats delta, per procedure.

  wire_compare.py MOUNTPOINT DEVICE MOUNTSTATS_BEFORE MOUNTSTATS_AFTER
                  NODE_ROWS_BEFORE NODE_ROWS_AFTER JOB_JSON...

JOB_JSON: each job's QUERY reply ("job" object), their RPCs summed.

  wire_compare.py --rows DEVICE NODE_ROWS

prints the rows of no workload on DEVICE, one per line: two dumps that print
the same had no such RPC end between them.

  wire_compare.py --job-rows DEVICE NODE_ROWS PROCEDURE_INDEX_NAME

prints the bytes sent by the unattributed rows kept under environment jobs'
ids (bit 63) on DEVICE for the procedure named (READ, WRITE, ...: its index
taken from /proc/self/mountstats's order for the mount's NFS version).

NODE_ROWS_*: `tests/tools/wire-rows .../wire_stats` — the kernel's rows, one
line each, of which those of no workload (background, unattributed) on
DEVICE are what the job does not own.  Prints one line per procedure and "mismatches=N";
exits 1 when any procedure's job + background + unattributed differs from
the mount's delta in RPCs, transmissions, bytes sent or received, or errors.
"""
import json
import re
import sys

FIELDS = ("rpcs", "transmissions", "major_timeouts", "bytes_sent", "bytes_received")
NO_WORKLOAD = {1: "unattributed", 2: "background"}  # enum vnfs_wire_owner_kind


def mountstats(path, mountpoint):
    """{procedure: (ops, trans, timeouts, sent, received, errors)} of one mount."""
    ops, inside = {}, False
    for line in open(path):
        if line.startswith("device "):
            inside = f" mounted on {mountpoint} with " in line
            continue
        match = re.match(r"\s+([A-Z_0-9]+):\s+([\d ]+)$", line) if inside else None
        if match:
            numbers = [int(x) for x in match.group(2).split()]
            ops[match.group(1)] = tuple(numbers[:5]) + (numbers[8] if len(numbers) > 8 else 0,)
    return ops


def wire_rows(path):
    """(slot, device, version, procedure, owner kind, owner id, counters) of
    each line wire-rows printed; counters as mountstats' (ops, trans,
    timeouts, sent, received, errors)."""
    for line in open(path):
        numbers = [int(x) for x in line.split()]
        yield tuple(numbers[:6]) + (tuple(numbers[6:12]),)


def node_rows(path, device, jobs_ids=()):
    """{(procedure index, owner kind): counters} of the rows of no workload,
    summed over their owners' ids; rows kept under a job's own id (its RPCs
    from before it was identified, which its record holds) left out."""
    rows = {}
    for _, row_device, _, procedure, kind, owner_id, counters in wire_rows(path):
        if row_device != device or kind not in NO_WORKLOAD or (owner_id and owner_id in jobs_ids):
            continue
        summed = rows.get((procedure, kind), (0,) * 6)
        rows[(procedure, kind)] = tuple(a + b for a, b in zip(summed, counters))
    return rows


def job_rows_sent(device, path, procedure_name):
    """Bytes sent by rows kept under environment jobs' ids for one procedure."""
    names = {}
    sent = 0
    for _, row_device, version, procedure, kind, owner_id, counters in wire_rows(path):
        if row_device != device or kind != 1 or not owner_id >> 63:
            continue
        if version not in names:
            names[version] = procedure_names(version)
        if names[version].get(procedure) == procedure_name:
            sent += counters[3]
    return sent


def procedure_names(version):
    """{p_statidx: name} of an NFS version, from any mount of it in mountstats."""
    names, inside, index = {}, False, 0
    for line in open("/proc/self/mountstats"):
        if line.startswith("device "):
            inside, index = False, 0
        elif line.strip().startswith("RPC iostats version") and f"p/v: 100003/{version} " in line:
            inside = True
        elif inside:
            match = re.match(r"\s+([A-Z_0-9]+):\s+[\d ]+$", line)
            if match:
                names[index] = match.group(1)
                index += 1
    return names


def main():
    if sys.argv[1] == "--job-rows":
        print(job_rows_sent(int(sys.argv[2]), sys.argv[3], sys.argv[4]))
        return 0
    if sys.argv[1] == "--rows":
        for key, counters in sorted(node_rows(sys.argv[3], int(sys.argv[2])).items()):
            print(key, counters)
        return 0
    mountpoint, device = sys.argv[1], int(sys.argv[2])
    before, after = mountstats(sys.argv[3], mountpoint), mountstats(sys.argv[4], mountpoint)
    jobs = [json.load(open(path)) for path in sys.argv[7:]]
    jobs_ids = {step["cgroup_id"] for job in jobs for step in job.get("steps", [])}
    node_before = node_rows(sys.argv[5], device, jobs_ids)
    node_after = node_rows(sys.argv[6], device, jobs_ids)
    job_rows = {}
    for job in jobs:
        for row in job.get("wire", []):
            if row["device"] == device:
                counts = tuple(row[f] for f in FIELDS) + (row["errors"],)
                summed = job_rows.get(row["procedure"], (0,) * 6)
                job_rows[row["procedure"]] = tuple(a + b for a, b in zip(summed, counts))
    mismatches = 0
    for index, name in enumerate(after):
        delta = tuple(a - b for a, b in zip(after[name], before.get(name, (0,) * 6)))
        mine = job_rows.get(name, (0,) * 6)
        others = {}
        for kind, label in NO_WORKLOAD.items():
            now = node_after.get((index, kind), (0,) * 6)
            then = node_before.get((index, kind), (0,) * 6)
            others[label] = tuple(a - b for a, b in zip(now, then))
        total = tuple(m + sum(o[i] for o in others.values()) for i, m in enumerate(mine))
        if not any(delta) and not any(total):
            continue
        same = all(delta[i] == total[i] for i in (0, 1, 3, 4, 5))
        mismatches += not same
        print(f"{name}: mountstats ops={delta[0]} trans={delta[1]} sent={delta[3]} "
              f"received={delta[4]} errors={delta[5]}; jobs ops={mine[0]} sent={mine[3]} "
              f"received={mine[4]} errors={mine[5]}; background ops={others['background'][0]}; "
              f"unattributed ops={others['unattributed'][0]}; {'equal' if same else 'DIFFERENT'}")
    print(f"mismatches={mismatches}")
    return 1 if mismatches else 0


sys.exit(main())

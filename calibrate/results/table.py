"""Render a calibration report (reports/calibration.json) as markdown:
one table per buffering of sys.stderr, rows x policies (lazy rows x variants); a
cell lists per-version verdicts only where the interpreters differ;
'*' marks a cell whose real verdict differs from docs/SCENARIOS.md's matrix."""
import collections
import json
import sys

rs = json.load(open(sys.argv[1]))
pols = ["pystderr", "fd2", "buffered", "adaptive", "merged", "logjam"]
vars_ = ["old", "initfast", "norace", "fixed"]
order = ["D1", "D2", "P1", "P2", "P3", "P5", "P6", "C1", "C2", "C3", "I1", "I2", "I3", "I4", "I5", "I6",
         "F1", "F2", "F3", "F4", "T1", "U1", "U2", "U3", "L1", "L2", "L3"]
cells = collections.defaultdict(dict)
exp = {}
vers = sorted({r["Python"] for r in rs})
for r in rs:
    col = r["Policy"] or r["Variant"]
    v = r["Real"] + (" (%s)" % r["Runs"] if r.get("Runs") and "," in r["Runs"] else "")
    cells[(r.get("Buffering", r.get("Profile")), r["Row"], col)][r["Python"]] = v  # "Profile": its old name
    exp[(r["Row"], col)] = r["Expected"]
print("interpreters: " + ", ".join(vers) + "\n")
for buf in ["buffered", "unbuffered"]:
    print("### buffering: %s\n" % buf)
    print("| row | " + " | ".join(pols) + " |")
    print("| --- |" + " --- |" * len(pols))
    for row in order:
        cols = vars_ if row.startswith("L") else pols
        if not any((buf, row, c) in cells for c in cols):
            continue
        out = []
        for c in cols:
            m = cells.get((buf, row, c), {})
            if not m:
                out.append("")
                continue
            vals = set(m.values())
            if len(vals) == 1:
                s = vals.pop()
            else:
                s = " / ".join("%s: %s" % (k.rsplit(".", 1)[0], m[k]) for k in sorted(m))
            if not s.startswith(exp[(row, c)]) or len(set(m.values())) > 1 and any(not x.startswith(exp[(row, c)]) for x in m.values()):
                s += " *"
            out.append(s)
        label = row + (" (old, initfast, norace, fixed)" if row.startswith("L") else "")
        print("| %s | %s |" % (label, " | ".join(out)))
    print()

#!/usr/bin/env python3
"""Validate updates.jsonl and different.jsonl."""
import json, re, sys
from collections import Counter
MARKERS = ["now", "changed", "updated", "no longer", "was", "were", "previously",
           "formerly", "new", "moved", "currently", "instead", "anymore"]
MRE = re.compile(r"\b(" + "|".join(re.escape(m) for m in MARKERS) + r")\b", re.I)
DOMAINS = ["ops", "hr", "finance", "medicine", "product", "law", "agriculture", "energy",
           "insurance", "aviation", "publishing", "construction", "government"]
errors, warnings = [], []

def load(path, fields):
    rows = []
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        try:
            r = json.loads(line)
        except Exception as e:
            errors.append(f"{path}:{i}: bad JSON {e}"); continue
        if list(r.keys()) != fields:
            errors.append(f"{path}:{i}: fields {list(r.keys())}")
        rows.append(r)
    return rows

U = load("updates.jsonl", ["id", "domain", "old", "new"])
D = load("different.jsonl", ["id", "domain", "a", "b", "differs_in"])
if len(U) != 330: errors.append(f"updates: {len(U)} lines")
if len(D) != 530: errors.append(f"different: {len(D)} lines")
kinds = Counter(r["differs_in"] for r in D)
if kinds != Counter(subject=212, qualifier=106, relation=106, multi_valued=106):
    errors.append(f"kind counts {dict(kinds)}")
ids = [r["id"] for r in U + D]
if len(ids) != len(set(ids)): errors.append("duplicate ids")
for r in U:
    if not re.fullmatch(r"u-([a-z]+)-\d{3}", r["id"]) or r["id"].split("-")[1] != r["domain"]:
        errors.append(f"bad id {r['id']}")
for r in D:
    if not re.fullmatch(r"d-([a-z]+)-\d{3}", r["id"]) or r["id"].split("-")[1] != r["domain"]:
        errors.append(f"bad id {r['id']}")
for r in U + D:
    if r["domain"] not in DOMAINS: errors.append(f"bad domain {r['id']}")

sents = []
for r in U: sents += [(r["id"], r["old"]), (r["id"], r["new"])]
for r in D: sents += [(r["id"], r["a"]), (r["id"], r["b"])]
seen = {}
for rid, s in sents:
    key = s.strip().lower()
    if key in seen: errors.append(f"duplicate sentence {rid} / {seen[key]}: {s}")
    seen[key] = rid
    if not s[0].isupper(): errors.append(f"{rid}: no capital: {s}")
    if not s.endswith(".") or s.endswith(".."): errors.append(f"{rid}: end: {s}")
    if "[" in s or "]" in s or "|" in s: errors.append(f"{rid}: leftover markup: {s}")
    if "  " in s: errors.append(f"{rid}: double space")
for r in U + D:
    x, y = (r["old"], r["new"]) if "old" in r else (r["a"], r["b"])
    if x == y: errors.append(f"{r['id']}: identical sentences")

# update-specific checks
spans = Counter()
for r in U:
    for s in (r["old"], r["new"]):
        m = MRE.search(s)
        if m: errors.append(f"{r['id']}: marker {m.group(0)!r}: {s}")
    a, b = r["old"].split(), r["new"].split()
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]: p += 1
    q = 0
    while q < min(len(a), len(b)) - p and a[-1 - q] == b[-1 - q]: q += 1
    if p < 2: errors.append(f"{r['id']}: differing span starts within first {p} words")
    spans[max(len(a) - p - q, len(b) - p - q)] += 1
# marker words in different pairs: reported as warnings
for r in D:
    for s in (r["a"], r["b"]):
        m = MRE.search(s)
        if m: warnings.append(f"{r['id']}: marker {m.group(0)!r} in different pair: {s}")

# per-domain table
tab = {d: Counter() for d in DOMAINS}
for r in U: tab[r["domain"]]["update"] += 1
for r in D: tab[r["domain"]][r["differs_in"]] += 1
print("domain        update subject qualifier relation multi_valued total")
for d in DOMAINS:
    t = tab[d]
    print(f"{d:13s} {t['update']:6d} {t['subject']:7d} {t['qualifier']:9d} {t['relation']:8d} {t['multi_valued']:12d} {sum(t.values()):5d}")
print("update span lengths (words):", dict(sorted(spans.items())))
for w in warnings: print("WARN", w)
for e in errors: print("ERROR", e)
print("OK" if not errors else f"{len(errors)} errors")
sys.exit(1 if errors else 0)

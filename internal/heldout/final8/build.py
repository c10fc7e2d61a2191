#!/usr/bin/env python3
"""Expand the hand-written source lines in src/ into updates.jsonl and different.jsonl."""
import json, re, glob, sys
KIND = {"S": "subject", "Q": "qualifier", "R": "relation", "M": "multi_valued"}
BR = re.compile(r"\[([^\[\]|]*)\|([^\[\]|]*)\]")

def fix(s):
    s = re.sub(r"\s+", " ", s).strip()
    while s.endswith(".."):
        s = s[:-1]
    return s

def expand(text):
    if "||" in text:
        a, b = [fix(x) for x in text.split("||")]
        return a, b, 0
    n = len(BR.findall(text))
    a = fix(BR.sub(lambda m: m.group(1), text))
    b = fix(BR.sub(lambda m: m.group(2), text))
    return a, b, n

ups, difs = [], []
ucount, dcount = {}, {}
for path in sorted(glob.glob("src/*.txt")):
    dom = None
    for ln, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            dom = line[1:].strip(); continue
        tag, _, text = line.partition(":")
        tag, text = tag.strip(), text.strip()
        a, b, n = expand(text)
        if tag == "U":
            if n != 1:
                sys.exit(f"{path}:{ln}: update needs exactly one span")
            ucount[dom] = ucount.get(dom, 0) + 1
            ups.append({"id": f"u-{dom}-{ucount[dom]:03d}", "domain": dom, "old": a, "new": b})
        elif tag in KIND:
            dcount[dom] = dcount.get(dom, 0) + 1
            difs.append({"id": f"d-{dom}-{dcount[dom]:03d}", "domain": dom, "a": a, "b": b,
                         "differs_in": KIND[tag]})
        else:
            sys.exit(f"{path}:{ln}: bad tag {tag!r}")

with open("updates.jsonl", "w", encoding="utf-8") as f:
    for r in ups:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
with open("different.jsonl", "w", encoding="utf-8") as f:
    for r in difs:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(len(ups), "updates;", len(difs), "different")

#!/usr/bin/python3
"""The HTML reports in a real headless browser.

`anec report` (a real network plist and a small graph that some targets reject) and `anec-desc dump
--format html` (a real hwx) are written, loaded by `chromium --headless --dump-dom` (the DOM after
the page's scripts ran) and checked against what the JSON outputs of check, estimate, place, explain
and dump say: one heat-map cell per target with its verdict and latency, one roofline per target
with one point per operation placed where its FLOPs, bytes and time put it, the placement, the top
costs, the findings with their catalogue text; for the descriptor page, that selecting a node
through the address (#sel=) highlights exactly its bytes and that selecting a byte (#byte=) selects
the innermost node covering it. Neither page may refer to anything outside itself. Screenshots are
written into the output folder; with ANEC_UPDATE_DOC_IMAGES=1 they are also copied to --doc-images
(docs/images/, the pictures docs/anec.md and docs/anec-desc.md show).

Exit 77 (a skip for ctest) when chromium or the shared test data is missing.
"""
import argparse
import html.parser
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
        "track", "wbr"}
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)
    return ok


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], ""

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, tag=None, cls=None, **attrs):
        out = []
        for n in self.walk():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.classes():
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(n)
        return out

    def ancestors(self):
        p = self.parent
        while p:
            yield p
            p = p.parent


class Dom(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.cur = self.root
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        # Text is kept in order with the children: as a text child.
        t = Node("#text", {}, self.cur)
        t.text = data
        self.cur.children.append(t)


def run(argv, expect=0, cwd=None):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)
    if expect is not None and r.returncode != expect:
        raise SystemExit("%s exited %d (expected %d): %s" % (" ".join(map(str, argv)), r.returncode, expect,
                                                               r.stderr))
    return r


class Browser:
    def __init__(self, exe, out):
        self.exe, self.out, self.calls = exe, out, 0

    def _argv(self, *extra):
        self.calls += 1
        profile = self.out / ("profile-%d" % self.calls)  # its own profile: runs may overlap
        return [self.exe, "--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=%s" % profile] + list(extra)

    def dom(self, page, fragment=""):
        r = run(self._argv("--dump-dom", page.resolve().as_uri() + fragment))
        return Dom(r.stdout).root

    def screenshot(self, page, png, fragment=""):
        run(self._argv("--screenshot=%s" % png, "--window-size=1400,1000",
                       page.resolve().as_uri() + fragment))
        return png


def tool_json(tool, tables, *args):
    return json.loads(run([tool, "--tables", tables] + list(args), expect=None).stdout)


def close(a, b, rel=1e-4):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def self_contained(path):
    text = path.read_text(encoding="utf-8")
    check("http://" not in text and "https://" not in text, "%s names no http(s) address" % path.name)
    check(re.search(r"\bsrc\s*=", text) is None, "%s loads nothing (no src=)" % path.name)
    hrefs = re.findall(r'\bhref\s*=\s*"([^"]*)"', text)
    check(all(h.startswith("#") for h in hrefs), "%s links only within itself: %s" %
          (path.name, [h for h in hrefs if not h.startswith("#")][:3]))
    check(re.search(r"url\(|@import|//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I) is None,
          "%s has no url(), @import or //host/ reference" % path.name)


def png_not_blank(png):
    data = png.read_bytes()
    if not check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is a PNG" % png.name):
        return
    width, height = struct.unpack(">II", data[16:24])
    idat, at = b"", 8
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + n]
        at += 12 + n
    raw = zlib.decompress(idat)
    # Filtered rows of a blank page are nearly all zero; a drawn page is not.
    busy = sum(1 for b in raw[::7] if b) / max(1, len(raw[::7]))
    check((width, height) == (1400, 1000), "%s is 1400x1000 (%dx%d)" % (png.name, width, height))
    check(busy > 0.02, "%s is not blank (%.3f of sampled bytes set)" % (png.name, busy))


def check_report(a, browser, model, page, top):
    tables = a.tables
    matrix = tool_json(a.anec, tables, "check", model, "--target", "all", "--format", "json")["targets"]
    estimates = tool_json(a.anec, tables, "estimate", model, "--target", "all", "--format", "json")
    estimates = {r["target"]: r for r in estimates["targets"]}
    targets = [r["target"] for r in matrix]
    check(len(targets) == len(list(pathlib.Path(tables, "targets").glob("*.toml"))),
          "every target is in the matrix")
    dom = browser.dom(page, "#t-" + targets[-1])
    name = page.name

    cells = dom.find("a", "heat-cell")
    check(len(cells) == len(targets),
          "%s: %d heat-map cells for %d targets" % (name, len(cells), len(targets)))
    for row, cell in zip(matrix, cells):
        t = row["target"]
        check(cell.attrs.get("data-target") == t, "%s: heat-map cell order (%s)" % (name, t))
        check(cell.attrs.get("data-verdict") == row["verdict"], "%s: %s verdict" % (name, t))
        check(("rejected" in cell.classes()) == (row["verdict"] == "reject"),
              "%s: %s marked rejected" % (name, t))
        lat = estimates[t]["latency_us"]
        check(lat is not None and close(float(cell.attrs.get("data-latency-us") or "nan"), lat, 1e-5),
              "%s: %s latency %s vs %s" % (name, t, cell.attrs.get("data-latency-us"), lat))

    charts = dom.find("svg", "roofline")
    check(len(charts) == len(targets),
          "%s: %d roofline charts for %d targets" % (name, len(charts), len(targets)))
    rejected_anywhere = False
    for t, svg in zip(targets, charts):
        check(svg.attrs.get("data-target") == t, "%s: roofline order (%s)" % (name, t))
        est = tool_json(a.anec, tables, "estimate", model, "--target", t, "--format", "json")
        ops = [o for o in est["ops"] if o["estimated"] and o["flops"] > 0 and o["bytes"] > 0 and
               max(o["compute_us"], o["memory_us"]) > 0]
        points = svg.find("circle", "op-point")
        check(len(points) == len(ops) and len(ops) > 0,
              "%s: %s has %d points for %d operations" % (name, t, len(points), len(ops)))
        for o, p in zip(ops, points):
            us = max(o["compute_us"], o["memory_us"])
            check(p.attrs.get("data-op") == o["op"], "%s: %s point for %s" % (name, t, o["op"]))
            check(close(float(p.attrs["data-x"]), o["flops"] / o["bytes"]) and
                  close(float(p.attrs["data-y"]), o["flops"] / (us * 1e-6)),
                  "%s: %s point %s at its intensity and throughput" % (name, t, o["op"]))
            check(o["op"] in p.all_text(), "%s: %s point %s has a hover title" % (name, t, o["op"]))
        check(len(svg.find("line", "roof")) >= 2, "%s: %s has a compute and a bandwidth roof" % (name, t))
        # The cell says whether the target's rates were measured on it or predicted.
        provenance = [p["provenance"] for p in est["parameters"].values()]
        predicted = sum("predicted" in p for p in provenance)
        rates = ("measured" if not predicted else
                 "predicted" if predicted == len(provenance) else "partly predicted")
        cell = [c for c in cells if c.attrs.get("data-target") == t]
        check(cell and cell[0].attrs.get("data-rates") == rates,
              "%s: %s rates %s (%s)" % (name, t, rates, cell[0].attrs.get("data-rates") if cell else None))

        # Placement and top costs, in the target's details.
        place = tool_json(a.anec, tables, "place", model, "--target", t, "--format", "json")
        box = dom.find("details", "target", id="t-" + t)
        if not check(len(box) == 1, "%s: one details box for %s" % (name, t)):
            continue
        parts = box[0].find("tr", "partition")
        check(len(parts) == len(place["partitions"]), "%s: %s partitions %d vs %d" %
              (name, t, len(parts), len(place["partitions"])))
        for p, q in zip(parts, place["partitions"]):
            check(q["backend"] in p.classes()[-1], "%s: %s partition on %s" % (name, t, q["backend"]))
        off = [o for o in place["ops"] if o["backend"] != "engine"]
        falls = box[0].find("li", "fallback")
        check(len(falls) == len(off), "%s: %s fallbacks %d vs %d" % (name, t, len(falls), len(off)))
        for f, o in zip(falls, off):
            check(f.attrs.get("data-op") == o["op"] and all(r["code"] in f.all_text() for r in o["reasons"]),
                  "%s: %s fallback %s with its reasons" % (name, t, o["op"]))
        rejected_anywhere |= bool(off)
        costs = box[0].find("tr", "cost-row")
        estimated = sorted((o for o in est["ops"] if o["estimated"]),
                           key=lambda o: -max(o["compute_us"], o["memory_us"]))
        check(len(costs) == min(top, len(estimated)), "%s: %s top costs" % (name, t))
        if costs:
            check(costs[0].attrs.get("data-op") == estimated[0]["op"],
                  "%s: %s costliest op first" % (name, t))

    # The script ran: the address opened the last target's details.
    last = dom.find("details", id="t-" + targets[-1])
    check(bool(last) and "open" in last[0].attrs,
          "%s: #t-%s opened its details (the script ran)" % (name, targets[-1]))

    # Findings: every finding of every target is in a row naming it, each code with its catalogue text.
    rows = dom.find("tr", "finding")
    codes = set()
    groups = set()
    for t in targets:
        for f in tool_json(a.anec, tables, "check", model, "--target", t, "--format", "json")["findings"]:
            codes.add(f["code"])
            groups.add((f["code"], f.get("object", ""), f["message"], f["severity"]))
            hit = [r for r in rows if r.attrs.get("data-code") == f["code"] and
                   r.attrs.get("data-object", "") == f.get("object", "") and
                   t in r.attrs.get("data-targets", "").split()]
            check(bool(hit), "%s: finding %s on %s of %s shown" % (name, f["code"], f.get("object", ""), t))
    check(len(rows) == len(groups),
          "%s: %d finding rows for %d distinct findings" % (name, len(rows), len(groups)))
    for code in codes:
        entry = dom.find("div", "reason", data_code=code)
        want = run([a.anec, "--tables", tables, "explain", code]).stdout
        check(len(entry) == 1 and entry[0].find("pre")[0].all_text() == want,
              "%s: %s has the text anec explain prints" % (name, code))
    self_contained(page)
    return rejected_anywhere


def check_errors(a, out):
    bad = out / "never.html"
    to_bad = ["-o", str(bad)]
    for args, code in [(["report", str(out / "missing.json"), "--target", "all"] + to_bad, "ANEC-"),
                       (["report", a.graph, "--target", "all"], "ANEC-CLI-001"),
                       (["report", a.graph, "--target", "all", "--model", "x"] + to_bad, "ANEC-CLI-002"),
                       (["report", a.graph, "--target", "nosuch"] + to_bad, "ANEC-"),
                       (["report", a.graph, "--target", "h13", "--top", "0"] + to_bad, "ANEC-CLI-002")]:
        r = run([a.anec, "--tables", a.tables] + args, expect=None)
        check(r.returncode == 2 and code in r.stderr, "anec %s: exit 2 with %s (%d, %s)" %
              (" ".join(args[2:]), code, r.returncode, r.stderr.strip()))
    check(not bad.exists(), "a failed report writes no file")
    r = run([a.anec_desc, "--tables", a.tables, "dump", a.hwx, "--format", "htm"], expect=None)
    check(r.returncode == 2 and "ANEC-CLI-002" in r.stderr,
          "anec-desc dump --format htm: exit 2, ANEC-CLI-002")


def check_large_report(a, out):
    """A model of 1000 operations: each chart plots its 400 most expensive operations and says how
    many it leaves out; the page stays small."""
    ops = []
    for i in range(1000):
        kind = ("conv", "relu", "tan", "add")[i % 4]
        inputs = ["t%d" % i] + (["t%d" % (i - 1)] if kind == "add" else [])
        op = {"name": "op%d" % i, "op": kind, "inputs": inputs, "outputs": ["t%d" % (i + 1)]}
        if kind == "conv":
            op["attrs"] = {"out_channels": 32, "kernel": [3, 3], "pad": [1, 1, 1, 1]}
        ops.append(op)
    model = out / "chain1000.json"
    model.write_text(json.dumps({"format": "anec-graph", "version": 1, "ops": ops, "outputs": ["t1000"],
                                 "inputs": [{"name": "t0", "shape": [1, 32, 28, 28]}]}))
    page = out / "chain1000.html"
    run([a.anec, "--tables", a.tables, "report", str(model), "--target", "h16", "-o", str(page)])
    est = tool_json(a.anec, a.tables, "estimate", str(model), "--target", "h16", "--format", "json")
    timed = [o for o in est["ops"] if o["estimated"] and o["flops"] > 0 and o["bytes"] > 0 and
             max(o["compute_us"], o["memory_us"]) > 0]
    ranked = sorted(timed, key=lambda o: -max(o["compute_us"], o["memory_us"]))  # stable: ties in order
    want = [o["op"] for o in timed if o in ranked[:400]]
    dom = Dom(page.read_text()).root
    plotted = [p.attrs.get("data-op") for p in dom.find("circle", "op-point")]
    check(len(timed) > 400 and plotted == want,
          "chain1000: the 400 most expensive of %d operations plotted, in order (%d)" %
          (len(timed), len(plotted)))
    notes = [n.all_text() for n in dom.find("p", "left-out")]
    check(any(n.startswith("… and %d more cheaper operation(s)" % (len(timed) - 400)) for n in notes),
          "chain1000: the chart says what it leaves out (%s)" % notes[:2])
    check(page.stat().st_size < 2 << 20, "chain1000: a page of %d bytes" % page.stat().st_size)


def check_escaping(a, browser, out):
    graph = json.loads(pathlib.Path(a.graph).read_text())
    evil = "conv<b>1</b>&\"x'"
    for op in graph["ops"]:
        if op["name"] == "conv1":
            op["name"] = evil
    src = out / "escape.json"
    src.write_text(json.dumps(graph))
    page = out / "escape.html"
    run([a.anec, "--tables", a.tables, "report", str(src), "--target", "h13", "-o", str(page)])
    text = page.read_text()
    check("<b>1</b>" not in text, "an operation's name is escaped")
    dom = browser.dom(page)
    check(not dom.find("b") or all(b.all_text() != "1" for b in dom.find("b")), "no element made from a name")
    check(any(p.attrs.get("data-op") == evil for p in dom.find("circle", "op-point")),
          "the name survives escaping")


def check_desc(a, browser, out):
    page = out / "conv-hwx.html"
    # Run in the file's folder, so that the page (and the screenshot) names the file, not this machine's path.
    hwx = pathlib.Path(a.hwx)
    page.write_text(run([a.anec_desc, "--tables", a.tables, "dump", hwx.name, "--format", "html"],
                        cwd=hwx.parent).stdout)
    dump = tool_json(a.anec_desc, a.tables, "dump", a.hwx, "--format", "json")
    size = os.path.getsize(a.hwx)
    td = dump["tds"][0]
    reg = td["streams"][0]["registers"][2]
    cases = [("tds/0", td["offset"], td["bytes"]),
             ("tds/0/streams/0/registers/2", reg["offset"], 4),
             # a stream: its header word, then its words
             ("tds/0/streams/0", td["streams"][0]["offset"], 4 + 4 * td["streams"][0]["words"]),
             ("kernel_data", dump["kernel_data"]["offset"], dump["kernel_data"]["bytes"]),
             ("tensors/0", None, 0)]
    for node_id, offset, count in cases:
        dom = browser.dom(page, "#sel=" + node_id)
        hexview = dom.find(id="hex")[0]
        check(len(hexview.attrs.get("data-hex", "")) == 2 * size, "hex view: the file's %d bytes" % size)
        # Only the rows in view are drawn: those drawn are whole rows in file order, the first highlighted
        # byte among them, and each drawn byte highlighted exactly when it is in the node's range.
        drawn = [int(c.attrs["data-o"]) for c in dom.find("span", "b")]
        check(drawn and drawn == list(range(drawn[0], drawn[0] + len(drawn))) and drawn[0] % 16 == 0,
              "#sel=%s: the hex view draws whole rows in order (%s..)" % (node_id, drawn[:1]))
        lit = [int(c.attrs["data-o"]) for c in dom.find("span", "b") if "hl" in c.classes()]
        want = [o for o in range(offset, offset + count) if o in drawn] if offset is not None else []
        check(lit == want and (count == 0 or offset in drawn),
              "#sel=%s highlights bytes %s (got %d from %s)" % (node_id, (offset, count), len(lit), lit[:1]))
        mark = "%d-%d" % (offset, offset + count) if offset is not None else "0-0"
        check(hexview.attrs.get("data-mark") == mark, "#sel=%s marks %s (%s)" %
              (node_id, mark, hexview.attrs.get("data-mark")))
        node = dom.find("details", "node", data_id=node_id)
        check(len(node) == 1 and "selected" in node[0].classes(), "#sel=%s selects the node" % node_id)
        check(all("open" in p.attrs for p in node[0].ancestors() if p.tag == "details") if node else False,
              "#sel=%s opens the tree down to it" % node_id)
    # A byte inside a register: the register is the innermost node, its descriptor and stream cover it.
    dom = browser.dom(page, "#byte=%d" % (reg["offset"] + 1))
    sel = dom.find("details", "selected")
    check([n.attrs.get("data-id") for n in sel] == ["tds/0/streams/0/registers/2"],
          "#byte= selects the innermost node covering it (%s)" % [n.attrs.get("data-id") for n in sel])
    covers = {n.attrs.get("data-id") for n in dom.find("details", "covers")}
    check({"tds/0", "tds/0/streams/0", "tds/0/streams/0/registers/2"} <= covers,
          "#byte= marks the nodes that cover it (%s)" % sorted(covers))
    check(len([c for c in dom.find("span", "b") if "hl" in c.classes()]) == 4,
          "#byte= highlights the register")
    check([int(c.attrs["data-o"]) for c in dom.find("span", "cur")] == [reg["offset"] + 1],
          "#byte= outlines the byte")
    dom = browser.dom(page, "#byte=0x%x" % (reg["offset"] + 1))
    selected = [n.attrs.get("data-id") for n in dom.find("details", "selected")]
    check(selected == ["tds/0/streams/0/registers/2"], "#byte= takes a 0x-prefixed offset (%s)" % selected)
    # Addresses that name nothing: said in the status line, nothing selected, the script still running.
    for fragment, said in (("#byte=-1", "byte=-1: not a byte offset"), ("#byte=", "byte=: not a byte offset"),
                           ("#byte=1.5", "byte=1.5: not a byte offset"), ("#sel=a%", "no node a%")):
        dom = browser.dom(page, fragment)
        status = [n.all_text() for n in dom.find(id="status")]
        check(status == [said] and not dom.find("details", "selected"),
              "%s is reported, not followed (status %s)" % (fragment, status))
    self_contained(page)
    check_large_desc(a, browser, out, hwx.parent / "gemm.hwx")
    check_long_chain(a, browser, out, hwx.parent.parent / "eiln-ane" / "kernels" / "activation" / "relu6.bin")
    return page


def long_chain(descriptor, n, stride=0x300):
    """n copies of a real descriptor (its first 0x274 bytes), each chained to the next: the task ID
    in bits 15:0 of word 0, EON (bit 25) on the last only, NextPointer at 0x1c."""
    chain = bytearray(n * stride + 0x80)
    for i in range(n):
        at = i * stride
        chain[at:at + 0x274] = descriptor[:0x274]
        word0 = struct.unpack_from("<I", chain, at)[0] & ~0xffff | i
        struct.pack_into("<I", chain, at, word0 & ~(1 << 25) if i + 1 < n else word0 | 1 << 25)
        struct.pack_into("<I", chain, at + 0x1c, (i + 1) * stride if i + 1 < n else 0)
    return bytes(chain)


def check_long_chain(a, browser, out, descriptor):
    """A chain of 400 descriptors: the tree stops at its node budget and says so, the page stays
    small enough to open, and a byte in a drawn descriptor is still found."""
    chain = out / "chain400.bin"
    chain.write_bytes(long_chain(descriptor.read_bytes(), 400))
    page = out / "chain400.html"
    page.write_text(run([a.anec_desc, "--tables", a.tables, "dump", str(chain), "--format", "html"]).stdout)
    text = page.read_text()
    check("the tree stops at 20000 nodes" in text and "more item(s) not drawn" in text,
          "chain400: the tree says where it stops")
    check(page.stat().st_size < 16 << 20, "chain400: the page is %d bytes" % page.stat().st_size)
    dom = browser.dom(page, "#byte=%d" % 0x310)
    status = [n.all_text() for n in dom.find(id="status")]
    check(status and status[0].startswith("byte 0x310 in tds/1/"), "chain400: byte 0x310 found (%s)" % status)


def check_large_desc(a, browser, out, hwx):
    """A program of half a megabyte: the hex view draws the rows in view, not a cell per byte, and
    follows a byte deep in the file."""
    page = out / "gemm-hwx.html"
    page.write_text(run([a.anec_desc, "--tables", a.tables, "dump", str(hwx), "--format", "html"]).stdout)
    byte = os.path.getsize(hwx) - 100
    dom = browser.dom(page, "#byte=%d" % byte)
    drawn = [int(c.attrs["data-o"]) for c in dom.find("span", "b")]
    check(0 < len(drawn) < 4096 and byte in drawn,
          "%s: %d cells drawn around byte %d" % (hwx.name, len(drawn), byte))
    check([int(c.attrs["data-o"]) for c in dom.find("span", "cur")] == [byte], "%s: the byte outlined" % hwx.name)


def main():
    ap = argparse.ArgumentParser()
    for k in ["anec", "anec-desc", "tables", "shared", "graph", "out", "doc-images"]:
        ap.add_argument("--" + k, required=True)
    a = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skipped: chromium is not installed (apt-get install chromium)")
        return SKIP
    plist = pathlib.Path(a.shared, "testdata/external/tinygrad/net.plist")
    a.hwx = str(pathlib.Path(a.shared, "testdata/external/tinygrad/conv.hwx"))
    if not plist.exists() or not os.path.exists(a.hwx):
        print("skipped: the shared test data (%s) is missing" % a.shared)
        return SKIP
    out = pathlib.Path(a.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    browser = Browser(exe, out)

    check_errors(a, out)
    mixed = out / "report-graph.html"
    graph = pathlib.Path(a.graph)
    run([a.anec, "--tables", a.tables, "report", graph.name, "--target", "all", "-o", str(mixed),
         "--top", "5"], cwd=graph.parent)
    check(check_report(a, browser, a.graph, mixed, 5), "report_graph.json sends an operation off the engine")
    net = out / "net-plist.html"
    run([a.anec, "--tables", a.tables, "report", str(plist), "--target", "all", "-o", str(net)])
    check_report(a, browser, str(plist), net, 10)
    check_escaping(a, browser, out)
    check_large_report(a, out)
    desc = check_desc(a, browser, out)

    shots = [browser.screenshot(mixed, out / "anec-report.png"),
             browser.screenshot(desc, out / "anec-desc-html.png", "#sel=tds/0/streams/0/registers/2")]
    for png in shots:
        png_not_blank(png)
    if os.environ.get("ANEC_UPDATE_DOC_IMAGES") == "1":
        dest = pathlib.Path(a.doc_images)
        dest.mkdir(parents=True, exist_ok=True)
        for png in shots:
            shutil.copyfile(png, dest / png.name)
            print("copied", png.name, "to", dest)
    for p in out.glob("profile-*"):
        shutil.rmtree(p, ignore_errors=True)
    print("%d failure(s); pages and screenshots in %s" % (len(failures), out))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

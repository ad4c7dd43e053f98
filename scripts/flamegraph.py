#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Folded stacks to a flame graph (SVG), standard library only.

    scripts/flamegraph.py TITLE <FOLDED >OUT.svg

FOLDED has one line per distinct stack: frames from the outermost to the
leaf, separated by ';', then a space and the number of samples.  Each
frame is a box as wide as its share of the samples, its callers below
it; hovering shows its name, samples and share.  Boxes of kernel frames
(names ending in "_[k]") are orange, user frames warm red to yellow, and
"[unknown]" grey, so a broken user stack (few frames, unknown ones) shows
at a glance beside a whole one.
"""

import html
import sys
import zlib

WIDTH = 1200
ROW = 16
PAD = 10
FONT = 11
CHAR_W = FONT * 0.59
MIN_W = 0.1


def parse(lines):
    """The call tree: node = [count, {name: node}]."""
    root = [0, {}]
    for line in lines:
        line = line.rstrip("\n")
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        root[0] += n
        node = root
        for frame in stack.split(";"):
            node = node[1].setdefault(frame, [0, {}])
            node[0] += n
    return root


def colour(name):
    if name.endswith("_[k]"):
        return "rgb(230,140,50)"
    if name.startswith("[unknown]") or name == "":
        return "rgb(180,180,180)"
    h = zlib.crc32(name.encode())
    return "rgb(%d,%d,%d)" % (205 + h % 50, 80 + (h >> 8) % 150, 40 + (h >> 16) % 40)


def depth(node):
    return 1 + max((depth(c) for c in node[1].values()), default=0)


def render(root, title):
    total = max(root[0], 1)
    rows = depth(root)
    height = (rows + 1) * ROW + 3 * PAD + 2 * ROW
    scale = (WIDTH - 2 * PAD) / total
    out = [
        '<?xml version="1.0" standalone="no"?>',
        '<svg version="1.1" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">'
        % (WIDTH, height),
        '<rect width="100%" height="100%" fill="rgb(248,248,240)"/>',
        '<text x="%d" y="%d" font-size="%d" font-family="Verdana" text-anchor="middle">%s'
        " (%d samples)</text>" % (WIDTH // 2, PAD + ROW, FONT + 4, html.escape(title), root[0]),
    ]
    # Frames from the bottom up: the outermost callers at the bottom row.
    todo = []
    x = PAD + 0.0
    for name, node in sorted(root[1].items()):
        todo.append((name, node, x, 1))
        x += node[0] * scale
    while todo:
        name, node, x, level = todo.pop()
        w = node[0] * scale
        if w < MIN_W:
            continue
        y = height - PAD - level * ROW
        label = "%s (%d samples, %.2f%%)" % (name, node[0], 100.0 * node[0] / total)
        text = name
        fit = int((w - 4) / CHAR_W)
        if fit < 3:
            text = ""
        elif len(text) > fit:
            text = text[: fit - 2] + ".."
        out.append(
            '<g><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" '
            'rx="2"/>%s</g>'
            % (
                html.escape(label),
                x,
                y,
                w,
                ROW - 1,
                colour(name),
                '<text x="%.2f" y="%d" font-size="%d" font-family="Verdana">%s</text>'
                % (x + 3, y + ROW - 4, FONT, html.escape(text))
                if text
                else "",
            )
        )
        cx = x
        for cname, child in sorted(node[1].items()):
            todo.append((cname, child, cx, level + 1))
            cx += child[0] * scale
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: flamegraph.py TITLE <FOLDED >OUT.svg")
    sys.stdout.write(render(parse(sys.stdin), sys.argv[1]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Table of the benchmark figures in a guest log: median [min, max]."""
import re
import statistics
import sys


# The files of `bench walkfn`, by key: name and size of .eh_frame.
extra_files = {"libc": ("Debian 13's libc.so.6", "150 KiB"),
               "llvm": ("Debian 13's libLLVM.so.19.1", "6.0 MiB"),
               "big": ("libehbig.so (generated)", "16.8 MiB")}


def main():
    text = open(sys.argv[1], errors="replace").read().replace("\r", "")
    vals = {}
    for m in re.finditer(r"^BENCH (\S+) ([-\d.]+)(?: ([-\d.]+))?$", text, re.M):
        vals.setdefault(m[1], []).append(float(m[2]))
    failed = re.findall(r"^BENCH-FAILED.*$", text, re.M)
    info = re.findall(r"^BENCH-INFO (.*)$", text, re.M)
    rounds = len(re.findall(r"^BENCH-ROUND", text, re.M))

    def med(k):
        v = vals.get(k)
        return statistics.median(v) if v else float("nan")

    def rng(k):
        v = vals.get(k, [float("nan")])
        return f"[{min(v):.4g}, {max(v):.4g}]"

    def first_less_next(key):
        """A first walk's extra time over the next walk's, and the next's."""
        first, second = med(f"{key}_first_ns"), med(f"{key}_second_ns")
        return first - second, second

    def ratio_row(label, num, den, unit):
        print(f"| {label} | {med(num):.4g} {rng(num)} | {med(den):.4g} {rng(den)} | "
              f"{unit} | {med(num) / med(den):.3f} |")

    print(f"rounds: {rounds}; {'; '.join(info)}")
    print("\nGuest time under QEMU -icount shift=0 counts instructions: compare ratios only.\n")
    print("| measurement | deferred (ours) median [min, max] | perf synchronous median [min, max] | unit | ours / perf |")
    print("| --- | --- | --- | --- | --- |")
    for d in (8, 64, 256):
        ratio_row(f"IRQ: cost per sample, depth {d}", f"irq{d}_request_ns", f"irq{d}_perf_ns", "ns")
        ratio_row(f"NMI: cost per sample, depth {d}", f"nmi{d}_request_ns", f"nmi{d}_perf_ns", "ns")
    for d in (8, 64, 256):
        ratio_row(f"walk per frame, depth {d}", f"walk{d}_ours_ns_per_frame",
                  f"walk{d}_perf_ns_per_frame", "ns/frame")
    ratio_row("4 callers x 16 samples, one entry, depth 64", "cache_deferred_ns", "cache_sync_ns", "ns")
    for key, name, what in (("sfwalk", "SFrame", "section read, validated, compiled"),
                            ("ehwalk", ".eh_frame", ".eh_frame_hdr and .eh_frame read, compiled")):
        if f"{key}64_ours_ns_per_frame" not in vals:
            continue
        print(f"\n| our walk per frame | {name} (no frame pointers) median [min, max] | "
              f"frame pointers median [min, max] | unit | {name} / FP |")
        print("| --- | --- | --- | --- | --- |")
        for d in (8, 64, 256):
            ratio_row(f"depth {d}", f"{key}{d}_ours_ns_per_frame",
                      f"walk{d}_ours_ns_per_frame", "ns/frame")
        # The same syscall twice: the first one's extra is discovery.
        first, second = med(f"{key}cold64_first_ns"), med(f"{key}cold64_second_ns")
        print(f"\n{name}: first lookup of a file never walked (depth 64): {first - second:.0f} ns "
              f"(the walk's syscall {first:.0f} ns the first time, {second:.0f} ns the next; "
              f"ELF headers, {what} and cached)")
    if "ehlibccold64_first_ns" in vals:
        first, second = med("ehlibccold64_first_ns"), med("ehlibccold64_second_ns")
        print(f"\n.eh_frame: first walk through a libc never walked (and a small PIE), "
              f"depth 64: {first - second:.0f} ns (read and compiled)")
    if "ehlibcfncold64_first_ns" in vals:
        first, second = med("ehlibcfncold64_first_ns"), med("ehlibcfncold64_second_ns")
        print(f".eh_frame by function (table_compile_kb=0): the same first walk: "
              f"{first - second:.0f} ns (only the functions met read); the next walk "
              f"{second:.0f} ns, compiled whole {med('ehlibccold64_second_ns'):.0f} ns")
    if "libbig1_first_ns" in vals:
        print("\n| first walk through a library never walked, by function | .eh_frame | "
              "depth 1 | depth 64 |")
        print("| --- | --- | --- | --- |")
        libs = (("link", "libehlink.so (one small function)", "1 KiB"),
                ("small", "libehsmall.so (libehbig's functions, 16)", "2 KiB"),
                ("big", "libehbig.so (25 rows a function)", "16.8 MiB"))
        first_walk = {}
        for k, name, size in libs:
            if f"lib{k}1_first_ns" not in vals:
                continue
            cells = []
            for d in (1, 64):
                first_walk[k, d], second = first_less_next(f"lib{k}{d}")
                cells.append(f"{first_walk[k, d] / 1000:.1f} us (next walk {second / 1000:.1f} us)")
            print(f"| {name} | {size} | {cells[0]} | {cells[1]} |")
        # Flat in the file's size: the same functions in a file 8,000
        # times larger (the goal: at most 2x).
        if ("small", 1) in first_walk:
            print(f"\nfirst walk, depth 1, libehbig.so / libehsmall.so: "
                  f"{first_walk['big', 1] / first_walk['small', 1]:.2f}x; "
                  f"/ libehlink.so: {first_walk['big', 1] / first_walk['link', 1]:.2f}x")
    # bench walkfn: one frame of a file never walked, mapped as ld.so maps
    # it; its function is the middle one of the file's index.
    extra = {k: first_less_next(f"fn{k}") for k in ("libc", "llvm", "big")
             if f"fn{k}_first_ns" in vals}
    if extra:
        print("\n| first walk through one function never seen, in a file never seen | "
              ".eh_frame | FDEs in its index | first walk less the next | next walk |")
        print("| --- | --- | --- | --- | --- |")
        for k, (name, size) in extra_files.items():
            if k in extra:
                print(f"| {name} | {size} | {med(f'fn{k}_fdes'):.0f} | "
                      f"{extra[k][0] / 1000:.1f} us | {extra[k][1] / 1000:.1f} us |")
        firsts = [first for first, _ in extra.values()]
        if len(firsts) > 1:
            print(f"\nlargest / smallest first walk: {max(firsts) / min(firsts):.2f}x "
                  f"(goal: at most 2x, each at most 50 us)")
    if "xz_fpdefer_ns" in vals:
        print("\n| Debian's xz -6: the whole `perf record` session, cpu-clock 2 kHz | "
              "run time median | samples | perf.data bytes/sample | extra ns per sample |")
        print("| --- | --- | --- | --- | --- |")
        base = med("xz_none_ns")
        print(f"| not sampled | {base:.4g} | | | |")
        for k, name in (("fpdefer", "fp,defer"), ("dwarf", "dwarf")):
            n = med(f"xz_{k}_samples")
            t = med(f"xz_{k}_ns")
            per = (t - base) / n if n else float("nan")
            print(f"| {name} | {t:.4g} | {n:.0f} | {med(f'xz_{k}_bytes') / n if n else float('nan'):.0f} | {per:.0f} |")
    print(f"\nwalks for 4 x 16 requests in one entry: {med('cache_walks'):.0f} (perf: 64 walks)")
    base = med("workload_none_s")
    print("\n| workload (depth 64, cpu-clock 10 kHz) | run time median [min, max] | vs no sampling |")
    print("| --- | --- | --- |")
    for m in ("none", "perf", "deferred"):
        k = f"workload_{m}_s"
        print(f"| {m} | {med(k):.4g} s {rng(k)} | {med(k) / base:.3f} |")
    print("\n| real sampling events | samples | extra run time per sample (guest ns) |")
    print("| --- | --- | --- |")
    per = {}
    for m in ("perf", "deferred"):
        n = med(f"workload_{m}_samples")
        per[m] = (med(f"workload_{m}_s") - base) * 1e9 / n
        print(f"| {m} | {n:.0f} | {per[m]:.0f} |")
    print(f"\nper-sample cost of whole real events, deferred / perf: {per['deferred'] / per['perf']:.3f}")
    print("\n| getpid() | ns per call median [min, max] | ratio |")
    print("| --- | --- | --- |")
    u = med("getpid_unloaded_ns")
    for k in ("getpid_unloaded_ns", "getpid_loaded_ns"):
        print(f"| {k.split('_')[1]} | {med(k):.4g} {rng(k)} | {med(k) / u:.3f} |")
    if failed or not rounds:
        print("\n".join(failed) or "no rounds ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Faults a hostile or careless user (or a dying machine) causes, measured against their bounds.

    python -m benchmarks.faults [--out results.json] [--skip uploads,replicas,...]

- uploads: peak RSS (VmHWM) of a fresh server while it reads the worst files of each format
  at the upload limit (64 MiB): a zip/deflate bomb or lying header that claims 1-16 GiB,
  and the largest valid float32 layer under the limit. Bound: body + 2 x upload limit
  (192 MiB over the server's own peak before the uploads).
- replicas: two FFN Lab processes behind nginx running deploy/nginx.conf; a class of
  students posting compute requests; one replica is SIGKILLed mid-run. Goal: 0 requests
  lost. The README's earlier proxy configuration (no retries of POSTs) is run the same way
  for comparison.
- sigterm: time from SIGTERM to the final line of an open training stream and to the
  process's exit. Goal <= 2 s.
- slow: time until the server (started as `ffn-lab`, default timeouts) cuts an idle
  connection, one that sends its headers a byte a second, and one that sends its body a
  byte a second. Bounds: header_timeout_s (10 s) and body_timeout_s (30 s), plus 1 s.
- links: the page's parsers (static/js/state.js under Node) on hostile links of <= 16,000
  characters: the slowest link's median parse or refusal (21 runs each). Bound: 100 ms.

The machine's load average is printed with the results: the figures are from a shared
machine unless it says otherwise.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.nginx import Nginx
from tests.serverproc import ROOT, free_port, start_server, stop_server, wait_ready

READY_S = 300
"""How long a server may take to start (a shared machine under load is slow to import)."""
MIB = 1 << 20
UPLOAD_LIMIT = 64 * MIB


def _hwm(pid: int) -> int:
    """Peak resident memory (VmHWM) of `pid`, bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


# ---- uploads --------------------------------------------------------------------------------


def _zip(members: dict[str, bytes], deflate: bool) -> bytes:
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _npy(shape: tuple[int, ...], data: bytes) -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": shape}
    )
    return header.getvalue() + data


def _valid_layer() -> dict[str, Any]:
    """The largest plain float32 layer under the limit: 1024 -> 7936 (62 MiB)."""
    import torch

    d_model, d_ff = 1024, 7936
    g = torch.Generator().manual_seed(0)
    return {
        "w1": torch.randn(d_model, d_ff, generator=g) * 0.02,
        "w2": torch.randn(d_ff, d_model, generator=g) * 0.02,
    }


def worst_files(kind: str) -> dict[str, bytes]:
    """The bomb and the largest valid file of one format."""
    import torch
    from safetensors.torch import save as save_safetensors

    layer = _valid_layer()
    if kind == "npz":
        side = 1 << 14  # w1 [16384, 16384] float32 zeros: 1 GiB in about 1 MB
        bomb = _zip({"w1.npy": _npy((side, side), bytes(4 * side * side))}, deflate=True)
        buffer = io.BytesIO()
        np.savez(buffer, **{k: v.numpy() for k, v in layer.items()})
        return {"bomb (1 GiB deflated)": bomb, "valid 62 MiB": buffer.getvalue()}
    if kind == "pt":
        buffer = io.BytesIO()
        torch.save({"w1": torch.zeros(1 << 14, 1 << 14)}, buffer)
        with zipfile.ZipFile(buffer) as archive:
            members = {i.filename: archive.read(i) for i in archive.infolist()}
        bomb = _zip(members, deflate=True)
        del members
        valid = io.BytesIO()
        torch.save(layer, valid)
        return {"bomb (1 GiB deflated)": bomb, "valid 62 MiB": valid.getvalue()}
    side = 1 << 16
    header = {"w1": {"dtype": "F32", "shape": [side, side], "data_offsets": [0, 4 * side * side]}}
    text = json.dumps(header).encode()
    liar = len(text).to_bytes(8, "little") + text + bytes(MIB)
    return {"lying header (16 GiB)": liar, "valid 62 MiB": save_safetensors(layer)}


def bench_uploads() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("npz", "safetensors", "pt"):
        files = worst_files(kind)
        proc, base = start_server(env={"FFN_LAB_UPLOAD_CACHE_BYTES": "0"}, ready_timeout_s=READY_S)
        try:
            httpx.post(f"{base}/api/forward", json={"d_model": 8, "d_ff": 16}, timeout=60)
            before = _hwm(proc.pid)
            statuses = {}
            for name, data in files.items():
                response = httpx.post(
                    f"{base}/api/weights/upload",
                    params={"filename": f"layer.{kind}"},
                    content=data,
                    timeout=300,
                )
                statuses[name] = (len(data), response.status_code)
            peak = _hwm(proc.pid)
        finally:
            stop_server(proc)
        out[kind] = {
            "files": {n: {"bytes": b, "status": s} for n, (b, s) in statuses.items()},
            "peak_rss_mib": round(peak / MIB, 1),
            "over_start_mib": round((peak - before) / MIB, 1),
            "bound_over_start_mib": 3 * UPLOAD_LIMIT // MIB,
        }
        del files
    return out


# ---- replicas -------------------------------------------------------------------------------


def _class_load(base: str, seconds: float, kill: Any, students: int = 16) -> dict[str, int]:
    """`students` threads post distinct compute requests for `seconds`; `kill()` runs at a
    third of the way. Returns counts by status ("error" for a failed connection)."""
    counts: dict[str, int] = {}
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    killed = threading.Event()
    paths = ["/api/forward", "/api/perturb", "/api/block", "/api/cheaper"]

    def student(i: int) -> None:
        n = 0
        with httpx.Client(timeout=60) as client:
            while time.monotonic() < stop:
                n += 1
                body = {"d_model": 256, "d_ff": 1024, "num_tokens": 16, "seed": i * 10_000 + n}
                path = paths[n % len(paths)]
                try:
                    status = str(client.post(f"{base}{path}", json=body).status_code)
                except httpx.HTTPError:
                    status = "error"
                with lock:
                    counts[status] = counts.get(status, 0) + 1

    def killer() -> None:
        time.sleep(seconds / 3)  # the moment of the fault within the run, not a wait
        kill()
        killed.set()

    with ThreadPoolExecutor(students + 1) as pool:
        pool.submit(killer)
        for i in range(students):
            pool.submit(student, i)
    return counts


def bench_replicas(seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, deploy in (("deploy/nginx.conf", True), ("earlier README config", False)):
        first, a = start_server(ready_timeout_s=READY_S)
        second, b = start_server(ready_timeout_s=READY_S)
        try:
            with Nginx([a, b], deploy=deploy) as proxy:
                counts = _class_load(proxy.base, seconds, first.kill)
        finally:
            stop_server(first)
            stop_server(second)
        lost = sum(v for k, v in counts.items() if k != "200")
        out[name] = {"statuses": counts, "lost": lost, "goal": 0}
    return out


# ---- SIGTERM --------------------------------------------------------------------------------


def bench_sigterm(runs: int = 3) -> dict[str, Any]:
    body = {"d_model": 64, "d_ff": 512, "num_pairs": 2048, "num_classes": 16, "steps": 5000}
    last_line, exits = [], []
    final = ""
    for _ in range(runs):
        proc, base = start_server(
            env={"FFN_LAB_MAX_TRAIN_WORK": str(10**14)}, ready_timeout_s=READY_S
        )
        try:
            with (
                httpx.Client(timeout=60) as client,
                client.stream("POST", f"{base}/api/train", json={**body, "log_every": 5}) as r,
            ):
                lines = r.iter_lines()
                next(lines)
                sent = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                rest = [line for line in lines if line]
                last_line.append(time.monotonic() - sent)
                final = rest[-1] if rest else ""
            proc.wait(timeout=60)
            exits.append(time.monotonic() - sent)
        finally:
            stop_server(proc)
    return {
        "final_line_s": round(float(np.median(last_line)), 3),
        "exit_s": round(float(np.median(exits)), 3),
        "runs": runs,
        "final_line": final,
        "goal_s": 2.0,
    }


# ---- slow clients ---------------------------------------------------------------------------


def _cut_after(address: tuple[str, int], head: bytes, trickle: bytes) -> float:
    """Seconds until the server closes a connection that sent `head`, then `trickle` one
    byte a second (b"": nothing)."""
    with socket.create_connection(address) as sock:
        start = time.monotonic()
        if head:
            sock.sendall(head)
        sock.settimeout(1.0)
        for byte in trickle or bytes(120):
            if trickle:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    return time.monotonic() - start
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return time.monotonic() - start
            if chunk:  # the 408; the close follows
                return time.monotonic() - start
            return time.monotonic() - start
    return float("inf")


def bench_slow() -> dict[str, Any]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    address = ("127.0.0.1", port)
    head = b"POST /api/forward HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
    try:
        wait_ready(proc, f"http://127.0.0.1:{port}/api/health", timeout_s=READY_S)
        with ThreadPoolExecutor(3) as pool:
            idle = pool.submit(_cut_after, address, b"", b"")
            headers = pool.submit(_cut_after, address, b"", head * 10)
            body = pool.submit(
                _cut_after, address, head + b"content-length: 200\r\n\r\n", b"{" + b" " * 199
            )
            served = httpx.post(
                f"http://127.0.0.1:{port}/api/forward", json={"d_model": 8, "d_ff": 16}
            ).status_code
            out = {
                "idle_s": round(idle.result(), 2),
                "headers_byte_per_s_s": round(headers.result(), 2),
                "body_byte_per_s_s": round(body.result(), 2),
                "others_served": served,
                "bounds_s": {"header": 10 + 1, "body": 30 + 1},
            }
    finally:
        stop_server(proc)
    return out


# ---- page parsers ---------------------------------------------------------------------------

LINKS_SCRIPT = """
const fs = require("fs");
const load = (path) =>
  import("data:text/javascript," + encodeURIComponent(fs.readFileSync(path, "utf8")));
const input = JSON.parse(fs.readFileSync(0, "utf8"));
Promise.all([load(process.argv[1]), load(process.argv[2])]).then(([m, lesson]) => {
  const schema = m.makeSchema(input.boot, { steps: lesson.STEPS.length });
  // the median of 21 runs of each link (a busy machine preempts single runs)
  const times = input.links.map(([search, hash]) => {
    const runs = [];
    for (let k = 0; k < 21; k += 1) {
      const t0 = performance.now();
      m.parseState(schema, search, hash);
      runs.push(performance.now() - t0);
    }
    return runs.sort((a, b) => a - b)[10];
  });
  process.stdout.write(JSON.stringify(times));
});
"""


def hostile_links() -> list[tuple[str, str]]:
    """Links of at most 16,000 characters built to make a parser work."""
    zero = "#w=" + ",".join(["w1:99999999x0"] * 1100) + "."
    numbers = "A" * (15_990 - len("#w=w1:100x100,w2:100x100."))
    return [
        ("", "#w=w1:100000000x0,w2:0x0."),
        ("", zero[:16_000]),
        ("", "#x=100000000x0."),
        ("", "#w=w1:100x100,w2:100x100." + numbers),
        ("", "#x=64x4096." + "A" * (16_000 - 11)),
        ("?" + "&".join(f"hide={'seed,' * 200}" for _ in range(10)), ""),
        ("?tokens=" + "9" * 15_990, ""),
        ("?" + "a=1&" * 3_999, ""),
    ]


def bench_links() -> dict[str, Any]:
    from app.api.routes.pages import boot_data

    node = shutil.which("node")
    if node is None:
        return {"skipped": "node is not installed"}
    links = hostile_links()
    boot = {k: v for k, v in boot_data().items() if k != "i18n"}
    result = subprocess.run(
        [
            node,
            "-e",
            LINKS_SCRIPT,
            str(ROOT / "static" / "js" / "state.js"),
            str(ROOT / "static" / "js" / "lesson" / "steps.js"),
        ],
        input=json.dumps({"boot": boot, "links": links}),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    times = json.loads(result.stdout)
    return {
        "links": len(links),
        "longest_chars": max(len(s) + len(h) for s, h in links),
        "slowest_median_ms": round(max(times), 2),
        "median_ms_each": [round(t, 2) for t in times],
        "bound_ms": 100,
    }


# ---- main -----------------------------------------------------------------------------------

PARTS = ("links", "sigterm", "slow", "uploads", "replicas")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="also write the results (JSON)")
    parser.add_argument("--skip", default="", help=f"comma-separated parts of {PARTS}")
    parser.add_argument("--seconds", type=float, default=12.0, help="replica load duration")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    results: dict[str, Any] = {"load_average_start": os.getloadavg()}
    runners = {
        "links": bench_links,
        "sigterm": bench_sigterm,
        "slow": bench_slow,
        "uploads": bench_uploads,
        "replicas": lambda: bench_replicas(args.seconds),
    }
    for part in PARTS:
        if part in skip:
            continue
        started = time.monotonic()
        results[part] = runners[part]()
        print(f"{part} ({time.monotonic() - started:.0f} s): {json.dumps(results[part])}")
        sys.stdout.flush()
    results["load_average_end"] = os.getloadavg()
    print(f"load average: start {results['load_average_start']}, end {results['load_average_end']}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Debian's nginx run by the benchmark itself: its own nginx.conf in a temporary directory,
not daemonised, on a free loopback port; stopped (and the directory removed) on exit.

    with Nginx(upstreams=["http://127.0.0.1:8001", "http://127.0.0.1:8002"]) as proxy:
        proxy.base  # http://127.0.0.1:<port>, round robin over the two FFN Lab processes

`/__nginx_ok` answers a fixed 16-byte body from nginx itself (no upstream): the load
generator's ceiling. The same file is the README's example of running FFN Lab behind a
proxy (see `config_text`).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from tests.serverproc import ROOT, free_port, wait_ready

DEPLOY_CONF = ROOT / "deploy" / "nginx.conf"
"""The documented proxy configuration (an upstream and a server block for conf.d/)."""


def available() -> bool:
    """True when the nginx binary is installed (apt-get install nginx)."""
    return _binary() is not None


def _binary() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None


def config_text(prefix: Path, port: int, upstreams: list[str]) -> str:
    """nginx.conf: one worker, loopback only, upstream `ffn_lab` round robin over
    `upstreams` (host:port) with keep-alive connections; temp files under `prefix`."""
    servers = "\n".join(f"        server {u.removeprefix('http://')};" for u in upstreams)
    upstream = (
        f"""    upstream ffn_lab {{
{servers}
        keepalive 64;
        # below uvicorn's 5 s keep-alive: nginx must never reuse a connection the server
        # is closing (a POST is not retried: the client would get a 502)
        keepalive_timeout 4s;
    }}
"""
        if upstreams
        else ""
    )
    proxy = (
        """        location / {
            proxy_pass http://ffn_lab;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffers 64 16k;
            proxy_max_temp_file_size 0;
            client_max_body_size 16m;
        }
"""
        if upstreams
        else ""
    )
    return _main_config(
        prefix,
        f"""    keepalive_requests 100000;
{upstream}    server {{
        listen 127.0.0.1:{port};
        location = /__nginx_ok {{
            default_type application/json;
            return 200 '{{"status":"ok"}}\\n';
        }}
{proxy}    }}
""",
    )


def _main_config(prefix: Path, http_body: str) -> str:
    """nginx's main configuration with temporary paths under `prefix`, around `http_body`
    (the inside of the `http` block)."""
    return f"""daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{
    worker_connections 4096;
}}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{http_body}}}
"""


def deploy_config_text(prefix: Path, port: int, upstreams: list[str]) -> str:
    """deploy/nginx.conf as it is, run here: its upstream servers replaced by `upstreams`
    (keeping their parameters), its `listen` by loopback `port`, wrapped in a main
    configuration with temporary paths under `prefix` and a `/__nginx_ok` location."""
    text = DEPLOY_CONF.read_text(encoding="utf-8")
    servers = re.findall(r"^\s*server 127\.0\.0\.1:\d+(.*);$", text, flags=re.M)
    params = servers[0] if servers else ""
    lines = "\n".join(f"    server {u.removeprefix('http://')}{params};" for u in upstreams)
    text = re.sub(r"(^\s*server 127\.0\.0\.1:\d+.*;\n)+", lines + "\n", text, flags=re.M)
    text = text.replace(
        "    listen 80;\n",
        f"    listen 127.0.0.1:{port};\n"
        "    location = /__nginx_ok {\n        default_type application/json;\n"
        '        return 200 \'{"status":"ok"}\\n\';\n    }\n',
    )
    return _main_config(prefix, text + "\n")


class Nginx:
    """nginx in front of `upstreams` (base URLs of FFN Lab processes), or alone; with
    `deploy=True`, running the documented deploy/nginx.conf (`deploy_config_text`)."""

    def __init__(self, upstreams: list[str] | None = None, deploy: bool = False) -> None:
        self.upstreams = upstreams or []
        self.deploy = deploy
        self.base = ""
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Nginx:
        binary = _binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install -y nginx)")
        self._tmp = tempfile.TemporaryDirectory(prefix="ffn-lab-nginx-")
        prefix = Path(self._tmp.name)
        prefix.chmod(0o755)
        port = free_port()
        conf = prefix / "nginx.conf"
        write = deploy_config_text if self.deploy else config_text
        conf.write_text(write(prefix, port, self.upstreams), encoding="utf-8")
        self._proc = subprocess.Popen(
            [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(self._proc, f"{self.base}/__nginx_ok", timeout_s=20)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGQUIT)  # graceful: workers finish and exit
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

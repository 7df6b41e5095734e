"""Network faults against the whole stack (scripts/faults --network runs this): a real network path
between one service and its Postgres and broker, made slow, stuck or cut while writes go on.

The service (colony-notifications, the consumer of the measured writes) is taken out of scripts/run
and run again inside a network namespace of its own, joined to the root namespace by a veth pair:

  root namespace  10.231.0.1  cnf-host  <-- veth -->  cnf-svc  10.231.0.2  namespace colony-netfault
                                                                           colony-notifications

Inside the namespace the service keeps the addresses every service uses (127.0.0.1:<postgres>,
127.0.0.1:<broker>, auth's and circles' ports): nftables there rewrites them (DNAT) to 10.231.0.1,
with `route_localnet` and a masquerade so that a connection begun to 127.0.0.1 may leave through the
veth. This is also what makes the broker reachable: the local broker advertises 127.0.0.1:<port> in
its metadata, and a client in the namespace connecting to that advertised address is DNATed across
the veth like its bootstrap connection, so nothing about the broker changes. In the root namespace a
TCP proxy (tcp_proxy.py) listens on 10.231.0.1 at the same ports and forwards to 127.0.0.1, where
Postgres, the broker and the services listen; another of its listeners takes the service's own port
on 127.0.0.1 and forwards to 10.231.0.2, so the gateway reaches the service as before.

The faults, each 20 s (by default) while writes and reads go on:

  latency            200 ms added to every round trip service <-> Postgres (100 ms each way, the proxy)
  stall              5 % of the service's Postgres connections stop forwarding (open ones and every
                     20th new one): bytes are taken and held, nothing sent, nothing closed (the proxy)
  postgres-partition service <-> Postgres packets dropped in the namespace (nftables, no reset)
  broker-partition   service <-> broker packets dropped; a second colony-notifications in the root
                     namespace (another port, the same consumer group) must take over its partitions

Measured per fault: the writes' success and p99 (MyCirclee posts to circles, support messages to
projects, whose `circle_post` and `support_message` notifications the service makes) during and
after; the cut-off service's own reads (GET /notifications/v1/notifications through the gateway):
success, p99 and the slowest answer, during and after; how long after the fault ended its reads
succeeded again and every write accepted until then had its effect; and at the end, every accepted
write's effect exactly once. Expected: reads answer 200 or 503 within the request deadline
(COLONY_REQUEST_DEADLINE_SECONDS) and the 5 s probe of the connection it held, and never hang; writes all succeed (nothing a client writes waits on
this service); the service serves again within seconds of the fault ending; the second replica takes
the cut-off one's partitions; no effect missing or doubled.

Needs root (ip netns, nftables). Cleans up (namespace, veth, nftables, its processes) on exit.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults import (LOCAL, Writers, effects_of_messages, effects_of_posts, make_world, pid_of,  # noqa: E402
                    service_ports)
from e2e_support import ROOT, Api, Stack, read_anon_keys, wait_until  # noqa: E402

NAMESPACE = "colony-netfault"
HOST_INTERFACE, SERVICE_INTERFACE = "cnf-host", "cnf-svc"
HOST_ADDRESS, SERVICE_ADDRESS = "10.231.0.1", "10.231.0.2"
PARTITION_TABLE = "colony_partition"
SERVICE = "notifications"
READ_PATH = "/notifications/v1/notifications?limit=20"


def log(message: str) -> None:
    print(f"network-faults: {message}", flush=True)


def run(*command: str, check: bool = True, input: Optional[str] = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, check=check, capture_output=True, text=True, input=input)


def in_namespace(*command: str, check: bool = True, input: Optional[str] = None) -> subprocess.CompletedProcess:
    return run("ip", "netns", "exec", NAMESPACE, *command, check=check, input=input)


def local_env() -> dict[str, str]:
    values = {}
    for line in (LOCAL / "env").read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            values[key] = value.strip("'\"")
    return values


def percentile(values: list[float], share: float) -> Optional[float]:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 1)


# ------------------------------------------------------------------------------ the namespace


class Namespace:
    """The namespace, its veth pair and its nftables: made by `create`, gone after `remove`."""

    def __init__(self, forwarded_ports: list[int]) -> None:
        self.forwarded_ports = sorted(set(forwarded_ports))

    def create(self) -> None:
        self.remove()
        run("ip", "netns", "add", NAMESPACE)
        run("ip", "link", "add", HOST_INTERFACE, "type", "veth", "peer", "name", SERVICE_INTERFACE)
        run("ip", "link", "set", SERVICE_INTERFACE, "netns", NAMESPACE)
        run("ip", "addr", "add", f"{HOST_ADDRESS}/30", "dev", HOST_INTERFACE)
        run("ip", "link", "set", HOST_INTERFACE, "up")
        in_namespace("ip", "addr", "add", f"{SERVICE_ADDRESS}/30", "dev", SERVICE_INTERFACE)
        in_namespace("ip", "link", "set", SERVICE_INTERFACE, "up")
        in_namespace("ip", "link", "set", "lo", "up")
        in_namespace("ip", "route", "add", "default", "via", HOST_ADDRESS)
        # 127.0.0.1 may be routed out of the veth once DNAT rewrote it (route_localnet), and leaves
        # with the veth's address (masquerade), so the root namespace's answers find their way back.
        in_namespace("sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1", f"net.ipv4.conf.{SERVICE_INTERFACE}.route_localnet=1")
        ports = ", ".join(str(port) for port in self.forwarded_ports)
        in_namespace("nft", "-f", "-", input=f"""
table ip colony_paths {{
    chain output {{
        type nat hook output priority -100;
        ip daddr 127.0.0.1 tcp dport {{ {ports} }} dnat to {HOST_ADDRESS}
    }}
    chain postrouting {{
        type nat hook postrouting priority 100;
        oifname "{SERVICE_INTERFACE}" ip saddr 127.0.0.0/8 masquerade
    }}
}}
""")

    def partition(self, port: int) -> None:
        """Drops every packet to and from `port` on the root side, both ways: no reset, no ICMP,
        as a cut cable or a firewall that drops. (The filter runs after the DNAT, so it sees the
        rewritten address.)"""
        in_namespace("nft", "-f", "-", input=f"""
table inet {PARTITION_TABLE} {{
    chain output {{
        type filter hook output priority 0;
        ip daddr {HOST_ADDRESS} tcp dport {port} drop
    }}
    chain input {{
        type filter hook input priority 0;
        ip saddr {HOST_ADDRESS} tcp sport {port} drop
    }}
}}
""")

    def heal(self) -> None:
        in_namespace("nft", "delete", "table", "inet", PARTITION_TABLE, check=False)

    def remove(self) -> None:
        run("ip", "netns", "del", NAMESPACE, check=False)
        # The veth's root end goes with its peer; delete it too should the namespace have been gone.
        run("ip", "link", "del", HOST_INTERFACE, check=False)


class ProxyProcess:
    """tcp_proxy.py in the root namespace, steered over its stdin."""

    def __init__(self, listeners: list[str]) -> None:
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent / "tcp_proxy.py"),
                                         *[argument for spec in listeners for argument in ("--listen", spec)]],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.lock = threading.Lock()
        line = self.process.stdout.readline().strip() if self.process.stdout else ""
        if line != "ready":
            raise RuntimeError(f"the TCP proxy did not start ({line!r})")

    def command(self, text: str) -> str:
        with self.lock:
            assert self.process.stdin and self.process.stdout
            self.process.stdin.write(text + "\n")
            self.process.stdin.flush()
            return self.process.stdout.readline().strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


class ServiceProcess:
    """A colony-notifications started by this suite (in the namespace, or a second replica)."""

    def __init__(self, binary: str, environment: dict[str, str], port: int, namespace: bool, log_name: str) -> None:
        self.port = port
        command = ["ip", "netns", "exec", NAMESPACE, binary] if namespace else [binary]
        self.log_file = open(LOCAL / "logs" / log_name, "w")
        self.process = subprocess.Popen(command, env=environment, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()


def assigned_partitions(port: int) -> Optional[int]:
    """The sum of the service's consumers' assigned partitions (its /metrics), None if it does not answer."""
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5.0).text
    except httpx.HTTPError:
        return None
    values = [float(line.split()[-1]) for line in text.splitlines() if line.startswith("colony_consumer_assigned_partitions{")]
    return int(sum(values)) if values else None


# ---------------------------------------------------------------------------------- the reads


@dataclass
class Read:
    at: float
    status: int        # 0: no answer within the client's timeout, or the connection failed
    seconds: float


@dataclass
class Readers:
    """Reads of the cut-off service through the gateway, a few a second, each timed."""
    stack: Stack
    user: object
    timeout: float
    reads: list[Read] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> None:
        http = httpx.Client(base_url=self.stack.gateway, timeout=self.timeout)
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                status = http.get(READ_PATH, headers=self.user.headers()).status_code
            except httpx.HTTPError:
                status = 0
            with self.lock:
                self.reads.append(Read(at=started, status=status, seconds=time.monotonic() - started))
            self.stop.wait(0.2)
        http.close()

    def start(self, threads: int = 3) -> list[threading.Thread]:
        started = [threading.Thread(target=self.run, daemon=True) for _ in range(threads)]
        for thread in started:
            thread.start()
            time.sleep(0.07)
        return started


# ---------------------------------------------------------------------------------- the faults


@dataclass
class Case:
    fault: str
    started: float = 0
    healed: float = 0
    ended: float = 0
    detail: dict = field(default_factory=dict)


class Suite:
    def __init__(self, arguments: argparse.Namespace) -> None:
        self.arguments = arguments
        self.environment = local_env()
        self.ports = service_ports()
        self.service_port = self.ports[SERVICE]
        self.pg_port = int(self.environment["COLONY_PG_PORT"])
        self.broker_port = int(self.environment["COLONY_KAFKA_BROKERS"].rsplit(":", 1)[1])
        self.namespace: Optional[Namespace] = None
        self.proxy: Optional[ProxyProcess] = None
        self.processes: list[ServiceProcess] = []

    # -- the service out of scripts/run, into the namespace

    def take_service(self) -> tuple[str, dict[str, str]]:
        """Stops scripts/run's colony-notifications (COLONY_RESTART=0: it is not started again) and
        returns its binary and environment, for starting it again here."""
        pid = pid_of(SERVICE)
        assert pid, f"no pid for colony-{SERVICE}"
        binary = os.readlink(f"/proc/{pid}/exe")
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        environment = dict(item.decode().split("=", 1) for item in raw if b"=" in item)
        os.kill(pid, signal.SIGTERM)
        wait_until(f"scripts/run's colony-{SERVICE} to stop", lambda: not Path(f"/proc/{pid}").exists(), timeout=60)
        return binary, environment

    def setup(self) -> None:
        binary, environment = self.take_service()
        loopback_ports = {int(port) for value in environment.values() for port in re.findall(r"127\.0\.0\.1:(\d+)", value)}
        forwarded = sorted((loopback_ports | {self.pg_port, self.broker_port}) - {self.service_port})
        log(f"namespace {NAMESPACE}: colony-{SERVICE} on {SERVICE_ADDRESS}:{self.service_port}; "
            f"127.0.0.1:{{{', '.join(map(str, forwarded))}}} reached through the veth (postgres {self.pg_port}, broker {self.broker_port})")
        self.namespace = Namespace(forwarded)
        self.namespace.create()
        listeners = [f"{HOST_ADDRESS}:{port}=127.0.0.1:{port}" for port in forwarded]
        listeners.append(f"127.0.0.1:{self.service_port}={SERVICE_ADDRESS}:{self.service_port}")
        self.proxy = ProxyProcess(listeners)
        self.binary = binary
        self.service_environment = {**environment, "COLONY_HTTP_HOST": "0.0.0.0", "COLONY_HTTP_PORT": str(self.service_port)}
        service = ServiceProcess(binary, self.service_environment, self.service_port, namespace=True, log_name=f"{SERVICE}-netns.log")
        self.processes.append(service)
        self.wait_consuming(service, "the namespaced service")

    def wait_consuming(self, service: ServiceProcess, what: str) -> None:
        def consuming() -> bool:
            assert service.alive(), f"{what} exited (see its log)"
            partitions = assigned_partitions(service.port)
            return bool(partitions)
        wait_until(f"{what} to have partitions", consuming, timeout=120, interval=0.5)

    def cleanup(self) -> None:
        for process in self.processes:
            process.stop()
        self.processes = []
        if self.proxy:
            self.proxy.stop()
            self.proxy = None
        if self.namespace:
            self.namespace.remove()
            self.namespace = None

    # -- one fault

    def inject(self, case: Case, replica: Optional[ServiceProcess]) -> None:
        assert self.namespace and self.proxy
        fault, seconds = case.fault, self.arguments.seconds
        if fault == "latency":
            self.proxy.command(f"{self.pg_port} latency {self.arguments.latency / 2}")
        elif fault == "stall":
            self.proxy.command(f"{self.pg_port} stall {self.arguments.stall}")
        elif fault == "postgres-partition":
            self.namespace.partition(self.pg_port)
        elif fault == "broker-partition":
            self.namespace.partition(self.broker_port)
        else:
            raise ValueError(fault)
        deadline = case.started + seconds
        moved_at = None
        while time.monotonic() < deadline:
            if replica and moved_at is None and case.detail.get("partitions_before"):
                if (assigned_partitions(replica.port) or 0) >= case.detail["partitions_before"]:
                    moved_at = time.monotonic()
                    case.detail["partitions_moved_seconds"] = round(moved_at - case.started, 1)
            time.sleep(0.25)
        if fault in ("latency", "stall"):
            stats = json.loads(self.proxy.command("stats"))
            case.detail["proxy"] = next(item for item in stats if item["listen"].endswith(f":{self.pg_port}"))
            self.proxy.command(f"{self.pg_port} normal")
        else:
            self.namespace.heal()

    def run_case(self, fault: str, writers: Writers, readers: Readers) -> Case:
        case = Case(fault=fault)
        replica = None
        if fault == "broker-partition":
            # The second replica joins the group first; the cut-off one must lose its partitions to it.
            replica_port = self.arguments.replica_port
            environment = {**self.service_environment, "COLONY_HTTP_HOST": "127.0.0.1", "COLONY_HTTP_PORT": str(replica_port)}
            replica = ServiceProcess(self.binary, environment, replica_port, namespace=False, log_name=f"{SERVICE}-replica.log")
            self.processes.append(replica)
            self.wait_consuming(replica, "the second replica")
            wait_until("the group to settle", lambda: (assigned_partitions(self.service_port) or 0) > 0
                       and (assigned_partitions(replica_port) or 0) > 0, timeout=120, interval=0.5)
            case.detail["partitions_before"] = (assigned_partitions(self.service_port) or 0) + (assigned_partitions(replica_port) or 0)
            case.detail["replica_partitions_before"] = assigned_partitions(replica_port)
        case.started = time.monotonic()
        self.inject(case, replica)
        case.healed = time.monotonic()
        log(f"{fault}: healed after {case.healed - case.started:.1f}s")
        # After: reads succeed again, and every write accepted until the heal has its effect.
        with writers.lock:
            accepted = [write for write in writers.writes if write.id and write.at <= case.healed]
        posts = {write.id for write in accepted if write.kind == "post"}
        messages = {write.id for write in accepted if write.kind == "support"}
        drain_deadline = case.healed + self.arguments.drain_timeout
        while time.monotonic() < drain_deadline:
            if (len(effects_of_posts(writers.world.member.id, posts)) == len(posts)
                    and len(effects_of_messages(writers.world.creator.id, messages)) == len(messages)):
                case.detail["drain_seconds"] = round(time.monotonic() - case.healed, 1)
                break
            time.sleep(0.5)
        # Let the after-window fill.
        while time.monotonic() < case.healed + self.arguments.after:
            time.sleep(0.25)
        if replica:
            case.detail["replica_partitions_after_heal"] = assigned_partitions(replica.port)
            case.detail["cut_off_partitions_after_heal"] = assigned_partitions(self.service_port)
            replica.stop()
            self.processes.remove(replica)
        case.ended = time.monotonic()
        return case


def window(items: list, start: float, end: float) -> list:
    return [item for item in items if start <= item.at < end]


def summarize(case: Case, writes: list, reads: list[Read], deadline: float) -> dict:
    during_writes, after_writes = window(writes, case.started, case.healed), window(writes, case.healed, case.ended)
    during_reads, after_reads = window(reads, case.started, case.healed), window(reads, case.healed, case.ended)

    def success(items: list) -> Optional[float]:
        return round(100 * sum(1 for item in items if 200 <= item.status < 300) / len(items), 1) if items else None

    def write_seconds(items: list) -> list[float]:
        return [item.seconds for item in items if hasattr(item, "seconds")]

    failed_after = [read for read in after_reads if not 200 <= read.status < 300]
    # Recovered: from the heal to the answer of the last failed read after it (0 when none failed).
    recovered = round(max(read.at + read.seconds for read in failed_after) - case.healed, 1) if failed_after else 0.0
    statuses = sorted({read.status for read in during_reads + after_reads})
    entry = {
        "fault": case.fault, "seconds": round(case.healed - case.started, 1),
        "writes_during": len(during_writes), "write_success_during": success(during_writes),
        "writes_after": len(after_writes), "write_success_after": success(after_writes),
        "write_p99_ms_during": percentile(write_seconds(during_writes), 0.99),
        "write_p99_ms_after": percentile(write_seconds(after_writes), 0.99),
        "reads_during": len(during_reads), "read_success_during": success(during_reads),
        "read_success_after": success(after_reads),
        "read_p99_ms_during": percentile([read.seconds for read in during_reads], 0.99),
        "read_p99_ms_after": percentile([read.seconds for read in after_reads], 0.99),
        "read_slowest_s": round(max((read.seconds for read in during_reads + after_reads), default=0), 2),
        "read_statuses": statuses,
        "recovered_seconds": recovered,
        **case.detail,
    }
    problems = []
    # The deadline, then the probe of the connection the request held (5 s, Database's LeaseWatch).
    if entry["read_slowest_s"] > deadline + 5 + 3:
        problems.append(f"a read took {entry['read_slowest_s']}s (deadline {deadline:g}s, then the 5 s probe)")
    if any(status not in (200, 503) for status in statuses):
        problems.append(f"reads answered {statuses} (200 or 503 expected)")
    if (entry["write_success_during"] or 100) < 100 or (entry["write_success_after"] or 100) < 100:
        problems.append("writes failed")
    if recovered > 15:
        problems.append(f"reads recovered only {recovered}s after the fault ended")
    if "drain_seconds" not in case.detail:
        problems.append("the writes accepted until the fault ended did not all have their effects")
    if case.fault == "broker-partition" and "partitions_moved_seconds" not in case.detail:
        problems.append("the second replica did not take the cut-off replica's partitions")
    entry["problems"] = problems
    return entry


def print_table(rows: list[dict], totals: dict) -> None:
    def cell(value) -> str:
        return "-" if value is None else str(value)
    headers = ["fault", "writes ok during/after %", "write p99 during/after ms", "reads ok during/after %",
               "read p99 during/after ms", "slowest read s", "recovered s", "drained s", "partitions moved s"]
    lines = [[row["fault"], f"{cell(row['write_success_during'])}/{cell(row['write_success_after'])}",
              f"{cell(row['write_p99_ms_during'])}/{cell(row['write_p99_ms_after'])}",
              f"{cell(row['read_success_during'])}/{cell(row['read_success_after'])}",
              f"{cell(row['read_p99_ms_during'])}/{cell(row['read_p99_ms_after'])}",
              cell(row["read_slowest_s"]), cell(row["recovered_seconds"]), cell(row.get("drain_seconds")),
              cell(row.get("partitions_moved_seconds"))] for row in rows]
    widths = [max(len(headers[index]), *(len(line[index]) for line in lines)) for index in range(len(headers))]
    print("| " + " | ".join(header.ljust(width) for header, width in zip(headers, widths)) + " |")
    print("|" + "|".join("-" * (width + 2) for width in widths) + "|")
    for line in lines:
        print("| " + " | ".join(value.ljust(width) for value, width in zip(line, widths)) + " |")
    print(f"effects: {totals['accepted']} writes accepted, {totals['effects']} effects, {totals['missing']} missing, "
          f"{totals['duplicates']} duplicates", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", default="latency,stall,postgres-partition,broker-partition")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long each fault lasts")
    parser.add_argument("--after", type=float, default=20.0, help="seconds measured after each fault")
    parser.add_argument("--latency", type=float, default=0.2, help="added round-trip seconds")
    parser.add_argument("--stall", type=float, default=0.05, help="share of connections stalled")
    parser.add_argument("--rate", type=float, default=20.0, help="writes per second")
    parser.add_argument("--deadline", type=float, default=float(os.environ.get("COLONY_REQUEST_DEADLINE_SECONDS", "15")),
                        help="the services' request deadline, seconds")
    parser.add_argument("--replica-port", type=int, default=int(os.environ.get("COLONY_NETWORK_FAULTS_REPLICA_PORT", "8098")))
    parser.add_argument("--drain-timeout", type=float, default=120.0)
    parser.add_argument("--report", type=Path, default=LOCAL / "logs" / "network-faults-report.json")
    arguments = parser.parse_args()
    if os.geteuid() != 0:
        log("needs root (ip netns, nftables)")
        return 2

    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    stack = Stack(gateway=os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}"),
                  keys=read_anon_keys(Path(os.environ.get("COLONY_API_KEYS_FILE", LOCAL / "api-keys.txt"))),
                  mail_dir=Path(os.environ.get("COLONY_MAIL_DIR", LOCAL / "mail")))
    suite = Suite(arguments)
    atexit.register(suite.cleanup)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    api = Api(stack)
    try:
        suite.setup()
        world = make_world(api, supporters=2)
        log(f"world ready: circle {world.circle}, project {world.project}")
        writers = Writers(world=world, stack=stack, threads=4, rate=arguments.rate)
        # Time each write too (faults.py's writers keep when it began, not how long it took).
        timed_writers = TimedWriters.wrap(writers)
        write_threads = timed_writers.start()
        readers = Readers(stack=stack, user=world.member, timeout=arguments.deadline + 30)
        read_threads = readers.start()
        time.sleep(5)
        cases = []
        for fault in arguments.faults.split(","):
            log(f"{fault}: for {arguments.seconds:g}s")
            cases.append(suite.run_case(fault, writers, readers))
        writers.stop.set()
        readers.stop.set()
        for thread in write_threads + read_threads:
            thread.join()
        posts = {write.id for write in writers.writes if write.kind == "post" and write.id}
        messages = {write.id for write in writers.writes if write.kind == "support" and write.id}
        deadline = time.monotonic() + arguments.drain_timeout
        while time.monotonic() < deadline:
            if (len(effects_of_posts(world.member.id, posts)) == len(posts)
                    and len(effects_of_messages(world.creator.id, messages)) == len(messages)):
                break
            time.sleep(0.5)
        post_effects, message_effects = effects_of_posts(world.member.id, posts), effects_of_messages(world.creator.id, messages)
        totals = {"writes": len(writers.writes), "accepted": len(posts) + len(messages),
                  "effects": len(post_effects) + len(message_effects),
                  "missing": (len(posts) - len(post_effects)) + (len(messages) - len(message_effects)),
                  "duplicates": sum(count - 1 for count in [*post_effects.values(), *message_effects.values()] if count > 1)}
        rows = [summarize(case, writers.writes, readers.reads, arguments.deadline) for case in cases]
        report = {"service": SERVICE, "deadline_seconds": arguments.deadline, "fault_seconds": arguments.seconds,
                  "latency_ms": arguments.latency * 1000, "stall_share": arguments.stall, "totals": totals, "faults": rows}
        arguments.report.parent.mkdir(parents=True, exist_ok=True)
        arguments.report.write_text(json.dumps(report, indent=2))
        print_table(rows, totals)
        ok = totals["missing"] == 0 and totals["duplicates"] == 0
        for row in rows:
            for problem in row["problems"]:
                ok = False
                log(f"FAIL {row['fault']}: {problem}")
        log(f"report: {arguments.report}")
        log("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        api.close()
        suite.cleanup()


class TimedWriters:
    """faults.py's writers, with each write's duration noted on it (`seconds`) for the p99s."""

    @staticmethod
    def wrap(writers: Writers) -> Writers:
        class TimedList(list):
            def append(self, write) -> None:  # called under the writers' lock, right after the answer
                write.seconds = time.monotonic() - write.at
                super().append(write)
        writers.writes = TimedList(writers.writes)
        return writers


if __name__ == "__main__":
    sys.exit(main())

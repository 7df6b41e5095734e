"""A small asyncio TCP proxy for the network faults (network_faults.py): forwards one listening
address to one target, and on command adds latency, stalls a share of its connections, or goes
silent. This machine's kernel has no netem, so what a slow or stuck link does to a client is done
here, on the path, in user space.

  latency   every chunk is delayed by `delay` seconds in each direction (order kept), so a request
            and its answer take 2 x delay more
  stall     a share of the connections (those open now and those accepted from now on) stop
            forwarding: bytes are read by the kernel and left there, nothing is sent, nothing closed
  silent    every connection stops forwarding, and new ones are accepted and left silent
  normal    everything flows again (a stalled connection's held bytes go on)

Run as a program it serves listeners given on the command line and reads commands on stdin, one a
line, answering `ok` (so a driver in another network namespace can steer it):

  python tcp_proxy.py --listen 10.231.0.1:5432=127.0.0.1:5432 [--listen ...]
  stdin: `PORT latency 0.1` | `PORT stall 0.05` | `PORT silent` | `PORT normal` | `stats`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

CHUNK = 65536


@dataclass
class Link:
    """One proxied connection: its two pumps and whether it is held (stalled)."""
    index: int
    flowing: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task] = field(default_factory=list)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        for writer in self.writers:
            writer.close()


class Proxy:
    def __init__(self, listen_host: str, listen_port: int, target_host: str, target_port: int) -> None:
        self.listen = (listen_host, listen_port)
        self.target = (target_host, target_port)
        self.delay = 0.0
        self.stall_share = 0.0
        self.silent = False
        self.links: dict[int, Link] = {}
        self.accepted = 0
        self.stalled = 0
        self.server: Optional[asyncio.AbstractServer] = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.accept, *self.listen, reuse_address=True)

    async def stop(self) -> None:
        if self.server:
            self.server.close()
        for link in list(self.links.values()):
            link.close()

    # --------------------------------------------------------------------------- the faults

    def set_latency(self, delay: float) -> None:
        self.delay = delay

    def set_stall(self, share: float) -> None:
        """Stalls `share` of the open connections (at least one, when there are any) and, from
        now on, every (1/share)th new one."""
        self.stall_share = share
        open_links = [link for link in self.links.values() if link.flowing.is_set()]
        for link in open_links[:math.ceil(share * len(open_links))]:
            self.hold(link)

    def set_silent(self) -> None:
        self.silent = True
        for link in self.links.values():
            self.hold(link)

    def set_normal(self) -> None:
        self.delay, self.stall_share, self.silent = 0.0, 0.0, False
        for link in self.links.values():
            link.flowing.set()

    def hold(self, link: Link) -> None:
        if link.flowing.is_set():
            self.stalled += 1
        link.flowing.clear()

    def stats(self) -> dict:
        return {"listen": f"{self.listen[0]}:{self.listen[1]}", "open": len(self.links), "accepted": self.accepted,
                "stalled": self.stalled, "delay": self.delay, "stall_share": self.stall_share, "silent": self.silent}

    # --------------------------------------------------------------------------- forwarding

    async def accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        link = Link(index=self.accepted)
        link.flowing.set()
        stall_every = round(1 / self.stall_share) if self.stall_share > 0 else 0
        if self.silent or (stall_every and link.index % stall_every == 0):
            self.hold(link)
        self.links[link.index] = link
        link.writers.append(client_writer)
        try:
            target_reader, target_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            del self.links[link.index]
            return
        link.writers.append(target_writer)
        link.tasks = [asyncio.ensure_future(self.pump(link, client_reader, target_writer)),
                      asyncio.ensure_future(self.pump(link, target_reader, client_writer))]
        try:
            # Either side closing ends both (a held link stays until its peer closes it).
            await asyncio.wait(link.tasks, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass  # the proxy stopping
        finally:
            link.close()
            self.links.pop(link.index, None)

    async def pump(self, link: Link, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copies one direction. Chunks wait out the delay in order in a queue, so latency does not
        cut the throughput of a busy connection; a held link reads nothing (the kernel's buffers
        fill and the sender's TCP stalls, as behind a stuck middlebox)."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def send() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    return
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await link.flowing.wait()
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(send())
        try:
            while True:
                await link.flowing.wait()
                data = await reader.read(CHUNK)
                await queue.put((time.monotonic() + self.delay, data))
                if not data:
                    break
            await sender
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError):
            pass
        finally:
            sender.cancel()


def parse_listen(text: str) -> tuple[str, int, str, int]:
    listen, target = text.split("=", 1)
    listen_host, listen_port = listen.rsplit(":", 1)
    target_host, target_port = target.rsplit(":", 1)
    return listen_host, int(listen_port), target_host, int(target_port)


async def serve(specs: list[str]) -> None:
    proxies: dict[int, Proxy] = {}
    for spec in specs:
        proxy = Proxy(*parse_listen(spec))
        await proxy.start()
        proxies[proxy.listen[1]] = proxy
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = (await reader.readline()).decode().strip()
        if not line:
            if reader.at_eof():
                break
            continue
        words = line.split()
        try:
            if words[0] == "stats":
                print(json.dumps([proxy.stats() for proxy in proxies.values()]), flush=True)
                continue
            proxy = proxies[int(words[0])]
            command = words[1]
            if command == "latency":
                proxy.set_latency(float(words[2]))
            elif command == "stall":
                proxy.set_stall(float(words[2]))
            elif command == "silent":
                proxy.set_silent()
            elif command == "normal":
                proxy.set_normal()
            else:
                raise ValueError(command)
            print("ok", flush=True)
        except (KeyError, IndexError, ValueError) as error:
            print(f"error {error!r}", flush=True)
    for proxy in proxies.values():
        await proxy.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", action="append", required=True, help="HOST:PORT=TARGET_HOST:TARGET_PORT")
    arguments = parser.parse_args()
    asyncio.run(serve(arguments.listen))


if __name__ == "__main__":
    main()

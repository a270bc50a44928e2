"""Where a lab server listens, read from the kernel's socket table (``/proc/net/tcp`` and
``tcp6``), not from what the server says: every lab server must listen on loopback only, and
one with no host option (the Portkey gateway) is held there by ``lab/loopback.cjs``, so the
lab checks the table while the server runs.

A listening socket belongs to a process when one of ``/proc/PID/fd`` links to its inode; a lab
server is the process group it was started as (its own session), so its helpers (vLLM's engine,
the mock beside a gateway) are judged with it.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

LISTEN = "0A"
"""The ``st`` column of a listening TCP socket."""


@dataclass(frozen=True)
class Listening:
    address: str
    port: int
    inode: int

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback


def _address(hex_address: str) -> str:
    """``0100007F`` or a 32-digit IPv6 as the kernel prints it (32-bit words in host order)."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    if len(words) == 4:
        return str(ipaddress.IPv4Address(words))
    address = ipaddress.IPv6Address(words)
    return str(address.ipv4_mapped or address)


def listening_sockets(proc: Path = Path("/proc")) -> list[Listening]:
    """Every listening TCP socket of the machine (of this network namespace)."""
    found = []
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == LISTEN:
                address, port = fields[1].split(":")
                found.append(Listening(_address(address), int(port, 16), int(fields[9])))
    return found


def group_pids(pgid: int, proc: Path = Path("/proc")) -> set[int]:
    """The processes of the process group ``pgid``."""
    pids: set[int] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # after "pid (comm)": state, ppid, pgrp
        if len(fields) > 2 and int(fields[2]) == pgid:
            pids.add(int(entry.name))
    return pids


def socket_inodes(pids: set[int], proc: Path = Path("/proc")) -> set[int]:
    inodes: set[int] = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in (proc / str(pid) / "fd").iterdir()]
        except OSError:
            continue
        inodes.update(int(link[8:-1]) for link in links if link.startswith("socket:["))
    return inodes


def listening_of_group(pgid: int) -> list[Listening]:
    """The listening TCP sockets of the process group ``pgid`` (a lab server)."""
    inodes = socket_inodes(group_pids(pgid))
    return [each for each in listening_sockets() if each.inode in inodes]


def off_loopback(pgid: int) -> list[str]:
    """``address:port`` of each socket the group ``pgid`` listens on beyond loopback."""
    return [f"{each.address}:{each.port}" for each in listening_of_group(pgid)
            if not each.loopback]

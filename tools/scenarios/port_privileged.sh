#!/bin/bash
# Make PyTorch's TCPStore, asyncio and uvicorn print a bind refused on a port below 1024 (no GPU, no network). Run as
# root: setpriv drops CAP_NET_BIND_SERVICE, so the process is refused as a non-root user is (errno 13, EACCES):
#   OUT=/tmp/privport PY=/path/to/python-with-torch-and-uvicorn tools/scenarios/port_privileged.sh
#   tcpstore-libuv.log      TCPStore(..., use_libuv=True): "failed to bind. port: 98, ..., name: EACCES"
#   tcpstore-classic.log    TCPStore(..., use_libuv=False): "failed to bind to [::]:98 (errno: 13 - Permission denied)"
#   asyncio.log             loop.create_server on port 80 (vLLM's and SGLang's API servers bind through it)
#   uvicorn.log             uvicorn.run on port 80: the same error, logged
set -u
OUT=${OUT:-/tmp/privport}
PY=${PY:-python3}
DROP=(setpriv --bounding-set=-net_bind_service --inh-caps=-net_bind_service)
mkdir -p "$OUT" || exit 1
for backend in libuv classic; do
  "${DROP[@]}" "$PY" -c "
import datetime
import torch.distributed as dist
dist.TCPStore('0.0.0.0', 98, 1, True, timeout=datetime.timedelta(seconds=5), use_libuv='$backend' == 'libuv')" \
    > "$OUT/tcpstore-$backend.log" 2>&1
done
"${DROP[@]}" "$PY" -c "
import asyncio
async def main():
    await asyncio.get_running_loop().create_server(asyncio.Protocol, '0.0.0.0', 80)
asyncio.run(main())" > "$OUT/asyncio.log" 2>&1
printf 'async def app(scope, receive, send):\n    pass\n' > "$OUT/app.py"
(cd "$OUT" && "${DROP[@]}" "$PY" -c "import uvicorn; uvicorn.run('app:app', host='0.0.0.0', port=80)") > "$OUT/uvicorn.log" 2>&1
tail -n 1 "$OUT"/tcpstore-*.log "$OUT/asyncio.log"
grep -h Errno "$OUT/uvicorn.log"

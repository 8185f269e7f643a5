"""torchelastic's error file (`error.json`) read as the log it is: the exception and its Python traceback.

The file is written by `torch.distributed.elastic.multiprocessing.errors.record` (error_handler.py
`record_exception`): `{"message": {"message": "RuntimeError: ...", "extraInfo": {"py_callstack": "Traceback
...", "timestamp": "1795642187"}}}`, or the older `{"message": "...", "timestamp": N}`; the agent may add
`errorCode`. The traceback is what the rank raised, so it is scanned like any traceback.
"""

from __future__ import annotations

import json

MAX_ERROR_FILE = 4 << 20  # bytes; a bigger file is read as plain text


def error_file_text(data: bytes) -> bytes:
    """The traceback (else the message) of an error file as log lines; anything else is left as it is."""
    try:
        doc = json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return data
    message = doc.get("message") if isinstance(doc, dict) else None
    text = None
    if isinstance(message, dict):
        extra = message.get("extraInfo")
        stack = extra.get("py_callstack") if isinstance(extra, dict) else None
        text = stack if isinstance(stack, str) and stack.strip() else message.get("message")
    elif isinstance(message, str):
        text = message
    if not isinstance(text, str):
        return data
    return text.encode("utf-8", errors="replace").rstrip(b"\n") + b"\n"

#!/usr/bin/env bash
# CPython's own fatal errors, as the examples of signatures/host/process-crashed.yaml quote them. Each case makes the
# interpreter print its "Fatal Python error: ..." block on stderr (the three lines of each are printed here).
# Run with the Python the examples name (3.11); the messages differ before 3.9 ("deallocating None" alone).
set -u
PY=${PY:-python3}
echo "== none_dealloc (a refcount bug: None freed)"
"$PY" -c 'import ctypes, sys
for _ in range(sys.getrefcount(None) + 10): ctypes.pythonapi.Py_DecRef(ctypes.py_object(None))' 2>&1 | head -3
echo "== PyThreadState_Get without the GIL (ctypes.CDLL releases it around the call)"
"$PY" -c 'import ctypes; ctypes.CDLL(None).PyThreadState_Get()' 2>&1 | head -3
echo "== a broken PYTHONHOME (start-up check: not a crash)"
PYTHONHOME=/nonexistent "$PY" -c pass 2>&1 | grep -a "^Fatal Python error"
exit 0

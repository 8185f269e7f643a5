#!/usr/bin/env python3
"""Re-render the verl and ROLL lines of sample_logs/health/ with those frameworks' own code and compare byte for byte.

    python tools/check_metric_samples.py SRC    # SRC holds checkouts named volcengine+verl and alibaba+ROLL

Needs numpy (>= 2, as the samples' np.float64(...) values show) and orjson. Checks verl's console logger
(verl/utils/logger/aggregate_logger.py concat_dict_to_str), verl's file logger (orjson.dumps with
OPT_SERIALIZE_NUMPY, verl/utils/tracking.py FileLogger) and ROLL's StdoutTracker.log (roll/utils/tracking.py).
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import re
import sys
from types import ModuleType

import numpy as np
import orjson

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample_logs", "health")


def _load(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _value(text: str) -> object:
    m = re.fullmatch(r"np\.float64\((.*)\)", text)
    if m:
        return np.float64(float(m.group(1)))
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def _lines(*names: str) -> list[str]:
    out: list[str] = []
    for name in names:
        with open(os.path.join(SAMPLES, name), encoding="utf-8") as fh:
            out += [line.rstrip("\n") for line in fh]
    return out


def main(src: str) -> int:
    bad = 0
    agg = _load("verl_aggregate_logger", os.path.join(src, "volcengine+verl/verl/utils/logger/aggregate_logger.py"))
    same = differ = 0
    for line in _lines("verl-console-healthy.log", "verl-console-mismatch-grad-nan.log"):
        at = line.find("step:")
        if at < 0 or " - " not in line[at:]:
            continue
        body = line[at:]
        parts = body.split(" - ")
        data = {k: _value(v) for k, v in (p.rsplit(":", 1) for p in parts[1:])}
        if agg.concat_dict_to_str(data, int(parts[0][5:])) == body:
            same += 1
        else:
            differ += 1
    print(f"verl concat_dict_to_str: {same} lines identical, {differ} differ")
    bad += differ
    same = differ = 0
    for line in _lines("verl-file-logger-healthy.jsonl", "verl-file-logger-entropy-reward-collapse.jsonl"):
        if orjson.dumps(json.loads(line), option=orjson.OPT_SERIALIZE_NUMPY).decode() == line:
            same += 1
        else:
            differ += 1
    print(f"verl FileLogger (orjson): {same} lines identical, {differ} differ")
    bad += differ
    sys.path.insert(0, os.path.join(src, "alibaba+ROLL"))
    os.environ.setdefault("ROLL_LOG_DIR", "/tmp/roll_logs_check")
    from roll.utils import tracking  # type: ignore[import-not-found]

    same = differ = 0
    for line in _lines("roll-rlvr-healthy.log", "roll-rlvr-mismatch-straggler.log"):
        at = line.find("metrics_tag: ")
        if at < 0:
            continue
        data = json.loads(line[at + 13:])
        buf = io.StringIO()
        handler = logging.StreamHandler(buf)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger = logging.getLogger(tracking.logger.name)
        logger.addHandler(handler)
        tracking.StdoutTracker(config={}).log(values=data["metrics"], step=data["step"])
        logger.removeHandler(handler)
        if buf.getvalue().rstrip("\n") == line[at:]:
            same += 1
        else:
            differ += 1
    print(f"ROLL StdoutTracker: {same} lines identical, {differ} differ")
    bad += differ
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))

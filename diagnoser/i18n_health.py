"""The words of the training-health report (issue 17) in both languages; i18n.py merges them into its table, so
`msg(key, lang)` finds them like any other (kept apart only to keep i18n.py readable)."""

from __future__ import annotations

HEALTH: dict[str, dict[str, str]] = {
    # metric series judged by the health rules (judge/health.py), shown by report/health.py, text.py, markdown.py
    "health": {"en": "Training health", "zh": "训练健康"},
    "health_headline": {"en": "No crash, but the training metrics went bad", "zh": "没有崩溃，但训练指标已经变坏"},
    "metric": {"en": "metric", "zh": "指标"},
    "metric_label": {"en": "Metric", "zh": "指标"},
    "series_label": {"en": "Series", "zh": "走势"},
    "steps": {"en": "began → tripped", "zh": "开始 → 触发步"},
    "values": {"en": "values", "zh": "数值"},
    "series": {"en": "series", "zh": "走势"},
    "health_values": {"en": "{start_value} at step {start} → {value} at step {step}",
                      "zh": "第 {start} 步 {start_value} → 第 {step} 步 {value}"},
    "health_value": {"en": "{value} at step {step}", "zh": "第 {step} 步 {value}"},
    "health_baseline": {"en": " (baseline {reference})", "zh": "（基线 {reference}）"},
    "precursor_line": {"en": "← began earlier: {title} ({metric} from step {start}, {start_value} → {value} at "
                             "step {step})",
                       "zh": "← 更早开始：{title}（{metric} 自第 {start} 步起，{start_value} → 第 {step} 步 {value}）"},
}

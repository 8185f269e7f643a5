"""Reporting: the report model and its JSON contract, the text and Markdown renderers, the catalog."""

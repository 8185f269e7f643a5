"""Modes: batch (files and folders), live (--follow) and run (wrap a command) drive one pipeline."""

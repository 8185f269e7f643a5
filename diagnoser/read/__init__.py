"""Reading: sources (stdin, files, gzip, folders, followed files) → normalised lines → tracebacks per stream."""

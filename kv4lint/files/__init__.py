"""The scanned tree's files: which to scan and their language, the pre-filter, regular files only, isolation."""

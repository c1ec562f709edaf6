"""The local web app (``knowgap serve``): browse runs, compare two, label samples."""

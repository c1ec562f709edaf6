"""Case files users bring: importing spreadsheets (``tabular``), building adversarial cases (``inject``), and
the ``knowgap data`` commands over them (``io_commands``)."""

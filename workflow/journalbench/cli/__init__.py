"""The controller's command line, `journalbench COMMAND`: main.py builds the parser from each
command module's `register`; `python -m journalbench.cli` runs it."""

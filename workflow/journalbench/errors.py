"""Errors the command line reports as one line (stdlib only: the agent bundle imports it)."""


class ConfigError(ValueError):
    """Bad input file: the message is one line naming the file and the field."""


class AgentError(RuntimeError):
    """The agent refused or failed to do something on the test host; the message says what."""


class DamagedRunFolders(ConfigError):
    """Run folders the analysis cannot go on with: one line each, naming the folder and how to
    restore it, then one line saying what stopped."""

"""What the user asked for (shell): the command line, the config file, the run's context, and
shell completion generated from the parser."""

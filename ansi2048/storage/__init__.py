"""The local data directory (shell): the saved game, best scores, the history file, every path
opened, and where the user's directories are."""

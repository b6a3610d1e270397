"""``ansi2048 serve``: the game over SSH, for anyone with a terminal.

Everything here is shell (sockets, databases, the clock) around the same
pure core the keyboard game drives; ``store`` is the storage interface and
its databases.
"""

"""``ansi2048 serve``: the game over SSH, for anyone with a terminal.

Everything here is shell (sockets, databases, the clock) around the same
pure core the keyboard game drives, split by role (the package docstring of
:mod:`ansi2048` maps the modules): the server and its connections
(``server``, ``log``, ``connection``), a session and what it runs (``session``,
``session_games``, ``session_commands``, ``commands``), a player's game
(``game``, ``keeping``, ``pauses``, ``channel``), watching and replays (``live``,
``watch``, ``watch_list``, ``replay``, ``replay_clock``), the daily game
(``daily``, ``ranked``, ``verify``), ``limits``, ``names``, ``pool``,
``store``, the storage interface and its databases, and ``web``, the
browser door (``--http``).
"""

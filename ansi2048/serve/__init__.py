"""``ansi2048 serve``: the game over SSH, for anyone with a terminal.

Everything here is shell (sockets, databases, the clock) around the same
pure core the keyboard game drives, in layers, from the bottom up (a module
imports only from its own layer and those below; tests/test_architecture.py
checks it, and docs/design.md follows a key through them):

0. foundations: ``names``, ``limits``, ``settings``, ``requests`` (each
   command's request, parsed), ``link`` (what a command has of its channel),
   ``guard`` (the limits around every channel), ``accounting`` (a
   connection's log line), ``store``, ``daily``, ``secrecy``, ``log``,
   ``pool``, ``kexguess``, ``takeover``, ``workers``, ``backup``,
   ``replay_clock``, ``watch_list``;
1. the shared state: ``live``, ``pauses``, ``keeping``, ``race_hall``
   (the lobbies and races), ``race_records`` (the races listed);
2. ``context``: the one :class:`~.context.ServeContext` handlers are given;
3. a command's parts: ``game`` (the game's driver, composed), its parts
   ``game_parts`` and ``saving``, ``ranked_game`` (the daily game's rules
   for the driver), ``ranked`` (opening the day's game), ``replay``,
   ``watch``, ``verify``, ``race_replay``;
4. the commands' entry points: ``play_commands``, ``viewer_commands``,
   ``record_commands``, ``race_session``, ``web.link_commands``;
5. ``commands``: the one table of commands;
6. ``ssh_channel``: a session channel; 7. ``connection``: a client;
8. ``web``: the browser door (``--http``); 9. ``server``; 10. ``cli``.
"""

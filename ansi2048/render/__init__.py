"""What the player sees: state in, text out (pure, no I/O).

- :mod:`.codes`: the control codes, named once.
- :mod:`.style`: colour depths, colours, text styles and their SGR codes;
  spans of styled text and their visible width.
- :mod:`.palette`: the tile colours (the original game's), per colour depth.
- :mod:`.color`: perceptual distance (CIEDE2000) and WCAG contrast, for choosing colours.
- :mod:`.board`: the layouts, the tiles, the board moving or under a message.
- :mod:`.motion`: where the tiles are during a move.
- :mod:`.lines`: frames as values (lines of pieces of spans) until they are
  written; the bounded caches of painted lines.
- :mod:`.frame`: the :class:`~.frame.View` of a session, and
  ``build_frame``, which turns a view into one frame (``frame_lines``: its
  text); the plain ``summary_text`` for pipes and logs.
- :mod:`.keymap`: the keys as set up, and the key line; :mod:`.help`: the
  help screen.
- :mod:`.repaint`: the ``Repainter``, which writes each frame over the last,
  comparing values: only the pieces that changed.

Every glyph used is single-width, so a line's visible width is its length once
the escape codes are stripped. Frame lines are kept strictly narrower than the
terminal: a line that fills the last column leaves the cursor in a
pending-wrap state that breaks the cursor-up arithmetic of the next repaint.
"""

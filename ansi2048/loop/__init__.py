"""The game's loop (pure): (state, event) in, (state, effects) out, for every way of playing."""

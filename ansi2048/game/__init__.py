"""The rules (pure): the numbers that bound a game, the engine, keys to actions, the session
around a game, and the JSON Lines objects a bot reads."""

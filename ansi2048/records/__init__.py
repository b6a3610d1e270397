"""Records (pure): the recording format and replay, and the history's records and statistics."""

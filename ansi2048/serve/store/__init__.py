"""The server's storage: one interface (:mod:`.base`), SQLite by default,
PostgreSQL when several servers share one database. The game code above
it does not know which database is underneath."""

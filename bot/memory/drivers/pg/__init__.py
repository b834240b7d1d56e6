"""The PostgreSQL backend: the same storage interface as the files, shared by any number of bot processes."""

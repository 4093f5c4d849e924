"""The run's settings: the option table, configuration files, the release a repository pins."""

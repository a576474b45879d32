"""The embedded sites: a shop and a forum the package serves itself on loopback, one private state per task."""

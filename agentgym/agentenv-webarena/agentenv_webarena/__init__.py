"""WebArena's interface in a real browser: its accessibility-tree observation, its action grammar, Chromium."""

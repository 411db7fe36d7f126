from .fakes import rt  # noqa: F401  (the stand-in Runtime fixture)

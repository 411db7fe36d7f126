"""flower's version, in a module of its own so that any layer can read it.

The face (``flower.__version__``) re-exports it; the plugin system and the store's
migrations read it from here, since importing the package ``flower`` would reach every
layer through its lazy names. The build (``[tool.hatch.version]``) reads this file.
"""

__version__ = "0.1.0"

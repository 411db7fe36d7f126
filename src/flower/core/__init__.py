"""The old home of flower's modules, empty since the layering (ARCHITECTURE.md).

``flower.core.X`` still imports, with a DeprecationWarning, through :mod:`flower.moved`.
"""

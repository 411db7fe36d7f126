"""flower's default plugins: one module per concern, each hook implemented ``trylast=True``.

They reproduce the documented behaviour; an installed plugin implementing the same hook
runs first and, for ``firstresult`` hooks, replaces the default by returning a value.
"""

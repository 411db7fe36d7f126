"""The kernel's types and facilities every layer may use.

Step results, events, language, text and formats, redaction, credentials and the
environment. It imports no implementation module (import-linter checks it); the plugin
system (:mod:`flower.hookspecs`, :mod:`flower.plugin_types`, :mod:`flower.plugins`) sits
just above it; see ARCHITECTURE.md.
"""

"""The glance gate (flower.core.ephemeral): its rules, its corpora, and a real run of them."""

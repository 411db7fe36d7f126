"""The glance gate (flower.roles.ephemeral): its rules, its corpora, and a real run of them."""

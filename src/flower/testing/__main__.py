"""``python -m flower.testing serve script.json``: the scripted model, standalone."""

from flower.testing.cli import scripted_model

if __name__ == "__main__":
    scripted_model(prog_name="python -m flower.testing")

"""The Textual user interface; the only package that imports textual."""

"""LightGBM's models and text model files, read into a tree table."""

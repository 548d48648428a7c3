"""XGBoost's models, documents (JSON, UBJSON) and files, read into a tree table."""

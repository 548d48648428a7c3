"""Readers: each turns one library's fitted tree model into a tree table.

scikit-learn's trees and forests (``sklearn``), HistGradientBoosting
(``hist_gradient_boosting``), XGBoost (``xgboost/``: the model, its JSON or
UBJSON document and files) and LightGBM (``lightgbm/``: the model, its text
and arrays); ``dispatch`` says which reader reads which model. Readers only
use the objects they are given: importing them never imports an optional
model library.
"""

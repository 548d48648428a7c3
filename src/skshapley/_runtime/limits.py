"""Limits on what skshapley reads, allocates and runs, stated once.

Model files and parameters come from users and, through the command line,
from files they downloaded. Every size that a file or a parameter can make
skshapley allocate or loop over is bounded here, checked before any
third-party or compiled code sees it, and stated in the documentation
(``docs/user_guide/security.rst``).
"""

# Features (columns) of a model. A file claiming more is refused before any
# per-feature array is made.
MAX_FEATURES = 1_000_000

# Outputs of a model (classes, targets).
MAX_OUTPUTS = 100_000

# Orderings a permutation explainer draws per row: their memory is bounded
# by max_memory (drawn in chunks), their time is not.
MAX_PERMUTATIONS = 2**31 - 1

# Quadrature points per game (the exact rule for 131,072 players).
MAX_QUADRATURE_POINTS = 65_536

# The largest count or node index a model file may state: XGBoost and LightGBM
# store them as 32-bit signed integers.
INT32_MAX = 2**31 - 1

# Bytes of a model file (JSON, UBJSON, LightGBM text, skops archive, and the
# total size of a skops archive's members once decompressed).
MAX_MODEL_FILE_BYTES = 2**31

# Working memory of one thread of the compiled tree walk; the rows walked
# together are chosen to fit it.
MAX_SCRATCH_BYTES_PER_THREAD = 2**28

# Bound on a tree model's output scale: the sum over trees of the largest
# |leaf value| plus the largest |base offset|. Below it, raw outputs, base
# values and Shapley values (each at most a small multiple of it) stay finite
# in float64 (max ~1.8e308) with room for sums over rows.
MAX_OUTPUT_SCALE = 1e300

# Bytes of data text the command reads by default (decompressed, for .csv.gz;
# Parquet: uncompressed column data). Reading numeric CSV text takes up to
# about 6 times its size in memory at its peak ("0," becomes an 8-byte
# float), and the attributions as much again: 256 MiB of text needs about
# 2 GB. The command's --max-data-bytes raises or lowers it.
DEFAULT_MAX_DATA_BYTES = 2**28

"""Sphinx configuration for the skshapley documentation.

Build with ``sphinx-build -b html docs docs/_build/html`` after installing the
``docs`` extra. Every script in ``examples/`` is executed by sphinx-gallery.
"""

from skshapley import __version__

project = "skshapley"
author = "The skshapley developers"
copyright = "The skshapley developers"
release = __version__
version = ".".join(__version__.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build"]
templates_path = ["_templates"]
default_role = "literal"

# API pages: one generated page per public name, numpydoc-formatted.
autosummary_generate = True
autodoc_typehints = "none"
# The API page lists every public name itself; numpydoc would repeat the
# members of AxiomReport in its own table.
numpydoc_show_class_members = False
numpydoc_validation_checks = set()

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable/", None),
    "scipy": ("https://docs.scipy.org/doc/scipy/", None),
    "sklearn": ("https://scikit-learn.org/stable/", None),
    "pandas": ("https://pandas.pydata.org/docs/", None),
}

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Execute every example, not only those named plot_*.py.
    "filename_pattern": r".*\.py$",
    # The examples print their results and draw nothing, so matplotlib (an
    # optional extra) is not needed to build the gallery.
    "image_scrapers": (),
    "abort_on_example_error": True,
    "doc_module": ("skshapley",),
    "reference_url": {"skshapley": None},
    "backreferences_dir": "generated/backreferences",
    "download_all_examples": False,
}

html_theme = "alabaster"
html_title = f"skshapley {release}"

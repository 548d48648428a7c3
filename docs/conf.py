"""Sphinx configuration for the skshapley documentation.

Build as the README's "Documentation" section says (``.ci/run`` runs that
command). Every script in ``examples/`` is executed by sphinx-gallery. The
build needs no network: there is no intersphinx (its inventories are fetched
from the web) and MathJax is served from the build's own ``_static`` folder.
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
    "sphinx.ext.mathjax",
    # Ships MathJax 3 and points mathjax_path at the copy it puts in _static:
    # the pages render math without a CDN.
    "sphinx-mathjax-offline",
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

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Execute every example, not only those named plot_*.py.
    "filename_pattern": r".*\.py$",
    # By file name: the two explain_* examples first, as examples/README.txt
    # lists them.
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    # The examples print what they mean to show; the repr of a Display
    # returned by a block's last line would only add a memory address.
    "capture_repr": (),
    "abort_on_example_error": True,
    # No sg_execution_times pages: they load their table scripts from CDNs.
    # The build's log still prints each example's time.
    "write_computation_times": False,
    "doc_module": ("skshapley",),
    "reference_url": {"skshapley": None},
    "backreferences_dir": "generated/backreferences",
    "download_all_examples": False,
}

html_theme = "alabaster"
html_title = f"skshapley {release}"

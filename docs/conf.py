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
# A class page's table of contents names its methods without the class.
toc_object_entries_show_parents = "hide"

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
    # An example picks its thumbnail with a "# sphinx_gallery_thumbnail_number"
    # comment; the rendered code leaves such comments out.
    "remove_config_comments": True,
}

# The PyData theme (scikit-learn's, pandas', NumPy's): the top-level toctree
# of index.rst is the navigation bar, each section's pages are the left
# sidebar, and a page's headings the right one. Its styles, scripts and icons
# ship with the theme: nothing is fetched, at build time or when reading.
html_theme = "pydata_sphinx_theme"
html_title = f"skshapley {release}"
html_static_path = ["_static"]
html_css_files = ["skshapley.css"]
# The pages' reST sources are not published beside them.
html_show_sourcelink = False

# The version switcher, off until versions are published: set this to
#   {"json_url": "https://<docs site>/versions.json", "version_match": version}
# (a JSON list of {"version": ..., "url": ...}) and the navigation bar shows
# it. check_switcher stays False so that the build never reads that URL.
version_switcher = None

html_theme_options = {
    "navbar_align": "left",
    "navbar_end": [
        *(["version-switcher"] if version_switcher else []),
        "theme-switcher",
        "navbar-icon-links",
    ],
    **({"switcher": version_switcher} if version_switcher else {}),
    "check_switcher": False,
    "icon_links": [
        {
            "name": "Source on GitHub",
            "url": "https://github.com/skshapley/skshapley",
            "icon": "fa-brands fa-github",
        },
    ],
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
# The front page has no section of its own to navigate: no left sidebar.
html_sidebars = {"index": []}

"""The browsable HTML site: pages as HTML, source highlighting, navigation and search data."""

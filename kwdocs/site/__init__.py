"""The browsable HTML site: pages as HTML, navigation and search data, the local web server."""

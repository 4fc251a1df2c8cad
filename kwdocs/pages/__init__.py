"""Pages from facts: where each page lives, the page models, and rendering them to Markdown."""

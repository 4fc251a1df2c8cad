"""The build steps that doit runs: extract, link, render, keywords, assemble.

Data flows one way through JSON state under ``<out>/.kwdocs``, per *unit* (a
folder, or a bucket of a folder holding thousands of files, so that an edit
never re-reads one enormous shard):

    sources --extract:<unit>--> facts/<id>.json    what each file defines and imports
    facts   --link------------> links/<id>.json    which file each import names; users
    facts + links --render:<unit>--> the unit's file pages
    facts   --keywords--------> keywords.md (per letter when large), from the entries saved beside the facts
    facts   --assemble--------> index.md and doc.md of every folder
    pages   --prune-----------> pages and state of gone files removed

Each step rewrites a state file only when its content changes, so doit's time
stamp check cuts off everything downstream of an edit that changes nothing.  Page
texts come from ``kwdocs.pages.compose``; these modules, one per step, only decide what to
redo and write it.  Each step returns counts for the build summary.
"""

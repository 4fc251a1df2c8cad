"""Markdown, reST and plain text: headings, code-like identifiers, overview text."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from kwdocs.extract import extract_bytes
from kwdocs.extract import prose, text
from kwdocs.extract.identifiers import MAX_SCAN_CHARS, find_identifiers

FIXTURES = Path(__file__).parent / "fixtures" / "prose"


def extract_fixture(name: str) -> dict:
    module = prose if name.endswith((".md", ".rst")) else text
    return module.extract((FIXTURES / name).read_text(encoding="utf-8"), f"docs/{name}")


def headings(facts: dict) -> list[tuple[str, int, str]]:
    return [(s["name"], s["line"], s["detail"]) for s in facts["symbols"] if s["kind"] == "heading"]


def identifiers(facts: dict) -> dict[str, int]:
    return {s["name"]: s["line"] for s in facts["symbols"] if s["kind"] == "identifier"}


def names(found_text: str, markup: str = "") -> list[str]:
    return [name for name, _ in find_identifiers(found_text, markup=markup).found]


def test_markdown_headings_outside_code_comments_and_front_matter():
    assert headings(extract_fixture("distributed.md")) == [
        ("Distributed communication package", 15, "level 1"),
        ("Environment variables", 25, "level 2"),  # closing #s dropped
        ("Debugging", 32, "level 2"),               # Setext ---
        ("Launch utility", 40, "level 1"),          # Setext ===
    ]


def test_rst_titles_with_levels_in_order_of_first_use():
    assert headings(extract_fixture("ddp.rst")) == [
        ("Distributed Data Parallel", 4, "level 1"),  # over- and underline
        ("Example", 15, "level 2"),
        ("Internal Design", 25, "level 3"),
        ("Construction", 32, "level 2"),
        ("Forward Pass", 43, "level 2"),  # underline one short: docutils still takes it
    ]


def test_code_like_names_are_identifiers_and_english_words_are_not():
    found = identifiers(extract_fixture("distributed.md"))
    assert found["ProcessGroupNCCL"] == 12
    assert found["NCCL_DEBUG"] == 29
    assert found["init_process_group"] == 17          # inline code, `()` dropped
    assert found["torch.distributed"] == 11
    assert found["GLOO_SOCKET_IFNAME"] == 30          # in a table
    assert found["dist.init_process_group"] == 22      # in a code block
    assert found["TORCH_DISTRIBUTED_DEBUG"] == 35
    for word in ("The", "This", "We", "However", "Debugging", "NOTE", "SOFTWARE", "PROVIDED",
                 "setup.py", "e.g", "c10d_logger", "pytorch.org"):
        assert word not in found, word


def test_rst_roles_and_literals_give_their_targets():
    found = identifiers(extract_fixture("ddp.rst"))
    assert found["torch.nn.parallel.DistributedDataParallel"] == 8  # :class:`~...` and :class:`...`
    assert found["torch.distributed.init_process_group"] == 30       # :func:`...`
    assert found["find_unused_parameters"] == 13                     # ``...``
    assert found["NCCL_DEBUG"] == 29                                 # ``NCCL_DEBUG=INFO``
    assert found["_DDPSink"] == 45
    assert "_ddp" not in found and "ddp" not in found                # a link target, not code


@pytest.mark.parametrize("sample, expected", [
    ("The DataLoader and MSELoss and Conv2d in float16 or bf16 on GPU0", ["DataLoader", "MSELoss", "Conv2d",
                                                                         "float16", "bf16", "GPU0"]),
    ("Use DDP, FSDP and NCCL; many GPUs and APIs, the CPU or IDs", ["DDP", "FSDP", "NCCL", "CPU"]),
    ("commit a3f5c9e12b, version v2, line L124, x86 and maths x_i W_q", []),
    ("We call torch.cuda.is_available() and os.environ.get", ["torch.cuda.is_available", "os.environ.get"]),
    ("see www.example.com/a_b or mail dev_team@example.com", []),
    ("__init__ and __torch_function__ are dunders", ["__init__", "__torch_function__"]),
    ("random aGVsbG8gd29ybGQxMjM4 noise", []),
    ("qL but iOS, isSetUpToDate and lib1Version2", ["iOS", "isSetUpToDate", "lib1Version2"]),
])
def test_identifier_shapes(sample, expected):
    assert names(sample) == expected


def test_underscores_read_by_markup():
    sample = "Use _private, _emphasis_ and link_ here"
    assert names(sample, "markdown") == []
    assert names(sample, "rst") == ["_private", "_emphasis_"]
    assert names(sample) == ["_private", "_emphasis_", "link_"]


def test_each_identifier_once_at_its_first_line_in_order():
    scan = find_identifiers("x\nuse NCCL_DEBUG\nagain NCCL_DEBUG and `init_process_group`\n"
                            "init_process_group DataLoader\n")
    assert scan.found == [("NCCL_DEBUG", 2), ("init_process_group", 3), ("DataLoader", 4)]


@pytest.mark.parametrize("huge", [
    "hello world foo_bar Baz " * 220_000,        # 5 MB of short words on one line
    "a" * 5_000_000,                             # one 5 MB word
    "a." * 2_500_000,                            # a dotted name that never ends
    "x@" * 2_500_000,                            # almost e-mail addresses
    "`a " * 1_700_000,                           # unclosed code spans
])
def test_a_huge_one_line_file_is_cheap_and_says_it_was_cut(huge):
    started = time.process_time()
    scan = find_identifiers(huge)
    assert time.process_time() - started < 1.0
    assert str(f"{MAX_SCAN_CHARS:,}") in scan.note


def test_markdown_overview_is_the_first_paragraph_without_markup():
    assert extract_fixture("distributed.md")["docstring"] == (
        "The torch.distributed package lets processes on one or more machines exchange tensors. "
        "This page explains how ProcessGroupNCCL and the other backends are chosen. "
        "We assume you know DistributedDataParallel.")


def test_a_link_on_a_line_of_its_own_goes_on_the_paragraph_a_row_of_links_does_not():
    """google/uuid's README breaks its first sentence before a link (``based on`` /
    ``[RFC 9562](https://...)`` / ``and DCE 1.1 ...``): the folder's overview quoted "... UUIDs
    based on". A row of links or badges under the title is still no paragraph."""
    text = ("# uuid\n[![CI](https://ci/badge.svg)](https://ci) [Docs](https://docs) | [Chat](https://chat)\n\n"
            "The uuid package generates and inspects UUIDs based on\n[RFC 9562](https://rfc)\n"
            "and DCE 1.1: Authentication and Security Services.\n\nMore.\n")
    assert prose.extract(text, "README.md")["docstring"] == (
        "The uuid package generates and inspects UUIDs based on RFC 9562 and DCE 1.1: "
        "Authentication and Security Services.")


def test_rst_overview_skips_titles_directives_and_roles():
    assert extract_fixture("ddp.rst")["docstring"] == (
        "DistributedDataParallel (DDP) transparently performs distributed data parallel training. "
        "This page describes how it works and reveals implementation details, such as "
        "find_unused_parameters.")


@pytest.mark.parametrize("source", ["", "\n", "One line without a newline", "Title\n=====", "#", "=====",
                                    "```\nnever closed", "<!-- never closed\n# x"])
@pytest.mark.parametrize("name", ["a.md", "a.rst"])
def test_degenerate_documents_do_not_fail(source, name):
    facts = prose.extract(source, name)
    assert isinstance(facts["docstring"], str) and isinstance(facts["symbols"], list)


def test_overview_is_cut_at_a_word():
    long_paragraph = "# Title\n\n" + "word " * 400 + "\n"
    overview = prose.extract(long_paragraph, "README.md")["docstring"]
    assert len(overview) <= prose.MAX_OVERVIEW_CHARS + 2 and overview.endswith("word …")


def test_prose_symbols_are_on_their_lines_and_sorted():
    for name in ("distributed.md", "ddp.rst"):
        source = (FIXTURES / name).read_text(encoding="utf-8").split("\n")
        facts = extract_fixture(name)
        for symbol in facts["symbols"]:
            assert symbol["name"] in source[symbol["line"] - 1], symbol
        keys = [(s["line"], s["name"]) for s in facts["symbols"]]
        assert keys == sorted(keys)


def test_dispatch_through_extract_bytes():
    facts, _, _ = extract_bytes("docs/ddp.rst", (FIXTURES / "ddp.rst").read_bytes())
    assert facts["language"] == "rst" and ("Example", 15, "level 2") in headings(facts)
    facts, _, _ = extract_bytes("docs/build_notes.txt", (FIXTURES / "build_notes.txt").read_bytes())
    assert facts["language"] == "text" and "TORCH_CUDA_ARCH_LIST" in identifiers(facts)


def test_text_file_identifiers_and_leading_comment():
    facts = extract_fixture("build_notes.txt")
    assert facts["docstring"] == ("Build notes for the CUDA extension.\n"
                                  "Set TORCH_CUDA_ARCH_LIST before running setup.py.")
    assert identifiers(facts) == {"CUDA": 1, "TORCH_CUDA_ARCH_LIST": 2, "USE_CUDA": 4, "MAX_JOBS": 4,
                                  "torch.utils.cpp_extension.load": 5, "CUDAExtension": 5}


def test_licence_text_gives_no_overview_and_no_keywords():
    facts = extract_fixture("LICENSE.txt")
    assert facts == {"symbols": [], "docstring": ""}


@pytest.mark.parametrize("source, expected", [
    ("#!/bin/bash\n# Builds the wheel.\nset -e\n", "Builds the wheel."),
    ("/*\n * Kernel launch helpers.\n * Second line.\n */\nint x;\n", "Kernel launch helpers.\nSecond line."),
    ("// Copyright (c) Meta Platforms, Inc.\n\n// Tensor iterator tests.\n", "Tensor iterator tests."),
    ("# -*- coding: utf-8 -*-\n# vim: set ts=4:\n", ""),
    ("plain text first\n# a comment later\n", ""),
])
def test_leading_comment(source, expected):
    assert text.leading_comment(source) == expected

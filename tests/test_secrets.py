"""Secrets stay out of the output.

Files that commonly hold secrets are skipped by default, and each is named in
a problem line; the list is configurable.  Any string the security rules take
for a secret is masked wherever a page could show it (embedded source,
findings, the overview, signatures, keywords, the keyword index): the test
plants many kinds of secret in many kinds of place and greps everything the
build wrote, its state included, for each of them.
"""
from __future__ import annotations

import os
import random
import string
from pathlib import Path

import pytest

from kwdocs.config import DEFAULT_SECRET_FILES
from tests.conftest import run_kwdocs
from tests.output_checks import pages

def made_up(kind: str, length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """A fixed random-looking string per kind, sharing no substring worth the name with the others."""
    generator = random.Random(kind)
    return "".join(generator.choice(alphabet) for _ in range(length))


# One value per kind of secret the shipped rules know; every one is made up.
SECRETS = {
    "aws access key id": "AKIA" + made_up("aws id", 16, string.ascii_uppercase + string.digits),
    "aws secret access key": made_up("aws secret", 40, string.ascii_letters + string.digits + "/+"),
    "private key body": "MIIEow" + made_up("private key", 58),
    "github token": "ghp_" + made_up("github", 36),
    "slack token": "xoxb-2048-" + made_up("slack", 24),
    "google api key": "AIza" + made_up("google", 35),
    "stripe live key": "sk_live_" + made_up("stripe", 24),
    "openai key": "sk-proj-" + made_up("openai", 48),
    "json web token": "eyJhbGciOiJIUzI1NiJ9.eyJ" + made_up("jwt payload", 20) + "." + made_up("jwt signature", 24),
    "password in a url": "Pw-" + made_up("url password", 14),
    "password assignment": "Pw-" + made_up("password", 16),
    "token in yaml": made_up("yaml token", 22),
    "npm token": "npm_" + made_up("npm", 36),
}

PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\n" + SECRETS["private key body"]
               + "\nAnotherLineOfTheKeyKwd0cs==\n-----END RSA PRIVATE KEY-----\n")


def plant(src: Path) -> None:
    """Secrets where a page would show them: source, docstrings, signatures, prose, data, comments."""
    files = {
        "app/settings.py": (
            f'"""Settings. The deploy key is {SECRETS["github token"]}, rotate it yearly."""\n'
            f'AWS_ACCESS_KEY_ID = "{SECRETS["aws access key id"]}"\n'
            f'aws_secret_access_key = "{SECRETS["aws secret access key"]}"\n'
            f'DATABASE_URL = "postgres://admin:{SECRETS["password in a url"]}@db.internal/app"\n'
            f'\n\ndef connect(user: str, password="{SECRETS["password assignment"]}"):\n'
            f'    """Connect with token {SECRETS["slack token"]}."""\n'
            f'    return (user, password)\n'),
        "app/keys.py": f'PRIVATE = """\n{PRIVATE_KEY}"""\nSTRIPE = "{SECRETS["stripe live key"]}"\n',
        "docs/setup.md": (
            "# Setup\n\n"
            f"Export `{SECRETS['aws access key id']}` and `{SECRETS['google api key']}` first.\n\n"
            f"Then call `login({SECRETS['openai key']})` with the header `Bearer {SECRETS['json web token']}`.\n"),
        "deploy/ci.yaml": f'jobs:\n  build: 1\napi_token: "{SECRETS["token in yaml"]}"\n',
        "deploy/run.sh": f'#!/bin/sh\n# Publishes with {SECRETS["npm token"]}\nexport NPM_TOKEN="{SECRETS["npm token"]}"\n',
        "deploy/config.json": f'{{"google": "{SECRETS["google api key"]}", "stripe": "{SECRETS["stripe live key"]}"}}\n',
        "native/client.h": f'#define GITHUB_TOKEN "{SECRETS["github token"]}"\nint connect(void);\n',
        "notes.txt": f"the key {SECRETS['aws access key id']} and {SECRETS['openai key']} were revoked\n",
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")


SECRET_FILES = {   # a name matching each default glob, with a unique content
    ".env": "DB_PASSWORD=from-dot-env", "config/.env.production": "SECRET=from-env-production",
    "tls/server.pem": "pem-content", "tls/server.key": "key-content", "home/.ssh/id_rsa": "rsa-content",
    "home/.ssh/id_dsa": "dsa-content", "home/.ssh/id_ecdsa.pub": "ecdsa-content",
    "home/.ssh/id_ed25519": "ed25519-content", "home/_netrc": "netrc-windows-content", "tls/client.p12": "p12-content", "tls/client.pfx": "pfx-content",
    "home/.netrc": "machine x login y password netrc-content", "aws/credentials": "credentials-content",
    "aws/credentials.json": "credentials-json-content", "vault/passwords.kdbx": "kdbx-content",
    "home/.pgpass": "pgpass-content", "android/release.keystore": "keystore-content", "java/trust.jks": "jks-content",
}


def secret_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    plant(src)
    for rel, text in SECRET_FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(f"{text}-{rel}\n", encoding="utf-8")
    return src


def everything_written(out: Path) -> bytes:
    """Every byte of every file the build wrote, kwdocs' state included."""
    return b"\n".join(Path(folder, name).read_bytes() for folder, _, names in os.walk(out) for name in names)


def build(src: Path, out: Path, capsys, *extra: str) -> list[str]:
    capsys.readouterr()
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), *extra) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem: ")]


def test_every_default_glob_has_a_planted_file():
    import fnmatch
    names = [Path(rel).name for rel in SECRET_FILES]
    for glob in DEFAULT_SECRET_FILES:
        assert any(fnmatch.fnmatch(name, glob) for name in names), glob


def test_files_that_hold_secrets_are_skipped_and_said_so(tmp_path, capsys):
    src, out = secret_tree(tmp_path), tmp_path / "out"
    problems = build(src, out, capsys)
    for rel in SECRET_FILES:
        assert f"problem: {rel}: skipped: may hold secrets (see 'secret_files' in the configuration)" in problems
    written = everything_written(out)
    for rel, text in SECRET_FILES.items():
        assert text.encode() not in written, rel
        assert f"{rel}_docs.md" not in pages(out)


def test_secret_files_are_configurable(tmp_path, capsys):
    src, out = secret_tree(tmp_path), tmp_path / "out"
    (src / "pyproject.toml").write_text('[tool.kwdocs]\nsecret_files = ["*.pem", "vault/*"]\n')
    problems = {line.split(": ")[1] for line in build(src, out, capsys)}
    assert problems >= {"tls/server.pem", "vault/passwords.kdbx"}
    assert ".env_docs.md" in pages(out) and "tls/server.key_docs.md" in pages(out)
    assert "tls/server.pem_docs.md" not in pages(out)

    (src / "pyproject.toml").write_text("[tool.kwdocs]\nskip_secret_files = false\n")
    assert not [line for line in build(src, out, capsys) if "may hold secrets" in line]
    assert "home/.ssh/id_rsa_docs.md" in pages(out)


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_no_secret_is_written_anywhere(secret_build, kind):
    written, _ = secret_build
    secret = SECRETS[kind]
    assert secret.encode() not in written, f"the {kind} is written in full"
    hidden = secret[len(secret) // 2:]   # masking keeps at most a quarter, at the start
    assert hidden.encode() not in written, f"the second half of the {kind} is written"


def test_the_pages_say_what_was_masked(secret_build):
    _, out = secret_build
    settings = (out / "app/settings.py_docs.md").read_text(encoding="utf-8")
    assert "Secrets that look hard-coded were masked" in settings
    assert "hard-coded secret" in settings or "AWS" in settings
    assert "def connect(" in settings and "AWS_ACCESS_KEY_ID" in settings, "the rest of the source is still there"
    assert "connect" in (out / "app/settings.py_kw.md").read_text(encoding="utf-8")


@pytest.fixture
def secret_build(tmp_path) -> tuple[bytes, Path]:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    plant(src)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    return everything_written(out), out

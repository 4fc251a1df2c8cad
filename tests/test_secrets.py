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
import yaml

from kwdocs.config import DEFAULT_SECRET_FILES
from kwdocs.rules.ruleset import RuleSet, mask_secrets
from kwdocs.scan import GlobSet
from tests.conftest import run_kwdocs
from tests.output_checks import pages, run_build

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
    "deploy/prod.env": "DB_PASSWORD=prod-env-content", "home/.npmrc": "//r/:_authToken=npmrc-content",
    "home/.pypirc": "[pypi]\npassword = pypirc-content", "web/.htpasswd": "htpasswd-content",
    "home/.git-credentials": "git-credentials-content", "home/.docker/config.json": "docker-config-content",
    "home/.kube/config": "kube-config-content", "cluster/kubeconfig": "kubeconfig-content",
    "cluster/prod.kubeconfig": "prod-kubeconfig-content",
}


def secret_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    plant(src)
    for rel, text in SECRET_FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(f"{text}-{rel}\n", encoding="utf-8")
    return src


# the site's static files, copied as kwdocs ships them: no source's bytes reach them (the vendored
# Mermaid's 3.5 MB hold any three letters a short secret's hidden part may be)
SHIPPED = {path.read_bytes() for path in (Path(__file__).resolve().parent.parent / "templates/html/static").iterdir()}


def everything_written(out: Path, src: Path | None = None) -> bytes:
    """Every byte of every file the build wrote, kwdocs' state included, but the shipped static files;
    with ``src``, the symbol index a query makes from that state first."""
    if src is not None:     # a name found nowhere: exit 1, the index made
        assert run_kwdocs("find", "no_such_name_anywhere", "--src", str(src), "--out", str(out)) == 1
        assert (out / ".kwdocs" / "symbols.sqlite3").is_file()
    written = (Path(folder, name).read_bytes() for folder, _, names in os.walk(out) for name in names)
    return b"\n".join(data for data in written if data not in SHIPPED)


def build(src: Path, out: Path, capsys, *extra: str) -> list[str]:
    capsys.readouterr()
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), *extra) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem: ")]


def test_every_default_glob_has_a_planted_file():
    for glob in DEFAULT_SECRET_FILES:
        assert any(GlobSet([glob]).match(rel) for rel in SECRET_FILES), glob


def test_files_that_hold_secrets_are_skipped_and_said_so(tmp_path, capsys):
    src, out = secret_tree(tmp_path), tmp_path / "out"
    problems = build(src, out, capsys)
    for rel in SECRET_FILES:
        assert f"problem: {rel}: skipped: may hold secrets (see 'secret_files' in the configuration)" in problems
    written = everything_written(out, src)
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
    return everything_written(out, src), out


# ---------------------------------------------------------------- every leak of issue 17, item 6
# (case, file, its text with {} where the secret goes, the secret, a name the page still shows).
# Each secret is made up, unique, and shares nothing with the rest of its file.
LEAKS = [
    ("short password", "app/settings.py", 'db_password = "{}"\n', "Sh0rt7!", "db_password"),
    ("password with spaces", "app/admin.py", 'ADMIN_PASSWORD = "{}"\n', "correct horse battery staple",
     "ADMIN_PASSWORD"),
    ("prod.env", "deploy/prod.env", "DEBUG=0\nDB_PASSWORD={}\n", "Pr0d-" + made_up("prod.env", 12), "DB_PASSWORD"),
    ("export in shell", "deploy/run.sh", "#!/bin/sh\nexport API_TOKEN={}\nexec app\n",
     made_up("shell token", 24), "API_TOKEN"),
    ("compose YAML", "deploy/docker-compose.yml",
     "services:\n  db:\n    image: postgres\n    environment:\n      POSTGRES_PASSWORD: {}\n",
     "Cmp-" + made_up("compose", 12), "POSTGRES_PASSWORD"),
    (".ini", "conf/app.ini", "[db]\nhost = db\npassword = {}\n", "Ini-" + made_up("ini", 12), "host = db"),
    (".pypirc", "home/.pypirc", "[pypi]\nusername = __token__\npassword = {}\n",
     "pypi-" + made_up("pypirc", 30), "username = __token__"),
    ("#define", "native/db.h", '#define DB_PASSWORD "{}"\nint connect(void);\n',
     "Def-" + made_up("define", 12), "DB_PASSWORD"),
    (".npmrc", "home/.npmrc", "//registry.npmjs.org/:_authToken={}\n", made_up("npmrc", 28), "_authToken"),
    ("kubeconfig", "home/.kube/config",
     "apiVersion: v1\nusers:\n- name: admin\n  user:\n    client-key-data: {}\n",
     made_up("kubeconfig", 40) + "==", "client-key-data"),
    ("docker config", "home/.docker/config.json", '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{}"}}}}}}\n',
     made_up("docker auth", 32) + "=", "index.docker.io"),
    (".htpasswd", "web/.htpasswd", "alice:{}\n", "$apr1$" + made_up("htpasswd salt", 8) + "$"
     + made_up("htpasswd hash", 22), "alice"),
]


def hidden_part(secret: str) -> str:
    """What masking must never show: all but the quarter it may keep at the start."""
    return secret[len(secret) // 4:]


@pytest.fixture(scope="module")
def leak_build(tmp_path_factory) -> tuple[bytes, Path, str]:
    """Every case of LEAKS documented (secret files not skipped, so their text is masked,
    not just left out), as Markdown, HTML and search data."""
    root = tmp_path_factory.mktemp("leaks")
    src, out = root / "src", root / "out"
    for _, rel, text, secret, _ in LEAKS:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(src / rel, "a", encoding="utf-8") as file:
            file.write(text.format(secret))
    (src / "pyproject.toml").write_text("[tool.kwdocs]\nskip_secret_files = false\n")
    result = run_build(src, out, "--html")
    assert result.returncode == 0, result.stderr
    assert (out / "site/_kwdocs/keywords/buckets.js").is_file() and (out / ".kwdocs").is_dir()
    return everything_written(out, src), out, result.stdout + result.stderr


@pytest.mark.parametrize("case", [leak[0] for leak in LEAKS])
def test_every_leak_of_item_6_is_masked_in_every_output(leak_build, case):
    written, out, printed = leak_build
    _, rel, _, secret, shown = next(leak for leak in LEAKS if leak[0] == case)
    page = (out / f"{rel}_docs.md").read_text(encoding="utf-8")
    assert shown in page, "the file is documented, the rest of its source shown"
    assert "Secrets that look hard-coded were masked" in page
    assert (out / "site" / f"{rel}_docs.html").is_file()
    assert hidden_part(secret).encode() not in written, f"the {case} secret is in the output"
    assert hidden_part(secret) not in printed


def test_the_new_secret_files_are_skipped_by_default(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    for _, rel, text, secret, _ in LEAKS:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(src / rel, "a", encoding="utf-8") as file:
            file.write(text.format(secret))
    skipped = {line.split(": ")[1] for line in build(src, out, capsys) if "may hold secrets" in line}
    assert skipped == {"deploy/prod.env", "home/.pypirc", "home/.npmrc", "home/.kube/config",
                       "home/.docker/config.json", "web/.htpasswd"}
    assert "app/settings.py_docs.md" in pages(out) and "conf/app.ini_docs.md" in pages(out)


def test_a_file_named_after_a_key_is_skipped_and_the_key_written_nowhere(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    key = SECRETS["aws access key id"]
    token = SECRETS["github token"]
    (src / "deploy").mkdir(parents=True)
    (src / "deploy" / f"{key}.txt").write_text("rotated\n")
    os.mkfifo(src / "deploy" / f"pipe-{key}")               # an odd file is reported by name too
    (src / "deploy" / f"link-{key}").symlink_to("/etc/hostname")
    (src / token).mkdir()
    (src / token / "notes.md").write_text("# Notes\n")
    (src / "deploy" / "run.py").write_text("def run():\n    pass\n")
    result = run_build(src, out, "--html")
    assert result.returncode == 0, result.stderr
    assert "deploy/run.py_docs.md" in pages(out)
    printed = result.stdout + result.stderr
    assert f"deploy/{key[:4]}{'*' * 16}.txt: skipped: its name holds a secret" in printed
    assert "folder skipped: its name holds a secret" in printed
    for secret in (key, token):
        assert hidden_part(secret) not in printed
        assert hidden_part(secret).encode() not in everything_written(out, src)
        assert not [path for path in out.rglob("*") if hidden_part(secret) in str(path)], "a page is named after it"


def test_a_token_cut_by_max_source_bytes_is_masked_before_the_cut(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    token = SECRETS["github token"]
    limit = 2000
    # the token starts 10 bytes before the cut: the cut keeps "ghp_" and 6 of its characters
    (src / "big.py").write_text("# " + "x" * (limit - 12) + token + "\nvalue = 1\n")
    (src / "pyproject.toml").write_text(f"[tool.kwdocs]\nmax_source_bytes = {limit}\n")
    result = run_build(src, out, "--html")
    assert result.returncode == 0, result.stderr
    page = (out / "big.py_docs.md").read_text(encoding="utf-8")
    assert "Contains a **GitHub token**" in page and "bytes were left out" in page
    assert token[4:10].encode() not in everything_written(out, src), "part of the token is shown"


# Not secrets: masking or reporting them would alter the source and cry wolf.
NOT_SECRETS = {
    "schema/command.json": '{"name": "install", "arguments": [{"token": "lib-name", "type": "string"}]}\n',
    "app/login.py": ('import os\n\n\ndef login(user, password):\n    """Check the password and the token."""\n'
                     '    token = os.environ["API_TOKEN"]\n    secret = os.environ.get("APP_SECRET_KEY", "")\n'
                     '    password_field = "password"\n    return check(user, password, token, secret)\n\n\n'
                     'pad_token = "[PAD]"\nbos_token = "<|endoftext|>"\nmodel_token = "gpt2-medium"\n'
                     'auth_token = "bert-base-uncased"\nPASSWORD_RESET_URL = "/reset"\n'),
    "docs/auth.md": "# Auth\n\nSet the password: the one you chose. The token is passed in a header.\n\n"
                    "auth: basic\ntoken = refresh\n",
    "deploy/app.yaml": "auth: basic\ntoken: lib-name\npassword: ${DB_PASSWORD}\napi_key: <your key>\n",
    "deploy/env.sh": '#!/bin/sh\nexport PASSWORD="$1"\nexport API_TOKEN=$(cat /run/secrets/token)\nexport PWD=/app\n',
    # code that builds a key or fills secrets in at run time names the markers and keys, holds none
    "tests/make_keys.py": ('KEY = ("-----BEGIN RSA PRIVATE KEY-----\\n" + BODY\n'
                           '       + "\\n-----END RSA PRIVATE KEY-----\\n")\n'
                           'HEADER = "-----BEGIN PRIVATE KEY-----"\n'
                           'CONFIG = f\'api_token: "{SECRETS["token"]}"\\npassword = "{SECRETS["pw"]}"\\n\'\n\n\n'
                           'def keys():\n    return KEY, HEADER, CONFIG\n'),
    # near the rules of issue 31: headers, connection strings, exports, `_pass` and secret key names
    "app/http.py": ('import requests\n\n\ndef get(url, token, user, password, host):\n'
                    '    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}\n'
                    '    auth = {"Authorization": "Bearer " + token}\n'
                    '    dsn = f"host={host} user={user} password={password} sslmode=require"\n'
                    '    conn = connect(host=host, user=user, password=password)\n'
                    '    fusion_pass = "constant_folding"\n    secret_key = "SECRET_KEY"\n'
                    '    client_secret = "client_secret"\n    kind = "key-value"\n'
                    '    return requests.get(url, headers=headers), auth, dsn, conn, fusion_pass, kind\n'),
    "docs/api.md": ("# API\n\nSend `Authorization: Bearer <token>` with every request, or `Authorization: Basic`"
                    " with your credentials.\nThe password \"must be 8 characters or more\"; a wrong password"
                    " gives `401`.\n\n```sh\ncurl -u \"$USER:$PASSWORD\" https://api.example.com/v1/items\n"
                    "curl --user admin https://api.example.com/v1/items\nexport API_TOKEN=$(cat /run/secrets/token)\n"
                    "export SECRET_KEY=${SECRET_KEY}\nexport API_KEY=your_api_key_here\n```\n\n"
                    "Sentry reads `SENTRY_DSN`; a store's `AccountKey=` comes from the portal.\n\n"
                    "    Access-Control-Allow-Headers: Authorization, Content-Type\n"),
    "deploy/passes.yaml": "passes:\n  fusion_pass: constant_folding\n  bypass: true\n  first_pass: fold\n",
}


def test_ordinary_words_and_names_are_not_secrets(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in NOT_SECRETS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    result = run_build(src, out)
    assert result.returncode == 0, result.stderr
    for rel, text in NOT_SECRETS.items():
        page = (out / f"{rel}_docs.md").read_text(encoding="utf-8")
        assert "masked" not in page and "**hard-coded" not in page and "Sets a **" not in page, rel
        for line in text.splitlines():
            assert line in page, f"{rel}: the source is altered: {line!r}"
        assert "syntax error" not in page, rel     # the extractor read the source as written


# ---------------------------------------------------------------- the leaks of issue 31
# Secrets in common formats: provider tokens, headers, connection strings, DSNs, shell and YAML
# settings, prose.  (case, file, its text with {} where the secret goes, the secret, a line the
# page still shows.)  Every one is made up, and the rest of its file shares nothing with it.
HEX = "0123456789abcdef"
BASE64 = string.ascii_letters + string.digits + "+/"
URL_SAFE = string.ascii_letters + string.digits + "_-"
SSH_KEY_LINES = ["b3BlbnNzaC1rZXktdjEAAAAA" + made_up("ssh key 1", 46), made_up("ssh key 2", 70),
                 made_up("ssh key 3", 34) + "=="]
SSH_KEY_YAML = ("deploy:\n  host: build.example.com\n  ssh_key: |\n    -----BEGIN OPENSSH PRIVATE KEY-----\n"
                + "".join(f"    {line}\n" for line in SSH_KEY_LINES)
                + "    -----END OPENSSH PRIVATE KEY-----\n  user: deploy\n")
LEAKS_31 = [
    ("sendgrid key", "app/mail.py", 'client = SendGridAPIClient("{}")\n',
     "SG." + made_up("sendgrid id", 22, URL_SAFE) + "." + made_up("sendgrid secret", 43, URL_SAFE),
     "client = SendGridAPIClient("),
    ("azure account key", "conf/storage.json",
     '{{"storage": "DefaultEndpointsProtocol=https;AccountName=kwdocs;AccountKey={};EndpointSuffix=core.windows.net"}}\n',
     made_up("azure", 86, BASE64) + "==", "AccountName=kwdocs"),
    ("basic auth header", "docs/api.http", "GET /v1/items HTTP/1.1\nHost: api.example.com\nAuthorization: Basic {}\n",
     made_up("basic auth", 27, BASE64) + "=", "Host: api.example.com"),
    ("bearer header", "app/client.py", 'HEADERS = {{"Accept": "text/plain", "Authorization": "Bearer {}"}}\n',
     made_up("bearer", 40, URL_SAFE + "."), '"Accept": "text/plain"'),
    ("mailgun key", "app/mailer.js", 'const mg = mailgun.client({{username: "api", key: "{}"}});\n',
     "key-" + made_up("mailgun", 32, HEX), "mailgun.client("),
    ("discord webhook", "deploy/notify.py", 'WEBHOOK = "https://discord.com/api/webhooks/112233445566778899/{}"\n',
     made_up("discord", 68, URL_SAFE), "WEBHOOK = "),
    ("curl -u", "docs/usage.md", "# Usage\n\n```sh\ncurl -u admin:{} https://api.example.com/v1/items\n```\n",
     "Cu-" + made_up("curl", 14), "https://api.example.com/v1/items"),
    ("libpq password", "app/db.py", 'DSN = "host=db.internal port=5432 dbname=app user=app password={} sslmode=require"\n',
     made_up("libpq", 18), "sslmode=require"),
    ("libpq password first", "app/replica.py", 'REPLICA = "password={} host=replica.internal dbname=app"\n',
     made_up("libpq first", 18), "REPLICA = "),
    ("jdbc password", "conf/app.properties",
     "spring.datasource.url=jdbc:mysql://db.internal:3306/app?user=app&password={}&useSSL=true\n",
     made_up("jdbc", 18), "useSSL=true"),
    ("sentry dsn", "app/monitoring.py", 'sentry_sdk.init(dsn="https://{}@o123456.ingest.sentry.io/4504")\n',
     made_up("sentry", 32, HEX), "ingest.sentry.io"),
    ("gcp private_key_id", "deploy/service-account.json",
     '{{"type": "service_account", "project_id": "kwdocs", "private_key_id": "{}"}}\n',
     made_up("gcp", 40, HEX), '"project_id": "kwdocs"'),
    ("yaml smtp_pass", "deploy/mail.yaml", "smtp:\n  host: smtp.example.com\n  smtp_user: app\n  smtp_pass: {}\n",
     "Sm-" + made_up("smtp", 14), "smtp_user: app"),
    ("export API_KEY", "deploy/setup.sh", "#!/bin/sh\nexport API_KEY={}\n",
     "ak_" + made_up("api key", 24, string.ascii_lowercase + string.digits), "export API_KEY="),
    ("export API_TOKEN", "docs/deploy.md", "# Deploy\n\n```\nexport API_TOKEN={}\n```\n",
     "tok_" + made_up("api token", 24, string.ascii_lowercase + string.digits), "export API_TOKEN="),
    ("password in a docstring", "app/auth.py",
     'def login():\n    """Log in as admin with the password "{}" (rotate it)."""\n', "Dq-" + made_up("docstring", 12),
     "def login():"),
    ("short secret_key", "app/config.py", 'DEBUG = False\nsecret_key = "{}"\n', "shrt", "DEBUG = False"),
    ("ssh key in a yaml block scalar", "deploy/keys.yaml", SSH_KEY_YAML.replace(SSH_KEY_LINES[1], "{}"),
     SSH_KEY_LINES[1], "user: deploy"),
]


@pytest.fixture(scope="module")
def leak31_build(tmp_path_factory) -> tuple[bytes, Path]:
    """Every case of issue 31, of issue 17 (LEAKS) and of SECRETS in one tree, documented as
    Markdown, HTML and search data, with a shared cache: what the build and the cache hold."""
    root = tmp_path_factory.mktemp("leaks31")
    src, out, cache = root / "src", root / "out", root / "cache"
    src.mkdir()
    plant(src)
    for _, rel, text, secret, _ in LEAKS + LEAKS_31:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(src / rel, "a", encoding="utf-8") as file:
            file.write(text.format(secret))
    (src / "pyproject.toml").write_text("[tool.kwdocs]\nskip_secret_files = false\n")
    result = run_build(src, out, "--html", "--cache", str(cache))
    assert result.returncode == 0, result.stderr
    assert (out / "site/_kwdocs/keywords/buckets.js").is_file() and (out / ".kwdocs").is_dir()
    assert any(cache.rglob("*")), "the cache holds entries"
    return everything_written(out, src) + everything_written(cache) + (result.stdout + result.stderr).encode(), out


@pytest.mark.parametrize("case", [leak[0] for leak in LEAKS_31])
def test_every_leak_of_issue_31_is_masked_in_every_output(leak31_build, case):
    written, out = leak31_build
    _, rel, _, secret, shown = next(leak for leak in LEAKS_31 if leak[0] == case)
    page = (out / f"{rel}_docs.md").read_text(encoding="utf-8")
    assert shown in page, "the file is documented, the rest of its source shown"
    assert "Secrets that look hard-coded were masked" in page
    assert (out / "site" / f"{rel}_docs.html").is_file()
    assert secret.encode() not in written, f"the {case} secret is in the output or the cache"
    assert hidden_part(secret).encode() not in written, f"the {case} secret is in the output or the cache"


@pytest.mark.parametrize("secret", [leak[3] for leak in LEAKS] + sorted(SECRETS.values()))
def test_the_earlier_cases_stay_masked_in_the_cache_too(leak31_build, secret):
    written, _ = leak31_build
    assert hidden_part(secret).encode() not in written


def test_a_masked_key_in_a_yaml_block_scalar_keeps_the_yaml_valid(leak31_build):
    """The key's lines keep their indentation: the file parses to the same structure."""
    _, out = leak31_build
    original = yaml.safe_load(SSH_KEY_YAML)
    for fill in ("*", "x"):     # as pages show it, as the extractor reads it
        masked, lines = mask_secrets(SSH_KEY_YAML, language="yaml") if fill == "*" else \
            RuleSet.load().mask_secrets(SSH_KEY_YAML, "yaml", fill)
        assert lines and SSH_KEY_LINES[1] not in masked
        parsed = yaml.safe_load(masked)
        assert parsed["deploy"].keys() == original["deploy"].keys()
        assert parsed["deploy"]["user"] == "deploy" and parsed["deploy"]["host"] == original["deploy"]["host"]
        assert parsed["deploy"]["ssh_key"].splitlines()[0] == "-----BEGIN OPENSSH PRIVATE KEY-----"
    page = (out / "deploy/keys.yaml_docs.md").read_text(encoding="utf-8")
    assert "parse error" not in page and "Secrets that look hard-coded were masked" in page

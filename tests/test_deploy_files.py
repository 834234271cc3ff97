"""deploy/docker-compose.yml and deploy/Dockerfile, checked by reading them: there is no Docker
engine on the machines these tests run on, so nothing is built or started."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ingest.config import Settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
KBFLOW_SERVICES = ("kbflow-deploy", "prefect-worker")
KBFLOW_VARIABLES = ("KBFLOW_PROFILE", "KBFLOW_MILVUS_URI", "KBFLOW_ES_URL", "KBFLOW_NEO4J_URI",
                    "KBFLOW_MANIFEST_URL", "PREFECT_API_URL")


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))["services"]


def test_every_engine_is_a_service(services) -> None:
    assert set(services) == {"etcd", "minio", "milvus", "elasticsearch", "neo4j", "postgres",
                             "prefect-server", "kbflow-deploy", "prefect-worker"}
    assert services["milvus"]["command"] == ["milvus", "run", "standalone"]
    assert services["milvus"]["environment"]["ETCD_ENDPOINTS"] == "etcd:2379"
    assert services["milvus"]["environment"]["MINIO_ADDRESS"] == "minio:9000"
    es = services["elasticsearch"]
    assert es["image"].startswith("docker.elastic.co/elasticsearch/elasticsearch:8.")
    assert es["environment"]["discovery.type"] == "single-node"
    assert es["environment"]["xpack.security.enabled"] == "false"
    assert services["neo4j"]["image"].startswith("neo4j:5") and "community" in \
        services["neo4j"]["image"]
    database = services["prefect-server"]["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert database.startswith("postgresql+asyncpg://") and "@postgres:5432/" in database


def test_published_ports(services) -> None:
    def ports(name: str) -> set[str]:
        return {p.split(":")[-1] for p in services[name].get("ports", [])}

    assert ports("milvus") >= {"19530", "9091"}
    assert ports("elasticsearch") == {"9200"}
    assert ports("neo4j") == {"7474", "7687"}
    assert ports("postgres") == {"5432"}
    assert ports("prefect-server") == {"4200"}


@pytest.mark.parametrize("name", KBFLOW_SERVICES)
def test_kbflow_services_point_at_the_engines(services, name: str) -> None:
    service = services[name]
    env = service["environment"]
    assert all(env.get(var) for var in KBFLOW_VARIABLES), f"{name} lacks a KBFLOW_* variable"
    assert env["KBFLOW_PROFILE"] == "servers"
    # Each URL names a service of this file on the port that service listens on.
    for var, host, port in [("KBFLOW_MILVUS_URI", "milvus", "19530"),
                            ("KBFLOW_ES_URL", "elasticsearch", "9200"),
                            ("KBFLOW_NEO4J_URI", "neo4j", "7687"),
                            ("KBFLOW_MANIFEST_URL", "postgres", "5432"),
                            ("PREFECT_API_URL", "prefect-server", "4200")]:
        assert re.search(f"[/@]{host}:{port}", env[var]) and host in services
    assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    assert any(v.endswith(":/data") for v in service["volumes"])
    assert env["KBFLOW_DATA_DIR"] == "/data"
    assert {"milvus", "elasticsearch", "neo4j", "postgres", "prefect-server"} <= set(
        service["depends_on"])


def test_the_environment_is_what_kbflow_reads(services, monkeypatch) -> None:
    """The compose variables configure Settings as intended (a renamed setting breaks this);
    `${VAR:-default}` is read as compose does with VAR unset."""
    for var, value in services["prefect-worker"]["environment"].items():
        if var.startswith("KBFLOW_"):
            monkeypatch.setenv(var, re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value))
    settings = Settings(_env_file=None)
    assert settings.profile == "servers"
    assert (settings.milvus_uri, settings.es_url, settings.neo4j_uri) == (
        "http://milvus:19530", "http://elasticsearch:9200", "bolt://neo4j:7687")
    assert settings.data_dir == Path("/data")
    assert settings.manifest == "postgresql://kbflow:kbflow@postgres:5432/kbflow"


def test_workers_start_after_the_pool_exists(services) -> None:
    worker = services["prefect-worker"]
    assert worker["command"][:3] == ["prefect", "worker", "start"]
    assert worker["command"][worker["command"].index("--pool") + 1] == "kbflow"
    assert worker["depends_on"]["kbflow-deploy"] == {"condition": "service_completed_successfully"}
    assert services["kbflow-deploy"]["command"] == ["kbflow", "deploy"]


def test_dockerfile_installs_the_project() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines()]
    assert lines[next(i for i, line in enumerate(lines) if line.startswith("FROM"))] == \
        "FROM python:3.11-slim"
    assert "RUN pip install \".[mcp]\"" in lines  # `kbflow mcp` runs in the image
    copied = {src for line in lines if line.startswith("COPY") for src in line.split()[1:-1]}
    # pyproject.toml names README.md as the readme: `pip install .` fails without it; kbflow
    # serve's Dify route imports kbflow_integrations.
    assert {"ingest", "flows", "manifests", "kbflow_integrations", "pyproject.toml",
            "README.md"} <= copied


def test_env_example_lists_every_setting_with_its_default(monkeypatch) -> None:
    """.env.example is the settings reference: every KBFLOW_* setting at its default, or
    commented out with an example value when it is unset by default."""
    lines = (DEPLOY.parent / ".env.example").read_text(encoding="utf-8").splitlines()
    listed = dict(line.split("=", 1) for line in lines if line.startswith("KBFLOW_"))
    examples = [line[2:].split("=", 1)[0] for line in lines if line.startswith("# KBFLOW_")]
    assert sorted([*listed, *examples]) == sorted(
        f"KBFLOW_{name.upper()}" for name in Settings.model_fields)
    for var in [*listed, *examples]:
        monkeypatch.delenv(var, raising=False)
    defaults = Settings(_env_file=None)
    assert all(getattr(defaults, var[7:].lower()) is None for var in examples)
    for var, value in listed.items():
        monkeypatch.setenv(var, value)  # read as the environment variable it documents
    assert Settings(_env_file=None) == defaults

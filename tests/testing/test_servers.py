from __future__ import annotations

from pathlib import Path

from dbscale.testing.servers import read_env_file, write_env_file


def test_env_file_round_trip(tmp_path: Path) -> None:
    env = {"DBSCALE_TEST_PG_URL": "postgresql://postgres@127.0.0.1:5/postgres", "ODD": "a b'c"}
    path = tmp_path / "sub" / "servers.env"
    write_env_file(path, env)
    assert read_env_file(path) == env
    assert all(line.startswith(("#", "export ")) for line in path.read_text().splitlines())

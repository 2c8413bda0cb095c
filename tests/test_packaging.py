"""The non-editable install works: build the wheel, install it into a fresh venv, import it,
run the CLI from it — with the bundled data files, and without the source tree on the path."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed_venv(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("pkg")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(REPO)],
                   check=True, capture_output=True, cwd=tmp)
    wheel = next(dist.glob("shardwise-*.whl"))
    _check_wheel_contents(wheel)
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # Dependencies come from this interpreter's site-packages (a plain path entry: its .pth files,
    # including any editable-install hook for shardwise, are NOT processed), so no network is needed.
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "host_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True)
    return env_dir


def _check_wheel_contents(wheel: Path) -> None:
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    # The page's templates and the catalogs are data files, not modules: they must ship.
    for required in ("shardwise/web/templates/index.html", "shardwise/engine/data/models.json",
                     "shardwise/engine/data/hardware.json"):
        assert required in names, f"{required} missing from the wheel"
    # Nothing from build output, virtualenvs or tests may be swept in.
    stray = [n for n in names if n.startswith(("shardwise/build/", "shardwise/.venv/", "shardwise/tests/"))]
    assert not stray, stray[:5]


def _run(env_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(env_dir / "bin" / args[0]), *args[1:]], capture_output=True, text=True,
                          cwd=env_dir, timeout=120)


def test_wheel_imports_from_site_packages_not_the_source_tree(installed_venv):
    out = _run(installed_venv, "python", "-c", "import shardwise, shardwise.engine.evaluate; print(shardwise.__file__)")
    assert out.returncode == 0, out.stderr
    assert str(installed_venv) in out.stdout and str(REPO) not in out.stdout


def test_wheel_installs_only_the_shardwise_package(installed_venv):
    out = _run(installed_venv, "python", "-c",
               "import importlib.util as u; print([n for n in ('engine','tools','agent','web','cli','tests') if u.find_spec(n)])")
    assert out.stdout.strip() == "[]", out.stdout


def test_console_script_runs_evaluate_from_the_wheel(installed_venv):
    out = _run(installed_venv, "shardwise", "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8",
               "--tp", "2", "--json")
    assert out.returncode == 0, out.stderr
    assert '"total_gib"' in out.stdout


def test_console_script_reports_bad_input_in_one_line(installed_venv):
    out = _run(installed_venv, "shardwise", "evaluate", "--model", "llama-9000", "--gpu", "h100-sxm", "--gpus", "8")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr

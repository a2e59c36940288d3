"""One FOILBENCH_HOME for every folder foilbench writes; the old variables still work, with a
deprecation warning; and no module but paths.py reads a path from the environment."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from foilbench import paths
from foilbench.cli.train_cmd import _default_cache
from foilbench.construct.suite import cache_dir
from foilbench.data.loaders.common import image_root
from foilbench.data.tiny import data_cache_root
from foilbench.models.fingerprint import cache_root
from foilbench.store.cache import default_cache_root

SRC = Path(__file__).resolve().parents[1] / "src" / "foilbench"


@pytest.fixture
def clean_env(monkeypatch):
    for name in (paths.HOME_ENV, *paths.DEPRECATED_ENV):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_default_home_is_the_user_cache(clean_env, tmp_path):
    clean_env.setenv("HOME", str(tmp_path))
    assert paths.home() == tmp_path / ".cache" / "foilbench"
    assert default_cache_root() == tmp_path / ".cache" / "foilbench" / "embeddings"


def test_every_folder_lives_under_foilbench_home(clean_env, tmp_path):
    clean_env.setenv("FOILBENCH_HOME", str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new variable alone warns about nothing
        assert cache_dir(3).parent == tmp_path / "suite" and cache_dir(3).name.endswith("-3")
        assert _default_cache() == tmp_path / "train"
        assert default_cache_root() == tmp_path / "embeddings"
        assert data_cache_root() == tmp_path / "builtin"
        assert cache_root() == tmp_path


@pytest.mark.parametrize(("old", "reader"), [
    ("FOILBENCH_CACHE", default_cache_root),
    ("FOILBENCH_DATA_CACHE", data_cache_root),
    ("FOILBENCH_CACHE_DIR", cache_root),
])
def test_old_variables_still_work_with_a_deprecation_warning(clean_env, tmp_path, old, reader):
    clean_env.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    clean_env.setenv(old, str(tmp_path / "old"))
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated: set FOILBENCH_HOME"):
        assert reader() == tmp_path / "old"  # the specific old variable wins


def test_loader_image_folders_come_from_option_then_environment_then_default(clean_env,
                                                                            tmp_path):
    clean_env.delenv("FOILBENCH_TEST_IMAGES", raising=False)
    assert image_root({}, "FOILBENCH_TEST_IMAGES", tmp_path / "d") == tmp_path / "d"
    clean_env.setenv("FOILBENCH_TEST_IMAGES", str(tmp_path / "env"))
    assert image_root({}, "FOILBENCH_TEST_IMAGES", tmp_path / "d") == tmp_path / "env"
    assert image_root({"images": str(tmp_path / "o")}, "FOILBENCH_TEST_IMAGES",
                      tmp_path / "d") == tmp_path / "o"


# Environment reads that are not paths: the HF offline switch, API prices, caps, URLs, keys and
# concurrency, the Hub token of a gated download (fetch), the image pixel limit (limits.py),
# how long to wait for a locked results store, and OpenMP's thread settings (cli/main.py,
# runner/threads.py: sleeping threads and the thread count).
# ray_session.py copies variables (paths among them) to Ray workers without interpreting them.
NOT_PATHS = {"models/hf/loading.py", "models/api/spend.py", "models/api/wire.py", "limits.py",
             "store/connect.py", "construct/backends/api_common.py", "ray_session.py",
             "fetch/fetcher.py", "cli/main.py", "runner/threads.py",
             "data/hub.py"}  # the Hub's endpoint, token and offline switch; its cache: paths.py


def test_only_paths_py_reads_the_environment_for_paths():
    readers = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                     if re.search(r"os\.environ|os\.getenv|getenv\(", p.read_text()))
    assert [r for r in readers if r not in NOT_PATHS] == ["paths.py"]

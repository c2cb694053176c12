# SPDX-License-Identifier: Apache-2.0
"""kernelhub puts a project's kernels.lock into its distribution's metadata, as kernels does:
setuptools runs the `egg_info.writers` entry point `kernels.lock` of every installed package
while it writes a project's metadata, and `LockedLayerRepository`/`get_locked_kernel` without
a lockfile read the lock from there. Without kernels installed, nothing else would write it."""
from importlib.metadata import distribution

from kernelhub._locks import write_egg_lockfile

PYPROJECT = '[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"org/relu" = 1\n'
LOCK = '[{"dependency": {"repo-id": "org/relu", "version": 1}, "lock": {"commit": "' + \
    "a" * 40 + '"}}]'


class RecordingCommand:
    """What setuptools' egg_info command offers a writer."""

    def __init__(self):
        self.calls = []

    def write_or_delete_file(self, what, filename, data):
        self.calls.append((what, filename, data))


def test_the_writer_is_registered_and_loads():
    writers = [ep for ep in distribution("kernelhub").entry_points
               if ep.group == "egg_info.writers" and ep.name == "kernels.lock"]
    assert len(writers) == 1
    assert writers[0].load() is write_egg_lockfile


def test_a_locked_project_gets_its_lock_in_the_metadata(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "kernels.lock").write_text(LOCK)
    monkeypatch.chdir(tmp_path)
    command = RecordingCommand()
    write_egg_lockfile(command, "kernels.lock", "app.egg-info/kernels.lock")
    assert command.calls == [("kernels.lock", "app.egg-info/kernels.lock", LOCK)]


def test_a_missing_lock_is_removed_from_the_metadata_with_a_warning(tmp_path, monkeypatch,
                                                                     caplog):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    monkeypatch.chdir(tmp_path)
    command = RecordingCommand()
    write_egg_lockfile(command, "kernels.lock", "app.egg-info/kernels.lock")
    assert command.calls == [("kernels.lock", "app.egg-info/kernels.lock", None)]
    assert "does not exist" in caplog.text


def test_projects_without_kernel_dependencies_are_left_alone(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n')
    (tmp_path / "kernels.lock").write_text(LOCK)
    monkeypatch.chdir(tmp_path)
    command = RecordingCommand()
    write_egg_lockfile(command, "kernels.lock", "other.egg-info/kernels.lock")
    assert command.calls == []

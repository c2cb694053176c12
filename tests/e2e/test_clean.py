# SPDX-License-Identifier: Apache-2.0
"""`kernel-builder clean` (issue 13 item 13): removes what `build` wrote into build/ (its
variants' files, build/.kernelhub with the generated CMake projects and build trees), proven
by the records the build keeps; a file an author added or changed, and the sources, survive."""
import json
import shutil

from conftest import REPO_ROOT, VENV_BIN, copy_built, run
from test_build_variant import noarch_kernel

PYTHON = VENV_BIN / "python"


def build(kernel_builder, kernel, *extra):
    run([kernel_builder, "build", kernel, "--python", PYTHON, *extra], check=True)


def clean(kernel_builder, kernel, *extra):
    result = run([kernel_builder, "clean", kernel, "--json", *extra], check=True)
    return json.loads(result.stdout)


def test_clean_removes_built_variants_and_keeps_hand_written_files(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    build(kernel_builder, kernel, "--skip-checks")
    notes = kernel / "build" / "NOTES.md"
    notes.write_text("my notes\n")
    extra = kernel / "build" / "torch-cpu" / "benchmarks" / "mine.py"
    extra.parent.mkdir()
    extra.write_text("print('mine')\n")

    preview = clean(kernel_builder, kernel, "--dry-run")
    assert preview["dry_run"] is True
    assert str(kernel / "build" / "torch-cuda" / "__init__.py") in preview["removed"]
    assert str(kernel / "build" / ".kernelhub") + "/" in preview["removed"]
    kept = {entry["path"]: entry["reason"] for entry in preview["kept"]}
    assert kept[str(notes)] == "kernel-builder has no record of writing it"
    assert kept[str(extra)] == "not written by kernel-builder"
    assert (kernel / "build" / "torch-cuda" / "__init__.py").exists()  # a dry run removes nothing

    done = clean(kernel_builder, kernel)
    assert done["removed"] == preview["removed"]
    assert not (kernel / "build" / "torch-cuda").exists()
    assert not (kernel / "build" / ".kernelhub").exists()
    assert not (kernel / "build" / "torch-cpu" / "metadata.json").exists()
    assert notes.read_text() == "my notes\n" and extra.read_text() == "print('mine')\n"
    assert (kernel / "build.toml").exists()
    assert (kernel / "torch-ext" / "pick" / "__init__.py").read_text() == "import torch\n"


def test_a_file_changed_after_the_build_is_kept(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    build(kernel_builder, kernel, "--skip-checks")
    changed = kernel / "build" / "torch-cpu" / "__init__.py"
    changed.write_text("import torch  # edited by hand\n")
    done = clean(kernel_builder, kernel)
    kept = {entry["path"]: entry["reason"] for entry in done["kept"]}
    assert kept[str(changed)] == "changed since kernel-builder built it"
    assert changed.read_text() == "import torch  # edited by hand\n"
    assert not (kernel / "build" / "torch-cuda").exists()


def test_without_the_builders_records_nothing_is_removed(kernel_builder, tmp_path):
    """A build/ the builder has no tag in (an older builder's, another tool's) is left whole."""
    kernel = noarch_kernel(tmp_path)
    build(kernel_builder, kernel, "--skip-checks")
    (kernel / "build" / ".kernelhub" / "CACHEDIR.TAG").unlink()
    before = sorted(p.relative_to(kernel) for p in kernel.rglob("*"))
    done = clean(kernel_builder, kernel)
    assert done["removed"] == []
    assert sorted(p.relative_to(kernel) for p in kernel.rglob("*")) == before
    text = run([kernel_builder, "clean", kernel], check=True).stdout
    assert "nothing to clean" in text


def listing(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


def test_clean_removes_the_generated_cmake_project_of_an_arch_build(kernel_builder, built_example,
                                                                   tmp_path):
    # examples/relu as conftest's built_example built it (every backend, the checks on), copied:
    # clean goes by the hashes the build recorded, which a copy keeps.
    pristine = tmp_path / "pristine"
    shutil.copytree(REPO_ROOT / "examples" / "relu", pristine,
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    sources = listing(pristine)
    relu = built_example("relu")
    assert relu.result.returncode == 0, relu.result.stderr
    kernel = tmp_path / "relu"
    copy_built(relu.kernel, kernel)
    work = list((kernel / "build" / ".kernelhub").glob("*/cmake"))
    assert work, "the build keeps its CMake build tree under build/.kernelhub"
    clean(kernel_builder, kernel)
    assert not (kernel / "build").exists()
    assert listing(kernel) == sources  # and nothing was written beside the sources


def test_clean_removes_a_project_create_project_wrote_into_build(kernel_builder, tmp_path):
    kernel = noarch_kernel(tmp_path)
    (kernel / "build").mkdir()
    (kernel / "build" / "mine").mkdir()
    (kernel / "build" / "mine" / "CACHEDIR.TAG").write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n# another tool's cache\n")
    run([kernel_builder, "create-project", kernel], check=True)
    elsewhere = tmp_path / "elsewhere"
    run([kernel_builder, "create-project", kernel, "--target", elsewhere], check=True)
    project = kernel / "build" / "project"
    (project / "_cmake_build").mkdir()  # what `pip install -e` builds there goes with it
    done = clean(kernel_builder, kernel)
    assert str(project) + "/" in done["removed"]
    assert not project.exists()
    assert (kernel / "build" / "mine" / "CACHEDIR.TAG").exists()  # not kernel-builder's tag
    assert (elsewhere / "setup.py").exists() and not (elsewhere / "CACHEDIR.TAG").exists()


def editable_record(site, name, directory):
    """What `pip install -e DIR` leaves in site-packages: a dist-info whose direct_url.json
    marks the install editable and names the folder."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "direct_url.json").write_text(json.dumps(
        {"url": directory.as_uri(), "dir_info": {"editable": True}}))


def test_clean_warns_when_it_removes_what_an_editable_install_points_at(kernel_builder,
                                                                        tmp_path):
    """Issue 22 §9: clean removed build/project, where `pip install -e build/project` pointed,
    without a word; the import broke later."""
    kernel = noarch_kernel(tmp_path)
    run([kernel_builder, "create-project", kernel], check=True)
    project = kernel / "build" / "project"
    site = tmp_path / "site"
    editable_record(site, "pick-dev", project)
    editable_record(site, "unrelated", tmp_path / "elsewhere")
    env = {"PYTHONPATH": str(site)}
    preview = run([kernel_builder, "clean", kernel, "--dry-run"], env=env, check=True)
    assert (f"warning: clean would remove {project}/, where the editable install of pick-dev "
            f"points") in preview.stderr
    assert project.exists()
    done = run([kernel_builder, "clean", kernel], env=env, check=True)
    assert f"warning: removing {project}/, where the editable install of pick-dev" in done.stderr
    assert "pip uninstall pick-dev" in done.stderr
    assert "unrelated" not in done.stderr
    assert not project.exists()


def test_a_signature_beside_metadata_json_is_listed_as_kept(kernel_builder, tmp_path):
    """Issue 20 item 7: `kernel-builder sign` writes metadata.json.sigstore, which the digest (and
    so the build's record) leaves out; clean kept it without listing it anywhere. A .pyc outside
    __pycache__ is left out of the digest too."""
    kernel = noarch_kernel(tmp_path)
    build(kernel_builder, kernel, "--skip-checks")
    key = tmp_path / "team.pem"
    run([kernel_builder, "keygen", "--output", key], check=True)
    run([kernel_builder, "sign", kernel, "--key", key], check=True)
    signature = kernel / "build" / "torch-cpu" / "metadata.json.sigstore"
    assert signature.exists()
    stray = kernel / "build" / "torch-cpu" / "old.pyc"
    stray.write_bytes(b"\x00")

    preview = clean(kernel_builder, kernel, "--dry-run")
    kept = {entry["path"]: entry["reason"] for entry in preview["kept"]}
    assert kept.get(str(signature)) == ("a signature of metadata.json (kernel-builder sign or CI), "
                                        "which clean never removes"), preview
    assert kept.get(str(stray)) == "not written by kernel-builder", preview
    assert str(signature) not in preview["removed"]
    # Every file left under build/ after the clean is one the report lists as kept.
    done = clean(kernel_builder, kernel)
    left = {str(p) for p in (kernel / "build").rglob("*") if p.is_file()}
    assert left == {entry["path"] for entry in done["kept"]}
    assert signature.exists() and stray.exists()

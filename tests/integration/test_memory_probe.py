"""One memory probe: doctor's frogdesk.system and the models' system_memory read the same sources."""

from __future__ import annotations

from pathlib import Path

from frogdesk import system
from frogdesk.models import system_memory

VM_STAT = """Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                               1000.
Pages active:                             5000.
Pages inactive:                           2000.
Pages speculative:                         300.
Pages purgeable:                            40.
"""


def test_both_read_the_same_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(
        "MemTotal: 2000 kB\nMemFree: 100 kB\nMemAvailable: 900 kB\nHugePages_Total: 0\n"
    )
    values = system.read_meminfo(meminfo)
    assert system.meminfo_ram(values) == (2000 * 1024, 900 * 1024)
    got = system_memory.available_memory(meminfo)
    assert (got.ram_total, got.ram_free) == (2000 * 1024, 900 * 1024)
    assert system.read_meminfo(tmp_path / "missing") == {}


def test_this_machine_agrees_where_no_cgroup_limit_applies() -> None:
    doctor = system.memory()
    model = system_memory.available_memory()
    assert doctor.total <= model.ram_total  # doctor also honours a lower cgroup limit
    if doctor.total == model.ram_total:
        # the same file read twice: only what other processes did in between differs
        assert abs(doctor.available - model.ram_free) < model.ram_total // 10


def test_vm_stat_counts_the_listed_pages() -> None:
    page = 16384
    assert system.vm_stat_free(VM_STAT) == (1000 + 2000 + 300) * page
    with_purgeable = (*system.VM_STAT_FREE, "Pages purgeable")
    assert system.vm_stat_free(VM_STAT, with_purgeable) == (1000 + 2000 + 300 + 40) * page
    assert system.vm_stat_free("") == 0


def test_nvidia_smi_lines_become_gpus_for_both() -> None:
    out = "24564, 23012, NVIDIA GeForce RTX 4090\n[N/A], [N/A], Broken\n8192, 100, Quadro, Rev B\n"
    gpus = system.parse_nvidia_smi(out)
    assert [(g.name, g.total, g.free, g.vendor) for g in gpus] == [
        ("NVIDIA GeForce RTX 4090", 24564 * 2**20, 23012 * 2**20, "nvidia"),
        ("Quadro, Rev B", 8192 * 2**20, 100 * 2**20, "nvidia"),
    ]
    assert system_memory.parse_nvidia_smi(out) == (gpus[0].total, gpus[0].free, gpus[0].name)
    assert system.parse_nvidia_smi("") == [] and system_memory.parse_nvidia_smi("") is None

"""Which machine made the committed metrics and which made each benchmark a page shows, named from the files
themselves: a machine is its record's CPU model and bf16 path (bench/*.json's `machine`, written by the command that
measured it), or, where a record names no CPU model, its device line and that it names none. A page says these
through here, so it names no machine its files do not hold and misses none they hold."""

from __future__ import annotations

import json
from pathlib import Path

NO_MODEL = "its record names no CPU model"
MADE_ON = Path("bench/metrics-machine.json")  # which machine and commit made the committed metrics (tools.repro_timing)


def machine_name(machine: dict) -> str:
    """"Intel(R) Xeon(R) Processor (AMX + AVX512-BF16)", or "CPU, 2 cores, x86_64, bf16 yes (its record names no CPU
    model)" (tools.repro_timing's records give the device and the cores apart: "cpu" and "2 cores, x86_64"), or a
    GPU's device line ("NVIDIA H200")."""
    if machine.get("cpu_model"):
        return f"{machine['cpu_model']} ({machine.get('bf16_path', 'bf16 path not recorded')})"
    device = machine.get("device", "a device")
    device = f"{device.upper()}, {machine['cpu']}" if machine.get("cpu") else device
    return f"{device} ({NO_MODEL})" if device.upper().startswith("CPU") else device  # a GPU: its device names it


def by_machine(bench: Path, names: list[str]) -> dict[str, list[str]]:
    """{machine: the files of `names` under `bench` it made}, machines in the order their first file comes; files
    without a machine record are left out."""
    out: dict[str, list[str]] = {}
    for name in names:
        machine = json.loads((bench / name).read_text()).get("machine")
        if machine:
            out.setdefault(machine_name(machine), []).append(name)
    return out


def machines_lines(bench: Path, names: list[str], lead: str) -> list[str]:
    """`lead`, then one list item a machine with the files it made; nothing where no file names a machine."""
    found = by_machine(bench, names)
    if not found:
        return []
    return [lead, "", *(f"- {machine}: {', '.join(f'`{name}`' for name in files)}." for machine, files in
                        found.items())]


def metrics_machine_sentence(repro: dict | None, made: dict | None = None) -> str:
    """Whose draws the default run's metrics are: the machine that made them (`made`, bench/metrics-machine.json),
    and where the timed run (`repro`, bench/repro.json) ran on another machine, that its time is that machine's; without
    `made`, the timed run's machine, which then made them."""
    if made and made.get("machine"):
        m = made["machine"]
        text = (f"The metrics above are one machine's draws: `dvc repro` of commit {made['commit']} made them on the "
                f"{machine_name(m)}, {m['date']}.")
        if repro and repro.get("machine") and machine_name(repro["machine"]) != machine_name(m):
            text += f" The time above is the {machine_name(repro['machine'])}'s, a run of its own."
        return text
    if not repro or not repro.get("machine"):
        return ""
    m = repro["machine"]
    day = f", {m['date']}" if m.get("date") else ""
    return (f"The metrics above are one machine's draws: the timed `dvc repro` of `bench/repro.json` made them on "
            f"the {machine_name(m)}{day}.")

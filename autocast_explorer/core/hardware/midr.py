"""An Arm core's name from its MIDR fields, where neither /proc/cpuinfo nor torch names it.

Linux on Arm lists no model name in /proc/cpuinfo, only the Main ID Register's fields
('CPU implementer', 'CPU part'), and torch.cpu.get_capabilities() says "Unknown" there. The
codes below are the ones Linux's arch/arm64/include/asm/cputype.h defines (the cores people
run torch on: Neoverse servers, Graviton, Ampere, Apple); an unlisted part is named by its
implementer and code instead of guessed.
"""

from __future__ import annotations

#: Implementer code → the company that designed the core.
IMPLEMENTERS: dict[int, str] = {
    0x41: "Arm",
    0x42: "Broadcom",
    0x43: "Cavium",
    0x46: "Fujitsu",
    0x48: "HiSilicon",
    0x4E: "NVIDIA",
    0x51: "Qualcomm",
    0x61: "Apple",
    0x6D: "Microsoft",
    0xC0: "Ampere",
}

#: (implementer, part) → core name.
PARTS: dict[tuple[int, int], str] = {
    (0x41, 0xD03): "Cortex-A53",
    (0x41, 0xD05): "Cortex-A55",
    (0x41, 0xD07): "Cortex-A57",
    (0x41, 0xD08): "Cortex-A72",
    (0x41, 0xD09): "Cortex-A73",
    (0x41, 0xD0A): "Cortex-A75",
    (0x41, 0xD0B): "Cortex-A76",
    (0x41, 0xD0C): "Neoverse-N1",
    (0x41, 0xD0D): "Cortex-A77",
    (0x41, 0xD40): "Neoverse-V1",
    (0x41, 0xD41): "Cortex-A78",
    (0x41, 0xD44): "Cortex-X1",
    (0x41, 0xD46): "Cortex-A510",
    (0x41, 0xD47): "Cortex-A710",
    (0x41, 0xD48): "Cortex-X2",
    (0x41, 0xD49): "Neoverse-N2",
    (0x41, 0xD4D): "Cortex-A715",
    (0x41, 0xD4E): "Cortex-X3",
    (0x41, 0xD4F): "Neoverse-V2",
    (0x41, 0xD80): "Cortex-A520",
    (0x41, 0xD81): "Cortex-A720",
    (0x41, 0xD82): "Cortex-X4",
    (0x41, 0xD84): "Neoverse-V3",
    (0x41, 0xD8E): "Neoverse-N3",
    (0x46, 0x001): "A64FX",
    (0x48, 0xD01): "TSV110 (Kunpeng 920)",
    (0x61, 0x022): "M1 Icestorm",
    (0x61, 0x023): "M1 Firestorm",
    (0x61, 0x032): "M2 Blizzard",
    (0x61, 0x033): "M2 Avalanche",
    (0xC0, 0xAC3): "Ampere-1",
    (0xC0, 0xAC4): "Ampere-1a",
}


def _code(text: str) -> int | None:
    try:
        return int(text.strip(), 0)
    except ValueError:
        return None


def midr_name(implementer: str, part: str) -> str:
    """'Arm Neoverse-N1' from ('0x41', '0xd0c'); '' when the fields are not numbers.

    An unknown part keeps its implementer and code ('Apple core, part 0x048'); implementer 0
    is the code the Arm architecture reserves for software use (qemu's 'max' CPU uses it).
    """
    imp, num = _code(implementer), _code(part)
    if imp is None or num is None:
        return ""
    company = IMPLEMENTERS.get(imp)
    known = PARTS.get((imp, num))
    if company and known:
        return f"{company} {known}"
    if company:
        return f"{company} core, part {num:#05x}"
    if imp == 0:
        reserved = "implementer 0: reserved for software use, e.g. an emulator"
        return f"Arm core ({reserved}), part {num:#05x}"
    return f"Arm core (implementer {imp:#04x}), part {num:#05x}"

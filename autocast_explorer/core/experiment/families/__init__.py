"""Model families: the registry the engine, guards, sweeps and front ends ask.

`family(config)` is the family of a config; FAMILIES lists them in the order menus show them.
Adding a family is one module (its torch-only construction in construct/) and one line here;
everything that lists families (the config's `model` rule and schema, --model's help, the
window's selector, which families take real data, the reproduce script) reads FAMILIES.
`register_family` adds one later (a test's fake family).
"""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_rules import install_family_rules
from autocast_explorer.core.experiment.families.base import (
    ROWS_OF_FEATURES,
    ROWS_OF_IMAGES,
    Family,
    FamilyParam,
    Gemm,
    SweptSize,
)
from autocast_explorer.core.experiment.families.cnn import CnnFamily
from autocast_explorer.core.experiment.families.mlp import MlpFamily
from autocast_explorer.core.experiment.families.rnn import RnnFamily
from autocast_explorer.core.experiment.families.transformer import TransformerFamily
from autocast_explorer.core.experiment.families.user.family import UserFamily

FAMILIES: dict[str, Family] = {
    f.name: f for f in (MlpFamily(), CnnFamily(), TransformerFamily(), RnnFamily())
}
#: The user's own model: every `model` that is a spec (hf:bert, my_model.py:build).
USER = UserFamily()


def register_family(fam: Family) -> None:
    """Add a family after the built-in ones (its params must be config fields of the family
    part; one that takes rows of real data fits a config to them); ValueError for a name
    already taken."""
    if fam.name in FAMILIES or ":" in fam.name:
        raise ValueError(f"a family needs a new name without ':' (got {fam.name!r})")
    for param in fam.params:
        if param.spec.part != "family":
            raise ValueError(f"{fam.name}: {param.name} is not a config field of the family part")
    if fam.rows not in ("", ROWS_OF_FEATURES, ROWS_OF_IMAGES):
        raise ValueError(f"{fam.name}: rows {fam.rows!r} are neither features nor images")
    if fam.rows and (type(fam).fit_data is Family.fit_data or not fam.data_sets):
        raise ValueError(f"{fam.name}: a family that takes rows needs fit_data and data_sets")
    known = {size.name: size for size in swept_sizes()}
    for size in fam.sweeps:
        if size.name == "batch" or known.get(size.name, size) != size:
            raise ValueError(f"{fam.name}: sweeps {size.name} unlike the families before it")
    FAMILIES[fam.name] = fam


def get_family(name: str) -> Family:
    """The family called `name` (KeyError for an unknown one; config validation names it)."""
    return FAMILIES[name]


def family(config: ExperimentConfig) -> Family:
    """The family of `config` (USER for a spec of the user's own model)."""
    return FAMILIES.get(config.model, USER)


def swept_sizes() -> tuple[SweptSize, ...]:
    """Every size some family sweeps (the user's own model's too), each once, in menu order."""
    sizes: dict[str, SweptSize] = {}
    for fam in (*FAMILIES.values(), USER):
        for size in fam.sweeps:
            sizes.setdefault(size.name, size)
    return tuple(sizes.values())


def families_sweeping(name: str) -> tuple[Family, ...]:
    """The registered families that sweep the size `name` (the user's own model not counted)."""
    return tuple(fam for fam in FAMILIES.values() if name in fam.sweep_params)


def data_fitting_words() -> str:
    """'MLP: first width; CNN: channels[0] and image side': what real data sets, by family."""
    return "; ".join(f"{fam.title}: {fam.data_sets}" for fam in FAMILIES.values() if fam.rows)


def family_fields() -> dict[str, FamilyParam]:
    """Every family parameter by config field (shared fields such as seq appear once)."""
    out: dict[str, FamilyParam] = {}
    for fam in FAMILIES.values():
        for param in fam.params:
            out.setdefault(param.name, param)
    return out


class _ConfigRules:
    """The family rules the config asks for (it sits below the families and cannot import them)."""

    def names(self) -> tuple[str, ...]:
        return tuple(FAMILIES)

    def row_models(self) -> tuple[str, ...]:
        return tuple(name for name, fam in FAMILIES.items() if fam.rows)

    def own_fields(self, config: ExperimentConfig) -> set[str]:
        return {p.name for p in family(config).params}

    def describe(self, config: ExperimentConfig) -> str:
        return family(config).describe(config)

    def validate(self, config: ExperimentConfig) -> None:
        family(config).validate(config)


install_family_rules(_ConfigRules())

__all__ = [
    "FAMILIES",
    "USER",
    "Family",
    "FamilyParam",
    "Gemm",
    "data_fitting_words",
    "families_sweeping",
    "family",
    "family_fields",
    "get_family",
    "register_family",
    "swept_sizes",
]

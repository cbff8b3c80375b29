"""The parts an experiment config is made of, each field declared once in its part.

Each part is a frozen dataclass marked `@config_part(name)`; each field is `spec(default, help,
rule, …)` (config_fields.py). ExperimentConfig (config.py) is composed of them: it inherits
every part's fields (the flat constructor, attributes and JSON stay as they were) and gives
each part back as a typed object (`config.measurement.batch`). Torch-free: the window
validates input while torch is still loading.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Self, cast

from autocast_explorer.core.experiment.config_fields import (
    Control,
    Rule,
    boolean,
    choice,
    config_part,
    number,
    spec,
    whole,
)
from autocast_explorer.core.experiment.config_rules import (
    CHANNELS_RULE,
    CHECKPOINT_RULE,
    DATA_RULE,
    INPUT_SHAPE_RULE,
    MAX_TIME_RULE,
    MAX_WIDTH,
    MODEL_RULE,
    THREADS_RULE,
    WIDTHS_RULE,
    model_help,
    parse_routes,
    parse_widths,
)
from autocast_explorer.core.experiment.layer_patterns import KEEP_FLOAT32_RULE
from autocast_explorer.core.experiment.model_args import MODEL_ARGS_SCHEMA
from autocast_explorer.core.experiment.route_kinds import (
    reference_route,
    routes_help,
    routes_refusal,
    routes_schema,
)
from autocast_explorer.core.runtime.dtypes import DTYPES

ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "tanh", "sigmoid", "none")
HEADS: tuple[str, ...] = ("none", "softmax", "log_softmax")
INPUT_DISTRIBUTIONS: tuple[str, ...] = ("normal", "uniform")
MODES: tuple[str, ...] = ("infer", "train")
#: Epochs of float32 training on real data: the digits reach ≥ 95% held out well before this.
DEFAULT_EPOCHS = 20
MAX_EPOCHS = 10_000
OPTIMIZERS: tuple[str, ...] = ("sgd", "adamw")
#: The routes a run measures unless asked for more: the reference alone (eager autocast). Every
#: route, its order and its words are registered in route_kinds.py.
DEFAULT_ROUTES: tuple[str, ...] = (reference_route(),)
#: A learning rate that makes the synthetic task's loss fall within the default 50 steps
#: (SGD with momentum wants a larger step than AdamW, which normalises its updates).
DEFAULT_LR: dict[str, float] = {"sgd": 0.05, "adamw": 0.001}
#: More training steps than anyone watches in a window; far beyond it is a typo.
MAX_STEPS = 100_000
MAX_LR = 100.0
#: Without a `max_time`, a run may go on to this many times its `min_time` per mode while its
#: speedup's interval is wider than the target.
MAX_TIME_FACTOR = 4.0

#: The tutorial's closing example: Linear 256→256, ReLU, Linear 256→256, ReLU, Linear 256→10.
TUTORIAL_WIDTHS: tuple[int, ...] = (256, 256, 256, 10)
TUTORIAL_BATCH = 128

#: Tolerances and scales beyond this are typing slips, not experiments (and overflow float16).
MAX_TOLERANCE = 1e6
MAX_MEMORY_BUDGET_MB = float(1 << 30)
#: The RNN family's recurrent cells.
CELLS: tuple[str, ...] = ("lstm", "gru")
#: A family's size (width, heads, steps): a positive whole number, at most 2**20 (a typo guard).
SIZE = whole(1, ceiling=MAX_WIDTH)

INPUT_KINDS: tuple[str, ...] = ("auto", "float", "tokens")


class ConfigPart:
    """What every part can do: a copy with some fields changed (not validated: a part is a view
    of a validated config; give it back whole to `ExperimentConfig.replace` to validate it)."""

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(cast(Any, self), **changes)  # type: ignore[no-any-return]


@config_part("model")
@dataclass(frozen=True)
class ModelPart(ConfigPart):
    """What is measured: a built-in family or your own model, and the MLP's shape."""

    widths: tuple[int, ...] = spec(
        TUTORIAL_WIDTHS,
        "mlp: layer widths: input, hidden…, classes",
        WIDTHS_RULE,
        text=parse_widths,
        control=Control(
            "&Widths",
            "Layer widths of the MLP: input width, hidden widths…, number of classes. "
            "256,256,256,10 is the tutorial's model: Linear 256→256, ReLU, 256→256, ReLU, "
            "256→10.",
            placeholder="e.g. 256,256,256,10",
        ),
    )
    activation: str = spec(
        "relu",
        "between layers (mlp, cnn) or inside the feed-forward (transformer)",
        choice(ACTIVATIONS),
        control=Control(
            "Ac&tivation",
            "Activation between the layers (MLP, CNN) or inside each encoder layer's "
            "feed-forward (transformer; only relu and gelu allow the fused fast path).",
        ),
    )
    head: str = spec(
        "none",
        "optional output head",
        choice(HEADS),
        control=Control(
            "&Head",
            "Optional output layer: softmax / log_softmax show how autocast treats them on CPU.",
        ),
    )
    model: str = spec(
        "mlp",
        model_help,
        MODEL_RULE,
        default_words="",
        metavar="FAMILY|SPEC",
        control=Control(
            "Mo&del",
            "Which model to measure. mlp is the tutorial's model; cnn, transformer and rnn show "
            "how autocast treats convolutions, attention and recurrent layers on this CPU. Your "
            "model… runs a Hugging Face, torchvision or timm architecture, or your own factory.",
        ),
    )


@config_part("measurement")
@dataclass(frozen=True)
class MeasurementPart(ConfigPart):
    """How it is measured: the batch, dtype, threads, budgets, tolerances and routes."""

    batch: int = spec(
        TUTORIAL_BATCH,
        "rows per forward",
        whole(1, noun="an integer"),
        control=Control(
            "&Batch", "Rows per forward pass (the batch size of the random input x).", maximum=1e6
        ),
    )
    seed: int = spec(
        0,
        "torch.manual_seed",
        whole(0, 2**63 - 1, noun="an integer", span="in 0 … 2**63-1"),
        control=Control(
            "&Seed",
            "torch.manual_seed before building the model and input: same seed, same numbers.",
        ),
    )
    dtype: str = spec(
        "bfloat16",
        "autocast dtype",
        choice(DTYPES),
        control=Control("&Dtype", "The low-precision dtype for torch.autocast('cpu', dtype=…)."),
    )
    threads: int | None = spec(
        None,
        "torch threads",
        THREADS_RULE,
        default_words="default: torch's",
        control=Control(
            "T&hreads",
            "torch.set_num_threads for the run; auto keeps torch's default for this machine.",
            maximum=1024,
            none_text=lambda: f"auto ({os.cpu_count() or 1} cores)",
        ),
    )
    atol: float = spec(
        0.05,
        "allclose atol",
        number(0, ceiling=MAX_TOLERANCE),
        control=Control(
            "&atol",
            "Absolute tolerance for torch.allclose(plain, autocast) on the logits.",
            maximum=1e3,
            decimals=4,
            step=0.01,
        ),
    )
    rtol: float = spec(
        1e-5,
        "allclose rtol",
        number(0, ceiling=MAX_TOLERANCE),
        control=Control(
            "&rtol",
            "Relative tolerance for torch.allclose(plain, autocast) on the logits.",
            maximum=1.0,
            decimals=7,
            step=1e-5,
        ),
    )
    topk: int = spec(
        5,
        "k for top-k agreement",
        whole(1, noun="an integer"),
        control=Control(
            "Top-&k",
            "k for top-k agreement (Agreement tab): is the float32 class among autocast's k "
            "highest logits, and how much do the two top-k sets overlap?",
            maximum=1e6,
        ),
    )
    input_scale: float = spec(
        1.0,
        "multiply x by this",
        number(1e-6, 1e6, words="must be a number in 1e-6 … 1e6"),
        default_words="default 1",
        control=Control(
            "Input &scale",
            "Multiply the random input x by this. bfloat16 has float32's range; float16 "
            "overflows above 65504 and loses precision below 6.1e-5; with tiny inputs the biases "
            "dominate. Run again and compare SQNR (Layer error tab) and agreement.",
            decimals=6,
            step=0.5,
        ),
    )
    input_distribution: str = spec(
        "normal",
        "what the input is drawn from",
        choice(INPUT_DISTRIBUTIONS),
        control=Control(
            "Input d&istribution",
            "Draw x from a normal (torch.randn) or uniform [-1, 1) distribution. Different "
            "inputs give different per-layer error and margins: Run again and compare the Layer "
            "error and Agreement tabs.",
            name="distributionCombo",
        ),
    )
    min_time: float = spec(
        0.5,
        "measurement budget: seconds of timed forwards per mode",
        number(0.001, 600, words="must be a number of seconds in 0.001 … 600"),
        control=Control(
            "&Time per mode",
            "Measurement budget: seconds of timed forward passes per mode. Longer gives steadier "
            "medians.",
            step=0.1,
            suffix=" s",
        ),
    )
    max_time: float | None = spec(
        None,
        "seconds per mode a run may go on past `min_time` while the speedup's 95% interval is "
        "wider than ±5%; a sweep point's budget is `min_time`",
        MAX_TIME_RULE,
        default_words=f"default {MAX_TIME_FACTOR:g} × `min_time`",
        control=Control(
            "Ma&x time per mode",
            "How long a run may go on past the time per mode while the speedup's 95% interval "
            "is wider than ±5% (a busy machine): seconds per mode; auto is "
            f"{MAX_TIME_FACTOR:g} × the time per mode. Sweeps ignore it (a point's budget is its "
            "time).",
            step=0.5,
            suffix=" s",
            none_text=f"auto ({MAX_TIME_FACTOR:g} × time per mode)",
        ),
    )
    allow_slow: bool = spec(
        False,
        "run even if one forward is estimated to take over 10 s (or, with `routes` compiled, a "
        "compile over 120 s)",
        boolean(),
        default_words="",
        control=Control(
            "Allow slow runs (> 10 s per forward)",
            "Run even if one forward pass is estimated to take longer than 10 s (Cancel only "
            "takes effect between forward passes).",
        ),
    )
    memory_budget_mb: float | None = spec(
        None,
        "memory a run may use, in MB",
        number(
            0,
            ceiling=MAX_MEMORY_BUDGET_MB,
            above=True,
            nullable=True,
            words=f"must be a number > 0 and ≤ {MAX_MEMORY_BUDGET_MB:g}",
        ),
        default_words="default: half the RAM available when the run starts",
        flag=None,
        control=Control(
            "&Memory budget",
            "Refuse models whose estimated peak memory exceeds this many MB (auto: half the "
            "memory available now).",
            maximum=1e7,
            decimals=0,
            step=256,
            suffix=" MB",
            none_text="auto (½ free RAM)",
            name="memoryBudgetSpin",
        ),
    )
    routes: tuple[str, ...] = spec(
        DEFAULT_ROUTES,
        routes_help,
        Rule(lambda routes, config: routes_refusal(routes, config.mode), routes_schema),
        default_words="",
        metavar="LIST",
        text=parse_routes,
    )


@config_part("family")
@dataclass(frozen=True)
class FamilyPart(ConfigPart):
    """The built-in families' parameters (each family validates its own; families/)."""

    channels: tuple[int, ...] = spec(
        (3, 32, 64),
        "input channels, then each stage's output channels",
        CHANNELS_RULE,
        metavar="C0,C1,…",
        text=lambda text: parse_widths(text, "channels"),
        control=Control("C&hannels", placeholder="e.g. 3,32,64"),
    )
    image: int = spec(
        32,
        "square image side in pixels",
        whole(2, ceiling=MAX_WIDTH),
        control=Control("&Image side", maximum=4096),
    )
    classes: int = spec(
        10,
        "number of classes the Linear classifier outputs",
        SIZE,
        control=Control("C&lasses", maximum=1e6),
    )
    d_model: int = spec(64, "token width, divisible by heads", SIZE, control=Control("d_&model"))
    heads: int = spec(4, "attention heads", SIZE, control=Control("H&eads", maximum=256))
    seq: int = spec(32, "tokens / time steps per sequence", SIZE, control=Control("Se&quence"))
    depth: int = spec(2, "stacked layers", SIZE, control=Control("De&pth", maximum=64))
    ff: int = spec(
        256, "feed-forward width inside each layer", SIZE, control=Control("&Feed-forward")
    )
    fast_path: bool = spec(
        True,
        "let torch run its fused encoder kernel (eval + no_grad); off measures the ordinary "
        "path (train mode, dropout 0)",
        boolean(),
        default_words="",
        control=Control("Allow the fused fast path (eval + no_grad)"),
    )
    cell: str = spec("lstm", "recurrent cell", choice(CELLS), control=Control("&Cell"))
    features: int = spec(32, "input features per time step", SIZE, control=Control("&Features"))
    hidden: int = spec(64, "hidden state width", SIZE, control=Control("H&idden"))


@config_part("data")
@dataclass(frozen=True)
class DataPart(ConfigPart):
    """Real data (core/data/): "synthetic", "digits" or a file; the user's weights; epochs."""

    data: str = spec(
        "synthetic",
        "digits: the bundled 8×8 handwritten digits; FILE: a .npz, .safetensors or weights-only "
        ".pt with arrays x (rows, features… or images) and y (labels 0…classes−1)",
        DATA_RULE,
        default_words="default synthetic: random inputs, untrained model",
        metavar="synthetic|digits|FILE",
        control=Control(
            "D&ata",
            "What the model sees. Synthetic: random inputs and an untrained model (timing and "
            "dtypes). Handwritten digits: the bundled UCI digits (8×8 images); the model is "
            "trained in float32 first, then its held-out answers are compared in float32 and "
            "under autocast. File…: your own .npz, .safetensors or .pt with arrays x (rows) and "
            "y (labels).",
        ),
    )
    checkpoint: str = spec(
        "",
        "a state_dict (.safetensors or weights-only .pt) to evaluate instead of training",
        CHECKPOINT_RULE,
        default_words="",
        metavar="FILE",
        control=Control(
            "&Weights",
            "Optional: your trained weights (a state_dict as .safetensors or a weights-only .pt) "
            "to evaluate instead of training. Its keys and shapes must match the model.",
        ),
    )
    epochs: int = spec(
        DEFAULT_EPOCHS,
        "float32 training epochs on the data's training rows",
        whole(1, MAX_EPOCHS, span=f"in 1 … {MAX_EPOCHS:,}"),
        control=Control(
            "&Epochs",
            "Epochs of float32 training on the data's training rows (seeded), before the "
            "held-out rows are evaluated both ways.",
        ),
    )


@config_part("user model")
@dataclass(frozen=True)
class UserModelPart(ConfigPart):
    """Your own model (`model` is a spec, families/user/): its keyword arguments and input."""

    model_args: tuple[tuple[str, Any], ...] = spec(
        (),
        "a keyword argument for the factory or config override (repeatable; VALUE reads as "
        "int, float, true/false, a JSON list of those ([1,2]: a list for the factory, a tuple "
        "in the config), else text), e.g. num_hidden_layers=2 or depths=[1,1]",
        Rule(lambda value, config: None, MODEL_ARGS_SCHEMA),  # checked as __post_init__ reads it
        default_words="",
        metavar="KEY=VALUE",
        flag="--model-arg",
        repeat=True,
    )
    input_shape: tuple[int, ...] | None = spec(
        None,
        "one sample's shape; `batch` adds the batch dimension",
        INPUT_SHAPE_RULE,
        default_words="default: what the model says: its example input, its Hugging Face "
        "config, timm's pretrained_cfg, 3,224,224 for torchvision",
        metavar="C,H,W",
        text=lambda text: parse_widths(text, "input_shape"),
    )
    input_kind: str = spec(
        "auto",
        "float tensors or token ids",
        choice(INPUT_KINDS),
        default_words="default auto: what the model says",
    )
    vocab: int | None = spec(
        None,
        "token ids are drawn below this",
        whole(2, ceiling=MAX_WIDTH, nullable=True),
        default_words="default: the model's",
    )
    input_image: int | None = spec(
        None,
        "square side replacing the input's last two dimensions (the image flag)",
        whole(1, ceiling=MAX_WIDTH, nullable=True),
        default_words="default: the model's own",
        flag=None,
    )
    layer_depth: int | None = spec(
        None,
        "layer rows: the recorded modules cut at depth N of the module tree, deeper where "
        "nothing on a path down to N was recorded",
        whole(1, ceiling=MAX_WIDTH, nullable=True),
        default_words="default: the deepest with ≤ 40 rows",
        metavar="N",
    )


@config_part("training")
@dataclass(frozen=True)
class TrainingPart(ConfigPart):
    """Training mode: a float32 and an autocast copy trained side by side."""

    mode: str = spec(
        "infer",
        "infer: time forwards; train: train a float32 and an autocast copy side by side",
        choice(MODES),
        control=Control(
            "M&ode",
            "Inference times forward passes. Training trains two copies of the model side by "
            "side, from the same weights on the same batches: one in float32, one under "
            "autocast, and measures step time, loss, gradient dtypes and the memory saved for "
            "backward.",
            items=(("infer", "Inference"), ("train", "Training")),
        ),
    )
    steps: int = spec(
        50,
        "training steps",
        whole(1, MAX_STEPS, span=f"in 1 … {MAX_STEPS:,}"),
        control=Control(
            "Ste&ps",
            "Training steps for each copy (the loss chart draws them as they complete).",
        ),
    )
    lr: float = spec(
        DEFAULT_LR["sgd"],
        "learning rate",
        number(0, MAX_LR, above=True, words=f"must be a finite number > 0 and at most {MAX_LR:g}"),
        default_words=f"default {DEFAULT_LR['sgd']:g} for sgd, {DEFAULT_LR['adamw']:g} for adamw",
        control=Control(
            "&Learning rate",
            "Learning rate of the optimizer (changing the optimizer sets its usual value).",
            decimals=5,
            step=0.01,
        ),
    )
    optimizer: str = spec(
        "sgd",
        "sgd (momentum 0.9) or adamw",
        choice(OPTIMIZERS),
        control=Control("O&ptimizer", "sgd: SGD with momentum 0.9; adamw: AdamW."),
    )
    scaler: bool = spec(
        True,
        "float16 training: scale the loss with a GradScaler (off: see gradients underflow)",
        boolean(),
        default_words="",
        control=Control(
            "GradScaler for float16",
            "float16 only: scale the loss with torch.amp.GradScaler('cpu') so small gradients "
            "do not underflow. Untick to see what happens without it.",
        ),
    )


@config_part("interventions")
@dataclass(frozen=True)
class InterventionsPart(ConfigPart):
    """What a run changes in the model before measuring it: layers kept in float32."""

    keep_float32: tuple[str, ...] = spec(
        (),
        "a layer kept in float32 under autocast (repeatable): a module path glob such as fc1 "
        "or encoder.layer.*.attention, or a class name such as LayerNorm; autocast is off "
        "inside it and its floating inputs are made float32 (on every route, in training too); "
        "a pattern that names no layer is refused with the nearest module paths",
        KEEP_FLOAT32_RULE,
        default_words="default: none",
        metavar="PATTERN",
        repeat=True,
    )


@dataclass(frozen=True)
class ConfigParts:
    """A config as its parts, each typed: `config.parts.model.widths`. (`config.model` and
    `config.data` are the flat fields, so those two parts are reached here.)"""

    model: ModelPart
    measurement: MeasurementPart
    family: FamilyPart
    data: DataPart
    user_model: UserModelPart
    training: TrainingPart
    interventions: InterventionsPart

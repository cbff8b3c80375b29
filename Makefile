# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast test-as-avx2 lint format bench screenshot screenshots-learn clean

$(STAMP): pyproject.toml setup.py constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "error: Python 3.11 or newer is needed (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,models]'
	@touch $(STAMP)

# Python caches each module's bytecode on its first import unless told not to
# (PYTHONDONTWRITEBYTECODE); an editable install leaves none. Compiled here (about 0.04 s when
# current), the window is ready about 0.1 s sooner all the same.
run: $(STAMP)
	@$(BIN)/python -m compileall -q autocast_explorer >/dev/null || true
	$(BIN)/autocast-explorer

# The suite runs on every core (pytest-xdist; a test file stays on one worker, so a module's
# fixtures are built once): on 2 cores about half the wall time of one process.
PARALLEL := -n auto --maxprocesses=4 --dist loadfile

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PARALLEL)

# While editing: the suite less what needs a wheel build, torch.compile, over 5 s per test, a
# fresh Python or the kit's window (the `install`, `compile`, `slow`, `process` and `window`
# markers in pyproject.toml): about a quarter of the suite's CPU time. `make test` runs everything.
FAST := not install and not compile and not slow and not process and not window
test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PARALLEL) -m "$(FAST)"

# The suite as an AVX2-only host runs it, on a native-bf16 machine (docs/measurement.md,
# "CPU capabilities and running as another CPU kind" says what this does and does not emulate).
# Inductor keeps its own cache for the emulated host: kernels it built natively (AVX-512/AMX)
# and reused under these switches gave wrong outputs.
AVX2_HOST := ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2 \
	AUTOCAST_EXPLORER_CPU_FLAGS=avx2,fma TORCHINDUCTOR_CACHE_DIR=/tmp/autocast-explorer-inductor-avx2
test-as-avx2: $(STAMP)
	$(AVX2_HOST) QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PARALLEL)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info

# Pictures of the real window: Xvfb + the xcb platform at 1280×800 (installs Debian's xvfb and
# the xcb libraries Qt needs when missing). Each target regenerates the PNGs under docs/.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
XCB_LIBS := libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 libxcb-shape0 \
	libxcb-randr0 libxcb-render-util0 libxcb-image0 libxcb-xkb1 libegl1 libfontconfig1 xauth \
	fonts-dejavu-core
XVFB_RUN := QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24 -dpi 96"
# A screen large enough for the layout sweep's biggest window (1920×1080).
XVFB_RUN_LARGE := QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24 -dpi 96"

.PHONY: xvfb-deps screenshot screenshot-numerics screenshots-learn screenshot-sweeps \
	screenshot-families screenshot-training screenshot-routes screenshot-accuracy \
	screenshot-user-model screenshot-layout screenshots
xvfb-deps:
	@command -v Xvfb >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y xvfb; }
	@dpkg -s $(XCB_LIBS) >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y $(XCB_LIBS); }
	@mkdir -p docs

# The default experiment → docs/screenshot.png (the README's picture).
screenshot: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.screenshot docs/screenshot.png

# The numerics tabs: docs/numerics.png, agreement.png, optrace.png, ops.png.
screenshot-numerics: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.numerics_screenshot docs

# The lessons in the projector theme, and Compare.
screenshots-learn: $(STAMP) xvfb-deps
	for scene in lessons compare; do \
		$(XVFB_RUN) $(BIN)/python -m tools.screenshot_learn $$scene docs/$$scene.png \
			|| exit 1; \
	done

# The Sweeps, Placements and Hardware tabs after a real sweep (batch 1…1024, 0.1 s per
# point), the placements of the default model and a small grid → docs/sweeps.png and friends.
# One torch thread: with two on a shared 2-core machine, any other program stalls whole points.
screenshot-sweeps: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.sweep_screenshot docs --threads 1

# A CNN and a transformer (fast path off, dozens of layers) → docs/cnn.png, transformer.png,
# transformer-error.png.
screenshot-families: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.families_screenshot docs

# Real data: the CNN trained on the bundled digits, its flipped digits → docs/accuracy.png.
screenshot-accuracy: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.accuracy_screenshot docs/accuracy.png

# Training mode: the large MLP trained 60 steps in both modes → docs/training.png.
screenshot-training: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.training_screenshot docs/training.png

# Eager, compiled and implicit routes of the tutorial's MLP → docs/routes.png.
screenshot-routes: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.routes_screenshot docs/routes.png

# Your own model: hf:resnet (a ResNet-50 at 64×64, random weights) → docs/user-model.png and
# docs/user-model-layers.png.
screenshot-user-model: $(STAMP) xvfb-deps
	$(XVFB_RUN) $(BIN)/python -m tools.user_model_screenshot docs

# Layout check: every tab at 1024×640, 1280×800 and 1920×1080, with and without the Lessons
# panel, at 100% and 150% text, and every lesson step → out/screens (ignored by git: look at
# them; only the few pictures the docs show are committed, under docs/).
screenshot-layout: $(STAMP) xvfb-deps
	$(XVFB_RUN_LARGE) $(BIN)/python -m tools.layout_sweep out/screens

screenshots: screenshot screenshot-numerics screenshots-learn screenshot-sweeps \
	screenshot-families screenshot-training screenshot-routes screenshot-accuracy \
	screenshot-user-model screenshot-layout

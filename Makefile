# journalbench: the two commands a newcomer needs.
#   make reproduce   rebuild from data/raw (no root) every figure, table, the ledger
#                    results/claims.md, the results at a glance results/summary.md, the HTML
#                    report results/report/index.html (a page per claim) and the provenance
#                    report results/report.html
#   make test        install what the tests need (apt packages when root) and run the whole suite
#   make lab         JupyterLab on notebooks/ (root or not)
# Both are idempotent: a second run skips the set-up that is already done.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.journalbench-installed
# The installer of the pinned environment: uv resolves requirements.txt to the same 156
# packages at the same versions as pip, and installs them, their bytecode compiled as pip's is,
# in 26 s where pip took 61 s (fresh clones, 2026-11-30), the head of every `make test` on a
# clean clone and of a reviewer's first `make reproduce`; without a cache of its own, so that
# nothing is left in ~/.cache (uv's would be 0.8 GB); trusting the system's certificates, as
# pip does where PIP_CERT names the system's bundle (a proxy's own authority included).
UV     := uv==0.13.9
UV_INSTALL = $(BIN)/uv pip install --quiet --no-cache --system-certs --python $(BIN)/python

# Debian packages: what the agent's device, arm, workload and probe modules declare
# (workflow/journalbench/agent/packages.py gathers them; stdlib only, so no venv is needed),
# plus what only the tests use (sshd on loopback and in a network namespace; chromium renders
# the HTML report).
AGENT_PACKAGES := $(shell PYTHONPATH=workflow $(PYTHON) -m journalbench.agent.packages)
TEST_PACKAGES  := openssh-server iproute2 procps chromium
# What builds the YCSB binding (the agent hosts only need the JRE, a workload tool).
BUILD_PACKAGES := maven default-jdk-headless
APT_PACKAGES   := $(AGENT_PACKAGES) $(TEST_PACKAGES) $(BUILD_PACKAGES)

.PHONY: reproduce test venv system-deps guest ycsb lint lab clean-venv

reproduce: venv
	$(BIN)/snakemake --cores 1
	$(BIN)/snakemake --report results/report.html

# The nested part's log, every step of the controller with its time (a test that waited long
# says on what): logs/tests/nested.log.
NESTED_LOG := --log-file=logs/tests/nested.log --log-file-level=DEBUG \
	--log-file-format="%(asctime)s %(levelname)s %(name)s: %(message)s"

# The suite in three parts: the nested host's tests (a QEMU guest under TCG, ten minutes on a
# core and a bit) run beside the tests whose outcome is no measurement: those that touch
# nothing of the system (not marked root: pure functions, the analysis of the shipped runs,
# the notebooks) and the root tests marked unmeasured (SSH, deploy, fetch, resume);
# the other root tests (loop devices, cgroups, containers, guests: they measure) run after
# both, alone. The tests beside the nested host's run at the lowest CPU priority (nice 19), so
# the guest, its QEMU and nbdkit take the CPU first; and the nested test that measures the
# guest's emulated disk (its reference, the run's probe against it: a probe beyond the
# profile's drift limit fails the run, as it should on a real host) has the machine to itself:
# the tests beside (JOURNALBENCH_TESTS_BESIDE set) pause between two of theirs meanwhile
# (tests/quiet.py). The nested part's output follows the first part's, whole; the
# command fails if any part failed.
test: venv system-deps guest ycsb
	$(BIN)/ruff check .
	@nested=$$(mktemp /tmp/journalbench-nested-tests.XXXXXX); \
	echo "test: the nested host's tests run in the background (their output follows the tests beside them)"; \
	$(BIN)/pytest tests/test_nested.py --durations=5 $(NESTED_LOG) > $$nested 2>&1 & pid=$$!; \
	JOURNALBENCH_TESTS_BESIDE=1 nice -n 19 $(BIN)/pytest tests notebooks --nbval-lax -m "not root or unmeasured" --durations=10; pure=$$?; \
	wait $$pid; inside=$$?; cat $$nested; rm -f $$nested; \
	$(BIN)/pytest tests -m "root and not unmeasured" --ignore=tests/test_nested.py --durations=15; system=$$?; \
	echo "test: exit codes: beside $$pure, nested host $$inside, measuring $$system"; \
	[ $$pure = 0 ] && [ $$inside = 0 ] && [ $$system = 0 ]

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 11), "journalbench needs Python >= 3.11, found " + sys.version.split()[0]'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check $(UV)
	$(UV_INSTALL) --compile-bytecode -r requirements.txt
	$(UV_INSTALL) --no-deps -e .
	touch $@

system-deps:
	@test -n "$(AGENT_PACKAGES)" || { echo "system-deps: python3 -m journalbench.agent.packages listed nothing"; exit 1; }
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "system-deps: not root, skipping apt packages (root-only tests will be skipped)"; \
	else \
	  missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "system-deps: installing $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "system-deps: all apt packages present"; fi; \
	fi

# The VM arm's guest kernel and initramfs, from Debian packages, into /var/cache/journalbench/guest,
# and the nested host's initramfs for the same kernel into /var/cache/journalbench/nested.
guest: system-deps
	@if [ "$$(id -u)" = 0 ]; then PYTHONPATH=workflow $(PYTHON) -m journalbench.agent.arms.vm.image \
	  && PYTHONPATH=workflow $(PYTHON) -m journalbench.control.nested.image; \
	else echo "guest: not root, skipping the VM guest kernel (VM and nested-host tests will be skipped)"; fi

# Our YCSB Redis binding (workflow/ycsb-redis): Maven builds it and runs its own unit tests
# (against a real redis-server), then its jar and YCSB 0.17.0's runtime jars go to
# journalbench/agent/workloads/ycsb/, where the agent (and its bundle) takes them from.
# Rebuilt only when a source changed; offline once Maven's local repository holds the
# dependencies (~/.m2).
YCSB_SRC     := workflow/ycsb-redis
YCSB_JARS    := workflow/journalbench/agent/workloads/ycsb
YCSB_STAMP   := $(YCSB_JARS)/.built
YCSB_SOURCES := $(YCSB_SRC)/pom.xml $(shell find $(YCSB_SRC)/src -type f 2>/dev/null)

ycsb: $(YCSB_STAMP)

$(YCSB_STAMP): $(YCSB_SOURCES) | system-deps
	@command -v mvn >/dev/null || { echo "ycsb: mvn not found (Debian package maven; run make as root once)"; exit 1; }
	cd $(YCSB_SRC) && mvn -B -q -Dbinding.source.sha256=$$(find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-64) clean package
	rm -rf $(YCSB_JARS) && mkdir -p $(YCSB_JARS)
	cp $(YCSB_SRC)/target/ycsb-redis-*.jar $(YCSB_SRC)/target/lib/*.jar $(YCSB_JARS)/
	touch $@

# JupyterLab on notebooks/, with the venv's kernel. The notebooks read data/processed/, which the
# pipeline builds: on a fresh clone this runs the analysis first (no report). Jupyter refuses
# to run as root unless told, so uid 0 adds --allow-root. LAB_FLAGS passes more options, e.g.
#   make lab LAB_FLAGS="--no-browser --ip=0.0.0.0 --port=8888"
LAB_FLAGS ?=

lab: venv
	@ls data/processed/*/runs.parquet >/dev/null 2>&1 || $(BIN)/snakemake --cores 1
	cd notebooks && exec ../$(BIN)/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_FLAGS)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

clean-venv:
	rm -rf $(VENV)

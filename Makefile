# journalbench: the two commands a newcomer needs.
#   make reproduce   rebuild every figure, table and results/claims.md from data/raw (no root)
#   make test        install what the tests need (apt packages when root) and run the whole suite
# Both are idempotent: a second run skips the set-up that is already done.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.journalbench-installed

# Debian packages the agent and the tests use (installed only when run as root).
APT_PACKAGES := fio lxc e2fsprogs xfsprogs btrfs-progs util-linux fdisk openssh-server \
                sysbench mariadb-server redis-server bpftrace qemu-system-x86 \
                iproute2 procps psmisc

.PHONY: reproduce test venv system-deps lint clean-venv

reproduce: venv
	$(BIN)/snakemake --cores 1

test: venv system-deps
	$(BIN)/ruff check .
	$(BIN)/pytest tests notebooks --nbval-lax

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 11), "journalbench needs Python >= 3.11, found " + sys.version.split()[0]'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

system-deps:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "system-deps: not root, skipping apt packages (root-only tests will be skipped)"; \
	else \
	  missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "system-deps: installing $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "system-deps: all apt packages present"; fi; \
	fi

lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

clean-venv:
	rm -rf $(VENV)

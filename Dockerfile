# Memory bot image: a small Debian-slim Python with the bot's dependencies in a virtualenv.
#
#   docker compose up -d --build          (see compose.yaml and docs/deploy.md), or by hand:
#   docker build -t memory-bot .
#   docker run -d --env-file .env -e DATA_DIR=/data -v memory-data:/data --stop-timeout 30 memory-bot
#   (-e DATA_DIR=/data wins over the DATA_DIR=./data line of a copied .env.example)
#
# Two stages: the builder makes /opt/venv (pip, its caches and any build tooling stay there); the final stage
# copies only the finished venv and the application code. Dependencies are installed from requirements.lock
# (every package pinned, generated from pyproject.toml by scripts/lock-requirements), before any code is copied:
# a rebuild months later gets the versions the tests ran with, and editing bot/ or cogs/ rebuilds only the last,
# small layers.

# ---------------------------------------------------------------------------------------------------------
FROM python:3.12-slim AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

# binutils for `strip`, below. Builder only: nothing from apt reaches the final image.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends binutils >/dev/null \
 && rm -rf /var/lib/apt/lists/*

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src

# Dependencies only: this layer is rebuilt when the lock file changes, not when the code does.
COPY requirements.lock ./
RUN pip install --no-compile --no-deps -r requirements.lock \
 && pip check

# Trim what never runs in production, so the venv stays under 200 MB (scikit-learn + scipy + numpy are most of
# it): the big libraries' own test suites; build-time files (Cython sources, C headers and sources, static
# libraries, code templates, type stubs); Windows DLLs; bytecode caches; pip/setuptools (the running bot
# installs nothing). The bot uses scikit-learn for CountVectorizer alone (sklearn.feature_extraction, which
# imports sklearn.base, preprocessing and utils, and those most of SciPy): the subpackages nothing of that
# imports go (the estimators, metrics, datasets; about 16 MB), and so do the SciPy subpackages none of it
# imports (io, signal, odr, cluster, fftpack, datasets, misc; about 6 MB). The final stage proves the bot still
# imports and selects with what is left. numpy and scipy vendor some identical libraries (libgfortran,
# libquadmath): scipy's copies become symlinks to numpy's. Extension modules lose their symbol tables (`strip
# --strip-unneeded`, about 10 MB); each stripped file must still load (dlopen) or its original is put back. The
# vendored libraries in *.libs are left alone: they were rewritten by patchelf, and strip breaks such files.
# Babel's CLDR data keeps only the locales of the bot's eight languages and what they inherit from (about 35 MB
# less; tests/test_packaging.py checks the list against what Babel loads for them).
# Then a smoke import proves the trimmed venv still works. Only the venv leaves this stage.
RUN site=$(python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") \
 && cd "$site" \
 && find numpy scipy sklearn -depth -type d -name tests -exec rm -rf {} + \
 && (cd sklearn && rm -rf _loss cluster compose covariance cross_decomposition datasets decomposition ensemble \
      feature_selection frozen gaussian_process impute inspection linear_model manifold metrics mixture \
      model_selection neighbors neural_network semi_supervised svm tree) \
 && (cd scipy && rm -rf io signal odr cluster fftpack datasets misc) \
 && find . -type f \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' -o -name '*.pyi' -o -name '*.c' \
      -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.tp' -o -name '*.a' -o -name '*.dll' \
      -o -name 'meson.build' \) -delete \
 && rm -rf numpy/_core/include \
 && find babel/locale-data -type f -name '*.dat' ! -name root.dat ! -name en.dat ! -name zh.dat ! -name zh_Hans.dat \
      ! -name zh_Hans_CN.dat ! -name ja.dat ! -name ko.dat ! -name es.dat ! -name es_ES.dat ! -name pt.dat \
      ! -name pt_BR.dat ! -name fr.dat ! -name de.dat -delete \
 && for lib in scipy.libs/*; do \
      twin="numpy.libs/${lib#scipy.libs/}"; \
      if [ -f "$twin" ] && cmp -s "$lib" "$twin"; then ln -sf "../$twin" "$lib"; fi; \
    done \
 && find . -type f -name '*.so' ! -path './*.libs/*' | while read -r so; do \
      cp -p "$so" /tmp/original.so; \
      strip --strip-unneeded "$so" \
        && python -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$so" 2>/dev/null \
        || { cp -p /tmp/original.so "$so"; echo "kept unstripped: $so"; }; \
    done \
 && rm -f /tmp/original.so \
 && python -m pip uninstall -y -q pip setuptools wheel \
 && python -c "import numpy, scipy.linalg, scipy.sparse, sklearn.feature_extraction.text, discord, openai, aiofiles, pydantic_settings, rapidfuzz, prometheus_client, asyncpg, babel.numbers, babel.dates, babel.support, cryptography.hazmat.primitives.ciphers.aead; from sklearn.feature_extraction.text import CountVectorizer; CountVectorizer().fit_transform(['smoke test', 'ok']); import datetime; from babel.units import format_unit; [(babel.numbers.format_decimal(1234.5, locale=l), babel.dates.format_date(datetime.date(2024, 6, 14), locale=l), babel.dates.format_skeleton('yMMM', datetime.datetime(2024, 6, 1), locale=l), format_unit(5, 'duration-minute', locale=l)) for l in ('en', 'zh_CN', 'ja', 'ko', 'es_ES', 'pt_BR', 'fr', 'de')]" \
 && find /opt/venv -depth -type d -name __pycache__ -exec rm -rf {} +

# ---------------------------------------------------------------------------------------------------------
FROM python:3.12-slim AS final

LABEL org.opencontainers.image.title="memory-bot" \
      org.opencontainers.image.description="Discord bot with long-term per-user memory"

# Unprivileged user with a fixed uid, so a volume's ownership stays stable across rebuilds.
# /data/keys is where MEMORY_ENCRYPTION_KEY's key store goes: compose.yaml mounts a volume of its own there, so
# that backups of the data volume leave the keys out (docs/deploy.md, "Encryption at rest").
RUN groupadd --system --gid 10001 bot \
 && useradd --system --uid 10001 --gid bot --home-dir /app --no-create-home --shell /usr/sbin/nologin bot \
 && mkdir -p /data/keys \
 && chown bot:bot /data /data/keys \
 && chmod 700 /data/keys

COPY --from=builder /opt/venv /opt/venv

# The code goes last and separately from the venv: a code change rebuilds a few hundred kB, not the venv.
# It is not pip-installed (that would put it inside the venv layer); `python -m bot` finds it through
# PYTHONPATH. It stays owned by root (read-only to the bot); only /data is writable.
# No .pyc files are shipped (they would add about 55 MB): modules are compiled in memory at start, which costs a
# few seconds of start-up once per container start.
WORKDIR /app
COPY bot/ /app/bot/
COPY cogs/ /app/cogs/

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    DATA_DIR=/data \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# The trimmed venv with the code: every module of the bot imports, and a reply's fact selection and the
# near-duplicate test run (what scikit-learn, SciPy and RapidFuzz are here for). Writes nothing.
RUN python -c "import importlib, pkgutil, bot, cogs; [importlib.import_module(m.name) for p in (bot, cogs) for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]; from bot.memory.models import Fact; from bot.memory.pipeline.selector import FactSelector; from rapidfuzz.distance import Indel; facts = [Fact(id=f'fact_{n:08x}', content=f'Plans trip number {n} to Lisbon with the family in spring', confidence=0.9) for n in range(40)]; s = FactSelector(); s.put('u', 1, s.build(facts)); assert s.select('u', 1, facts, ['the Lisbon trip']); assert Indel.normalized_similarity('trip', 'trips') > 0.5"

# Declared after the chown so a fresh named volume is initialised with bot:bot ownership.
VOLUME /data

USER bot

# Healthy means more than "the process exists": the bot rewrites DATA_DIR/heartbeat.json while it is
# connected to Discord, and this command fails when that file is stale, missing or says "disconnected".
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot", "healthcheck"]

# Exec form: python is PID 1 and receives SIGTERM itself, then flushes pending memory updates before exiting.
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "bot"]

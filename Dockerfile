# syntax=docker/dockerfile:1
# One runtime image for every Modelplane composition function, for users with
# Docker. The function it serves is a build argument, so eight packages share
# one set of layers:
#
#   docker build --build-arg FUNCTION=compose-model-deployment -t runtime .
#   crossplane xpkg build -f functions/compose-model-deployment/package \
#       --embed-runtime-image=runtime
#
# `make images` builds the same runtime without Docker (hack/images/build.py:
# mmdebstrap + uv.lock, reproducible) and is what CI tests and releases;
# tests/images/test_dockerfile_recipe.py checks that both describe the same
# runtime: Debian release, entrypoint, user, port, venv, uv version.
#
# Build and run stages are the same Debian release (12, bookworm) with the
# same system Python (3.11, /usr/bin/python3), and the venv sits at /venv in
# both. A venv's interpreter is a symlink to the Python that created it, so
# building with a different release or a /usr/local Python breaks it at run
# time.

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
# uv installs uv.lock (the versions every make target and CI use); it lives
# outside /venv so only the runtime is copied to the run stage. Keep the version
# in step with UV_VERSION in the Makefile.
ARG UV_VERSION=0.13.9
RUN python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv==${UV_VERSION}
ENV UV_PROJECT_ENVIRONMENT=/venv UV_PYTHON=/usr/bin/python3 UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_NO_CACHE=1
WORKDIR /src
# Dependencies first, from the lock alone, so a code change reuses this layer.
COPY pyproject.toml uv.lock ./
RUN /opt/uv/bin/uv sync --locked --no-install-project
# Then the package itself (not editable: the run stage has no /src).
COPY README.md ./
COPY lib lib
COPY schemas schemas
COPY functions functions
COPY apis apis
RUN /opt/uv/bin/uv sync --locked --no-editable \
 && /venv/bin/modelplane --help >/dev/null

FROM gcr.io/distroless/python3-debian12:nonroot AS run
ARG FUNCTION
COPY --from=build /venv /venv
# `modelplane serve` with no name serves $MODELPLANE_FUNCTION.
ENV MODELPLANE_FUNCTION=$FUNCTION
EXPOSE 9443
# Numeric (distroless' nonroot): Kubernetes can only check runAsNonRoot against a number.
USER 65532:65532
# Exec form: render and Crossplane append flags (e.g. --insecure) as arguments.
ENTRYPOINT ["/venv/bin/modelplane", "serve"]

# syntax=docker/dockerfile:1
# One runtime image for every Modelplane composition function. The function
# it serves is a build argument, so eight packages share one set of layers:
#
#   docker build --build-arg FUNCTION=compose-model-deployment -t runtime .
#   crossplane xpkg build -f functions/compose-model-deployment/package \
#       --embed-runtime-image=runtime
#
# Build and run stages are the same Debian release (12, bookworm) with the
# same system Python (3.11, /usr/bin/python3), and the venv sits at /venv in
# both. A venv's interpreter is a symlink to the Python that created it, so
# building with a different release or a /usr/local Python breaks it at run
# time.

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /venv && /venv/bin/pip install --no-cache-dir --upgrade pip
WORKDIR /src
# Dependencies first so a code change reuses the dependency layer.
COPY pyproject.toml setup.py README.md ./
COPY lib/__init__.py lib/__init__.py
RUN /venv/bin/pip install --no-cache-dir .
COPY lib lib
COPY schemas schemas
COPY functions functions
RUN /venv/bin/pip install --no-cache-dir --no-deps --force-reinstall . \
 && /venv/bin/modelplane --help >/dev/null

FROM gcr.io/distroless/python3-debian12:nonroot AS run
ARG FUNCTION
COPY --from=build /venv /venv
# `modelplane serve` with no name serves $MODELPLANE_FUNCTION.
ENV MODELPLANE_FUNCTION=$FUNCTION
EXPOSE 9443
USER nonroot:nonroot
# Exec form: render and Crossplane append flags (e.g. --insecure) as arguments.
ENTRYPOINT ["/venv/bin/modelplane", "serve"]

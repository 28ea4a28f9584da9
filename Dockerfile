# SPDX-License-Identifier: BSD-3-Clause
# The client of the docker compose failover drill (docker-compose.yml):
# Debian 12 with libredlock built from this checkout, the same way CI builds
# it. docker-compose.yml gives the command (the failover program); by hand:
#
#   docker build -t libredlock-client .
#   docker run --rm libredlock-client redlock --help
#
# BASE_IMAGE: any Debian 12 image. scripts/compose-drill.sh gives its own,
# built without a registry, with the build dependencies already in it.
ARG BASE_IMAGE=debian:12
FROM ${BASE_IMAGE}

# The build dependencies, installed by the script CI runs, so the package
# list lives in one place (scripts/deps.sh; --build: only what building
# needs). It is copied alone first, so that this layer is rebuilt only when
# the list changes, not on every source change. The script runs apt-get
# itself (as root here, so without sudo), and nothing when every package is
# there already.
COPY scripts/deps.sh /src/scripts/deps.sh
RUN /src/scripts/deps.sh --build && rm -rf /var/lib/apt/lists/*

# The sources (.dockerignore leaves out .git and any build directory from
# the host), built into /src/build by the project's own build script.
WORKDIR /src
COPY . .
# The programs the image runs (the tool, the failover program and its
# worker), not the tests: a third of the compiling.
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null \
    && cmake --build build -j "$(nproc)" --target redlock-cli redlock-failover redlock-failover-worker

# The drill runs this program; fail the image build here, with a clear
# message, rather than have the client container exit at start.
RUN test -x build/test/failover/redlock-failover \
    || { echo "Dockerfile: build/test/failover/redlock-failover was not built" >&2; exit 1; }

# `redlock` (build/redlock) on PATH, using the drill's config by default:
#   docker compose exec client redlock ping
#   docker compose exec client redlock status nightly-report
ENV PATH=/src/build:$PATH \
    REDLOCK_CONFIG=/src/config/docker.yaml

# syntax=docker/dockerfile:1
#
# runall as an image holding only /usr/local/bin/runall, to copy into any training image:
#
#   docker build -t runall --build-arg VERSION=$(git describe --tags --always --dirty) .
#   # in a training image's Dockerfile:
#   COPY --from=runall /usr/local/bin/runall /usr/local/bin/runall
#
# The binary uses cgo (go-nvml loads libnvidia-ml at run time) and so links glibc. It is built
# on Debian 11 "bullseye" so that it needs glibc 2.31 at most and runs on Ubuntu 20.04 and
# newer CUDA images; the build fails if it needs more. `make release` builds the same binary
# without Docker (docs/release.md).

ARG GO_VERSION=1.26.8

# Go's official images follow Debian's two newest releases and no longer come on bullseye,
# so the toolchain is taken from the official image of the exact Go version (its go and
# compiler binaries are statically linked and run anywhere) and the build runs on bullseye,
# with bullseye's gcc and glibc. That keeps Go pinned by one ARG, with no tarball checksum
# to maintain.
FROM golang:${GO_VERSION} AS go

FROM debian:bullseye AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils ca-certificates gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY --from=go /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH \
    CGO_ENABLED=1 \
    GOTOOLCHAIN=local \
    CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations"
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY . .
# No .git in the build context: pass the version in.
ARG VERSION=dev
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/runall ./cmd/runall \
    && /out/runall version \
    && scripts/check-glibc.sh /out/runall 2.31

# Only the binary. Not runnable by itself (it needs the glibc of the image it is copied
# into), so no ENTRYPOINT: training images set their own, e.g. ["runall", "tasks.yml"].
FROM scratch
COPY --from=build /out/runall /usr/local/bin/runall

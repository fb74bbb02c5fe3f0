# One Dockerfile for both programs of the module: `crashgame` and `operator-sim`.
#
# Online (a registry and the Go module proxy answer), the usual way:
#
#   docker build --build-arg CMD=crashgame    -t crashgame .
#   docker build --build-arg CMD=operator-sim -t operator-sim .
#
# compiles cmd/$CMD in golang:1.26 (static, CGO_ENABLED=0) and puts it alone in
# distroless/static:nonroot with its CA certificates, as user 65532.
#
# Offline (our machines: no registry, no module proxy), `integration/images.sh`
# compiles the binary on the host, where the module cache and the build cache
# already are, stages it with the host's CA bundle in a small build context and
# builds `--target prebuilt --build-arg RUNTIME_IMAGE=scratch`. That stage
# copies files only (no RUN), so it needs no base image but `scratch`, and it
# takes seconds. See integration/go-image/README.md for why (a cold compile
# inside a container takes about two minutes here, and vendoring is not
# allowed in the repo) and for the offline from-source variant with the local
# Go builder image (integration/go-image/build.sh).
#
# Build arguments:
#   GO_IMAGE       the Go toolchain image of the build stage (golang:1.26; offline:
#                  crashgame-go:1.26 from integration/go-image/build.sh)
#   RUNTIME_IMAGE  the base of the final image (distroless static nonroot; offline: scratch)
#   CMD            crashgame | operator-sim (the folder under cmd/)
#   GOPROXY        the module proxy of the build stage (offline: file:///src/.goproxy)
#   GOSUMDB        the checksum database (offline: off; go.sum still verifies every module)
#
# Every RUN is in exec form: the local Go builder image has no shell.
#
# The legacy builder (Docker 20.10 without buildx, as here) builds every stage
# before the target, so the stage order matters: `prebuilt` comes first and must
# succeed without a prebuilt binary (its second COPY source is a wildcard that
# may match nothing), and the compiling stages come after it.

ARG GO_IMAGE=golang:1.26
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

# ---- target "prebuilt": the runtime image around a binary compiled on the host.
# The build context holds bin/image/$CMD/app (static, CGO_ENABLED=0) and
# bin/image/$CMD/etc/ssl/certs/ca-certificates.crt; integration/images.sh stages it.
FROM ${RUNTIME_IMAGE} AS prebuilt
ARG CMD=crashgame
# passwd/group name user 65532 "nonroot" (scratch has no /etc at all).
COPY integration/go-image/rootfs/ bin/image/${CMD}* /
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/app"]

# ---- the build stage of the default target: compile cmd/$CMD from source.
FROM ${GO_IMAGE} AS build
ARG CMD=crashgame
ARG GOPROXY=https://proxy.golang.org,direct
ARG GOSUMDB=sum.golang.org
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly GOPROXY=${GOPROXY} GOSUMDB=${GOSUMDB}
WORKDIR /src
# Offline, the context carries a file proxy of the needed modules in .goproxy/
# (GOPROXY=file:///src/.goproxy); online, go build fetches from the proxy.
COPY . .
WORKDIR /src/cmd/${CMD}
RUN ["go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", "/out/app", "."]

# ---- the default target: the program alone, non-root, with CA certificates.
FROM ${RUNTIME_IMAGE}
COPY integration/go-image/rootfs/ /
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/app /app
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/app"]

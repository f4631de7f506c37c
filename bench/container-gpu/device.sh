#!/usr/bin/env bash
# Runs bench/container-gpu on the GPU machine in one command (at most 8 minutes for 10,000 JPEGs,
# the step compiled once per vCPU count): the --cpus 4,8,16 sweep, the eager and compiled ceilings
# in the same run, every loader row with the compiled step, the row --loader auto picks,
# results.json and results.png in $OUT (or /tmp/cdk-training-io-container-gpu/out). Prepare .gpu/
# first with prepare.sh and carry it.
# Extra arguments go to bench.py: `device.sh --quick` runs the rows of issue #37 in <= 4 minutes on an
# H200 (a 15-minute device session: run it first, then the full sweep if time is left).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v node > /dev/null && [ -f .gpu/node.xz ]; then
  python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('.gpu/node.xz'), open('/tmp/node', 'wb'))"
  chmod +x /tmp/node
  export PATH="/tmp:$PATH"
fi
cli=()
[ -f .gpu/pkg/dist/bin/training-io.js ] && cli=(--cli .gpu/pkg/dist/bin/training-io.js)
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python3 bench/container-gpu/bench.py --cpus 4,8,16 --out "${OUT:-/tmp/cdk-training-io-container-gpu/out}" "${cli[@]}" "$@"

#!/usr/bin/env bash
# Prepares, on a machine with Node.js and this checkout's node_modules, what device.sh needs on the
# GPU machine (which has no Node.js and no network): .gpu/ (git-ignored through .git/info/exclude),
# at most 64 MiB, to name in the device run's `carry`:
#   .gpu/node.xz   this machine's Node binary (links only glibc and libstdc++)
#   .gpu/pkg/      the built CLI (dist/ without tests), package.json, @node-rs/crc32 and sharp (for
#                  `training-io pack --resize`) with their native parts for linux-x64
set -euo pipefail
cd "$(dirname "$0")/../.."
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >> "$exclude"
rm -rf .gpu && mkdir -p .gpu/pkg/node_modules
npx tsc -p tsconfig.json
cp package.json .gpu/pkg/
mkdir -p .gpu/pkg/dist && cp -r dist/bin dist/lib dist/lambda .gpu/pkg/dist/
for module in @node-rs/crc32 @node-rs/crc32-linux-x64-gnu sharp @img/sharp-linux-x64 @img/sharp-libvips-linux-x64 @img/colour \
    detect-libc semver; do
  if [ -e "node_modules/$module" ]; then
    mkdir -p ".gpu/pkg/node_modules/$(dirname "$module")"
    cp -rL "node_modules/$module" ".gpu/pkg/node_modules/$module"
  fi
done
xz -T2 -c "$(command -v node)" > .gpu/node.xz
du -sh .gpu

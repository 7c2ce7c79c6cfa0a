#!/usr/bin/env bash
# Builds libndconv.so into python/ndconv and makes `import ndconv` work for
# this user's python3 without pip or a network: a .pth file in the user
# site-packages names this directory. PYTHON picks the interpreter
# (default python3). Run from anywhere: bash python/install.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
(cd "$here/.." && CGO_ENABLED=1 go build -trimpath -buildmode=c-shared -o "$here/ndconv/libndconv.so" ./capi)
rm -f "$here/ndconv/libndconv.h"
site="$("$python" -m site --user-site)"
mkdir -p "$site"
echo "$here" > "$site/ndconv-dev.pth"
"$python" -c "import ndconv; print('ndconv installed:', ndconv.__file__)"

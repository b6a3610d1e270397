#!/usr/bin/env bash
# Vendors xterm.js into the browser door's package (ansi2048/serve/web/static/vendor):
# the built files of @xterm/xterm and @xterm/addon-fit, each with its licence,
# from the npm registry (`npm pack`: the published tarball, no dependencies run).
# The page loads them from the server's own origin, never from a CDN.
#
#   scripts/vendor_xterm.sh [XTERM_VERSION [FIT_VERSION]]    (default 6.0.0 0.11.0)
#
# The versions vendored are in that directory's VERSIONS file; bump
# them here, run this, and commit what changed.
set -euo pipefail
XTERM=${1:-6.0.0}
FIT=${2:-0.11.0}
cd "$(dirname "$0")/.."
OUT=ansi2048/serve/web/static/vendor
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vendor-xterm.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

(cd "$WORK" && npm pack --silent "@xterm/xterm@$XTERM" "@xterm/addon-fit@$FIT" >/dev/null)
mkdir -p "$WORK/xterm" "$WORK/fit" "$OUT"
tar -xzf "$WORK/xterm-xterm-$XTERM.tgz" -C "$WORK/xterm"
tar -xzf "$WORK/xterm-addon-fit-$FIT.tgz" -C "$WORK/fit"
cp "$WORK/xterm/package/lib/xterm.js" "$OUT/xterm.js"
cp "$WORK/xterm/package/css/xterm.css" "$OUT/xterm.css"
cp "$WORK/xterm/package/LICENSE" "$OUT/LICENSE.xterm"
cp "$WORK/fit/package/lib/addon-fit.js" "$OUT/addon-fit.js"
cp "$WORK/fit/package/LICENSE" "$OUT/LICENSE.addon-fit"
# The source maps the built files name are not shipped: a comment naming one
# would have the browser's tools ask the server for a file it does not serve.
sed -i '/^\/\/# sourceMappingURL=/d' "$OUT/xterm.js" "$OUT/addon-fit.js"
printf '@xterm/xterm %s\n@xterm/addon-fit %s\n' "$XTERM" "$FIT" >"$OUT/VERSIONS"
echo "vendored @xterm/xterm $XTERM and @xterm/addon-fit $FIT into $OUT"

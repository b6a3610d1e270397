#!/usr/bin/env bash
# Keys typed into the game in a Windows console, as real key presses: Wine's
# wineconsole under Xvfb, xdotool typing à, w, Esc [ a, Esc O d, then Ctrl-C.
# Passes if the game recorded "wadq" (à and Esc eat nothing; Ctrl-C quits like
# q) and exited 0 (not killed by the interrupt).
# Needs: Xvfb, xwininfo, xdotool, and the Windows CPython .ci/windows caches.
set -u
cd "$(dirname "$0")/.."
CACHE=${ANSI2048_CI_CACHE:-$HOME/.cache/ansi2048-ci/windows}
python=
for candidate in "$CACHE"/python-*; do
    [[ -f $candidate/.complete ]] && python=$candidate
done
[[ -n $python ]] || {
    echo "scripts/wine_keys.sh: no Windows CPython in $CACHE: run .ci/windows first" >&2
    exit 1
}
export WINEPREFIX=$CACHE/wineprefix-screenshot WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
display=
for number in $(seq 90 120); do
    [[ ! -e /tmp/.X$number-lock && ! -e /tmp/.X11-unix/X$number ]] && display=:$number && break
done
Xvfb "$display" -screen 0 1280x1024x24 >/dev/null 2>&1 &
xvfb=$!
export DISPLAY=$display
work=$(mktemp -d)
trap 'wineserver -k 2>/dev/null; kill $xvfb 2>/dev/null; rm -rf "$work"' EXIT
sleep 2
ANSI2048_DATA_DIR=$(winepath -w "$work") wineconsole "$python/python.exe" -c "
import os, subprocess, sys
status = subprocess.call([sys.executable, '-m', 'ansi2048', '--seed', '7', '--new', '--record', os.path.join(sys.argv[1], 'k.keys')])
open(os.path.join(sys.argv[1], 'status'), 'w', encoding='utf-8').write(str(status))
" "$(winepath -w "$work")" </dev/null >/dev/null 2>&1 &
sleep 12 # the console and the first frame
window=$(xwininfo -root -children | awk '/^ +0x/ && $2 != "(has" { print }' |
    sed -n 's/^ *\(0x[0-9a-f]*\).* \([0-9]*\)x\([0-9]*\)+.*/\2 \3 \1/p' | sort -n -k1,1 -k2,2 | tail -1 | cut -d' ' -f3)
xdotool windowfocus --sync "$window"
xdotool type --window "$window" --delay 300 'à'
xdotool type --window "$window" --delay 300 'w'
xdotool key --window "$window" --delay 300 Escape
xdotool type --window "$window" --delay 300 '[a'
sleep 1
xdotool key --window "$window" --delay 300 Escape
xdotool type --window "$window" --delay 300 'Od'
sleep 2
xdotool key --window "$window" ctrl+c
sleep 5
played=$(sed -n 2p "$work/k.keys" 2>/dev/null)
status=$(cat "$work/status" 2>/dev/null || echo none)
echo "recorded '$played' (expected 'wadq'), exit status $status (expected 0)"
[[ $played == wadq && $status == 0 ]]

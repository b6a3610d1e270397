#!/usr/bin/env bash
# The game in a Windows console window: Wine's wineconsole, under Xvfb, saved
# as a PNG. Wine's console shows escape codes as text, so the game takes it
# for the legacy console (colorama converts the escapes into console calls,
# 16 colours): this is that path, drawn by a console.
#
# It also runs scripts/wine_console_probe.py in a console (what getwch, kbhit,
# ungetwch and Ctrl-C do; the facts tests/test_windows.py's fakes model) and
# prints its findings.
#
# Usage: scripts/wine_screenshot.sh [out.png]   (default docs/wineconsole.png)
# Needs: Xvfb, ImageMagick's `import`, xwininfo, xdotool (optional: to stop the
# AI before the picture), and the Windows CPython that
# .ci/windows leaves in its cache (run that first).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/wineconsole.png}
CACHE=${ANSI2048_CI_CACHE:-$HOME/.cache/ansi2048-ci/windows}
SECONDS_OF_PLAY=${SECONDS_OF_PLAY:-25}

python=
for candidate in "$CACHE"/python-*; do
    [[ -f $candidate/.complete ]] && python=$candidate
done
[[ -n $python ]] || {
    echo "scripts/wine_screenshot.sh: no Windows CPython in $CACHE: run .ci/windows first" >&2
    exit 1
}
# A prefix of its own: ending the run ends every Wine process in it, and only those.
export WINEPREFIX=$CACHE/wineprefix-screenshot WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
winepath -w "$PWD" >"$python/Lib/site-packages/ansi2048-repository.pth"

# A free X display.
display=
for number in $(seq 90 120); do
    if [[ ! -e /tmp/.X$number-lock && ! -e /tmp/.X11-unix/X$number ]]; then
        display=:$number
        break
    fi
done
[[ -n $display ]] || {
    echo "scripts/wine_screenshot.sh: no free X display" >&2
    exit 1
}
work=$(mktemp -d)
pids=()
cleanup() {
    local pid
    wineserver -k 2>/dev/null || true
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
Xvfb "$display" -screen 0 1280x1024x24 >/dev/null 2>&1 &
pids+=($!)
export DISPLAY=$display
sleep 2

# The console window: 80 columns by 32 lines (the big board needs 30).
wine reg add 'HKCU\Console' /v WindowSize /t REG_DWORD /d $(((32 << 16) | 80)) /f >/dev/null
wine reg add 'HKCU\Console' /v ScreenBufferSize /t REG_DWORD /d $(((32 << 16) | 80)) /f >/dev/null

# The probe, in a console of its own.
probe=$work/probe.txt
timeout 120 wineconsole "$python/python.exe" "$(winepath -w scripts/wine_console_probe.py)" "$(winepath -w "$probe")" \
    </dev/null >/dev/null 2>&1 || true
echo "== what the C runtime's console calls do (scripts/wine_console_probe.py, in wineconsole)"
cat "$probe" 2>/dev/null || echo "(the probe wrote nothing)"

# The game: the AI plays (autoplay, 4 moves a second) for a while.
ANSI2048_DATA_DIR=$(winepath -w "$work") wineconsole "$python/python.exe" -m ansi2048 --seed 7 --new --autoplay \
    </dev/null >/dev/null 2>&1 &
pids+=($!)
sleep "$SECONDS_OF_PLAY"
# The console window: the largest top-level window Wine made.
window=$(xwininfo -root -children | awk '/^ +0x/ && $2 != "(has" { print }' |
    sed -n 's/^ *\(0x[0-9a-f]*\).* \([0-9]*\)x\([0-9]*\)+.*/\2 \3 \1/p' | sort -n -k1,1 -k2,2 | tail -1 | cut -d' ' -f3)
[[ -n $window ]] || window=root
# The AI moves 4 times a second: stop it (p) and let the last frame settle, so
# the picture is a frame the console finished drawing.
if command -v xdotool >/dev/null && [[ $window != root ]]; then
    xdotool windowfocus --sync "$window" 2>/dev/null || true
    xdotool type --window "$window" p
    sleep 3
fi
import -window "$window" "$work/a.png"
cp "$work/a.png" "$out"
echo "== the game in wineconsole: $out"

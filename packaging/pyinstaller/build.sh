#!/usr/bin/env bash
# Build the one-folder standalone FrogDesk with PyInstaller, then smoke-test it.
# Usage: packaging/pyinstaller/build.sh [OUT_DIR]   (default: build/pyinstaller)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/build/pyinstaller}"
python="${PYTHON:-python3}"
if ! "$python" -c "import PyInstaller" 2>/dev/null; then
  echo "build.sh: PyInstaller is missing: $python -m pip install pyinstaller" >&2
  exit 2
fi
mkdir -p "$out"
start=$(date +%s)
"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$out/dist" --workpath "$out/work" "$root/packaging/pyinstaller/frogdesk.spec"
built=$(( $(date +%s) - start ))
app="$out/dist/frogdesk/frogdesk"

# Smoke test: version, doctor, and a headless scripted run on a throwaway repository.
smoke="$(mktemp -d)"
trap 'rm -rf "$smoke"' EXIT
export FROGDESK_HOME="$smoke/home"
"$app" --version
"$app" doctor --json --hub-timeout 1 > "$smoke/doctor.json"
"$python" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['llama']['available'], r['llama']" "$smoke/doctor.json"
repo="$smoke/repo"
mkdir -p "$repo"
git -C "$repo" init -q
printf 'hello\n' > "$repo/greeting.txt"
git -C "$repo" add -A
git -C "$repo" -c user.name=smoke -c user.email=smoke@example.invalid commit -qm init
"$python" - "$smoke/script.jsonl" <<'PY'
import json, sys
replies = [
    "Look first.\n</think>\n\n<tool_call>\n<function=Read>\n<parameter=file_path>\ngreeting.txt\n</parameter>\n</function>\n</tool_call>",
    "Now edit.\n</think>\n\n<tool_call>\n<function=Edit>\n<parameter=file_path>\ngreeting.txt\n</parameter>\n<parameter=old_string>\nhello\n</parameter>\n<parameter=new_string>\nhello, frog\n</parameter>\n</function>\n</tool_call>",
    "Done.\n</think>\n\nThe greeting now says hello, frog.",
]
with open(sys.argv[1], "w") as f:
    for text in replies:
        f.write(json.dumps({"text": text}) + "\n")
PY
"$app" run "Make the greeting friendlier" --repo "$repo" --backend script --script "$smoke/script.jsonl" \
  --output "$smoke/out" --json > "$smoke/run.json"
"$python" -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['exit_reason']=='agent', r
assert r['files_changed']==['greeting.txt'], r
" "$smoke/run.json"
grep -q '+hello, frog' "$smoke/out/generated_seed-0.patch"
test "$(cat "$repo/greeting.txt")" = "hello"
echo "standalone build ok: $app (built in ${built}s, $(du -sh "$out/dist/frogdesk" | cut -f1))"

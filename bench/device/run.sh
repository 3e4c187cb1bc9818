#!/usr/bin/env bash
# The device bench on a bare x86-64 Linux GPU machine (no Node, no npm, no network): unpacks the
# bundle's node and dawn.node with Python's lzma module (the machine may have no xz), puts the
# bundled Vulkan loader (and what NVIDIA's driver library links against) on the library path
# where the machine lacks them, points the loader at NVIDIA's ICD when it is in the driver's
# mount, and runs bench.mjs with its own node by absolute path. One JSON object on stdout (on a
# refusal: {"failed": "..."}), also written to $OUT/device-bench.json when OUT is set; progress
# on stderr. Flags: --help (--out is run.sh's own).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${DEVICE_BENCH_WORK:-${TMPDIR:-/tmp}/next-state-device-bench}"

say() { echo "device bench: $*" >&2; }
command -v python3 >/dev/null || { say "python3 is needed to unpack node (its lzma module) and none is on PATH"; exit 3; }
mkdir -p "$work"

# node, dawn.node and bench.mjs side by side: the bundle loads dawn.node from its own folder.
python3 - "$here" "$work" <<'PY'
import hashlib, json, lzma, os, shutil, sys

here, work = sys.argv[1], sys.argv[2]
manifest = json.load(open(os.path.join(here, 'manifest.json')))

def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()

for name, meta in manifest['unpack'].items():
    dst = os.path.join(work, name)
    if os.path.exists(dst) and sha256(dst) == meta['sha256']:
        continue
    tmp = dst + '.tmp'
    with lzma.open(os.path.join(here, meta['from'])) as src, open(tmp, 'wb') as out:
        shutil.copyfileobj(src, out, 1 << 20)
    if sha256(tmp) != meta['sha256']:
        sys.exit('device bench: %s unpacked to other bytes than were packed; the bundle is damaged' % name)
    os.chmod(tmp, meta['mode'])
    os.replace(tmp, dst)
    print('device bench: unpacked %s (%d MiB)' % (name, meta['bytes'] >> 20), file=sys.stderr)
shutil.copyfile(os.path.join(here, 'bench.mjs'), os.path.join(work, 'bench.mjs'))
PY

# Only the libraries this machine lacks, so its own (newer, matched to its driver) win.
ldconfig_bin="$(command -v ldconfig || echo /sbin/ldconfig)"
known="$("$ldconfig_bin" -p 2>/dev/null || true)"
rm -rf "$work/lib" && mkdir -p "$work/lib"
for f in "$here"/lib/*; do
  [[ -e $f ]] || continue
  n="$(basename "$f")"
  grep -qE "^[[:space:]]+${n//./\\.} \(" <<<"$known" || ln -s "$f" "$work/lib/$n"
done
added="$(cd "$work/lib" && ls | tr '\n' ' ')"
[[ -n $added ]] && say "from the bundle: $added"
ldpath="$work/lib"
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [[ -d $d ]] && ldpath="$ldpath:$d"; done
export LD_LIBRARY_PATH="$ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The driver's mount keeps NVIDIA's ICD outside the loader's search path.
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [[ -z ${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-} && -f $icd ]]; then
  export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
  say "Vulkan driver: $icd"
fi

# The bench's stdout goes to stderr and the JSON is printed from the file it writes, so nothing a
# native library prints can get into the one JSON object on stdout.
json="$work/device-bench.json"
rm -f "$json"
set +e
"$work/node" --max-old-space-size=16384 "$work/bench.mjs" "$@" --out "$json" >&2
rc=$?
if [[ -f $json ]]; then
  cat "$json"
  [[ -n ${OUT:-} ]] && mkdir -p "$OUT" && cp "$json" "$OUT/device-bench.json"
  # Last on stderr, where a tool that keeps only the end of the output still shows it.
  python3 - "$json" <<'PY' >&2 || true
import json, sys
d = json.load(open(sys.argv[1]))
if 'summary' in d:
    print('device bench: adapter %s / %s; matmul %s' % (d['adapter']['vendor'], d['adapter']['description'],
          {k: v.get('tflops', v.get('skipped')) for k, v in d['matmul'].items()}))
    for name, line in d['summary'].items():
        print('device bench: %s: %s' % (name, json.dumps(line)))
PY
fi
# errexit stays off: the hint below is best effort and must not change the exit status.
if [[ $rc == 3 && -n ${VK_DRIVER_FILES:-} && -f ${VK_DRIVER_FILES%%:*} ]]; then
  # The usual cause: the ICD's library needs something the image lacks (libXext.so.6, say).
  lib="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "${VK_DRIVER_FILES%%:*}" 2>/dev/null || true)"
  [[ -n $lib && $lib != /* ]] && lib="$("$ldconfig_bin" -p 2>/dev/null | awk -v n="$lib" '$1 == n { print $NF; exit }')"
  missing="$([[ -n $lib ]] && ldd "$lib" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ')"
  [[ -n $missing ]] && say "hint: the Vulkan driver library $lib cannot load: missing $missing"
fi
exit $rc

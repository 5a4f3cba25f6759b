#!/usr/bin/env bash
# Measures the validation cases on this machine's GPU and packs the results
# into one folder, for a machine whose files come back only from one place
# (a lent GPU machine, a batch job):
#
#   bash validation/measure_all.sh OUTDIR [K/N] [SECONDS]
#
# OUTDIR gets versions.txt (GPU, driver, library versions), log-K-of-N.txt
# (the harness's table and every failure) and measurements-K-of-N.tar.gz
# (validation/measurements/NAME.json for each measured case). K/N picks one
# of N interleaved shards of the cases (default 1/1: all of them); SECONDS
# stops the run cleanly before an outer time limit (default 540), keeping
# every case measured so far. With SNAPSHOT_CASE=NAME set, that case is run
# once more with the allocator's history recorded, and OUTDIR gets
# NAME.pickle.gz for `trainmem-cli snapshot`.
#
# Unpack at the repository root: tar -xzf measurements-1-of-2.tar.gz -C validation
set -u
out=${1:?usage: measure_all.sh OUTDIR [K/N] [SECONDS]}
shard=${2:-1/1}
budget=${3:-540}
here=$(cd "$(dirname "$0")" && pwd)
tag=${shard/\//-of-}
work=$(mktemp -d)
mkdir -p "$out"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 - <<'PY'
import importlib, sys
print("python", sys.version.split()[0])
for name in ("torch", "transformers", "peft", "accelerate"):
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as e:
        print(name, "missing:", e)
import torch
print("cuda", torch.version.cuda, "available", torch.cuda.is_available())
PY
} >"$out/versions.txt" 2>&1

started=$(date +%s)
# SIGINT lets the running case end; the cases already written stay.
timeout --signal=INT --kill-after=20 "$budget" \
  python3 "$here/measure_gpu.py" --all --shard "$shard" --out "$work/measurements" >"$out/log-$tag.txt" 2>&1
status=$?
echo "exit status $status after $(( $(date +%s) - started )) s" >>"$out/log-$tag.txt"

if [ -n "${SNAPSHOT_CASE:-}" ]; then
  python3 "$here/measure_gpu.py" "$here/cases/$SNAPSHOT_CASE.json" --out "$work/snapshot-run" \
    --snapshot "$work/snapshots" >>"$out/log-$tag.txt" 2>&1
  gzip -c "$work/snapshots/$SNAPSHOT_CASE.pickle" >"$out/$SNAPSHOT_CASE.pickle.gz" 2>>"$out/log-$tag.txt"
fi

mkdir -p "$work/measurements"
tar -C "$work" -czf "$out/measurements-$tag.tar.gz" measurements
ls "$work/measurements" | wc -l | sed 's/$/ measurement files packed/' >>"$out/log-$tag.txt"
tail -n 50 "$out/log-$tag.txt"
exit "$status"

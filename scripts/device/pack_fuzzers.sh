#!/usr/bin/env bash
# Packs the reader fuzzers for a campaign on a machine with many cores (the GPU machine's
# CPUs): the fuzzers of build-fuzz/ without their debug info, the Debian libraries they
# link (that machine lacks them), and each target's corpus, into .device/fuzz/ (ignored by
# git; carried to the machine). Then run scripts/device/fuzz_campaign.sh there.
#   scripts/fuzz.sh 1 && scripts/device/pack_fuzzers.sh [TARGET...]   (all targets when none named)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.device/fuzz
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && for f in build-fuzz/fuzz/*_fuzzer; do targets+=("$(basename "$f" _fuzzer)"); done
for t in "${targets[@]}"; do
  strip --strip-debug -o "$out/bin/${t}_fuzzer" "build-fuzz/fuzz/${t}_fuzzer"
done
# The libraries that are not the C and C++ runtimes, which every Linux has.
for f in "$out"/bin/*; do ldd "$f"; done | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
# The corpora grown by earlier runs (build-fuzz/corpus), else the seeds (fuzz/corpus).
mkdir -p "$out/corpus"
for t in "${targets[@]}"; do cp -r "build-fuzz/corpus/$t" "$out/corpus/" 2>/dev/null || true; done
# One archive: what travels to the machine is limited (64 MiB with the working tree).
tar -C "$out" -c bin lib corpus | xz -6 -T0 > .device/fuzz.tar.xz
rm -rf "$out"; mkdir -p "$out"; mv .device/fuzz.tar.xz "$out/"
du -sh "$out"/* | sed 's/^/pack: /'

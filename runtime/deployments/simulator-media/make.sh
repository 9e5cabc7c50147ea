#!/usr/bin/env bash
# Regenerates the simulator's output clips: one playable MP4 (H.264 baseline + AAC, 160x90,
# colour bars and a 440 Hz tone) per whole second from 1 to 60. Needs Debian's ffmpeg; the files
# are committed so that neither install nor runtime needs it.
set -euo pipefail
cd "$(dirname "$0")"
for n in $(seq 1 60); do
  ffmpeg -loglevel error -y -f lavfi -i "smptebars=size=160x90:rate=4:duration=$n" \
    -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=$n" \
    -c:v libx264 -profile:v baseline -pix_fmt yuv420p -preset veryslow -crf 45 -g 40 \
    -c:a aac -b:a 8k -ac 1 -movflags +faststart -shortest -map_metadata -1 -fflags +bitexact \
    "clip-$(printf %02d "$n")s.mp4"
done

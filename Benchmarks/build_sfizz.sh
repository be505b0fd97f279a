#!/usr/bin/env bash
# Builds sfizz's offline renderer, sfizz_render (the reference SFZ player, not packaged in
# Debian 12), from source at a pinned commit, outside the repository, for
# Benchmarks/sfz_vs_sfizz.sh:
#
#   Benchmarks/build_sfizz.sh [PREFIX]        (default /work/tools/sfizz; the binary is
#                                              PREFIX/bin/sfizz_render)
#
# What it builds, exactly:
#   sfizz 342cd99dd9eec2cab8f750db23f32f77492177df (2024-03-20, "Fix to pass a Polyphony test";
#   library 1.2.3 plus later changes; the same commit as shared/sfz/sfizz-testfiles), with its
#   git submodules laid in at the commits sfizz pins (`git ls-tree HEAD external/`):
#     external/st_audiofile/thirdparty/dr_libs  mackron/dr_libs     e4a7765e598e9e54dc0f520b7e4416359bee80cc
#     external/st_audiofile/thirdparty/libaiff  sfztools/libaiff    78864a4a2e769e426be8cfd78ae7f5f72e236c33
#     external/st_audiofile/thirdparty/wavpack  dbry/WavPack        07ffb331d23c16e2d2979370441f63ea722760bc
#     external/invoke.hpp                       BlackMATov/invoke.hpp 2c1eabc2e20ab02961f95c704ff0c0818671ddd1
#     external/filesystem                       gulrak/filesystem   8a2edd6d92ed820521d42c94d179462bf06b5ed3
#   and two submodules taken from Debian 12 instead (sfizz's SFIZZ_USE_SYSTEM_* options):
#     external/abseil-cpp (pinned 4a2c63365eff) -> libabsl-dev 20220623.1 (built with
#       ABSL_OPTION_USE_STD_*=0, so sfizz's C++14 build links against it)
#     external/simde      (pinned 2bf459d4ed6d) -> libsimde-dev 0.7.4~rc2 (header-only)
#   Debian packages: build-essential (g++ 12.2), cmake (3.25), ninja-build, pkg-config, git,
#   libabsl-dev, libsimde-dev. CMake, Release, static libsfizz, no LTO:
#     -DSFIZZ_RENDER=ON -DSFIZZ_JACK=OFF -DSFIZZ_TESTS=OFF -DSFIZZ_DEMOS=OFF
#     -DSFIZZ_DEVTOOLS=OFF -DSFIZZ_BENCHMARKS=OFF -DSFIZZ_SHARED=OFF -DENABLE_LTO=OFF
#     -DSFIZZ_USE_SYSTEM_ABSEIL=ON -DSFIZZ_USE_SYSTEM_SIMDE=ON -DSFIZZ_GIT_SUBMODULE_CHECK=OFF
#   and only the sfizz_render target is built (sfizz has no LV2/VST plugin in its tree at
#   this commit: the plugins moved to sfztools/sfizz-ui). libsndfile is not used (sfizz reads
#   WAV, FLAC, Ogg, AIFF and WavPack through st_audiofile and the submodules above).
#
# Where the sources come from: for each repository OWNER/NAME, a git directory under
# $MIRROR (default /work/.mirror: $MIRROR/OWNER+NAME/repo or .../repo/.git, as the
# workplace's fetch tool lays them), else `git clone` from $GIT_BASE/OWNER/NAME.git
# (GIT_BASE, default https://github.com). A commit missing from both is an error.
# The mirror of sfizz lacks one blob (benchmarks/sample.wav, a benchmark input): the
# benchmarks folder is left out, which the build does not need.
#
# Environment: MIRROR, GIT_BASE, SRC (source tree to lay out, default PREFIX-src), BUILD
# (default SRC/build), JOBS (default 2), NICE (default 19), ONLY=sources or ONLY=configure
# (stop after that step), NO_APT=1 (do not apt-get install:
# then a missing package is an error), CLEAN=1 (remove SRC first).
# Exit: 0 built and installed; 1 with one line "build_sfizz.sh: ..." naming what is missing
# or which step failed (the step's log is named).
set -u -o pipefail
PREFIX=${1:-/work/tools/sfizz}
SRC=${SRC:-$PREFIX-src}
BUILD=${BUILD:-$SRC/build}
MIRROR=${MIRROR:-/work/.mirror}
GIT_BASE=${GIT_BASE:-https://github.com}
JOBS=${JOBS:-2}
NICE=${NICE:-19}
LOG=${LOG:-/tmp/build_sfizz.$$.log}
die() { echo "build_sfizz.sh: $*" >&2; exit 1; }

SFIZZ_COMMIT=342cd99dd9eec2cab8f750db23f32f77492177df
SUBMODULES=(
  "external/st_audiofile/thirdparty/dr_libs mackron/dr_libs e4a7765e598e9e54dc0f520b7e4416359bee80cc"
  "external/st_audiofile/thirdparty/libaiff sfztools/libaiff 78864a4a2e769e426be8cfd78ae7f5f72e236c33"
  "external/st_audiofile/thirdparty/wavpack dbry/WavPack 07ffb331d23c16e2d2979370441f63ea722760bc"
  "external/invoke.hpp BlackMATov/invoke.hpp 2c1eabc2e20ab02961f95c704ff0c0818671ddd1"
  "external/filesystem gulrak/filesystem 8a2edd6d92ed820521d42c94d179462bf06b5ed3"
)
APT_PACKAGES="build-essential cmake ninja-build pkg-config git libabsl-dev libsimde-dev"

# 1. Debian packages.
missing=""
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  [ "${NO_APT:-0}" = 1 ] && die "Debian packages missing:$missing (apt-get install$missing)"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing; } >>"$LOG" 2>&1 ||
    die "apt-get install$missing failed (see $LOG)"
fi

# A git directory holding COMMIT of OWNER/NAME: the mirror's, else a fresh clone.
git_dir_for() {  # OWNER/NAME COMMIT -> prints a git dir
  local repo=$1 commit=$2 d
  for d in "$MIRROR/${repo/\//+}/repo/.git" "$MIRROR/${repo/\//+}/repo"; do
    if [ -d "$d" ] && git --git-dir="$d" cat-file -e "$commit^{commit}" 2>/dev/null; then echo "$d"; return 0; fi
  done
  d=$SRC.clones/${repo/\//+}.git
  if [ ! -d "$d" ]; then
    git clone --quiet --bare "$GIT_BASE/$repo.git" "$d" >>"$LOG" 2>&1 || return 1
  fi
  git --git-dir="$d" cat-file -e "$commit^{commit}" 2>/dev/null || return 1
  echo "$d"
}

# 2. Sources: sfizz at its commit, then each submodule at its pinned commit.
[ "${CLEAN:-0}" = 1 ] && rm -rf "$SRC" "$SRC.clones"
if [ ! -f "$SRC/CMakeLists.txt" ]; then
  gd=$(git_dir_for sfztools/sfizz $SFIZZ_COMMIT) ||
    die "sfztools/sfizz $SFIZZ_COMMIT: in neither $MIRROR/sfztools+sfizz/repo nor $GIT_BASE/sfztools/sfizz.git"
  mkdir -p "$SRC"
  entries=$(git --git-dir="$gd" ls-tree --name-only $SFIZZ_COMMIT | grep -v '^benchmarks$')
  # (git archive names the mirror's one absent blob on stderr even when its folder is left out)
  git --git-dir="$gd" archive $SFIZZ_COMMIT -- $entries 2>>"$LOG" | tar -x -C "$SRC" ||
    die "could not extract sfizz $SFIZZ_COMMIT from $gd (see $LOG)"
fi
for s in "${SUBMODULES[@]}"; do
  set -- $s; path=$1; repo=$2; commit=$3
  pinned=$(cd "$SRC" && gd=$(git_dir_for sfztools/sfizz $SFIZZ_COMMIT) && git --git-dir="$gd" ls-tree $SFIZZ_COMMIT "$path" | awk '{print $3}')
  [ -z "$pinned" ] || [ "$pinned" = "$commit" ] || die "$path: sfizz pins $pinned, this script $commit"
  if [ -z "$(ls -A "$SRC/$path" 2>/dev/null)" ]; then
    gd=$(git_dir_for "$repo" "$commit") ||
      die "$repo $commit (submodule $path): in neither $MIRROR/${repo/\//+}/repo nor $GIT_BASE/$repo.git"
    mkdir -p "$SRC/$path"
    git --git-dir="$gd" archive "$commit" | tar -x -C "$SRC/$path" || die "could not extract $repo $commit into $path"
  fi
done
for f in external/st_audiofile/thirdparty/dr_libs/dr_wav.h external/st_audiofile/thirdparty/libaiff/CMakeLists.txt \
         external/st_audiofile/thirdparty/wavpack/CMakeLists.txt external/invoke.hpp/headers/invoke.hpp/invoke.hpp \
         external/filesystem/include/ghc/fs_std_impl.hpp clients/sfizz_render.cpp; do
  [ -f "$SRC/$f" ] || die "$SRC/$f is missing after extraction"
done

[ "${ONLY:-}" = sources ] && { echo "$SRC"; exit 0; }

# 3. Configure, build sfizz_render only, install it.
nice -n "$NICE" cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DSFIZZ_RENDER=ON -DSFIZZ_JACK=OFF -DSFIZZ_TESTS=OFF -DSFIZZ_DEMOS=OFF -DSFIZZ_DEVTOOLS=OFF \
  -DSFIZZ_BENCHMARKS=OFF -DSFIZZ_SHARED=OFF -DENABLE_LTO=OFF \
  -DSFIZZ_USE_SYSTEM_ABSEIL=ON -DSFIZZ_USE_SYSTEM_SIMDE=ON -DSFIZZ_GIT_SUBMODULE_CHECK=OFF \
  >>"$LOG" 2>&1 || die "cmake configure failed (see $LOG)"
[ "${ONLY:-}" = configure ] && { echo "$BUILD"; exit 0; }
nice -n "$NICE" cmake --build "$BUILD" --target sfizz_render -j "$JOBS" >>"$LOG" 2>&1 ||
  die "building sfizz_render failed (see $LOG)"
mkdir -p "$PREFIX/bin" "$PREFIX/share/man/man1"
install -m 755 "$BUILD/library/bin/sfizz_render" "$PREFIX/bin/sfizz_render" || die "cannot install into $PREFIX/bin"
[ -f "$BUILD/clients/sfizz_render.man" ] && install -m 644 "$BUILD/clients/sfizz_render.man" "$PREFIX/share/man/man1/sfizz_render.1"
cat > "$PREFIX/BUILD-INFO.txt" <<EOF
sfizz $SFIZZ_COMMIT built $(date -u +%Y-%m-%dT%H:%MZ) by Benchmarks/build_sfizz.sh
$(for s in "${SUBMODULES[@]}"; do echo "  $s"; done)
  abseil: Debian libabsl-dev $(dpkg-query -W -f='${Version}' libabsl-dev); simde: Debian libsimde-dev $(dpkg-query -W -f='${Version}' libsimde-dev)
  $(g++ --version | head -1); $(cmake --version | head -1)
EOF
"$PREFIX/bin/sfizz_render" --help >/dev/null 2>&1 || die "$PREFIX/bin/sfizz_render does not run"
echo "$PREFIX/bin/sfizz_render"

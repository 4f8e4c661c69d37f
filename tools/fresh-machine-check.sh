#!/usr/bin/env bash
# fresh-machine-check.sh: prove that the README's commands work on a machine that has nothing
# but Debian 12. Builds a minimal Debian 12 (bookworm) system with debootstrap, and in it, as
# a user would, from a clone of the committed tree: tools/install-deps.sh, tools/test.sh (the
# build and every test), and tools/main-job.sh with a tiny training budget.
#
# Usage (as root): tools/fresh-machine-check.sh --data-from DIR [--root DIR] [--keep | --reuse]
#                  [--log FILE] [--set key=value ...]
#   --data-from DIR  the corpus, laid out as tools/get-data.sh --from expects; it is copied
#                    into the new system (which cannot download it) and given to main-job.sh
#   --root DIR       where the new system is built (default: build-fresh/root, gitignored)
#   --keep           keep the system after a successful run (it is always kept after a failure)
#   --reuse          start from the system already in --root instead of a new one: quicker when
#                    iterating, but packages installed by an earlier run are still there
#   --log FILE       the log (default: build-fresh/fresh-machine-check.log)
#   --set key=value  more attn-train overrides for the main job (after the tiny-budget ones)
#
# The committed tree goes in (git clone of HEAD): commit before you run it. debootstrap and
# apt inside the new system use the Debian mirror of this machine's own apt sources
# (/etc/apt/sources.list, /etc/apt/sources.list.d/*.{list,sources}); its bookworm entries are
# copied in. Takes 30 to 50 minutes on 2 cores (no ccache in there). Exits non-zero on any
# failure; every stage is timed. The log has everything (apt, the build, ctest, training).
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd)

readonly SUITE=bookworm
# Tiny budget for the main job: 20 steps, validation and a checkpoint at step 20 on 200 dev
# sentences (the defaults would validate on all 2,000 with an untrained model).
readonly MAIN_JOB_SETS=(train.max_steps=20 train.valid_every=20 train.save_every=20
  data.valid_max_sentences=200)
readonly CHROOT_REPO=/root/attn CHROOT_DATA=/srv/attn-data

root="build-fresh/root"
log="build-fresh/fresh-machine-check.log"
data_from="" keep="" reuse="" extra_sets=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() {
  echo "fresh-machine-check: error: $*" >&2
  exit 1
}

while [[ $# -gt 0 ]]; do
  case $1 in
    --data-from) [[ $# -ge 2 ]] || die "--data-from needs a directory"; data_from=$2; shift 2 ;;
    --root) [[ $# -ge 2 ]] || die "--root needs a directory"; root=$2; shift 2 ;;
    --log) [[ $# -ge 2 ]] || die "--log needs a file"; log=$2; shift 2 ;;
    --set) [[ $# -ge 2 ]] || die "--set needs key=value"; extra_sets+=("$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    --reuse) reuse=1; keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[[ $(id -u) -eq 0 ]] || die "run it as root: debootstrap, chroot and mount need it"
[[ -n $data_from ]] || die "--data-from DIR is required (the new system cannot download the corpus)"
for sub in tatoeba_en_it iwslt17_en_it; do
  [[ -d $data_from/$sub ]] || die "--data-from: $data_from/$sub is not a directory"
done
mkdir -p "$(dirname "$root")" "$(dirname "$log")"
root=$(realpath -m "$root")
# tee ignores Ctrl-C, so that it still takes the clean-up's lines once the script is interrupted.
exec > >(trap '' INT TERM; exec tee "$log") 2>&1

# ---------------------------------------------------------------- stages and timings
stage_names=() stage_seconds=() stage_start=0 stage_count=0
stage() {  # stage NAME [DETAIL]: the name goes in the summary, the detail only in the header
  finish_stage
  stage_count=$((stage_count + 1))
  stage_names+=("$1")
  stage_start=$SECONDS
  printf '\n==== [%d] %s%s    (%s)\n' "$stage_count" "$1" "${2:+: $2}" "$(date -u '+%F %T UTC')"
}
finish_stage() {
  if [[ ${#stage_names[@]} -gt ${#stage_seconds[@]} ]]; then
    stage_seconds+=($((SECONDS - stage_start)))
    printf '==== [%d] %s: %d s\n' "$stage_count" "${stage_names[-1]}" "${stage_seconds[-1]}"
  fi
}
summary() {
  local i
  echo
  echo "==== summary"
  for i in "${!stage_seconds[@]}"; do
    printf '  [%d] %-44s %6d s\n' $((i + 1)) "${stage_names[$i]}" "${stage_seconds[$i]}"
  done
  printf '      %-44s %6d s\n' "total" "$SECONDS"
}

# ---------------------------------------------------------------- mounts
mounted=()
mount_in_root() {  # mount_in_root TARGET MOUNT-ARGS...
  mkdir -p "$root$1"
  mount "${@:2}" "$root$1"
  mounted+=("$root$1")
}
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" || true
  done
  mounted=()
}
# remove_root: delete the system, never through a mount point still in it.
remove_root() {
  [[ -e $root ]] || return 0
  if findmnt -rn -o TARGET | grep -q "^$root\(/\|$\)"; then
    die "something is still mounted under $root: not removing it (see findmnt)"
  fi
  rm -rf --one-file-system "$root"
}

status=1
on_exit() {
  trap '' INT TERM PIPE  # unmount whatever happens: a second Ctrl-C or a closed output
  unmount_all
  finish_stage
  if [[ $status -eq 0 ]]; then
    summary
    if [[ -z $keep ]]; then remove_root; else echo "the system is kept in $root"; fi
    echo "fresh-machine-check: PASSED (log: $log)"
  else
    summary
    local last=""
    [[ $stage_count -eq 0 ]] || last=${stage_names[-1]}
    echo "fresh-machine-check: FAILED at stage [$stage_count] $last; the system is" \
      "kept in $root (inspect: chroot $root; rerun quicker with --reuse; log: $log)"
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- this machine's apt sources
# The deb822 stanzas (*.sources) and one-line entries (*.list) of Debian's own bookworm suites
# (bookworm, bookworm-updates, bookworm-security, ...); other repositories are left out.
host_sources_deb822() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v RS= -v ORS='\n\n' -v suite="$SUITE" '{
      types = ""; suites = ""; enabled = "yes"; n = split($0, line, "\n")
      for (i = 1; i <= n; i++) {
        l = line[i]; if (l ~ /^#/) continue
        key = tolower(l); sub(/:.*/, "", key); sub(/^[^:]*:[ \t]*/, "", l)
        if (key == "types") types = l; else if (key == "suites") suites = l
        else if (key == "enabled") enabled = tolower(l)
      }
      if (enabled == "no" || types !~ /(^|[ \t])deb([ \t]|$)/ || suites == "") next
      m = split(suites, s, /[ \t]+/)
      for (j = 1; j <= m; j++) if (s[j] != "" && s[j] !~ ("^" suite "(-[a-z]+)?$")) next
      print
    }' "$f"
  done
}
host_sources_list() {
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed 's/\[[^]]*\]//' | awk -v suite="$SUITE" '$1 == "deb" && $3 ~ ("^" suite "(-[a-z]+)?$")' || true
}
# The URI that serves the suite itself, for debootstrap.
host_mirror() {
  {
    host_sources_deb822 | awk -v RS= -v suite="$SUITE" '{
      uris = ""; hit = 0; n = split($0, line, "\n")
      for (i = 1; i <= n; i++) {
        l = line[i]; key = tolower(l); sub(/:.*/, "", key); sub(/^[^:]*:[ \t]*/, "", l)
        if (key == "uris") { split(l, u, /[ \t]+/); uris = u[1] }
        if (key == "suites" && (" " l " ") ~ (" " suite " ")) hit = 1
      }
      if (hit && uris != "") print uris
    }'
    # In sources.list, options in [] were dropped above: "deb URI SUITE COMPONENTS".
    host_sources_list | awk -v suite="$SUITE" '$3 == suite { print $2 }'
  } | head -n 1
}

in_root() {  # in_root COMMAND: run COMMAND in the new system, in the clone, with a clean environment
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd $CHROOT_REPO && $1"
}

# ---------------------------------------------------------------- the stages
stage "this machine: debootstrap, mirror, commit"
command -v debootstrap >/dev/null || {
  echo "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
}
mirror=$(host_mirror)
[[ -n $mirror ]] || die "no '$SUITE' entry in this machine's apt sources: no Debian mirror to use"
commit=$(git -C "$checkout" rev-parse HEAD)
echo "debootstrap $(dpkg-query -W -f='${Version}' debootstrap); mirror $mirror (from this machine's apt sources)"
echo "attn commit $commit ($(git -C "$checkout" log -1 --format=%s | cut -c1-70))"
[[ -z $(git -C "$checkout" status --porcelain --untracked-files=no) ]] ||
  echo "note: the checkout has uncommitted changes; they are not part of this check"

if [[ -n $reuse && -x $root/bin/bash ]]; then
  stage "debootstrap: skipped" "--reuse: the system in $root"
else
  stage "debootstrap a minimal Debian 12" "debootstrap --variant=minbase $SUITE $root $mirror"
  remove_root
  debootstrap --variant=minbase "$SUITE" "$root" "$mirror"
fi

stage "set up: apt sources, mounts, clone, corpus" "a clone of $commit"
rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*
host_sources_deb822 >"$root/etc/apt/sources.list.d/debian.sources"
host_sources_list >"$root/etc/apt/sources.list"
echo "apt sources copied in:"
cat "$root/etc/apt/sources.list.d/debian.sources" "$root/etc/apt/sources.list" | sed '/^$/d; s/^/  /'
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# debootstrap writes no /etc/hosts, which every installed Debian has: without it "localhost" does
# not resolve, and Selenium cannot reach the chromedriver it started (the browser tests).
[[ -s $root/etc/hosts ]] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
mount_in_root /proc -t proc proc
mount_in_root /sys -t sysfs sysfs
mount_in_root /dev --bind /dev
mount_in_root /dev/pts --bind /dev/pts
mount_in_root /dev/shm -t tmpfs tmpfs  # Open MPI's shared memory (the MPI tests)
rm -rf "$root$CHROOT_REPO" "$root$CHROOT_DATA"
git clone --quiet --no-checkout "$checkout" "$root$CHROOT_REPO"
git -C "$root$CHROOT_REPO" -c advice.detachedHead=false checkout --quiet "$commit"
mkdir -p "$root$CHROOT_DATA"
cp -r "$data_from/tatoeba_en_it" "$data_from/iwslt17_en_it" "$root$CHROOT_DATA/"
echo "packages installed before install-deps: $(chroot "$root" dpkg-query -W -f='.\n' | wc -l)"
echo "commands missing before install-deps:" \
  "$(chroot "$root" /bin/bash -c 'for c in c++ cmake git curl python3; do command -v $c >/dev/null || echo -n "$c "; done')"

stage "in it: tools/install-deps.sh"
in_root "tools/install-deps.sh"
echo "packages installed after install-deps: $(chroot "$root" dpkg-query -W -f='.\n' | wc -l)"

stage "in it: tools/test.sh (build, every test)"
in_root "tools/test.sh"

main_job="tools/main-job.sh --data-from $CHROOT_DATA"
for kv in "${MAIN_JOB_SETS[@]}" "${extra_sets[@]}"; do main_job+=" --set $kv"; done
stage "in it: tools/main-job.sh, tiny budget" "$main_job"
in_root "$main_job"

finish_stage
status=0

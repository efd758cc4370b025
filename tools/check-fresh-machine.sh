#!/usr/bin/env bash
# The new-machine check: runs the README's two commands on a new Debian 12 (bookworm) root, from a
# clone of the committed tree, in a clean environment, and on success writes
# tools/fresh-machine.stamp, which .ci/run compares with what decides a new machine's install
# (tools/fresh-machine-inputs.sh). Needed because every developer's and CI's machine keeps what
# was ever installed on it, so a green CI cannot show that a new machine builds memc.
#
# The root is `debootstrap --variant=minbase` plus what a user who cloned the repository has (git,
# sudo, CA certificates); the base is cached in $MEMC_FRESH_MACHINE_CACHE (default
# /var/cache/memc-fresh-machine) and unpacked anew for every run. Apt reaches the mirrors the
# host's apt sources name, and where the host trusts extra CA certificates
# (/usr/local/share/ca-certificates, as networks with TLS inspection need) the root trusts them
# too, npm included, as a user's machine on that network would. tools/demo.sh runs as a user with
# sudo, then tools/test.sh as root, in the same clone, as a new user would run them. Logs stay in
# the cache's logs/; the root is removed on success and kept for a look on failure.
# Usage (as root): tools/check-fresh-machine.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${MEMC_FRESH_MACHINE_CACHE:-/var/cache/memc-fresh-machine}"
say() { echo "check-fresh-machine: $*"; }
fail() { echo "check-fresh-machine: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root: debootstrap and chroot need it"

# Mounts made for the root live in a mount namespace of their own and vanish with it.
if [ -z "${MEMC_FRESH_MACHINE_NAMESPACE:-}" ]; then
  MEMC_FRESH_MACHINE_NAMESPACE=1 exec unshare --mount --propagation private --fork "$0" "$@"
fi

base="$cache/bookworm-minbase.tar"
machine="$cache/machine"
logs="$cache/logs"
mkdir -p "$cache" "$logs"

# The first Debian bookworm mirror among the host's apt sources (deb822 .sources or .list lines).
host_mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk -v RS= '{
        uris = ""; suites = ""
        n = split($0, lines, "\n")
        for (i = 1; i <= n; i++) {
          if (lines[i] ~ /^URIs:/) uris = substr(lines[i], 6)
          if (lines[i] ~ /^Suites:/) suites = " " substr(lines[i], 8) " "
        }
        if (suites ~ /[ \t]bookworm[ \t]/) { split(uris, u, " "); print u[1]; exit }
      }' "$file"
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    sed -nE 's/^deb[ \t]+(\[[^]]*\][ \t]+)?([^ \t]+)[ \t]+bookworm[ \t].*/\2/p' "$file"
  done
}

if [ ! -f "$base" ]; then
  command -v debootstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  }
  mirror="$(host_mirror | head -n1)"
  [ -n "$mirror" ] || fail "no Debian bookworm mirror in the host's apt sources"
  say "building the base root (debootstrap --variant=minbase bookworm)"
  rm -rf "$cache/base"
  debootstrap --variant=minbase --include=ca-certificates,git,sudo bookworm "$cache/base" \
    "$mirror" >"$logs/debootstrap.log" 2>&1 || fail "debootstrap failed, see $logs/debootstrap.log"
  tar -C "$cache/base" -cf "$base.partial" . && mv "$base.partial" "$base"
  rm -rf "$cache/base"
fi

say "unpacking a new root in $machine"
rm -rf "$machine"
mkdir -p "$machine"
tar -C "$machine" -xf "$base"

# Apt as the host reaches its mirrors: the host's source files whose keyrings the root has, and
# the host's Acquire settings (proxies, validity of snapshot mirrors).
keyrings_present() {
  local keyring
  for keyring in $(grep -oiE 'signed-by(:|=)[ ]*[^] ]+' "$1" | sed -E 's/^[^:=]*[:=][ ]*//'); do
    [ -f "$machine$keyring" ] || return 1
  done
}
rm -f "$machine/etc/apt/sources.list"
for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
  /etc/apt/sources.list.d/*.sources; do
  if [ -f "$file" ] && keyrings_present "$file"; then cp "$file" "$machine$file"; fi
done
for file in /etc/apt/apt.conf.d/*; do
  if [ -f "$file" ] && grep -q '^[[:space:]]*Acquire::' "$file"; then cp "$file" "$machine$file"; fi
done
cp /etc/resolv.conf /etc/hosts "$machine/etc/"

environment=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
  TERM=dumb)
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$machine/usr/local/share/ca-certificates/"
  chroot "$machine" update-ca-certificates >/dev/null
  environment+=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
fi

chroot "$machine" useradd --create-home --shell /bin/bash memc
echo 'memc ALL=(ALL) NOPASSWD:ALL' >"$machine/etc/sudoers.d/memc"
git clone --quiet --no-hardlinks "$repo" "$machine/home/memc/memc"
checkout="$machine/home/memc/memc"
inputs="$("$checkout/tools/fresh-machine-inputs.sh" "$checkout")"
commit="$(git -C "$checkout" rev-parse --short=12 HEAD)"
chroot "$machine" chown -R memc:memc /home/memc/memc

mount -t proc proc "$machine/proc"
mount --rbind /sys "$machine/sys"
mount --rbind /dev "$machine/dev"

# run NAME USER COMMAND: runs COMMAND in the clone as USER in a clean environment; its output goes
# to the terminal and to logs/NAME.log; sets `status` and `minutes`.
run() {
  local name="$1" user="$2" command="$3" home=/root start=$SECONDS
  [ "$user" = root ] || home="/home/$user"
  say "$name as $user: $command (log: $logs/$name.log)"
  set +e
  chroot --userspec="$user:$user" --groups="$user" "$machine" \
    env -i HOME="$home" USER="$user" LOGNAME="$user" "${environment[@]}" \
    bash -c "cd /home/memc/memc && $command" 2>&1 | tee "$logs/$name.log"
  status=${PIPESTATUS[0]}
  set -e
  minutes="$(awk -v s=$((SECONDS - start)) 'BEGIN { printf "%.1f", s / 60 }')"
}

run demo memc ./tools/demo.sh
demo_status=$status demo_minutes=$minutes
demo_losses="$(awk '/^loss every/ { on = 1; next }
                    on && NF == 2 { if (!first) first = $2; last = $2 }
                    END { print first " -> " last }' "$logs/demo.log")"
run test root ./tools/test.sh
test_status=$status test_minutes=$minutes
test_count="$(sed -nE \
  's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2 tests, \1 failed/p' \
  "$logs/test.log" | tail -n1)"

summary=(
  "demo.sh (as a user with sudo): exit $demo_status, $demo_minutes min, loss $demo_losses"
  "test.sh (as root): exit $test_status, $test_minutes min, ${test_count:-no ctest summary}"
)
for line in "${summary[@]}"; do say "$line"; done
if [ "$demo_status" -ne 0 ] || [ "$test_status" -ne 0 ]; then
  fail "the new machine failed; its root is kept in $machine, logs in $logs"
fi

{
  echo "# Written by tools/check-fresh-machine.sh after both README commands passed on a new"
  echo "# Debian 12 root. .ci/run fails when the lines below differ from"
  echo "# tools/fresh-machine-inputs.sh."
  echo "date: $(date -u +%Y-%m-%d)"
  echo "commit: $commit"
  echo "hash: $(printf '%s\n' "$inputs" | sha256sum | cut -d' ' -f1)"
  for line in "${summary[@]}"; do echo "result: $line"; done
  printf '%s\n' "$inputs"
} >"$repo/tools/fresh-machine.stamp"
say "wrote tools/fresh-machine.stamp (commit it)"
umount -R "$machine/proc" "$machine/sys" "$machine/dev"
rm -rf "$machine"

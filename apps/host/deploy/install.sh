#!/bin/sh
# Installs, upgrades and rolls back heddle-host on a machine with Node >= 20.19 and npm (a Raspberry
# Pi on arm64, an x86_64 box): docs/host.md, "Install on a fleet". Nothing is downloaded: the
# package is installed from its tarball with npm --offline (it has no dependencies).
#
#   install.sh install  <heddle-host-X.tgz> --controller <hex> [--controller <hex>]... [--trust FILE]
#                       [--listen HOST:PORT] [--tier discovered|paired|pinned] [--native]
#   install.sh upgrade  <heddle-host-Y.tgz>
#   install.sh rollback
#   install.sh status
#
# Layout: /opt/heddle-host/<version>/ (one npm prefix per version), /opt/heddle-host/current -> the
# version in use, /usr/local/bin/heddle-host -> current, /etc/heddle-host/ (config, key, trust),
# /var/lib/heddle-host/ (data_dir), /etc/systemd/system/heddle-host.service.
# Options for trying it out: --root DIR (every path under DIR), --no-users (create no accounts, chown
# nothing), --no-systemd (install the unit files, start nothing).
set -eu

die() { echo "install.sh: $*" >&2; exit 1; }

cmd=${1:-}
[ -n "$cmd" ] || die "usage: install.sh install|upgrade|rollback|status ..."
shift
tarball=''
case $cmd in install|upgrade) tarball=${1:-}; [ -n "$tarball" ] || die "$cmd: give the heddle-host tarball"; shift ;; esac

root='' native=0 users=1 systemd=1 listen='0.0.0.0:7400' tier='paired' trust='' controllers=''
while [ $# -gt 0 ]; do
  case $1 in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --native) native=1; shift ;;
    --no-users) users=0; shift ;;
    --no-systemd) systemd=0; shift ;;
    --listen) listen=${2:?--listen needs HOST:PORT}; shift 2 ;;
    --tier) tier=${2:?--tier needs a tier}; shift 2 ;;
    --trust) trust=${2:?--trust needs a file}; shift 2 ;;
    --controller) controllers="$controllers --controller ${2:?--controller needs a key}"; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done

opt="$root/opt/heddle-host"
bin="$root/usr/local/bin"
etc="$root/etc/heddle-host"
data="$root/var/lib/heddle-host"
units="$root/etc/systemd/system"
config="$etc/heddle-host.json"

node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
  || die "heddle-host needs Node >= 20.19 (this is $(node --version))"

# Installs the tarball into its own prefix /opt/heddle-host/<version>; prints the version.
install_version() {
  [ -f "$tarball" ] || die "no such tarball: $tarball"
  v=$(tar -xzOf "$tarball" package/package.json | node -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => { const p = JSON.parse(s); if (p.name !== "heddle-host") process.exit(1); console.log(p.version); })') \
    || die "$tarball is not a heddle-host package"
  cache=$(mktemp -d)
  npm install -g --offline --no-audit --no-fund --loglevel=error --cache "$cache" --prefix "$opt/$v" "$tarball" >&2 \
    || { rm -rf "$cache"; die "npm could not install $tarball"; }
  rm -rf "$cache"
  [ "$("$opt/$v/bin/heddle-host" --version)" = "heddle-host $v" ] || die "the installed heddle-host does not answer --version $v"
  echo "$v"
}

# Points current (and /usr/local/bin/heddle-host) at version $1, remembering the one it replaces.
switch_to() {
  if [ -L "$opt/current" ] && [ "$(readlink "$opt/current")" != "$1" ]; then readlink "$opt/current" > "$opt/previous"; fi
  ln -sfn "$1" "$opt/current"
  mkdir -p "$bin"
  ln -sfn "$opt/current/bin/heddle-host" "$bin/heddle-host"
}

restart() {
  [ $systemd = 1 ] || return 0
  systemctl restart heddle-host && sleep 3 && systemctl is-active --quiet heddle-host
}

case $cmd in
  install)
    [ -n "$controllers" ] || [ -f "$config" ] || die "install: give --controller <hex> (the controller's public key)"
    # An existing configuration is kept: it must agree with the unit that --native selects.
    if [ -f "$config" ]; then
      has_native=$(node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(c.native && c.native.run_as_user ? 1 : 0)' "$config")
      [ "$has_native" = "$native" ] || die "$config and --native disagree: the native route needs native.run_as_user and the native drop-in (User=root); without it the host runs as heddle with no run_as_user"
    fi
    v=$(install_version)
    switch_to "$v"
    if [ $users = 1 ]; then
      id heddle >/dev/null 2>&1 || useradd --system --home-dir /var/lib/heddle-host --no-create-home --shell /usr/sbin/nologin heddle
      if [ $native = 1 ]; then
        id heddle-work >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin heddle-work
      fi
    fi
    if [ ! -f "$config" ]; then
      routes=wasi; [ $native = 1 ] && routes=native,wasi
      trust_arg=''; [ -n "$trust" ] && trust_arg="--trust $trust"
      # shellcheck disable=SC2086 # the --controller and --trust words are meant to split
      "$opt/$v/bin/heddle-host" init --dir "$etc" --listen "$listen" --routes "$routes" --tier "$tier" $controllers $trust_arg
      # data_dir and the revocation list in /var/lib (the unit's StateDirectory, the one place it may
      # write); the run-as user only with the native route,
      # where the unit runs the host as root (heddle-host-native.conf): they always agree.
      HEDDLE_DATA="$data" HEDDLE_NATIVE=$native node -e '
        const fs = require("fs"); const f = process.argv[1]; const c = JSON.parse(fs.readFileSync(f, "utf8"));
        c.data_dir = process.env.HEDDLE_DATA;
        // A pushed list (heddle revoke, workload.revoke) is written here: it must be where the unit
        // lets the host write (ReadWritePaths=/var/lib/heddle-host), not in the read-only /etc.
        c.revocation_list = process.env.HEDDLE_DATA + "/revocations.json";
        c.native = process.env.HEDDLE_NATIVE === "1" ? { run_as_user: "heddle-work" } : {};
        fs.writeFileSync(f + ".tmp", JSON.stringify(c, null, 2) + "\n"); fs.renameSync(f + ".tmp", f);' "$config"
      rmdir "$etc/data" 2>/dev/null || true
    fi
    mkdir -p "$data"
    chmod 0711 "$data"
    if [ $users = 1 ]; then
      chown -R root:heddle "$etc"; chmod 0750 "$etc"
      chown heddle:heddle "$etc/node.key"; chmod 0600 "$etc/node.key"
      [ $native = 1 ] || chown heddle:heddle "$data"
    fi
    # The unit files of the version just installed (this script may have been copied on its own).
    deploy="$opt/$v/lib/node_modules/heddle-host/deploy"
    mkdir -p "$units"
    cp "$deploy/heddle-host.service" "$units/heddle-host.service"
    if [ $native = 1 ]; then
      mkdir -p "$units/heddle-host.service.d"
      cp "$deploy/heddle-host-native.conf" "$units/heddle-host.service.d/native.conf"
    else
      rm -f "$units/heddle-host.service.d/native.conf"
    fi
    if [ $systemd = 1 ]; then systemctl daemon-reload; systemctl enable --now heddle-host; fi
    echo "installed heddle-host $v"
    "$bin/heddle-host" id --config "$config"
    ;;
  upgrade)
    [ -L "$opt/current" ] || die "upgrade: heddle-host is not installed here (run install first)"
    old=$(readlink "$opt/current")
    # What `rollback` goes back to, restored if this upgrade is rolled back (never the failed version).
    before=$(cat "$opt/previous" 2>/dev/null || true)
    v=$(install_version)
    # The new version must accept the configuration and the key before anything changes.
    "$opt/$v/bin/heddle-host" id --config "$config" >/dev/null || die "heddle-host $v refuses $config: still on $old"
    switch_to "$v"
    if ! restart; then
      echo "install.sh: heddle-host $v did not stay up: rolling back to $old" >&2
      switch_to "$old"
      if [ -n "$before" ]; then echo "$before" > "$opt/previous"; else rm -f "$opt/previous"; fi
      restart || true
      exit 1
    fi
    echo "upgraded heddle-host $old -> $v (install.sh rollback goes back)"
    ;;
  rollback)
    [ -f "$opt/previous" ] || die "rollback: no previous version recorded"
    prev=$(cat "$opt/previous")
    [ -x "$opt/$prev/bin/heddle-host" ] || die "rollback: $opt/$prev is gone"
    cur=$(readlink "$opt/current")
    switch_to "$prev"
    restart || die "heddle-host $prev did not stay up"
    echo "rolled back heddle-host $cur -> $prev"
    ;;
  status)
    echo "current: $(readlink "$opt/current" 2>/dev/null || echo none)"
    echo "previous: $(cat "$opt/previous" 2>/dev/null || echo none)"
    installed=''
    for d in "$opt"/*/; do [ -d "$d" ] && [ ! -L "${d%/}" ] && installed="$installed $(basename "$d")"; done
    echo "installed:$installed"
    ;;
  *) die "unknown command $cmd (install, upgrade, rollback, status)" ;;
esac

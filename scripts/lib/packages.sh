# Sourced by the scripts: install_missing WHO PACKAGE... installs the Debian packages named (the caller lists only
# those whose tool or header is missing) with apt-get, as root or through sudo; nothing when none is named.
install_missing() {
  local who=$1
  shift
  (($#)) || return 0
  echo "$who: installing $*"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

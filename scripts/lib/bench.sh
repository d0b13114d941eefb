# Sourced by the bench scripts (from the checkout's root): the C baseline they share and the line naming the machine
# they end with.

# build_roce_write_lat OUT_DIR: roce_write_lat.c (write-lat's ping-pong with RoCE's work in C) into OUT_DIR/roce_write_lat
build_roce_write_lat() {
  gcc -O2 -Wall -Wno-unused-function -pthread -o "$1/roce_write_lat" tests/benchmarks/src/main/c/roce_write_lat.c -ldl
}

# machine_line PART...: "machine: N cpus, MODEL; PART; ..." (the model from lscpu, else /proc/cpuinfo)
machine_line() {
  local model part
  model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
  [ -n "$model" ] || model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')
  printf 'machine: %s cpus, %s' "$(nproc)" "${model:-unknown CPU}"
  for part in "$@"; do
    printf '; %s' "$part"
  done
  printf '\n'
}

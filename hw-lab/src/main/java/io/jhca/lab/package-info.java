/**
 * The {@code hwlab} command-line tools (launcher: {@code ./hwlab} at the repository root).
 *
 * <ul>
 * <li>{@code devices}, {@code devinfo}: ibv_devices and ibv_devinfo over every device of every provider.</li>
 * <li>{@code rc-pingpong}: rdma-core's ibv_rc_pingpong, wire-compatible (TCP exchange {@link io.jhca.lab.PingpongDest},
 * QP attributes, traffic, output lines).</li>
 * <li>{@code perf write-lat|write-bw|read-lat|read-bw|send-lat|send-bw|atomic-lat}: perftest 6.06's programs,
 * wire-compatible (TCP exchange {@link io.jhca.lab.PerftestComm} and {@link io.jhca.lab.PerftestDest}, the per-test
 * handshake order of {@link io.jhca.lab.PerfRun}), with perftest's banner, tables and JSON keys, plus what
 * perftest does not have: an in-process mode (both roles on rxe0/rxe1), the latency histogram (HdrHistogram),
 * JSON and plots, the UDP floor and the JVM/GC report.</li>
 * </ul>
 *
 * <p>Software devices: every wait in these tools calls {@link io.jhca.verbs.Context#progress()}, including waits on
 * the TCP exchange, so the rxe provider may run in either progress mode ({@code -Djhca.rxe.progress=caller|thread}
 * through {@code HWLAB_JAVA_OPTS}).
 */
package io.jhca.lab;

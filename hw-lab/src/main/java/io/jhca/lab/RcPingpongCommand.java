package io.jhca.lab;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** The command line of {@link RcPingpong}, with ibv_rc_pingpong's options and defaults (rc_pingpong.c usage()). */
@Command(name = "rc-pingpong", mixinStandardHelpOptions = true,
        description = {"RC SEND ping-pong, wire-compatible with rdma-core's ibv_rc_pingpong.",
                "Without SERVER: wait for a client; with SERVER: connect to it."})
public final class RcPingpongCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", description = "listen on/connect to TCP port PORT (default ${DEFAULT-VALUE})")
    int port = 18515;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEV", description = "use IB device DEV (default first device found)")
    String device;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "PORT", description = "use port PORT of IB device (default ${DEFAULT-VALUE})")
    int ibPort = 1;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", description = "size of message to exchange (default ${DEFAULT-VALUE})")
    int size = 4096;

    @Option(names = {"-m", "--mtu"}, paramLabel = "SIZE", description = "path MTU (default ${DEFAULT-VALUE})")
    int mtu = 1024;

    @Option(names = {"-r", "--rx-depth"}, paramLabel = "DEP", description = "number of receives to post at a time (default ${DEFAULT-VALUE})")
    int rxDepth = 500;

    @Option(names = {"-n", "--iters"}, paramLabel = "ITERS", description = "number of exchanges (default ${DEFAULT-VALUE})")
    int iters = 1000;

    @Option(names = {"-l", "--sl"}, paramLabel = "SL", description = "service level value (default ${DEFAULT-VALUE})")
    int sl = 0;

    @Option(names = {"-g", "--gid-idx"}, paramLabel = "GIDX",
            description = "local port GID index (default: the first IPv4-mapped GID, 1 on rxe; RoCE needs one)")
    Integer gidIndex;

    @Option(names = "--bind", paramLabel = "ADDR",
            description = "server: listen on ADDR only (default: all addresses, as ibv_rc_pingpong and perftest)")
    String bind;

    @Option(names = "--stall-timeout", paramLabel = "SECONDS",
            description = "fail when a wait sees no progress for this long; 0 = wait forever (default ${DEFAULT-VALUE})")
    int stallSeconds = 30;

    @Option(names = {"-e", "--events"}, description = "sleep on CQ events (default poll for completions)")
    boolean events;

    @Parameters(arity = "0..1", paramLabel = "SERVER", description = "server to connect to (omit to be the server)")
    String server;

    @Override
    public Integer call() throws Exception {
        new RcPingpong(options(), spec.commandLine().getOut()).run();
        return 0;
    }

    RcPingpong.Options options() {
        check(port >= 0 && port <= 65535, "-p/--port must be 0..65535");
        check(ibPort >= 1, "-i/--ib-port must be >= 1");
        check(size >= 1, "-s/--size must be >= 1");
        check(mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096,
                "-m/--mtu must be 256, 512, 1024, 2048 or 4096");
        check(rxDepth >= 1, "-r/--rx-depth must be >= 1");
        check(iters >= 1, "-n/--iters must be >= 1");
        check(sl >= 0 && sl <= 15, "-l/--sl must be 0..15");
        check(gidIndex == null || gidIndex >= 0, "-g/--gid-idx must be >= 0");
        check(stallSeconds >= 0, "--stall-timeout must be >= 0");
        return new RcPingpong.Options(device, ibPort, gidIndex, size, iters, mtu, rxDepth, port, sl, server, bind,
                stallSeconds * 1000L, events);
    }

    private void check(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }
}

package io.jhca.lab;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The options rc-pingpong and srq-pingpong share, with rdma-core's ibv_rc_pingpong / ibv_srq_pingpong names and
 * defaults (rc_pingpong.c, srq_pingpong.c usage()), and their checks.
 */
final class PingpongOptions {
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

    @Option(names = {"-l", "--sl"}, paramLabel = "SL", description = "service level value (default ${DEFAULT-VALUE})")
    int sl = 0;

    @Option(names = {"-g", "--gid-idx"}, paramLabel = "GIDX",
            description = "local port GID index (default: the first IPv4-mapped GID, 1 on rxe; RoCE needs one)")
    Integer gidIndex;

    @Option(names = "--stall-timeout", paramLabel = "SECONDS",
            description = "fail when a wait sees no progress for this long; 0 = wait forever (default ${DEFAULT-VALUE})")
    int stallSeconds = 30;

    /** Refuses values the C tools would not take, naming the option, as a usage error of {@code spec}'s command. */
    void check(CommandSpec spec) {
        check(spec, port >= 0 && port <= 65535, "-p/--port must be 0..65535");
        check(spec, ibPort >= 1, "-i/--ib-port must be >= 1");
        check(spec, size >= 1, "-s/--size must be >= 1");
        check(spec, mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096,
                "-m/--mtu must be 256, 512, 1024, 2048 or 4096");
        check(spec, rxDepth >= 1, "-r/--rx-depth must be >= 1");
        check(spec, sl >= 0 && sl <= 15, "-l/--sl must be 0..15");
        check(spec, gidIndex == null || gidIndex >= 0, "-g/--gid-idx must be >= 0");
        check(spec, stallSeconds >= 0, "--stall-timeout must be >= 0");
    }

    static void check(CommandSpec spec, boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }
}

package io.jhca.lab;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** The command line of {@link RcPingpong}, with ibv_rc_pingpong's options and defaults (rc_pingpong.c usage()). */
@Command(name = "rc-pingpong", mixinStandardHelpOptions = true,
        description = {"RC SEND ping-pong, wire-compatible with rdma-core's ibv_rc_pingpong.",
                "Without SERVER: wait for a client; with SERVER: connect to it."})
public final class RcPingpongCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    PingpongOptions o;

    @Option(names = {"-n", "--iters"}, paramLabel = "ITERS", description = "number of exchanges (default ${DEFAULT-VALUE})")
    int iters = 1000;

    @Option(names = "--bind", paramLabel = "ADDR",
            description = "server: listen on ADDR only (default: all addresses, as ibv_rc_pingpong and perftest)")
    String bind;

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
        o.check(spec);
        PingpongOptions.check(spec, iters >= 1, "-n/--iters must be >= 1");
        return new RcPingpong.Options(o.device, o.ibPort, o.gidIndex, o.size, iters, o.mtu, o.rxDepth, o.port, o.sl, server,
                bind, o.stallSeconds * 1000L, events);
    }
}

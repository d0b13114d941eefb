package io.jhca.lab;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** The command line of {@link SrqPingpong}, with ibv_srq_pingpong's options and defaults (srq_pingpong.c usage()). */
@Command(name = "srq-pingpong", mixinStandardHelpOptions = true,
        description = {"RC SEND ping-pong over several QPs that share one SRQ, wire-compatible with rdma-core's "
                + "ibv_srq_pingpong.", "Without SERVER: wait for a client; with SERVER: connect to it."})
public final class SrqPingpongCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    PingpongOptions o;

    @Option(names = {"-q", "--num-qp"}, paramLabel = "NUM", description = "number of QPs to use (default ${DEFAULT-VALUE})")
    int numQp = 16;

    @Option(names = {"-n", "--iters"}, paramLabel = "ITERS", description = "number of exchanges, all QPs together (default ${DEFAULT-VALUE})")
    int iters = 1000;

    @Option(names = "--bind", paramLabel = "ADDR",
            description = "server: listen on ADDR only (default: all addresses, as ibv_srq_pingpong)")
    String bind;

    @Parameters(arity = "0..1", paramLabel = "SERVER", description = "server to connect to (omit to be the server)")
    String server;

    @Override
    public Integer call() throws Exception {
        new SrqPingpong(options(), spec.commandLine().getOut()).run();
        return 0;
    }

    SrqPingpong.Options options() {
        o.check(spec);
        PingpongOptions.check(spec, numQp >= 1 && numQp <= SrqPingpong.MAX_QP, "-q/--num-qp must be 1.." + SrqPingpong.MAX_QP);
        // srq_pingpong.c: at least one receive per QP
        PingpongOptions.check(spec, numQp <= o.rxDepth, "rx_depth " + o.rxDepth + " is too small for " + numQp
                + " QPs -- must have at least one receive per QP.");
        PingpongOptions.check(spec, iters >= 1, "-n/--iters must be >= 1");
        return new SrqPingpong.Options(o.device, o.ibPort, o.gidIndex, o.size, iters, o.mtu, numQp, o.rxDepth, o.port, o.sl,
                server, bind, o.stallSeconds * 1000L);
    }
}

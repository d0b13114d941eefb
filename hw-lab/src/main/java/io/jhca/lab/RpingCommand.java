package io.jhca.lab;

import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The command line of {@link Rping}, with rdmacm-utils' rping options and defaults (rping.c usage()). */
@Command(name = "rping", mixinStandardHelpOptions = true,
        description = {"RDMA CM ping-pong, wire-compatible with rdmacm-utils' rping: the client advertises its buffers",
                "in SENDs, the server RDMA READs the ping and RDMA WRITEs it back. Connections by RDMA CM over QP1."})
public final class RpingCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "-s", description = "server")
    boolean server;

    @Option(names = "-c", description = "client")
    boolean client;

    @Option(names = "-a", paramLabel = "ADDR", required = true, description = "server: address to bind to; client: server address")
    String address;

    @Option(names = "-I", paramLabel = "ADDR", description = "client: source address to bind to")
    String source;

    @Option(names = "-p", paramLabel = "PORT", description = "port (default ${DEFAULT-VALUE})")
    int port = 7174;

    @Option(names = "-C", paramLabel = "COUNT", description = "client: ping count (default: forever)")
    int count;

    @Option(names = "-S", paramLabel = "SIZE", description = "ping data size (default ${DEFAULT-VALUE})")
    int size = 64;

    @Option(names = "-v", description = "display ping data to stdout")
    boolean verbose;

    @Option(names = "-V", description = "validate ping data")
    boolean validate;

    @Option(names = "-d", description = "debug printfs")
    boolean debug;

    @Option(names = "--stall-timeout", paramLabel = "SECONDS",
            description = "fail when a wait sees no progress for this long; 0 = forever (default ${DEFAULT-VALUE})")
    int stallSeconds = 30;

    @Override
    public Integer call() throws Exception {
        if (server == client) {
            throw new ParameterException(spec.commandLine(), "give exactly one of -s (server) and -c (client)");
        }
        if (size < Rping.MIN_SIZE || size > (1 << 24)) {
            throw new ParameterException(spec.commandLine(), "-S must be " + Rping.MIN_SIZE + ".." + (1 << 24));
        }
        if (port < 1 || port > 65535 || count < 0 || stallSeconds < 0) {
            throw new ParameterException(spec.commandLine(), "-p must be 1..65535, -C and --stall-timeout >= 0");
        }
        return new Rping(new Rping.Options(server, address, source, port, count, size, verbose, validate, debug,
                stallSeconds * 1000L), spec.commandLine().getOut()).run();
    }
}

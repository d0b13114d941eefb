package io.jhca.lab;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code hwlab perf TEST}: perftest's benchmarks, one subcommand per test. */
@Command(name = "perf", mixinStandardHelpOptions = true,
        description = {"perftest-compatible benchmarks (ib_write_lat, ib_write_bw, ...).",
                "Alone, a test runs server and client in this process on rxe0 and rxe1;",
                "with --server it waits for a client, with a SERVER argument it is the client."},
        subcommands = {PerfCommand.WriteLat.class, PerfCommand.WriteBw.class, PerfCommand.ReadLat.class,
                PerfCommand.ReadBw.class, PerfCommand.SendLat.class, PerfCommand.SendBw.class,
                PerfCommand.AtomicLat.class})
public final class PerfCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand (write-lat, write-bw, read-lat, "
                + "read-bw, send-lat, send-bw or atomic-lat)");
    }

    @Command(name = "write-lat", description = "RDMA WRITE latency, as ib_write_lat.")
    static final class WriteLat extends PerfTestCommand {
        WriteLat() {
            super(PerfTest.WRITE_LAT);
        }
    }

    @Command(name = "write-bw", description = "RDMA WRITE bandwidth, as ib_write_bw.")
    static final class WriteBw extends PerfTestCommand {
        WriteBw() {
            super(PerfTest.WRITE_BW);
        }
    }

    @Command(name = "read-lat", description = "RDMA READ latency, as ib_read_lat.")
    static final class ReadLat extends PerfTestCommand {
        ReadLat() {
            super(PerfTest.READ_LAT);
        }
    }

    @Command(name = "read-bw", description = "RDMA READ bandwidth, as ib_read_bw.")
    static final class ReadBw extends PerfTestCommand {
        ReadBw() {
            super(PerfTest.READ_BW);
        }
    }

    @Command(name = "send-lat", description = "SEND/RECV latency, as ib_send_lat.")
    static final class SendLat extends PerfTestCommand {
        SendLat() {
            super(PerfTest.SEND_LAT);
        }
    }

    @Command(name = "send-bw", description = "SEND/RECV bandwidth, as ib_send_bw.")
    static final class SendBw extends PerfTestCommand {
        SendBw() {
            super(PerfTest.SEND_BW);
        }
    }

    @Command(name = "atomic-lat", description = "FETCH_AND_ADD latency, as ib_atomic_lat.")
    static final class AtomicLat extends PerfTestCommand {
        AtomicLat() {
            super(PerfTest.ATOMIC_LAT);
        }
    }
}

package io.jhca.tests.twojvm;

import java.nio.file.Files;
import java.nio.file.Path;

import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.rxe.transport.RxeCounters;

/**
 * {@link RingInjectionTest}'s device, run in a namespace of its own: an rxe device on 127.0.0.1 driven by this thread.
 * It prints how it receives, creates {@code ready} in the directory it is given, and then, each time a file
 * {@code count-N} appears there, prints {@code COUNT N <datagrams received>} and creates {@code counted-N}; it ends
 * when {@code end} appears, or after a minute.
 */
public final class RingInjectionProbe {

    private RingInjectionProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        try (RxeContext ctx = RxeProvider.open(RxeDeviceConfig.builder("rxe0").address("127.0.0.1")
                .progressMode(ProgressMode.CALLER).build())) {
            System.out.println("RECEIVES BY " + ctx.link().receivePath());
            Files.createFile(dir.resolve("ready"));
            long end = System.nanoTime() + 60_000_000_000L;
            int next = 1;
            while (System.nanoTime() < end && !Files.exists(dir.resolve("end"))) {
                ctx.progress();
                if (Files.exists(dir.resolve("count-" + next))) {
                    System.out.println("COUNT " + next + " " + ctx.counters().get(RxeCounters.Counter.RCVD_PKTS));
                    System.out.flush();
                    Files.createFile(dir.resolve("counted-" + next));
                    next++;
                }
                Thread.sleep(1);
            }
        }
    }
}

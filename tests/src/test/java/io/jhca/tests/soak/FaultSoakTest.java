package io.jhca.tests.soak;

import io.jhca.rxe.link.LinkFaults;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.FaultyPairs;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.MixedTraffic;
import io.jhca.tests.harness.RxeDevices;
import io.jhca.tests.harness.Seeds;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Mixed traffic ({@link MixedTraffic}: every RC opcode, inline, two-SGE gathers and scatters, UD alongside) on every
 * kind of device pair, both progress modes, both directions, with links that lose 1%, duplicate 1%, reorder 1% and corrupt 0.5% of
 * the packets in each direction. Every message must arrive exactly once, in order, intact, every atomic apply once,
 * and the faults must really have happened.
 *
 * <p>{@value #MESSAGES_DEFAULT} RC messages a pair by default; {@code -Djhca.soak.messages=100000} for a long run. The
 * seed (traffic and faults) is random and printed; {@code -Djhca.soak.seed=N} replays one.
 */
class FaultSoakTest {
    static final String SEED_PROPERTY = "jhca.soak.seed";
    static final String MESSAGES_PROPERTY = "jhca.soak.messages";
    static final int MESSAGES_DEFAULT = 3000;
    private static final LinkFaults FAULTS = LinkFaults.NONE.withDrop(0.01).withDuplicate(0.01).withReorder(0.01)
            .withCorrupt(0.005);
    private static final long SEED = Seeds.of(SEED_PROPERTY, "FaultSoakTest");

    static Stream<DevicePair> pairs() {
        return FaultyPairs.all(FAULTS, SEED);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // safety net for long runs; the default run takes seconds
    void mixedTrafficUnderFaults(DevicePair pair) {
        int messages = Integer.getInteger(MESSAGES_PROPERTY, MESSAGES_DEFAULT);
        try (Harness h = Harness.open(pair)) {
            MixedTraffic.Result[] r = new MixedTraffic.Result[2];
            try {
                // two thirds from A to B, a third back: each device sends and receives
                r[0] = MixedTraffic.run(h, messages - messages / 3, SEED, -1, Duration.ofSeconds(30), MixedTraffic.Mix.SOAK, false);
                r[1] = MixedTraffic.run(h, messages / 3, SEED + 1, -1, Duration.ofSeconds(30), MixedTraffic.Mix.SOAK, true);
                RxeDevices.assertFaultsHappened(h.a(), h.b());
            } catch (AssertionError e) {
                throw Seeds.replay(e, SEED_PROPERTY, SEED, "soak on " + pair);
            }
            System.out.println("soak on " + pair + ", seed " + SEED + ":\n  " + r[0] + "\n  " + r[1] + "\n"
                    + RxeDevices.describeCounters(h.a(), h.b()));
        }
    }
}

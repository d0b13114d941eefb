package io.jhca.tests.soak;

import io.jhca.rxe.link.LinkFaults;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.FaultyPairs;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.MixedTraffic;
import io.jhca.tests.harness.RxeDevices;
import io.jhca.tests.harness.Seeds;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * RC traffic of every opcode carried across the 24-bit PSN wrap (0xFFFFFF -> 0) under loss, duplication and
 * reordering, on every kind of device pair: the requester's send PSNs start a few before 0xFFFFFF, so the first
 * packets, their ACKs, NAKs, retransmissions, duplicate READ replays and atomic replies straddle the wrap. A PSN
 * compared without the 24-bit modulus (rxe {@code psn_compare}: the sign of {@code (a - b) << 8}, half the space
 * each way) takes a retransmission for a new packet or a new packet for a duplicate, and the content checks of
 * {@link MixedTraffic} or a stall show it. Faults are denser than in the soak so that some hit the few dozen packets
 * around the wrap; eight short rounds a pair, every other one from B to A, a third of the messages READs and atomics (a lost READ response or
 * atomic reply sends the requester back to a PSN before the wrap while the responder is past it). The seed is
 * random and printed; {@code -Djhca.psnwrap.seed=N} replays one.
 */
class PsnWrapTest {
    static final String SEED_PROPERTY = "jhca.psnwrap.seed";
    private static final int MESSAGES = 60;
    private static final int ROUNDS = 8;
    private static final LinkFaults FAULTS = LinkFaults.NONE.withDrop(0.08).withDuplicate(0.08).withReorder(0.08)
            .withCorrupt(0.01);
    private static final long SEED = Seeds.of(SEED_PROPERTY, "PsnWrapTest");

    static Stream<DevicePair> pairs() {
        return FaultyPairs.all(FAULTS, SEED);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void everyOpcodeAcrossTheWrapUnderFaults(DevicePair pair) {
        SplittableRandom rnd = new SplittableRandom(SEED);
        try (Harness h = Harness.open(pair)) {
            for (int round = 0; round < ROUNDS; round++) {
                int start = 0xFFFFFF - rnd.nextInt(16);
                try {
                    MixedTraffic.Result r = MixedTraffic.run(h, MESSAGES, SEED + round, start, Duration.ofSeconds(10),
                            MixedTraffic.Mix.READ_HEAVY, round % 2 == 1);
                    System.out.println("PSN wrap on " + pair + ", seed " + SEED + " round " + round + ": " + r);
                } catch (AssertionError e) {
                    throw Seeds.replay(e, SEED_PROPERTY, SEED, "PSN wrap from 0x" + Integer.toHexString(start) + " on " + pair);
                }
            }
            System.out.println(RxeDevices.describeCounters(h.a(), h.b()));
            try {
                // loss, duplication and reordering in both directions; corruption is there, but too rare to require
                RxeDevices.assertFaultsHappened(h.a(), h.b(), false);
            } catch (AssertionError e) {
                throw Seeds.replay(e, SEED_PROPERTY, SEED, "PSN wrap on " + pair);
            }
        }
    }
}

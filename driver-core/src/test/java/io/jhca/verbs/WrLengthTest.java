package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * A WR's message length is the sum of its SGE lengths taken unsigned, as {@code struct ibv_sge}'s {@code uint32_t
 * length}: checked at the edges for no SGE, one (which takes a shortcut) and several, send and receive alike.
 */
class WrLengthTest {

    @Test
    void oneSgeIsItsLengthUnsigned() {
        for (int length : new int[] {0, 1, Integer.MAX_VALUE, Integer.MIN_VALUE, -1}) {
            long unsigned = length & 0xFFFFFFFFL;
            assertEquals(unsigned, sendOf(length).totalLength(), "send, one SGE of " + length);
            assertEquals(unsigned, recvOf(length).totalLength(), "recv, one SGE of " + length);
        }
    }

    @Test
    void noSgeIsZeroAndSeveralAddUpUnsigned() {
        assertEquals(0, new SendWr(4).totalLength());
        assertEquals(0, new RecvWr(4).totalLength());
        assertEquals(2 * 0xFFFFFFFFL, sendOf(-1, -1).totalLength());
        assertEquals(2 * 0xFFFFFFFFL, recvOf(-1, -1).totalLength());
        assertEquals(0x80000000L, sendOf(0x40000000, 0x40000000).totalLength());
        // lengths left in SGEs past numSge do not count
        SendWr s = sendOf(5, 7, 11).numSge(2);
        assertEquals(12, s.totalLength());
        RecvWr r = recvOf(5, 7, 11).numSge(1);
        assertEquals(5, r.totalLength());
        long seed = Long.getLong("jhca.wrlength.seed", System.nanoTime());
        System.out.println("WrLengthTest seed " + seed + " (replay: -Djhca.wrlength.seed=" + seed + ")");
        Random random = new Random(seed);
        for (int round = 0; round < 1000; round++) {
            int n = 1 + random.nextInt(4);
            int[] lengths = new int[n];
            long sum = 0;
            for (int i = 0; i < n; i++) {
                lengths[i] = random.nextInt();
                sum += lengths[i] & 0xFFFFFFFFL;
            }
            assertEquals(sum, sendOf(lengths).totalLength(), "send, seed " + seed + ", round " + round);
            assertEquals(sum, recvOf(lengths).totalLength(), "recv, seed " + seed + ", round " + round);
        }
    }

    private static SendWr sendOf(int... lengths) {
        SendWr wr = new SendWr(4).numSge(lengths.length);
        for (int i = 0; i < lengths.length; i++) {
            wr.sge(i).set(0x1000L * i, lengths[i], 7);
        }
        return wr;
    }

    private static RecvWr recvOf(int... lengths) {
        RecvWr wr = new RecvWr(4).numSge(lengths.length);
        for (int i = 0; i < lengths.length; i++) {
            wr.sge(i).set(0x1000L * i, lengths[i], 7);
        }
        return wr;
    }

    @Test
    void numSgeIsWithinTheElementsThereAre() {
        // 0..maxSge, both ends inclusive; a negative count is refused, not taken as no SGE
        assertEquals(2, new SendWr(2).numSge(2).numSge());
        assertEquals(0, new RecvWr(2).numSge(0).numSge());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new SendWr(2).numSge(3));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new SendWr(2).numSge(-1));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new RecvWr(2).numSge(-1));
    }
}

package io.jhca.connectx;

/**
 * The child JVM of {@link Mlx5SteadyStateAllocationTest#interpretedOperationsAllocateNothing}, run with -Xint: the
 * data path's operations in the interpreter, which has no escape analysis, so every object they create is counted.
 * Prints "ROUND builder=B postSend=P" (bytes) for three rounds of 100 operations of each kind, after 50 that do
 * the first-use work (class initialization, call-site linkage).
 */
final class InterpretedAllocationProbe {
    private InterpretedAllocationProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (DataPathRounds rounds = new DataPathRounds("allocint", "127.0.0.53")) {
            long[] bytes = new long[2];
            rounds.run(50, bytes);
            for (int k = 0; k < 3; k++) {
                bytes[0] = 0;
                bytes[1] = 0;
                rounds.run(100, bytes);
                System.out.println("ROUND builder=" + bytes[0] + " postSend=" + bytes[1]);
            }
        }
    }
}
